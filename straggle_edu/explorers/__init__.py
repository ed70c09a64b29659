"""The explorers layer: ipywidgets that connect controls to models and charts.

One explorer per idea. Each ``*_explorer(...)`` returns a widget whose
controls are attributes, so a test can set ``.value`` and check the chart.
Modules are named after the notebook they serve; every public name is also
available here, so a notebook can write
``from straggle_edu.explorers import <name>``.
"""

from .barrier_lab import (
    barrier_lab_explorer, LAB_MAX_WORKERS,
)
from .cost import (
    cost_explorer, lost_fraction_explorer, PAUSE_CHOICES,
)
from .debug_job import (
    debug_job_explorer, EXAMPLE_CAUSES,
)
from .independence import independence_explorer, scale_up_explorer
from .expected_max import (
    expected_max_explorer, max_histogram_explorer, slow_card_explorer, speedup_explorer,
)
from .mitigations import (
    backup_explorer, hedging_explorer, packing_explorer, partition_explorer, sgd_explorer,
)
from .restaurant import (
    restaurant_explorer, barrier_explorer,
)
from .root_causes import (
    MYSTERY, debug_checklist_explorer, gc_explorer, sequence_imbalance_explorer,
    stage_imbalance_explorer,
)
from .start_here import (
    start_here_explorer, START_HERE_STEP_TIME,
)
from .tail import (
    tail_explorer, budget_explorer, percentile_explorer,
)
from ._controls import worker_counts
from .training_step import (
    SLOW_TARGETS, SCHEDULE_CHOICES, pipeline_explorer, dp_scaling_explorer, slow_mask,
)

__all__ = [
    "barrier_lab_explorer", "LAB_MAX_WORKERS", "cost_explorer", "lost_fraction_explorer",
    "PAUSE_CHOICES", "debug_job_explorer", "EXAMPLE_CAUSES", "expected_max_explorer",
    "independence_explorer", "scale_up_explorer",
    "max_histogram_explorer", "slow_card_explorer", "speedup_explorer", "backup_explorer",
    "hedging_explorer", "packing_explorer", "partition_explorer", "sgd_explorer",
    "restaurant_explorer", "barrier_explorer", "MYSTERY", "debug_checklist_explorer",
    "gc_explorer", "sequence_imbalance_explorer", "stage_imbalance_explorer",
    "start_here_explorer", "START_HERE_STEP_TIME", "tail_explorer", "budget_explorer",
    "percentile_explorer", "worker_counts", "SLOW_TARGETS", "SCHEDULE_CHOICES",
    "pipeline_explorer", "dp_scaling_explorer", "slow_mask",
]
