"""The article's debugging questions, answered for one analysed trace.

Debugging a straggler means knowing which worker, which collective, which
parallel group, which microbatch and which pipeline stage is slow, whether
the slowness is compute or communication, and whether it is persistent or a
one-off. :func:`diagnose` answers each question from an
:class:`~straggle_edu.traces.Analysis`, with the numbers that back the answer.
:func:`diagnose_job` is the one entry for a whole job, real or modelled: a
trace file, an :class:`OpTrace`, or a scenario model's recorded trace
(:meth:`straggle_edu.models.causes.Scenario.trace_columns`) goes through the
one what-if engine and comes back as a :class:`Diagnosis` (the analysis, the
answers, and short verdicts to check them by).

Thresholds (stated once, used everywhere)
-----------------------------------------
- A job straggles when S >= 1.10 (at least 10% slower, the OSDI 2025 study's line).
- One thing "explains" the slowdown when its own S_X recovers at least 80% of
  the job's excess, S_X - 1 >= 0.8 (S - 1), and "a large part" of it from 40%.
- A slowdown is persistent when at least half of the steps have a per-step
  excess of at least half the job's: S_step - 1 >= 0.5 (S - 1).
- Suspects tie when the runner-up's excess is within 10% of the leader's,
  S_X - 1 >= 0.9 (S_top - 1): then no single worker (or parallel group) is
  named, and the answer gives the range of the tied ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..i18n import N_, _
from .result import Analysis

__all__ = [
    "diagnose", "diagnose_job", "Diagnosis", "verdicts", "answer", "QUESTIONS", "OP_QUESTIONS", "STRAGGLING",
    "EXPLAINS", "LARGE_PART", "PERSISTENT", "NEAR_TIE", "COMM_OPTYPES", "persistent_share", "collective_tell", "tied",
    "MIN_STEPS", "worker_label",
]

#: Short keys for :func:`answer`, and the questions they stand for.
QUESTIONS = {
    "straggling": N_("Is the job straggling?"),
    "worker": N_("Which worker?"),
    "collective": N_("Which collective?"),
    "compute-or-comm": N_("Compute or communication?"),
    "group": N_("Which parallel group?"),
    "stage": N_("Which pipeline stage?"),
    "microbatch": N_("Which microbatch?"),
    "persistence": N_("Persistent or one-off?"),
    "same-worker": N_("Same worker every step?"),
    "machines": N_("A few bad machines?"),
}

#: The questions :func:`diagnose` answers for an op-level trace, in its order.
OP_QUESTIONS = tuple(QUESTIONS[k] for k in ("straggling", "worker", "collective", "compute-or-comm", "group", "stage",
                                            "microbatch", "persistence", "machines"))

STRAGGLING = 1.10
EXPLAINS = 0.8
LARGE_PART = 0.4
PERSISTENT = 0.5
NEAR_TIE = 0.9
#: Fewer steps than this tell no persistent slowdown from a transient one (profiler and per-rank traces).
MIN_STEPS = 4

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
    return float(np.mean(per - 1.0 >= PERSISTENT * excess))


def collective_tell(trace, optype="grads-reduce-scatter", by="dp_rank", stat="mean"):
    """The practitioner's tell: each DP rank's (or stage's) mean (or median) recorded time in one collective.

    A collective's recorded duration includes the wait for the slowest peer.
    The straggler arrives last and waits least, so *its* collectives look
    shortest, while everyone else's look long. The smallest value points at
    the straggler.

    Parameters
    ----------
    trace : OpTrace
    optype : str
        A collective, e.g. ``"grads-reduce-scatter"`` (across DP ranks) or
        ``"optimizer-clip-main-grad"`` (across every rank).
    by : {"dp_rank", "stage"}
    stat : {"mean", "median"}
        The median is not pulled up by a few long waits: on the artifact's ST
        trace the mean clipping of stages 0 and 3 ties within 1%, the median
        picks stage 3, the culprit (notebook 09; the tie in appendix A3).

    Returns
    -------
    dict
        id (int) -> mean (or median) recorded duration, in seconds.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> t = synthetic_trace(dp=4, pp=1, microbatches=2, steps=2, slow_worker=(2, 0, 2.0))
    >>> tell = collective_tell(t)
    >>> min(tell, key=tell.get)   # DP rank 2 is slow: its reduce-scatter waits for nobody
    2
    >>> tell = collective_tell(t, stat="median")
    >>> min(tell, key=tell.get)
    2
    """
    from .optrace import OPTYPES

    if optype not in OPTYPES:
        raise ValueError(f"optype must be one of {', '.join(OPTYPES)}, got {optype!r}")
    if by not in ("dp_rank", "stage"):
        raise ValueError(f"by must be 'dp_rank' or 'stage', got {by!r}")
    if stat not in ("mean", "median"):
        raise ValueError(f"stat must be 'mean' or 'median', got {stat!r}")
    sel = trace.optype == OPTYPES.index(optype)
    if not sel.any():
        raise ValueError(f"optype must be an optype the trace records, got {optype!r}")
    ids, durations = getattr(trace, by)[sel], trace.duration[sel]
    if stat == "median":
        return {int(i): float(np.median(durations[ids == i])) for i in np.unique(ids)}
    total = np.bincount(ids, weights=durations)
    count = np.bincount(ids)
    return {int(i): float(total[i] / count[i]) for i in np.flatnonzero(count)}


def tied(ranked):
    """The suspects of ``ranked`` (``[(key, S_X)]``, largest first) that tie with the first.

    A runner-up ties when its excess is at least :data:`NEAR_TIE` of the
    leader's: S_X - 1 >= 0.9 (S_top - 1). A leader with no excess ties with
    nobody.

    Examples
    --------
    >>> tied([(1, 1.179), (0, 1.174), (2, 1.01)])
    [(1, 1.179), (0, 1.174)]
    >>> tied([(3, 1.6), (0, 1.0)])
    [(3, 1.6)]
    """
    if not ranked:
        return []
    top = ranked[0][1] - 1.0
    if top <= 0:
        return list(ranked[:1])
    return [(k, v) for k, v in ranked if v - 1.0 >= NEAR_TIE * top]


def _explains(value, S):
    return value - 1.0 >= EXPLAINS * (S - 1.0) and S > 1.0


# How much of the slowdown one S_X carries (:func:`_share`), said after it ("S_X = 1.600 on its own, which explains
# the slowdown") and as a predicate ("the top one explains the slowdown").
_SHARE_TEXTS = (N_("which explains the slowdown"), N_("a large part of the slowdown, not all of it"),
                N_("not enough to explain the slowdown alone"))
_VERB_TEXTS = (N_("explains the slowdown"), N_("carries a large part of the slowdown, not all of it"),
               N_("is not enough to explain the slowdown"))


def _share(value, S):
    """0: an S_X of ``value`` explains the job's slowdown ``S``; 1: a large part of it, not all; 2: not enough alone.

    Examples
    --------
    >>> _share(1.6, 1.6), _share(1.4, 1.6), _share(1.05, 1.6)
    (0, 1, 2)
    """
    if _explains(value, S):
        return 0
    return 1 if S > 1.0 and value - 1.0 >= LARGE_PART * (S - 1.0) else 2


def _share_text(value, S):
    return _(_SHARE_TEXTS[_share(value, S)])


def _verb_text(value, S):
    """:func:`_share_text` as a predicate: "... the top one {verb}"."""
    return _(_VERB_TEXTS[_share(value, S)])


def worker_label(key, *, short=False):
    """A worker in words, translated: a ``(dp rank, stage)`` key or a rank; ``short``, as a chart or a menu labels it.

    Examples
    --------
    >>> worker_label((3, 1)), worker_label((3, 1), short=True), worker_label(12)
    ('DP rank 3, stage 1', 'dp 3 · stage 1', 'rank 12')
    """
    if isinstance(key, tuple):
        text = _("dp {dp} · stage {stage}") if short else _("DP rank {dp}, stage {stage}")
        return text.format(dp=key[0], stage=key[1])
    return _("rank {rank}").format(rank=key)


def diagnose(result):
    """Answer the debugging questions for ``result``; a list of (question, answer).

    Examples
    --------
    >>> from straggle_edu.traces import analyze_rank_times
    >>> qa = diagnose(analyze_rank_times([[2.0, 1.0, 1.0, 1.0]] * 3))
    >>> qa[0]   # three equal steps: no step-to-step spread, a noise floor of 1
    ('Is the job straggling?', 'Yes: S = 1.600, so 37.5% of its time is waste (the line is S >= 1.10). (Noise floor: S = 1.000.)')
    >>> qa[1][1]
    'rank 0: S_X = 1.600 on its own, which explains the slowdown.'
    """
    return [(_(question), text) for question, text in _answers(result)]


def _answers(result):
    """:func:`diagnose`'s answers (in the current language), each with its question in English, the key."""
    out = [("Is the job straggling?", _straggling_answer(result))]
    # which worker
    workers = result.by_worker if result.by_worker is not None else result.by_rank
    if workers:
        out.append(("Which worker?", _worker_answer(result)))
    elif result.by_stage is not None:
        out.append(("Which worker?", _("not computed for this size (run with --attribution full).")))
    if result.format != "op-level":
        out.extend(_rank_questions(result))
        return out
    out.extend(_op_questions(result))
    return out


def _floor(result):
    """The noise floor of a profiler or per-rank analysis (None: op-level, or not measurable)."""
    if result.format == "op-level" or not isinstance(result.details, dict):
        return None
    return result.details.get("noise_floor")


def _straggling_answer(result):
    """Yes / Not much by the S >= 1.10 line; on profiler and per-rank traces, "within noise" below the noise floor."""
    S, floor = result.slowdown, _floor(result)
    text = _("{verdict}: S = {S:.3f}, so {waste:.1f}% of its time is waste (the line is S >= {line:.2f}).")
    if floor is not None and S >= STRAGGLING and S <= floor:
        return _("Within noise: S = {S:.3f} is at or below the noise floor S = {floor:.3f}, what ranks of equal "
                 "speed reach by their own step-to-step spread in 1 of 100 jobs; no rank is shown to be "
                 "slower.").format(S=S, floor=floor)
    verdict = _("Yes") if S >= STRAGGLING else _("Not much")
    answer = text.format(verdict=verdict, S=S, waste=100 * result.waste, line=STRAGGLING)
    if floor is not None:
        answer += " " + _("(Noise floor: S = {floor:.3f}.)").format(floor=floor)
    return answer


def _is_straggling(result):
    floor = _floor(result)
    return result.slowdown >= STRAGGLING and (floor is None or result.slowdown > floor)


def _stage_wide(result):
    """``(stage, S_stage)`` when the top worker's stage explains the slowdown and its other DP ranks
    share it (each at least a large part), so no single worker does; else None."""
    S = result.slowdown
    if result.by_worker is None or not result.by_stage:
        return None
    (d, s), __ = result.ranking("by_worker")[0]
    others = [x for (dd, ss), x in result.by_worker.items() if ss == s and dd != d]
    if others and min(others) - 1.0 >= LARGE_PART * (S - 1.0) and _explains(result.by_stage[s], S):
        return s, result.by_stage[s]
    return None


def _worker_answer(result):
    S = result.slowdown
    ranked = result.ranking("by_worker" if result.by_worker is not None else "by_rank")
    key, value = ranked[0]
    wide = _stage_wide(result) if result.format == "op-level" else None
    if wide is not None:
        s, v = wide
        n = sum(1 for (__, ss) in result.by_worker if ss == s)
        return _("no single worker: stage {stage} as a whole (all {n} of its DP ranks) gives S_X = {v:.3f}, "
                 "{share}; its top worker, {worker}, gives {value:.3f}.").format(
            stage=s, n=n, v=v, share=_share_text(v, S), worker=worker_label(key), value=value)
    ties = tied(ranked)
    link = _link_ends(result, ties)
    if link is not None:
        (a, va), (b, vb) = link
        return _("no single worker: the two ends of the link from {a} to {b} tie ({a}: S_X = {va:.3f}; {b}: {vb:.3f}), "
                 "so the suspect is the link between them; on its own, the top end {verb}.").format(
            a=worker_label(a), b=worker_label(b), va=va, vb=vb, verb=_verb_text(value, S))
    if len(ties) > 1:
        return _("no single worker: {n} of {total} workers tie, within 10% of the top one's excess ({worker}: "
                 "S_X = {value:.3f}; {last}: {low:.3f}), so none stands out; on its own, the top one {verb}.").format(
            n=len(ties), total=len(ranked), worker=worker_label(key), value=value, last=worker_label(ties[-1][0]),
            low=ties[-1][1], verb=_verb_text(value, S))
    return _("{worker}: S_X = {value:.3f} on its own, {share}.").format(
        worker=worker_label(key), value=value, share=_share_text(value, S))


def _link_ends(result, ties):
    """The two tied workers, upstream end first, when they are adjacent stages of one DP rank and a pipeline
    send/recv carries a large part of the slowdown (a slow link); else None."""
    if len(ties) != 2 or not all(isinstance(k, tuple) for k, __ in ties) or not result.by_optype:
        return None
    (d0, s0), (d1, s1) = ties[0][0], ties[1][0]
    comm, __ = _comm_split(result)
    pp = [v for k, v in comm if str(k).endswith("-pp-comm") or "send" in str(k) or "recv" in str(k)]
    large = bool(pp) and result.slowdown > 1.0 and max(pp) - 1.0 >= LARGE_PART * (result.slowdown - 1.0)
    if d0 != d1 or abs(s0 - s1) != 1 or not large:
        return None
    return tuple(sorted(ties, key=lambda kv: kv[0][1]))


def _persistence_kind(result):
    if not _is_straggling(result):
        return "neither"
    if result.format != "op-level" and len(result.steps) < MIN_STEPS:
        return "unknown"
    return "persistent" if persistent_share(result) >= 0.5 else "transient"


def _comm_split(result):
    """The optypes ranked, split into communication and compute: two lists of (optype, S_X)."""
    ranked = result.ranking("by_optype")
    comm = [(k, v) for k, v in ranked if k in COMM_OPTYPES or "+" in str(k) or str(k).endswith("-pp-comm")]
    comp = [(k, v) for k, v in ranked if (k, v) not in comm]
    return comm, comp


def verdicts(result):
    """Short labels for the answers of an op-level analysis, by the same thresholds as the text.

    Returns a dict: ``straggling`` (S >= :data:`STRAGGLING`), ``kind``
    (``"compute"``, ``"communication"`` or ``"neither"`` when not straggling),
    ``persistence`` (``"persistent"``, ``"transient"`` or ``"neither"``),
    ``worker`` ((dp_rank, stage) when one worker explains the slowdown),
    ``stage`` (when one stage explains it), ``collective`` (the optype of the
    worst communication when it carries a large part of the slowdown).

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.whatif import analyze_ops
    >>> v = verdicts(analyze_ops(synthetic_trace(dp=4, pp=2, microbatches=4, steps=3, slow_worker=(2, 1, 2.0))))
    >>> v["worker"], v["stage"], v["kind"], v["persistence"]
    ((2, 1), 1, 'compute', 'persistent')
    """
    S = result.slowdown
    out = {"straggling": S >= STRAGGLING, "persistence": _persistence_kind(result), "worker": None, "stage": None,
           "collective": None, "kind": "neither"}
    comm, comp = _comm_split(result)
    if out["straggling"]:
        out["kind"] = "compute" if (comp[0][1] if comp else 1.0) >= (comm[0][1] if comm else 1.0) else "communication"
    if comm and S > 1.0 and comm[0][1] - 1.0 >= LARGE_PART * (S - 1.0):
        out["collective"] = comm[0][0]
    if result.by_worker and _stage_wide(result) is None and len(tied(result.ranking("by_worker"))) == 1:
        key, value = result.ranking("by_worker")[0]
        out["worker"] = key if _explains(value, S) else None
    if result.by_stage:
        k, v = result.ranking("by_stage")[0]
        out["stage"] = k if _explains(v, S) else None
    return out


@dataclass(frozen=True, eq=False)
class Diagnosis:
    """One job through the one what-if engine: its analysis, the answers and their verdicts.

    Attributes
    ----------
    analysis : Analysis
        The op-level what-if analysis (S, S_X by optype, DP rank, stage, worker; M_W, M_S).
    answers : dict
        ``{question: answer}``: the question in English (a value of :data:`QUESTIONS`, the key),
        the answer as :func:`diagnose` words it, in the language of the call.
    verdicts : dict
        Short labels, see :func:`verdicts`.
    truth : dict or None
        A scenario model's injected cause (where it was put), for checking.
    """

    analysis: Analysis
    answers: dict
    verdicts: dict
    truth: dict = None

    @property
    def slowdown(self):
        """S, the job's slowdown."""
        return self.analysis.slowdown

    @property
    def waste(self):
        """1 - 1/S."""
        return self.analysis.waste

    @property
    def per_step(self):
        """S of each step, an array."""
        return np.array(list(self.analysis.per_step.values()))

    @property
    def by_dp(self):
        """S_X of each DP rank, an array."""
        return _array(self.analysis.by_dp_rank)

    @property
    def by_stage(self):
        """S_X of each stage, an array."""
        return _array(self.analysis.by_stage)

    @property
    def by_worker(self):
        """S_X of each worker, shape (dp, stages): min(S_dp, S_stage)."""
        return np.minimum.outer(self.by_dp, self.by_stage)

    @property
    def by_op(self):
        """S_X of each optype (sends and receives as the artifact groups them), a dict."""
        return dict(self.analysis.by_optype)


def _array(table):
    return np.array([table[k] for k in sorted(table)]) if table else np.zeros(0)


def diagnose_job(job, *, ideal="artifact"):
    """Diagnose a whole job with the one what-if engine.

    Parameters
    ----------
    job : Scenario, OpTrace, Analysis, or a path
        A scenario model (anything with ``trace_columns()``, e.g.
        :func:`straggle_edu.models.causes.straggler_scenario`), an op-level
        trace, its analysis, or a trace file.
    ideal : {"artifact", "per-step"}
        How ideal durations are set (see :func:`~straggle_edu.traces.whatif.ideal_work`).

    Returns
    -------
    Diagnosis
        The analysis, the answers to the questions and their short verdicts.

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> dx = diagnose_job(straggler_scenario("slow worker", rng=0))
    >>> dx.verdicts["worker"], dx.verdicts["kind"], round(dx.slowdown, 2)
    ((1, 0), 'compute', 1.16)
    >>> dx.answers["Which worker?"]
    'DP rank 1, stage 0: S_X = 1.161 on its own, which explains the slowdown.'
    """
    from . import analyze
    from .optrace import op_trace_from_columns

    truth = getattr(job, "truth", None)
    if hasattr(job, "trace_columns"):
        columns, layout = job.trace_columns()
        job = op_trace_from_columns(columns, meta=layout, meta_source="scenario")
    result = job if isinstance(job, Analysis) else analyze(job, attribution="full", ideal=ideal)
    if result.format != "op-level":
        raise ValueError(f"job must be an op-level trace, a scenario or its analysis, got a {result.format} trace")
    return Diagnosis(analysis=result, answers=dict(_answers(result)), verdicts=verdicts(result), truth=truth)


def answer(result, question):
    """The answer to one question, by its key in :data:`QUESTIONS` (or its text).

    Examples
    --------
    >>> from straggle_edu.traces import analyze_rank_times
    >>> answer(analyze_rank_times([[1.0, 3.0]] * 2), "worker")
    'rank 1: S_X = 1.500 on its own, which explains the slowdown.'
    """
    text = QUESTIONS.get(question, question)
    text = {_(q): q for q in QUESTIONS.values()}.get(text, text)  # a question in the reader's language
    answers = dict(_answers(result))
    if text not in answers:
        have = [k for k, q in QUESTIONS.items() if q in answers]
        raise ValueError(f"question must be one of {', '.join(map(repr, have))} for a {result.format} trace, got {question!r}")
    return answers[text]


def _rank_questions(result):
    out = []
    S = result.slowdown
    d = result.details or {}
    wait_share = d.get("wait_share")
    comm_share = d.get("comm_share")
    if result.format == "torch-profiler" and wait_share is not None:
        out.append(("Compute or communication?", _(
            "compute: each collective's transfer is kept, so the slowdown is the ranks' compute and lateness between "
            "collectives (S_X = {s:.3f}); of all rank-time, {wait:.1f}% lies between a rank's arrival at a collective "
            "and the last arrival, and {comm:.1f}% is transfer.").format(
                s=(result.by_optype or {}).get("compute", S), wait=100 * wait_share, comm=100 * comm_share)))
    elif wait_share is not None and (wait_share > 0 or comm_share > 0):
        out.append(
            (
                "Compute or communication?",
                _("compute: the slowdown comes from the ranks' compute; of all rank-time, "
                  "{wait:.1f}% is waiting at the barrier for the slowest and "
                  "{comm:.1f}% is transfer.").format(wait=100 * wait_share, comm=100 * comm_share),
            )
        )
    else:
        out.append(("Compute or communication?", _("compute (this trace records compute only).")))
    out.append(_persistence(result))
    if result.by_rank:
        worst = np.argmax(result.worker_step_slowdown, axis=0)
        top = result.culprit()
        idx = result.workers.index(top)
        share = float(np.mean(worst == idx)) if len(worst) else 0.0
        out.append(
            (
                "Same worker every step?",
                (_("rank {rank} is the slowest in {share:.0f}% of the steps (a persistent straggler).")
                 if share >= 0.5 and _is_straggling(result) and len(result.steps) >= MIN_STEPS else
                 _("rank {rank} is the slowest in {share:.0f}% of the steps.")).format(rank=top, share=100 * share),
            )
        )
    return out


def _persistence(result):
    share = persistent_share(result)
    per = np.array(list(result.per_step.values()))
    found = _persistence_kind(result)
    if found == "unknown" or result.format != "op-level" and len(result.steps) < MIN_STEPS:
        return ("Persistent or one-off?", _("{steps} step(s): cannot tell persistent from transient (it takes at "
                                              "least {least} steps).").format(steps=len(result.steps), least=MIN_STEPS))
    kind = {"neither": _("neither: the slowdown is small"), "persistent": _("persistent"),
            "transient": _("transient (one-off spikes)")}[found]
    return (
        "Persistent or one-off?",
        _("{kind}: {share:.0f}% of steps carry at least half the job's excess slowdown "
          "(per-step S from {low:.3f} to {high:.3f}).").format(kind=kind, share=100 * share, low=per.min(), high=per.max()),
    )


def _group_answer(result):
    """Which DP rank (one pipeline, its model-parallel group): one, or the ones that tie."""
    S = result.slowdown
    ranked = result.ranking("by_dp_rank")
    (k, v), ties = ranked[0], tied(ranked)
    if len(ties) == 1:
        return _("DP rank {dp} (one pipeline, its model-parallel group): S_X = {v:.3f}, {share}.").format(
            dp=k, v=v, share=_share_text(v, S))
    if len(ties) == len(ranked):
        return _("no single group: all {n} DP ranks tie, within 10% of the top one's excess (DP rank {dp}: "
                 "S_X = {v:.3f}; DP rank {last}: {low:.3f}), so the slowdown is shared by every pipeline.").format(
            n=len(ranked), dp=k, v=v, last=ties[-1][0], low=ties[-1][1])
    return _("no single group: {n} of {total} DP ranks tie, within 10% of the top one's excess (DP rank {dp}: "
             "S_X = {v:.3f}; DP rank {last}: {low:.3f}), so none stands out; on its own, the top one {verb}.").format(
        n=len(ties), total=len(ranked), dp=k, v=v, last=ties[-1][0], low=ties[-1][1], verb=_verb_text(v, S))


def _op_questions(result):
    S = result.slowdown
    d = result.details or {}
    out = []
    if result.by_optype:
        comm, comp = _comm_split(result)
        if comm:
            k, v = comm[0]
            if S > 1.0 and v - 1.0 >= LARGE_PART * (S - 1.0):
                text = _("{op}: S_X = {v:.3f}, {share}.").format(op=k, v=v, share=_share_text(v, S))
            else:
                text = _("none stands out: the worst communication op, {op}, gives S_X = {v:.3f}.").format(op=k, v=v)
            out.append(("Which collective?", text))
        top_comp = comp[0][1] if comp else 1.0
        top_comm = comm[0][1] if comm else 1.0
        kind = _("compute") if top_comp >= top_comm else _("communication")
        out.append(
            (
                "Compute or communication?",
                _("{kind}: the worst compute optype gives S_X = {comp:.3f}, the worst communication "
                  "optype {comm:.3f}.").format(kind=kind, comp=top_comp, comm=top_comm),
            )
        )
    if result.by_dp_rank:
        out.append(("Which parallel group?", _group_answer(result)))
    if result.by_stage:
        k, v = result.ranking("by_stage")[0]
        ms = "" if result.m_s is None else _("; M_S = {m_s:.2f} for the last stage").format(m_s=round(result.m_s, 2) + 0.0)
        via = ""
        if result.by_worker and result.by_dp_rank:
            (w_dp, w_stage), w = result.ranking("by_worker")[0]
            others = [x for (dd, ss), x in result.by_worker.items() if ss == k and dd != w_dp]
            if w_stage == k and _explains(w, S) and (not others or max(others) - 1.0 < LARGE_PART * (S - 1.0)):
                via = _(", all of it through one worker, DP rank {dp}").format(dp=w_dp)
        out.append(("Which pipeline stage?", _("stage {stage}: S_X = {v:.3f}, {share}{via}{ms}.").format(
            stage=k, v=v, share=_share_text(v, S), via=via, ms=ms)))
    mb = d.get("microbatch")
    if mb is not None:
        out.append(
            (
                "Which microbatch?",
                _("step {step}, microbatch {mb} on DP rank {dp}, stage {stage} is the longest compute "
                  "({ratio:.2f}x its group's mean); within a worker-step, microbatches vary by "
                  "{cv:.0f}% (coefficient of variation, the worker's own speed divided out){end}").format(
                    step=mb["step"], mb=mb["mb"], dp=mb["dp_rank"], stage=mb["stage"], ratio=mb["ratio"], cv=100 * mb["cv"],
                    end=_(" (uneven sequence lengths are likely).") if mb["cv"] >= 0.1 else _(".")),
            )
        )
    out.append(_persistence(result))
    if result.m_w is None:
        out.append(("A few bad machines?", _("no: there is no slowdown to share (M_W needs S > 1).")))
    else:
        out.append(
            (
                "A few bad machines?",
                _("M_W = {m_w:.2f}: fixing the slowest {workers} worker(s) removes {share:.0f}% of the slowdown{end}").format(
                    m_w=result.m_w, workers=d.get("mw_workers", "?"), share=100 * result.m_w,
                    end=_(" (individual worker issue).") if result.m_w >= 0.5 else _(".")),
            )
        )
    return out
