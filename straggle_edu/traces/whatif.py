"""What-if analysis of op-level traces: ideal durations, slowdown, attribution.

Definitions (Lin et al., OSDI 2025; the symbols of the CLI's JSON)
------------------------------------------------------------------
Ideal durations
    A compute op (``forward-compute``, ``backward-compute``, and the local
    ``optimizer`` and ``gc``) takes the mean duration of its group: the same
    optype, step and microbatch (microbatch for forward and backward only),
    across all DP ranks and stages. Every other op (sends, receives and
    collectives, ``layernorm-grads-all-reduce`` included) takes the median
    transfer time of its optype over the whole trace, with the wait for
    peers removed: transfer = end - latest arrival among the participants.
    A combined send+recv is one op with its own median; a send/recv without
    a peer is its own group.
Slowdown
    S = mean_step T(recorded) / mean_step T(ideal), where T is the replayed
    step time (:mod:`~straggle_edu.traces.replay`) with the recorded or the
    ideal durations. Replaying the numerator too keeps launch gaps out of S.
    waste = 1 - 1/S. Per step: T(recorded)[step] / T(ideal)[step].
Attribution
    S_X = mean T(every op ideal except the ops of X, which keep their recorded
    durations) / mean T(ideal), for X one optype (a combined send+recv
    belongs to both of its optypes), one DP rank, or one stage. A worker
    (d, s) gets min(S_dp=d, S_stage=s), as in the artifact's heatmap.
M_S
    The share of the slowdown removed by giving the last stage's ops their
    ideal durations: (T_orig - T_fixed) / (T_orig - T_ideal), mean step times.
M_W
    The same, fixing the ceil(3%) of workers with the largest worker
    slowdown (at least one), as in the artifact (Eq. 5 of the paper).
    Both are ratios, not probabilities: fixing something can remove more
    than the whole slowdown (M_S = 1.22 on the artifact's last-stage case).
    None when S = 1 (nothing to share).
Replay error
    mean over steps of |T(recorded durations) - recorded step time| /
    recorded step time, where the recorded step time is the last end minus
    the first start of the step's ops.

Speed: all DP ranks, steps and variants replay together (see
:func:`~straggle_edu.traces.replay.replay`). The ideal durations are the
same on every DP rank, so the "one DP rank keeps its durations" variants
need only two DP columns (that rank, and any other): DP + 2 + PP + optypes
replays cost about as much as a handful.
"""

from __future__ import annotations

import math

import numpy as np

from .optrace import OPTYPES
from .replay import MEAN_KIND, build_model, replay
from .result import Analysis

__all__ = ["analyze_ops", "ideal_work", "worker_timeline", "MW_FRACTION", "AUTO_WORKERS"]

MW_FRACTION = 0.03  # M_W fixes the ceil(3%) slowest workers, as in the artifact
AUTO_WORKERS = 1024  # "auto" attribution reports by_dp_rank / by_worker up to this many workers


def ideal_work(model):
    """The ideal work of every cell, shape (N, S, D), in seconds.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import op_trace_from_columns
    >>> from straggle_edu.traces.replay import build_model
    >>> t = op_trace_from_columns({"dp_rank": [0, 1], "stage": [0, 0], "step": [0, 0],
    ...                            "optype": ["forward-compute"] * 2, "start_ts": [0.0, 0.0],
    ...                            "duration": [1.0, 3.0], "seq_id": [0, 0], "mb_id": [0, 0]})
    >>> ideal_work(build_model(t)).ravel().tolist()   # the group mean, straggler included
    [2.0, 2.0]
    """
    N, S, D = model.shape
    ideal = np.empty(model.shape)
    work = model.work
    # compute: group mean over (optype, step, microbatch) across DP ranks and stages
    mean_nodes = [n for n in range(N) if model.node_codes[n][0] in MEAN_KIND and len(model.node_codes[n]) == 1]
    if mean_nodes:
        idx = np.array(mean_nodes)
        codes = np.array([model.node_codes[n][0] for n in mean_nodes])
        mb = model.node_mb[idx].copy()
        use_mb = np.isin(codes, (OPTYPES.index("forward-compute"), OPTYPES.index("backward-compute")))
        mb[~use_mb] = -1
        mb_max = int(mb.max()) + 2
        step_idx = np.broadcast_to(np.arange(S)[None, :, None], mb.shape)
        group = (codes[:, None, None] * S + step_idx) * mb_max + (mb + 1)
        flat = group.reshape(-1)
        vals = work[idx].reshape(-1)
        size = int(flat.max()) + 1
        total = np.bincount(flat, weights=vals, minlength=size)
        count = np.bincount(flat, minlength=size)
        mean = total / np.maximum(count, 1)
        ideal[idx] = mean[flat].reshape(len(idx), S, D)
    # everything else: median transfer per label
    labels = {}
    is_mean = set(mean_nodes)
    for n in range(N):
        if n in is_mean:
            continue
        labels.setdefault(model.node_label[n], []).append(n)
    for lab, nodes in labels.items():
        med = float(np.median(work[nodes]))
        ideal[nodes] = med
    return ideal


