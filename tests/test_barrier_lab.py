"""The live barrier lab: real processes at a real barrier, always reaped.

Every run here starts real ``spawn`` worker processes. The slowdown checks
compute the per-rank what-if slowdown straight from the CSV the lab wrote
(the ideal step gives every rank the per-step mean compute), independently of
the lab's own bookkeeping, and compare it with the definition's value for a
2x worker among 4: 2 / ((2 + 1 + 1 + 1) / 4) = 1.6.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from straggle_edu.instruments import barrier_lab as bl
from straggle_edu.instruments.barrier_lab import (
    BarrierLabTimeout,
    LabSettings,
    run_barrier_lab,
)
from straggle_edu.models.barrier_lab import predict_step_time, predicted_slowdown
from straggle_edu.models.empirical import empirical_expected_max
from straggle_edu.app.cli import main as cli_main
from straggle_edu.traces import analyze

from _procs import alive, live_processes


# ------------------------------------------------------------------ helpers
def read_trace(path):
    """Parse the per-rank CSV independently: {(step, rank, phase): seconds}, complete?"""
    lines = path.read_text().splitlines()
    complete = lines[-1] != "# incomplete"
    body = [ln for ln in lines if not ln.startswith("#")]
    rows = list(csv.DictReader(body))
    assert body[0] == "step,rank,duration_s,phase"
    out = {}
    for row in rows:
        key = (int(row["step"]), int(row["rank"]), row["phase"])
        assert key not in out
        out[key] = float(row["duration_s"])
        assert out[key] >= 0 and row["phase"] in ("compute", "wait")
    return out, complete


def compute_matrix(rows):
    steps = 1 + max(s for s, _, _ in rows)
    ranks = 1 + max(r for _, r, _ in rows)
    c = np.array([[rows[(s, r, "compute")] for r in range(ranks)] for s in range(steps)])
    w = np.array([[rows[(s, r, "wait")] for r in range(ranks)] for s in range(steps)])
    return c, w


def per_rank_slowdown(c):
    """S and S_rank of the per-rank what-if definition."""
    ideal = c.mean(axis=1)
    s = c.max(axis=1).mean() / ideal.mean()
    by_rank = [np.maximum(c[:, r], ideal).mean() / ideal.mean() for r in range(c.shape[1])]
    return s, by_rank


def spawned_children():
    """Live spawn workers whose parent is this test process."""
    return live_processes(ppid=os.getpid(), cmdline_has=b"spawn_main")


def session_members(sid):
    """Live processes in session sid (a CLI started with start_new_session)."""
    return live_processes(sid=sid)


def wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def assert_reaped(pids):
    assert pids, "the run should record its workers' pids"
    assert not [p for p in pids if alive(p)]
    assert spawned_children() == []


# --------------------------------------------------------- the real barrier
@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_barrier_lab_slow_rank_cli_trace_slowdown(tmp_path, capsys):
    out = tmp_path / "lab.csv"
    code = cli_main(
        ["barrier", "--workers", "4", "--steps", "16", "--step-seconds", "0.04",
         "--slow-rank", "1", "--slow-factor", "2", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "slowest worker: rank 1" in printed and "straggle-edu analyze" in printed
    rows, complete = read_trace(out)
    assert complete and len(rows) == 16 * 4 * 2
    c, w = compute_matrix(rows)
    s, by_rank = per_rank_slowdown(c)
    # 1.6 by definition, plus a little for jitter; a busy machine wakes every
    # worker a little late, which adds the same to all and pulls S down a bit.
    assert 1.45 <= s <= 1.75, s
    assert int(np.argmax(by_rank)) == 1
    assert by_rank[1] == pytest.approx(s, rel=0.02)
    assert max(by_rank[r] for r in (0, 2, 3)) < 1.1
    # The what-if analyzer reads the same file and agrees, and names rank 1.
    a = analyze(out)
    assert a.format == "per-rank" and a.culprit() == 1
    assert a.slowdown == pytest.approx(s, rel=1e-9)
    assert {int(k): v for k, v in a.by_rank.items()} == pytest.approx(dict(enumerate(by_rank)), rel=1e-9)
    # The slow rank barely waits; the others wait about its extra 40 ms.
    assert np.median(w[:, 1]) < 0.005
    assert np.median(w[:, [0, 2, 3]]) == pytest.approx(0.04, abs=0.01)
    # compute + wait is the step (release to release) on every rank.
    period = c + w
    assert np.all(np.abs(period - period.mean(axis=1, keepdims=True)) < 0.01)


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_barrier_lab_result_matches_its_trace_and_prediction(tmp_path):
    out = tmp_path / "lab.csv"
    r = run_barrier_lab(workers=3, steps=12, step_seconds=0.02, jitter=0.1, seed=3, out=out)
    rows, complete = read_trace(out)
    c, w = compute_matrix(rows)
    assert complete and r.complete and r.path == out
    np.testing.assert_allclose(c, r.busy, atol=2e-9)
    np.testing.assert_allclose(w, r.wait, atol=2e-9)
    # Sleeping never ends early: the measured compute covers the drawn time.
    assert np.all(r.busy >= r.planned - 1e-4)
    # Starts are measured from the first step and follow release to release.
    assert r.start[0].min() == 0.0 and np.all(np.diff(r.start, axis=0) > 0)
    p = r.prediction()
    assert p.predicted == pytest.approx(p.expected_max + r.overhead)
    assert p.expected_max == pytest.approx(predict_step_time(r.settings.step_times()))
    assert p.measured == pytest.approx(r.mean_step_time) and p.stderr == pytest.approx(r.stderr)
    assert abs(p.error) < 0.25, str(p)  # a few per cent on a quiet machine
    assert p.stderr > 0 and math.isfinite(p.z)
    assert r.slowdown() == pytest.approx(per_rank_slowdown(c)[0], rel=1e-6)
    np.testing.assert_allclose(r.wait_share(), w.sum(axis=0) / (c + w).sum(axis=0), rtol=1e-6)


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_barrier_lab_compute_work_is_real_and_timed():
    workers = min(2, bl.cpu_cores())
    t0 = time.process_time()
    r = run_barrier_lab(workers=workers, steps=4, step_seconds=0.02, work="compute", seed=1)
    assert r.complete and r.busy.shape == (4, workers)
    assert np.all(r.busy >= r.planned - 1e-4) and np.all(r.busy < r.planned + 0.05)
    assert time.process_time() - t0 < 2.0  # the work ran in the workers, not here


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_barrier_lab_one_worker_never_waits_long():
    r = run_barrier_lab(workers=1, steps=3, step_seconds=0.01)
    assert r.busy.shape == (3, 1) and np.all(r.wait < 0.01)


def test_planned_durations_are_seeded_per_rank():
    a = LabSettings(workers=3, steps=5, seed=4).planned_durations()
    b = LabSettings(workers=5, steps=5, seed=4).planned_durations()
    np.testing.assert_array_equal(a, b[:, :3])
    assert not np.array_equal(a[:, 0], a[:, 1])
    slow = LabSettings(workers=3, steps=5, seed=4, slow_rank=2, slow_factor=3).planned_durations()
    np.testing.assert_allclose(slow[:, 2], 3 * a[:, 2])


# ------------------------------------------------------------- prediction
def test_lab_settings_step_times_feed_the_model():
    # The model's own tests (test_models_barrier_lab) use plain StepTime lists; here the lab's settings.
    s = LabSettings(workers=4, step_seconds=0.05, jitter=0.0, slow_rank=1, slow_factor=2.0)
    assert [t.mean() for t in s.step_times()] == pytest.approx([0.05, 0.1, 0.05, 0.05])
    assert predict_step_time(s.step_times()) == pytest.approx(0.1, rel=1e-9)
    assert predicted_slowdown(s.step_times()) == pytest.approx(1.6, rel=1e-9)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "0"], "--workers must be a whole number in 1..64, got 0"),
        (["--workers", "65"], "--workers must be a whole number in 1..64, got 65"),
        (["--workers", str(bl.cpu_cores() + 1), "--work", "compute"], "with --work compute"),
        (["--slow-rank", "4"], "--slow-rank must be a whole number in 0..3 (one of the 4 workers), got 4"),
        (["--slow-rank", "-1"], "--slow-rank must be a whole number in 0..3"),
        (["--step-seconds", "-0.1"], "--step-seconds must be in (0, 60], got -0.1"),
        (["--pause-seconds", "-1"], "--pause-seconds must be in [0, 60], got -1.0"),
        (["--jitter", "-0.1"], "--jitter must be in [0, 1], got -0.1"),
        (["--steps", "1"], "--steps must be a whole number in 2..100000, got 1"),
        (["--slow-factor", "2"], "--slow-factor needs --slow-rank"),
        (["--timeout", "-1"], "--timeout must be > 0, got -1.0"),
        (["--workers", str(bl.cpu_cores() + 1), "--work", "fixed"], "with --work fixed"),
        (["--workers", "1", "--work", "fixed", "--jitter", "0.1"], "--jitter must be 0 with --work fixed"),
        (["--workers", "1", "--work", "fixed", "--work-units", "0"], "--work-units must be a whole number in 1.."),
        (["--work-units", "10"], "--work-units must be None unless --work fixed"),
    ],
)
def test_barrier_cli_bad_input_is_one_clear_line(tmp_path, capsys, argv, message):
    out = tmp_path / "x.csv"
    code = cli_main(["barrier", *argv, "--out", str(out)])  # 4 workers by default
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # nothing starts before the input is checked
    assert spawned_children() == []


def test_barrier_cli_missing_output_folder(tmp_path, capsys):
    code = cli_main(["barrier", "--out", str(tmp_path / "no" / "such" / "x.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "folder that exists" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(workers=2.5), "workers"),
        (dict(workers=True), "workers"),
        (dict(work="gpu"), "work"),
        (dict(slow_rank=1.5), "slow_rank"),
        (dict(slow_factor=0), "slow_factor"),
        (dict(pause_prob=1.5), "pause_prob"),
        (dict(step_seconds=float("nan")), "step_seconds"),
        (dict(seed=-1), "seed"),
        (dict(timeout=0), "timeout"),
        (dict(progress=3), "progress"),
        (dict(out=""), "out"),
    ],
)
def test_run_barrier_lab_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        run_barrier_lab(**{"steps": 2, "step_seconds": 0.01, **kwargs})
    assert spawned_children() == []


# ---------------------------------------------------------------- clean-up
def test_cleanup_when_a_worker_dies(tmp_path):
    out = tmp_path / "lab.csv"
    victim = {}

    def kill_one(done, total):
        if done == 2:
            pid = spawned_children()[0]
            victim["pid"] = pid
            os.kill(pid, signal.SIGKILL)

    with pytest.raises(RuntimeError, match=r"worker \d was killed by signal 9") as info:
        run_barrier_lab(workers=3, steps=50, step_seconds=0.02, out=out, progress=kill_one)
    partial = info.value.lab_result
    assert not partial.complete and partial.steps_done >= 2
    assert_reaped(partial.pids)
    rows, complete = read_trace(out)
    assert not complete and len(rows) == partial.steps_done * 3 * 2


def test_cleanup_when_the_parent_code_fails(tmp_path):
    out = tmp_path / "lab.csv"

    def broken(done, total):
        if done == 3:
            raise ValueError("a broken progress bar")

    with pytest.raises(ValueError, match="a broken progress bar") as info:
        run_barrier_lab(workers=4, steps=50, step_seconds=0.02, out=out, progress=broken)
    partial = info.value.lab_result
    assert_reaped(partial.pids)
    rows, complete = read_trace(out)
    assert not complete and {s for s, _, _ in rows} == {0, 1, 2}


def test_cleanup_on_keyboard_interrupt_keeps_partial_trace(tmp_path):
    # The notebook's stop button raises KeyboardInterrupt in the kernel's
    # main thread, wherever it is: here, inside the run.
    out = tmp_path / "lab.csv"

    def stop_button(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        run_barrier_lab(workers=4, steps=50, step_seconds=0.02, out=out, progress=stop_button)
    partial = info.value.lab_result
    assert not partial.complete and partial.steps_done == 2 and partial.busy.shape == (2, 4)
    assert_reaped(partial.pids)
    rows, complete = read_trace(out)
    assert not complete and len(rows) == 2 * 4 * 2


def test_cleanup_finishes_despite_a_second_interrupt(tmp_path, monkeypatch):
    # Pressing stop again while the workers are being stopped must not leave
    # any of them behind: the second SIGINT waits until the clean-up is done.
    real_reap, seen = bl.reap, {}

    def stop_with_a_second_sigint(procs, grace=1.0, **kwargs):
        seen["pids"] = [p.pid for p in procs]
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the signal arrives here, in the middle of the clean-up
        real_reap(procs, grace, **kwargs)
        seen["finished"] = True

    def stop_button(done, total):
        if done == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(bl, "reap", stop_with_a_second_sigint)
    out = tmp_path / "lab.csv"
    with pytest.raises(KeyboardInterrupt):
        run_barrier_lab(workers=3, steps=50, step_seconds=0.02, out=out, progress=stop_button)
    assert seen["finished"]
    assert_reaped(seen["pids"])
    assert not read_trace(out)[1]


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_cleanup_on_timeout(tmp_path):
    out = tmp_path / "lab.csv"
    t0 = time.monotonic()
    with pytest.raises(BarrierLabTimeout, match=r"did not finish within timeout=2 s") as info:
        run_barrier_lab(workers=4, steps=200, step_seconds=0.05, out=out, timeout=2.0)
    assert time.monotonic() - t0 < 6.0
    partial = info.value.lab_result
    assert_reaped(partial.pids)
    rows, complete = read_trace(out) if out.read_text().count("\n") > 2 else ({}, False)
    assert not complete and out.read_text().rstrip().endswith("# incomplete")
    assert len(rows) == partial.steps_done * 4 * 2


def _start_cli(out, steps=400):
    cmd = [sys.executable, "-m", "straggle_edu", "barrier", "--workers", "4", "--steps", str(steps),
           "--step-seconds", "0.02", "--slow-rank", "2", "--out", str(out)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_steps(proc, out, steps=3):
    ok = wait_until(lambda: out.exists() and out.read_text().count("\n") > 1 + 8 * steps or proc.poll() is not None, 30)
    assert ok and proc.poll() is None, "the CLI run should be going"
    assert len(session_members(proc.pid)) >= 5  # the parent and its 4 workers at least


@pytest.mark.parametrize("target", ["parent", "group"])
def test_cli_sigint_reaps_every_process_and_marks_trace(tmp_path, target):
    # "parent" is the notebook's stop button (SIGINT to the kernel only);
    # "group" is Ctrl-C in a terminal (SIGINT to every process of the job).
    out = tmp_path / "lab.csv"
    proc = _start_cli(out)
    try:
        _wait_for_steps(proc, out)
        if target == "parent":
            os.kill(proc.pid, signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130
        assert "interrupted after" in err and "Traceback" not in err
        assert wait_until(lambda: session_members(proc.pid) == [], 10), session_members(proc.pid)
        rows, complete = read_trace(out)
        assert not complete and len(rows) >= 3 * 8 and len(rows) % 8 == 0
        assert analyze(out).culprit() == 2  # the partial trace is still usable
    finally:
        if proc.poll() is None or session_members(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_workers_exit_when_the_parent_is_killed(tmp_path):
    # SIGKILL gives the parent no chance to clean up: the workers notice
    # that their parent is gone and exit by themselves.
    out = tmp_path / "lab.csv"
    proc = _start_cli(out)
    try:
        _wait_for_steps(proc, out)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_until(lambda: session_members(proc.pid) == [], 10), session_members(proc.pid)
        rows, _ = read_trace(out)
        assert len(rows) >= 3 * 8
    finally:
        if session_members(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


# ------------------------------------------------------------ fixed work
def test_lab_settings_fixed_work_draws_nothing():
    s = LabSettings(workers=1, steps=3, step_seconds=0.01, work="fixed", work_units=40)
    assert s.jitter == 0.0 and LabSettings().jitter == 0.05  # None means 0 for fixed, 0.05 for drawn work
    np.testing.assert_array_equal(s.planned_durations(), np.full((3, 1), 0.01))  # the nominal size, not a draw
    assert [t.jitter for t in s.step_times()] == [0.0]
    if bl.cpu_cores() >= 2:
        two = LabSettings(workers=2, work="fixed", work_units=40, slow_rank=1, slow_factor=2.5)
        assert (two.units(0), two.units(1)) == (40, 100)


@pytest.mark.parametrize("kwargs, match", [
    (dict(jitter=0.05), "jitter must be 0 with work='fixed'"),
    (dict(pause_prob=0.1), "pause_prob must be 0 with work='fixed'"),
    (dict(work_units=0), "work_units must be a whole number in 1..1000000000, got 0"),
    (dict(workers=bl.cpu_cores() + 1), "with work='fixed'"),
    (dict(work="sleep", work_units=10), "work_units must be None unless work='fixed'"),
])
def test_lab_settings_fixed_work_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LabSettings(**{"workers": 1, "work": "fixed", **kwargs})


def test_fixed_work_is_the_same_computation_every_time():
    assert bl._fixed_work(25) == bl._fixed_work(25) != bl._fixed_work(26)


def test_calibrate_work_units_on_a_fake_clock(monkeypatch):
    # A kernel pass that costs exactly 20 us on a fake clock: 10 ms is 500 passes, 1 s is 50,000.
    clock = [0.0]
    monkeypatch.setattr(bl.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(bl, "_fixed_work", lambda units: clock.__setitem__(0, clock[0] + 20e-6 * units))
    assert bl.calibrate_work_units(0.01) == 500
    assert bl.calibrate_work_units(1.0, repeats=1) == 50_000
    assert bl.calibrate_work_units(1e-9) == 1
    with pytest.raises(ValueError, match="seconds must be in"):
        bl.calibrate_work_units(0)


@pytest.mark.slow  # times real processes: alone, in the slow tier
def test_barrier_lab_fixed_work_measures_the_machine(tmp_path):
    workers = min(2, bl.cpu_cores())
    r = run_barrier_lab(workers=workers, steps=6, step_seconds=0.01, work="fixed", work_units=50,
                        out=tmp_path / "fixed.csv")
    assert r.complete and r.busy.shape == (6, workers) and r.settings.work_units == 50
    rows, complete = read_trace(r.path)
    c, _ = compute_matrix(rows)
    np.testing.assert_allclose(c, r.busy, atol=1e-6)
    p = r.prediction()
    # No model: E[max] comes from the measured compute times, checked against the run's own max.
    assert p.expected_max == pytest.approx(empirical_expected_max([(c, workers)]), rel=1e-6)
    assert p.drawn_max == pytest.approx(c.max(axis=1).mean(), rel=1e-6)
    assert c.min() - 1e-9 <= p.expected_max <= c.max() + 1e-9
    assert p.predicted == pytest.approx(p.expected_max + r.overhead)


def test_barrier_lab_fixed_work_is_sized_when_not_given():
    r = run_barrier_lab(workers=1, steps=2, step_seconds=0.005, work="fixed")
    assert r.complete and r.settings.work_units >= 1 and r.settings.jitter == 0.0


def test_barrier_cli_fixed_work(tmp_path, capsys):
    out = tmp_path / "fixed.csv"
    code = cli_main(["barrier", "--workers", "1", "--steps", "3", "--work", "fixed", "--work-units", "30",
                     "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "fixed work: 30 kernel passes per step" in printed and out.exists()
