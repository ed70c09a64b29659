"""Expected-maximum charts: valid specs, linked views, and in-browser numbers equal to the model's."""


import numpy as np
import pytest
from _vega import drawn_texts, with_params
from scipy import stats

from straggle_edu.charts._data import rows_of
from straggle_edu.charts.expected_max import (
    METHOD_LABELS,
    expected_max_chart,
    max_histograms_chart,
    max_vs_one_chart,
    slow_card_chart,
    speedup_chart,
    step_draws_chart,
)
from straggle_edu.models.cluster import Cluster, expected_step_time, scaling_efficiency
from straggle_edu.models.max_growth import STEP_TIME_SHAPES, max_growth, max_histograms, normal_max_sigmas, step_time_dist
from straggle_edu.models.step_draws import draw_steps
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.waste import slow_card_curves


@pytest.fixture(scope="module")
def growths():
    return {s: max_growth(step_time_dist(s, 1.0, 0.1), [1, 16, 4096], size=200, rng=0) for s in STEP_TIME_SHAPES}


@pytest.fixture(scope="module")
def hist():
    return max_histograms(stats.norm(1.0, 0.1), [1, 64, 4096], size=2000, bins=20, rng=0)


def test_expected_max_chart_one_panel_per_shape(growths):
    spec = expected_max_chart(growths).to_dict()
    assert spec["facet"]["field"] == "shape" and spec["columns"] == 2
    assert spec["resolve"]["scale"]["y"] == "independent"
    rows = rows_of(spec, spec["data"])
    assert len(rows) == 4 * 3 * 4 and {r["method"] for r in rows} == set(METHOD_LABELS.values())
    normal_4096 = [r for r in rows if r["shape"] == "normal" and r["n"] == 4096 and r["method"] == METHOD_LABELS["exact"]]
    assert round(normal_4096[0]["value"], 2) == 3.63


def test_expected_max_chart_single_with_n_mark(growths):
    chart = expected_max_chart(growths["normal"], in_sigmas=False, n_mark=100)
    spec = chart.to_dict()
    assert [p for p in spec["params"] if p["name"] == "n_mark"][0]["value"] == 100
    assert spec["layer"][0]["encoding"]["y"]["title"] == "E[step] (s)"
    mc = [r for r in rows_of(spec, spec["data"]) if r["method"] == METHOD_LABELS["monte_carlo"]]
    assert all(r["low"] <= r["value"] <= r["high"] for r in mc)
    assert drawn_texts(chart)  # renders


def test_max_histograms_chart_hover_links_every_row(hist):
    spec = max_histograms_chart(hist).to_dict()
    assert spec["facet"]["row"]["field"] == "n"
    sel = spec["params"][0]
    assert sel["select"]["fields"] == ["bin"] and sel["select"]["on"] == "pointerover"
    assert sel["views"] == [spec["spec"]["name"]]  # the faceted view listens, so every row lights up
    assert len(rows_of(spec, spec["data"])) == 3 * 20
    assert drawn_texts(max_histograms_chart(hist))


def test_max_vs_one_chart_links_both_panels_and_reads_out_n(hist):
    chart = max_vs_one_chart(hist, n=64)
    spec = chart.to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["n"]["value"] == 64
    assert params["bin_pair"]["views"] == ["maxpair_0", "maxpair_1"]  # one selection, both panels
    names = [spec["vconcat"][0]["name"], spec["vconcat"][1]["layer"][0]["name"]]
    assert names == ["maxpair_0", "maxpair_1"]
    for n, i in [(64, 1), (4096, 2)]:
        label = [t for t in drawn_texts(with_params(chart, n=n)) if t.startswith("slowest of") and ":" in t]
        assert label == [f"slowest of {n}: mean {hist.mean[i]:.3f}, σ {hist.std[i]:.3f}"]


@pytest.mark.parametrize("jitter, n", [(0.05, 1024), (0.1, 4096), (0.0, 8), (0.2, 1)])
def test_speedup_chart_readout_matches_the_cluster_model(jitter, n):
    ns = 2 ** np.arange(13)
    chart = with_params(speedup_chart(ns, normal_max_sigmas(np.r_[ns, 2 * ns])), jitter=jitter, n_mark=n)
    t = StepTime(1.0, jitter=jitter)
    ratio = expected_step_time(Cluster.uniform(2 * n, t)) / (2 * expected_step_time(Cluster.uniform(n, t)))
    assert f"{n} → {2 * n} workers: time × {ratio:.3f} (ideal × 0.500)" in drawn_texts(chart)


def test_speedup_chart_efficiency_formula_is_the_model_s():
    # The chart's calculate transform: efficiency = 1 / (1 + jitter * e_n).
    ns = np.array([1, 64, 4096])
    spec = speedup_chart(ns, normal_max_sigmas(np.r_[ns, 2 * ns])).to_dict()
    calc = {t["as"]: t["calculate"] for layer in spec["layer"] for t in layer.get("transform", []) if "calculate" in t}
    assert calc["efficiency"] == "1 / (1 + jitter * datum.e)"
    e = {r["n"]: r["e"] for r in spec["layer"][1]["data"]["values"]}
    for n in ns:
        assert np.isclose(1 / (1 + 0.05 * e[n]), scaling_efficiency(Cluster.uniform(int(n), StepTime(1.0, jitter=0.05))), rtol=1e-12)


def test_slow_card_chart_spec():
    rows = slow_card_curves([2, 64, 4096], [0.0, 0.01])
    spec = slow_card_chart(rows, slow_factor=1.05, n_mark=64).to_dict()
    assert spec["params"] == [{"name": "n_mark", "value": 64}]
    assert spec["layer"][1]["data"]["values"] == [{"y": pytest.approx(0.05)}]
    assert len(rows_of(spec, spec["layer"][0]["data"])) == 6
    assert "params" not in slow_card_chart(rows).to_dict()


def test_step_draws_chart_draws_step_k_and_the_maxima_so_far():
    draws = draw_steps(stats.norm(1.0, 0.1), n=64, steps=30, bins=20, rng=0)
    chart = step_draws_chart(draws, k=3)
    texts = drawn_texts(chart)
    assert f"step 3: the slowest of 64 took {draws.slowest[2]:.3f} s" in texts
    assert "the slowest of each of 3 steps" in texts and "one worker's mean" in texts
    later = drawn_texts(with_params(chart, k=30))
    assert f"step 30: the slowest of 64 took {draws.slowest[29]:.3f} s" in later
    assert "the slowest of each of 30 steps" in later
    assert "the slowest of step 1" in drawn_texts(with_params(chart, k=1))


def test_step_draws_chart_carries_every_step_for_the_browser():
    draws = draw_steps(stats.norm(1.0, 0.1), n=8, steps=12, bins=10, rng=1)
    spec = step_draws_chart(draws).to_dict()
    upper, lower = spec["vconcat"]
    steps = rows_of(spec, upper["layer"][0]["data"])
    maxima = rows_of(spec, upper["layer"][1]["data"])
    assert [r["c"] for r in steps] == draws.counts.tolist()
    assert [r["t"] for r in maxima] == draws.slowest.tolist()
    # the red bin is the slowest worker's bin (1-based, as the browser counts it)
    assert [r["m"] for r in steps] == (draws.bin_of(draws.slowest) + 1).tolist()
