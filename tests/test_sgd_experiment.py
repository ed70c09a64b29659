"""The SGD experiment with real processes, and what it must show (issue 14).

Derandomised: which gradients count is a pure function of the seeds (the
plan), and :func:`replay` computes the exact weights a run produces without
processes (checked bit for bit below). So the claims about losses are made
on replays over several data seeds, and the claims about time on the plan's
durations; the real runs check that the processes execute the plan.
"""


import numpy as np
import pytest

from straggle_edu.instruments.sgd import (
    SGDSettings, make_plan, order_agreement, planned_curve, reference_target, replay, run_sgd,
)
from straggle_edu.models.sgd_schedule import step_times
from straggle_edu.models.softmax import accuracy, weights_sha256
from straggle_edu.traces import analyze, read_trace
from _procs import alive

SEEDS = (0, 1, 2)
FAST = dict(base_step=0.01, steps=8, workers=3)


def _replay(**kw):
    plan = make_plan(SGDSettings(**kw))
    W, losses = replay(plan)
    d = plan.data
    return plan, W, losses, accuracy(W, d.X_test[d.long_test], d.y_test[d.long_test])


def _planned_wall(plan):
    s = plan.settings
    if s.scheme == "local":
        H = s.period
        return plan.planned.reshape(-1, H, s.workers).sum(axis=1).max(axis=1).sum()
    return step_times(plan.planned, s.counted).sum()


# ----------------------------------------------------------- real processes
@pytest.mark.parametrize("kw", [dict(scheme="sync"), dict(scheme="backup", backups=1),
                                dict(scheme="drop", backups=1), dict(scheme="local", period=2)])
def test_run_sgd_weights_equal_the_replay_bit_for_bit(kw):
    r = run_sgd(**FAST, **kw)
    W, _ = replay(make_plan(r.settings))
    assert r.weights_sha256 == weights_sha256(W)
    assert r.counted.sum(axis=1).tolist() == [r.settings.counted] * 8 or kw["scheme"] == "local"
    assert not any(alive(p) for p in r.pids)


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_run_sgd_arrivals_follow_the_plan_where_the_gap_exceeds_5ms():
    """The measured arrival order agrees with the plan wherever the planned gap exceeds 5 ms.

    On a quiet machine every such pair agrees. This test also runs on a shared 2-core machine at
    load ~8, where the scheduler now and then wakes a sleeping process more than 5 ms late (seen:
    1 pair of 118 at load 8; 4 and 5 of 118 with two test runs at once), so at 5 ms it allows 5%
    of the pairs out of order, and at 20 ms none.
    """
    r = run_sgd(scheme="sync", workers=4, steps=30, base_step=0.02, slow="transient", p=0.3, stall=1.0)
    pairs, bad = order_agreement(r, gap=0.005)
    assert pairs >= 30 and bad <= 0.05 * pairs, f"{bad} of {pairs} pairs out of order"
    pairs20, bad20 = order_agreement(r, gap=0.020)
    assert pairs20 >= 10 and bad20 == 0


def test_run_sgd_backup_accounts_for_discarded_work(tmp_path):
    r = run_sgd(scheme="backup", workers=3, backups=1, steps=8, base_step=0.01, out=tmp_path / "run.csv")
    d = r.to_dict()
    assert d["processes"] == 4 and d["gradients_applied"] == 24 and d["gradients_discarded"] == 8
    assert 0 < d["gradient_s_discarded"] < d["gradient_s_computed"]
    assert d["worker_s_reserved"] == pytest.approx(4 * d["wall_s"])
    assert len(d["curve"]) == 8 and d["curve"][-1]["gradients_applied"] == 24
    lines = (tmp_path / "run.csv").read_text().splitlines()
    assert lines[0] == "rank,step,compute_s,wait_s,comm_s,counted" and len(lines) == 1 + 8 * 4
    assert sum(line.endswith(",0") for line in lines[1:]) == 8
    trace = read_trace(tmp_path / "run.csv")
    assert (trace.counted == r.counted).all()
    assert analyze(trace).slowdown >= 1.0


