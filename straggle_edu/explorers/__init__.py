"""The explorers layer: ipywidgets that connect controls to models and charts.

One explorer per idea. Each ``*_explorer(...)`` returns a widget whose
controls are attributes, so a test can set ``.value`` and check the chart.
Modules are named after the notebook they serve; every public name is also
available here, so a notebook can write
``from straggle_edu.explorers import <name>``.
"""

from .backup_for_real import real_sgd_explorer
from .barrier_lab import (
    barrier_lab_explorer,
    LAB_MAX_WORKERS,
)
from .cost import (
    cost_explorer,
    lost_fraction_explorer,
    PAUSE_CHOICES,
)
from .debug_job import (
    debug_job_explorer,
    EXAMPLE_CAUSES,
)
from .expected_max import (
    expected_max_explorer,
    max_histogram_explorer,
    slow_card_explorer,
    speedup_explorer,
)
from .mitigations import (
    backup_explorer,
    hedging_explorer,
    packing_explorer,
    partition_explorer,
    sgd_explorer,
)
from .restaurant import (
    restaurant_explorer,
    barrier_explorer,
)
from .root_causes import (
    MYSTERY,
    debug_checklist_explorer,
    gc_explorer,
    sequence_imbalance_explorer,
    stage_imbalance_explorer,
)
from .start_here import (
    start_here_explorer,
    START_HERE_STEP_TIME,
)
from .tail import (
    tail_explorer,
    budget_explorer,
    percentile_explorer,
    worker_counts,
)
from .training_step import (
    SLOW_TARGETS,
    SCHEDULE_CHOICES,
    pipeline_explorer,
    dp_scaling_explorer,
    slow_mask,
)

__all__ = [
    # backup_for_real
    "real_sgd_explorer",
    # barrier_lab
    "barrier_lab_explorer",
    "LAB_MAX_WORKERS",
    # cost
    "cost_explorer",
    "lost_fraction_explorer",
    "PAUSE_CHOICES",
    # debug_job
    "debug_job_explorer",
    "EXAMPLE_CAUSES",
    # expected_max
    "expected_max_explorer",
    "max_histogram_explorer",
    "slow_card_explorer",
    "speedup_explorer",
    # mitigations
    "backup_explorer",
    "hedging_explorer",
    "packing_explorer",
    "partition_explorer",
    "sgd_explorer",
    # restaurant
    "restaurant_explorer",
    "barrier_explorer",
    # root_causes
    "MYSTERY",
    "debug_checklist_explorer",
    "gc_explorer",
    "sequence_imbalance_explorer",
    "stage_imbalance_explorer",
    # start_here
    "start_here_explorer",
    "START_HERE_STEP_TIME",
    # tail
    "tail_explorer",
    "budget_explorer",
    "percentile_explorer",
    "worker_counts",
    # training_step
    "SLOW_TARGETS",
    "SCHEDULE_CHOICES",
    "pipeline_explorer",
    "dp_scaling_explorer",
    "slow_mask",
]
