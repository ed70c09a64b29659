"""Exercises for ``08_fact_check.ipynb``: check a claim yourself.

- ``q1``: P(some card is slow) with 1000 cards at 0.1% each (claim 2's kind).
- ``q2``: the bill of 2048 GPUs for 30 days, 8% lost, at $3 per GPU-hour (claim 6's kind).
- ``q3``: the speedup from 1 to 2 workers with 10% jitter (claim 11's kind).
- ``q4``: with 5% Gaussian jitter, does waiting for the fastest 94 of 100 cards raise samples per second?
"""

from __future__ import annotations

from scipy import stats

from ..math.cost import cost_of_stragglers
from ..math.tail import p_any_slow
from ..models.backup import wait_for_fastest
from ..models.cluster import Cluster, expected_step_time
from ..models.step_time import StepTime
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4"]

q1 = Exercise(
    "q1",
    expected=lambda: p_any_slow(0.001, 1000),
    hint="At least one of n is slow with probability 1 - (1 - p)^n.",
    solution="se.p_any_slow(0.001, 1000)  # about 0.632, the same 63% as 1% at 100 cards: p n = 1 in both",
    abs_tol=5e-4,
)

q2 = Exercise(
    "q2",
    expected=lambda: cost_of_stragglers(2048, 30, 0.08, 3.0).usd_lost,
    hint="GPU-hours = GPUs x days x 24; the loss is 8% of them, at $3 each.",
    solution="se.cost_of_stragglers(2048, 30, 0.08, 3.0).usd_lost  # 2048 * 30 * 24 * 0.08 * 3 = $353,894.40",
    rel_tol=1e-6,
)

q3 = Exercise(
    "q3",
    expected=lambda: 2 * expected_step_time(Cluster.uniform(1, StepTime(1.0, jitter=0.1)))
    / expected_step_time(Cluster.uniform(2, StepTime(1.0, jitter=0.1))),
    hint=("Two workers do twice the work per step, but a step lasts E[max of 2]. For a normal, "
          "E[max of 2] = mu + sigma / sqrt(pi)."),
    solution="2 / (1 + 0.1 / np.sqrt(np.pi))  # about 1.893, not 2",
    rel_tol=1e-4,
)

q4 = Exercise(
    "q4",
    expected=lambda: wait_for_fastest(stats.norm(1.0, 0.05), 100, 94).throughput_ratio > 1,
    hint=("wait_for_fastest(stats.norm(1.0, 0.05), 100, 94) gives the step gain and the throughput ratio. "
          "Answer True or False."),
    solution=("wait_for_fastest(stats.norm(1.0, 0.05), 100, 94).throughput_ratio > 1  # False: the step is "
              "4.4% shorter but 6% of the gradients are dropped"),
)
