"""Tests for the data-parallel step model (straggle_edu.models.training_step)."""

import math

import numpy as np
import pytest

from straggle_edu.models.cluster import AllReduce, Cluster, expected_step_time, scaling_efficiency
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.training_step import data_parallel_scaling, data_parallel_step_time


@pytest.mark.parametrize(
    "t",
    [StepTime(1.0, jitter=0.05), StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5),
     StepTime(2.0, jitter=0.0, pause_prob=0.02, pause=1.0), StepTime(0.3, jitter=0.1)],
)
def test_data_parallel_scaling_matches_exact_cluster_model(t):
    sync = AllReduce(1e9, 100e9, 5e-6)
    ns = [1, 2, 8, 100, 4096]
    s = data_parallel_scaling(ns, t, sync=sync)
    for i, n in enumerate(ns):
        c = Cluster.uniform(n, t, sync=sync)
        assert math.isclose(s.step_time[i], expected_step_time(c), rel_tol=1e-9)
        assert math.isclose(s.straggler_efficiency[i], scaling_efficiency(c), rel_tol=1e-9)


def test_data_parallel_scaling_one_worker_is_perfect():
    s = data_parallel_scaling(1, StepTime(1.0, jitter=0.1))
    assert s.speedup[0] == pytest.approx(1.0)
    assert s.efficiency[0] == pytest.approx(1.0)
    assert s.wait[0] == 0.0


def test_data_parallel_scaling_no_jitter_no_pause_is_linear():
    s = data_parallel_scaling([1, 10, 1000], StepTime(1.0, jitter=0.0))
    assert np.allclose(s.speedup, [1, 10, 1000])
    assert np.allclose(s.efficiency, 1.0)


def test_data_parallel_scaling_pause_closed_form():
    # no jitter: E[step] = 1 + 0.5 * (1 - 0.99**n) + sync
    s = data_parallel_scaling([1, 100], StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5), sync=0.1)
    assert np.allclose(s.step_time, [1.005 + 0.1, 1 + 0.5 * (1 - 0.99**100) + 0.1])


def test_data_parallel_scaling_efficiency_falls_with_n():
    ns = np.unique(np.geomspace(1, 4096, 30).astype(int))
    s = data_parallel_scaling(ns, StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5), sync=AllReduce(1e9, 1e11))
    assert (np.diff(s.efficiency) < 0).all()
    assert (np.diff(s.throughput) > 0).all()
    assert (s.efficiency <= 1 + 1e-12).all()


def test_data_parallel_scaling_rows_add_up():
    s = data_parallel_scaling([1, 64], StepTime(1.0, jitter=0.05), sync=0.2)
    rows = s.rows()
    assert len(rows) == 6
    for n, step in zip([1, 64], s.step_time):
        assert math.isclose(sum(r["seconds"] for r in rows if r["n"] == n), step)


def test_data_parallel_step_time_and_bad_input():
    assert data_parallel_step_time(0.1, 0.2, jitter=0.0).mean() == pytest.approx(0.3)
    with pytest.raises(ValueError, match="forward \\+ backward must be > 0"):
        data_parallel_step_time(0.0, 0.0)
    with pytest.raises(ValueError, match="step_time must be a StepTime"):
        data_parallel_scaling(4, 1.0)
    with pytest.raises(ValueError, match="n must be a whole number >= 1"):
        data_parallel_scaling([0, 4], StepTime(1.0))
    with pytest.raises(ValueError, match="sync must be >= 0"):
        data_parallel_scaling(4, StepTime(1.0), sync=-1)
