"""Tail charts: valid specs, and the in-browser formulas agree with the math layer."""

import json
import re

import numpy as np
import pytest
from _vega import drawn_texts, with_params
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from straggle_edu import p_any_slow, per_worker_budget, workers_until
from straggle_edu.charts.tail import log_grid, tail_budget_chart, tail_percentile_chart, tail_probability_chart
from straggle_edu.models.step_time import StepTime


def _params(chart):
    return {p["name"]: p.get("value") for p in chart.to_dict()["params"]}


def test_tail_probability_chart_params_and_reference_curves():
    chart = tail_probability_chart(p=0.02, n=300, target=0.9, ps=(0.001, 0.05))
    assert {"p": 0.02, "n": 300.0, "target": 0.9}.items() <= _params(chart).items()
    rows = chart.to_dict()["datasets"]["tail_fixed"]
    for q, label in [(0.001, "p = 0.1%"), (0.05, "p = 5%")]:
        mine = [r for r in rows if r["curve"] == label]
        np.testing.assert_allclose([r["P"] for r in mine], p_any_slow(q, [r["n"] for r in mine]), rtol=1e-12)


def test_tail_probability_chart_draws_63_4_percent_and_the_coin_flip():
    texts = drawn_texts(tail_probability_chart())
    assert "63.4% at n = 100" in texts
    assert "50% at 69 workers" in texts


@pytest.mark.parametrize(
    "p, n, target",
    [(0.001, 2000, 0.5), (1e-4, 2000, 0.18), (0.01, 4096, 0.99), (0.05, 7, 0.25), (0.5, 1, 0.05), (1e-5, 100_000, 0.95)],
)
def test_tail_probability_chart_formulas_match_the_library(p, n, target):
    texts = drawn_texts(with_params(tail_probability_chart(), p=p, n=n, target=target))
    assert f"{p_any_slow(p, n):.1%} at n = {n:,}" in texts
    crossing = workers_until(p, target)
    want = f"{round(100 * target)}% at {crossing:,} workers"
    assert (want in texts) == (crossing <= 100_000)


def test_tail_probability_chart_rounds_a_fractional_n():
    texts = drawn_texts(with_params(tail_probability_chart(), n=99.6))
    assert "63.4% at n = 100" in texts


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(p=1.5), r"p must be in \[0, 1\], got 1.5"),
        (dict(n=0.5), r"n must be in \[1, 100000\], got 0.5"),
        (dict(target=1.0), r"target must be in \[0, 1\), got 1.0"),
        (dict(ps=(0.1, -0.1)), r"ps must be in \[0, 1\], got -0.1"),
        (dict(n_max=1), "n_max must be a whole number in 2..1000000000, got 1"),
    ],
)
def test_tail_probability_chart_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tail_probability_chart(**kwargs)


def test_tail_budget_chart_draws_the_4096_gpu_budget():
    texts = drawn_texts(tail_budget_chart())
    want = f"n = 4,096: at most 1 slow step in {1 / per_worker_budget(4096, 0.01):,.0f} per worker"
    assert want in texts


@pytest.mark.parametrize("n, target", [(1, 0.3), (100, 0.5), (2000, 0.001), (100_000, 0.1)])
def test_tail_budget_chart_formula_matches_per_worker_budget(n, target):
    texts = drawn_texts(with_params(tail_budget_chart(), n=n, target=target))
    assert f"n = {n:,}: at most 1 slow step in {1 / per_worker_budget(n, target):,.0f} per worker" in texts


def test_tail_budget_chart_bad_input():
    with pytest.raises(ValueError, match=r"target must be in \(0, 1\), got 0.0"):
        tail_budget_chart(target=0.0)


def _median_label(texts):
    (label,) = [t for t in texts if t.startswith("job median")]
    t, level = re.fullmatch(r"job median ([\d.]+) s = worker p([\d.]+)", label).groups()
    return float(t), level


def _percentile_labels(texts):
    found = [re.fullmatch(r"(p\d+) ([\d.]+) s", t) for t in texts]
    return {m.group(1): float(m.group(2)) for m in found if m}


@pytest.mark.parametrize("n, shown", [(1, "50.00"), (69, "99.00"), (100, "99.31"), (4096, "99.983"), (100_000, "99.99931")])
def test_tail_percentile_chart_job_median_level(n, shown):
    chart = with_params(tail_percentile_chart(StepTime(1.0, jitter=0.05)), n=n)
    level = 100 * (1 - per_worker_budget(n, 0.5))
    assert _median_label(drawn_texts(chart))[1] == shown
    assert float(shown) == pytest.approx(level, abs=10 ** -(len(shown.split(".")[1])))


