"""Exercises for ``07_mitigations.ipynb``: balance, backup workers, hedging.

- ``q1``: the makespan greedy LPT gets for seven sequences on three workers.
- ``q2``: the best number of backups when a backup costs 30% of a worker.
- ``q3``: the share of extra requests when hedging after 7 ms.
- ``q4``: samples per second, waiting for the fastest 98 of 100 cards.
"""

from __future__ import annotations

from ..models.backup import backup_workers, inception_50_setup, wait_for_fastest
from ..models.balance import greedy_lpt
from ..models.hedging import tail_at_scale_latency
from ..models.step_time import StepTime
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "Q1_COSTS", "Q4_STEP"]

#: Seconds of work of seven sequences (q1).
Q1_COSTS = (7.0, 6.0, 5.0, 4.0, 4.0, 3.0, 3.0)
#: One card's step time in q4: 1 s, 2% jitter, a 0.5 s stall on 1% of steps.
Q4_STEP = StepTime(1.0, jitter=0.02, pause_prob=0.01, pause=0.5)

q1 = Exercise(
    "q1",
    expected=lambda: greedy_lpt(Q1_COSTS, 3).makespan,
    hint=("Sort the sequences longest first. Give each to the worker with the least work so far. "
          "The step lasts as long as the most loaded worker."),
    solution=("greedy_lpt(Q1_COSTS, 3).makespan  # 7 | 6 | 5; then 4 joins 5 (9), 4 joins 6 (10), 3 joins 7 (10), "
              "3 joins 9 (12): 12, where the best split (7+4 | 6+5 | 4+3+3) gets 11"),
)

q2 = Exercise(
    "q2",
    expected=lambda: backup_workers(**inception_50_setup(), max_backups=10, price=0.3).best_normalized,
    hint=("Cheaper backups lower the price line in the margin chart. "
          "backup_workers(..., price=0.3) returns a plan; look at its best_normalized."),
    solution="backup_workers(**inception_50_setup(), max_backups=10, price=0.3).best_normalized",
)

q3 = Exercise(
    "q3",
    expected=lambda: float(tail_at_scale_latency().sf(0.007)),
    hint="A hedge goes out only for requests still running after the delay: P(latency > 5 ms).",
    solution="float(tail_at_scale_latency().sf(0.007))  # about 0.072: hedging after 7 ms sends 7.2% more requests",
    abs_tol=5e-4,
)

q4 = Exercise(
    "q4",
    expected=lambda: wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio,
    hint=("Samples per second are (gradients kept per step) / (step time). Compare 98 / E[98th of 100] with "
          "100 / E[max of 100]: wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio."),
    solution="wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio",
    rel_tol=1e-3,
)
