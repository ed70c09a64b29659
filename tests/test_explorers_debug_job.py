"""The debug-a-job explorer: set a control (or click the heatmap), check what changed."""

import pytest
from _chartdata import all_rows

from straggle_edu.explorers.debug_job import EXAMPLE_CAUSES, debug_job_explorer
from straggle_edu.traces import analyze, analyze_rank_times
from straggle_edu.traces.synthetic import example_trace


def values(jchart):
    """Every row of a (possibly concatenated or layered) chart's inline data."""
    return all_rows(jchart.chart.to_dict())


def test_starts_on_the_culprit_and_its_worst_step():
    ex = debug_job_explorer()
    assert ex.controls["example"].value == "slow-worker"
    assert ex.controls["worker"].value == (1, 1)
    a = ex.analysis
    i = list(a.workers).index((1, 1))
    assert ex.controls["step"].value == int(a.steps[a.worker_step_slowdown[i].argmax()])
    ops = values(ex.charts["ops"])
    assert {r["lane"] for r in ops} == {"recorded", "ideal replay"}
    assert any(r["kind"] == "ran long" for r in ops)  # the slow worker's computes
    assert "Which worker?" in ex.extra[0].value and "DP rank 1, stage 1" in ex.extra[0].value


def test_picking_a_healthy_worker_shows_no_long_ops():
    ex = debug_job_explorer()
    ex.controls["worker"].value = (0, 0)
    ops = values(ex.charts["ops"])
    assert ops and not any(r["kind"] == "ran long" for r in ops)
    assert ex.charts["ops"].chart.to_dict()["title"].startswith("dp 0 · stage 0")
    ex.controls["step"].value = ex.controls["step"].options[0]
    assert ex.charts["ops"].chart.to_dict()["title"].endswith(f"step {ex.controls['step'].options[0]}: recorded and ideal")


def test_clicking_the_heatmap_drills_into_that_worker():
    ex = debug_job_explorer()
    heat = ex.charts["heatmap"]
    # what the browser sends when a reader clicks the row of dp 2 · stage 0
    heat._vl_selections = {"worker": {"value": {"vlPoint": {"or": [{"worker": "dp 2 · stage 0"}]}}, "store": []}}
    assert ex.controls["worker"].value == (2, 0)
    assert ex.charts["ops"].chart.to_dict()["title"].startswith("dp 2 · stage 0")


@pytest.mark.parametrize("cause", EXAMPLE_CAUSES)
def test_every_example_loads_and_points_at_its_culprit(cause):
    ex = debug_job_explorer()
    ex.controls["example"].value = cause
    a = ex.analysis
    assert a.slowdown == pytest.approx(analyze(example_trace(cause)).slowdown)
    assert ex.controls["worker"].value == a.culprit()
    assert ex.controls["step"].value in a.steps
    heat = values(ex.charts["heatmap"])
    assert len(heat) == len(a.workers) * len(a.steps)
    # the selection still drills in after the heatmap was replaced
    ex.charts["heatmap"]._vl_selections = {"worker": {"value": {"vlPoint": {"or": [{"worker": "dp 3 · stage 1"}]}},
                                                      "store": []}}
    assert ex.controls["worker"].value == (3, 1)


def test_every_worker_and_step_draws_without_error():
    ex = debug_job_explorer(example="gc-pauses")
    for w in ex.controls["worker"].options:
        ex.controls["worker"].value = w[1]
    for s in ex.controls["step"].options:
        ex.controls["step"].value = s
    assert values(ex.charts["ops"])


def test_a_given_analysis_or_per_rank_trace():
    ex = debug_job_explorer(analyze_rank_times([[1.0, 3.0, 1.0], [1.0, 3.0, 1.0]]))
    assert "example" not in ex.controls and "ranks" in ex.charts
    assert ex.controls["worker"].value == 1
    ex.controls["worker"].value = 2  # no error
    with pytest.raises(ValueError, match="example must be one of"):
        debug_job_explorer(example="cosmic rays")


def test_an_analysis_without_worker_attribution_starts_on_the_slowest_worker():
    a = analyze(example_trace("slow-worker"), attribution="basic")
    assert a.by_worker is None
    ex = debug_job_explorer(a)
    assert ex.controls["worker"].value == (1, 1)
