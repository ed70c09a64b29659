"""Exercises for ``05_training_step.ipynb``: the step as a mesh of barriers.

05 poses q1-q4; q5, on gradient accumulation, is posed where accumulation is taught, in the appendix
``A2_more_on_the_step.ipynb``.

- ``q1``: 6 pipeline stages, 12 microbatches, forward 0.5 s and backward 1 s,
  free communication: how long is a 1F1B step?
- ``q2``: 2 stages, 2 microbatches, forward 1 s, backward 2 s; the forward
  of microbatch 1 on stage 0 takes 4 s instead of 1. How much longer is
  the step?
- ``q3``: 8 stages and 8 microbatches in 1F1B: what share of each device's
  time is idle (the pipeline bubble)?
- ``q4``: 1,000 data-parallel workers compute 1 s per step with no jitter,
  but each pauses 2 s on 0.1% of steps. What is the expected step time?
- ``q5`` (design): choose the gradient accumulation for a 64-replica job
  (1 s microbatches with 5% jitter, a 0.4 s all-reduce): the smallest k of
  1, 2, 4, ..., 64 whose time per microbatch is within 5% of 1 s.
"""

from __future__ import annotations

from ..models.barriers import accumulation_time
from ..models.pipeline import simulate_pipeline, slowed
from ..models.step_time import StepTime
from ..models.training_step import data_parallel_scaling
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

_KS = (1, 2, 4, 8, 16, 32, 64)

q1 = Exercise(
    "q1", expected=lambda: simulate_pipeline(6, 12, forward=0.5, backward=1.0).step_time,
    hint="Every device does M microbatches of f + b, plus the fill and drain of the pipe: P - 1 more.",
    solution="simulate_pipeline(6, 12, forward=0.5, backward=1.0).step_time  # (12 + 6 - 1) * 1.5 = 25.5 s",
)

q2 = Exercise(
    "q2", expected=lambda: (simulate_pipeline(2, 2, slowed(1.0, 4.0, (1, 2, 2), stage=0, microbatch=1), 2.0).step_time
                      - simulate_pipeline(2, 2, 1.0, 2.0).step_time),
    hint="The op had slack: stage 0 would have waited for the first backward anyway. Look at run.ops['slack'].",
    solution="f = slowed(1.0, 4.0, (1, 2, 2), stage=0, microbatch=1)\n"
             "simulate_pipeline(2, 2, f, 2.0).step_time - simulate_pipeline(2, 2, 1.0, 2.0).step_time"
             "  # 10 - 9 = 1 s: 3 s added, 2 s of slack",
)

q3 = Exercise(
    "q3", expected=lambda: 1.0 - simulate_pipeline(8, 8, 1.0, 2.0).utilization,
    hint="Each device is busy M (f + b) out of (M + P - 1)(f + b); the rest is the bubble.",
    solution="1 - simulate_pipeline(8, 8, 1.0, 2.0).utilization  # (P - 1) / (M + P - 1) = 7/15 = 0.467",
    fraction=True,
)

q4 = Exercise(
    "q4", expected=lambda: float(data_parallel_scaling(1000, StepTime(1.0, jitter=0.0, pause_prob=0.001, pause=2.0)).step_time[0]),
    hint="The step pauses whenever any of the 1,000 workers pauses: P(any) = 1 - (1 - p)^n.",
    solution="data_parallel_scaling(1000, StepTime(1.0, jitter=0.0, pause_prob=0.001, pause=2.0)).step_time[0]"
             "  # 1 + 2 * (1 - 0.999**1000) = 2.265 s",
    rel_tol=1e-3,
)


q5 = Exercise(
    "q5", expected=lambda: next(k for k in _KS if accumulation_time(64, k, 1.0, 0.05, 0.4) <= 1.05),
    hint="Time per microbatch is 1 s x (1 + 0.05 E[M_64] / sqrt(k)) + 0.4 s / k: both losses shrink with k. "
         "Try accumulation_time(64, k, 1.0, 0.05, 0.4) for each k.",
    solution="next(k for k in (1, 2, 4, 8, 16, 32, 64) if accumulation_time(64, k, 1.0, 0.05, 0.4) <= 1.05)"
             "  # k = 16 gives 1.054 s, k = 32 gives 1.033 s: choose 32 (a larger batch: check it still trains well)",
)
