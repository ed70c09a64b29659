"""The article's debugging questions, answered for one analysed trace.

Debugging a straggler means knowing which worker, which collective, which
parallel group, which microbatch and which pipeline stage is slow, whether
the slowness is compute or communication, and whether it is persistent or a
one-off. :func:`diagnose` answers each question from an
:class:`~straggle_edu.traces.Analysis`, with the numbers that back the answer.

Thresholds (stated once, used everywhere)
-----------------------------------------
- A job straggles when S >= 1.10 (at least 10% slower, the OSDI 2025 study's line).
- One thing "explains" the slowdown when its own S_X recovers at least half of
  the job's excess: S_X - 1 >= 0.5 (S - 1).
- A slowdown is persistent when at least half of the steps have a per-step
  excess of at least half the job's: S_step - 1 >= 0.5 (S - 1).
"""

from __future__ import annotations

import numpy as np

__all__ = ["diagnose", "STRAGGLING", "EXPLAINS", "COMM_OPTYPES", "persistent_share"]

STRAGGLING = 1.10
EXPLAINS = 0.5

COMM_OPTYPES = frozenset(
    {
        "forward-send",
        "forward-recv",
        "backward-send",
        "backward-recv",
        "grads-reduce-scatter",
        "separate-grads-all-reduce",
        "params-all-gather",
        "embedding-grads-all-reduce",
        "layernorm-grads-all-reduce",
        "optimizer-clip-main-grad",
    }
)


def persistent_share(result):
    """The fraction of steps whose excess slowdown is at least half the job's.

    Examples
    --------
    >>> from straggle_edu.traces import analyze_rank_times
    >>> persistent_share(analyze_rank_times([[2.0, 1.0], [1.0, 1.0]]))
    0.5
    """
    per = np.array(list(result.per_step.values()), dtype=float)
    excess = result.slowdown - 1.0
    if excess <= 1e-12 or per.size == 0:
        return 0.0
    return float(np.mean(per - 1.0 >= EXPLAINS * excess))


def _explains(value, S):
    return value - 1.0 >= EXPLAINS * (S - 1.0) and S > 1.0


def _fmt_worker(key):
    return f"DP rank {key[0]}, stage {key[1]}" if isinstance(key, tuple) else f"rank {key}"


def diagnose(result):
    """Answer the debugging questions for ``result``; a list of (question, answer).

    Examples
    --------
    >>> from straggle_edu.traces import analyze_rank_times
    >>> qa = diagnose(analyze_rank_times([[2.0, 1.0, 1.0, 1.0]] * 3))
    >>> qa[0]
    ('Is the job straggling?', 'Yes: S = 1.600, so 37.5% of its time is waste (the line is S >= 1.10).')
    >>> qa[1][1]
    'rank 0: S_X = 1.600 on its own, which explains the slowdown.'
    """
    S = result.slowdown
    out = []
    verdict = "Yes" if S >= STRAGGLING else "Not much"
    out.append(
        (
            "Is the job straggling?",
            f"{verdict}: S = {S:.3f}, so {100 * result.waste:.1f}% of its time is waste (the line is S >= {STRAGGLING:.2f}).",
        )
    )
    # which worker
    workers = result.by_worker if result.by_worker is not None else result.by_rank
    if workers:
        key, value = result.ranking("by_worker" if result.by_worker is not None else "by_rank")[0]
        tail = "which explains the slowdown" if _explains(value, S) else "not enough to explain the slowdown alone"
        out.append(("Which worker?", f"{_fmt_worker(key)}: S_X = {value:.3f} on its own, {tail}."))
    elif result.by_stage is not None:
        out.append(("Which worker?", "not computed for this size (run with --attribution full)."))
    if result.format != "op-level":
        out.extend(_rank_questions(result))
        return out
    out.extend(_op_questions(result))
    return out


