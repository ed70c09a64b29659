"""Tests for the training-step explorers: set a control's value, check what changed."""

import itertools

import numpy as np
import pytest
from _chartdata import layer_rows

from straggle_edu.explorers.training_step import (
    SCHEDULE_CHOICES,
    SLOW_TARGETS,
    dp_scaling_explorer,
    pipeline_explorer,
)


def _rows(jchart, layer=None):
    """What the browser draws: the JupyterChart's spec (explorers patch it in place)."""
    return layer_rows(jchart.spec, layer)


def test_pipeline_explorer_slowing_one_op_lengthens_the_step_by_delay_minus_slack():
    ex = pipeline_explorer(dp=1, stages=2, microbatches=2, target="nothing")
    ex.controls["allreduce"].value = 0.0
    assert ex.run().step_time == 9.0 + 0.5  # (M + P - 1)(f + b) + optimizer
    # F of microbatch 1 on stage 0, 4x slower (+3 s): the hand-computed case, step + 1 s
    c = ex.controls
    c["op"].value = "forward"
    c["slow_stage"].value = 0
    c["slow_microbatch"].value = 1
    c["factor"].value = 4.0
    c["target"].value = "one microbatch's op"
    assert ex.run().step_time == 10.5
    assert "step longer by <b>1 s</b>" in ex.readout.value
    assert "absorbed by slack 2 s" in ex.readout.value
    slowed = [r for r in _rows(ex.charts["gantt"]) if r["slowed"]]
    assert [(r["op"], r["worker"], r["microbatch"]) for r in slowed] == [("forward", "dp 0 · stage 0", 1)]


def test_pipeline_explorer_slow_replica_waits_at_barrier():
    ex = pipeline_explorer(dp=2, stages=2, microbatches=4, target="one replica", slow_dp=1, factor=2.0, op="both")
    rows = _rows(ex.charts["gantt"])
    waits = {r["worker"] for r in rows if r["op"] == "wait"}
    assert waits == {"dp 0 · stage 0", "dp 0 · stage 1"}
    assert ex.run().step_time == pytest.approx((4 + 1) * 6 + 1.0 + 0.5)


def test_pipeline_explorer_clamps_indices_and_never_errors():
    ex = pipeline_explorer(dp=4, stages=8, microbatches=16, slow_dp=3, slow_stage=7, slow_microbatch=15)
    ex.controls["microbatches"].value = 3
    assert ex.controls["slow_microbatch"].value == 2
    ex.controls["dp"].value = 1
    assert ex.controls["slow_dp"].disabled
    ex.controls["stages"].value = 2
    ex.controls["schedule"].value = "interleaved 1F1B (2 chunks)"
    assert "showing 1F1B" in ex.readout.value
    assert ex.run().chunks == 1
    ex.controls["microbatches"].value = 6
    assert ex.run().chunks == 2
    for target, schedule in itertools.product(SLOW_TARGETS, SCHEDULE_CHOICES):
        ex.controls["target"].value = target
        ex.controls["schedule"].value = schedule
        assert ex.run().step_time > 0
    ex.controls["color"].value = "op"
    assert {"forward", "backward"} <= {r["label"] for r in _rows(ex.charts["gantt"])}


def test_pipeline_explorer_response_curve():
    ex = pipeline_explorer(dp=1, stages=2, microbatches=2, target="one microbatch's op", slow_stage=0,
                           slow_microbatch=1, op="forward")
    rows = _rows(ex.charts["response"])
    inc = [r["increase"] for r in rows]
    extra = [r["extra"] for r in rows]
    assert np.allclose(inc, np.maximum(0, np.array(extra) - 2.0))  # slack of F1 on stage 0 is 2 s


@pytest.mark.parametrize("make, kwargs, message", [
    (pipeline_explorer, {"dp": 9}, r"dp must be a whole number in 1..4, got 9"),
    (pipeline_explorer, {"factor": 10.0}, r"factor must be in \[1, 6\], got 10.0"),
    (pipeline_explorer, {"target": "everything"}, r"target must be one of 'nothing', .*, got 'everything'"),
    (pipeline_explorer, {"op": "sideways"}, r"op must be one of 'forward', 'backward', 'both', got 'sideways'"),
    (dp_scaling_explorer, {"jitter": 0.5}, r"jitter must be in \[0, 0.2\], got 0.5"),
    (dp_scaling_explorer, {"n": 10**6}, r"n must be in \[1, 100000\], got 1000000"),
])
def test_explorers_refuse_bad_starting_values(make, kwargs, message):
    # They once clamped them silently (dp=9 became 4); now they raise like every other explorer.
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


