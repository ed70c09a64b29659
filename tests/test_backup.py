"""Tests for backup workers (straggle_edu.models.backup).

Reference values: for Exp(1) step times, E[k-th smallest of m] = H_m - H_(m-k),
so with N needed and b backups, compute(b) = H_(N+b) - H_b. The shape of
TensorFlow's 50-worker experiment (Abadi et al., OSDI 2016, fig. 8(c)):
shortest step with 4 backups, best normalized speedup with 3, 5th slower.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from straggle_edu.math import expected_order_stat
from straggle_edu.models.backup import (
    backup_workers,
    inception_50_setup,
    optimal_backups,
    sample_backup_step_times,
    wait_for_fastest,
)
from straggle_edu.models.cluster import AllReduce
from straggle_edu.models.step_time import StepTime


def H(m):
    return sum(1.0 / i for i in range(1, m + 1))


def test_backup_workers_exponential_closed_form():
    plan = backup_workers(stats.expon(), 10, 5)
    want = [H(10 + b) - H(b) for b in range(6)]
    np.testing.assert_allclose(plan.compute, want, rtol=1e-9)
    assert plan.step_time[0] == pytest.approx(H(10))  # b = 0 is the plain maximum


@given(
    st.floats(0.005, 0.2), st.floats(0.0, 0.3), st.floats(0.0, 3.0), st.integers(1, 600), st.floats(0.5, 2.0),
)
def test_backup_curve_matches_expected_order_stat(jitter, p, pause, n, base):
    # The one-grid Simpson curve used for StepTime against the library's quadrature.
    dist = StepTime(base, jitter=jitter, pause_prob=p, pause=pause)
    got = backup_workers(dist, n, 4).compute
    want = [expected_order_stat(dist, n, n + b) for b in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_backup_workers_inception_shape():
    plan = backup_workers(**inception_50_setup(), max_backups=8)
    t = plan.step_time
    assert plan.best_step == 4  # shortest step with 4 backups
    assert plan.best_normalized == 3  # best normalized speedup with 3
    assert t[5] > t[4]  # the 5th backup makes steps slower
    assert plan.normalized_speedup[1:6].min() > 1.0  # each of them saves GPU-time
    assert plan.stop_paying == 3
    assert optimal_backups(**inception_50_setup(), goal="speed") == 4
    assert optimal_backups(**inception_50_setup(), goal="cost") == 3


def test_backup_workers_never_stop_without_costs():
    # With no communication and free backups, every backup helps: the order
    # statistics alone never say stop.
    plan = backup_workers(StepTime(1.0, 0.05, 0.02, 0.5), 50, 12, price=0.0)
    assert plan.best_step == 12 and plan.best_normalized == 12
    assert plan.pays_in_speed.all() and plan.pays_in_cost.all()
    assert plan.stop_paying == 12


def test_backup_workers_gaussian_jitter_never_pays_for_itself():
    plan = backup_workers(stats.norm(1.0, 0.05), 50, 6)
    assert plan.best_normalized == 0 and plan.stop_paying == 0
    assert plan.best_step == 6  # faster, but not worth the workers


def test_backup_workers_price_and_dropped_fraction():
    plan = backup_workers(stats.expon(), 4, 4, price=0.5)
    np.testing.assert_allclose(plan.workers_paid, [4, 4.5, 5, 5.5, 6])
    np.testing.assert_allclose(plan.dropped_fraction, [0, 1 / 5, 2 / 6, 3 / 7, 4 / 8])
    np.testing.assert_allclose(plan.worker_seconds_per_step, plan.workers_paid * plan.step_time)
    np.testing.assert_allclose(plan.normalized_speedup, plan.speedup * 4 / plan.workers_paid)


@given(
    st.floats(0.0, 0.1), st.floats(0.0, 0.2), st.floats(0.0, 1.0),
    st.integers(1, 60), st.floats(0.0, 0.05), st.floats(0.0, 2.0),
)
def test_backup_margins_agree_with_the_curves(p, jitter, pause, n, per, price):
    dist = StepTime(1.0, jitter=max(jitter, 0.005), pause_prob=p, pause=pause)
    plan = backup_workers(dist, n, 6, sync=0.05, sync_per_worker=per, price=price)
    assert (plan.compute_gain >= -1e-12).all()  # E[N-th of N+b] never rises
    t, ns = plan.step_time, plan.normalized_speedup
    for b in range(6):
        if abs(t[b + 1] - t[b]) > 1e-9:
            assert plan.pays_in_speed[b] == (t[b + 1] < t[b])
        if abs(ns[b + 1] - ns[b]) > 1e-9:
            assert plan.pays_in_cost[b] == (ns[b + 1] > ns[b])
    stop = plan.stop_paying
    assert 0 <= stop <= 6
    assert not plan.pays_in_cost[stop:].any()
    if stop > 0:
        assert plan.pays_in_cost[stop - 1]


def test_backup_workers_many_stalls_per_step_dip_before_paying():
    # 1000 workers, 3% of them stalled on a typical step (30 stalls): the first
    # backups barely help, so the normalized speedup dips, then rises once b
    # passes p N; stop_paying is past the rise, not at the first dip.
    setup = inception_50_setup()
    plan = backup_workers(setup["dist"], 1000, 48, sync=0.1, sync_per_worker=0.6 / 1000)
    pays = plan.pays_in_cost
    first_no = int(np.argmin(pays))
    assert not pays[first_no] and pays[first_no:].any()  # a dip, then it pays again
    assert plan.normalized_speedup[10] < 1.01
    assert plan.best_normalized > 30 and plan.stop_paying == plan.best_normalized
    assert plan.normalized_speedup.max() > 1.1


def test_backup_workers_matches_monte_carlo():
    setup = inception_50_setup()
    plan = backup_workers(**setup, max_backups=4)
    med = backup_workers(**setup, max_backups=4, statistic="median")
    for b in (0, 2, 4):
        x = sample_backup_step_times(**setup, backups=b, size=50_000, rng=b)
        se = x.std() / math.sqrt(x.size)
        assert abs(x.mean() - plan.step_time[b]) < 5 * se
        assert np.mean(x <= med.step_time[b]) == pytest.approx(0.5, abs=0.01)


def test_backup_workers_allreduce_sync_grows_with_workers():
    ar = AllReduce(1e8, 1e10, latency=1e-3)
    plan = backup_workers(stats.norm(1.0, 0.05), 8, 4, sync=ar)
    np.testing.assert_allclose(plan.sync, [ar.time(8 + b) for b in range(5)])
    assert np.all(np.diff(plan.sync) > 0)


def test_backup_records_for_charts():
    recs = backup_workers(stats.expon(), 5, 3).records()
    assert [r["backups"] for r in recs] == [0, 1, 2, 3]
    assert "compute_gain" in recs[0] and "compute_gain" not in recs[-1]
    assert recs[0]["normalized_speedup"] == 1.0


def test_wait_for_fastest_exponential_and_all():
    r = wait_for_fastest(stats.expon(), 100, 94)
    assert r.step_all == pytest.approx(H(100))
    assert r.step_k == pytest.approx(H(100) - H(6))
    assert r.dropped == 6 and r.gradients_used == 0.94
    everyone = wait_for_fastest(stats.expon(), 10, 10, sync=0.5)
    assert everyone.step_gain == pytest.approx(0.0, abs=1e-12)
    assert everyone.throughput_ratio == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be a whole number >= 1, got 0"),
        ({"max_backups": -1}, "max_backups must be a whole number in 0..1000, got -1"),
        ({"max_backups": 1001}, "max_backups must be a whole number in 0..1000, got 1001"),
        ({"statistic": "p99"}, "statistic must be 'mean' or 'median', got 'p99'"),
        ({"price": -1.0}, "price must be >= 0, got -1.0"),
        ({"sync": -0.1}, "sync must be >= 0, got -0.1"),
        ({"sync": "fast"}, "sync must be >= 0, got 'fast'"),
        ({"sync_per_worker": float("nan")}, "sync_per_worker must be >= 0 \\(not NaN\\)"),
        ({"dist": stats.poisson(3)}, "dist must be a continuous distribution"),
    ],
)
def test_backup_workers_bad_input(kwargs, match):
    args = {"dist": stats.expon(), "n": 4, "max_backups": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        backup_workers(**args)


def test_other_functions_bad_input():
    with pytest.raises(ValueError, match="k must be a whole number in 1..10, got 11"):
        wait_for_fastest(stats.expon(), 10, 11)
    with pytest.raises(ValueError, match="goal must be 'cost' or 'speed', got 'fun'"):
        optimal_backups(stats.expon(), 4, goal="fun")
    with pytest.raises(ValueError, match="backups must be a whole number in 0..1000, got -2"):
        sample_backup_step_times(stats.expon(), 4, -2, 10)
    with pytest.raises(ValueError, match="memory budget"):
        sample_backup_step_times(stats.expon(), 4, 1, 10**11)