@pytest.mark.parametrize(
    "jitter, pause_prob, pause, n",
    [(0.05, 0.005, 0.5, 100), (0.1, 0.0, 0.0, 10), (0.02, 0.2, 2.0, 4096), (0.2, 0.05, 1.0, 100_000)],
)
def test_tail_percentile_chart_params_compute_the_step_time_model(jitter, pause_prob, pause, n):
    """The chart's own CDF, read through its percentile and job-median labels, matches StepTime's."""
    worker = StepTime(1.0, jitter=jitter, pause_prob=pause_prob, pause=pause)
    start = tail_percentile_chart(StepTime(1.0, jitter=0.05))
    chart = with_params(start, n=n, jitter=jitter, pause_prob=pause_prob, pause=pause)
    step = (11 * jitter + pause) / (_grid_points(chart.to_dict()) - 1)
    texts = drawn_texts(chart)
    marks = _percentile_labels(texts)
    assert set(marks) == {"p50", "p95", "p99"}
    for label, q in [("p50", 0.5), ("p95", 0.95), ("p99", 0.99)]:
        assert marks[label] == pytest.approx(float(worker.ppf(q)), abs=step + 5e-4)
    assert _median_label(texts)[0] == pytest.approx(float(worker.ppf(0.5 ** (1 / n))), abs=step + 5e-4)


def _grid_points(spec):
    (sequence,) = {json.dumps(d["sequence"]) for d in _find(spec, "data") if "sequence" in d}
    sequence = json.loads(sequence)
    assert sequence["start"] == 0 and sequence["as"] == "i"
    return sequence["stop"]


def _find(spec, key):
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k == key:
                yield v
            yield from _find(v, key)
    elif isinstance(spec, list):
        for v in spec:
            yield from _find(v, key)


def test_tail_percentile_chart_params_and_grid():
    spec = tail_percentile_chart(StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5), n=30, points=200).to_dict()
    params = {p["name"]: p.get("value") for p in spec["params"]}
    assert {"n": 30.0, "jitter": 0.05, "pause_prob": 0.01, "pause": 0.5}.items() <= params.items()
    assert _grid_points(spec) == 200
    assert "datasets" not in spec  # the grid is generated in the browser


def test_tail_percentile_chart_marks_the_percentiles_in_both_panels():
    texts = drawn_texts(tail_percentile_chart(StepTime(1.0, jitter=0.05), levels=(0.5, 0.99)))
    labels = [t.split()[0] for t in texts if re.fullmatch(r"p\d+ [\d.]+ s", t)]
    assert sorted(labels) == ["p50", "p50", "p99", "p99"]  # in both panels


def test_tail_percentile_chart_hover_is_shared():
    spec = tail_percentile_chart(StepTime(1.0)).to_dict()
    (hover,) = [p for p in spec["params"] if p["name"] == "t_hover"]
    assert hover["views"] == ["worker_0", "job_1"]
    names = {layer.get("name") for panel in spec["vconcat"] for layer in _walk(panel)}
    assert {"worker_0", "job_1"} <= names


def _walk(spec):
    yield spec
    for child in spec.get("layer", []):
        yield from _walk(child)


@pytest.mark.parametrize(
    "step_time, kwargs, message",
    [
        (stats.norm(), {}, "step_time must be a StepTime"),
        (StepTime(1.0, jitter=0.0), {}, "step_time must be a StepTime with jitter > 0"),
        (StepTime(1.0), dict(levels=(0.5, 1.0)), r"levels must be in \(0, 1\), got 1.0"),
        (StepTime(1.0), dict(points=10), "points must be a whole number in 50..2000, got 10"),
        (StepTime(1.0), dict(n=0), r"n must be >= 1, got 0"),
    ],
)
def test_tail_percentile_chart_bad_input(step_time, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tail_percentile_chart(step_time, **kwargs)


@given(st.integers(1, 10**9), st.integers(2, 5000))
def test_log_grid_is_increasing_whole_numbers_from_1_to_n_max(n_max, points):
    grid = log_grid(n_max, points)
    assert grid[0] == 1 and grid[-1] == n_max
    assert all(b > a for a, b in zip(grid, grid[1:]))
    assert len(grid) <= points
