"""``straggle-edu lab`` starts a real JupyterLab on localhost only, with a token."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from straggle_edu.app import launch

ROOT = Path(__file__).resolve().parent.parent


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _non_loopback_address():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent for UDP connect
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def test_lab_command_binds_localhost_with_a_token(tmp_path):
    (tmp_path / launch.START).write_text("{}")
    argv = launch.lab_command(tmp_path, port=9999, token="abc")
    assert "--ServerApp.ip=127.0.0.1" in argv
    assert "--IdentityProvider.token=abc" in argv
    assert argv[-1] == launch.START
    assert "--IdentityProvider.token=" not in launch.lab_command(tmp_path)[-2:]  # a token is always set
    assert any(a.startswith("--IdentityProvider.token=") and len(a) > 40 for a in launch.lab_command(tmp_path))


def test_lab_command_in_chinese_opens_the_twin(tmp_path):
    (tmp_path / launch.START).write_text("{}")
    assert launch.lab_command(tmp_path, token="abc", lang="zh")[-1] == launch.START  # no twin yet: English
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / launch.START).write_text("{}")
    argv = launch.lab_command(tmp_path, token="abc", lang="zh")
    assert argv[-1] == "zh/00_start_here.ipynb"
    assert f"--ServerApp.root_dir={tmp_path.resolve()}" in argv
    assert launch.lab_command(tmp_path, token="abc")[-1] == launch.START


def test_lab_run_in_chinese_sets_the_language_for_the_server(tmp_path, monkeypatch, capsys):
    from straggle_edu.app.cli import main

    (tmp_path / "notebooks" / "zh").mkdir(parents=True)
    (tmp_path / "notebooks" / "zh" / launch.START).write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STRAGGLE_EDU_LANG", raising=False)
    seen = {}

    class FakeServer:
        def __init__(self, argv, cwd, env):
            seen.update(argv=argv, cwd=cwd, env=env)

        def wait(self):
            return 0

        def poll(self):
            return 0

    monkeypatch.setattr(launch.subprocess, "Popen", FakeServer)
    assert main(["lab", "--lang", "zh", "--no-browser", "--port", str(_free_port())]) == 0
    assert seen["env"]["STRAGGLE_EDU_LANG"] == "zh", "kernels inherit the server's environment"
    assert "zh/00_start_here.ipynb" in seen["argv"]
    assert re.search(r"Open: http://127\.0\.0\.1:\d+/lab/tree/zh/00_start_here\.ipynb\?token=[0-9a-f]{48}",
                     capsys.readouterr().out)


def test_find_notebooks_from_another_folder_finds_the_checkouts(tmp_path):
    # An editable install, as this suite's: the checkout's notebooks/ beside the package.
    assert launch.find_notebooks(tmp_path) == ROOT / "notebooks"


def test_find_notebooks_without_a_checkout_says_where_it_looked(tmp_path, monkeypatch):
    # An installed wheel: no notebooks/ here, none beside the package (tests/test_install.py runs the real command).
    monkeypatch.setattr(launch, "__file__", str(tmp_path / "site-packages" / "straggle_edu" / "app" / "launch.py"))
    with pytest.raises(FileNotFoundError, match=r"no notebooks/ folder in .* or beside the package .*a checkout of straggle-edu"):
        launch.find_notebooks(tmp_path)


def test_lab_rejects_a_bad_port(capsys):
    from straggle_edu.app.cli import main

    assert main(["lab", "--port", "0"]) == 2
    assert "port must be a whole number in 1..65535, got 0" in capsys.readouterr().err


@pytest.mark.slow
def test_lab_serves_on_localhost_only_and_requires_the_token():
    port = _free_port()
    env = dict(os.environ, JUPYTER_PLATFORM_DIRS="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "straggle_edu", "lab", "--no-browser", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        start_new_session=True,
    )
    try:
        token, seen, deadline = None, [], time.monotonic() + 120
        while token is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(r"Open: http://127\.0\.0\.1:(\d+)/lab\S*\?token=([0-9a-f]+)", line)
            if m:
                assert int(m.group(1)) == port
                token = m.group(2)
        assert token, "".join(seen)[-3000:]
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the server answers
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5).close()
                break
            except OSError:
                time.sleep(0.5)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/api/contents", timeout=30)
        assert refused.value.code in (401, 403)
        with urllib.request.urlopen(f"{base}/api/contents/00_start_here.ipynb?content=0&token={token}", timeout=30) as r:
            assert r.status == 200
        other = _non_loopback_address()
        if other:
            with pytest.raises(OSError):
                socket.create_connection((other, port), timeout=5).close()
    finally:
        proc.send_signal(signal.SIGTERM)  # the launcher alone: it must stop JupyterLab itself
        try:
            proc.wait(timeout=60)
        finally:
            leftover = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
            for pid in leftover:
                os.kill(int(pid), signal.SIGKILL)
            proc.stdout.close()
    assert leftover == [], "JupyterLab outlived its launcher"
