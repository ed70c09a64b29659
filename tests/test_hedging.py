"""Tests for hedged and tied requests (straggle_edu.models.hedging).

References: a hedged request's latency is min(L1, d + L2), checked by Monte
Carlo; the slowest of k Exp(1) requests has q-quantile -ln(1 - q**(1/k));
the three figures of "The Tail at Scale" (Dean and Barroso, CACM 2013):
2% more requests, p99.9 of a 1,000-way fan-out 1,800 ms -> 74 ms.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from straggle_edu.math import expected_max
from straggle_edu.models.hedging import (
    HedgedLatency,
    RequestLatency,
    fanout_quantile,
    hedging_tradeoff,
    sample_tied_requests,
    tail_at_scale_latency,
)

LAT = RequestLatency(body_median=0.002, body_spread=0.5, slow_prob=0.01, slow_median=0.2, slow_spread=0.3)


def test_request_latency_sf_cdf_and_quantiles():
    t = np.array([1e-4, 1e-3, 0.01, 0.1, 1.0])
    np.testing.assert_allclose(LAT.sf(t) + LAT.cdf(t), 1.0, atol=1e-15)
    np.testing.assert_allclose(LAT.cdf(LAT.ppf([0.1, 0.5, 0.9])), [0.1, 0.5, 0.9], rtol=1e-9)
    w = np.array([1e-3, 1e-6, 1e-12])
    np.testing.assert_allclose(LAT.sf(LAT.isf(w)), w, rtol=1e-8)
    assert LAT.sf(0.0) == 1.0 and LAT.cdf(-1.0) == 0.0
    assert LAT.ppf(0.0) == 0.0 and LAT.isf(0.0) == math.inf


def test_request_latency_mean_and_rvs_agree():
    x = LAT.rvs(200_000, random_state=1)
    assert x.mean() == pytest.approx(LAT.mean(), rel=0.01)
    assert np.mean(x > 0.05) == pytest.approx(float(LAT.sf(0.05)), abs=0.001)
    assert isinstance(LAT.rvs(random_state=2), float)


def test_hedged_latency_matches_monte_carlo_min():
    rng = np.random.default_rng(3)
    d = 0.01
    l1, l2 = LAT.rvs(400_000, random_state=rng), LAT.rvs(400_000, random_state=rng)
    hedged = np.minimum(l1, d + l2)
    h = HedgedLatency(LAT, d)
    for t in (0.003, 0.009, 0.011, 0.02):
        assert np.mean(hedged > t) == pytest.approx(float(h.sf(t)), abs=0.002)
    assert hedged.mean() == pytest.approx(h.mean(), rel=0.01)
    assert np.mean(l1 > d) == pytest.approx(h.extra_load, abs=0.001)


def test_hedged_latency_limits():
    t = np.array([0.001, 0.01, 0.3])
    np.testing.assert_allclose(HedgedLatency(LAT, 0.0).sf(t), LAT.sf(t) ** 2)  # two copies at once
    np.testing.assert_allclose(HedgedLatency(LAT, 1e4).sf(t), LAT.sf(t))  # never hedged
    assert HedgedLatency(LAT, 0.0).extra_load == 1.0


def test_hedged_latency_works_as_a_dist():
    h = HedgedLatency(LAT, 0.01)
    rng = np.random.default_rng(4)
    x = np.minimum(LAT.rvs((50_000, 10), random_state=rng), 0.01 + LAT.rvs((50_000, 10), random_state=rng))
    assert expected_max(h, 10) == pytest.approx(x.max(axis=1).mean(), rel=0.02)


def test_fanout_quantile_exponential_closed_form():
    for q, k in ((0.5, 1), (0.99, 100), (0.999, 1000)):
        want = -math.log(-math.expm1(math.log(q) / k))
        assert fanout_quantile(stats.expon(), q, k) == pytest.approx(want, rel=1e-12)


def test_tail_at_scale_figures():
    lat = tail_at_scale_latency()
    assert float(lat.sf(0.010)) == pytest.approx(0.02, abs=0.0005)  # 2% more requests
    assert fanout_quantile(lat, 0.999, 1000) == pytest.approx(1.800, rel=0.005)
    assert fanout_quantile(HedgedLatency(lat, 0.010), 0.999, 1000) == pytest.approx(0.074, rel=0.005)


@given(st.lists(st.floats(0.0, 0.5), min_size=2, max_size=6, unique=True))
def test_hedging_tradeoff_monotone_load_and_never_worse(delays):
    delays = sorted(delays)
    tr = hedging_tradeoff(LAT, delays, q=0.99, fanout=10)
    assert np.all(np.diff(tr.extra_load) <= 1e-15)
    assert np.all(tr.tail <= tr.unhedged * (1 + 1e-9))
    assert len(tr.records()) == len(delays)


def test_sample_tied_requests_exponential_waits():
    wait = stats.expon(scale=0.02)
    r = sample_tied_requests(wait, stats.uniform(0.001, 0.002), 200_000, rng=5, cancel_delay=0.001)
    # |W1 - W2| of two Exp(mean m) is Exp(mean m): P(< delta) = 1 - exp(-delta/m).
    assert r.both_ran == pytest.approx(1 - math.exp(-0.001 / 0.02), abs=0.002)
    # min of two Exp(mean m) is Exp(mean m/2).
    assert (r.tied.mean() - 0.002) == pytest.approx(0.01, rel=0.02)
    plain99, tied99 = r.quantile(0.99)
    assert tied99 < 0.6 * plain99
    assert sample_tied_requests(wait, stats.uniform(0.001, 0.002), 1000, rng=5, cancel_delay=0.0).both_ran == 0.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: RequestLatency(body_median=0.0), "body_median must be in \\[1e-06, 1000\\], got 0.0"),
        (lambda: RequestLatency(slow_prob=1.5), "slow_prob must be in \\[0, 1\\], got 1.5"),
        (lambda: RequestLatency(slow_spread=float("nan")), "slow_spread must be in"),
        (lambda: HedgedLatency(LAT, -0.01), "delay must be >= 0, got -0.01"),
        (lambda: HedgedLatency(42, 0.01), "base must be a latency distribution with an sf method, got 42"),
        (lambda: fanout_quantile(LAT, 1.0, 10), "q must be in \\(0, 1\\), got 1.0"),
        (lambda: fanout_quantile(LAT, 0.99, 0), "fanout must be a whole number >= 1, got 0"),
        (lambda: hedging_tradeoff(LAT, [], 0.99), "delays must be 1 to 2000 delays"),
        (lambda: hedging_tradeoff(LAT, [-1.0], 0.99), "delays must be >= 0, got -1.0"),
        (lambda: sample_tied_requests(stats.expon(), stats.expon(), 0), "size must be a whole number >= 1, got 0"),
        (lambda: sample_tied_requests(stats.expon(), stats.expon(), 10**11), "memory budget"),
        (lambda: sample_tied_requests(stats.expon(), stats.expon(), 10, cancel_delay=-1.0), "cancel_delay must be >= 0"),
        (lambda: LAT.rvs(10**11), "memory budget"),
        (lambda: LAT.ppf(1.5), "u must be in \\[0, 1\\], got 1.5"),
        (lambda: HedgedLatency(LAT, 0.01).isf(-0.1), "w must be in \\[0, 1\\], got -0.1"),
    ],
)
def test_hedging_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
