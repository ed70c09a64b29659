"""Samplers: same distribution as the naive draw, at a cost independent of n."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from straggle_edu import (
    StepTime,
    expected_max,
    expected_order_stat,
    memory_budget,
    sample_max,
    sample_order_stat,
    set_memory_budget,
)

NORM = stats.norm()
PAUSY = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)


def within_5_se(sample, exact):
    se = sample.std(ddof=1) / math.sqrt(sample.size)
    return abs(sample.mean() - exact) <= 5 * se + 1e-12


@pytest.mark.parametrize("dist, n", [(NORM, 64), (stats.expon(), 200), (stats.lognorm(0.5), 30), (PAUSY, 100)])
def test_sample_max_matches_naive_draws_ks(dist, n):
    rng = np.random.default_rng(2024)
    fast = sample_max(dist, n, 4000, rng)
    naive = dist.rvs(size=(4000, n), random_state=rng).max(axis=1)
    assert stats.ks_2samp(fast, naive).pvalue > 0.001


@pytest.mark.parametrize("n", [1, 2, 100, 4096, 10**6])
def test_sample_max_matches_exact_cdf_ks(n):
    # The CDF of the max is Phi(t)**n; test against it exactly (one-sample KS).
    x = sample_max(NORM, n, 5000, rng=11)
    cdf = lambda t: np.exp(n * stats.norm.logcdf(t))
    assert stats.kstest(x, cdf).pvalue > 0.001


@pytest.mark.parametrize("dist, k, n", [(NORM, 1, 50), (NORM, 7, 20), (stats.expon(), 94, 100), (PAUSY, 3, 40)])
def test_sample_order_stat_matches_naive_draws_ks(dist, k, n):
    rng = np.random.default_rng(7)
    fast = sample_order_stat(dist, k, n, 4000, rng)
    naive = np.sort(dist.rvs(size=(4000, n), random_state=rng), axis=1)[:, k - 1]
    assert stats.ks_2samp(fast, naive).pvalue > 0.001


@given(n=st.integers(1, 10**9), seed=st.integers(0, 2**32 - 1))
def test_sample_max_within_5_se_of_expected_max(n, seed):
    x = sample_max(NORM, n, 4000, rng=seed)
    assert within_5_se(x, expected_max(NORM, n))


@given(n=st.integers(1, 10**6), k=st.integers(1, 10**6), seed=st.integers(0, 2**32 - 1))
def test_sample_order_stat_within_5_se_of_exact(n, k, seed):
    k = min(k, n)
    for dist in (NORM, stats.expon()):
        x = sample_order_stat(dist, k, n, 4000, rng=seed)
        assert within_5_se(x, expected_order_stat(dist, k, n))


def test_sample_max_step_time_within_5_se():
    for n in (1, 50, 4096, 10**7):
        assert within_5_se(sample_max(PAUSY, n, 20_000, rng=n), expected_max(PAUSY, n))


def test_sample_order_stat_fastest_of_many_keeps_precision():
    # The fastest of 10**9 exponentials is Exp(10**9): mean 1e-9, drawn from the exact tail.
    x = sample_order_stat(stats.expon(), 1, 10**9, 20_000, rng=3)
    assert within_5_se(x, 1e-9)
    assert (x > 0).all()


def test_sample_max_is_reproducible_and_takes_a_generator():
    a = sample_max(NORM, 4096, 100, rng=5)
    b = sample_max(NORM, 4096, 100, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, sample_max(NORM, 4096, 100, rng=6))
    assert sample_max(NORM, 10, 0, rng=0).shape == (0,)
    assert np.isfinite(sample_max(NORM, 10**12, 1000, rng=0)).all()


def test_sample_max_memory_does_not_grow_with_n():
    # Naive would need size * n * 8 = 8e15 bytes here; the sampler needs size * 48.
    x = sample_max(NORM, 10**12, 10_000, rng=1)
    assert x.shape == (10_000,)


def test_sample_max_refuses_requests_over_the_memory_budget():
    with pytest.raises(ValueError, match=r"needs about \d+ MiB, more than the memory budget of 512 MiB"):
        sample_max(NORM, 10, 10**9, rng=0)
    old = set_memory_budget(2**20)
    try:
        assert memory_budget() == 2**20
        with pytest.raises(ValueError, match=r"memory budget of 1 MiB"):
            sample_order_stat(NORM, 2, 10, 10**6, rng=0)
        assert sample_max(NORM, 10, 1000, rng=0).shape == (1000,)
    finally:
        set_memory_budget(old)
    assert memory_budget() == old


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n=0), r"^n must be a whole number >= 1, got 0"),
        (dict(n=2.5), r"^n must be a whole number >= 1, got 2.5"),
        (dict(size=-1), r"^size must be a whole number >= 0, got -1"),
        (dict(size=float("nan")), r"^size must be"),
        (dict(rng="seed"), r"^rng must be a numpy.random.Generator, an int seed or None"),
        (dict(rng=-1), r"^rng must be a seed >= 0, got -1"),
        (dict(dist=stats.poisson(2)), r"^dist must be a continuous distribution"),
    ],
)
def test_sample_max_bad_input_raises(kwargs, message):
    args = dict(dist=NORM, n=10, size=5, rng=0) | kwargs
    with pytest.raises(ValueError, match=message):
        sample_max(**args)


@pytest.mark.parametrize("k", [0, 11, 1.5])
def test_sample_order_stat_bad_k_raises(k):
    with pytest.raises(ValueError, match=r"^k must be a whole number in 1\.\.10, got"):
        sample_order_stat(NORM, k, 10, 5, rng=0)
