"""Charts of the live barrier lab: built from arrays, valid Vega-Lite, right numbers."""

import numpy as np
import pytest

from straggle_edu.charts.barrier_lab import fixed_work_chart, lab_gantt_chart, lab_prediction_chart
from _vega import drawn_texts

BUSY = np.array([[0.05, 0.10, 0.05], [0.06, 0.10, 0.04]])
WAIT = np.array([[0.05, 0.00, 0.05], [0.04, 0.00, 0.06]])


def _layers(chart):
    spec = chart.to_dict()
    return spec["hconcat"][0]["layer"], spec["hconcat"][1]


def test_lab_gantt_chart_rows_follow_the_measurements():
    start = np.array([[0.0, 0.0, 0.0], [0.1, 0.1, 0.1]])
    (bars, rules), per_worker = _layers(lab_gantt_chart(BUSY, WAIT, start))
    rows = bars["data"]["values"]
    assert len(rows) == 2 * 3 * 2
    r = next(x for x in rows if x["step"] == 1 and x["rank"] == 2 and x["phase"] == "wait")
    assert r["start"] == pytest.approx(140.0) and r["end"] == pytest.approx(200.0) and r["ms"] == pytest.approx(60.0)
    assert [x["t"] for x in rules["data"]["values"]] == pytest.approx([100.0, 200.0])
    means = {(m["rank"], m["phase"]): m["ms"] for m in per_worker["data"]["values"]}
    assert means[(1, "compute")] == pytest.approx(100.0) and means[(0, "wait")] == pytest.approx(45.0)
    assert bars["encoding"]["x"]["field"] == "start" and bars["encoding"]["y"]["type"] == "ordinal"


def test_lab_gantt_chart_lays_steps_end_to_end_without_start():
    (bars, _), _ = _layers(lab_gantt_chart(BUSY, WAIT))
    first = next(x for x in bars["data"]["values"] if x["step"] == 1 and x["rank"] == 0 and x["phase"] == "compute")
    assert first["start"] == pytest.approx(100.0)


def test_lab_gantt_chart_caps_rows():
    busy = np.full((400, 64), 0.01)
    (bars, _), _ = _layers(lab_gantt_chart(busy, busy, max_steps=500))
    assert len(bars["data"]["values"]) <= 5000


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(busy=[[0.1, -0.1]], wait=[[0.0, 0.0]]), "busy must be seconds >= 0"),
        (dict(busy=[[0.1, 0.1]], wait=[[0.0]]), "wait must be shape"),
        (dict(busy=[0.1, 0.1], wait=[0.0, 0.0]), "busy must be a 2-d array"),
        (dict(busy=[[0.1]], wait=[[0.1]], max_steps=0), "max_steps must be"),
    ],
)
def test_lab_gantt_chart_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lab_gantt_chart(**kwargs)


def test_lab_prediction_chart_draws_both_numbers():
    chart = lab_prediction_chart(0.0612, 0.0011, 0.0600, 0.0004)
    spec = chart.to_dict()
    parts, bar, dot = spec["layer"]
    assert [p["end"] for p in parts["data"]["values"]] == pytest.approx([60.0, 60.4])
    (point,) = bar["data"]["values"]
    assert (point["lo"], point["ms"], point["hi"]) == pytest.approx((60.1, 61.2, 62.3))
    texts = drawn_texts(chart)
    assert "predicted" in texts and "measured" in texts and "mean step time (ms)" in texts


def test_lab_prediction_chart_bad_input():
    with pytest.raises(ValueError, match="stderr must be >= 0"):
        lab_prediction_chart(0.06, -0.001, 0.06, 0.0)


def test_fixed_work_chart_predicts_from_the_samples_and_marks_the_data_end():
    busy = np.array([[0.010, 0.012], [0.011, 0.010], [0.013, 0.010]])  # 6 samples
    left, right = fixed_work_chart(busy, max_n=64, bins=4).to_dict()["hconcat"]
    assert sum(b["steps"] for b in left["data"]["values"]) == 6
    line = {r["n"]: r for r in right["layer"][0]["data"]["values"]}
    assert line[1]["ms"] == pytest.approx(1e3 * busy.mean())  # E[max of 1] is the mean
    assert line[64]["ms"] == pytest.approx(13.0, rel=1e-3)  # far past the data: the largest sample
    assert line[4]["data"] == "within the data" and line[64]["data"].startswith("past the data")
    dots = right["layer"][1]["data"]["values"]
    assert [d["n"] for d in dots] == [1, 2]
    assert dots[1]["ms"] == pytest.approx(1e3 * busy.max(axis=1).mean())  # the run's own max of 2


def test_fixed_work_chart_bad_input():
    with pytest.raises(ValueError, match="busy must be"):
        fixed_work_chart([[0.01, -0.01]])
    with pytest.raises(ValueError, match="max_n must be a whole number in 1..1000000, got 0"):
        fixed_work_chart([[0.01]], max_n=0)
