"""Exercises for ``04_cost_accounting.ipynb``: the bill and where its lost fraction comes from.

- ``q1``: dollars lost by 1024 GPUs over 30 days, 5% lost, at $3 per GPU-hour.
- ``q2``: days a run planned at 20 days takes when 15% of its time is lost.
- ``q3``: the lost fraction of 1024 workers with 2% jitter.
- ``q4``: the jitter at which 4096 workers lose 5% of their time.
- ``q5`` (a design question): replace a slow node or keep running? A
  1024-GPU job with 120 hours of work left runs 4% slower with the node; a
  restart costs 1 hour plus 3 hours of work redone since the checkpoint.
"""

from __future__ import annotations

from ..math.cost import cost_of_stragglers
from ..math.delay import stretched_days
from ..models.cluster import Cluster
from ..models.remedies import restart_or_keep
from ..models.step_time import StepTime
from ..models.waste import jitter_for_lost_fraction, lost_fraction
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

q1 = Exercise(
    "q1", expected=lambda: cost_of_stragglers(1024, 30, 0.05, 3.0).usd_lost,
    hint="GPUs × days × 24 hours gives GPU-hours; the lost fraction of those, times the price, gives dollars.",
    solution="cost_of_stragglers(1024, 30, 0.05, 3.0).usd_lost  # = 1024 * 30 * 24 * 0.05 * 3 = 110,592",
)

q2 = Exercise(
    "q2", expected=lambda: stretched_days(20, 0.15),
    hint="If a fraction f of the time is lost, only 1 - f of each day does the planned work.",
    solution="stretched_days(20, 0.15)  # = 20 / (1 - 0.15), about 23.53 days",
    rel_tol=1e-3,
)

q3 = Exercise(
    "q3", expected=lambda: lost_fraction(Cluster.uniform(1024, StepTime(1.0, jitter=0.02))),
    hint="lost_fraction(cluster) is (E[slowest] - mean worker time) / E[step]. With normal jitter, "
         "E[slowest] = 1 + jitter * e_n seconds, e_n = E[max of n standard normals].",
    solution="lost_fraction(Cluster.uniform(1024, StepTime(1.0, jitter=0.02)))  # about 0.061",
    abs_tol=5e-4,
    fraction=True,
)

q4 = Exercise(
    "q4", expected=lambda: jitter_for_lost_fraction(4096, 0.05),
    hint="Solve jitter * e_n / (1 + jitter * e_n) = 0.05 with e_n = E[max of 4096 standard normals], "
         "or use jitter_for_lost_fraction(n, target).",
    solution="jitter_for_lost_fraction(4096, 0.05)  # = 0.05 / (0.95 * 3.6261), about 0.0145",
    fraction=True,
)


q5 = Exercise(
    "q5", expected=lambda: restart_or_keep(120, 1.04, restart=1.0, lost=3.0, gpus=1024).choice,
    hint="Keep running: the 120 hours take 120 x 1.04. Replace: 1 + 3 hours, then 120 hours at full speed. "
         "Whichever ends sooner also costs fewer GPU-hours. restart_or_keep(remaining, speedup, restart, lost).",
    solution="restart_or_keep(120, 1.04, restart=1.0, lost=3.0, gpus=1024).choice  # 'replace': 124.8 h against 124 h, "
             "819 GPU-hours saved; below 100 hours of work left, keep running",
)