def test_run_sgd_interrupted_reaps_every_worker_and_marks_the_csv(tmp_path):
    pids = []

    def stop(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sgd(scheme="backup", workers=2, backups=1, steps=20, base_step=0.01, progress=stop,
                out=tmp_path / "run.csv")
    import multiprocessing as mp

    assert mp.active_children() == []
    text = (tmp_path / "run.csv").read_text()
    assert text.rstrip().endswith("# incomplete") and len(text.splitlines()) == 2 + 3 * 3
    assert not pids


def test_run_sgd_reproducibility_sync_and_local_ignore_the_timing_seed():
    for scheme in ("sync", "local"):
        a = run_sgd(scheme=scheme, period=2, timing_seed=0, p=0.3, **FAST)
        b = run_sgd(scheme=scheme, period=2, timing_seed=1, p=0.3, **FAST)
        assert a.weights_sha256 == b.weights_sha256


# ------------------------------------------------------ claims, on replays
def test_replay_backup_depends_on_the_timing_seed_and_by_how_much():
    for scheme in ("backup", "drop"):
        _, Wa, la, _ = _replay(scheme=scheme, backups=2, timing_seed=0, steps=100)
        _, Wb, lb, _ = _replay(scheme=scheme, backups=2, timing_seed=1, steps=100)
        assert weights_sha256(Wa) != weights_sha256(Wb)
        # the weights differ, the loss barely: the dropped gradients are a random part of the batch
        assert np.abs(Wa - Wb).max() > 1e-3 and abs(la[-1] - lb[-1]) < 0.02


def test_claim_transient_backups_cut_time_keep_loss():
    for seed in SEEDS:
        sync, _, ls, _ = _replay(scheme="sync", seed=seed)
        backup, _, lb, _ = _replay(scheme="backup", backups=2, seed=seed)
        # equal steps = equal gradients applied (N per step): loss within 0.01 nats
        assert abs(lb[-1] - ls[-1]) < 0.01
        assert _planned_wall(backup) < 0.6 * _planned_wall(sync)
        assert step_times(backup.planned, 8).max() < step_times(sync.planned, 8).max()


def test_claim_data_dependent_backups_forget_the_long_samples():
    for seed in SEEDS:
        _, _, _, acc_sync = _replay(scheme="sync", slow="data", seed=seed)
        plan, _, _, acc_backup = _replay(scheme="backup", backups=2, slow="data", seed=seed)
        assert acc_sync - acc_backup > 0.5
        long_batches = plan.data.long[plan.idx].all(axis=2)
        assert not (long_batches & plan.counted).any()  # the long buckets are exactly the dropped ones


def test_claim_persistent_local_sgd_does_not_help_and_backup_hides_the_slow_process():
    sync, _, ls, _ = _replay(scheme="sync", slow="persistent")
    local, _, ll, _ = _replay(scheme="local", slow="persistent")
    backup, _, lb, _ = _replay(scheme="backup", backups=1, slow="persistent")
    assert _planned_wall(local) > 0.95 * _planned_wall(sync)
    assert not backup.counted[:, 0].any()  # the slow process never counts
    assert _planned_wall(backup) < 0.5 * _planned_wall(sync)
    assert abs(lb[-1] - ls[-1]) < 0.01


def test_claim_persistent_balanced_splits_by_measured_speed():
    r = run_sgd(scheme="balanced", slow="persistent", workers=4, steps=8, base_step=0.01)
    sync = make_plan(SGDSettings(scheme="sync", slow="persistent", workers=4, steps=8, base_step=0.01))
    # after the first step the slow process gets about a third of a share, so a step is about
    # 4 / (3 + 1/3) = 1.2 base steps instead of 3: half of sync's. The measured speeds are noisy on
    # a loaded machine (seen: 0.69 of sync's with two test runs at once), hence 0.8.
    assert np.median(r.planned[1:].max(axis=1)) < 0.8 * np.median(sync.planned.max(axis=1))
    W, _ = replay(sync)
    assert np.abs(r.weights - W).max() < 1e-12  # the same samples, summed in another order


def test_reference_target_is_syncs_loss_at_80_percent():
    s = SGDSettings(steps=10)
    _, losses = replay(make_plan(s))
    assert reference_target(s) == losses[7]


def test_planned_curve_every_scheme_on_both_axes():
    rows = {kw["scheme"]: planned_curve(make_plan(SGDSettings(steps=40, **kw)))
            for kw in (dict(scheme="sync"), dict(scheme="backup", backups=2), dict(scheme="drop", backups=2),
                       dict(scheme="local"))}
    assert [rows[k][-1]["gradients_applied"] for k in rows] == [320, 320, 240, 320]
    assert rows["backup"][-1]["wall_s"] < rows["sync"][-1]["wall_s"]
    with pytest.raises(ValueError, match="not 'balanced'"):
        planned_curve(make_plan(SGDSettings(scheme="balanced", steps=2)))
