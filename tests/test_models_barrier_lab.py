"""Tests for the barrier lab's model (straggle_edu.models.barrier_lab): plain step-time models in,
predictions out; no processes run here (tests/test_barrier_lab.py runs the instrument)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from straggle_edu.models.barrier_lab import (
    Prediction,
    lab_cluster,
    measured_max_of_k,
    measured_vs_predicted,
    predict_step_time,
    predicted_slowdown,
    replaced_step_time,
)
from straggle_edu.models.empirical import empirical_expected_max
from straggle_edu.models.step_time import StepTime


def _lab(workers, slow_rank=None, slow_factor=2.0, **kwargs):
    """Each rank's StepTime, as the lab builds them: base 50 ms, one rank slower."""
    return [StepTime(0.05, slowdown=slow_factor if r == slow_rank else 1.0, **kwargs) for r in range(workers)]


def test_predict_step_time_without_jitter_is_exact():
    lab = _lab(4, slow_rank=1, jitter=0.0)
    assert predict_step_time(lab) == pytest.approx(0.1, rel=1e-9)
    assert predict_step_time(lab, overhead=0.002) == pytest.approx(0.102, rel=1e-9)
    assert predicted_slowdown(lab) == pytest.approx(1.6, rel=1e-9)  # 0.1 / ((0.1 + 3 x 0.05) / 4)
    assert predict_step_time(_lab(8, jitter=0.0)) == pytest.approx(0.05, rel=1e-9)


@pytest.mark.parametrize(
    "lab",
    [
        _lab(4, jitter=0.1),
        _lab(6, slow_rank=2, slow_factor=1.3, jitter=0.2),
        _lab(3, slow_rank=0, slow_factor=1.5, jitter=0.05, pause_prob=0.1, pause=0.03),
        _lab(1, slow_rank=0, jitter=0.1),
    ],
)
def test_predict_step_time_matches_monte_carlo(lab):
    # 200,000 seeded draws of the slowest worker: the exact E[max] within 4 standard errors.
    rng = np.random.default_rng(11)
    top = np.column_stack([t.rvs(200_000, random_state=rng) for t in lab]).max(axis=1)
    se = top.std() / math.sqrt(top.size)
    assert abs(predict_step_time(lab) - top.mean()) < 4 * se + 1e-9


def test_lab_cluster_groups_equal_models():
    c = lab_cluster(_lab(5, slow_rank=3, jitter=0.0), overhead=0.001)
    assert [(g.count, g.step_time.slowdown) for g in c.groups] == [(4, 1.0), (1, 2.0)]
    assert c.sync == 0.001
    assert [g.count for g in lab_cluster(_lab(3, jitter=0.0)).groups] == [3]


def test_measured_vs_predicted_by_hand():
    lab = _lab(2, jitter=0.0)
    p = measured_vs_predicted(lab, [0.051, 0.053, 0.055], [[0.05, 0.049], [0.05, 0.052], [0.05, 0.05]], 0.002)
    assert isinstance(p, Prediction) and p.steps == 3
    assert p.measured == pytest.approx(0.053)
    assert p.stderr == pytest.approx(0.002 / math.sqrt(3))  # std of (51, 53, 55) ms is 2 ms
    assert p.expected_max == pytest.approx(0.05) and p.predicted == pytest.approx(0.052)
    assert p.drawn_max == pytest.approx((0.05 + 0.052 + 0.05) / 3)
    assert p.error == pytest.approx(0.001 / 0.052)
    assert p.z == pytest.approx(0.001 / p.stderr)
    assert "error +1.9%" in str(p)


@pytest.mark.parametrize("args, match", [
    (([StepTime(0.05)], [0.05], [[0.05]], 0.0), "steps measured must be at least 2 to compare, got 1"),
    (([StepTime(0.05)], [0.05, 0.05], [[0.05]], 0.0), r"planned must be an array of shape \(2, workers\)"),
    (([], [0.05, 0.05], [[0.05], [0.05]], 0.0), "step_times must be one step-time model"),
    (([StepTime(0.05)], [0.05, 0.05], [[0.05], [0.05]], math.nan), "overhead must be"),
])
def test_measured_vs_predicted_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        measured_vs_predicted(*args)


