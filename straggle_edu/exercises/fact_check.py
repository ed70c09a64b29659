"""Exercises for ``08_fact_check.ipynb``: check a claim yourself, then design with it.

- ``q1``: the bill of 2048 GPUs for 30 days, 8% lost, at $3 per GPU-hour (claim 6's kind).
- ``q2``: the speedup from 1 to 2 workers with 10% jitter (claim 11's kind).
- ``q3`` (design): choose k, the gradients to wait for out of 100 cards that stall 1 s on 0.3% of steps.
"""

from __future__ import annotations

import numpy as np

from ..math.cost import cost_of_stragglers
from ..models.backup import wait_for_fastest
from ..models.cluster import Cluster, expected_step_time
from ..models.step_time import StepTime
from . import Exercise

__all__ = ["q1", "q2", "q3", "best_k"]


def best_k(dist, workers):
    """The k of ``workers`` to wait for that gives the most samples per second.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or StepTime
        One worker's compute time, in seconds.
    workers : int
        The fleet, >= 1.

    Returns
    -------
    int
        The best k, 1 <= k <= workers (the smallest on a tie).

    Examples
    --------
    >>> best_k(StepTime(1.0, jitter=0.02, pause_prob=0.003, pause=1.0), 100)
    98
    """
    ratios = [wait_for_fastest(dist, workers, k).throughput_ratio for k in range(1, workers + 1)]
    return int(np.argmax(ratios)) + 1


q1 = Exercise(
    "q1", expected=lambda: cost_of_stragglers(2048, 30, 0.08, 3.0).usd_lost,
    hint="GPU-hours = GPUs x days x 24; the loss is 8% of them, at $3 each.",
    solution="se.cost_of_stragglers(2048, 30, 0.08, 3.0).usd_lost  # 2048 * 30 * 24 * 0.08 * 3 = $353,894.40",
    rel_tol=1e-6,
)

q2 = Exercise(
    "q2", expected=lambda: 2 * expected_step_time(Cluster.uniform(1, StepTime(1.0, jitter=0.1)))
    / expected_step_time(Cluster.uniform(2, StepTime(1.0, jitter=0.1))),
    hint="Two workers do twice the work per step, but a step lasts E[max of 2]. For a normal, "
         "E[max of 2] = mu + sigma / sqrt(pi).",
    solution="2 / (1 + 0.1 / np.sqrt(np.pi))  # about 1.893, not 2",
    rel_tol=1e-4,
)

q3 = Exercise(
    "q3", expected=lambda: best_k(StepTime(1.0, jitter=0.02, pause_prob=0.003, pause=1.0), 100),
    hint="Samples per second go as k / E[k-th fastest of 100]: print wait_for_fastest(StepTime(1.0, jitter=0.02, "
         "pause_prob=0.003, pause=1.0), 100, k).throughput_ratio for k from 90 to 100 and take the largest.",
    solution="max(range(90, 101), key=lambda k: wait_for_fastest(StepTime(1.0, jitter=0.02, pause_prob=0.003, "
             "pause=1.0), 100, k).throughput_ratio)  # 98: with stalls this rare, drop only the two slowest, not six",
)
