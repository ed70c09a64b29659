"""Exercises for ``09_debug_a_real_job.ipynb``: what-if analysis of a trace.

- ``q1``: eight ranks compute 1 s per step, except one that takes 3 s. What
  slowdown S does the what-if analysis report (the ideal is the mean rank)?
- ``q2``: in the generated trace ``mystery_trace()``, which worker
  ``(dp_rank, stage)`` is the culprit?
- ``q3``: another generated trace, ``mystery_cause_trace()``, has one of the
  injected causes. Which one? Answer with its name in
  :data:`straggle_edu.traces.synthetic.CAUSES`.
- ``q4``: ``last_stage_trace()`` is a DP 2 x PP 4 job whose last stage
  computes 1.5 times as long as the others. What share of the slowdown does
  fixing the last stage remove (M_S), to 3 significant figures? (09b's text
  names this trace; the section above it shows ``example_trace("last-stage")``,
  another job.)
- ``q5`` (design, 09): one of 8 ranks runs 1.5x slow in every step, 3.3 h of
  work are left, a restart costs 1 h and loses 0.5 h of work. Replace the
  rank or keep running? (The speed-up of a replacement is 1.5, not the
  what-if S, which compares with rebalanced work.)
- ``q6`` (design, appendix A3): the slow-worker example against the same job
  with a healthy worker in place: below how many hours of remaining work do
  you keep the slow worker, when a restart costs 20 minutes and loses 40
  minutes? (06b teaches the rule; 09b computes the healthy speed-up.)
"""

from __future__ import annotations

from ..models.remedies import replaced_slowdown, restart_or_keep
from ..traces import analyze, analyze_rank_times
from ..traces.synthetic import example_trace, synthetic_trace
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5", "q6", "mystery_trace", "mystery_cause_trace", "last_stage_trace",
           "healthy_speedup"]


def mystery_trace():
    """A DP 4 x PP 3 trace with one slow worker somewhere (seeded).

    Examples
    --------
    >>> mystery_trace()
    OpTrace(ops=2496, dp=4, pp=3, steps=6, source='<memory>')
    """
    return example_trace("slow-worker", dp=4, pp=3, microbatches=6, steps=6, slow_worker=(3, 2, 1.6), rng=11)


def mystery_cause_trace():
    """A DP 4 x PP 2 trace with one injected cause (seeded).

    Examples
    --------
    >>> mystery_cause_trace()
    OpTrace(ops=1840, dp=4, pp=2, steps=10, source='<memory>')
    """
    return example_trace("gc-pauses", gc_pauses=(0.15, 0.08), steps=10, rng=5)


def last_stage_trace():
    """DP 2 x PP 4, 8 microbatches, forward 1 s, backward 2 s, the last stage 1.5x; free communication.

    Examples
    --------
    >>> last_stage_trace()
    OpTrace(ops=744, dp=2, pp=4, steps=2, source='<memory>')
    """
    quiet = dict(p2p=0, params_gather=0, reduce_scatter=0, layernorm=0, embedding=0, clip=0, optimizer=0, gc=0)
    return synthetic_trace(2, 4, 8, 2, forward=1.0, backward=2.0, last_stage=1.5, **quiet)


def healthy_speedup(cause="slow-worker"):
    """How much faster the example job runs with a healthy worker in place: mean recorded step, cause / none.

    Both traces come from the same seed, so only the injected cause differs.

    Examples
    --------
    >>> round(healthy_speedup(), 2)
    1.73
    """
    recorded = analyze(example_trace(cause)).recorded_step_time.mean()
    return float(recorded / analyze(example_trace("none")).recorded_step_time.mean())




def _same_worker(answer, want):
    try:
        return tuple(int(x) for x in answer) == tuple(want)
    except (TypeError, ValueError):
        return False


q1 = Exercise(
    "q1", expected=lambda: analyze_rank_times([[1.0] * 7 + [3.0]]).slowdown,
    hint="S = the slowest rank's time / the mean rank's time, and the mean includes the slow rank.",
    solution="analyze_rank_times([[1.0] * 7 + [3.0]]).slowdown  # 3 / (10 / 8) = 2.4",
    rel_tol=1e-3,
)

q2 = Exercise(
    "q2", expected=lambda: analyze(mystery_trace()).culprit("by_worker"),
    hint="analyze(mystery_trace()) and look for the largest S_X in by_worker (or click the heatmap).",
    solution="analyze(mystery_trace()).culprit('by_worker')  # (3, 2)",
    compare=_same_worker,
)

q3 = Exercise(
    "q3", expected=lambda: "gc-pauses",
    hint="Look at by_optype, and at the per-step slowdown: is it the same every step? "
         "Does one worker or one stage stand out?",
    solution="a = analyze(mystery_cause_trace()); a.culprit('by_optype')  # 'gc': "
             "random pauses, transient, on different workers each step -> 'gc-pauses'",
)

q4 = Exercise(
    "q4", expected=lambda: analyze(last_stage_trace()).m_s,
    hint="It is the m_s attribute of the analysis: (T_recorded - T_last_stage_fixed) / (T_recorded - T_ideal), "
         "a ratio, so it can exceed 1.",
    solution="analyze(last_stage_trace()).m_s  # 1.14 (8/7): fixing the stage removes more than the ideal does",
    rel_tol=1e-3,
)

q5 = Exercise(
    "q5", expected=lambda: restart_or_keep(3.3, replaced_slowdown([[1.5] + [1.0] * 7]), restart=1.0, lost=0.5).choice,
    hint="A healthy replacement makes the job 1.5x faster (the slow rank sets every step). "
         "Keeping: 3.3 h x 1.5. Replacing: 1 h + 0.5 h + 3.3 h.",
    solution="restart_or_keep(3.3, replaced_slowdown([[1.5] + [1.0] * 7]), restart=1.0, lost=0.5).choice  "
             "# 4.95 h against 4.8 h: 'replace'. The what-if S, 1.5 / (8.5 / 8) = 1.41, would say keep: "
             "it compares with rebalanced work, not with a healthy GPU",
)

q6 = Exercise(
    "q6", expected=lambda: restart_or_keep(1.0, healthy_speedup(), restart=1 / 3, lost=2 / 3).break_even_hours,
    hint="healthy_speedup() is the replacement's speed-up s; break even where remaining x (s - 1) = restart + lost.",
    solution="restart_or_keep(1.0, healthy_speedup(), restart=1/3, lost=2/3).break_even_hours  # 1.38 h: 1 / 0.725",
    rel_tol=1e-3,
)
