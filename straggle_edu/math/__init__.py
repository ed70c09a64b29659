"""The math layer: closed forms, order statistics, tail probabilities and cost.

Pure functions on numbers and arrays. Imports numpy and scipy only, never
a plotting or widget library.

- :mod:`.tail`: ``p_any_slow``, ``p_none_slow``, ``workers_until``,
  ``per_worker_budget``.
- :mod:`.order_stats`: ``expected_max``, ``expected_order_stat``,
  ``gumbel_max_approx``, ``sqrt_2_ln_n``.
- :mod:`.cost`: ``cost_of_stragglers`` and ``StragglerCost``.
- :mod:`.detector`: ``p_false_alarm``, ``threshold_for_alarms`` and the rest
  of a relative-score straggler detector's false alarms.
"""

from .cost import StragglerCost, cost_of_stragglers, lost_fraction_from_slowdown
from .detector import (
    alarms_per_day,
    lognormal_timing,
    lowest_score_quantile,
    p_false_alarm,
    p_false_alarm_normal,
    p_rank_flagged,
    threshold_for_alarms,
)
from .order_stats import (
    expected_max,
    expected_order_stat,
    gumbel_max_approx,
    sqrt_2_ln_n,
)
from .tail import p_any_slow, p_none_slow, per_worker_budget, workers_until

__all__ = [
    "StragglerCost",
    "cost_of_stragglers",
    "lost_fraction_from_slowdown",
    "alarms_per_day",
    "lognormal_timing",
    "lowest_score_quantile",
    "p_false_alarm",
    "p_false_alarm_normal",
    "p_rank_flagged",
    "threshold_for_alarms",
    "expected_max",
    "expected_order_stat",
    "gumbel_max_approx",
    "sqrt_2_ln_n",
    "p_any_slow",
    "p_none_slow",
    "per_worker_budget",
    "workers_until",
]
