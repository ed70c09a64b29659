"""models.max_growth: four step-time shapes, E[max] four ways, histograms of the max."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from straggle_edu.models.max_growth import (
    STEP_TIME_SHAPES,
    log_grid,
    max_growth,
    max_histograms,
    normal_max_sigmas,
    step_time_dist,
)


def harmonic(n):
    return sum(1.0 / k for k in range(1, n + 1))


@pytest.mark.parametrize("shape", STEP_TIME_SHAPES)
@given(mean=st.floats(0.01, 100.0), cv=st.floats(0.001, 2.0))
def test_step_time_dist_has_the_mean_and_std_asked_for(shape, mean, cv):
    d = step_time_dist(shape, mean, cv * mean)
    assert math.isclose(d.mean(), mean, rel_tol=1e-9)
    assert math.isclose(d.std(), cv * mean, rel_tol=1e-9)


def test_step_time_dist_pareto_tail_index_sets_the_tail():
    d = step_time_dist("pareto", 1.0, 0.1, tail_index=4.0)
    assert math.isclose(d.std(), 0.1, rel_tol=1e-12)
    # Survival falls like t**-4 far out.
    t = np.array([1e3, 1e4])
    assert math.isclose(np.log(d.sf(t[1]) / d.sf(t[0])) / np.log(10), -4.0, abs_tol=1e-2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(shape="gamma"), "shape must be one of"),
        (dict(shape="normal", std=0.0), "std must be > 0, got 0.0"),
        (dict(shape="normal", mean=-1.0), "mean must be > 0, got -1.0"),
        (dict(shape="pareto", tail_index=2.0), "tail_index must be > 2, got 2.0"),
        (dict(shape="normal", mean=float("nan")), "mean must be > 0 (not NaN)"),
    ],
)
def test_step_time_dist_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        step_time_dist(**kwargs)


def test_max_growth_normal_matches_published_values():
    g = max_growth(stats.norm(), [1, 2, 3, 100], size=100, rng=0)
    # 0, 1/sqrt(pi), 3/(2 sqrt(pi)), Harter (1961): 2.50759
    np.testing.assert_allclose(g.exact, [0.0, 1 / math.sqrt(math.pi), 1.5 / math.sqrt(math.pi), 2.50759], atol=5e-6)


def test_max_growth_shifted_exponential_is_harmonic_numbers():
    d = step_time_dist("exponential", 1.0, 0.1)
    ns = [1, 2, 10, 64, 4096]
    g = max_growth(d, ns, size=100, rng=0)
    np.testing.assert_allclose(g.exact, [0.9 + 0.1 * harmonic(n) for n in ns], rtol=1e-12)
    # The Gumbel approximation of an exponential is ln n + gamma: off by 1/(2n) and less.
    np.testing.assert_allclose(g.gumbel[1:], [0.9 + 0.1 * (math.log(n) + np.euler_gamma) for n in ns[1:]], rtol=1e-12)


def test_max_growth_pareto_matches_the_beta_function_closed_form():
    # Lomax(c, scale lam): E[max of n] = lam * (n B(n, 1 - 1/c) - 1) above its lower end.
    d = step_time_dist("pareto", 1.0, 0.1)
    c, lam, loc = 3.0, 2 * 0.1 / math.sqrt(3), 1.0 - 0.1 / math.sqrt(3)
    ns = [1, 5, 100, 4096]
    want = [loc + lam * (n * special.beta(n, 1 - 1 / c) - 1) for n in ns]
    np.testing.assert_allclose(max_growth(d, ns, size=100, rng=0).exact, want, rtol=1e-9)


def test_max_growth_sqrt_2_ln_n_is_the_normal_leading_term():
    g = max_growth(stats.norm(10, 0.5), [1, 100, 4096], size=100, rng=0)
    np.testing.assert_allclose(g.sqrt_2_ln_n, 10 + 0.5 * np.sqrt(2 * np.log([1, 100, 4096])))
    assert g.mean == 10 and g.std == 0.5


@pytest.mark.parametrize("shape", STEP_TIME_SHAPES)
def test_max_growth_monte_carlo_agrees_with_exact(shape):
    # 4000 draws per n, seeded: each mean within 4 standard errors (a 1-in-15,000 miss per point).
    g = max_growth(step_time_dist(shape, 1.0, 0.1), [1, 8, 128, 4096], size=4000, rng=11)
    assert np.all(np.abs(g.monte_carlo - g.exact) < 4 * g.monte_carlo_se)


def test_max_growth_is_reproducible_with_a_seed():
    a = max_growth(stats.norm(), [4, 40], size=50, rng=3)
    b = max_growth(stats.norm(), [4, 40], size=50, rng=3)
    np.testing.assert_array_equal(a.monte_carlo, b.monte_carlo)


def test_max_growth_records_in_sigmas_and_seconds():
    g = max_growth(stats.norm(1.0, 0.1), [1, 100], size=100, rng=0)
    rows = g.records("normal")
    assert len(rows) == 8 and {r["method"] for r in rows} == set(g.METHODS)
    exact100 = [r for r in rows if r["method"] == "exact" and r["n"] == 100][0]["value"]
    assert math.isclose(exact100, 2.50759, abs_tol=1e-5)
    mc = [r for r in rows if r["method"] == "monte_carlo"]
    assert all(r["low"] < r["value"] < r["high"] for r in mc)
    secs = [r for r in g.records(in_sigmas=False) if r["method"] == "exact" and r["n"] == 100][0]["value"]
    assert math.isclose(secs, 1.250759, abs_tol=1e-6)


def test_max_growth_rejects_bad_input():
    with pytest.raises(ValueError, match="size must be a whole number >= 2, got 1"):
        max_growth(stats.norm(), [2], size=1)
    with pytest.raises(ValueError, match="ns must be a whole number >= 1, got 0"):
        max_growth(stats.norm(), [0, 2])
    with pytest.raises(ValueError, match="needs about .* MiB"):
        max_growth(stats.norm(), [2], size=10**10)


@given(st.lists(st.integers(1, 10**6), min_size=2, max_size=6, unique=True))
def test_normal_max_sigmas_grows_with_n(ns):
    ns = sorted(ns)
    assert np.all(np.diff(normal_max_sigmas(ns)) > 0)


def test_normal_max_sigmas_values():
    np.testing.assert_allclose(normal_max_sigmas([2, 3]), [1 / math.sqrt(math.pi), 1.5 / math.sqrt(math.pi)], rtol=1e-12)


def test_log_grid_has_both_ends_and_is_increasing():
    g = log_grid(4096, 25)
    assert g[0] == 1 and g[-1] == 4096 and np.all(np.diff(g) > 0)
    with pytest.raises(ValueError, match="points must be a whole number in 2..10000, got 1"):
        log_grid(10, 1)


def test_max_histograms_slide_right_and_narrow_for_normal():
    h = max_histograms(stats.norm(), [1, 16, 256, 4096], size=20_000, bins=60, rng=5)
    assert np.all(np.diff(h.mean) > 0) and np.all(np.diff(h.std) < 0)
    np.testing.assert_allclose(h.shares.sum(axis=1), h.shown)
    assert np.all(h.shown > 0.995)
    # The sample means agree with the exact E[max] (4 standard errors).
    exact = normal_max_sigmas([1, 16, 256, 4096])
    assert np.all(np.abs(h.mean - exact) < 4 * h.std / math.sqrt(20_000))


def test_max_histograms_exponential_spread_stays_put():
    # The max of n Exp(1) has variance sum 1/k^2 -> pi^2/6: the histogram slides but does not narrow.
    h = max_histograms(stats.expon(), [256, 4096], size=40_000, bins=40, rng=2)
    np.testing.assert_allclose(h.std, math.pi / math.sqrt(6), rtol=0.02)


def test_max_histograms_records_carry_the_one_worker_share():
    h = max_histograms(stats.norm(), [1, 64], size=1000, bins=10, rng=0)
    rows = h.records()
    assert len(rows) == 20
    for r in rows:
        assert r["share_one"] == h.shares[0, r["bin"]]
        assert r["end"] > r["start"]


def test_max_histograms_rejects_bad_input():
    with pytest.raises(ValueError, match="bins must be a whole number in 2..500, got 1"):
        max_histograms(stats.norm(), [1], bins=1)
    with pytest.raises(ValueError, match=r"tail must be in \(0, 0.1\], got 0.5"):
        max_histograms(stats.norm(), [1], tail=0.5)
