"""The SGD experiment's plan: pure functions of seeds (models.sgd_schedule, models.softmax)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from straggle_edu.models import sgd_schedule as sch
from straggle_edu.models.softmax import gradient_sum, init_weights, loss, make_length_data


@pytest.fixture(scope="module")
def data():
    return make_length_data(0, n_train=1024, n_test=256)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=4, max_size=4), min_size=1, max_size=6), st.integers(1, 4))
def test_counted_mask_keeps_the_k_fastest_ties_by_rank(rows, k):
    d = np.array(rows, dtype=float)
    mask = sch.counted_mask(d, k)
    assert (mask.sum(axis=1) == k).all()
    for row, m in zip(d, mask):
        # every counted gradient is planned no later than every discarded one,
        # and among equal times the lower rank wins
        order = sorted(range(4), key=lambda r: (row[r], r))
        assert set(np.flatnonzero(m)) == set(order[:k])


def test_step_times_k_equals_n_is_the_max():
    d = np.array([[0.3, 0.1, 0.2], [0.5, 0.6, 0.4]])
    assert sch.step_times(d, 3).tolist() == [0.3, 0.6]
    assert sch.step_times(d, 1).tolist() == [0.1, 0.4]


def test_discarded_share_equal_times_is_b_over_n_plus_b():
    for n, b in ((8, 2), (94, 6), (4, 1)):
        assert sch.discarded_share(np.ones((3, n + b)), n) == pytest.approx(b / (n + b))


def test_balanced_split_sums_and_follows_speed():
    sizes = sch.balanced_split(128, [1.0] * 7 + [1 / 3])
    assert sizes.sum() == 128 and sizes.min() >= 1
    assert sizes[-1] == pytest.approx(sizes[0] / 3, abs=1)


def test_batch_plan_backup_ranks_share_syncs_batches(data):
    sync = sch.batch_plan(data, 8, 10, 4, seed=3)
    backup = sch.batch_plan(data, 10, 10, 4, seed=3)
    assert (backup[:, :8] == sync).all()
    assert not (sch.batch_plan(data, 8, 10, 4, seed=4) == sync).all()


def test_batch_plan_data_buckets_long_samples(data):
    idx = sch.batch_plan(data, 10, 50, 4, slow="data", seed=0)
    long_batches = data.long[idx].all(axis=2)
    mixed = data.long[idx].any(axis=2) & ~long_batches
    assert (long_batches.sum(axis=1) == 2).all() and not mixed.any()


def test_slowness_depends_only_on_timing_seed():
    a = sch.slowness("transient", 100, 8, p=0.2, timing_seed=1)[1]
    b = sch.slowness("transient", 100, 8, p=0.2, timing_seed=1)[1]
    c = sch.slowness("transient", 100, 8, p=0.2, timing_seed=2)[1]
    assert (a == b).all() and not (a == c).all()
    # rank r's stalls do not change when processes are added
    assert (sch.slowness("transient", 100, 10, p=0.2, timing_seed=1)[1][:, :8] == a).all()
    assert (sch.slowness("data", 5, 4)[0] == 1).all()


def test_gradient_sum_matches_finite_differences(data):
    W = init_weights(data, 1)
    X, y = data.X[:5], data.y[:5]
    g = gradient_sum(W, X, y) / 5
    eps = 1e-6
    E = np.zeros_like(W)
    E[2, 3] = eps
    numeric = (loss(W + E, X, y) - loss(W - E, X, y)) / (2 * eps)
    assert g[2, 3] == pytest.approx(numeric, rel=1e-5)


def test_sync_reference_is_deterministic(data):
    idx = sch.batch_plan(data, 4, 20, 8)
    W1, l1 = sch.sync_reference(data, init_weights(data), idx, 0.2)
    W2, l2 = sch.sync_reference(data, init_weights(data), idx, 0.2)
    assert (W1 == W2).all() and l1[-1] < l1[0]


def test_slowness_rejects_bad_probability():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\], got 1.5"):
        sch.slowness("transient", 2, 2, p=1.5)
