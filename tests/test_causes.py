"""Tests for the root-cause models (straggle_edu.models.causes) and the study figures."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.models import osdi2025
from straggle_edu.models.causes import (
    _packed_documents,
    classify_bottleneck,
    classify_persistence,
    gc_expected_step_time,
    gc_step_times,
    output_layer_cost,
    sequence_cost,
    sequence_imbalance,
    sequence_lengths,
    stage_imbalance,
    straggler_scenario,
)
from straggle_edu.models.pipeline import simulate_pipeline, uniform_pipeline_time


# ------------------------------------------------------------- sequences ---


def test_sequence_cost_linear_plus_quadratic():
    assert sequence_cost(0) == 0.0
    assert sequence_cost(10, per_token=1.0, attention=0.0) == 10.0
    assert sequence_cost(10, per_token=0.0, attention=1.0) == 100.0
    assert np.allclose(sequence_cost([1, 2, 3], per_token=2.0, attention=0.5), [2.5, 6.0, 10.5])


def test_sequence_lengths_lognormal_quantiles():
    x = sequence_lengths(200_000, median=1000, sigma=0.5, max_len=10**6, rng=1)
    # log-normal: the q-quantile is median * exp(sigma * z_q)
    for q, z in [(0.5, 0.0), (0.9, 1.2815515655446004), (0.99, 2.3263478740408408)]:
        assert math.isclose(np.quantile(x, q), 1000 * math.exp(0.5 * z), rel_tol=0.02)
    clipped = sequence_lengths(1000, median=1000, sigma=3.0, max_len=2000, rng=1)
    assert clipped.min() >= 1 and clipped.max() == 2000
    assert sequence_lengths((3, 4), rng=0).shape == (3, 4)


def test_sequence_imbalance_equal_lengths_is_balanced():
    for kwargs in (dict(sequences=4), dict(token_budget=4096)):
        r = sequence_imbalance(16, sigma=0.0, steps=5, rng=0, **kwargs)
        assert math.isclose(r.slowdown, 1.0)
        assert r.waste == pytest.approx(0.0, abs=1e-12)


def test_sequence_imbalance_packing_equalizes_tokens_not_attention():
    r = sequence_imbalance(32, token_budget=8192, steps=50, rng=3)
    assert (r.tokens == 8192).all()
    assert r.token_spread == 1.0
    assert r.slowdown > 1.05
    no_attention = sequence_imbalance(32, token_budget=8192, steps=50, attention=0.0, rng=3)
    assert math.isclose(no_attention.slowdown, 1.0)


def test_sequence_imbalance_worker_times_are_the_cost_model():
    r = sequence_imbalance(4, sequences=1, steps=3, per_token=1.0, attention=0.0, rng=0)
    assert np.array_equal(r.worker_times, r.tokens)
    assert np.array_equal(r.step_times, r.tokens.max(axis=1))
    assert math.isclose(r.slowdown, r.tokens.max(axis=1).mean() / r.tokens.mean(axis=1).mean())


def test_sequence_imbalance_grows_with_workers():
    s = [sequence_imbalance(n, sequences=8, steps=400, rng=0).slowdown for n in (1, 8, 64)]
    assert s[0] == 1.0
    assert s[0] < s[1] < s[2]


@given(budget=st.integers(1, 5000), seed=st.integers(0, 1000), sigma=st.floats(0, 2))
def test_packed_documents_fill_the_budget_exactly(budget, seed, sigma):
    docs = _packed_documents(5, budget, 300, sigma, 4096, np.random.default_rng(seed))
    assert np.allclose(docs.sum(axis=1), budget)
    assert (docs >= 0).all()


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: sequence_lengths(-1), "size must be a whole number >= 0"),
        (lambda: sequence_lengths(5, sigma=4), r"sigma must be in \[0, 3\]"),
        (lambda: sequence_cost(-1), "lengths must be >= 0"),
        (lambda: sequence_imbalance(0), "workers must be a whole number >= 1"),
        (lambda: sequence_imbalance(4, token_budget=0), "token_budget must be a whole number >= 1"),
        (lambda: sequence_imbalance(10**6, sequences=10**3, steps=10**3), "memory budget"),
    ],
)
def test_sequence_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ stages ---


def test_output_layer_cost_formula():
    # 2 h V / (24 h^2 + 4 s h) = V / (12 h + 2 s)
    assert output_layer_cost(1000, 14000, 1000) == 1.0
    assert math.isclose(output_layer_cost(4096, 131072, 4096), 131072 / (12 * 4096 + 2 * 4096))


def test_stage_imbalance_balanced_is_ideal():
    r = stage_imbalance(32, 4, 8, output_layers=0.0)
    assert r.slowdown == 1.0
    assert math.isclose(r.step_time, uniform_pipeline_time(4, 8, 8 / 3, 16 / 3))
    assert r.layers_per_stage.tolist() == [8, 8, 8, 8]


def test_stage_imbalance_matches_simulator_by_hand():
    # P=2, M=3, 4 layers, output worth 2 layers: stage costs [2, 4] (f = c/3, b = 2c/3).
    r = stage_imbalance(4, 2, 3, output_layers=2.0)
    assert r.stage_costs.tolist() == [2.0, 4.0]
    run = simulate_pipeline(2, 3, np.array([2.0, 4.0])[None, :, None] / 3, np.array([4.0, 8.0])[None, :, None] / 3)
    assert math.isclose(r.step_time, run.step_time)
    # the slow last stage sets the beat: f0 + 3 * 4 + b0 = 2/3 + 12 + 4/3 = 14
    assert math.isclose(r.step_time, 14.0)
    assert math.isclose(r.ideal_step_time, uniform_pipeline_time(2, 3, 1.0, 2.0))
    assert r.slowest_stage == 1


def test_stage_imbalance_grows_with_output_layer():
    s = [stage_imbalance(32, 4, 8, output_layers=x).slowdown for x in (0, 1, 2, 4, 8)]
    assert all(a < b for a, b in zip(s, s[1:]))


def test_stage_imbalance_custom_split_and_bad_input():
    r = stage_imbalance(8, 2, 4, output_layers=2.0, layers_per_stage=[5, 3])
    assert r.stage_costs.tolist() == [5.0, 5.0]
    assert r.slowdown == 1.0
    with pytest.raises(ValueError, match="summing to layers=8"):
        stage_imbalance(8, 2, 4, layers_per_stage=[4, 3])
    with pytest.raises(ValueError, match="2 whole numbers, one per stage"):
        stage_imbalance(8, 2, 4, layers_per_stage=[4, 2, 2])
    with pytest.raises(ValueError, match="stages must be a whole number in 1..8"):
        stage_imbalance(8, 9, 4)


# ---------------------------------------------------------------------- GC ---


@pytest.mark.parametrize("n", [1, 2, 16, 256])
def test_gc_expected_matches_monte_carlo(n):
    steps = 40_000
    t = gc_step_times(n, steps, base=1.0, pause=0.5, interval=10, rng=n)
    e = gc_expected_step_time(n, base=1.0, pause=0.5, interval=10)
    p = (e - 1.0) / 0.5
    # step = 1 + 0.5 * Bernoulli(p): 5 standard errors
    assert abs(t.mean() - e) <= 5 * 0.5 * math.sqrt(p * (1 - p) / steps) + 1e-12


def test_gc_planned_beats_random_and_does_not_grow_with_n():
    for n in (2, 8, 64, 1024):
        assert gc_expected_step_time(n, planned=True) < gc_expected_step_time(n)
        assert gc_expected_step_time(n, planned=True) == gc_expected_step_time(1, planned=True)
    assert math.isclose(gc_expected_step_time(1), gc_expected_step_time(1, planned=True))
    assert math.isclose(gc_expected_step_time(10**6, base=1, pause=0.5), 1.5)
    planned = gc_step_times(8, 100, interval=10, planned=True)
    assert planned.mean() == gc_expected_step_time(8, planned=True)
    assert gc_expected_step_time(5, interval=1) == 1.5


def test_gc_jitter_raises_the_step():
    quiet = gc_step_times(64, 2000, pause=0.0, rng=0).mean()
    noisy = gc_step_times(64, 2000, pause=0.0, jitter=0.05, rng=0).mean()
    assert quiet == 1.0 and noisy > 1.05  # E[max of 64 normals] ~ 2.4 sigma


def test_gc_bad_input():
    with pytest.raises(ValueError, match="interval must be >= 1"):
        gc_expected_step_time(4, interval=0.5)
    with pytest.raises(ValueError, match=r"jitter must be in \[0, 0.2\]"):
        gc_step_times(4, 10, jitter=0.5)


# ---------------------------------------------------------- classification ---


def test_classify_persistence_cases():
    assert classify_persistence([1.2] * 10) == "persistent"
    assert classify_persistence([1.0] * 9 + [3.0]) == "transient"
    assert classify_persistence([1.0] * 10) == "none"
    assert classify_persistence([1.0, 1.2], persistent_share=0.5) == "persistent"
    assert classify_persistence([1.0, 1.2], persistent_share=0.6) == "transient"
    with pytest.raises(ValueError, match="per_step_slowdown must be a non-empty 1-D array"):
        classify_persistence([])
    with pytest.raises(ValueError, match="threshold must be >= 1"):
        classify_persistence([1.0], threshold=0.5)


def test_classify_bottleneck_cases():
    comm_slow = classify_bottleneck([[1.0, 1.0]], [[0.1, 0.5]])
    assert comm_slow[0] == "communication"
    assert math.isclose(comm_slow[2], (1.0 + 0.5) / (1.0 + 0.3))
    assert classify_bottleneck([[1.0, 1.0]], [[0.1, 0.1]]) == ("neither", 1.0, 1.0)
    assert classify_bottleneck(np.zeros((2, 2)), np.zeros((2, 2)))[0] == "neither"
    with pytest.raises(ValueError, match="comm must be an array of the same shape as compute"):
        classify_bottleneck([[1.0, 1.0]], [[1.0]])


# --------------------------------------------------------------- debugging ---


def test_scenario_trace_columns_record_the_scenarios_work():
    sc = straggler_scenario("slow worker", dp=2, stages=2, microbatches=3, steps=2, rng=1)
    cols, layout = sc.trace_columns()
    assert layout["dp_size"] == 2 and layout["pp_size"] == 2
    fwd = cols["optype"] == "forward-compute"
    # every forward's recorded duration is the scenario's forward of that step, replica, stage, microbatch
    got = cols["duration"][fwd]
    want = sc.forward[cols["step"][fwd], cols["dp_rank"][fwd], cols["stage"][fwd], cols["mb_id"][fwd]]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isin(cols["optype"], ["forward-compute", "backward-compute"]).sum() == 2 * 2 * 2 * 2 * 3


def test_scenario_trace_columns_step_is_the_1f1b_step_without_transfers():
    # no p2p and no all-reduce time: the recorded step is the pipeline simulator's 1F1B step
    sc = straggler_scenario("last stage", dp=1, stages=3, microbatches=4, steps=2, jitter=0.1, rng=2)
    sc = type(sc)(cause=sc.cause, forward=sc.forward, backward=sc.backward, p2p=0 * sc.p2p,
                  allreduce=0 * sc.allreduce, truth=sc.truth, gc=sc.gc)
    cols, _ = sc.trace_columns()
    for t in range(2):
        rows = cols["step"] == t
        recorded = (cols["start_ts"][rows] + cols["duration"][rows]).max() - cols["start_ts"][rows].min()
        want = simulate_pipeline(3, 4, sc.forward[t], sc.backward[t]).step_time
        assert recorded == pytest.approx(want, rel=1e-12)


def test_scenario_random_gc_pauses_are_in_the_gc_op():
    sc = straggler_scenario("random GC", rng=0)
    cols, _ = sc.trace_columns()
    gc = cols["optype"] == "gc"
    assert cols["duration"][gc].sum() == pytest.approx(sc.gc.sum())
    assert int((sc.gc > 0).sum()) == sc.truth["hits"]


def test_scenario_bad_input():
    with pytest.raises(ValueError, match="cause must be one of"):
        straggler_scenario("cosmic rays")
    with pytest.raises(ValueError, match="stages must be at least 2 for a slow link"):
        straggler_scenario("slow link", stages=1)


# ------------------------------------------------------------- the study ---


def test_osdi2025_figures_are_the_published_ones():
    s = osdi2025.STUDY
    want = {
        "jobs": 3079, "min_gpus": 128, "months": 5, "jobs_slowed_10pct": 0.425,
        "gpu_hours_wasted": 0.104, "waste_median": 0.078, "waste_p90": 0.213, "waste_p99": 0.450,
        "worker_fault_share": 0.017, "worker_fault_slowdown": 3.04, "last_stage_share": 0.393,
        "sequence_length_share": 0.214, "planned_gc_gain": 0.126,
    }
    assert {k: v.value for k, v in s.items()} == want
    assert float(s["waste_p99"]) == 0.45
    assert s["waste_median"].value < s["waste_p90"].value < s["waste_p99"].value
    assert "OSDI 2025" in osdi2025.CITATION
