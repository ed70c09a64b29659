"""Synthetic traces with injected causes: the analysis recovers S and names the culprit.

Each expected S is computed here, independently of the analyzer, from the
injected durations and the method's own definition: the ideal compute op is
the mean of its (optype, step, microbatch) group across DP ranks and stages
(so it includes the straggler), comm ops take the median transfer, and step
times come from the pipeline simulator of ``straggle_edu.models.pipeline``
or from a closed form.
"""

import math

import numpy as np
import pytest

from straggle_edu.models.pipeline import pipeline_step_times, simulate_pipeline
from straggle_edu.traces import analyze
from straggle_edu.traces.diagnose import diagnose
from straggle_edu.traces.synthetic import CAUSES, example_trace, synthetic_trace
from straggle_edu.traces.whatif import analyze_ops

QUIET = dict(p2p=0, params_gather=0, reduce_scatter=0, layernorm=0, embedding=0, clip=0, optimizer=0, gc=0)
F, B = 1.0, 2.0


def S_of(orig_steps, ideal_steps):
    return float(np.mean(orig_steps) / np.mean(ideal_steps))


def test_one_2x_worker_among_4_gives_1_6_not_2():
    a = analyze(synthetic_trace(4, 1, 4, 3, forward=F, backward=B, slow_worker=(2, 0, 2.0), **QUIET))
    assert a.slowdown == pytest.approx(2 / ((2 + 1 + 1 + 1) / 4), rel=0.02)  # 1.6
    assert a.culprit("by_dp_rank") == 2 and a.culprit() == (2, 0)
    assert a.by_worker[(2, 0)] == pytest.approx(a.slowdown, rel=1e-9)
    assert all(v == pytest.approx(1.0) for k, v in a.by_worker.items() if k != (2, 0))
    assert a.m_w == pytest.approx(1.0)


@pytest.mark.parametrize("dp, pp, mb, worker, factor", [(4, 2, 4, (1, 1), 2.0), (2, 4, 8, (1, 0), 1.5), (3, 3, 5, (0, 2), 3.0)])
def test_slow_worker(dp, pp, mb, worker, factor):
    a = analyze(synthetic_trace(dp, pp, mb, 2, forward=F, backward=B, slow_worker=(*worker, factor), **QUIET))
    slow = np.ones((dp, pp, mb))
    slow[worker] = factor
    ideal = np.full((dp, pp, mb), slow.mean(axis=(0, 1), keepdims=True)[0, 0, 0])  # group mean over DP and PP
    want = S_of(pipeline_step_times(pp, mb, F * slow, B * slow, dp=dp),
                pipeline_step_times(pp, mb, F * ideal, B * ideal, dp=dp))
    assert a.slowdown == pytest.approx(want, rel=0.02)
    assert a.culprit() == worker
    assert a.culprit("by_dp_rank") == worker[0] and a.culprit("by_stage") == worker[1]
    assert a.m_w > 0.9


@pytest.mark.parametrize("dp, pp, mb, factor", [(2, 4, 8, 1.5), (4, 2, 4, 1.3), (1, 3, 6, 2.0)])
def test_long_last_stage(dp, pp, mb, factor):
    a = analyze(synthetic_trace(dp, pp, mb, 2, forward=F, backward=B, last_stage=factor, **QUIET))
    orig = np.ones((dp, pp, mb))
    orig[:, -1] = factor
    ideal = np.full_like(orig, orig.mean())
    want = S_of(pipeline_step_times(pp, mb, F * orig, B * orig, dp=dp),
                pipeline_step_times(pp, mb, F * ideal, B * ideal, dp=dp))
    assert a.slowdown == pytest.approx(want, rel=0.02)
    assert a.culprit("by_stage") == pp - 1
    assert a.m_s > 0.8
    assert a.m_w < 0.5 or dp * pp <= 4  # not a few bad machines (unless the stage is one machine)


