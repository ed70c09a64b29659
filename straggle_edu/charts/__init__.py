"""The charts layer: pure functions from data to an Altair chart.

No state, no widgets. Each ``*_chart(data, ...)`` builds exactly one chart,
states every field type, and takes data already aggregated with numpy.
Modules are named after the notebook they serve (``charts.tail`` for
``02_tail_probability.ipynb``); every public name is also available here, so a
notebook can write ``from straggle_edu.charts import <name>``: it is loaded
from its module when first used, so importing the package costs nothing.
"""

import importlib
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

# Where each name lives. Importing the package loads none of them: a name loads its module (and Altair, and the
# font theme with it, :mod:`~straggle_edu.charts._data`) when it is first used, so that what needs one chart (the
# fleet's report, a notebook's first cell) does not pay for every model and chart module (about 1 s of CPU).
_MODULES = {
    "backup_for_real": ("sgd_curves_chart",),
    "barrier_lab": ("lab_gantt_chart", "lab_prediction_chart", "LAB_COLORS"),
    "cost": (
        "BILL_LINES", "bill_chart", "bill_sentence_chart", "lost_dollars_chart", "delay_framings_chart",
        "milestones_chart", "lost_fraction_chart",
    ),
    "debug_job": (
        "trace_heatmap_chart", "trace_attribution_chart", "worker_ops_chart", "cause_gallery_chart",
        "collective_tell_chart", "arrival_chart", "TRACE_MAX_ROWS",
    ),
    "detector": (
        "report_scores_chart", "alarms_vs_n_chart", "alarms_vs_threshold_chart", "alarm_rows", "threshold_rows",
        "simulated_rows", "ALARM_FLOOR",
    ),
    "expected_max": (
        "METHOD_LABELS", "expected_max_chart", "max_histograms_chart", "max_vs_one_chart", "speedup_chart",
        "slow_card_chart", "step_draws_chart",
    ),
    "fleet": (
        "SLOWED", "CULPRIT_CLASSES", "CULPRIT_WHERE", "cdf_rows", "study_waste_rows", "culprit_rows",
        "slowdown_cdf_chart", "waste_cdf_chart", "lost_by_culprit_chart", "worst_jobs_chart", "remedy_chart",
        "line_rows", "lost_curve_chart", "lost_curve_rows", "short_labels",
    ),
    "independence": ("independence_chart", "scale_prediction_chart"),
    "mitigations": (
        "backup_datasets", "hedging_tradeoff_datasets", "packing_datasets", "sgd_datasets",
        "stage_partition_datasets", "backup_margin_chart", "backup_step_chart", "backup_tails_chart",
        "hedging_chart", "hedging_tradeoff_chart", "packing_chart", "sgd_loss_chart", "stage_partition_chart",
    ),
    "restaurant": (
        "restaurant_chart", "restaurant_datasets", "barrier_chart", "barrier_datasets", "RESTAURANT_COLORS",
    ),
    "root_causes": (
        "attribution_chart", "attribution_rows", "gc_chart", "gc_rows", "heatmap_rows", "per_step_chart",
        "per_step_rows", "sequence_lengths_chart", "sequence_lengths_rows", "stage_costs_chart", "stage_costs_rows",
        "study_waste_chart", "worker_heatmap_chart", "worker_load_chart", "worker_load_rows",
    ),
    "start_here": ("job_vs_average_chart",),
    "tail": ("tail_probability_chart", "tail_budget_chart", "tail_percentile_chart", "log_grid"),
    "training_step": (
        "PIPELINE_COLORS", "GRID_COLORS", "barrier_overhead_chart", "grid_chart", "delay_response_chart",
        "delay_response_rows", "dp_breakdown_chart", "dp_breakdown_rows", "dp_scaling_chart", "dp_scaling_rows",
        "gantt_colors", "gantt_rows", "gantt_size", "pipeline_gantt_chart", "BARRIER_COLORS", "grid_barriers_rows",
        "grid_barriers_chart", "grid_step_chart",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

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


def __getattr__(name):
    """A chart's name, loaded from its module on first use (PEP 562).

    Examples
    --------
    >>> import straggle_edu.charts as charts
    >>> charts.tail_probability_chart.__module__
    'straggle_edu.charts.tail'
    """
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
