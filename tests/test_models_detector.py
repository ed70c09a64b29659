"""Simulated detector reports: the detector's own median and score, checked by hand and against torch."""

import numpy as np
import pytest
from scipy import stats

from straggle_edu.math.detector import lognormal_timing, median_rank
from straggle_edu.models.detector import relative_scores, sample_window_medians, simulate_reports


def test_sample_window_medians_are_torch_medians_of_the_draws():
    torch = pytest.importorskip("torch", reason='torch is not installed (pip install "straggle-edu[torch]"; CI installs torch==2.13.0)')
    dist = lognormal_timing(0.2)
    for window in (1, 4, 7):
        medians = sample_window_medians(5, window, dist, 3, rng=9)
        draws = dist.rvs(size=(15, window), random_state=np.random.default_rng(9))
        expected = torch.median(torch.tensor(draws), dim=1).values.numpy().reshape(3, 5)
        np.testing.assert_array_equal(medians, expected)


def test_sample_window_medians_across_chunks_is_exponential_median():
    # 1,200,000 medians of 3 Exp(1) draws (several chunks): the 2nd of 3 has mean 1/3 + 1/2.
    medians = sample_window_medians(1000, 3, stats.expon(), 1200, rng=4)
    se = medians.std() / np.sqrt(medians.size)
    assert abs(medians.mean() - 5 / 6) < 4 * se


def test_sample_window_medians_refuses_oversize():
    with pytest.raises(ValueError, match="n x window x reports must be at most 200,000,000 timings"):
        sample_window_medians(4096, 300, stats.expon(), 1000)


def test_relative_scores_by_hand():
    np.testing.assert_allclose(relative_scores([[2.0, 4.0, 2.5], [1.0, 1.0, 3.0]]),
                               [[1.0, 0.5, 0.8], [1.0, 1.0, 1 / 3]])


def test_relative_scores_rejects_zero_median():
    with pytest.raises(ValueError, match=r"medians must be > 0, got 0.0"):
        relative_scores([1.0, 0.0])


def test_simulate_reports_lowest_and_flags_agree():
    sim = simulate_reports(32, 5, lognormal_timing(0.3), 200, thresholds=[0.6, 0.7, 0.8], rng=1)
    assert sim.flagged.shape == (200, 3) and sim.reports == 200
    # A report flags someone at threshold t exactly when its lowest score is below t.
    for j, t in enumerate(sim.thresholds):
        np.testing.assert_array_equal(sim.flagged[:, j] > 0, sim.lowest < t)
    # Higher thresholds flag at least as many ranks.
    assert (np.diff(sim.flagged, axis=1) >= 0).all()


def test_simulate_reports_is_seeded():
    a = simulate_reports(16, 3, stats.expon(), 50, rng=7)
    b = simulate_reports(16, 3, stats.expon(), 50, rng=7)
    np.testing.assert_array_equal(a.lowest, b.lowest)


def test_median_rank_is_lower_median():
    x = np.arange(1.0, 7.0)  # 1..6: the lower median is 3
    assert x[median_rank(6) - 1] == 3.0


def test_detector_simulation_z_scores():
    sim = simulate_reports(2, 1, stats.expon(), 10_000, thresholds=[0.5, 0.9], rng=3)
    z = sim.z_scores([2 * 0.5 / 1.5, 2 * 0.9 / 1.9])  # exact: 2t / (1 + t)
    assert np.all(np.abs(z) < 4)
    assert np.all(np.abs(sim.z_scores([0.5, 0.5])) > 10)  # a wrong P is far off
