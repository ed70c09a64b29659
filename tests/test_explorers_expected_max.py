"""Expected-maximum explorers: set a control's value, check what changed."""

import math
import re
import warnings

import numpy as np
import pytest
import ipywidgets as widgets

from straggle_edu.charts._data import rows_of
from straggle_edu.explorers.expected_max import (
    expected_max_explorer,
    max_histogram_explorer,
    slow_card_explorer,
    speedup_explorer,
    step_draw_explorer,
)
from straggle_edu.math.order_stats import expected_max
from straggle_edu.models.cluster import Cluster, expected_step_time, scaling_efficiency
from straggle_edu.models.max_growth import max_growth, step_time_dist
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.waste import slow_card


def _extremes(control):
    """The values at both ends of a control's range (every option of a dropdown; good, bad and no text)."""
    if isinstance(control, (widgets.Text, widgets.Textarea)):
        return ["1.0 1.2 0.9", "oops", ""]
    if isinstance(control, (widgets.SelectionSlider, widgets.Dropdown)):
        values = [v for _, v in control.options] if isinstance(control.options[0], tuple) else list(control.options)
        return values if isinstance(control, widgets.Dropdown) else [values[0], values[-1]]
    return [control.min, control.max]


def _sweep(ex):
    """Every control to both ends: nothing may raise or warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, control in ex.controls.items():
            start = control.value
            for value in _extremes(control):
                control.value = value
            control.value = start


def _numbers(html):
    return [float(x.replace(",", "")) for x in re.findall(r"<b>([\d.,]+)", html)]


def _growth_rows(jchart):
    spec = jchart.spec  # what the browser draws (a redraw replaces the spec)
    return rows_of(spec, spec["data"])


def test_expected_max_explorer_n_moves_the_param_only():
    ex = expected_max_explorer(size=200)
    before = ex.growth
    ex.controls["n"].value = 64
    assert ex.charts["growth"].params.n_mark == 64
    assert ex.growth is before  # no recomputation
    exact = expected_max(step_time_dist("normal", 1.0, 0.1), 64)
    assert f"exact <b>{exact:.4f} s</b>" in ex.readout.value
    assert f"<b>{(exact - 1) / 0.1:.2f} σ</b>" in ex.readout.value


def test_expected_max_explorer_shape_redraws_and_keeps_the_link():
    ex = expected_max_explorer(size=200)
    ex.controls["shape"].value = "pareto"
    ref = max_growth(step_time_dist("pareto", 1.0, 0.1), ex.growth.n, size=200, rng=0)
    np.testing.assert_allclose(ex.growth.exact, ref.exact)
    np.testing.assert_array_equal(ex.growth.monte_carlo, ref.monte_carlo)
    rows = _growth_rows(ex.charts["growth"])
    assert max(r["value"] for r in rows if r["method"] == "exact E[max]") == pytest.approx(ref.exact[-1])
    ex.controls["n"].value = 2
    assert ex.charts["growth"].params.n_mark == 2  # the link follows the new chart


def test_expected_max_explorer_seed_and_size_change_the_monte_carlo():
    ex = expected_max_explorer(size=200)
    first = ex.growth.monte_carlo.copy()
    ex.controls["seed"].value = 1
    assert not np.array_equal(first, ex.growth.monte_carlo)
    ex.controls["size"].value = 1000
    assert ex.growth.size == 1000
    np.testing.assert_array_equal(ex.growth.exact, max_growth(step_time_dist("normal", 1.0, 0.1), ex.growth.n, size=2, rng=0).exact)


def test_expected_max_explorer_every_control_range_is_safe():
    _sweep(expected_max_explorer(size=100))


def test_expected_max_explorer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n must be one of 1, 2, ..., 16384, got 100"):
        expected_max_explorer(n=100)
    with pytest.raises(ValueError, match=r"jitter must be in \[0.01, 0.5\], got 0.9"):
        expected_max_explorer(jitter=0.9)


def test_max_histogram_explorer_n_moves_the_param_and_readout():
    ex = max_histogram_explorer(size=2000)
    ex.controls["n"].value = 4096
    assert ex.charts["pair"].params.n == 4096
    i = list(ex.hist.n).index(4096)
    assert f"mean <b>{ex.hist.mean[i]:.3f} s</b>" in ex.readout.value
    assert f"(exact E[max] {expected_max(step_time_dist('normal', 1.0, 0.1), 4096):.3f} s)" in ex.readout.value


def test_max_histogram_explorer_jitter_redraws_and_keeps_the_link():
    ex = max_histogram_explorer(size=2000)
    old = ex.hist
    ex.controls["jitter"].value = 0.2
    assert ex.hist is not old and ex.hist.edges[-1] > old.edges[-1]
    spec = ex.charts["pair"].spec  # what the browser draws (the redraw replaces the spec)
    rows = rows_of(spec, spec["data"])
    assert len(rows) == 13 * 60 and max(r["end"] for r in rows) == ex.hist.edges[-1]
    ex.controls["n"].value = 2
    assert ex.charts["pair"].params.n == 2


def test_max_histogram_explorer_every_control_range_is_safe():
    _sweep(max_histogram_explorer(size=1000))


def test_slow_card_explorer_readout_matches_the_model():
    ex = slow_card_explorer(n=4096, jitter=0.01, slow_factor=1.05, days=10)
    card = slow_card(4096, StepTime(1.0, jitter=0.01), 1.05)
    v = ex.readout.value
    assert f"job slowdown <b>{card.job_slowdown:.2%}</b>" in v
    assert f"<b>{card.gpu_hours_wasted(10):,.0f} GPU-hours</b>" in v
    assert f"<b>{card.amplification:,.1f}×</b>" in v


def test_slow_card_explorer_jitter_zero_costs_the_whole_factor():
    ex = slow_card_explorer(jitter=0.02)
    ex.controls["jitter"].value = 0.0
    assert math.isclose(ex.card().job_slowdown, 0.05, rel_tol=1e-9)
    spec = ex.charts["slowdown"].spec  # rows are swapped into the spec in place
    rows = rows_of(spec, spec["layer"][0]["data"])
    assert all(math.isclose(r["job_slowdown"], 0.05, rel_tol=1e-9) for r in rows) and {r["jitter"] for r in rows} == {0.0}
    ex.controls["n"].value = 8
    assert ex.charts["slowdown"].params.n_mark == 8
    ex.controls["days"].value = 30
    assert f"{7 * 30 * 24 * 0.05 / 1.05:,.0f} GPU-hours" in ex.readout.value


def test_slow_card_explorer_swapped_spec_keeps_the_current_params():
    # The browser re-reads every param from a new spec; a stale value would snap the marker back.
    ex = slow_card_explorer(n=4096)
    ex.controls["n"].value = 64
    ex.controls["slow_factor"].value = 1.2
    spec = ex.charts["slowdown"].spec
    assert [p["value"] for p in spec["params"] if p["name"] == "n_mark"] == [64]
    assert rows_of(spec, spec["layer"][1]["data"]) == [{"y": pytest.approx(0.2)}]
    assert len(spec["datasets"]) == 2  # old rows are dropped


def test_slow_card_explorer_every_control_range_is_safe():
    _sweep(slow_card_explorer())


def test_speedup_explorer_sliders_drive_params_and_readout():
    ex = speedup_explorer()
    ex.controls["jitter"].value = 0.1
    ex.controls["n"].value = 4096
    assert ex.charts["speedup"].params.jitter == 0.1 and ex.charts["speedup"].params.n_mark == 4096
    t = StepTime(1.0, jitter=0.1)
    eff = scaling_efficiency(Cluster.uniform(4096, t))
    ratio = expected_step_time(Cluster.uniform(8192, t)) / (2 * expected_step_time(Cluster.uniform(4096, t)))
    assert f"speed-up <b>{4096 * eff:,.0f}</b>" in ex.readout.value
    assert f"time × <b>{ratio:.3f}</b>" in ex.readout.value


def test_speedup_explorer_every_control_range_is_safe():
    ex = speedup_explorer()
    _sweep(ex)
    ex.controls["jitter"].value = 0.0
    assert "speed-up <b>1,024</b>, not 1,024 (efficiency 100.0%)" in ex.readout.value


def test_expected_max_explorer_uses_pasted_step_times_then_the_model_again():
    ex = expected_max_explorer(size=200)
    model_exact = ex.growth.exact.copy()
    ex.controls["text"].value = "1.0 1.0 1.2 1.6"
    # Resampling 4 values: E[max of 2] = 1.0/16 + 1.2 * 5/16 + 1.6 * 7/16 by order statistics.
    assert ex.growth.exact[1] == pytest.approx((1.0 * 4 + 1.2 * 5 + 1.6 * 7) / 16)
    assert ex.growth.exact[-1] == pytest.approx(1.6) and "your 4 step times" in ex.readout.value
    ex.controls["text"].value = ""
    assert ex.values is None and np.allclose(ex.growth.exact, model_exact)


def test_expected_max_explorer_reads_a_rank_csv(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("step,rank,duration_s\n0,0,1.0\n0,1,1.1\n1,0,0.9\n1,1,1.2\n")
    ex = expected_max_explorer(size=200)
    ex.controls["csv"].value = str(path)
    assert sorted(ex.values.tolist()) == [0.9, 1.0, 1.1, 1.2] and ex.growth.exact[-1] == pytest.approx(1.2)


def test_expected_max_explorer_shows_bad_input_in_the_readout(tmp_path):
    ex = expected_max_explorer(size=200)
    before = ex.growth
    ex.controls["text"].value = "1.0, 1.1s"
    assert "item 2" in ex.readout.value and ex.growth is before
    ex.controls["text"].value = ""  # the model again
    before = ex.growth
    ex.controls["csv"].value = str(tmp_path / "missing.csv")
    assert "no such file" in ex.readout.value and ex.growth is before


def test_step_draw_explorer_draws_one_step_per_press():
    ex = step_draw_explorer(n=64, steps=40, delay=0)
    first = ex.draws.slowest[0]
    assert ex.controls["k"].value == 1 and f"step 1: the slowest of 64 workers took <b>{first:.3f} s</b>" in ex.readout.value
    ex.controls["draw"].click()
    ex.controls["draw"].click()
    assert ex.controls["k"].value == 3 and ex.charts["draws"].params.k == 3
    maxima = ex.draws.slowest[:3]
    assert f"step 3: the slowest of 64 workers took <b>{maxima[-1]:.3f} s</b>" in ex.readout.value
    assert f"the slowest of the 3 steps so far: mean <b>{maxima.mean():.3f} s</b>" in ex.readout.value


def test_step_draw_explorer_plays_many_steps_and_stops_at_the_last():
    ex = step_draw_explorer(n=8, steps=30, play=20, delay=0)
    ex.controls["play"].click()
    assert ex.controls["k"].value == 21 and ex.charts["draws"].params.k == 21
    ex.controls["play"].click()
    assert ex.controls["k"].value == 30
    assert ex.controls["draw"].disabled and ex.controls["play"].disabled
    ex.controls["k"].value = 5  # the slider replays the draws, and the buttons draw again
    assert not ex.controls["draw"].disabled and "step 5:" in ex.readout.value


def test_step_draw_explorer_draws_a_new_sequence_for_another_n():
    ex = step_draw_explorer(n=8, steps=20, delay=0)
    ex.controls["k"].value = 10
    before = ex.charts["draws"].spec
    ex.controls["n"].value = 4096
    assert ex.draws.n == 4096 and ex.charts["draws"].spec != before
    assert ex.controls["k"].value == 10 and ex.charts["draws"].params.k == 10
    assert "the slowest of 4,096 workers" in ex.readout.value
    # the slowest of 4096 sits far right of the slowest of 8
    assert ex.draws.slowest.mean() > step_draw_explorer(n=8, steps=20).draws.slowest.mean() + 0.15


def test_step_draw_explorer_is_seeded_and_checks_its_arguments():
    a, b = step_draw_explorer(n=64, steps=20), step_draw_explorer(n=64, steps=20)
    assert a.draws.slowest.tolist() == b.draws.slowest.tolist()
    with pytest.raises(ValueError, match=r"n must be one of 8, 64, \.\.\., 4096, got 100"):
        step_draw_explorer(n=100)
    with pytest.raises(ValueError, match=r"steps must be a whole number in 10..1000, got 5"):
        step_draw_explorer(steps=5)
    with pytest.raises(ValueError, match=r"delay must be in \[0, 1\], got 2"):
        step_draw_explorer(delay=2)