def test_replaced_step_time_without_jitter_is_two_x():
    # Issue 15, point 4: one 2x worker among 4 is a 100 ms step. Rebalanced (the what-if
    # ideal) it is (100 + 3 x 50) / 4 = 62.5 ms, 1.6x; replaced by a healthy worker, 50 ms, 2.0x.
    lab = _lab(4, slow_rank=1, jitter=0.0)
    assert replaced_step_time(lab) == pytest.approx(0.05, rel=1e-12)
    assert predict_step_time(lab) / replaced_step_time(lab) == pytest.approx(2.0, rel=1e-12)
    assert predicted_slowdown(lab) == pytest.approx(1.6, rel=1e-12)


def test_replaced_step_time_with_jitter_is_the_healthy_job():
    lab = _lab(6, slow_rank=2, slow_factor=1.5, jitter=0.1, pause_prob=0.05, pause=0.02)
    healthy = _lab(6, jitter=0.1, pause_prob=0.05, pause=0.02)
    assert replaced_step_time(lab) == pytest.approx(predict_step_time(healthy), rel=1e-12)
    assert replaced_step_time(lab) < predict_step_time(lab)


def test_empirical_expected_max_discrete_uniform_closed_form():
    # Samples 1..m, each once: a worker draws a uniform integer, and
    # E[max of n] = sum_t t (t^n - (t-1)^n) / m^n.
    m = 10
    for n in (1, 2, 5, 40):
        exact = sum(t * (t**n - (t - 1) ** n) for t in range(1, m + 1)) / m**n
        assert empirical_expected_max([(np.arange(1, m + 1), n)]) == pytest.approx(exact, rel=1e-12)


def test_empirical_expected_max_groups_match_resampling():
    # Two groups drawn with replacement, 400,000 seeded resampled steps: within 4 standard errors.
    rng = np.random.default_rng(3)
    healthy, slow = rng.normal(0.05, 0.005, 60), rng.normal(0.06, 0.002, 20)
    draws = np.column_stack([rng.choice(healthy, (400_000, 3)), rng.choice(slow, (400_000, 1))]).max(axis=1)
    se = draws.std() / math.sqrt(draws.size)
    assert abs(empirical_expected_max([(healthy, 3), (slow, 1)]) - draws.mean()) < 4 * se


def test_empirical_expected_max_saturates_at_the_data():
    # Far beyond the sample size it tends to the largest sample: a lower bound, not a prediction.
    x = np.random.default_rng(5).normal(1.0, 0.1, 50)
    assert empirical_expected_max([(x, 100_000)]) == pytest.approx(x.max(), rel=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.001, 10.0), min_size=1, max_size=30), st.integers(1, 20))
def test_empirical_expected_max_grows_with_n_within_the_data(xs, n):
    lo, hi = empirical_expected_max([(xs, n)]), empirical_expected_max([(xs, n + 1)])
    assert min(xs) - 1e-9 <= lo <= hi + 1e-9 and hi <= max(xs) + 1e-9


@pytest.mark.parametrize("groups, match", [
    ([([], 2)], "samples must be at least one finite time"),
    ([([1.0, math.nan], 2)], "samples must be at least one finite time"),
    ([([1.0], 0)], "the total count must be at least 1 worker, got 0"),
    ([([1.0], -1)], "count must be a whole number >= 0, got -1"),
])
def test_empirical_expected_max_bad_input(groups, match):
    with pytest.raises(ValueError, match=match):
        empirical_expected_max(groups)


def test_measured_max_of_k_matches_every_subset():
    x = np.random.default_rng(8).exponential(1.0, (7, 5))
    for k in range(1, 6):
        brute = np.mean([[row[list(c)].max() for c in itertools.combinations(range(5), k)] for row in x])
        assert measured_max_of_k(x, k) == pytest.approx(brute, rel=1e-12)
    assert measured_max_of_k(x, 5) == pytest.approx(x.max(axis=1).mean())
    assert measured_max_of_k(x, 1) == pytest.approx(x.mean())


@pytest.mark.parametrize("times, k, match", [
    ([[1.0, 2.0]], 3, "k must be a whole number in 1..2, got 3"),
    ([1.0, 2.0], 1, "times must be a 2-d array"),
    ([[1.0, math.inf]], 1, "times must be a 2-d array"),
])
def test_measured_max_of_k_bad_input(times, k, match):
    with pytest.raises(ValueError, match=match):
        measured_max_of_k(times, k)
