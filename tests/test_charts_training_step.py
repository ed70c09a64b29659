"""Tests for the training-step charts (straggle_edu.charts.training_step)."""

import numpy as np
import pytest
from _chartdata import all_rows, layer_rows

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


def test_grid_barriers_chart_draws_every_rank_and_counts_the_kinds():
    from straggle_edu.charts.training_step import BARRIER_COLORS, grid_barriers_chart
    from straggle_edu.models.barriers import step_barriers

    spec = grid_barriers_chart(step_barriers(2, 4, 4)).to_dict()
    ranks, lines = layer_rows(spec, 0), layer_rows(spec, 1)
    assert len(ranks) == 32 and {r["row"] for r in ranks} == set(range(8))
    kinds = {r["legend"] for r in lines}
    assert kinds == {"TP collective · 256 a step", "PP send/recv · 16 a step", "DP all-reduce · 1 a step"}
    assert spec["layer"][1]["encoding"]["color"]["scale"]["range"] == BARRIER_COLORS
    # a DP bracket joins stage s of replica 0 (row s) and of replica 1 (row 4 + s)
    spans = sorted((r["y"], r["y2"]) for r in lines if r["kind"] == "DP all-reduce" and r["x"] == r["x2"])
    assert spans == [(s, 4 + s) for s in range(4)]


def test_grid_step_chart_sets_the_drawing_beside_the_gantt_row_for_row():
    from straggle_edu.charts.training_step import grid_step_chart
    from straggle_edu.models.barriers import step_barriers

    run = simulate_pipeline(4, 8, forward=1.0, backward=2.0, dp=2, allreduce=1.0, optimizer=0.5)
    spec = grid_step_chart(step_barriers(2, 4, 4), run, row_height=30).to_dict()
    drawing, gantt = spec["hconcat"]
    assert drawing["height"] == gantt["height"] == 30 * 8
    workers = {r["worker"] for r in all_rows(spec) if "op" in r}
    assert workers == {r["worker"] for r in all_rows(spec) if "tp" in r}
    with pytest.raises(ValueError, match=r"^grid must be the run's replicas x stages, 2 x 4, got '1 x 4'"):
        grid_step_chart(step_barriers(1, 4, 4), run)
