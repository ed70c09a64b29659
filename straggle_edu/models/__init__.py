"""The models layer: samplers, the step-time and cluster model, the pipeline
schedule and the mitigation models. Takes an ``rng``, returns arrays or
frozen dataclasses; imports only the math layer, numpy and scipy.

- :mod:`.samplers`: ``sample_max``, ``sample_order_stat`` (cost independent of n).
- :mod:`.step_time`: ``StepTime``, one worker's step-time distribution.
- :mod:`.cluster`: ``Group``, ``Cluster``, ``AllReduce``,
  ``ring_allreduce_time``, ``expected_step_time``, ``expected_slowest``,
  ``throughput``, ``scaling_efficiency``, ``sample_step_times``.
- :mod:`.restaurant`: dishes at a table and workers at a barrier (notebook 01).
- :mod:`.max_growth`: E[max] four ways and histograms of the maximum (03).
- :mod:`.waste`: the lost fraction of a cluster and the slow card (03, 04).
- :mod:`.training_step`: the data-parallel step against n (05).
- :mod:`.pipeline`: ``schedule_1f1b`` and ``simulate_pipeline``, the DP x PP
  step simulator with its critical path (05, 09).
- :mod:`.causes`: sequence-length, stage and GC models, and ``straggler_scenario``,
  a small job with one hidden cause that records itself as an op-level trace (06).
- :mod:`.job_trace`: a simulated Megatron-style 1F1B job recorded op by op in the
  OSDI 2025 artifact's schema, as plain arrays (06, 09).
- :mod:`.osdi2025`: the published figures of the OSDI 2025 straggler study (06).
- :mod:`.balance`: packing (LPT, Karmarkar-Karp) and stage partition (07).
- :mod:`.backup`: ``backup_workers`` and where backups stop paying (07).
- :mod:`.hedging`: hedged and tied requests (07).
- :mod:`.sgd`: sync, backup and async SGD at equal wall-clock time (07).
- :mod:`.softmax`: softmax regression on generated data with sample lengths (11).
- :mod:`.sgd_schedule`: the real SGD experiment's plan and the k-of-n rule (11).
- :mod:`.detector`: a straggler detector's reports simulated from raw timings (12).
- :mod:`.remedies`: the remedy table (debugging answer -> action) and the
  restart-against-keep-running arithmetic (06b, 09b).
"""

from .backup import backup_workers
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
    "backup_workers",
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
