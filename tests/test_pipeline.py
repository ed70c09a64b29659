"""Tests for the pipeline schedule and simulator (straggle_edu.models.pipeline)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.models.pipeline import schedule_1f1b


def test_schedule_1f1b_two_stages_by_hand():
    assert schedule_1f1b(2, 3) == [
        [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("B", 2)],
        [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2)],
    ]


def test_schedule_1f1b_four_stages_first_stage_by_hand():
    # Megatron's first stage with P=4, M=6: 3 warm-up forwards, 3 pairs, 3 cool-down backwards.
    assert schedule_1f1b(4, 6)[0] == [
        ("F", 0), ("F", 1), ("F", 2),
        ("F", 3), ("B", 0), ("F", 4), ("B", 1), ("F", 5), ("B", 2),
        ("B", 3), ("B", 4), ("B", 5),
    ]


def test_schedule_1f1b_one_stage_alternates():
    assert schedule_1f1b(1, 2) == [[("F", 0), ("B", 0), ("F", 1), ("B", 1)]]


@given(st.integers(1, 8), st.integers(1, 12))
def test_schedule_1f1b_properties(P, M):
    sched = schedule_1f1b(P, M)
    assert len(sched) == P
    for s, ops in enumerate(sched):
        assert sorted(ops) == sorted([("F", m) for m in range(M)] + [("B", m) for m in range(M)])
        # forwards and backwards each run in microbatch order
        assert [m for k, m in ops if k == "F"] == list(range(M))
        assert [m for k, m in ops if k == "B"] == list(range(M))
        # B of m after F of m; in flight never exceeds P - s
        done_f, in_flight = set(), 0
        for kind, m in ops:
            if kind == "F":
                done_f.add(m)
                in_flight += 1
            else:
                assert m in done_f
                in_flight -= 1
            assert in_flight <= P - s
        warmup = next(i for i, (k, _) in enumerate(ops) if k == "B")
        assert warmup == min(P - s - 1, M) + (1 if M > P - s - 1 else 0)


@pytest.mark.parametrize("bad", [0, -1, 2.5, None, "x"])
def test_schedule_1f1b_bad_input(bad):
    with pytest.raises(ValueError, match="stages must be"):
        schedule_1f1b(bad, 4)
    with pytest.raises(ValueError, match="microbatches must be"):
        schedule_1f1b(4, bad)


# ---------------------------------------------------------------------------
# The simulator
# ---------------------------------------------------------------------------

import math

import numpy as np

from straggle_edu.models.pipeline import (
    OP_KINDS,
    pipeline_schedule,
    pipeline_step_times,
    simulate_pipeline,
    slowed,
    uniform_pipeline_time,
)


def reference_step(P, M, fwd, bwd, p2p, ar, opt, D=1, v=1, schedule="1f1b"):
    """An independent, pure-Python event loop: sweep the devices and run any
    op whose dependencies have ended, until every op has run."""
    order = pipeline_schedule(P, M, schedule, v)
    V = P * v
    ends = {}
    for d in range(D):
        pos = [0] * P
        free = [0.0] * P
        done = 0
        while done < sum(map(len, order)):
            progressed = False
            for s in range(P):
                if pos[s] == len(order[s]):
                    continue
                kind, m, c = order[s][pos[s]]
                j = c * P + s
                if kind == "F":
                    dep = None if j == 0 else ("F", m, j - 1)
                    link = (j - 1) % P
                    dur = fwd[d][s][m] / v
                else:
                    dep = None if j == V - 1 else ("B", m, j + 1)
                    link = j % P
                    dur = bwd[d][s][m] / v
                if dep is not None and (d, *dep) not in ends:
                    continue
                ready = free[s] if dep is None else max(free[s], ends[(d, *dep)] + p2p[d][link][m])
                ends[(d, kind, m, j)] = free[s] = ready + dur
                pos[s] += 1
                done += 1
                progressed = True
            assert progressed, "deadlock in reference"
    step = 0.0
    for s in range(P):
        last = max(ends[(d, "B", m, c * P + s)] for d in range(D) for m in range(M) for c in range(v))
        ar_end = last + max(ar[d][s] for d in range(D))
        step = max(step, max(ar_end + opt[d][s] for d in range(D)))
    return step


def test_simulate_pipeline_equal_times_formula():
    # Tested formula: with equal op times and free communication,
    # step time = (M + P - 1) * (f + b) for P stages and M microbatches.
    for P, M in [(1, 1), (1, 5), (2, 3), (4, 8), (8, 4), (5, 1)]:
        run = simulate_pipeline(P, M, forward=1.0, backward=2.0)
        assert run.step_time == (M + P - 1) * (1.0 + 2.0)
        assert run.step_time == uniform_pipeline_time(P, M, 1.0, 2.0)


def test_simulate_pipeline_gpipe_same_bubble():
    for P, M in [(2, 3), (4, 8), (3, 1)]:
        run = simulate_pipeline(P, M, 0.5, 1.0, schedule="gpipe")
        assert math.isclose(run.step_time, (M + P - 1) * 1.5)


def test_simulate_pipeline_interleaved_formula():
    # Tested formula (Narayanan et al. 2021): (M + (P - 1) / v) * (f + b).
    for P, M, v in [(2, 4, 2), (4, 8, 2), (4, 8, 4), (3, 9, 3), (2, 2, 2)]:
        run = simulate_pipeline(P, M, 1.0, 2.0, chunks=v)
        assert math.isclose(run.step_time, (M + (P - 1) / v) * 3.0)
        assert math.isclose(run.step_time, uniform_pipeline_time(P, M, 1.0, 2.0, chunks=v))


def _times(run, kind, d, s, m):
    r = run.ops[(run.ops["kind"] == kind) & (run.ops["dp"] == d) & (run.ops["stage"] == s)
                & (run.ops["microbatch"] == m)]
    assert len(r) == 1
    return float(r["start"][0]), float(r["end"][0])


def test_simulate_pipeline_two_stages_by_hand():
    # P=2, M=2, f=1, b=2. Stage 0 runs F0 F1 B0 B1, stage 1 runs F0 B0 F1 B1.
    run = simulate_pipeline(2, 2, 1.0, 2.0)
    assert _times(run, "F", 0, 0, 0) == (0, 1)
    assert _times(run, "F", 0, 0, 1) == (1, 2)
    assert _times(run, "F", 0, 1, 0) == (1, 2)
    assert _times(run, "B", 0, 1, 0) == (2, 4)
    assert _times(run, "F", 0, 1, 1) == (4, 5)
    assert _times(run, "B", 0, 1, 1) == (5, 7)
    assert _times(run, "B", 0, 0, 0) == (4, 6)
    assert _times(run, "B", 0, 0, 1) == (7, 9)
    assert run.step_time == 9.0


def test_simulate_pipeline_delayed_op_by_hand():
    # Same case, F of microbatch 1 on stage 0 takes 4 s instead of 1 s (+3 s).
    # Stage 0: F1 [1, 5]; stage 1: F1 waits for it, [5, 6], B1 [6, 8];
    # stage 0: B0 [5, 7] (its program order now binds), B1 [8, 10].
    # The step grows by 1 s, not 3 s: the op had 2 s of slack.
    f = slowed(1.0, 4.0, (1, 2, 2), stage=0, microbatch=1)
    run = simulate_pipeline(2, 2, f, 2.0)
    assert _times(run, "F", 0, 0, 1) == (1, 5)
    assert _times(run, "F", 0, 1, 1) == (5, 6)
    assert _times(run, "B", 0, 1, 1) == (6, 8)
    assert _times(run, "B", 0, 0, 0) == (5, 7)
    assert _times(run, "B", 0, 0, 1) == (8, 10)
    assert run.step_time == 10.0
    base = simulate_pipeline(2, 2, 1.0, 2.0)
    row = base.ops[(base.ops["kind"] == "F") & (base.ops["stage"] == 0) & (base.ops["microbatch"] == 1)]
    assert float(row["slack"][0]) == 2.0


def test_simulate_pipeline_communication_by_hand():
    # P=2, M=2, f=1, b=2, p2p=0.5, all-reduce 1, optimizer 0.5.
    run = simulate_pipeline(2, 2, 1.0, 2.0, p2p=0.5, allreduce=1.0, optimizer=0.5)
    assert _times(run, "F", 0, 1, 0) == (1.5, 2.5)
    assert _times(run, "F", 0, 1, 1) == (4.5, 5.5)
    assert _times(run, "B", 0, 0, 0) == (5, 7)
    assert _times(run, "B", 0, 0, 1) == (8, 10)
    assert _times(run, "send-B", 0, 1, 1) == (7.5, 8)
    assert _times(run, "allreduce", 0, 0, -1) == (10, 11)
    assert _times(run, "allreduce", 0, 1, -1) == (7.5, 8.5)
    assert _times(run, "optimizer", 0, 0, -1) == (11, 11.5)
    assert run.step_time == 11.5


def test_simulate_pipeline_slow_worker_waits_at_dp_barrier():
    # D=2, P=2, M=2; worker (dp=1, stage=1) has b=4. Its replica ends stage 0 at 13,
    # the other replica at 9; stage 0's all-reduce is a barrier: both start it at 13.
    b = slowed(2.0, 2.0, (2, 2, 2), dp=1, stage=1)
    run = simulate_pipeline(2, 2, 1.0, b, dp=2, allreduce=1.0)
    assert _times(run, "B", 0, 0, 1) == (7, 9)
    assert _times(run, "B", 1, 0, 1) == (11, 13)
    assert _times(run, "allreduce", 0, 0, -1) == (13, 14)
    assert _times(run, "allreduce", 0, 1, -1) == (11, 12)
    assert run.step_time == 14.0
    crit = run.critical_ops()
    assert set(crit["dp"][crit["kind"] == "B"]) == {1}
    assert set(crit["dp"][np.isin(crit["kind"], ["allreduce", "optimizer"])]) == {1}
    # the fast replica's last backward has 4 s of slack
    row = run.ops[(run.ops["kind"] == "B") & (run.ops["dp"] == 0) & (run.ops["stage"] == 0)
                  & (run.ops["microbatch"] == 1)]
    assert float(row["slack"][0]) == 4.0


def test_simulate_pipeline_allreduce_lasts_as_long_as_slowest_participant():
    ar = np.array([[1.0, 1.0], [3.0, 1.0]])
    run = simulate_pipeline(2, 2, 1.0, 2.0, dp=2, allreduce=ar)
    assert _times(run, "allreduce", 1, 0, -1) == (9, 12)
    assert run.step_time == 12.0


@given(
    P=st.integers(1, 4),
    M=st.integers(1, 5),
    D=st.integers(1, 3),
    seed=st.integers(0, 10**6),
    schedule=st.sampled_from(["1f1b", "gpipe"]),
)
def test_simulate_pipeline_matches_reference_event_loop(P, M, D, seed, schedule):
    rng = np.random.default_rng(seed)
    fwd, bwd = rng.uniform(0.1, 2, (D, P, M)), rng.uniform(0.1, 3, (D, P, M))
    p2p = rng.uniform(0, 0.5, (D, P, M))
    ar, opt = rng.uniform(0, 1, (D, P)), rng.uniform(0, 0.3, (D, P))
    run = simulate_pipeline(P, M, fwd, bwd, dp=D, p2p=p2p, allreduce=ar, optimizer=opt, schedule=schedule)
    want = reference_step(P, M, fwd.tolist(), bwd.tolist(), p2p.tolist(), ar.tolist(), opt.tolist(), D=D,
                          schedule=schedule)
    assert math.isclose(run.step_time, want, rel_tol=1e-12)


@given(P=st.integers(1, 4), k=st.integers(1, 3), v=st.integers(2, 3), seed=st.integers(0, 10**6))
def test_simulate_pipeline_interleaved_matches_reference(P, k, v, seed):
    rng = np.random.default_rng(seed)
    M = P * k
    fwd, bwd = rng.uniform(0.1, 2, (1, P, M)), rng.uniform(0.1, 3, (1, P, M))
    p2p = rng.uniform(0, 0.5, (1, P, M))
    run = simulate_pipeline(P, M, fwd, bwd, p2p=p2p, chunks=v)
    want = reference_step(P, M, fwd.tolist(), bwd.tolist(), p2p.tolist(), [[0] * P], [[0] * P], v=v)
    assert math.isclose(run.step_time, want, rel_tol=1e-12)


@given(P=st.integers(1, 5), M=st.integers(1, 6), D=st.integers(1, 3), seed=st.integers(0, 10**6),
       v=st.sampled_from([1, 2]))
def test_simulate_pipeline_critical_path_properties(P, M, D, seed, v):
    if v > 1:
        M = P * M
    rng = np.random.default_rng(seed)
    run = simulate_pipeline(
        P, M, rng.uniform(0, 2, (D, P, M)), rng.uniform(0, 3, (D, P, M)), dp=D,
        p2p=rng.uniform(0, 0.5, (D, P, M)), allreduce=rng.uniform(0, 1, (D, P)),
        optimizer=rng.uniform(0, 0.3, (D, P)), chunks=v,
    )
    path = run.critical_ops()
    # starts at 0, back to back, ends at the step time, durations sum to it
    assert path["start"][0] == 0
    assert np.allclose(path["start"][1:], path["end"][:-1], rtol=0, atol=1e-9)
    assert math.isclose(path["end"][-1], run.step_time)
    assert math.isclose(float(np.sum(path["end"] - path["start"])), run.step_time, abs_tol=1e-9)
    # slack: never negative, zero along the critical path
    assert (run.ops["slack"] >= -1e-9).all()
    assert np.allclose(path["slack"], 0, atol=1e-9)
    assert run.ops["critical"].sum() == len(run.critical_path)
    # every op ends after it starts, and within the step
    assert (run.ops["end"] >= run.ops["start"]).all()
    assert (run.ops["end"] <= run.step_time + 1e-9).all()
    assert set(run.ops["kind"]) <= set(OP_KINDS)
    assert 0 < run.utilization <= 1 or run.step_time == 0


@given(P=st.integers(1, 4), M=st.integers(1, 5), seed=st.integers(0, 10**6), extra=st.floats(0, 5))
def test_simulate_pipeline_slowing_one_op_costs_delay_minus_slack(P, M, seed, extra):
    rng = np.random.default_rng(seed)
    f, b = rng.uniform(0.1, 2, (1, P, M)), rng.uniform(0.1, 3, (1, P, M))
    base = simulate_pipeline(P, M, f, b)
    s, m = int(rng.integers(P)), int(rng.integers(M))
    f2 = f.copy()
    f2[0, s, m] += extra
    run = simulate_pipeline(P, M, f2, b)
    # Only paths through the op grow, by `extra`; the longest of them was `slack` short
    # of the step time, so the step grows by exactly max(0, extra - slack).
    row = base.ops[(base.ops["kind"] == "F") & (base.ops["stage"] == s) & (base.ops["microbatch"] == m)]
    slack = float(row["slack"][0])
    assert math.isclose(run.step_time - base.step_time, max(0.0, extra - slack), abs_tol=1e-9)


def test_simulate_pipeline_op_times_shapes():
    run = simulate_pipeline(3, 4, 1.0, 2.0, dp=2)
    start, end = run.op_times("F")
    assert start.shape == (2, 3, 4)
    assert np.allclose(end - start, 1.0)
    start, end = simulate_pipeline(2, 4, 1.0, 2.0, chunks=2).op_times("B")
    assert start.shape == (1, 2, 4, 2)
    assert np.allclose(end - start, 1.0)
    with pytest.raises(ValueError, match="kind must be 'F' or 'B'"):
        run.op_times("send-F")


def test_simulate_pipeline_is_frozen():
    run = simulate_pipeline(2, 2, 1.0, 1.0)
    with pytest.raises(Exception):
        run.step_time = 0
    with pytest.raises(ValueError):
        run.ops["start"][0] = 5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(forward=-1.0), "forward must be >= 0, got -1.0"),
        (dict(backward=float("nan")), "backward must be >= 0 \\(not NaN\\)"),
        (dict(forward=np.ones(5)),
         r"forward must be a number or an array broadcastable to \(dp, stages, microbatches\) = \(1, 2, 3\), got an array of shape \(5,\)"),
        (dict(allreduce=np.ones((3, 3))), r"allreduce must be .* broadcastable to \(dp, stages\)"),
        (dict(schedule="zero-bubble"), "schedule must be one of '1f1b', 'gpipe', got 'zero-bubble'"),
        (dict(chunks=2), "microbatches must be a multiple of stages=2 when chunks > 1"),
        (dict(chunks=0), "chunks must be a whole number >= 1, got 0"),
        (dict(dp=0), "dp must be a whole number >= 1, got 0"),
        (dict(p2p=float("inf")), "p2p must be >= 0"),
    ],
)
def test_simulate_pipeline_bad_input(kwargs, match):
    args = dict(forward=1.0, backward=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate_pipeline(2, 3, **args)


def test_simulate_pipeline_refuses_oversize():
    with pytest.raises(ValueError, match="memory budget"):
        simulate_pipeline(64, 4096, 1.0, 1.0, dp=4096)


def test_pipeline_schedule_gpipe_with_chunks_refused():
    with pytest.raises(ValueError, match="chunks must be 1 with schedule='gpipe'"):
        pipeline_schedule(2, 4, "gpipe", 2)


def test_slowed_picks_the_slice():
    out = slowed(1.0, 2.0, (2, 3, 4), dp=1, stage=2)
    assert out.sum() == 24 + 4
    assert (out[1, 2] == 2).all()
    assert slowed(1.0, 2.0, (2, 3, 4), stage=0).sum() == 24 + 8
    with pytest.raises(ValueError, match="stage must be a whole number in 0..2, got 3"):
        slowed(1.0, 2.0, (2, 3, 4), stage=3)
    with pytest.raises(ValueError, match="factor must be >= 0"):
        slowed(1.0, -1.0, (2, 3, 4))


@given(P=st.integers(1, 4), M=st.integers(1, 5), D=st.integers(1, 3), seed=st.integers(0, 10**6),
       schedule=st.sampled_from(["1f1b", "gpipe"]))
def test_pipeline_step_times_matches_simulate_pipeline(P, M, D, seed, schedule):
    rng = np.random.default_rng(seed)
    T = 3
    f, b = rng.uniform(0.1, 2, (T, D, P, M)), rng.uniform(0.1, 3, (T, D, P, M))
    p2p, ar, opt = rng.uniform(0, 0.5, (T, D, P, M)), rng.uniform(0, 1, (T, D, P)), rng.uniform(0, 1, (D, P))
    got = pipeline_step_times(P, M, f, b, dp=D, p2p=p2p, allreduce=ar, optimizer=opt, schedule=schedule)
    assert got.shape == (T,)
    for t in range(T):
        want = simulate_pipeline(P, M, f[t], b[t], dp=D, p2p=p2p[t], allreduce=ar[t], optimizer=opt,
                                 schedule=schedule).step_time
        assert math.isclose(got[t], want, rel_tol=1e-12)


def test_pipeline_step_times_scalar_and_bad_shapes():
    assert pipeline_step_times(4, 8, 1.0, 2.0) == 33.0
    assert isinstance(pipeline_step_times(4, 8, 1.0, 2.0), float)
    assert pipeline_step_times(4, 8, 1.0, 2.0, chunks=2) == 28.5
    with pytest.raises(ValueError, match="share their leading axes"):
        pipeline_step_times(2, 2, np.ones((3, 1, 2, 2)), np.ones((4, 1, 2, 2)))
    with pytest.raises(ValueError, match="backward must be >= 0"):
        pipeline_step_times(2, 2, 1.0, -2.0)


def test_pipeline_run_op_lookup():
    run = simulate_pipeline(2, 2, 1.0, 2.0, dp=2, p2p=0.5)
    assert run.op("F", dp=1, stage=1, microbatch=0)["start"] == 1.5
    assert run.op("send-F", dp=0, stage=0, microbatch=1)["peer"] == 1
    with pytest.raises(ValueError, match="no 'F' op at dp=2"):
        run.op("F", dp=2, stage=0, microbatch=0)
    with pytest.raises(ValueError, match="kind must be one of"):
        run.op("gc")


def test_pipeline_run_select():
    run = simulate_pipeline(2, 3, 1.0, 2.0, dp=2, p2p=0.1)
    assert run.select().all()
    assert run.select("B", dp=1, stage=1, microbatch=2).sum() == 1
    assert run.select("allreduce").sum() == 4
    assert run.select(["send-F", "send-B"], dp=0).sum() == 6


@given(P=st.integers(1, 5), M=st.integers(1, 6), D=st.integers(1, 3), seed=st.integers(0, 10**6),
       schedule=st.sampled_from(["1f1b", "gpipe"]))
def test_simulate_pipeline_step_between_busiest_device_and_serial_sum(P, M, D, seed, schedule):
    rng = np.random.default_rng(seed)
    f, b = rng.uniform(0, 2, (D, P, M)), rng.uniform(0, 3, (D, P, M))
    x, ar, opt = rng.uniform(0, 0.5, (D, P, M)), rng.uniform(0, 1, (D, P)), rng.uniform(0, 0.3, (D, P))
    step = simulate_pipeline(P, M, f, b, dp=D, p2p=x, allreduce=ar, optimizer=opt, schedule=schedule).step_time
    busiest = (f + b).sum(axis=2) + ar.max(axis=0) + opt  # every device must do its own work, then sync
    assert step >= busiest.max() - 1e-9
    serial = (f + b).sum(axis=(1, 2)).max() + 2 * x.sum(axis=(1, 2)).max() + ar.max(axis=0).sum() + opt.max()
    assert step <= serial + 1e-9  # never worse than running every op of the slowest replica one after another
