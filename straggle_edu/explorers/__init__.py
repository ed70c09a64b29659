"""The explorers layer: ipywidgets that connect controls to models and charts.

One explorer per idea. Each ``*_explorer(...)`` returns a widget whose
controls are attributes, so a test can set ``.value`` and check the chart.
Modules are named after the notebook they serve; every public name is also
available here, so a notebook can write
``from straggle_edu.explorers import <name>``.
"""

from .backup_for_real import (
    real_sgd_explorer, prediction_rows,
)
from .barrier_lab import (
    barrier_lab_explorer, LAB_MAX_WORKERS,
)
from .cost import (
    cost_explorer, lost_fraction_explorer, PAUSE_CHOICES,
)
from .debug_job import (
    debug_job_explorer, EXAMPLE_CAUSES,
)
from .detector import (
    detector_explorer, detector_readout,
)
from .expected_max import (
    expected_max_explorer, max_histogram_explorer, slow_card_explorer, speedup_explorer,
    step_draw_explorer, DRAW_WORKERS,
)
from .fleet import (
    fleet_explorer, fleet_readout,
)
from .independence import (
    independence_explorer, independence_rows, scale_up_explorer, step_times_from,
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
from .training_step import (
    SLOW_TARGETS, SCHEDULE_CHOICES, pipeline_explorer, dp_scaling_explorer, barriers_explorer,
    slow_mask,
)
from ._controls import (
    worker_counts,
)

__all__ = [
    "real_sgd_explorer", "prediction_rows", "barrier_lab_explorer", "LAB_MAX_WORKERS",
    "cost_explorer", "lost_fraction_explorer", "PAUSE_CHOICES", "debug_job_explorer",
    "EXAMPLE_CAUSES", "detector_explorer", "detector_readout", "expected_max_explorer",
    "max_histogram_explorer", "slow_card_explorer", "speedup_explorer", "step_draw_explorer", "DRAW_WORKERS",
    "fleet_explorer", "fleet_readout",
    "independence_explorer",
    "independence_rows", "scale_up_explorer", "step_times_from", "backup_explorer",
    "hedging_explorer", "packing_explorer", "partition_explorer", "sgd_explorer",
    "restaurant_explorer", "barrier_explorer", "MYSTERY", "debug_checklist_explorer",
    "gc_explorer", "sequence_imbalance_explorer", "stage_imbalance_explorer",
    "start_here_explorer", "START_HERE_STEP_TIME", "tail_explorer", "budget_explorer",
    "percentile_explorer", "SLOW_TARGETS", "SCHEDULE_CHOICES", "pipeline_explorer",
    "dp_scaling_explorer", "barriers_explorer", "slow_mask", "worker_counts",
]
