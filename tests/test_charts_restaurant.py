"""Restaurant charts: valid specs, and the in-browser formula agrees with the model."""

import re

import numpy as np
import pytest
from _vega import drawn_texts, with_params
from scipy import stats

from straggle_edu.charts.restaurant import barrier_chart, barrier_datasets, restaurant_chart, restaurant_datasets
from straggle_edu.models.restaurant import dish_noise, dish_times, run_with_barrier, serve_table, worker_times


def _labels(chart):
    texts = drawn_texts(chart)
    avg = [float(m.group(1)) for t in texts if (m := re.fullmatch(r"average ([\d.]+) min", t))]
    served = [float(m.group(1)) for t in texts if (m := re.fullmatch(r"table served at ([\d.]+) min", t))]
    return avg, served


def test_restaurant_chart_spec_is_valid_and_has_the_params():
    spec = restaurant_chart().to_dict()
    params = {p["name"]: p.get("value") for p in spec["params"]}
    assert params["dishes"] == 8 and params["dish_time"] == 10.0 and params["slow_time"] == 14.0
    assert params["random_times"] is False and params["spread"] == 0.2
    assert "dish_hover" in params


def test_restaurant_chart_draws_the_article_example():
    assert _labels(restaurant_chart()) == ([10.5], [14.0])


@pytest.mark.parametrize(
    "values",
    [
        dict(dishes=1, dish_time=10.0, slow_time=14.0, random_times=False, spread=0.2),
        dict(dishes=16, dish_time=7.5, slow_time=30.0, random_times=False, spread=0.2),
        dict(dishes=12, dish_time=10.0, slow_time=14.0, random_times=True, spread=0.3),
        dict(dishes=5, dish_time=20.0, slow_time=5.0, random_times=True, spread=1.0),
    ],
)
def test_restaurant_chart_params_compute_what_the_model_computes(values):
    noise = dish_noise(16, rng=11)
    chart = with_params(restaurant_chart(noise), **values)
    spread = values["spread"] if values["random_times"] else 0.0
    table = serve_table(dish_times(values["dishes"], values["dish_time"], values["slow_time"], spread, noise))
    avg, served = _labels(chart)
    assert avg == [round(table.average, 1)]
    assert served == [round(table.served_at, 1)]


def test_restaurant_chart_data_carries_the_noise():
    noise = dish_noise(16, rng=4)
    spec = restaurant_chart(noise).to_dict()
    np.testing.assert_allclose([v["z"] for v in spec["datasets"]["restaurant_dishes"]], noise)


def test_restaurant_chart_swapping_datasets_equals_building_again():
    a, b = dish_noise(16, rng=1), dish_noise(16, rng=2)
    swapped = restaurant_chart(a).copy(deep=False)
    swapped.datasets = restaurant_datasets(b)
    assert swapped.to_dict() == restaurant_chart(b).to_dict()
    with pytest.raises(ValueError, match="noise must be finite standard-normal draws"):
        restaurant_datasets([])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_dishes=65), "max_dishes must be a whole number in 1..64, got 65"),
        (dict(dishes=17), "dishes must be a whole number in 1..16, got 17"),
        (dict(noise=[0.0] * 3), "noise must be 16 finite draws"),
        (dict(noise=[np.nan] * 16), "noise must be 16 finite draws"),
    ],
)
def test_restaurant_chart_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        restaurant_chart(**kwargs)


def _barrier_rows(spec):
    return spec["datasets"]["barrier_timeline"]


def test_barrier_chart_rows_match_the_run():
    run = run_with_barrier(worker_times(stats.norm(1.0, 0.05), n=6, steps=4, rng=2))
    spec = barrier_chart(run).to_dict()
    rows = _barrier_rows(spec)
    assert len(rows) == 2 * 6 * 4
    waits = [r for r in rows if r["phase"] == "waiting"]
    np.testing.assert_allclose(sorted({r["end"] for r in waits}), run.ends)
    slowest = [(r["step"] - 1, r["worker"]) for r in rows if r["phase"] == "slowest"]
    assert slowest == list(enumerate(run.slowest.tolist()))
    total = sum(r["end"] - r["start"] for r in waits)
    assert total == pytest.approx(run.waiting.sum())


def test_barrier_chart_hover_links_both_panels():
    run = run_with_barrier([[1.0, 1.2], [1.1, 1.0]])
    spec = barrier_chart(run).to_dict()
    (hover,) = [p for p in spec["params"] if p["name"] == "worker_hover"]
    names = {spec["hconcat"][0]["layer"][0]["name"], spec["hconcat"][1]["name"]}
    assert set(hover["views"]) == names == {"timeline_0", "per_worker"}
    texts = drawn_texts(barrier_chart(run))
    assert "average worker's pace" in texts and "barrier" in texts


def test_barrier_chart_swapping_datasets_equals_building_again():
    dist = stats.norm(1.0, 0.05)
    first = run_with_barrier(worker_times(dist, n=4, steps=3, rng=1))
    second = run_with_barrier(worker_times(dist, n=9, steps=5, rng=2))
    swapped = barrier_chart(first).copy(deep=False)
    swapped.datasets = barrier_datasets(second)
    assert swapped.to_dict() == barrier_chart(second).to_dict()


def test_barrier_chart_bad_input():
    with pytest.raises(ValueError, match="run must be a BarrierRun from run_with_barrier"):
        barrier_chart([[1.0, 2.0]])
    big = run_with_barrier(np.ones((50, 41)))
    with pytest.raises(ValueError, match="run must be at most 2,000 worker-steps, got '50 steps x 41 workers'"):
        barrier_chart(big)
