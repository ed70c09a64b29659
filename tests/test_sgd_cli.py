"""straggle-edu sgd: flags, clear errors like barrier's, the JSON result object."""

import json

import pytest

from straggle_edu.app.cli import main


@pytest.mark.parametrize("argv, message", [
    (["--workers", "0"], "--workers must be a whole number in 1..64, got 0"),
    (["--scheme", "fast"], "--scheme must be one of sync, backup, drop, local, balanced, got 'fast'"),
    (["--backups", "1"], "--backups must be 0 for scheme 'sync' (only backup and drop use it), got 1"),
    (["--scheme", "drop", "--workers", "4", "--backups", "4"], "--backups must be a whole number in 0..3, got 4"),
    (["--slow", "sometimes"], "--slow must be one of none, transient, persistent, data, got 'sometimes'"),
    (["--p", "1.5"], "--p must be in [0, 1], got 1.5"),
    (["--base-step", "0"], "--base-step must be in (0, 10], got 0.0"),
    (["--out", "/no/such/folder/run.csv"], "--out must be a file in a folder that exists"),
    (["--backend", "torch"], "torchrun --nproc-per-node P"),
])
def test_sgd_cli_bad_arguments_are_clear_errors(argv, message, capsys):
    assert main(["sgd", *argv]) == 2
    assert message in capsys.readouterr().err


def test_sgd_cli_json_result_object(capsys, tmp_path):
    out = tmp_path / "run.csv"
    rc = main(["sgd", "--scheme", "drop", "--workers", "2", "--backups", "1", "--steps", "3",
               "--base-step", "0.01", "--json", "--out", str(out)])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("scheme", "workers", "backups", "processes", "slow", "steps", "seed", "timing_seed", "backend",
                "wall_s", "final_loss", "final_accuracy", "accuracy_long", "target_loss", "time_to_target_s",
                "gradients_applied", "gradients_discarded", "worker_s_reserved", "gradient_s_computed",
                "gradient_s_discarded", "weights_sha256", "curve"):
        assert key in d
    assert d["gradients_applied"] == 3 and d["gradients_discarded"] == 3 and len(d["weights_sha256"]) == 64
    assert out.read_text().startswith("rank,step,compute_s,wait_s,comm_s,counted\n")


def test_sgd_cli_says_where_the_target_loss_comes_from(capsys):
    common = ["sgd", "--scheme", "backup", "--workers", "2", "--backups", "1", "--steps", "4", "--base-step", "0.005"]
    assert main(common) == 0
    assert "(sync's loss at 80% of its steps)" in capsys.readouterr().out
    assert main([*common, "--target-loss", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "target loss 0.0100 (yours) never reached" in out and "80%" not in out


def test_sgd_cli_sigterm_reaps_every_process_and_marks_the_csv(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from _procs import live_processes

    out = tmp_path / "run.csv"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    proc = subprocess.Popen([sys.executable, "-m", "straggle_edu", "sgd", "--steps", "2000", "--workers", "3",
                             "--scheme", "backup", "--backups", "1", "--out", str(out)],
                            env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(live_processes(sid=proc.pid)) < 5 and time.monotonic() < deadline:  # CLI, forkserver, 4 workers
            time.sleep(0.2)
        time.sleep(1.0)  # a few steps
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 130
    deadline = time.monotonic() + 10
    while live_processes(sid=proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live_processes(sid=proc.pid) == []
    assert out.read_text().rstrip().endswith("# incomplete")


def test_sgd_cli_help_names_every_default():
    import argparse

    from straggle_edu.instruments.sgd import configure

    parser = argparse.ArgumentParser()
    configure(parser)
    missing = [a.option_strings[0] for a in parser._actions
               if a.default not in (None, False, argparse.SUPPRESS) and "default" not in (a.help or "")]
    assert missing == [], f"options whose help does not say their default: {missing}"
