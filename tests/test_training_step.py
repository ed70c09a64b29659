"""Tests for the training-step models (straggle_edu.models.training_step): DP scaling, and slowing part of a DP x PP step."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from straggle_edu.models.cluster import AllReduce, Cluster, expected_step_time, scaling_efficiency
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.training_step import (
    SLOW_OPS,
    SLOW_TARGETS,
    data_parallel_scaling,
    data_parallel_step_time,
    delay_response,
    interleaved_chunks,
    slow_mask,
    slowed_durations,
)


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
        assert math.isclose(s.efficiency[i], scaling_efficiency(c), rel_tol=1e-9)


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


# ------------------------------------------------ slowing part of a DP x PP step (moved from the explorer)


def test_slow_mask_targets():
    assert slow_mask((2, 3, 4), "nothing").sum() == 0
    assert slow_mask((2, 3, 4), "one worker", dp=1, stage=2).sum() == 4
    assert slow_mask((2, 3, 4), "one stage", stage=1).sum() == 8
    assert slow_mask((2, 3, 4), "one replica", dp=0).sum() == 12
    assert slow_mask((2, 3, 4), "one microbatch's op", dp=1, stage=2, microbatch=3)[1, 2, 3]
    with pytest.raises(ValueError, match="target must be one of"):
        slow_mask((2, 3, 4), "everything")


def test_slowed_durations_slows_only_the_chosen_op():
    mask = slow_mask((1, 2, 3), "one worker", stage=1)
    fwd, bwd = slowed_durations(mask, 2.0, "backward", forward=1.0, backward=2.0)
    assert (fwd == 1.0).all()
    assert bwd[0, 1].tolist() == [4.0, 4.0, 4.0] and (bwd[0, 0] == 2.0).all()
    fwd, bwd = slowed_durations(mask, 2.0, "both")
    assert fwd.sum() == 6 + 3 and bwd.sum() == 12 + 6
    with pytest.raises(ValueError, match="op must be one of"):
        slowed_durations(mask, 2.0, "sideways")


def test_delay_response_slack_of_one_forward_by_hand():
    # 2 stages, 2 microbatches, 1F1B, F = 1 s, B = 2 s: F of microbatch 1 on stage 0 can start
    # 2 s late without delaying anything (stage 1 is busy with F0, B0 meanwhile).
    mask = slow_mask((1, 2, 2), "one microbatch's op", stage=0, microbatch=1)
    r = delay_response(mask, "forward", [1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_allclose(r.added, [0, 1, 2, 3, 4])
    np.testing.assert_allclose(r.increase, [0, 0, 0, 1, 2])
    np.testing.assert_allclose(r.absorbed, [0, 1, 2, 2, 2])


def test_delay_response_one_replica_is_not_hidden_by_the_barrier():
    # A whole replica twice as slow: the DP barrier waits for it, so the step grows by its whole
    # pipeline's extra time, (M + P - 1) x (f + b) for a uniform slowdown.
    mask = slow_mask((2, 2, 4), "one replica", dp=1)
    r = delay_response(mask, "both", [1.0, 2.0], allreduce=1.0, optimizer=0.5)
    assert r.increase[1] == pytest.approx((4 + 2 - 1) * 3.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 6), st.sampled_from(SLOW_TARGETS),
       st.sampled_from(SLOW_OPS), st.sampled_from(["1f1b", "gpipe"]))
def test_delay_response_never_grows_more_than_the_work_added(dp, stages, microbatches, target, op, schedule):
    mask = slow_mask((dp, stages, microbatches), target, dp=dp - 1, stage=stages - 1, microbatch=0)
    r = delay_response(mask, op, schedule=schedule)
    assert (r.increase >= -1e-9).all()
    assert (r.increase <= r.added + 1e-9).all()
    assert (np.diff(r.increase) >= -1e-9).all()  # slower ops never shorten the step


def test_interleaved_chunks_needs_whole_rounds():
    assert interleaved_chunks(4, 8, 2) == 2
    assert interleaved_chunks(4, 6, 2) == 1
    assert interleaved_chunks(1, 3, 2) == 2
