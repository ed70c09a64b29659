"""Tests for the barrier lab's model (straggle_edu.models.barrier_lab): plain step-time models in,
predictions out; no processes run here (tests/test_barrier_lab.py runs the instrument)."""

import math

import numpy as np
import pytest

from straggle_edu.models.barrier_lab import (
    Prediction,
    lab_cluster,
    measured_vs_predicted,
    predict_step_time,
    predicted_slowdown,
)
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
