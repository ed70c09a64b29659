"""The models layer: samplers, the step-time and cluster model, the pipeline
schedule and the mitigation models. Takes an ``rng``, returns arrays or
frozen dataclasses; imports only the math layer, numpy and scipy.

- :mod:`.samplers`: ``sample_max``, ``sample_order_stat`` (cost independent of n).
- :mod:`.step_time`: ``StepTime``, one worker's step-time distribution.
- :mod:`.cluster`: ``Group``, ``Cluster``, ``AllReduce``,
  ``ring_allreduce_time``, ``expected_step_time``, ``expected_slowest``,
  ``throughput``, ``scaling_efficiency``, ``sample_step_times``.
"""

from .cluster import (
    AllReduce,
    Cluster,
    Group,
    expected_slowest,
    expected_step_time,
    ring_allreduce_time,
    sample_step_times,
    scaling_efficiency,
    throughput,
)
from .samplers import sample_max, sample_order_stat
from .step_time import StepTime

__all__ = [
    "AllReduce",
    "Cluster",
    "Group",
    "StepTime",
    "expected_slowest",
    "expected_step_time",
    "ring_allreduce_time",
    "sample_max",
    "sample_order_stat",
    "sample_step_times",
    "scaling_efficiency",
    "throughput",
]
