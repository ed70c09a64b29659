"""The SGD experiment's torch backend, for real under torchrun with gloo on CPU (at most 4 ranks)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from straggle_edu.instruments.sgd import SGDSettings, make_plan, replay

# torchrun starts real processes that time themselves: the slow tier.
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _torch():
    pytest.importorskip("torch", reason="the SGD experiment's torch backend needs torch (pip install torch)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torchrun(nproc, *args, timeout=180):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
           "-m", "straggle_edu.instruments.sgd_torch", *args]
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def test_sgd_torch_sync_agrees_with_multiprocessing_within_float_tolerance(tmp_path):
    out = tmp_path / "w.npy"
    run = torchrun(3, "--scheme", "sync", "--workers", "3", "--steps", "6", "--base-step", "0.01",
                   "--json", "--weights-out", str(out))
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # the multiprocessing backend's weights equal the replay bit for bit (test_sgd_experiment)
    W, losses = replay(make_plan(SGDSettings(scheme="sync", workers=3, steps=6, base_step=0.01)))
    assert np.allclose(np.load(out), W, rtol=0, atol=1e-12)
    assert result["final_loss"] == pytest.approx(losses[-1], rel=1e-9)
    assert result["backend"] == "torch" and result["processes"] == 3


def test_sgd_torch_backup_on_gloo_uses_the_first_n(tmp_path):
    out = tmp_path / "w.npy"
    run = torchrun(4, "--scheme", "backup", "--workers", "3", "--backups", "1", "--steps", "5",
                   "--base-step", "0.01", "--json", "--weights-out", str(out))
    assert run.returncode == 0, run.stderr[-2000:]
    W, _ = replay(make_plan(SGDSettings(scheme="backup", workers=3, backups=1, steps=5, base_step=0.01)))
    assert np.array_equal(np.load(out), W)  # rank 0 adds the counted gradients in rank order, as the replay
    assert json.loads(run.stdout.strip().splitlines()[-1])["gradients_applied"] == 15


def test_sgd_torch_wrong_world_size_is_a_clear_error():
    run = torchrun(2, "--scheme", "backup", "--workers", "2", "--backups", "1", "--steps", "2")
    assert run.returncode != 0
    assert "need 3 ranks for scheme 'backup', got a world of 2" in run.stderr
