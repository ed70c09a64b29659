"""Exercises for ``00_start_here.ipynb``: the job against the average worker.

Both use the notebook's worker, :data:`~straggle_edu.explorers.start_here.START_HERE_STEP_TIME`
(1 s, give or take 5%, and a 0.5 s pause on 1 step in 100), so they import
the step-time model, not the explorer.

- ``q1``: the expected step time of a 256-GPU job, in seconds.
- ``q2``: how many GPUs' worth of work 1024 GPUs do.
- ``q3`` (a design question): choose the job's size: the largest power of
  two n (1..4096) at which each GPU still delivers at least 75% of its own
  speed (``worker.mean() / E[max of n] >= 0.75``).
"""

from __future__ import annotations

from ..math.order_stats import expected_max
from ..models.step_time import StepTime
from . import Exercise

__all__ = ["q1", "q2", "q3"]


def _worker():
    return StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)


q1 = Exercise(
    "q1", expected=lambda: expected_max(_worker(), 256),
    hint="A step of a synchronous job ends when its slowest worker arrives: se.expected_max(worker, n).",
    solution="se.expected_max(worker, 256)  # about 1.50 s",
    abs_tol=5e-3,
)

q2 = Exercise(
    "q2", expected=lambda: 1024 * _worker().mean() / expected_max(_worker(), 1024),
    hint="In the time one job step takes, each GPU could have done E[step of one worker] / E[step of the job] "
         "of a step on its own. Multiply by the number of GPUs.",
    solution="1024 * worker.mean() / se.expected_max(worker, 1024)  # about 653",
    rel_tol=5e-3,
)


def _largest_efficient(floor=0.75):
    sizes = [2**k for k in range(13)]
    return max(n for n in sizes if _worker().mean() / expected_max(_worker(), n) >= floor)


q3 = Exercise(
    "q3", expected=_largest_efficient,
    hint="Each GPU delivers worker.mean() / se.expected_max(worker, n) of its own speed. "
         "Try n = 1, 2, 4, ... and keep the largest n where that is still at least 0.75.",
    solution="max(n for n in [2**k for k in range(13)] if worker.mean() / se.expected_max(worker, n) >= 0.75)"
             "  # 64 (77%); at 128 each GPU delivers 71%",
)
