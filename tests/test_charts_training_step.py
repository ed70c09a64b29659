"""Tests for the training-step charts (straggle_edu.charts.training_step)."""

import numpy as np
import pytest
from _chartdata import layer_rows

from straggle_edu.charts.training_step import (
    delay_response_chart,
    dp_breakdown_chart,
    dp_scaling_chart,
    pipeline_gantt_chart,
)
from straggle_edu.models.cluster import AllReduce
from straggle_edu.models.pipeline import simulate_pipeline, slowed
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.training_step import data_parallel_scaling


def _values(spec):
    """The rows of a chart spec (its first layer's, for a layered chart)."""
    return layer_rows(spec)


def test_pipeline_gantt_chart_rows_and_layers():
    run = simulate_pipeline(2, 3, 1.0, slowed(2.0, 2.0, (2, 2, 3), dp=1, stage=1), dp=2, allreduce=1.0, optimizer=0.5)
    mask = (run.ops["kind"] == "B") & (run.ops["dp"] == 1) & (run.ops["stage"] == 1)
    spec = pipeline_gantt_chart(run, slowed=mask).to_dict()
    rows = _values(spec)
    ops = [r["op"] for r in rows]
    assert ops.count("forward") == ops.count("backward") == 12
    assert ops.count("all-reduce") == ops.count("optimizer") == 4
    # replica 0 finishes early and waits at the DP barrier
    waits = [r for r in rows if r["op"] == "wait"]
    assert {(r["worker"]) for r in waits} >= {"dp 0 · stage 0", "dp 0 · stage 1"}
    assert sum(r["slowed"] for r in rows) == 3
    timed = np.isin(run.ops["kind"], ["F", "B", "allreduce", "optimizer"])
    assert sum(r["critical"] for r in rows) == int(run.ops["critical"][timed].sum())
    assert len(spec["layer"]) == 3
    assert spec["title"]["text"] if isinstance(spec["title"], dict) else spec["title"]


def test_pipeline_gantt_chart_by_op_and_bad_input():
    run = simulate_pipeline(2, 2, 1.0, 2.0)
    spec = pipeline_gantt_chart(run, color="op").to_dict()
    labels = {r["label"] for r in _values(spec)}
    assert {"forward", "backward"} <= labels
    with pytest.raises(ValueError, match="color must be 'microbatch' or 'op'"):
        pipeline_gantt_chart(run, color="stage")
    with pytest.raises(ValueError, match="run must be a PipelineRun"):
        pipeline_gantt_chart("run")
    with pytest.raises(ValueError, match="slowed must be a boolean mask"):
        pipeline_gantt_chart(run, slowed=[True])
    with pytest.raises(ValueError, match="at most 5000 ops"):
        pipeline_gantt_chart(simulate_pipeline(8, 64, 1.0, 1.0, dp=4))


def test_delay_response_chart():
    spec = delay_response_chart([0, 1, 2], [0, 0, 0.5], slack=1.5).to_dict()
    assert len(spec["layer"]) == 3
    with pytest.raises(ValueError, match="step_increase must be 3 values"):
        delay_response_chart([0, 1, 2], [0, 1])


def test_dp_scaling_and_breakdown_charts():
    t = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
    s = data_parallel_scaling([1, 8, 64, 512], t, sync=AllReduce(1e9, 1e11))
    spec = dp_scaling_chart({"a": s}, n=64).to_dict()
    params = [p for layer in spec["layer"] for p in layer.get("params", [])] + spec.get("params", [])
    assert any(p["name"] == "n_mark" and p["value"] == 64 for p in params)
    spec = dp_scaling_chart({"a": s}, measure="speedup").to_dict()
    assert spec["layer"][1]["encoding"]["y"]["title"] == "speed-up over one worker"
    bars = layer_rows(dp_breakdown_chart(s, [1, 512]).to_dict())
    assert {r["part"] for r in bars} == {"compute", "wait", "sync"}
    assert len(bars) == 6
    with pytest.raises(ValueError, match="measure must be"):
        dp_scaling_chart({"a": s}, measure="cost")
    with pytest.raises(ValueError, match="ns must be between 1 and 30"):
        dp_breakdown_chart(s, [3])


def test_barrier_overhead_chart_rows_are_the_closed_form():
    from straggle_edu.charts.training_step import barrier_overhead_chart
    from straggle_edu.models.barriers import barrier_overhead, barrier_overhead_rows

    spec = barrier_overhead_chart(barrier_overhead_rows(8, 0.05, 128), barriers=16).to_dict()
    rows = _values(spec)
    assert [r["barriers"] for r in rows] == [1, 2, 4, 8, 16, 32, 64, 128]
    assert rows[-1]["overhead"] == pytest.approx(barrier_overhead(8, 0.05, 128, 128))
    assert spec["params"][0]["value"] == 16


def test_grid_chart_one_cell_per_rank_and_role_colours():
    from straggle_edu.charts.training_step import GRID_COLORS, grid_chart
    from straggle_edu.models.barriers import GRID_ROLES, grid_waits

    spec = grid_chart(grid_waits(2, 4, 4, slow=(1, 2, 3), factor=1.5)).to_dict()
    rows = spec["spec"]["data"]["values"] if "data" in spec["spec"] else next(iter(spec["datasets"].values()))
    assert len(rows) == 32 and sum(r["role"] == GRID_ROLES[0] for r in rows) == 1
    scale = spec["spec"]["layer"][0]["encoding"]["color"]["scale"]
    assert scale["domain"] == list(GRID_ROLES) and scale["range"] == GRID_COLORS
