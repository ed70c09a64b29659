"""Tests for relaxed synchronization (straggle_edu.models.sgd).

References: with exact shard gradients and equal shards, synchronous SGD is
gradient descent on the whole problem, theta <- theta - lr (A theta - c);
with equal step times, asynchronous workers settle into staleness W - 1.
"""

import numpy as np
import pytest
from scipy import stats

from straggle_edu.models.sgd import compare_sgd, make_problem, run_sgd
from straggle_edu.models.step_time import StepTime

FIXED = StepTime(1.0, jitter=0.0)  # every gradient takes exactly 1 s


def test_make_problem_optimum_and_smoothness():
    p = make_problem(workers=4, rows=20, features=3, condition=5.0, rng=1)
    X, y = p.X.reshape(-1, 3), p.y.reshape(-1)
    grad = X.T @ (X @ p.theta_star - y) / y.size
    np.testing.assert_allclose(grad, 0.0, atol=1e-12)
    assert p.excess_loss(p.theta_star) == 0.0
    assert p.smoothness == pytest.approx(np.linalg.eigvalsh(X.T @ X / y.size)[-1])
    theta = p.theta_star + np.array([1.0, -2.0, 0.5])
    want = 0.5 * np.mean((X @ theta - y) ** 2) - 0.5 * np.mean((X @ p.theta_star - y) ** 2)
    assert p.excess_loss(theta) == pytest.approx(want, rel=1e-10)


def test_make_problem_is_seeded():
    a, b = make_problem(rng=3), make_problem(rng=3)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, make_problem(rng=4).X)


def test_sync_full_batch_is_gradient_descent():
    p = make_problem(workers=4, rows=16, features=3, rng=2)
    lr = 0.5 / p.smoothness
    run = run_sgd(p, FIXED, "sync", wall_time=10.0, lr=lr, batch=16, sync=0.25)
    assert run.updates == 8  # floor(10 / 1.25)
    np.testing.assert_allclose(run.times[1:], 1.25 * np.arange(1, 9))
    X, y = p.X.reshape(-1, 3), p.y.reshape(-1)
    theta, want = np.zeros(3), [p.excess_loss(np.zeros(3))]
    for _ in range(8):
        theta = theta - lr * X.T @ (X @ theta - y) / y.size
        want.append(p.excess_loss(theta))
    np.testing.assert_allclose(run.losses, want, rtol=1e-9)


def test_drop_counts_used_and_dropped():
    p = make_problem(workers=8, rng=0)
    run = run_sgd(p, FIXED, "drop", backups=3, wall_time=5.0)
    assert run.updates == 5
    assert run.gradients_used == 5 * 5 and run.gradients_dropped == 5 * 3
    assert run.dropped_by_worker.sum() == 15


def test_modes_are_named_as_the_sgd_experiment_names_its_schemes():
    # 07c and 11 speak one vocabulary: "drop" keeps W - b of W gradients, "backup" runs W + b and keeps W
    from straggle_edu.models.sgd import MODES
    from straggle_edu.models.sgd_schedule import SCHEMES, counted_per_step, processes_for

    assert set(MODES) - {"async"} <= set(SCHEMES) and "backup" not in MODES
    run = run_sgd(make_problem(workers=8, rng=0), FIXED, "drop", backups=3, wall_time=5.0)
    assert (processes_for("drop", 8, 3), counted_per_step("drop", 8, 3)) == (8, run.gradients_used // run.updates)


def test_async_staleness_with_equal_times():
    W = 6
    p = make_problem(workers=W, rng=0)
    run = run_sgd(p, FIXED, "async", wall_time=4.0)
    assert run.updates == 4 * W
    np.testing.assert_array_equal(run.staleness[:W], np.arange(W))
    assert (run.staleness[W:] == W - 1).all()


def test_async_with_one_worker_is_sync():
    p = make_problem(workers=1, rows=16, rng=5)
    a = run_sgd(p, FIXED, "async", wall_time=6.0, batch=16)
    s = run_sgd(p, FIXED, "sync", wall_time=6.0, batch=16)
    np.testing.assert_allclose(a.losses, s.losses, rtol=1e-12)
    assert (a.staleness == 0).all()


def test_relaxed_runs_make_more_updates_at_equal_wall_clock():
    step = StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0)
    c = compare_sgd(step, make_problem(rng=0), backups=2, wall_time=60.0)
    s = {row["mode"]: row for row in c.summary()}
    assert s["sync"]["updates"] < s["drop"]["updates"]
    assert s["async"]["gradients_used"] > s["sync"]["gradients_used"]
    assert s["async"]["mean_staleness"] > 10
    recs = c.records(points=50)
    assert len(recs) == 150 and {r["mode"] for r in recs} == {"sync", "drop", "async"}


