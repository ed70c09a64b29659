"""Tests for the root-cause charts (straggle_edu.charts.root_causes)."""

import numpy as np
import pytest
from _chartdata import layer_rows

from straggle_edu.charts.root_causes import (
    attribution_chart,
    gc_chart,
    per_step_chart,
    sequence_lengths_chart,
    stage_costs_chart,
    study_waste_chart,
    worker_heatmap_chart,
    worker_load_chart,
)
from straggle_edu.models.causes import (
    gc_step_times,
    sequence_lengths,
    stage_imbalance,
    straggler_scenario,
)
from straggle_edu.models.osdi2025 import STUDY
from straggle_edu.traces.diagnose import diagnose_job


def _layer_values(spec, i=0):
    """Rows of layer i (or of the whole chart, when Altair hoisted them)."""
    return layer_rows(spec, i)


def test_study_waste_chart_uses_the_study_constants():
    rows = _layer_values(study_waste_chart().to_dict())
    assert [r["waste"] for r in rows] == [STUDY[k].value for k in ("waste_median", "waste_p90", "waste_p99", "gpu_hours_wasted")]


def test_sequence_lengths_chart_shares_sum_to_one():
    x = sequence_lengths(5000, rng=0)
    spec = sequence_lengths_chart(x, bins=20).to_dict()
    rows = _layer_values(spec)
    assert len(rows) == 20
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert _layer_values(spec, 1)[0]["tokens"] == pytest.approx(np.median(x))
    with pytest.raises(ValueError, match="lengths must be tokens >= 1"):
        sequence_lengths_chart([0, 5])


def test_worker_load_chart_marks_the_slowest():
    spec = worker_load_chart([1.0, 3.0, 2.0]).to_dict()
    rows = _layer_values(spec)
    assert [r["slowest"] for r in rows] == [False, True, False]
    assert [r["time"] for r in _layer_values(spec, 1)] == [2.0, 3.0]
    with pytest.raises(ValueError, match="worker_times must be 1 to 1024"):
        worker_load_chart([])


def test_stage_costs_chart_stacks_the_output_layer():
    spec = stage_costs_chart(stage_imbalance(8, 2, 4, output_layers=1.5)).to_dict()
    rows = _layer_values(spec)
    extra = [r for r in rows if r["part"] != "layers"]
    assert len(extra) == 1 and extra[0]["stage"] == 1 and extra[0]["seconds"] == 1.5
    assert _layer_values(spec, 1)[0]["ideal"] == pytest.approx((8 + 1.5) / 2)
    with pytest.raises(ValueError, match="result must be a StageImbalance"):
        stage_costs_chart(None)


def test_gc_chart_means():
    r, p = gc_step_times(16, 50, rng=0), gc_step_times(16, 50, planned=True)
    spec = gc_chart(r, p, max_points=20).to_dict()
    assert len(_layer_values(spec)) == 40
    means = {m["mode"]: m["mean"] for m in _layer_values(spec, 1)}
    assert means == {"random GC": pytest.approx(r.mean()), "planned GC": pytest.approx(p.mean())}


def test_diagnosis_charts():
    dx = diagnose_job(straggler_scenario("slow worker", rng=0))
    spec = attribution_chart(dx).to_dict()
    rows = layer_rows(spec)
    assert len(rows) == 4 + 4 + len(dx.by_op)
    assert {r["group"] for r in rows} == {"dp rank", "stage", "op type"}
    heat = layer_rows(worker_heatmap_chart(dx).to_dict())
    assert (max(heat, key=lambda r: r["S"])["dp"], max(heat, key=lambda r: r["S"])["stage"]) == (1, 0)
    steps = _layer_values(per_step_chart(dx).to_dict())
    assert len(steps) == 20
    with pytest.raises(ValueError, match="diagnosis must be a Diagnosis"):
        attribution_chart({})
