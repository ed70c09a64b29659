"""Expected maxima and order statistics: closed forms, published values, properties."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, special, stats

from straggle_edu import (
    StepTime,
    expected_max,
    expected_order_stat,
    gumbel_max_approx,
    p_any_slow,
    sqrt_2_ln_n,
)

NORM = stats.norm()
EXPON = stats.expon()


def harmonic(n):
    """H_n: exact summation for small n, digamma for large n (both to ~1e-15)."""
    if n <= 10**5:
        return math.fsum(1.0 / j for j in range(1, n + 1))
    return float(special.digamma(n + 1) + np.euler_gamma)


def exp_order_stat(k, n):
    """E[k-th smallest of n Exp(1)] = H_n - H_(n-k) = sum_{j=n-k+1}^{n} 1/j."""
    if k <= 10**5:
        return math.fsum(1.0 / j for j in range(n - k + 1, n + 1))
    return harmonic(n) - harmonic(n - k)


def quad_order_stat(dist, k, n):
    """An independent reference: integrate t * (Beta density of F(t)) * f(t) with quad."""

    def integrand(t):
        log_b = (k - 1) * dist.logcdf(t) + (n - k) * dist.logsf(t) - special.betaln(k, n - k + 1)
        return t * math.exp(dist.logpdf(t) + log_b)

    centre = float(dist.isf((n - k + 0.5) / (n + 1))) if k > n / 2 else float(dist.ppf((k - 0.5) / (n + 1)))
    lo, hi = float(dist.ppf(1e-300)), float(dist.isf(1e-300))
    return integrate.quad(integrand, lo, hi, points=[centre], limit=500, epsabs=1e-13, epsrel=1e-13)[0]


# E[max of n standard normals] in closed form (n = 2..5).
NORMAL_CLOSED_FORMS = {
    1: 0.0,
    2: 1 / math.sqrt(math.pi),
    3: 3 / (2 * math.sqrt(math.pi)),
    4: 6 / math.pi**1.5 * math.atan(math.sqrt(2)),
    5: 5 / (4 * math.sqrt(math.pi)) * (1 + 6 / math.pi * math.asin(1 / 3)),
}


@pytest.mark.parametrize("n", sorted(NORMAL_CLOSED_FORMS))
def test_expected_max_normal_closed_forms(n):
    assert expected_max(NORM, n) == pytest.approx(NORMAL_CLOSED_FORMS[n], abs=1e-13)


def test_expected_max_normal_n2_is_one_over_sqrt_pi():
    assert round(expected_max(NORM, 2), 7) == 0.5641896
    assert abs(expected_max(NORM, 2) - 1 / math.sqrt(math.pi)) < 1e-13


# Harter (1961), "Expected values of normal order statistics", Biometrika 48,
# published to 5 decimals: within half a unit of the last digit, and to 1e-9
# of an independent quadrature.
@pytest.mark.parametrize("n, published", [(5, 1.16296), (10, 1.53875), (100, 2.50759)])
def test_expected_max_normal_harter_1961(n, published):
    value = expected_max(NORM, n)
    assert abs(value - published) <= 5e-6
    assert value == pytest.approx(quad_order_stat(NORM, n, n), abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 100, 4096, 10**5, 10**6, 10**7])
def test_expected_max_exponential_is_harmonic_number(n):
    assert expected_max(EXPON, n) == pytest.approx(harmonic(n), rel=1e-12)


@pytest.mark.parametrize(
    "k, n",
    [(1, 1), (1, 2), (2, 3), (5, 10), (1, 100), (2, 100), (50, 100), (99, 100), (94, 100),
     (1, 4096), (4000, 4096), (2, 10**7), (10**7 - 1, 10**7), (5 * 10**6, 10**7)],
)
def test_expected_order_stat_exponential_is_harmonic_difference(k, n):
    assert expected_order_stat(EXPON, k, n) == pytest.approx(exp_order_stat(k, n), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize("k, n", [(2, 100), (3, 7), (5, 10), (99, 100), (1000, 4096)])
def test_expected_order_stat_normal_matches_quadrature(k, n):
    assert expected_order_stat(NORM, k, n) == pytest.approx(quad_order_stat(NORM, k, n), abs=1e-9)


# 18-digit references from mpmath at 30 digits (not a dependency; recomputed once):
#   mp.quad(lambda x: x * exp(lgamma(n+1) - lgamma(k) - lgamma(n-k+1)
#           + (k-1) log ncdf(x) + (n-k) log ncdf(-x) - x**2/2) / sqrt(2 pi), breakpoints)
# scipy's quad is only good to ~1e-9 this far out, the library to ~1e-13.
@pytest.mark.parametrize(
    "k, n, reference",
    [
        (2, 10**6, -4.66461817733773892),
        (1000, 4096, -0.693393641945265347),
        (1, 10**7, -5.3009540101733246),
        (3, 7, -0.352706959152982439),
        (10, 10**5, -3.73104689398643449),
    ],
)
def test_expected_order_stat_normal_matches_high_precision_reference(k, n, reference):
    assert expected_order_stat(NORM, k, n) == pytest.approx(reference, abs=1e-11)
    assert expected_order_stat(NORM, n - k + 1, n) == pytest.approx(-reference, abs=1e-11)


def test_expected_order_stat_normal_harter_median_of_10():
    assert round(expected_order_stat(NORM, 5, 10), 5) == -0.12267


@given(n=st.integers(1, 10**7), k=st.integers(1, 10**7))
def test_expected_order_stat_normal_is_antisymmetric(n, k):
    k = min(k, n)
    a, b = expected_order_stat(NORM, k, n), expected_order_stat(NORM, n - k + 1, n)
    assert a == pytest.approx(-b, abs=1e-9)


def test_expected_max_normal_million_and_ten_million_workers():
    for n in (10**6, 10**7):
        exact = expected_max(NORM, n)
        assert math.isfinite(exact)
        # The Gumbel form tracks it closely; sqrt(2 ln n) overshoots.
        assert abs(exact - gumbel_max_approx(NORM, n)) < 0.02
        assert exact < sqrt_2_ln_n(n)
    assert expected_max(NORM, 10**6) == pytest.approx(quad_order_stat(NORM, 10**6, 10**6), abs=1e-9)


def test_expected_max_n1_is_the_mean():
    assert expected_max(stats.norm(10, 0.5), 1) == 10.0
    assert expected_max(StepTime(2.0, pause_prob=0.5, pause=1.0), 1) == 2.5


def test_expected_max_scalar_float_and_array_array():
    assert type(expected_max(NORM, 10)) is float
    assert type(expected_order_stat(NORM, 2, 10)) is float
    out = expected_max(NORM, [[1, 2], [5, 100]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert out[1, 1] == expected_max(NORM, 100)
    both = expected_order_stat(EXPON, [1, 2, 3], 3)
    assert both == pytest.approx([1 / 3, 1 / 3 + 1 / 2, 1 / 3 + 1 / 2 + 1])


def test_expected_max_location_scale():
    assert expected_max(stats.norm(10, 0.5), 100) == pytest.approx(10 + 0.5 * expected_max(NORM, 100), rel=1e-14)


DISTS = [NORM, EXPON, stats.lognorm(0.5), stats.gamma(2.0), stats.uniform(),
         StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5), StepTime(1.0, jitter=0.0, pause_prob=0.1, pause=1.0)]


@given(i=st.integers(0, len(DISTS) - 1), n=st.integers(1, 10**7), m=st.integers(1, 10**7))
def test_expected_max_rises_with_n(i, n, m):
    lo, hi = sorted((n, m))
    a, b = expected_max(DISTS[i], lo), expected_max(DISTS[i], hi)
    assert math.isfinite(a) and math.isfinite(b)
    assert a <= b + 1e-12 * abs(b)


@given(i=st.integers(0, len(DISTS) - 1), n=st.integers(1, 10**6), j=st.integers(1, 10**6), k=st.integers(1, 10**6))
def test_expected_order_stat_is_ordered_in_k(i, n, j, k):
    lo, hi = sorted((min(j, n), min(k, n)))
    a, b = expected_order_stat(DISTS[i], lo, n), expected_order_stat(DISTS[i], hi, n)
    assert math.isfinite(a) and math.isfinite(b)
    assert a <= b + 1e-12 * max(1.0, abs(b))


@given(q=st.floats(0.0, 1.0), n=st.integers(1, 10**9), pause=st.floats(0.0, 100.0))
def test_expected_max_point_mass_with_pauses_is_exact(q, n, pause):
    dist = StepTime(2.0, jitter=0.0, pause_prob=q, pause=pause)
    assert expected_max(dist, n) == pytest.approx(2.0 + pause * p_any_slow(q, n), rel=1e-14, abs=1e-14)


@given(q=st.floats(0.001, 0.999), n=st.integers(2, 10**6), k=st.integers(1, 10**6))
def test_expected_order_stat_point_mass_with_pauses_is_exact(q, n, k):
    k = min(k, n)
    dist = StepTime(1.0, jitter=0.0, pause_prob=q, pause=1.0)
    # The k-th of n is paused when at most k-1 workers are not: P = I_q(n-k+1, k).
    expected = 1.0 + float(special.betainc(n - k + 1, k, q))
    assert expected_order_stat(dist, k, n) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_expected_max_point_mass_is_the_point():
    assert expected_max(StepTime(3.0, jitter=0.0), 10**7) == 3.0
    assert expected_order_stat(StepTime(3.0, jitter=0.0), 5, 9) == 3.0


@pytest.mark.parametrize("k, n", [(0, 5), (6, 5), (2.5, 5), (-1, 5)])
def test_expected_order_stat_k_outside_1_to_n_raises(k, n):
    with pytest.raises(ValueError, match=r"^k must be a whole number in 1\.\.(5|n), got"):
        expected_order_stat(NORM, k, n)
    with pytest.raises(ValueError, match=r"^k must be a whole number"):
        expected_order_stat(NORM, [1, k], [5, 5])


@pytest.mark.parametrize("n", [0, -3, 1.5, float("nan"), float("inf"), "ten", None])
def test_expected_max_bad_n_raises(n):
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1"):
        expected_max(NORM, n)


@pytest.mark.parametrize(
    "dist, message",
    [
        (stats.poisson(3), "discrete"),
        (stats.cauchy(), "finite mean"),
        (stats.gamma, "whose mean can be computed"),
        (3.0, "float"),
        ("norm", "str"),
    ],
)
def test_expected_max_bad_dist_raises(dist, message):
    with pytest.raises(ValueError, match=message):
        expected_max(dist, 10)


def test_gumbel_max_approx_exponential_and_normal():
    # Exp(1): b_n = ln n, a_n = 1, so the approximation is ln n + gamma ~ H_n - 1/(2n).
    for n in (10, 1000, 10**6):
        assert gumbel_max_approx(EXPON, n) == pytest.approx(math.log(n) + np.euler_gamma, rel=1e-12)
        assert abs(gumbel_max_approx(EXPON, n) - harmonic(n)) < 1 / n
    gaps = [abs(gumbel_max_approx(NORM, n) - expected_max(NORM, n)) for n in (10, 1000, 10**6)]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gumbel_max_approx(NORM, 1) == 0.0
    assert gumbel_max_approx(NORM, [1, 100]).shape == (2,)


def test_sqrt_2_ln_n_values():
    assert sqrt_2_ln_n(1) == 0.0
    assert sqrt_2_ln_n(100) == pytest.approx(math.sqrt(2 * math.log(100)), rel=1e-15)
    assert type(sqrt_2_ln_n(4096)) is float
    with pytest.raises(ValueError, match=r"^n must be"):
        sqrt_2_ln_n(0)
