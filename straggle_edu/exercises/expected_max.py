"""Exercises for ``03_expected_maximum.ipynb``: the slowest of n, a slow card, scaling.

- ``q1``: how many σ above the mean the slowest of 1000 normal workers sits.
- ``q2``: E[slowest of 64] for a shifted exponential step time (H_n).
- ``q3``: GPU-hours 4095 peers wait on one card 10% slower, over a week.
- ``q4``: doubling 1024 workers with 10% jitter: the factor on the time.
- ``q5`` (a design question): the jitter budget: the largest jitter (σ as a
  fraction of the 1 s mean) that keeps a 4096-GPU job's expected step within
  10% of the mean worker's.
"""

from __future__ import annotations

from scipy import stats

from ..math.order_stats import expected_max
from ..models.cluster import Cluster, expected_step_time
from ..models.max_growth import step_time_dist
from ..models.step_time import StepTime
from ..models.waste import slow_card
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

q1 = Exercise(
    "q1", expected=lambda: expected_max(stats.norm(), 1000),
    hint="Use a standard normal, so the answer is already in σ: se.expected_max(stats.norm(), n).",
    solution="se.expected_max(stats.norm(), 1000)  # about 3.24 σ",
    abs_tol=0.01,
)

q2 = Exercise(
    "q2", expected=lambda: expected_max(step_time_dist("exponential", mean=1.0, std=0.1), 64),
    hint="The step time is 0.9 s plus an exponential with mean 0.1 s, and E[max of n Exp(1)] is the harmonic "
         "number H_n = 1 + 1/2 + ... + 1/n. Or ask the library: step_time_dist('exponential', 1.0, 0.1).",
    solution="0.9 + 0.1 * sum(1 / k for k in range(1, 65))"
             "  # = se.expected_max(step_time_dist('exponential', 1.0, 0.1), 64), about 1.374 s",
    abs_tol=1e-3,
)

q3 = Exercise(
    "q3", expected=lambda: slow_card(4096, StepTime(1.0, jitter=0.0), 1.10).gpu_hours_wasted(7),
    hint="With no jitter every step takes 1.1 s instead of 1 s, and 4095 GPUs wait 0.1 s of each 1.1 s step. "
         "slow_card(n, StepTime(1.0, jitter=0.0), slow_factor) has a gpu_hours_wasted(days) method.",
    solution="slow_card(4096, StepTime(1.0, jitter=0.0), 1.10).gpu_hours_wasted(7)  # = 4095 * 7 * 24 * 0.1 / 1.1, about 62,542",
    rel_tol=1e-3,
)

q4 = Exercise(
    "q4", expected=lambda: expected_step_time(Cluster.uniform(2048, StepTime(1.0, jitter=0.10)))
    / (2 * expected_step_time(Cluster.uniform(1024, StepTime(1.0, jitter=0.10)))),
    hint="Throughput is 1/E[step] steps per second, and each step of 2n workers does twice the work. "
         "So the time for a fixed amount of work scales by E[step at 2n] / (2 E[step at n]).",
    solution="t = StepTime(1.0, jitter=0.10)\n"
             "expected_step_time(Cluster.uniform(2048, t)) / (2 * expected_step_time(Cluster.uniform(1024, t)))  # about 0.507",
    abs_tol=5e-4,
)


q5 = Exercise(
    "q5", expected=lambda: 0.10 / expected_max(stats.norm(), 4096),
    hint="With normal jitter the expected step is 1 + jitter x e_n seconds, e_n = se.expected_max(stats.norm(), n). "
         "Set 1 + jitter x e_4096 = 1.10 and solve for the jitter.",
    solution="0.10 / se.expected_max(stats.norm(), 4096)  # about 0.0276: the workers must stay under 2.8% jitter",
    abs_tol=2e-4,
    fraction=True,
)