def test_sequence_length_imbalance():
    dp, pp, mb, steps = 4, 2, 6, 5
    tokens = np.random.default_rng(7).lognormal(-0.125, 0.5, size=(steps, dp, mb))
    trace = synthetic_trace(dp, pp, mb, steps, forward=F, backward=B, seq_imbalance=tokens, **QUIET)
    a = analyze(trace)
    orig = np.broadcast_to(tokens[:, :, None, :], (steps, dp, pp, mb))
    t_orig = pipeline_step_times(pp, mb, F * orig, B * orig, dp=dp)
    # default (the artifact's) ideal: every forward (backward) takes the mean over the whole trace
    ideal = np.full(orig.shape, tokens.mean())
    t_ideal = pipeline_step_times(pp, mb, F * ideal, B * ideal, dp=dp)
    assert a.slowdown == pytest.approx(S_of(t_orig, t_ideal), rel=0.02)
    np.testing.assert_allclose(list(a.per_step.values()), t_orig / t_ideal, rtol=0.02)
    # per-step ideal: mean over DP ranks and stages of each (step, microbatch)
    per_step = analyze_ops(trace, ideal="per-step")
    ideal = np.broadcast_to(tokens.mean(axis=1)[:, None, None, :], orig.shape)
    t_ideal = pipeline_step_times(pp, mb, F * ideal, B * ideal, dp=dp)
    assert per_step.slowdown == pytest.approx(S_of(t_orig, t_ideal), rel=0.02)
    np.testing.assert_allclose(list(per_step.per_step.values()), t_orig / t_ideal, rtol=0.02)
    # the culprit: compute, spread over microbatches and DP ranks, not a few machines
    assert a.ranking("by_optype")[0][0] in ("forward-compute", "backward-compute")
    assert a.details["microbatch"]["cv"] >= 0.1
    assert "uneven sequence lengths" in dict(diagnose(a))["Which microbatch?"]
    assert a.m_w < 0.5


def test_random_gc_pauses():
    dp, pp, mb, steps = 3, 2, 4, 6
    pauses = np.zeros((steps, dp, pp))
    pauses[1, 2, 0] = 10.0
    pauses[4, 0, 1] = 15.0
    pauses[4, 1, 0] = 1.0
    a = analyze(synthetic_trace(dp, pp, mb, steps, forward=F, backward=B, gc_pauses=pauses, **QUIET))
    # each worker's last backward ends at its pipeline time; gc runs right after; a global barrier follows
    run = simulate_pipeline(pp, mb, F, B, dp=dp)
    _, end_b = run.op_times("B")
    done = end_b.max(axis=2)  # (dp, pp)
    t_orig = np.array([(done + pauses[s]).max() for s in range(steps)])
    t_ideal = np.array([(done + pauses[s].mean()).max() for s in range(steps)])
    assert a.slowdown == pytest.approx(S_of(t_orig, t_ideal), rel=0.02)
    assert a.culprit("by_optype") == "gc"
    # transient: most steps are not slowed at all
    per = np.array(list(a.per_step.values()))
    assert np.sum(per > 1.01) == 2
    assert "transient" in dict(diagnose(a))["Persistent or one-off?"]


def test_slow_link_closed_form():
    # P = 2, M = 1: F0 on stage 0, its activations cross the link, F0 and B0 on stage 1, the
    # gradient crosses back, B0 on stage 0: step = 2 (f + b) + 2 t on a link of transfer time t.
    dp, t, k = 4, 0.25, 5.0
    a = analyze(synthetic_trace(dp, 2, 1, 3, forward=F, backward=B, slow_link=(1, 0, k), **{**QUIET, "p2p": t}))
    want = (2 * (F + B) + 2 * k * t) / (2 * (F + B) + 2 * t)  # the median transfer is the healthy t
    assert a.slowdown == pytest.approx(want, rel=0.02)
    assert a.culprit("by_dp_rank") == 1
    top = a.ranking("by_optype")[0][0]
    assert top in ("forward-pp-comm", "backward-pp-comm")  # the artifact's names for send/recv
    assert "communication" in dict(diagnose(a))["Compute or communication?"]


@pytest.mark.parametrize("cause", [c for c in CAUSES if CAUSES[c]["culprit"]])
def test_every_preset_cause_names_its_culprit(cause):
    a = analyze(example_trace(cause))
    by, want = CAUSES[cause]["culprit"]
    assert a.culprit(by) == want
    assert a.slowdown > 1.05
    assert a.replay_error < 1e-9


def test_no_cause_no_straggling():
    a = analyze(example_trace("none"))
    assert 1.0 <= a.slowdown < 1.03
    assert "Not much" in dict(diagnose(a))["Is the job straggling?"]


def test_mw_uses_the_ceil_3_percent_slowest_workers():
    a = analyze(synthetic_trace(40, 1, 2, 2, forward=F, backward=B, slow_worker=(7, 0, 2.0), **QUIET))
    assert a.details["mw_workers"] == math.ceil(0.03 * 40) == 2
    assert (7, 0) in a.details["mw_fixed"]
    assert a.m_w == pytest.approx(1.0)
