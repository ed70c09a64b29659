"""Correlated slowness (models/correlation.py): closed forms against hand
cases and seeded simulations.

Monte Carlo tolerances: a proportion from N steps has standard error
sqrt(P(1-P)/N) <= 0.5/sqrt(N); 4 standard errors keep a seeded test from
flaking while still catching a wrong formula. For E[max] the standard error
is about 0.45 σ / sqrt(N) for the slowest of thousands (the maximum's
spread is about a third of one worker's); we allow 4 of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from straggle_edu.math.order_stats import expected_max
from straggle_edu.math.tail import p_any_slow
from straggle_edu.models.correlation import (
    expected_max_correlated,
    p_any_slow_shared,
    same_slowest_twice,
    sample_correlated_max,
    sample_slow_shared,
)


def test_p_any_slow_shared_independent_is_the_tail_probability():
    assert math.isclose(p_any_slow_shared(0.01, 4096), p_any_slow(0.01, 4096), rel_tol=1e-12)


def test_p_any_slow_shared_fully_shared_by_the_job_is_p():
    assert math.isclose(p_any_slow_shared(0.02, 512, shared=1.0), 0.02, rel_tol=1e-12)


def test_p_any_slow_shared_hosts_act_as_one_worker_each():
    # 64 workers in hosts of 8, fully shared: 8 independent hosts.
    assert math.isclose(p_any_slow_shared(0.05, 64, shared=1.0, group=8), 1 - 0.95**8, rel_tol=1e-12)


def test_p_any_slow_shared_two_workers_by_hand():
    # p = 0.1, half shared by a group of 2: q = 0.05, p0 = 0.05 / 0.95.
    q, p0 = 0.05, 0.05 / 0.95
    assert math.isclose(p_any_slow_shared(0.1, 2, shared=0.5), 1 - (1 - q) * (1 - p0) ** 2, rel_tol=1e-12)


@pytest.mark.parametrize("shared, group", [(0.3, 8), (0.7, 16), (1.0, 5)])
def test_p_any_slow_shared_matches_simulation(shared, group):
    slow = sample_slow_shared(0.01, 100, shared=shared, group=group, size=40_000, rng=11)
    tol = 4 * 0.5 / math.sqrt(40_000)
    assert abs(slow.any(axis=1).mean() - p_any_slow_shared(0.01, 100, shared, group)) < tol
    assert abs(slow.mean() - 0.01) < 4 * math.sqrt(0.01 * 0.99 / 40_000 / group) * math.sqrt(group)


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0.0, 1.0), n=st.integers(1, 5000), a=st.floats(0.0, 1.0), b=st.floats(0.0, 1.0))
def test_p_any_slow_shared_never_rises_with_sharing(p, n, a, b):
    lo, hi = sorted([a, b])
    assert p_any_slow_shared(p, n, hi) <= p_any_slow_shared(p, n, lo) + 1e-12
    assert p - 1e-12 <= p_any_slow_shared(p, n, hi) <= 1.0


def test_p_any_slow_shared_refuses_bad_group():
    with pytest.raises(ValueError, match=r"group must be a whole number in 1\.\.8, got 9"):
        p_any_slow_shared(0.01, 8, 0.5, group=9)


def test_expected_max_correlated_whole_job_scales_by_sqrt_one_minus_rho():
    e = expected_max(stats.norm(), 1000)
    assert math.isclose(expected_max_correlated(1000, rho=0.36), 0.8 * e, rel_tol=1e-9)


def test_expected_max_correlated_limits_of_groups():
    # rho -> 0 is the independent value; rho -> 1 is n / group independent groups.
    assert math.isclose(expected_max_correlated(512, 1e-9, group=8), expected_max(stats.norm(), 512), rel_tol=1e-3)
    assert math.isclose(expected_max_correlated(512, 1.0, group=8), expected_max(stats.norm(), 64), rel_tol=1e-9)


@pytest.mark.parametrize("n, rho, group", [(4096, 0.3, 8), (100, 0.5, 7), (256, 0.8, 256), (512, 0.99, 8)])
def test_expected_max_correlated_matches_simulation(n, rho, group):
    draws = sample_correlated_max(n, rho=rho, group=group, size=20_000, rng=5)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - expected_max_correlated(n, rho, group)) < 4 * se


def test_expected_max_correlated_one_worker_is_the_mean():
    assert expected_max_correlated(1, 0.5) == 0.0


def test_same_slowest_twice_matches_simulation():
    rng = np.random.default_rng(3)
    leaders = rng.standard_normal((20_000, 2, 8)).argmax(axis=2)
    share = (leaders[:, 0] == leaders[:, 1]).mean()
    assert abs(share - same_slowest_twice(8)) < 4 * math.sqrt(0.125 * 0.875 / 20_000)
