"""Exercises for ``03b_independence_and_your_numbers.ipynb``: correlated slowness and your own numbers.

- ``q1``: 512 workers in hosts of 8, each slow 1 step in 200, all of it
  shared by the host: P(some worker slow)?
- ``q2``: 2048 workers whose jitter shares one job-wide factor with
  correlation 0.64: E[slowest] in σ?
- ``q3``: the resampled E[slowest of 3] from the sample 1.0, 1.0, 1.2, 1.6 s.
- ``q4`` (design): 1024 GPUs; a host-wide event that slows 8 GPUs together,
  or the same rate of slowness on each GPU alone. Which costs more steps:
  answer ``"host"`` or ``"independent"``.
"""

from __future__ import annotations

from ..models.correlation import expected_max_correlated, p_any_slow_shared
from ..models.empirical import empirical_expected_max
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4"]

q1 = Exercise(
    "q1", expected=lambda: p_any_slow_shared(1 / 200, 512, shared=1.0, group=8),
    hint="Fully shared by a host of 8: the 512 workers behave like 64 independent hosts, each slow 1 step in 200.",
    solution="p_any_slow_shared(1 / 200, 512, shared=1.0, group=8)  # 1 - (1 - 1/200)**64",
    abs_tol=5e-4,
    fraction=True,
)

q2 = Exercise(
    "q2", expected=lambda: expected_max_correlated(2048, rho=0.64),
    hint="A job-wide shared factor moves everyone together and drops out of the maximum: sqrt(1 - rho) times the independent value.",
    solution="expected_max_correlated(2048, rho=0.64)  # 0.6 * se.expected_max(stats.norm(), 2048)",
    abs_tol=0.005,
)

q3 = Exercise(
    "q3", expected=lambda: empirical_expected_max([1.0, 1.0, 1.2, 1.6], 3),
    hint="The largest of 3 draws is the k-th smallest value with probability (k/m)**3 - ((k-1)/m)**3, m = 4.",
    solution="empirical_expected_max([1.0, 1.0, 1.2, 1.6], 3)  # 1.0*(2/4)**3 + 1.2*((3/4)**3-(2/4)**3) + 1.6*(1-(3/4)**3)",
    abs_tol=5e-4,
)

q4 = Exercise(
    "q4", expected=lambda: "independent" if p_any_slow_shared(0.001, 1024) > p_any_slow_shared(0.001, 1024, 1.0, 8)
    else "host",
    hint="Same rate per GPU. Compare p_any_slow_shared(0.001, 1024) with shared=1.0, group=8: which touches more steps?",
    solution="'independent'  # 1 - 0.999**1024 = 64% of steps, against 1 - 0.999**128 = 12% when hosts are slow "
             "together: shared slowness wastes steps together",
)
