"""Restaurant explorers: controls drive the chart, and no control range errors."""

import numpy as np
import pytest
from ipywidgets import Button

from straggle_edu.explorers.restaurant import barrier_explorer, restaurant_explorer
from straggle_edu.models.restaurant import dish_times, serve_table


def _sweep(ex):
    """Set every slider to its minimum and maximum; nothing may raise."""
    for control in ex.controls.values():
        if isinstance(control, Button):
            continue
        if hasattr(control, "options"):
            for _, value in control.options:
                control.value = value
        else:
            control.value = control.max
            control.value = control.min


def test_restaurant_explorer_controls_drive_the_chart_params():
    ex = restaurant_explorer()
    params = ex.charts["table"].params
    for control, param, value in [("dishes", "dishes", 12), ("dish", "dish_time", 7.5), ("slow", "slow_time", 25.0),
                                  ("times", "random_times", True), ("spread", "spread", 0.5)]:
        ex.controls[control].value = value
        assert getattr(params, param) == value


def test_restaurant_explorer_readout_is_the_model():
    ex = restaurant_explorer()
    assert ex.readout.value == "average <b>10.5</b> min · table served at <b>14.0</b> min · idle <b>25%</b>"
    ex.controls["times"].value = True
    ex.controls["spread"].value = 0.4
    table = serve_table(dish_times(8, 10.0, 14.0, 0.4, ex.noise))
    assert ex.table().served_at == table.served_at
    assert f"<b>{table.served_at:.1f}</b>" in ex.readout.value


def test_restaurant_explorer_new_draw_changes_the_dishes_and_keeps_the_links():
    ex = restaurant_explorer(seed=3)
    before = ex.noise.copy()
    ex.controls["redraw"].click()
    assert not np.array_equal(before, ex.noise)
    assert ex.controls["times"].value is True  # a new draw shows random times
    values = ex.charts["table"].spec["datasets"]["restaurant_dishes"]
    np.testing.assert_allclose([v["z"] for v in values], ex.noise)
    ex.controls["dishes"].value = 3  # the links reach the new chart's params
    assert ex.charts["table"].params.dishes == 3
    assert ex.charts["table"].params.slow_time == ex.controls["slow"].value
    spec = {p["name"]: p.get("value") for p in ex.charts["table"].spec["params"]}
    assert spec["dishes"] == 8 and spec["random_times"] is True  # the re-embedded spec starts where the sliders are


def test_restaurant_explorer_same_seed_same_draws():
    a, b = restaurant_explorer(seed=9), restaurant_explorer(seed=9)
    a.controls["redraw"].click()
    b.controls["redraw"].click()
    np.testing.assert_array_equal(a.noise, b.noise)


def test_restaurant_explorer_every_control_range_is_safe():
    ex = restaurant_explorer()
    _sweep(ex)
    ex.controls["redraw"].click()
    assert "table served at" in ex.readout.value


def test_restaurant_explorer_links_are_recorded_for_the_static_site():
    ex = restaurant_explorer()
    assert {(c, p) for c, _, p, t in ex.links} == {
        ("dishes", "dishes"), ("dish", "dish_time"), ("slow", "slow_time"), ("times", "random_times"), ("spread", "spread")}
    assert all(t is None for *_, t in ex.links)


@pytest.mark.parametrize(
    "make, kwargs, message",
    [
        (restaurant_explorer, dict(dishes=20), "dishes must be a whole number in 1..16, got 20"),
        (restaurant_explorer, dict(dish=100), r"dish must be in \[1, 60\], got 100"),
        (restaurant_explorer, dict(spread=-0.1), r"spread must be in \[0, 1\], got -0.1"),
        (barrier_explorer, dict(n=33), "n must be a whole number in 1..32, got 33"),
        (barrier_explorer, dict(pause_prob=0.5), r"pause_prob must be in \[0, 0.2\], got 0.5"),
    ],
)
def test_restaurant_explorers_bad_input(make, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


def test_barrier_explorer_workers_and_steps_change_the_chart():
    ex = barrier_explorer(n=4, steps=3)
    ex.controls["n"].value = 10
    ex.controls["steps"].value = 5
    rows = ex.charts["timeline"].spec["datasets"]["barrier_timeline"]
    assert len(rows) == 2 * 10 * 5
    assert ex.run().times.shape == (5, 10)


def test_barrier_explorer_pauses_slow_the_job_and_the_readout_says_so():
    ex = barrier_explorer(n=16, steps=10, jitter=0.02, pause_prob=0.0, pause=1.0)
    calm = ex.run()
    ex.controls["pause_prob"].value = 0.1
    stormy = ex.run()
    assert stormy.job_time > calm.job_time + 1.0
    assert f"<b>{stormy.job_time:.2f}</b>" in ex.readout.value


def test_barrier_explorer_is_deterministic_per_seed():
    a, b = barrier_explorer(seed=5), barrier_explorer(seed=5)
    np.testing.assert_array_equal(a.run().times, b.run().times)
    a.controls["seed"].value = 6
    assert not np.array_equal(a.run().times, b.run().times)


def test_barrier_explorer_every_control_range_is_safe():
    ex = barrier_explorer()
    _sweep(ex)
    assert "job" in ex.readout.value