def _ratio(num, den):
    return float(np.mean(num) / np.mean(den))


def _share(t_orig, t_fixed, t_ideal):
    excess = float(np.mean(t_orig) - np.mean(t_ideal))
    if excess <= 1e-12 * float(np.mean(t_ideal)):
        return None
    return float((np.mean(t_orig) - np.mean(t_fixed)) / excess)


def analyze_ops(trace, *, attribution="auto", progress=False):
    """What-if analysis of an :class:`~straggle_edu.traces.OpTrace`.

    Parameters
    ----------
    trace : OpTrace
    attribution : {"auto", "full", "basic"}
        Whether ``by_dp_rank`` and ``by_worker`` are reported (they are always
        computed, for M_W): ``"full"`` always, ``"basic"`` never, ``"auto"``
        up to :data:`AUTO_WORKERS` workers.
    progress : bool
        Show a progress bar (tqdm) over the replays.

    Returns
    -------
    Analysis

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> a = analyze_ops(synthetic_trace(dp=4, pp=2, microbatches=4, steps=2, last_stage=1.5))
    >>> a.culprit("by_stage"), a.m_s > 1
    (1, True)
    """
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=5, desc="what-if analysis", unit="phase", leave=False)
        except ImportError:  # pragma: no cover
            bar = None

    def tick():
        if bar is not None:
            bar.update(1)

    model = build_model(trace)
    tick()
    N, S, D = model.shape
    P = model.pp_size
    orig = model.work
    ideal = ideal_work(model)
    node_stage = model.node_stage

    present = sorted({c for codes in model.node_codes for c in codes})
    optype_names = [OPTYPES[c] for c in present]
    # batch A: full DP width; variants: recorded, ideal, each stage, each optype, last stage fixed
    V = 2 + P + len(present) + 1
    keep = np.zeros((V, N), dtype=bool)
    keep[0] = True
    for s in range(P):
        keep[2 + s] = node_stage == s
    for j, c in enumerate(present):
        keep[2 + P + j] = [c in model.node_codes[n] for n in range(N)]
    keep[V - 1] = node_stage != P - 1  # M_S: last stage at ideal, the rest recorded

    def work_a(n):
        out = np.empty((V, S, D))
        k = keep[:, n]
        out[k] = orig[n]
        out[~k] = ideal[n]
        return out

    T = replay(model, work_a)
    tick()
    t_orig, t_ideal = T[0], T[1]
    if (t_ideal <= 0).any():
        s = int(np.flatnonzero(t_ideal <= 0)[0])
        raise ValueError(f"{model.source}: step {model.steps[s]} replays to 0 s with ideal durations")
    S_job = _ratio(t_orig, t_ideal)
    per_step = t_orig / t_ideal
    by_stage = {s: _ratio(T[2 + s], t_ideal) for s in range(P)}
    stage_step = T[2:2 + P] / t_ideal
    by_optype = {name: _ratio(T[2 + P + j], t_ideal) for j, name in enumerate(optype_names)}
    m_s = _share(t_orig, T[V - 1], t_ideal) if P > 1 else None

    # batch B: one variant per DP rank
    dp_step = _dp_variants(model, orig, ideal)
    tick()
    by_dp = {d: float(np.mean(dp_step[d] * t_ideal) / np.mean(t_ideal)) for d in range(D)}

    # workers: min(S_dp, S_stage), overall and per step
    worker_score = np.minimum(np.array([by_dp[d] for d in range(D)])[:, None],
                              np.array([by_stage[s] for s in range(P)])[None, :])  # (D, P)
    workers = [(d, s) for d in range(D) for s in range(P)]
    by_worker = {(d, s): float(worker_score[d, s]) for d, s in workers}
    worker_step = np.minimum(dp_step[:, None, :], stage_step[None, :, :]).reshape(D * P, S)

    # batch C: M_W, the top ceil(3%) workers fixed
    k = max(1, math.ceil(MW_FRACTION * D * P))
    ranked = sorted(workers, key=lambda w: (-by_worker[w], w[1] * D + w[0]))[:k]
    fix = np.zeros((P, D), dtype=bool)
    for d, s in ranked:
        fix[s, d] = True

    def work_c(n):
        out = orig[n].copy()
        cols = fix[node_stage[n]]
        out[:, cols] = ideal[n][:, cols]
        return out[None]

    t_mw = replay(model, work_c)[0]
    m_w = _share(t_orig, t_mw, t_ideal)
    tick()

    rec = model.recorded_step
    replay_error = float(np.mean(np.abs(t_orig - rec) / rec))

    report_workers = attribution == "full" or (attribution == "auto" and D * P <= AUTO_WORKERS)
    notes = list(model.notes)
    if trace.skipped:
        notes.append("skipped ops of unknown type: " + ", ".join(f"{n} x{c}" for n, c in trace.skipped))
    if not report_workers:
        notes.append(
            f"by_dp_rank and by_worker are left out for {D * P} workers (more than {AUTO_WORKERS}); "
            f"use --attribution full to include them"
        )
    details = {
        "model": model,
        "ideal": ideal,
        "optypes": tuple(optype_names),
        "stage_step": stage_step,
        "dp_step": dp_step,
        "optype_step": T[2 + P:2 + P + len(present)] / t_ideal,
        "mw_workers": k,
        "mw_fixed": tuple(ranked),
        "microbatch": _microbatch_stats(model, ideal),
        "layout": trace.layout,
        "trace": trace,
    }
    tick()
    if bar is not None:
        bar.close()
    return Analysis(
        format="op-level",
        source=str(trace.source),
        slowdown=S_job,
        waste=1.0 - 1.0 / S_job,
        per_step={int(s): float(v) for s, v in zip(model.steps, per_step)},
        replay_error=replay_error,
        steps=model.steps,
        step_time=t_orig,
        ideal_step_time=t_ideal,
        recorded_step_time=rec,
        workers=tuple(workers),
        worker_step_slowdown=worker_step,
        by_optype=by_optype,
        by_dp_rank=by_dp if report_workers else None,
        by_stage=by_stage,
        by_worker=by_worker if report_workers else None,
        m_w=m_w,
        m_s=m_s,
        notes=tuple(notes),
        details=details,
    )


