"""Cluster model: exact expected step time, sync, efficiency and sampling."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from straggle_edu import (
    AllReduce,
    Cluster,
    Group,
    StepTime,
    expected_max,
    expected_slowest,
    expected_step_time,
    p_any_slow,
    ring_allreduce_time,
    sample_step_times,
    scaling_efficiency,
    throughput,
)

PAUSY = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)


def survival_integral(groups, lo, hi, points=()):
    """Independent reference: lo + integral of 1 - prod F_g(t)**n_g by scipy quad."""

    def f(t):
        log_g = sum(n * float(d.logcdf(t)) for n, d in groups)
        return -math.expm1(log_g)

    return lo + integrate.quad(f, lo, hi, points=sorted(points), limit=1000, epsabs=1e-13, epsrel=1e-13)[0]


def within_5_se(sample, exact):
    return abs(sample.mean() - exact) <= 5 * sample.std(ddof=1) / math.sqrt(sample.size) + 1e-12


# ------------------------------------------------------------------ sync
def test_ring_allreduce_time_closed_form():
    # 2 (n-1)/n * bytes/bandwidth + 2 (n-1) * latency
    assert ring_allreduce_time(8, 1e9, 100e9, 5e-6) == pytest.approx(2 * 7 / 8 * 0.01 + 14 * 5e-6, rel=1e-15)
    assert ring_allreduce_time(1, 1e9, 1e9, 1.0) == 0.0
    assert ring_allreduce_time(2, 1e9, 1e9) == 1.0
    assert type(ring_allreduce_time(4, 1e6, 1e9)) is float
    n = np.array([1, 2, 4, 4096])
    assert ring_allreduce_time(n, 2e9, 1e9, 1e-6) == pytest.approx(2 * (n - 1) / n * 2 + 2 * (n - 1) * 1e-6)


def test_ring_allreduce_time_bandwidth_term_saturates_and_latency_grows():
    big = ring_allreduce_time(10**6, 1e9, 1e9, 0.0)
    assert big == pytest.approx(2.0, rel=1e-5) and big < 2.0
    assert ring_allreduce_time(1001, 0.0, 1e9, 1e-6) == pytest.approx(2e-3)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 1e9, 1e9, 0.0), r"^n must be a whole number >= 1, got 0"),
        ((8, -1.0, 1e9, 0.0), r"^nbytes must be >= 0, got -1.0"),
        ((8, 1e9, 0.0, 0.0), r"^bandwidth must be > 0, got 0.0"),
        ((8, 1e9, 1e9, -1e-6), r"^latency must be >= 0, got -1e-06"),
        ((8, float("nan"), 1e9, 0.0), r"^nbytes must be >= 0 \(not NaN\)"),
    ],
)
def test_ring_allreduce_time_bad_input_raises(args, message):
    with pytest.raises(ValueError, match=message):
        ring_allreduce_time(*args)
    with pytest.raises(ValueError, match=message):
        AllReduce(*args[1:]).time(args[0])


def test_all_reduce_sync_depends_on_cluster_size():
    ar = AllReduce(1e9, 100e9, 5e-6)
    assert ar.time(8) == ring_allreduce_time(8, 1e9, 100e9, 5e-6)
    c = Cluster.uniform(8, StepTime(1.0, jitter=0.0), sync=ar)
    assert c.sync_time == ar.time(8)
    assert expected_step_time(c) == pytest.approx(1.0 + ar.time(8), rel=1e-15)
    assert Cluster.with_slow(8, StepTime(1.0), 2, 1.5, sync=ar).sync_time == ar.time(8)


# -------------------------------------------------------------- exactness
@pytest.mark.parametrize(
    "dist",
    [stats.norm(10, 0.5), stats.expon(), stats.lognorm(0.5), StepTime(1.0), PAUSY,
     StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5), StepTime(1.0, jitter=1e-6, pause_prob=0.01, pause=0.5),
     StepTime(1.0, jitter=0.2, pause_prob=0.001, pause=5.0)],
)
@pytest.mark.parametrize("n", [1, 2, 100, 4096, 10**6, 10**7])
def test_expected_slowest_uniform_matches_expected_max(dist, n):
    # Two independent methods: tanh-sinh in quantile space vs Gauss-Kronrod in time.
    assert expected_slowest(Cluster.uniform(n, dist)) == pytest.approx(expected_max(dist, n), rel=1e-12)


def test_expected_step_time_uniform_is_expected_max_plus_sync():
    c = Cluster.uniform(4096, PAUSY, sync=0.25)
    assert expected_step_time(c) == pytest.approx(expected_max(PAUSY, 4096) + 0.25, rel=1e-13)
    assert type(expected_step_time(c)) is float


def test_expected_step_time_no_jitter_is_exact():
    t = StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5)
    assert expected_step_time(Cluster.uniform(100, t)) == pytest.approx(1 + 0.5 * p_any_slow(0.01, 100), rel=1e-15)
    # Two slow workers at 1.2 (1.7 with a pause), 98 healthy at 1.0 (1.5 with a pause):
    # 1.7 if a slow one pauses, else 1.5 if a healthy one does, else 1.2.
    c = Cluster.with_slow(100, t, slow_count=2, slow_factor=1.2)
    slow_paused, healthy_paused = p_any_slow(0.01, 2), p_any_slow(0.01, 98)
    exact = 1.2 + 0.5 * slow_paused + 0.3 * (1 - slow_paused) * healthy_paused
    assert expected_step_time(c) == pytest.approx(exact, rel=1e-14)


def test_expected_slowest_two_groups_matches_quadrature():
    healthy, slow = StepTime(1.0, jitter=0.05), StepTime(1.0, jitter=0.05, slowdown=1.2)
    c = Cluster.with_slow(4096, healthy, slow_count=3, slow_factor=1.2)
    ref = survival_integral([(4093, healthy), (3, slow)], 0.8, 2.0, points=[1.15, 1.2, 1.3])
    assert expected_slowest(c) == pytest.approx(ref, abs=1e-11)


def test_expected_slowest_mixed_scipy_and_step_time_groups():
    groups = (Group(1000, stats.norm(1.0, 0.05)), Group(10, StepTime(0.9, jitter=0.1, pause_prob=0.05, pause=0.4)))
    ref = survival_integral([(1000, stats.norm(1.0, 0.05)), (10, groups[1].step_time)], 0.7, 2.5,
                            points=[0.9, 1.15, 1.3, 1.5])
    assert expected_slowest(Cluster(groups)) == pytest.approx(ref, abs=1e-11)


def test_expected_slowest_huge_groups():
    c = Cluster((Group(10**7, PAUSY), Group(10**7, StepTime(1.1, jitter=0.01))))
    value = expected_slowest(c)
    assert math.isfinite(value)
    assert value == pytest.approx(expected_max(PAUSY, 10**7), abs=1e-9)  # the pauses dominate
    assert expected_slowest(Cluster.uniform(10**12, StepTime(1.0))) > expected_max(StepTime(1.0), 10**7)


@given(n=st.integers(2, 10**6), slow=st.integers(0, 10**6), factor=st.floats(1.0, 2.0))
def test_expected_step_time_with_slow_bounds(n, slow, factor):
    slow = min(slow, n)
    c = Cluster.with_slow(n, PAUSY, slow, factor)
    value = expected_step_time(c)
    assert value >= expected_max(PAUSY, n) - 1e-12  # slowing some never helps
    if slow:
        assert value >= expected_max(PAUSY.with_slowdown(factor), slow) - 1e-12
    assert value <= expected_max(PAUSY.with_slowdown(factor), n) + 1e-12


@given(n=st.integers(1, 10**6), m=st.integers(1, 10**6))
def test_expected_step_time_rises_with_n(n, m):
    lo, hi = sorted((n, m))
    assert expected_step_time(Cluster.uniform(lo, PAUSY)) <= expected_step_time(Cluster.uniform(hi, PAUSY)) + 1e-13


def test_with_slow_groups():
    c = Cluster.with_slow(4096, PAUSY, slow_count=2, slow_factor=1.2)
    assert [g.count for g in c.groups] == [4094, 2] and c.n == 4096
    assert c.groups[1].step_time.slowdown == 1.2 and c.groups[1].step_time.pause == 0.5
    assert [g.count for g in Cluster.with_slow(10, PAUSY, 0, 1.5).groups] == [10]
    assert [g.count for g in Cluster.with_slow(10, PAUSY, 10, 1.5).groups] == [10]
    assert c.mean_worker_time == pytest.approx((4094 * 1.005 + 2 * 1.205) / 4096)


# ------------------------------------------------- throughput, efficiency
def test_throughput_is_inverse_step_time():
    c = Cluster.uniform(4096, PAUSY, sync=AllReduce(1e9, 100e9, 5e-6))
    assert throughput(c) == pytest.approx(1 / expected_step_time(c), rel=1e-15)
    assert throughput(Cluster.uniform(10, StepTime(0.5, jitter=0.0))) == 2.0


def test_scaling_efficiency_definition():
    sync = 0.1
    c = Cluster.with_slow(4096, PAUSY, slow_count=4, slow_factor=1.3, sync=sync)
    expected = c.mean_worker_time / expected_step_time(c)  # speed-up over one worker, / n
    assert scaling_efficiency(c) == pytest.approx(expected, rel=1e-15)
    assert scaling_efficiency(Cluster.uniform(4096, StepTime(1.0, jitter=0.0))) == 1.0
    assert scaling_efficiency(Cluster.uniform(4096, StepTime(1.0, jitter=0.0), sync=0.3)) == pytest.approx(1 / 1.3)
    assert scaling_efficiency(Cluster.uniform(1, PAUSY)) == pytest.approx(1.0, rel=1e-15)


@given(n=st.integers(1, 10**6), m=st.integers(1, 10**6), sync=st.floats(0.0, 1.0))
def test_scaling_efficiency_falls_with_n_and_stays_in_0_1(n, m, sync):
    lo, hi = sorted((n, m))
    a = scaling_efficiency(Cluster.uniform(lo, PAUSY, sync=sync))
    b = scaling_efficiency(Cluster.uniform(hi, PAUSY, sync=sync))
    assert 0.0 < b <= a + 1e-13 <= 1.0 + 1e-13


# --------------------------------------------------------------- sampling
def test_sample_step_times_within_5_se_of_exact():
    c = Cluster.with_slow(4096, PAUSY, slow_count=3, slow_factor=1.2, sync=AllReduce(1e9, 100e9, 5e-6))
    x = sample_step_times(c, 20_000, rng=0)
    assert x.shape == (20_000,)
    assert within_5_se(x, expected_step_time(c))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 10**9), slow=st.integers(0, 50))
def test_sample_step_times_within_5_se_property(seed, n, slow):
    c = Cluster.with_slow(n, PAUSY, min(slow, n), 1.3, sync=0.05)
    assert within_5_se(sample_step_times(c, 2000, rng=seed), expected_step_time(c))


def test_sample_step_times_matches_naive_draws_ks():
    slow = PAUSY.with_slowdown(1.1)
    c = Cluster((Group(30, PAUSY), Group(3, slow)), sync=0.01)
    rng = np.random.default_rng(9)
    fast = sample_step_times(c, 4000, rng)
    naive = np.maximum(PAUSY.rvs((4000, 30), random_state=rng).max(axis=1),
                       slow.rvs((4000, 3), random_state=rng).max(axis=1)) + 0.01
    assert stats.ks_2samp(fast, naive).pvalue > 0.001


def test_sample_step_times_cost_does_not_grow_with_workers():
    # A billion workers in two groups: O(groups x size) draws, no per-worker arrays.
    c = Cluster.with_slow(10**9, PAUSY, 10, 1.5)
    x = sample_step_times(c, 5000, rng=1)
    assert np.isfinite(x).all() and within_5_se(x, expected_step_time(c))


def test_sample_step_times_reproducible_and_refuses_oversize():
    c = Cluster.uniform(100, PAUSY)
    assert np.array_equal(sample_step_times(c, 50, rng=3), sample_step_times(c, 50, rng=np.random.default_rng(3)))
    assert sample_step_times(c, 0, rng=0).shape == (0,)
    with pytest.raises(ValueError, match=r"memory budget"):
        sample_step_times(c, 10**9, rng=0)


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Cluster(()), r"^groups must be a non-empty sequence of Group"),
        (lambda: Cluster([1, 2]), r"^groups must be a sequence of Group objects only, got int"),
        (lambda: Cluster(5), r"^groups must be a sequence of Group, got 5"),
        (lambda: Cluster.uniform(10, PAUSY, sync=-1.0), r"^sync must be >= 0, got -1.0"),
        (lambda: Cluster.uniform(10, PAUSY, sync="fast"), r"^sync must be seconds >= 0 or an AllReduce, got 'fast'"),
        (lambda: Cluster.uniform(0, PAUSY), r"^count must be a whole number >= 1, got 0"),
        (lambda: Group(2.5, PAUSY), r"^count must be a whole number >= 1, got 2.5"),
        (lambda: Group(3, "normal"), r"^step_time must be a continuous distribution"),
        (lambda: Group(3, stats.poisson(2)), r"^step_time must be a continuous distribution"),
        (lambda: Cluster.with_slow(10, PAUSY, 11, 1.5), r"^slow_count must be a whole number in 0\.\.10, got 11"),
        (lambda: Cluster.with_slow(10, PAUSY, 1, 0.5), r"^slow_factor must be >= 1, got 0.5"),
        (lambda: Cluster.with_slow(10, stats.norm(), 1, 1.5), r"^step_time must be a StepTime"),
        (lambda: expected_step_time("cluster"), r"^cluster must be a Cluster, got str"),
        (lambda: throughput(None), r"^cluster must be a Cluster, got NoneType"),
        (lambda: scaling_efficiency(PAUSY), r"^cluster must be a Cluster, got StepTime"),
        (lambda: sample_step_times(Cluster.uniform(3, PAUSY), -1), r"^size must be a whole number >= 0, got -1"),
        (lambda: AllReduce(1e9, -1.0), r"^bandwidth must be > 0, got -1.0"),
    ],
)
def test_cluster_bad_input_raises(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@given(
    base=st.floats(0.01, 100.0),
    jitter=st.one_of(st.just(0.0), st.floats(1e-6, 0.2)),
    q=st.floats(0.0, 1.0),
    pause=st.floats(0.0, 100.0),
    n=st.integers(1, 10**8),
)
def test_expected_slowest_agrees_with_expected_max_for_any_step_time(base, jitter, q, pause, n):
    # Two independent exact methods must agree, and never return NaN.
    t = StepTime(base, jitter=jitter, pause_prob=q, pause=pause)
    a, b = expected_slowest(Cluster.uniform(n, t)), expected_max(t, n)
    assert math.isfinite(a) and math.isfinite(b)
    assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    assert t.mu * (1 - 8 * jitter) <= b <= t.mu * (1 + 40 * jitter) + pause + 1e-12