def test_dropped_gradients_bias_with_a_persistent_straggler():
    # Heterogeneous shards and worker 0 always 50% slower: drop steps drop
    # worker 0's gradient, so its data stops counting; sync converges.
    step = StepTime(1.0, jitter=0.05, pause_prob=0.02, pause=1.0)
    p = make_problem(workers=16, rows=64, heterogeneity=1.0, condition=2.0, rng=0)
    c = compare_sgd(step, p, backups=2, wall_time=200.0, batch=64, slow_factor=1.5, rng=1)
    assert c.runs["sync"].final_loss < 1e-10
    assert c.runs["drop"].final_loss > 1e-3
    drops = c.runs["drop"].dropped_by_worker
    assert drops[0] > 0.9 * c.runs["drop"].updates  # nearly always the same worker


def test_a_persistent_straggler_biases_drop_only_through_its_own_shard():
    # The same worker 0, 50% slower, dropped in nearly every step: with shards of their own (heterogeneity 1) the
    # run settles far from the optimum; with the rows dealt alike (heterogeneity 0) its work is lost, its data barely.
    step = StepTime(1.0, jitter=0.05, pause_prob=0.02, pause=1.0)
    runs = {h: run_sgd(make_problem(workers=16, rows=64, heterogeneity=h, condition=2.0, rng=0), step, "drop", backups=2,
                       wall_time=200.0, batch=64, slow_factor=1.5, rng=1) for h in (0.0, 1.0)}
    for r in runs.values():
        assert r.dropped_by_worker[0] > 0.9 * r.updates
    assert runs[0.0].final_loss < 0.01 * runs[1.0].final_loss
    assert runs[1.0].final_loss > 1e-3


def test_loss_at_is_a_step_function():
    p = make_problem(workers=2, rng=0)
    run = run_sgd(p, FIXED, "sync", wall_time=3.0)
    np.testing.assert_array_equal(run.loss_at([0.0, 0.5, 1.0, 2.9, 99.0]), run.losses[[0, 0, 1, 2, 3]])


def test_sgd_accepts_scipy_distributions():
    p = make_problem(workers=4, rng=0)
    run = run_sgd(p, stats.uniform(0.5, 1.0), "async", wall_time=10.0)
    assert run.updates > 20 and np.isfinite(run.losses).all()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mode": "hogwild"}, "mode must be 'sync', 'drop' or 'async', got 'hogwild'"),
        ({"mode": "drop", "backups": 4}, "backups must be a whole number in 0..3, got 4"),
        ({"lr": 0.0}, "lr must be > 0, got 0.0"),
        ({"batch": 65}, "batch must be a whole number in 1..64, got 65"),
        ({"slow_factor": 0.5}, "slow_factor must be in \\[1, 100\\], got 0.5"),
        ({"wall_time": -1.0}, "wall_time must be > 0, got -1.0"),
        ({"wall_time": 1e9}, "wall_time must be short enough for at most 200000 updates"),
        ({"sync": -0.1}, "sync must be >= 0, got -0.1"),
    ],
)
def test_run_sgd_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_sgd(make_problem(workers=4, rng=0), FIXED, **kwargs)


def test_problem_bad_input():
    with pytest.raises(ValueError, match="problem must be a LeastSquares from make_problem"):
        run_sgd("data", FIXED)
    with pytest.raises(ValueError, match="workers must be a whole number in 1..1024, got 0"):
        make_problem(workers=0)
    with pytest.raises(ValueError, match="condition must be in \\[1, 1e\\+06\\], got 0.5"):
        make_problem(condition=0.5)
    with pytest.raises(ValueError, match="heterogeneity must be >= 0, got -1.0"):
        make_problem(heterogeneity=-1.0)
