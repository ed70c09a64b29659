"""The dependency model and the replay: recorded step times come back, rules hold."""

import numpy as np
import pytest

from straggle_edu.models.pipeline import uniform_pipeline_time
from straggle_edu.traces import TraceError, analyze
from straggle_edu.traces.optrace import OPTYPES, op_trace_from_columns
from straggle_edu.traces.replay import build_model, replay
from straggle_edu.traces.synthetic import synthetic_trace
from straggle_edu.traces.whatif import ideal_work, worker_timeline

QUIET = dict(p2p=0, params_gather=0, reduce_scatter=0, layernorm=0, embedding=0, clip=0, optimizer=0, gc=0)


@pytest.mark.parametrize("dp, pp, mb", [(1, 1, 1), (4, 1, 3), (1, 4, 2), (2, 2, 4), (3, 4, 6), (2, 3, 2)])
def test_replay_of_recorded_durations_reproduces_recorded_step_times(dp, pp, mb):
    t = synthetic_trace(dp, pp, mb, 3, jitter=0.1, seq_imbalance=0.3, gc_pauses=(0.3, 0.01), rng=dp * 10 + pp)
    a = analyze(t)
    np.testing.assert_allclose(a.step_time, a.recorded_step_time, rtol=1e-9)
    assert a.replay_error < 1e-9


def test_replay_drops_launch_gaps_and_reports_the_error():
    t = synthetic_trace(2, 2, 4, 4, gaps=0.002, rng=1)
    a = analyze(t)
    assert np.all(a.step_time < a.recorded_step_time)
    rel = np.abs(a.step_time - a.recorded_step_time) / a.recorded_step_time
    assert a.replay_error == pytest.approx(rel.mean())
    assert 0.001 < a.replay_error < 0.5


@pytest.mark.parametrize("pp, mb", [(1, 3), (2, 4), (4, 8), (4, 2)])
def test_equal_ops_give_the_1f1b_closed_form(pp, mb):
    f, b = 1.0, 2.0
    t = synthetic_trace(2, pp, mb, 2, forward=f, backward=b, **QUIET)
    a = analyze(t)
    want = uniform_pipeline_time(pp, mb, f, b)  # (M + P - 1)(f + b)
    np.testing.assert_allclose(a.step_time, want, rtol=1e-12)
    np.testing.assert_allclose(a.ideal_step_time, want, rtol=1e-12)
    assert a.slowdown == pytest.approx(1.0)


def test_combined_send_recv_rows_are_one_op_waiting_for_both_peers():
    P, M = 2, 4
    t = synthetic_trace(1, P, M, 1, rng=0)
    model = build_model(t)
    combined = [n for n in range(model.n_nodes) if len(model.node_codes[n]) == 2]
    # 1F1B steady state: M - (P - 1 - s) forwards followed by a backward on stage s, and
    # as many backwards followed by a forward on the last stage
    per_stage = np.bincount(model.node_stage[combined], minlength=P)
    assert per_stage.tolist() == [M - (P - 1), M - 1]
    for n in combined:
        codes = {OPTYPES[c] for c in model.node_codes[n]}
        assert codes in ({"forward-send", "backward-recv"}, {"backward-send", "forward-recv"})
        # each half pairs with the other stage; both halves may pair with one combined op there
        assert 1 <= len(model.peers[n]) <= 2
        assert all(model.node_stage[u] != model.node_stage[n] for u in model.peers[n])


def test_hand_checked_two_rank_barrier():
    # rank 0: forward 1 s, then the reduce-scatter waits for rank 1 until t = 2 and moves data for 0.5 s
    rows = {
        "dp_rank": [0, 0, 1, 1],
        "stage": [0, 0, 0, 0],
        "step": [0, 0, 0, 0],
        "optype": ["forward-compute", "grads-reduce-scatter"] * 2,
        "start_ts": [0.0, 1.0, 0.0, 2.0],
        "duration": [1.0, 1.5, 2.0, 0.5],
        "seq_id": [0, 0, 0, 0],
        "mb_id": [0, -1, 0, -1],
    }
    a = analyze(op_trace_from_columns(rows))
    assert a.step_time.tolist() == [2.5]
    assert a.ideal_step_time.tolist() == [2.0]  # mean forward 1.5, median transfer 0.5
    assert a.slowdown == pytest.approx(1.25)
    assert dict(a.by_dp_rank) == pytest.approx({0: 1.0, 1: 1.25})
    assert a.by_optype["forward-compute"] == pytest.approx(1.25)
    assert a.by_optype["grads-reduce-scatter"] == pytest.approx(1.0)
    assert a.replay_error == 0.0


def test_global_barrier_at_gradient_clipping():
    # two stages, no pipeline traffic: only the clip joins them
    rows = {
        "dp_rank": [0] * 4,
        "stage": [0, 0, 1, 1],
        "step": [0] * 4,
        "optype": ["optimizer", "optimizer-clip-main-grad"] * 2,
        "start_ts": [0.0, 1.0, 0.0, 3.0],
        "duration": [1.0, 2.5, 3.0, 0.5],
        "seq_id": [0] * 4,
    }
    a = analyze(op_trace_from_columns(rows))
    assert a.step_time.tolist() == [3.5]
    # ideal: optimizer mean 2.0, clip median transfer 0.5
    assert a.ideal_step_time.tolist() == [2.5]


