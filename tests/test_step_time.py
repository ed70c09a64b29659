"""StepTime: a two-normal mixture that is exact in the far tail and with no jitter."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, special, stats

from straggle_edu import StepTime, expected_max, expected_order_stat, p_any_slow, sample_max

PAUSY = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
T_GRID = np.linspace(0.5, 2.0, 301)

step_times = st.builds(
    StepTime,
    base=st.floats(0.01, 100.0),
    jitter=st.floats(1e-4, 0.2),
    pause_prob=st.floats(0.0, 1.0),
    pause=st.floats(0.0, 50.0),
    slowdown=st.floats(0.5, 3.0),
)


def test_step_time_without_pauses_is_scipy_normal():
    t = StepTime(2.0, jitter=0.1, slowdown=1.5)
    ref = stats.norm(3.0, 0.3)
    x = np.linspace(-5, 12, 200)
    for name in ("cdf", "sf", "pdf", "logcdf", "logsf", "logpdf"):
        assert getattr(t, name)(x) == pytest.approx(getattr(ref, name)(x), rel=1e-12, abs=1e-300), name
    u = np.array([1e-300, 1e-20, 0.01, 0.5, 0.99])
    assert t.ppf(u) == pytest.approx(ref.ppf(u), rel=1e-14)
    assert t.isf(u) == pytest.approx(ref.isf(u), rel=1e-14)
    assert (t.mean(), t.var(), t.std(), t.median()) == pytest.approx((3.0, 0.09, 0.3, 3.0))


def test_step_time_cdf_is_the_mixture():
    mix = 0.99 * stats.norm(1.0, 0.05).cdf(T_GRID) + 0.01 * stats.norm(1.5, 0.05).cdf(T_GRID)
    tail = 0.99 * stats.norm(1.0, 0.05).sf(T_GRID) + 0.01 * stats.norm(1.5, 0.05).sf(T_GRID)
    dens = 0.99 * stats.norm(1.0, 0.05).pdf(T_GRID) + 0.01 * stats.norm(1.5, 0.05).pdf(T_GRID)
    assert PAUSY.cdf(T_GRID) == pytest.approx(mix, rel=1e-13, abs=1e-300)
    assert PAUSY.sf(T_GRID) == pytest.approx(tail, rel=1e-13, abs=1e-300)
    assert PAUSY.pdf(T_GRID) == pytest.approx(dens, rel=1e-13, abs=1e-300)
    assert np.exp(PAUSY.logcdf(T_GRID)) == pytest.approx(mix, rel=1e-12)
    assert np.exp(PAUSY.logsf(T_GRID)) == pytest.approx(tail, rel=1e-12)


def test_step_time_far_tail_round_trips():
    w = np.logspace(-300, -0.4, 400)
    assert PAUSY.sf(PAUSY.isf(w)) == pytest.approx(w, rel=1e-11)
    assert PAUSY.cdf(PAUSY.ppf(w)) == pytest.approx(w, rel=1e-11)
    # Far from the pause, the tail is the pause component's own tail.
    assert PAUSY.isf(1e-200) == pytest.approx(stats.norm(1.5, 0.05).isf(1e-200 / 0.01), rel=1e-12)


def test_step_time_moments_match_integration():
    mean = integrate.quad(lambda t: t * PAUSY.pdf(t), 0, 3, points=[1, 1.5], limit=200)[0]
    var = integrate.quad(lambda t: (t - mean) ** 2 * PAUSY.pdf(t), 0, 3, points=[1, 1.5], limit=200)[0]
    assert PAUSY.mean() == pytest.approx(mean, rel=1e-12)
    assert PAUSY.var() == pytest.approx(var, rel=1e-10)
    assert PAUSY.mean() == 1.005
    assert PAUSY.var() == pytest.approx(0.05**2 + 0.01 * 0.99 * 0.25)


def test_step_time_rvs_matches_the_distribution():
    x = PAUSY.rvs(20_000, random_state=4)
    assert stats.kstest(x, PAUSY.cdf).pvalue > 0.001
    assert abs(x.mean() - PAUSY.mean()) <= 5 * PAUSY.std() / math.sqrt(x.size)
    assert type(PAUSY.rvs(random_state=0)) is float
    assert PAUSY.rvs((3, 4), random_state=0).shape == (3, 4)
    assert np.array_equal(PAUSY.rvs(5, random_state=1), PAUSY.rvs(5, random_state=np.random.default_rng(1)))


def test_step_time_scalar_float_and_array_array():
    for name in ("cdf", "sf", "pdf", "logcdf", "logsf", "ppf", "isf"):
        assert type(getattr(PAUSY, name)(0.5)) is float, name
        assert isinstance(getattr(PAUSY, name)([0.5, 0.25]), np.ndarray), name


def test_step_time_quantile_edges():
    assert PAUSY.ppf(0.0) == -math.inf and PAUSY.ppf(1.0) == math.inf
    assert PAUSY.isf(0.0) == math.inf and PAUSY.isf(1.0) == -math.inf
    assert PAUSY.support() == (-math.inf, math.inf)


def test_step_time_no_jitter_is_two_atoms():
    t = StepTime(2.0, jitter=0.0, pause_prob=0.1, pause=1.0)
    assert t.degenerate and t.support() == (2.0, 3.0)
    assert t.cdf([1.999, 2.0, 2.5, 3.0]).tolist() == [0.0, 0.9, 0.9, 1.0]
    assert t.sf([1.999, 2.0, 2.5, 3.0]).tolist() == pytest.approx([1.0, 0.1, 0.1, 0.0])
    assert t.ppf([0.0, 0.5, 0.9, 0.9000001, 1.0]).tolist() == [2.0, 2.0, 2.0, 3.0, 3.0]
    assert t.isf([1.0, 0.5, 0.1, 0.0999999, 0.0]).tolist() == [2.0, 2.0, 2.0, 3.0, 3.0]
    assert t.pdf([2.0, 2.5, 3.0]).tolist() == [math.inf, 0.0, math.inf]
    assert (t.mean(), t.var()) == pytest.approx((2.1, 0.09))
    assert set(t.rvs(1000, random_state=0).tolist()) == {2.0, 3.0}
    assert StepTime(2.0, jitter=0.0).rvs(3, random_state=0).tolist() == [2.0, 2.0, 2.0]
    assert StepTime(2.0, jitter=0.0).support() == (2.0, 2.0)


@given(q=st.floats(0.0, 1.0), n=st.integers(1, 10**12), pause=st.floats(0.0, 10.0))
def test_step_time_no_jitter_expected_max_is_base_plus_pause_times_p_any_slow(q, n, pause):
    t = StepTime(1.0, jitter=0.0, pause_prob=q, pause=pause)
    assert expected_max(t, n) == pytest.approx(1.0 + pause * p_any_slow(q, n), rel=1e-14, abs=1e-15)


def test_step_time_no_jitter_article_numbers():
    t = StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5)
    assert expected_max(t, 100) == pytest.approx(1 + 0.5 * 0.6339676587267709, rel=1e-14)
    assert expected_max(t, 4096) == 1.5
    x = sample_max(t, 100, 20_000, rng=0)
    assert set(np.unique(x).tolist()) == {1.0, 1.5}
    assert abs((x == 1.5).mean() - 0.6339676587267709) < 5 * math.sqrt(0.634 * 0.366 / x.size)


def test_step_time_tiny_jitter_approaches_no_jitter():
    exact = expected_max(StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5), 100)
    near = expected_max(StepTime(1.0, jitter=1e-9, pause_prob=0.01, pause=0.5), 100)
    assert near == pytest.approx(exact, abs=1e-8)


@pytest.mark.parametrize("n", [2, 10, 100, 4096, 10**6])
def test_step_time_expected_max_matches_integral_of_survival(n):
    # E[max] = t0 + integral over t > t0 of (1 - F(t)**n), t0 far below the mass.
    f = lambda t: -math.expm1(n * PAUSY.logcdf(t))
    ref = 0.5 + integrate.quad(f, 0.5, 3.0, points=[1.0, 1.25, 1.5], limit=500, epsabs=1e-13, epsrel=1e-13)[0]
    assert expected_max(PAUSY, n) == pytest.approx(ref, abs=1e-10)


@given(t=step_times, u=st.floats(1e-12, 1 - 1e-12))
def test_step_time_ppf_inverts_cdf_and_is_never_nan(t, u):
    x = t.ppf(u)
    assert math.isfinite(x)
    assert t.cdf(x) == pytest.approx(u, rel=1e-7, abs=1e-12)
    y = t.isf(u)
    assert t.sf(y) == pytest.approx(u, rel=1e-7, abs=1e-12)


@given(t=step_times, a=st.floats(0.0, 1.0), b=st.floats(0.0, 1.0))
def test_step_time_quantiles_are_monotone(t, a, b):
    lo, hi = sorted((a, b))
    assert t.ppf(lo) <= t.ppf(hi)
    assert t.isf(lo) >= t.isf(hi)


def test_step_time_with_slowdown_scales_compute_not_pause():
    slow = PAUSY.with_slowdown(1.2)
    assert slow.slowdown == 1.2 and slow.pause == 0.5
    assert slow.mean() == pytest.approx(1.2 + 0.005)
    assert dataclasses.replace(PAUSY) == PAUSY and hash(PAUSY) == hash(dataclasses.replace(PAUSY))
    with pytest.raises(dataclasses.FrozenInstanceError):
        PAUSY.base = 2.0


def test_step_time_components_and_breaks():
    assert PAUSY.components() == [(0.99, 1.0, 0.05), (0.01, 1.5, 0.05)]
    assert PAUSY.quantile_breaks() == ((0.99, 0.01),)
    assert StepTime(1.0).quantile_breaks() == ()
    assert StepTime(1.0, pause_prob=1.0, pause=2.0).components() == [(1.0, 3.0, 0.05)]


def test_step_time_warns_about_negative_time_mass():
    with pytest.warns(UserWarning, match=r"jitter=0.3 gives a negative step time with probability 0.00043"):
        t = StepTime(1.0, jitter=0.3)
    assert t.negative_mass() == pytest.approx(stats.norm.cdf(-1 / 0.3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert StepTime(1.0, jitter=0.1).negative_mass() < 1e-22
        assert StepTime(1.0, jitter=0.0).negative_mass() == 0.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(base=0.0), r"^base must be > 0, got 0.0"),
        (dict(base=-1), r"^base must be > 0, got -1"),
        (dict(jitter=-0.1), r"^jitter must be in \[0, 1\], got -0.1"),
        (dict(jitter=1.5), r"^jitter must be in \[0, 1\], got 1.5"),
        (dict(pause_prob=2.0), r"^pause_prob must be in \[0, 1\], got 2.0"),
        (dict(pause=-1.0), r"^pause must be >= 0, got -1.0"),
        (dict(slowdown=0.0), r"^slowdown must be > 0, got 0.0"),
        (dict(base=float("nan")), r"^base must be > 0 \(not NaN\), got nan"),
        (dict(base=[1.0, 2.0]), r"^base must be a single number"),
        (dict(pause="big"), r"^pause must be >= 0, got 'big'"),
    ],
)
def test_step_time_bad_input_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StepTime(**({"base": 1.0} | kwargs))


@pytest.mark.parametrize("method", ["ppf", "isf"])
@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan")])
def test_step_time_quantile_bad_probability_raises(method, value):
    with pytest.raises(ValueError, match=r"^(u|w) must be in \[0, 1\]"):
        getattr(PAUSY, method)(value)


def test_step_time_cdf_bad_time_raises():
    with pytest.raises(ValueError, match=r"^t must be a real number \(not NaN\), got nan"):
        PAUSY.cdf(float("nan"))


def test_step_time_order_stats_match_scipy_for_pure_normal():
    t, ref = StepTime(10.0, jitter=0.05), stats.norm(10.0, 0.5)
    for k, n in ((1, 10), (5, 10), (4096, 4096)):
        assert expected_order_stat(t, k, n) == pytest.approx(expected_order_stat(ref, k, n), rel=1e-14)


def test_step_time_point_mass_order_stat_is_exact():
    t = StepTime(1.0, jitter=0.0, pause_prob=0.2, pause=1.0)
    assert expected_order_stat(t, 3, 7) == pytest.approx(1 + special.betainc(5, 3, 0.2), rel=1e-14)