def _dp_variants(model, orig, ideal):
    """Per-step S_dp for every DP rank, shape (D, S).

    The ideal work of a node is the same on every DP rank, so in the variant
    "DP rank d keeps its recorded work" all other DP ranks are identical:
    two DP columns suffice (d, and one stand-in for the rest). Traces whose
    ideal differs across DP ranks fall back to the full width.
    """
    N, S, D = model.shape
    t_ideal = replay(model, lambda n: ideal[n][None])[0]
    if D == 1:
        t = replay(model, lambda n: orig[n][None])[0]
        return (t / t_ideal)[None]
    uniform = np.ptp(ideal, axis=2).max() <= 1e-12 * max(1.0, float(np.abs(ideal).max()))
    if uniform:
        def work_b(n):
            out = np.empty((D, S, 2))
            out[:, :, 0] = orig[n].T
            out[:, :, 1] = ideal[n][None, :, 0]
            return out

        T = replay(model, work_b)
    else:
        rows = []
        chunk = max(1, int(2**26 // max(1, S * D * 8)))
        for lo in range(0, D, chunk):
            ds = np.arange(lo, min(D, lo + chunk))

            def work_full(n, ds=ds):
                out = np.broadcast_to(ideal[n], (len(ds), S, D)).copy()
                out[np.arange(len(ds)), :, ds] = orig[n][:, ds].T
                return out

            rows.append(replay(model, work_full))
        T = np.concatenate(rows)
    return T / t_ideal[None]


def _microbatch_stats(model, ideal):
    """The longest compute op relative to its group's mean, and the microbatch spread.

    ``cv`` is the coefficient of variation of compute ops *within each
    worker-step*, after dividing out the worker-step's own average speed: a
    slow worker is slow on every microbatch (small ``cv``), while uneven
    sequence lengths make one microbatch long and the next short (large ``cv``).
    """
    fwd_bwd = [n for n in range(model.n_nodes)
               if len(model.node_codes[n]) == 1 and model.node_codes[n][0] in (OPTYPES.index("forward-compute"),
                                                                                OPTYPES.index("backward-compute"))]
    if not fwd_bwd:
        return None
    idx = np.array(fwd_bwd)
    w = model.work[idx]
    m = ideal[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(m > 0, w / m, 1.0)
    j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    n, s, d = idx[j[0]], j[1], j[2]
    stages = model.node_stage[idx]
    resid = []
    for p in np.unique(stages):
        r = ratio[stages == p]  # (ops of the stage, S, D)
        resid.append((r / r.mean(axis=0, keepdims=True) - 1.0).ravel())
    resid = np.concatenate(resid)
    cv = float(np.sqrt(np.mean(resid**2)))
    return {
        "step": int(model.steps[s]),
        "mb": int(model.node_mb[n, s, d]),
        "dp_rank": int(d),
        "stage": int(model.node_stage[n]),
        "optype": OPTYPES[model.node_codes[n][0]],
        "ratio": float(ratio[j]),
        "cv": cv,
    }


def worker_timeline(analysis, dp_rank, stage, step):
    """One worker's ops in one step: recorded, and replayed with ideal durations.

    Returns a list of dicts (one per op, in program order) with ``op``,
    ``microbatch``, ``recorded_start``, ``recorded_duration``, ``work``
    (duration or transfer), ``ideal_work``, ``ideal_start``, ``ideal_end``
    and ``excess`` (work / ideal work), seconds from the step's start.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> a = analyze_ops(synthetic_trace(dp=2, pp=1, microbatches=2, steps=1, slow_worker=(1, 0, 3.0)))
    >>> [(r["op"], round(r["excess"], 2)) for r in worker_timeline(a, 1, 0, 0) if "compute" in r["op"]]
    [('forward-compute', 1.5), ('backward-compute', 1.5), ('forward-compute', 1.5), ('backward-compute', 1.5)]
    """
    model = analysis.details["model"]
    ideal = analysis.details["ideal"]
    steps = list(model.steps)
    if step not in steps:
        raise ValueError(f"step must be one of the trace's steps {steps[0]}..{steps[-1]}, got {step!r}")
    if not (0 <= dp_rank < model.dp_size):
        raise ValueError(f"dp_rank must be in 0..{model.dp_size - 1}, got {dp_rank!r}")
    if not (0 <= stage < model.pp_size):
        raise ValueError(f"stage must be in 0..{model.pp_size - 1}, got {stage!r}")
    s = steps.index(step)
    _, (starts, ends) = replay(model, lambda n: ideal[n][None, s:s + 1], keep_timeline=True)
    rows = []
    for n in np.flatnonzero(model.node_stage == stage):
        st = np.broadcast_to(starts[n], (1, 1, model.dp_size))[0, 0, dp_rank]
        en = np.broadcast_to(ends[n], (1, 1, model.dp_size))[0, 0, dp_rank]
        w = float(model.work[n, s, dp_rank])
        iw = float(ideal[n, s, dp_rank])
        rows.append(
            {
                "op": model.node_label[n],
                "microbatch": int(model.node_mb[n, s, dp_rank]),
                "recorded_start": float(model.start[n, s, dp_rank]),
                "recorded_duration": float(model.duration[n, s, dp_rank]),
                "work": w,
                "ideal_work": iw,
                "ideal_start": float(st),
                "ideal_end": float(en),
                "excess": w / iw if iw > 0 else 1.0,
            }
        )
    rows.sort(key=lambda r: (r["recorded_start"], r["recorded_start"] + r["recorded_duration"]))
    return rows
