"""Tests for sequence packing and layer partitioning (straggle_edu.models.balance).

References: brute force over every assignment (packing) and every set of cut
points (partition) on small inputs, Graham's LPT bound 4/3 - 1/(3m), and
hand-checkable cases.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.models.balance import (
    best_packing,
    greedy_lpt,
    karmarkar_karp,
    lpt_bound,
    pack_sequences,
    packing_lower_bound,
    partition_for_step,
    partition_layers,
    split_in_order,
    split_layers_evenly,
)


def brute_force_makespan(costs, m):
    best = math.inf
    for assign in itertools.product(range(m), repeat=len(costs)):
        loads = np.bincount(assign, weights=costs, minlength=m)
        best = min(best, loads.max())
    return best


def brute_force_partition(costs, P, first=0.0, last=0.0):
    n = len(costs)
    best = math.inf
    for cuts in itertools.combinations(range(1, n), P - 1):
        bounds = (0, *cuts, n)
        sums = [sum(costs[a:b]) for a, b in zip(bounds, bounds[1:])]
        sums[0] += first
        sums[-1] += last
        best = min(best, max(sums))
    return best


def naive_partition_dp(costs, P, last=0.0):
    """The textbook O(n^2 P) recurrence, as a second reference."""
    n = len(costs)
    S = np.concatenate([[0.0], np.cumsum(costs)])
    f = [[math.inf] * (n + 1) for _ in range(P + 1)]
    for i in range(1, n + 1):
        f[1][i] = S[i] + (last if P == 1 else 0.0)
    for j in range(2, P + 1):
        e = last if j == P else 0.0
        for i in range(j, n + 1):
            f[j][i] = min(max(f[j - 1][l], S[i] - S[l] + e) for l in range(j - 1, i))
    return f[P][n]


costs_st = st.lists(st.integers(0, 20).map(float), min_size=1, max_size=7)
real_costs_st = st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=7)


# ---------------------------------------------------------------- packing ---


def test_greedy_lpt_graham_tight_example():
    # 2m + 1 jobs: 2m-1, 2m-1, ..., m+1, m+1, m, m, m. LPT = 4m - 1, optimum 3m.
    for m in (2, 3, 4):
        costs = [c for c in range(2 * m - 1, m, -1) for _ in (0, 1)] + [m] * 3
        assert greedy_lpt(costs, m).makespan == 4 * m - 1
        assert best_packing(costs, m).makespan == 3 * m
        assert greedy_lpt(costs, m).makespan / (3 * m) == pytest.approx(lpt_bound(m))


def test_karmarkar_karp_beats_lpt_by_hand():
    costs = [8, 7, 6, 5, 4]
    assert greedy_lpt(costs, 2).makespan == 17
    assert karmarkar_karp(costs, 2).makespan == 16
    assert best_packing(costs, 2).makespan == 15


def test_split_in_order_equal_counts():
    p = split_in_order(np.arange(10.0), 3)
    assert np.bincount(p.assignment).tolist() == [4, 3, 3]
    assert p.assignment.tolist() == sorted(p.assignment.tolist())


def test_packing_one_worker_and_more_workers_than_items():
    for fn in (split_in_order, greedy_lpt, karmarkar_karp, best_packing):
        assert fn([1.0, 2.0, 3.0], 1).makespan == 6.0
        p = fn([1.0, 2.0, 3.0], 5)
        assert p.makespan == 3.0 or fn is split_in_order
        assert p.loads.size == 5


def test_packing_fields():
    p = greedy_lpt([4.0, 3.0, 2.0, 1.0], 2)
    assert p.workers == 2 and p.mean_load == 5.0 and p.imbalance == 1.0
    assert sorted(np.concatenate([p.items(0), p.items(1)]).tolist()) == [0, 1, 2, 3]
    assert greedy_lpt([0.0, 0.0], 2).imbalance == 1.0


@given(costs_st, st.integers(1, 3))
def test_best_packing_matches_brute_force(costs, m):
    assert best_packing(costs, m).makespan == pytest.approx(brute_force_makespan(costs, m))


@given(real_costs_st, st.integers(1, 4))
def test_heuristics_within_bounds(costs, m):
    opt = best_packing(costs, m).makespan
    lower = packing_lower_bound(costs, m)
    assert lower <= opt + 1e-9
    lpt = greedy_lpt(costs, m).makespan
    kk = karmarkar_karp(costs, m).makespan
    assert opt - 1e-9 <= lpt <= lpt_bound(m) * opt + 1e-9
    # Differencing's worst-case ratio is at most LPT's, 4/3 - 1/(3m) (Michiels,
    # Aarts, Korst, van Leeuwen and Spieksma, 2012); 7/6 for m = 2 (Fischetti
    # and Martello, 1987).
    assert opt - 1e-9 <= kk <= lpt_bound(m) * opt + 1e-9


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60), st.integers(1, 9))
def test_packings_are_complete_assignments(costs, m):
    for method in ("in_order", "lpt", "karmarkar_karp"):
        p = pack_sequences(costs, m, method)
        assert p.assignment.shape == (len(costs),)
        assert ((0 <= p.assignment) & (p.assignment < m)).all()
        assert p.loads.sum() == pytest.approx(sum(costs), rel=1e-12, abs=1e-6)
        assert p.makespan >= packing_lower_bound(costs, m) - 1e-6


def test_heuristics_close_to_lower_bound_on_many_sequences():
    rng = np.random.default_rng(0)
    costs = rng.pareto(2.5, 2048) + 1.0
    lower = packing_lower_bound(costs, 32)
    before = split_in_order(costs, 32).makespan
    lpt = greedy_lpt(costs, 32).makespan
    kk = karmarkar_karp(costs, 32).makespan
    assert before > 1.1 * lower
    assert lpt < 1.01 * lower and kk < 1.005 * lower
    assert kk <= lpt


@pytest.mark.parametrize(
    "args, match",
    [
        (([], 2), "costs must be a non-empty 1-D array"),
        (([1.0, -1.0], 2), "costs must be >= 0, got -1.0"),
        (([1.0, float("nan")], 2), "costs must be >= 0 \\(not NaN\\)"),
        (([1.0], 0), "workers must be a whole number >= 1, got 0"),
        (([1.0], 2.5), "workers must be a whole number >= 1, got 2.5"),
    ],
)
def test_packing_bad_input(args, match):
    for fn in (split_in_order, greedy_lpt, karmarkar_karp, best_packing):
        with pytest.raises(ValueError, match=match):
            fn(*args)


def test_pack_sequences_bad_method_and_best_too_big():
    with pytest.raises(ValueError, match="method must be one of 'in_order', 'lpt'"):
        pack_sequences([1.0], 1, "random")
    with pytest.raises(ValueError, match="at most 24 items"):
        best_packing(np.ones(25), 2)
    with pytest.raises(ValueError, match="worker must be a whole number in 0..1"):
        greedy_lpt([1.0, 2.0], 2).items(2)


def test_karmarkar_karp_refuses_oversize():
    with pytest.raises(ValueError, match="memory budget"):
        karmarkar_karp(np.ones(10**6), 10**4)


# -------------------------------------------------------------- partition ---


def test_partition_layers_textbook_example():
    # Skiena, The Algorithm Design Manual, section 8.5: 1..9 into 3 ranges.
    p = partition_layers(range(1, 10), 3)
    assert p.bounds.tolist() == [0, 5, 7, 9]
    assert p.bottleneck == 17


def test_partition_layers_last_stage_extra_moves_layers_off_the_last_stage():
    even = split_layers_evenly([1.0] * 8, 4, last_stage_extra=1.5)
    best = partition_layers([1.0] * 8, 4, last_stage_extra=1.5)
    assert even.bottleneck == 3.5
    assert best.bottleneck == 3.0
    assert best.layers_per_stage[-1] == 1
    assert best.layers_per_stage.sum() == 8


def test_partition_layers_equal_layers_divide_evenly():
    p = partition_layers(np.full(12, 2.0), 4)
    assert p.layers_per_stage.tolist() == [3, 3, 3, 3]
    assert p.step_time(8) == pytest.approx((8 + 4 - 1) * 6.0)


def test_partition_one_stage_and_one_layer_per_stage():
    p = partition_layers([1.0, 2.0, 3.0], 1, first_stage_extra=1.0, last_stage_extra=2.0)
    assert p.stage_costs.tolist() == [9.0]
    p = partition_layers([1.0, 2.0, 3.0], 3)
    assert p.layers_per_stage.tolist() == [1, 1, 1]


def test_split_layers_evenly_gives_earlier_stages_the_remainder():
    assert split_layers_evenly(np.ones(10), 4).layers_per_stage.tolist() == [3, 3, 2, 2]


@given(
    st.lists(st.integers(0, 30).map(float), min_size=1, max_size=9),
    st.integers(1, 9),
    st.sampled_from([0.0, 2.5, 17.0]),
    st.sampled_from([0.0, 4.0, 40.0]),
)
def test_partition_layers_matches_brute_force(costs, P, first, last):
    P = min(P, len(costs))
    p = partition_layers(costs, P, first_stage_extra=first, last_stage_extra=last)
    assert p.bottleneck == pytest.approx(brute_force_partition(costs, P, first, last))
    assert (p.layers_per_stage >= 1).all()
    assert p.stage_costs.sum() == pytest.approx(sum(costs) + first + last)
    assert p.bottleneck <= split_layers_evenly(costs, P, first, last).bottleneck + 1e-9


@given(st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=40), st.integers(1, 12),
       st.floats(0, 50, allow_nan=False))
def test_partition_layers_matches_naive_dp(costs, P, last):
    P = min(P, len(costs))
    got = partition_layers(costs, P, last_stage_extra=last).bottleneck
    assert got == pytest.approx(naive_partition_dp(costs, P, last), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([1.0, 2.0], 3), {}, "stages must be a whole number in 1..2, got 3"),
        (([1.0, 2.0], 0), {}, "stages must be a whole number in 1..2, got 0"),
        (([], 1), {}, "costs must be a non-empty 1-D array"),
        (([1.0, -2.0], 1), {}, "costs must be >= 0, got -2.0"),
        (([1.0], 1), {"last_stage_extra": -1.0}, "last_stage_extra must be >= 0, got -1.0"),
        (([1.0], 1), {"first_stage_extra": float("inf")}, "first_stage_extra must be >= 0, got inf"),
    ],
)
def test_partition_bad_input(args, kwargs, match):
    for fn in (partition_layers, split_layers_evenly):
        with pytest.raises(ValueError, match=match):
            fn(*args, **kwargs)


def test_step_time_bad_microbatches():
    with pytest.raises(ValueError, match="microbatches must be a whole number >= 1, got 0"):
        partition_layers([1.0], 1).step_time(0)


def _step(layers_per_stage, M, last):
    from straggle_edu.models.causes import stage_imbalance

    return stage_imbalance(int(sum(layers_per_stage)), len(layers_per_stage), M, output_layers=last,
                           layers_per_stage=layers_per_stage).step_time


def test_partition_for_step_equal_stages_closed_form():
    # 12 equal layers on 3 stages, no extras: 4 | 4 | 4, and 1F1B takes (M + P - 1) * c = (6 + 2) * 4.
    p = partition_for_step([1.0] * 12, 3, 6)
    assert p.layers_per_stage.tolist() == [4, 4, 4]
    assert _step(p.layers_per_stage, 6, 0.0) == pytest.approx(32.0)


def test_partition_for_step_beats_the_bottleneck_split_in_07():
    # 07's case: 32 layers, 4 stages, 8 microbatches, a 2.29-layer output layer.
    # The smallest bottleneck (9) admits 8/9/9/6 (step 96.57) and 9/9/8/6 (95.57, 06's hand-made split).
    from straggle_edu.models.causes import output_layer_cost

    extra = output_layer_cost(hidden=4096, vocab=131072, seq_len=4096)
    by_beat = partition_layers([1.0] * 32, 4, last_stage_extra=extra)
    by_step = partition_for_step([1.0] * 32, 4, 8, last_stage_extra=extra)
    assert by_step.layers_per_stage.tolist() == [9, 9, 8, 6]
    assert by_step.bottleneck == by_beat.bottleneck == 9.0
    assert _step(by_step.layers_per_stage, 8, extra) < _step(by_beat.layers_per_stage, 8, extra) - 0.5


@given(st.integers(2, 9), st.integers(1, 4), st.integers(1, 6), st.sampled_from([0.0, 0.5, 1.0, 2.29, 4.0]))
def test_partition_for_step_matches_brute_force(n, P, M, last):
    P = min(P, n)
    got = partition_for_step([1.0] * n, P, M, last_stage_extra=last)
    want = min(_step(np.diff([0, *cuts, n]), M, last) for cuts in itertools.combinations(range(1, n), P - 1))
    assert _step(got.layers_per_stage, M, last) == pytest.approx(want)
    assert _step(got.layers_per_stage, M, last) <= _step(partition_layers([1.0] * n, P, last_stage_extra=last)
                                                         .layers_per_stage, M, last) + 1e-9
    assert got.method == "step" and (got.layers_per_stage >= 1).all()


def test_partition_for_step_refuses_too_many_splits():
    with pytest.raises(ValueError, match="at most 200,000 contiguous splits"):
        partition_for_step([1.0] * 200, 8, 4)
    with pytest.raises(ValueError, match="microbatches must be a whole number >= 1, got 0"):
        partition_for_step([1.0] * 4, 2, 0)
