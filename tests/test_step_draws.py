"""Steps drawn one by one (notebook 03's "draw one step"): binned worker times and each step's slowest."""

import numpy as np
import pytest
from scipy import stats

from straggle_edu.math.order_stats import expected_max
from straggle_edu.models.max_growth import step_time_dist
from straggle_edu.models.step_draws import draw_steps
from straggle_edu.models.step_time import StepTime


def test_draw_steps_of_one_worker_keeps_the_one_draw():
    d = draw_steps(stats.norm(1.0, 0.1), n=1, steps=50, bins=10, rng=3)
    assert (d.counts.sum(axis=1) == 1).all() and (d.slowest_worker == 0).all()
    # each step's one time sits in the bin the counts say
    assert (d.counts[np.arange(50), d.bin_of(d.slowest)] == 1).all()


def test_draw_steps_bins_every_worker_and_marks_the_slowest():
    d = draw_steps(StepTime(1.0, jitter=0.05, pause_prob=0.02, pause=0.5), n=64, steps=40, bins=30, rng=0)
    assert d.counts.shape == (40, 30) and (d.counts.sum(axis=1) == 64).all()
    assert d.edges[0] < d.slowest.min() and d.slowest.max() < d.edges[-1]
    # the slowest's bin is the highest bin with a worker in it
    highest = np.array([np.flatnonzero(row).max() for row in d.counts])
    assert (d.bin_of(d.slowest) == highest).all()
    assert d.mean == pytest.approx(1.01)


def test_draw_steps_is_seeded():
    a, b = (draw_steps(stats.norm(), n=512, steps=20, rng=7) for _ in range(2))
    assert np.array_equal(a.slowest, b.slowest) and np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.slowest, draw_steps(stats.norm(), n=512, steps=20, rng=8).slowest)


def test_draw_steps_maxima_follow_the_exact_expected_maximum():
    dist = step_time_dist("normal", 1.0, 0.1)
    d = draw_steps(dist, n=4096, steps=400, rng=1)
    exact = expected_max(dist, 4096)
    # 400 maxima, sd about 0.033 s: the mean is within 4 standard errors of E[max]
    assert abs(d.slowest.mean() - exact) < 4 * d.slowest.std() / np.sqrt(400)
    # the slowest of 4096 is narrow: about a third of one worker's spread
    assert 0.25 < d.slowest.std() / 0.1 < 0.4
    assert d.so_far(10).tolist() == d.slowest[:10].tolist()


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0}, "n must be a whole number in 1..65536, got 0"),
    ({"steps": 0}, "steps must be a whole number in 1..5000, got 0"),
    ({"bins": 2}, "bins must be a whole number in 5..200, got 2"),
])
def test_draw_steps_rejects_bad_input(kwargs, message):
    args = {"n": 8, "steps": 5, **kwargs}
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        draw_steps(stats.norm(), **args)


def test_so_far_checks_k():
    d = draw_steps(stats.norm(), n=8, steps=5, rng=0)
    with pytest.raises(ValueError, match="k must be a whole number in 1..5, got 6"):
        d.so_far(6)