def _rank_questions(result):
    out = []
    S = result.slowdown
    d = result.details or {}
    wait_share = d.get("wait_share")
    comm_share = d.get("comm_share")
    if wait_share is not None and (wait_share > 0 or comm_share > 0):
        out.append(
            (
                "Compute or communication?",
                f"compute: the slowdown comes from the ranks' compute; of all rank-time, "
                f"{100 * wait_share:.1f}% is waiting at the barrier for the slowest and "
                f"{100 * comm_share:.1f}% is transfer.",
            )
        )
    else:
        out.append(("Compute or communication?", "compute (this trace records compute only)."))
    out.append(_persistence(result))
    if result.by_rank:
        worst = np.argmax(result.worker_step_slowdown, axis=0)
        top = result.culprit()
        idx = result.workers.index(top)
        share = float(np.mean(worst == idx)) if len(worst) else 0.0
        out.append(
            (
                "Same worker every step?",
                f"rank {top} is the slowest in {100 * share:.0f}% of the steps"
                + (" (a persistent straggler)." if share >= 0.5 and S >= STRAGGLING else "."),
            )
        )
    return out


def _persistence(result):
    share = persistent_share(result)
    per = np.array(list(result.per_step.values()))
    if result.slowdown < STRAGGLING:
        kind = "neither: the slowdown is small"
    elif share >= 0.5:
        kind = "persistent"
    else:
        kind = "transient (one-off spikes)"
    return (
        "Persistent or one-off?",
        f"{kind}: {100 * share:.0f}% of steps carry at least half the job's excess slowdown "
        f"(per-step S from {per.min():.3f} to {per.max():.3f}).",
    )


def _op_questions(result):
    S = result.slowdown
    d = result.details or {}
    out = []
    if result.by_optype:
        ranked = result.ranking("by_optype")
        comm = [(k, v) for k, v in ranked if k in COMM_OPTYPES or "+" in str(k)]
        comp = [(k, v) for k, v in ranked if not (k in COMM_OPTYPES or "+" in str(k))]
        if comm:
            k, v = comm[0]
            tail = "it explains the slowdown" if _explains(v, S) else "collectives are not the problem"
            out.append(("Which collective?", f"{k}: S_X = {v:.3f}; {tail}."))
        top_comp = comp[0][1] if comp else 1.0
        top_comm = comm[0][1] if comm else 1.0
        kind = "compute" if top_comp >= top_comm else "communication"
        out.append(
            (
                "Compute or communication?",
                f"{kind}: the worst compute optype gives S_X = {top_comp:.3f}, the worst communication "
                f"optype {top_comm:.3f}.",
            )
        )
    if result.by_dp_rank:
        k, v = result.ranking("by_dp_rank")[0]
        tail = "explains the slowdown" if _explains(v, S) else "does not explain it alone"
        out.append(("Which parallel group?", f"DP rank {k} (one pipeline, its model-parallel group): S_X = {v:.3f}, {tail}."))
    if result.by_stage:
        k, v = result.ranking("by_stage")[0]
        tail = "it explains the slowdown" if _explains(v, S) else "no stage explains it alone"
        ms = "" if result.m_s is None else f"; M_S = {result.m_s:.2f} for the last stage"
        out.append(("Which pipeline stage?", f"stage {k}: S_X = {v:.3f}, {tail}{ms}."))
    mb = d.get("microbatch")
    if mb is not None:
        out.append(
            (
                "Which microbatch?",
                f"step {mb['step']}, microbatch {mb['mb']} on DP rank {mb['dp_rank']} is the longest compute "
                f"({mb['ratio']:.2f}x its group's mean); compute ops spread with a coefficient of variation of "
                f"{mb['cv']:.2f} within their (optype, step, microbatch) groups"
                + (" (uneven sequence lengths are likely)." if mb["cv"] >= 0.1 else "."),
            )
        )
    out.append(_persistence(result))
    if result.m_w is not None:
        out.append(
            (
                "A few bad machines?",
                f"M_W = {result.m_w:.2f}: fixing the slowest {d.get('mw_workers', '?')} worker(s) removes "
                f"{100 * result.m_w:.0f}% of the slowdown"
                + (" (individual worker issue)." if result.m_w >= 0.5 else "."),
            )
        )
    return out
