"""The charts layer: pure functions from data to an Altair chart.

No state, no widgets. Each ``*_chart(data, ...)`` builds exactly one chart,
states every field type, and takes data already aggregated with numpy.
Modules are named after the notebook they serve (``charts.tail`` for
``02_tail_probability.ipynb``); every public name is also available here, so a
notebook can write ``from straggle_edu.charts import <name>``.
"""

import sys


def skip_slow_optional_imports():
    """Mark ``rfc3987_syntax`` absent before Altair loads.

    ``import altair`` pulls in jsonschema's format checkers, and one of them
    imports ``rfc3987_syntax``, which compiles 38 grammars at import time:
    about 1.6 s of CPU in every kernel, to validate the "iri" string format
    that nothing here uses. Changes nothing if it was already imported.

    Examples
    --------
    >>> skip_slow_optional_imports()
    >>> "rfc3987_syntax" in sys.modules
    True
    """
    sys.modules.setdefault("rfc3987_syntax", None)


skip_slow_optional_imports()

# Every chart names the font list (straggle_edu.i18n.FONT), through an Altair theme.
from ._data import use_font_theme  # noqa: E402

use_font_theme()

from .backup_for_real import (
    sgd_curves_chart,
)
from .barrier_lab import (
    lab_gantt_chart, lab_prediction_chart, LAB_COLORS,
)
from .cost import (
    BILL_LINES, bill_chart, bill_sentence_chart, lost_dollars_chart, delay_framings_chart, milestones_chart,
    lost_fraction_chart,
)
from .debug_job import (
    trace_heatmap_chart, trace_attribution_chart, worker_ops_chart, cause_gallery_chart,
    collective_tell_chart, arrival_chart, TRACE_MAX_ROWS,
)
from .detector import (
    report_scores_chart, alarms_vs_n_chart, alarms_vs_threshold_chart, alarm_rows,
    threshold_rows, simulated_rows, ALARM_FLOOR,
)
from .expected_max import (
    METHOD_LABELS, expected_max_chart, max_histograms_chart, max_vs_one_chart, speedup_chart,
    slow_card_chart, step_draws_chart,
)
from .fleet import (
    SLOWED, CULPRIT_CLASSES, CULPRIT_WHERE, cdf_rows, study_waste_rows, culprit_rows, slowdown_cdf_chart,
    waste_cdf_chart, lost_by_culprit_chart, worst_jobs_chart, remedy_chart, line_rows, lost_curve_chart, lost_curve_rows,
    short_labels,
)
from .independence import (
    independence_chart, scale_prediction_chart,
)
from .mitigations import (
    backup_datasets, hedging_tradeoff_datasets, packing_datasets, sgd_datasets,
    stage_partition_datasets, backup_margin_chart, backup_step_chart, backup_tails_chart,
    hedging_chart, hedging_tradeoff_chart, packing_chart, sgd_loss_chart, stage_partition_chart,
)
from .restaurant import (
    restaurant_chart, restaurant_datasets, barrier_chart, barrier_datasets, RESTAURANT_COLORS,
)
from .root_causes import (
    attribution_chart, attribution_rows, gc_chart, gc_rows, heatmap_rows, per_step_chart,
    per_step_rows, sequence_lengths_chart, sequence_lengths_rows, stage_costs_chart,
    stage_costs_rows, study_waste_chart, worker_heatmap_chart, worker_load_chart,
    worker_load_rows,
)
from .start_here import (
    job_vs_average_chart,
)
from .tail import (
    tail_probability_chart, tail_budget_chart, tail_percentile_chart, log_grid,
)
from .training_step import (
    PIPELINE_COLORS, GRID_COLORS, barrier_overhead_chart, grid_chart, delay_response_chart,
    delay_response_rows, dp_breakdown_chart, dp_breakdown_rows, dp_scaling_chart,
    dp_scaling_rows, gantt_colors, gantt_rows, gantt_size, pipeline_gantt_chart,
    BARRIER_COLORS, grid_barriers_rows, grid_barriers_chart, grid_step_chart,
)

__all__ = [
    "skip_slow_optional_imports", "sgd_curves_chart", "lab_gantt_chart", "lab_prediction_chart",
    "LAB_COLORS", "BILL_LINES", "bill_chart", "bill_sentence_chart", "lost_dollars_chart", "delay_framings_chart",
    "milestones_chart", "lost_fraction_chart", "trace_heatmap_chart", "trace_attribution_chart",
    "worker_ops_chart", "cause_gallery_chart", "collective_tell_chart", "arrival_chart", "TRACE_MAX_ROWS",
    "report_scores_chart", "alarms_vs_n_chart", "alarms_vs_threshold_chart", "alarm_rows",
    "threshold_rows", "simulated_rows", "ALARM_FLOOR", "METHOD_LABELS", "expected_max_chart",
    "max_histograms_chart", "max_vs_one_chart", "speedup_chart", "slow_card_chart", "step_draws_chart",
    "SLOWED", "CULPRIT_CLASSES", "CULPRIT_WHERE", "cdf_rows", "study_waste_rows", "culprit_rows",
    "slowdown_cdf_chart", "waste_cdf_chart", "lost_by_culprit_chart", "worst_jobs_chart", "remedy_chart", "line_rows",
    "lost_curve_chart", "lost_curve_rows", "short_labels",
    "independence_chart", "scale_prediction_chart", "backup_datasets",
    "hedging_tradeoff_datasets", "packing_datasets", "sgd_datasets", "stage_partition_datasets",
    "backup_margin_chart", "backup_step_chart", "backup_tails_chart", "hedging_chart",
    "hedging_tradeoff_chart", "packing_chart", "sgd_loss_chart", "stage_partition_chart",
    "restaurant_chart", "restaurant_datasets", "barrier_chart", "barrier_datasets",
    "RESTAURANT_COLORS", "attribution_chart", "attribution_rows", "gc_chart", "gc_rows",
    "heatmap_rows", "per_step_chart", "per_step_rows", "sequence_lengths_chart",
    "sequence_lengths_rows", "stage_costs_chart", "stage_costs_rows", "study_waste_chart",
    "worker_heatmap_chart", "worker_load_chart", "worker_load_rows", "job_vs_average_chart",
    "tail_probability_chart", "tail_budget_chart", "tail_percentile_chart", "log_grid",
    "PIPELINE_COLORS", "GRID_COLORS", "barrier_overhead_chart", "grid_chart",
    "delay_response_chart", "delay_response_rows", "dp_breakdown_chart", "dp_breakdown_rows",
    "dp_scaling_chart", "dp_scaling_rows", "gantt_colors", "gantt_rows", "gantt_size",
    "pipeline_gantt_chart", "BARRIER_COLORS", "grid_barriers_rows", "grid_barriers_chart", "grid_step_chart",
]
