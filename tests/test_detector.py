"""The detector-threshold math: closed forms, an independent quadrature, simulation, properties."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, special, stats

from straggle_edu.math.detector import (
    SECONDS_PER_DAY,
    alarms_per_day,
    lognormal_timing,
    lowest_score_quantile,
    median_rank,
    p_false_alarm,
    p_false_alarm_normal,
    p_rank_flagged,
    threshold_for_alarms,
)
from straggle_edu.models.detector import simulate_reports

EXPON = stats.expon()


def quad_p_false_alarm(n, threshold, window, dist):
    """Independent reference in x-space: P(clean) = n * int f_M(x) (F_M(x / t) - F_M(x))**(n-1) dx."""
    k, b = median_rank(window), window - median_rank(window) + 1
    cdf = lambda x: special.betainc(k, b, dist.cdf(x))
    pdf = lambda x: stats.beta(k, b).pdf(dist.cdf(x)) * dist.pdf(x)
    lo, hi = dist.ppf(1e-15), dist.isf(1e-15)
    clean = integrate.quad(lambda x: n * pdf(x) * (cdf(x / threshold) - cdf(x)) ** (n - 1), lo, hi,
                           limit=400, epsabs=1e-13, epsrel=1e-11, points=[dist.median()])[0]
    return 1.0 - clean


def test_median_rank_matches_torch_median():
    torch = pytest.importorskip("torch", reason='torch is not installed (pip install "straggle-edu[torch]"; CI installs torch==2.13.0)')
    rng = np.random.default_rng(3)
    for m in range(1, 12):
        x = rng.random(m)
        assert np.sort(x)[median_rank(m) - 1] == torch.median(torch.tensor(x)).item()


@pytest.mark.parametrize("t", [0.1, 0.5, 0.7, 0.75, 0.95])
def test_p_false_alarm_two_exponentials(t):
    # P(X2 > X1 / t) = t / (1 + t) for Exp(1); either rank can be the slow one.
    assert p_false_alarm(2, t, 1, EXPON) == pytest.approx(2 * t / (1 + t), rel=1e-10)


@pytest.mark.parametrize("cv,t", [(0.05, 0.9), (0.3, 0.7), (1.0, 0.5)])
def test_p_false_alarm_two_lognormals(cv, t):
    # log X1 - log X2 ~ N(0, 2 sigma^2): P(|difference| > log(1/t)).
    sigma = math.sqrt(math.log1p(cv * cv))
    expected = 2 * stats.norm.sf(math.log(1 / t) / (sigma * math.sqrt(2)))
    assert p_false_alarm(2, t, 1, lognormal_timing(cv)) == pytest.approx(expected, rel=1e-9)


def test_p_false_alarm_uniform_pair():
    # Two Uniform(0, 1) timings: P(max / min > 1/t) = t. The integrand has a kink
    # where t x reaches 1, which costs the quadrature digits: 1e-3 allowed.
    for t in (0.3, 0.5, 0.8):
        assert p_false_alarm(2, t, 1, stats.uniform()) == pytest.approx(t, abs=1e-3)


def test_p_false_alarm_one_rank_never():
    assert p_false_alarm(1, 0.99, 3, EXPON) == 0.0
    assert p_rank_flagged(1, 0.99, 3, EXPON) == 0.0


@pytest.mark.parametrize("n,window,cv,t", [(3, 5, 0.3, 0.7), (50, 9, 0.2, 0.75), (512, 30, 0.2, 0.7),
                                            (20000, 5, 0.05, 0.8), (100000, 30, 0.2, 0.65)])
def test_p_false_alarm_matches_quadrature(n, window, cv, t):
    dist = lognormal_timing(cv)
    assert p_false_alarm(n, t, window, dist) == pytest.approx(quad_p_false_alarm(n, t, window, dist), rel=1e-6)


def test_p_false_alarm_tiny_keeps_digits():
    # Far in the tail the answer is below float64's resolution near 1; a 1 - P(clean)
    # would give 0. Compare with the quadrature of the alarm density itself.
    dist = lognormal_timing(0.1)
    p = p_false_alarm(64, 0.75, 15, dist)
    assert 0 < p < 1e-5
    assert p == pytest.approx(quad_tail(64, 0.75, 15, dist), rel=1e-5)


def quad_tail(n, threshold, window, dist):
    """P(alarm) = n * int f_M(x) (1 - (1 - P(M > x/t | M > x))**(n-1)) P(M > x)**(n-1) dx."""
    k, b = median_rank(window), window - median_rank(window) + 1
    sf = lambda x: special.betainc(b, k, dist.sf(x))
    pdf = lambda x: stats.beta(k, b).pdf(dist.cdf(x)) * dist.pdf(x)

    def density(x):
        h = min(1.0, sf(x / threshold) / sf(x))
        return n * pdf(x) * sf(x) ** (n - 1) * (1.0 if h >= 1 else -math.expm1((n - 1) * math.log1p(-h)))

    return integrate.quad(density, dist.ppf(1e-12), dist.median(), limit=400, epsabs=0, epsrel=1e-10)[0] + \
        integrate.quad(density, dist.median(), dist.isf(1e-12), limit=400, epsabs=0, epsrel=1e-10)[0]


def test_p_false_alarm_matches_simulation():
    # 4,000 seeded reports: the standard error of a share near 0.3 is 0.007; allow 4 of them.
    dist = lognormal_timing(0.2)
    sim = simulate_reports(64, 9, dist, 4000, thresholds=[0.7, 0.75], rng=11)
    p_sim, se = sim.p_false_alarm()
    for t, ps, s in zip(sim.thresholds, p_sim, se):
        assert abs(p_false_alarm(64, t, 9, dist) - ps) < 4 * s


def test_p_rank_flagged_two_ranks_is_half_the_alarms():
    dist = lognormal_timing(0.3)
    assert p_rank_flagged(2, 0.7, 5, dist) == pytest.approx(p_false_alarm(2, 0.7, 5, dist) / 2, rel=1e-9)


def test_p_rank_flagged_matches_simulation():
    # Flags per rank over 4,000 reports x 64 ranks; flags within a report are correlated
    # (they share the smallest median), so the tolerance uses the per-report spread.
    dist = lognormal_timing(0.2)
    sim = simulate_reports(64, 9, dist, 4000, thresholds=[0.75], rng=5)
    per_report = sim.flagged[:, 0] / 64
    se = per_report.std() / math.sqrt(sim.reports)
    assert abs(p_rank_flagged(64, 0.75, 9, dist) - per_report.mean()) < 4 * se


@given(n=st.integers(2, 5000), t=st.floats(0.3, 0.95), cv=st.floats(0.05, 0.5), window=st.integers(1, 60))
def test_p_rank_flagged_union_bound(n, t, cv, window):
    dist = lognormal_timing(cv)
    q, p = p_rank_flagged(n, t, window, dist), p_false_alarm(n, t, window, dist)
    assert q <= p * (1 + 1e-9) + 1e-300
    assert p <= n * q * (1 + 1e-9) + 1e-300


@given(n=st.integers(2, 5000), t=st.floats(0.3, 0.94), dt=st.floats(0.001, 0.05), cv=st.floats(0.05, 0.5),
       window=st.integers(1, 60))
def test_p_false_alarm_monotone_in_threshold(n, t, dt, cv, window):
    dist = lognormal_timing(cv)
    assert p_false_alarm(n, t, window, dist) <= p_false_alarm(n, t + dt, window, dist) * (1 + 1e-9) + 1e-300


@given(n=st.integers(2, 5000), extra=st.integers(1, 5000), t=st.floats(0.3, 0.95), cv=st.floats(0.05, 0.5),
       window=st.integers(1, 60))
def test_p_false_alarm_monotone_in_n(n, extra, t, cv, window):
    dist = lognormal_timing(cv)
    assert p_false_alarm(n, t, window, dist) <= p_false_alarm(n + extra, t, window, dist) * (1 + 1e-9) + 1e-300


@given(n=st.integers(2, 5000), t=st.floats(0.3, 0.95), cv=st.floats(0.05, 0.5), more=st.floats(0.01, 0.5),
       window=st.integers(1, 60))
def test_p_false_alarm_monotone_in_noise(n, t, cv, more, window):
    lo, hi = p_false_alarm(n, t, window, lognormal_timing(cv)), p_false_alarm(n, t, window, lognormal_timing(cv + more))
    assert lo <= hi * (1 + 1e-9) + 1e-300


@given(n=st.integers(2, 5000), t=st.floats(0.3, 0.95), cv=st.floats(0.05, 0.5), half=st.integers(0, 40))
def test_p_false_alarm_falls_with_longer_odd_windows(n, t, cv, half):
    dist = lognormal_timing(cv)
    shorter, longer = 2 * half + 1, 2 * half + 3
    assert p_false_alarm(n, t, longer, dist) <= p_false_alarm(n, t, shorter, dist) * (1 + 1e-9) + 1e-300


def test_alarms_per_day_reports_a_day():
    assert alarms_per_day(1.0, 300) == 288.0
    assert alarms_per_day(0.5, 60) == SECONDS_PER_DAY / 60 / 2


def test_threshold_for_alarms_meets_budget():
    dist = lognormal_timing(0.2)
    for per_day in (0.1, 1.0, 24.0):
        t = threshold_for_alarms(4096, 30, dist, 300, per_day)
        assert alarms_per_day(p_false_alarm(4096, t, 30, dist), 300) == pytest.approx(per_day, rel=1e-6)


def test_threshold_for_alarms_no_threshold_needed():
    assert threshold_for_alarms(1, 30, EXPON, 300) == 1.0
    assert threshold_for_alarms(8, 30, EXPON, 300, per_day=288) == 1.0


def test_lowest_score_quantile_two_exponentials():
    # P(lowest < t) = 2t / (1 + t) = q  =>  t = q / (2 - q).
    for q in (0.01, 0.5, 0.9):
        assert lowest_score_quantile(2, 1, EXPON, q) == pytest.approx(q / (2 - q), rel=1e-8)


def test_lowest_score_quantile_matches_simulation():
    # The median of 600 simulated lowest scores against the exact median; the
    # sample median's spread is about 1.25 sd / sqrt(600); allow 4 of those.
    dist = lognormal_timing(0.2)
    sim = simulate_reports(256, 15, dist, 600, rng=2)
    spread = 1.2533 * sim.lowest.std() / math.sqrt(sim.reports)
    assert abs(lowest_score_quantile(256, 15, dist, 0.5) - sim.lowest_quantile(0.5)) < 4 * spread


@pytest.mark.parametrize("n,window,cv,t", [(4096, 30, 0.2, 0.7), (4096, 101, 0.3, 0.75), (64, 15, 0.2, 0.75)])
def test_p_false_alarm_normal_near_exact(n, window, cv, t):
    # An approximation: within 25% of the exact value for windows of 15 and more.
    exact = p_false_alarm(n, t, window, lognormal_timing(cv))
    assert p_false_alarm_normal(n, t, window, cv) == pytest.approx(exact, rel=0.25)


@pytest.mark.parametrize("kwargs,message", [
    (dict(threshold=1.0), "threshold must be in (0, 1), got 1.0"),
    (dict(threshold=0), "threshold must be in (0, 1), got 0"),
    (dict(window=0), "window must be a whole number >= 1, got 0"),
    (dict(n=2.5), "n must be a whole number >= 1, got 2.5"),
    (dict(dist=stats.norm(1, 0.1)), "dist must be a distribution of positive timings"),
])
def test_p_false_alarm_rejects_bad_input(kwargs, message):
    args = dict(n=8, threshold=0.7, window=5, dist=EXPON) | kwargs
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        p_false_alarm(**args)


def test_lognormal_timing_rejects_zero_cv():
    with pytest.raises(ValueError, match=r"cv must be in \(0, 10\], got 0"):
        lognormal_timing(0)


def test_threshold_for_alarms_rejects_bad_interval():
    with pytest.raises(ValueError, match="interval must be > 0, got -300"):
        threshold_for_alarms(8, 5, EXPON, -300)


def test_p_false_alarm_array_of_thresholds_matches_scalars():
    dist = lognormal_timing(0.2)
    ts = [0.6, 0.7, 0.75, 0.9]
    many = p_false_alarm(512, ts, 30, dist)
    assert many.shape == (4,)
    assert many.tolist() == pytest.approx([p_false_alarm(512, t, 30, dist) for t in ts], rel=1e-12)
