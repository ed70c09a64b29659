"""The restaurant model: dish times, one synchronized table, steps at a barrier."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from straggle_edu.models.restaurant import (
    MAX_DISHES,
    dish_noise,
    dish_times,
    run_with_barrier,
    serve_table,
    worker_times,
)

times_lists = st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=40)


def test_serve_table_the_article_example_is_10_5_vs_14():
    table = serve_table(dish_times(8, dish=10, slow=14))
    assert table.average == 10.5
    assert table.served_at == 14.0
    assert table.slowest == 7
    assert table.total_waiting == 7 * 4.0
    assert table.idle_fraction == pytest.approx(28 / (8 * 14))
    assert table.slowdown == pytest.approx(14 / 10.5)


def test_serve_table_one_dish_waits_for_nobody():
    table = serve_table([3.0])
    assert (table.average, table.served_at, table.total_waiting) == (3.0, 3.0, 0.0)


def test_serve_table_all_zero_times_has_no_idle_share():
    table = serve_table([0.0, 0.0])
    assert table.idle_fraction == 0.0 and table.slowdown == 1.0


def test_serve_table_times_are_read_only():
    table = serve_table([1.0, 2.0])
    with pytest.raises(ValueError):
        table.times[0] = 5.0


@given(times_lists)
def test_serve_table_max_at_least_mean_and_waits_balance(times):
    table = serve_table(times)
    assert table.served_at >= table.average - 1e-9 * max(1.0, table.served_at)
    assert (table.waiting >= 0).all()
    assert table.total_waiting == pytest.approx(table.n * table.served_at - sum(times), abs=1e-6 * max(1.0, sum(times)))
    assert 0.0 <= table.idle_fraction < 1.0


@pytest.mark.parametrize(
    "bad, message",
    [
        ([], "times must be a 1-D sequence of at least one time"),
        ([[1.0]], "times must be a 1-D sequence"),
        ([1.0, -1.0], "times must be >= 0, got -1.0"),
        ([1.0, float("nan")], "times must be >= 0 (not NaN)"),
        ("abc", "times must be a 1-D sequence"),
    ],
)
def test_serve_table_bad_input(bad, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        serve_table(bad)


def test_dish_times_fixed_puts_the_slow_dish_last():
    assert dish_times(4, dish=5, slow=9).tolist() == [5.0, 5.0, 5.0, 9.0]
    assert dish_times(1, dish=5, slow=9).tolist() == [9.0]


def test_dish_times_random_is_lognormal_with_the_given_mean_and_spread():
    z = dish_noise(200_000, rng=3)
    # 200_000 draws: the standard error of the mean is 0.3 / sqrt(2e5) = 0.07% of it.
    t = dish_times(200_000, dish=10, slow=10, spread=0.3, noise=z)
    assert t.min() > 0
    assert t.mean() == pytest.approx(10, rel=4e-3)
    assert t.std() / t.mean() == pytest.approx(0.3, rel=1e-2)


def test_dish_times_same_noise_same_dishes():
    z = dish_noise(8, rng=1)
    a = dish_times(8, spread=0.2, noise=z)
    b = dish_times(8, spread=0.2, noise=z)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(dish_times(8, spread=0.2, rng=5), dish_times(8, spread=0.2, rng=5))


def test_dish_times_uses_only_the_first_noise_draws():
    z = dish_noise(MAX_DISHES, rng=2)
    np.testing.assert_array_equal(dish_times(5, spread=0.2, noise=z), dish_times(5, spread=0.2, noise=z[:5]))


def test_dish_times_noise_follows_the_documented_formula():
    s = math.sqrt(math.log(1 + 0.5**2))
    got = dish_times(2, dish=4, slow=8, spread=0.5, noise=[1.5, -0.5])
    want = np.array([4 * math.exp(1.5 * s - s * s / 2), 8 * math.exp(-0.5 * s - s * s / 2)])
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(dishes=0), "dishes must be a whole number >= 1, got 0"),
        (dict(dish=0), "dish must be > 0, got 0"),
        (dict(slow=-1), "slow must be > 0, got -1"),
        (dict(spread=4.0), r"spread must be in \[0, 3\], got 4.0"),
        (dict(spread=0.1, noise=[0.0]), "noise must be at least dishes=8 draws"),
        (dict(spread=0.1, noise=[np.inf] * 8), "noise must be a real number"),
        (dict(dishes=10**12), "more than the memory budget"),
    ],
)
def test_dish_times_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dish_times(**kwargs)


def test_dish_noise_bad_count():
    with pytest.raises(ValueError, match="count must be a whole number >= 1, got 0"):
        dish_noise(0)


def test_run_with_barrier_hand_checked():
    run = run_with_barrier([[1.0, 1.2, 0.9], [1.1, 1.0, 1.0]])
    assert (run.steps, run.n) == (2, 3)
    np.testing.assert_allclose(run.step_times, [1.2, 1.1])
    np.testing.assert_allclose(run.starts, [0.0, 1.2])
    np.testing.assert_allclose(run.ends, [1.2, 2.3])
    assert run.slowest.tolist() == [1, 0]
    np.testing.assert_allclose(run.independent_finish, [2.1, 2.2, 1.9])
    assert run.job_time == pytest.approx(2.3)
    assert run.average_time == pytest.approx((3.1 + 3.1) / 3)
    assert run.idle_fraction == pytest.approx(0.7 / (3 * 2.3))


def test_run_with_barrier_one_step_is_a_table():
    times = [10, 10, 14]
    run = run_with_barrier(times)
    table = serve_table(times)
    assert run.job_time == table.served_at
    assert run.average_time == pytest.approx(table.average)
    assert run.idle_fraction == pytest.approx(table.idle_fraction)


@given(st.lists(times_lists.filter(lambda x: len(x) == 3), min_size=1, max_size=6))
def test_run_with_barrier_job_never_beats_any_worker(rows):
    run = run_with_barrier(rows)
    tol = 1e-9 * max(1.0, run.job_time)
    assert run.job_time >= run.independent_finish.max() - tol
    assert run.job_time >= run.average_time - tol
    assert (run.waiting >= 0).all()


def test_run_with_barrier_bad_input():
    with pytest.raises(ValueError, match=r"times must be an array of shape \(steps, n\)"):
        run_with_barrier(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="times must be >= 0"):
        run_with_barrier([[1.0, -0.5]])


def test_worker_times_shape_seed_and_distribution():
    dist = stats.norm(1.0, 0.05)
    a = worker_times(dist, n=50, steps=400, rng=7)
    assert a.shape == (400, 50)
    np.testing.assert_array_equal(a, worker_times(dist, n=50, steps=400, rng=7))
    # 20,000 draws: the mean's standard error is 0.05 / sqrt(2e4) = 3.5e-4.
    assert a.mean() == pytest.approx(1.0, abs=2e-3)


def test_worker_times_bad_input():
    with pytest.raises(ValueError, match="dist must be a distribution with an rvs method"):
        worker_times(3.0, 4)
    with pytest.raises(ValueError, match="steps must be a whole number >= 1, got 0"):
        worker_times(stats.norm(), 4, steps=0)
    with pytest.raises(ValueError, match="memory budget"):
        worker_times(stats.norm(), 10**6, steps=10**6)