def test_dp_scaling_explorer_controls():
    ex = dp_scaling_explorer()
    ex.controls["n"].value = 100
    assert ex.charts["scaling"].params.n_mark == 100
    assert "n = 100:" in ex.readout.value
    before = ex.scaling().efficiency.copy()
    ex.controls["jitter"].value = 0.0
    ex.controls["pause_prob"].value = 0.0
    after = ex.scaling().efficiency
    assert (after >= before - 1e-12).all()
    # the relinked param still follows the slider after a rebuild
    ex.controls["n"].value = 1000
    assert ex.charts["scaling"].params.n_mark == 1000
    ex.controls["measure"].value = "speedup"
    assert ex.charts["scaling"].spec["layer"][1]["encoding"]["y"]["title"] == "speed-up over one worker"
    # a patch after the rebuild keeps the new measure
    ex.controls["jitter"].value = 0.1
    assert max(r["value"] for r in _rows(ex.charts["scaling"], 1)) > 1000
    ex.controls["gradient_gb"].value = 0.0
    assert "all-reduce 0.000" in ex.readout.value or "all-reduce 0.01" in ex.readout.value


def test_pipeline_explorer_patches_rows_without_rebuilding():
    ex = pipeline_explorer(dp=2, stages=2, microbatches=4, target="one worker", slow_dp=1, slow_stage=1, op="both")
    built = ex.charts["gantt"].chart
    height = ex.charts["gantt"].spec["height"]
    ex.controls["factor"].value = 2.0
    assert ex.charts["gantt"].chart is built  # the spec is edited, the chart object kept
    assert ex.charts["gantt"].spec["title"] == f"step time {ex.run().step_time:.4g} s"
    ends = max(r["end"] for r in _rows(ex.charts["gantt"]))
    assert ends == ex.run().step_time
    ex.controls["microbatches"].value = 5  # new layout: a new spec
    assert max(r["microbatch"] for r in _rows(ex.charts["gantt"])) == 4
    domain = ex.charts["gantt"].spec["layer"][0]["encoding"]["color"]["scale"]["domain"]
    assert "mb 4" in domain
    ex.controls["dp"].value = 1
    assert ex.charts["gantt"].spec["height"] == height // 2


def test_dp_scaling_explorer_breakdown_shows_every_decade():
    ex = dp_scaling_explorer()
    assert sorted({r["n"] for r in _rows(ex.charts["breakdown"])}) == [1, 10, 100, 1000, 10000, 100000]
    ex.controls["pause"].value = 1.0
    assert sorted({r["n"] for r in _rows(ex.charts["breakdown"])}) == [1, 10, 100, 1000, 10000, 100000]


def test_pipeline_explorer_layout_changes_edit_the_template():
    ex = pipeline_explorer(dp=1, stages=2, microbatches=2, target="nothing")
    ex.controls["microbatches"].value = 12
    spec = ex.charts["gantt"].spec
    color = spec["layer"][0]["encoding"]["color"]
    assert color["scale"]["domain"][:12] == [f"mb {i}" for i in range(12)]
    assert color["sort"] == color["scale"]["domain"]
    assert len(color["scale"]["range"]) == len(color["scale"]["domain"])
    ex.controls["stages"].value = 4
    ex.controls["dp"].value = 3
    assert ex.charts["gantt"].spec["height"] == 22 * 12
    ex.controls["color"].value = "op"
    assert ex.charts["gantt"].spec["layer"][0]["encoding"]["color"]["scale"]["domain"][:2] == ["forward", "backward"]
    ex.controls["color"].value = "microbatch"
    ex.controls["microbatches"].value = 3
    assert ex.charts["gantt"].spec["layer"][0]["encoding"]["color"]["scale"]["domain"][:4] == ["mb 0", "mb 1", "mb 2", "wait"]


def test_barriers_explorer_readout_follows_the_sliders():
    from straggle_edu.explorers.training_step import barriers_explorer
    from straggle_edu.models.barriers import barrier_overhead

    ex = barriers_explorer(barriers=128)
    assert f"{barrier_overhead(8, 0.05, 128, 128):.2%}" in ex.readout.value
    ex.controls["n"].value = 64
    ex.controls["jitter"].value = 0.01
    ex.controls["barriers"].value = 4
    assert f"{barrier_overhead(64, 0.01, 4, 128):.2%}" in ex.readout.value
    assert ex.charts["overhead"].params.barriers_mark == 4


def test_barriers_explorer_refuses_a_barrier_count_off_the_stops():
    from straggle_edu.explorers.training_step import barriers_explorer

    with pytest.raises(ValueError, match=r"^barriers must be one of 1, 2, \.\.\., 128, got 3"):
        barriers_explorer(barriers=3)