def test_recorded_order_that_deadlocks_is_a_layout_error():
    # stage 0 receives the backward before sending the forward that produces it
    rows = {
        "dp_rank": [0] * 6,
        "stage": [0, 0, 0, 1, 1, 1],
        "step": [0] * 6,
        "optype": ["forward-compute", "backward-recv", "forward-send", "forward-recv", "forward-compute", "backward-send"],
        "start_ts": [0.0, 1.0, 2.0, 0.0, 1.0, 2.0],
        "duration": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        "seq_id": [0] * 6,
        "mb_id": [0, -1, -1, -1, 0, -1],
    }
    with pytest.raises(TraceError, match="deadlocks"):
        analyze(op_trace_from_columns(rows, source="loop.csv"))


def test_ideal_work_per_step_group_means_and_median_transfers():
    t = synthetic_trace(4, 2, 3, 2, slow_worker=(0, 1, 3.0), jitter=0.05, rng=3)
    model = build_model(t)
    ideal = ideal_work(model, "per-step")
    fwd = [n for n in range(model.n_nodes) if model.node_codes[n] == (OPTYPES.index("forward-compute"),)]
    # group (forward-compute, step 0, microbatch 1) across both stages and all DP ranks
    cells = [(n, d) for n in fwd for d in range(4) if model.node_mb[n, 0, d] == 1]
    mean = np.mean([model.work[n, 0, d] for n, d in cells])
    for n, d in cells:
        assert ideal[n, 0, d] == pytest.approx(mean)
    rs = [n for n in range(model.n_nodes) if model.node_codes[n] == (OPTYPES.index("grads-reduce-scatter"),)]
    assert np.all(ideal[rs] == np.median(model.work[rs]))


def test_replay_is_vectorised_over_variants():
    t = synthetic_trace(2, 2, 3, 3, jitter=0.1, rng=5)
    model = build_model(t)
    w = model.work
    both = replay(model, lambda n: np.stack([w[n], 2 * w[n]]))
    one = replay(model, lambda n: w[n][None])
    np.testing.assert_allclose(both[0], one[0])
    np.testing.assert_allclose(both[1], 2 * one[0])  # every time doubles


def test_worker_timeline_drills_into_one_worker():
    t = synthetic_trace(2, 2, 3, 2, slow_worker=(1, 0, 2.0), rng=0)
    a = analyze(t)
    rows = worker_timeline(a, 1, 0, 1)
    comp = [r for r in rows if r["op"] == "forward-compute"]
    assert len(comp) == 3 and all(r["excess"] > 1.2 for r in comp)
    assert [r["microbatch"] for r in comp] == [0, 1, 2]
    assert all(r["ideal_end"] >= r["ideal_start"] for r in rows)
    with pytest.raises(ValueError, match="dp_rank must be in 0..1"):
        worker_timeline(a, 5, 0, 1)


def test_interleaved_pipeline_is_refused_clearly():
    t = synthetic_trace(1, 2, 2, 1)
    cols = t.columns()
    cols["mc"] = cols["mc"].copy()
    cols["mc"][cols["optype"] == "forward-compute"] = 1
    with pytest.raises(TraceError, match="interleaved .* 2 model chunks"):
        analyze(op_trace_from_columns(cols, source="v.csv"))


def test_send_recv_without_peers_is_a_local_no_op():
    # a first stage that records forward-recv ops, as some profilers do: they moved no data
    t = synthetic_trace(2, 2, 2, 2, rng=0)
    cols = {k: v.copy() for k, v in t.columns().items()}
    first = np.flatnonzero((cols["optype"] == "forward-compute") & (cols["stage"] == 0))
    extra = {k: v[first].copy() for k, v in cols.items()}
    extra["optype"][:] = "forward-recv"
    extra["duration"][:] = 0.0
    extra["mb_id"][:] = -1
    both = {k: np.concatenate([cols[k], extra[k]]) for k in cols}
    model = build_model(op_trace_from_columns(both))
    noops = [model.node_label[n] for n in range(model.n_nodes) if model.node_noop[n]]
    assert noops and all(lab == "forward-recv (no peer)" for lab in noops)
    a = analyze(op_trace_from_columns(both))
    assert a.replay_error < 1e-9


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25)
@given(
    dp=st.integers(1, 4),
    pp=st.integers(1, 4),
    mb=st.integers(1, 5),
    jitter=st.floats(0.0, 0.3),
    slow=st.floats(1.0, 4.0),
    seq=st.floats(0.0, 0.8),
    seed=st.integers(0, 1000),
)
def test_property_replay_reproduces_any_generated_trace(dp, pp, mb, jitter, slow, seq, seed):
    t = synthetic_trace(dp, pp, mb, 2, jitter=jitter, seq_imbalance=seq, slow_worker=(dp - 1, pp - 1, slow),
                        gc_pauses=(0.2, 0.01), rng=seed)
    a = analyze(t)
    assert a.replay_error < 1e-9
    assert a.waste == pytest.approx(1 - 1 / a.slowdown)
    # S can dip below 1: a pause on a worker with slack costs nothing, while the ideal
    # spreads it (as the mean) onto the critical path too; it stays close to 1 then
    assert a.slowdown > 0.9
    assert set(a.by_worker) == {(d, s) for d in range(dp) for s in range(pp)}
    for (d, s), v in a.by_worker.items():
        assert v == pytest.approx(min(a.by_dp_rank[d], a.by_stage[s]))
