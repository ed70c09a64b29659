"""Your own step times (models/empirical.py): parsing, the exact empirical
E[max] against brute-force resampling, and the scale-up prediction's range.

Tolerances: E[max of n] by resampling from 40,000 seeded draws has standard
error (spread of the max) / 200; we allow 4 of them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from straggle_edu.models.empirical import empirical_expected_max, empirical_growth, parse_step_times, predict_at_scale


def test_parse_step_times_mixed_separators():
    assert parse_step_times(" 1.0;2,3\n\t4 ").tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("text, message", [
    ("1.0, abc", r"got 'abc' \(item 2\)"),
    ("1.0, -2", r"durations in seconds > 0, got '-2' \(item 2\)"),
    ("1.0, nan", r"got 'nan' \(item 2\)"),
    ("1.0", r"at least 2 step times"),
    ("", r"at least 2 step times"),
])
def test_parse_step_times_clear_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_step_times(text)


def test_empirical_expected_max_all_tuples_by_hand():
    x = [0.9, 1.0, 1.3]
    brute = np.mean([max(t) for t in itertools.product(x, repeat=3)])
    assert math.isclose(empirical_expected_max(x, 3), brute, rel_tol=1e-12)


def test_empirical_expected_max_matches_resampling():
    x = np.random.default_rng(0).lognormal(0.0, 0.2, 50)
    draws = np.random.default_rng(1).choice(x, size=(40_000, 16)).max(axis=1)
    assert abs(draws.mean() - empirical_expected_max(x, 16)) < 4 * draws.std() / 200


def test_empirical_expected_max_array_of_n_rises():
    got = empirical_expected_max([1.0, 2.0, 3.0], [1, 2, 4])
    assert got[0] == pytest.approx(2.0) and np.all(np.diff(got) > 0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 100.0), min_size=2, max_size=30), st.integers(1, 10_000))
def test_empirical_expected_max_between_mean_and_max(x, n):
    e = empirical_expected_max(x, n)
    assert np.mean(x) - 1e-9 * max(x) <= e <= max(x) * (1 + 1e-12)


def test_predict_at_scale_covers_the_truth_within_the_sample():
    x = np.random.default_rng(2).normal(1.0, 0.05, 400)
    pred = predict_at_scale(x, 8, rng=3)
    truth = 1.0 + 0.05 * 1.4236003   # E[max of 8 standard normals]
    assert pred.low <= truth <= pred.high and not pred.extrapolating


def test_predict_at_scale_far_beyond_the_sample_is_wider_and_flagged():
    x = np.random.default_rng(4).normal(1.0, 0.05, 384)
    near, far = predict_at_scale(x, 8, rng=5), predict_at_scale(x, 4096, rng=5)
    truth = 1.0 + 0.05 * 3.6341  # E[max of 4096 standard normals]
    assert far.extrapolating and far.width > 2 * near.width
    assert far.low <= truth <= far.high
    assert far.empirical <= far.sample_max < far.high


def test_predict_at_scale_exponential_tail_recovers_harmonic_number():
    x = 0.9 + np.random.default_rng(6).exponential(0.1, 20_000)
    pred = predict_at_scale(x, 4096, boot=20, rng=7)
    harmonic = sum(1 / k for k in range(1, 4097))
    assert math.isclose(pred.exponential_tail, 0.9 + 0.1 * harmonic, rel_tol=0.02)
    assert pred.normal < pred.exponential_tail  # the normal fit misses the heavier tail


def test_predict_at_scale_refuses_bad_values():
    with pytest.raises(ValueError, match="values must be"):
        predict_at_scale([1.0, -1.0], 8)


def test_empirical_growth_matches_the_hand_order_statistics():
    # Three values, n = 2: the maximum is 1 with prob 1/9, 2 with 3/9, 3 with 5/9.
    g = empirical_growth([3.0, 1.0, 2.0], [1, 2, 4096], size=20_000, rng=1)
    assert g.exact[0] == pytest.approx(2.0) and g.exact[1] == pytest.approx((1 + 6 + 15) / 9)
    assert g.exact[2] == pytest.approx(3.0) and g.monte_carlo[2] == pytest.approx(3.0)
    # 20,000 maxima: the sampled mean sits within 4 standard errors of the exact value.
    assert np.all(np.abs(g.monte_carlo - g.exact) <= 4 * g.monte_carlo_se + 1e-12)
    assert g.gumbel[0] == g.mean == pytest.approx(2.0) and g.sqrt_2_ln_n[2] > 3.0


def test_empirical_growth_refuses_equal_values():
    with pytest.raises(ValueError, match="not all equal"):
        empirical_growth([1.0, 1.0], [1, 2])
