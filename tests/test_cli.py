"""The ``straggle-edu`` command itself: Ctrl-C works however it was started.

A shell without job control starts a background job (``cmd &``) with SIGINT
ignored, and Python keeps an ignored SIGINT ignored. The command installs its
Ctrl-C handler explicitly, so SIGINT stops it cleanly there too.
"""

import os
import signal
import subprocess
import sys
import time

from straggle_edu.app import cli

from _procs import live_processes


def _wait_until(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_catch_ctrl_c_replaces_an_ignored_sigint():
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cli._catch_ctrl_c() is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_main_restores_the_sigint_handler_it_replaced(capsys):
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cli.main([]) == 2  # no subcommand: prints the help
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
    assert "usage: straggle-edu" in capsys.readouterr().out


def test_main_barrier_stops_on_sigint_when_started_with_sigint_ignored(tmp_path):
    out = tmp_path / "lab.csv"
    argv = ["-m", "straggle_edu", "barrier", "--workers", "2", "--steps", "400", "--step-seconds", "0.02",
            "--out", str(out)]
    # Ignore SIGINT, then exec the command: exactly what `straggle-edu barrier ... &` gets from a shell.
    launcher = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                f"os.execv(sys.executable, [sys.executable, *{argv!r}])")
    proc = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        started = _wait_until(lambda: out.exists() and out.read_text().count("\n") > 1 + 4 * 3, 30)
        assert started and proc.poll() is None, "the barrier run should be going"
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, err
        assert "interrupted after" in err and "Traceback" not in err
        assert _wait_until(lambda: live_processes(sid=proc.pid) == [], 10), "a worker outlived the command"
    finally:
        if proc.poll() is None or live_processes(sid=proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# --------------------------------------------------------------------------
# --lang: the printed output in Chinese, errors, JSON and --help in English


def _example_trace():
    from straggle_edu.traces.synthetic import example_trace_path

    return str(example_trace_path("slow-worker"))


def _zh(text):
    from straggle_edu.i18n import set_language, _

    set_language("zh")
    try:
        return _(text)
    finally:
        set_language(None)


def test_lang_is_accepted_before_and_after_the_subcommand():
    parser = cli._parser()
    assert parser.parse_args(["--lang", "zh", "lab"]).lang == "zh"
    assert parser.parse_args(["lab", "--lang", "zh"]).lang == "zh"
    assert parser.parse_args(["site", "out", "--lang", "zh"]).lang == "zh"
    assert parser.parse_args(["--lang", "en", "site", "out", "--lang", "zh"]).lang == "zh"
    assert not hasattr(parser.parse_args(["lab"]), "lang")  # the environment decides


def test_lang_rejects_another_language(capsys):
    import pytest

    with pytest.raises(SystemExit):
        cli.main(["analyze", "t.csv", "--lang", "fr"])
    assert "invalid choice: 'fr'" in capsys.readouterr().err


def test_analyze_report_in_chinese_json_and_errors_in_english(capsys):
    import json

    from straggle_edu.i18n import get_language

    trace = _example_trace()
    assert cli.main(["analyze", trace, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    header = _zh("Trace: {source} ({format}, {steps} steps, {workers} workers)")
    assert out.startswith(header.split("{source}")[0]) and "S_X = " in out
    if header != "Trace: {source} ({format}, {steps} steps, {workers} workers)":  # the catalog is compiled
        assert "减速比" in out and "Trace:" not in out
    assert get_language() == "en", "--lang applies to one command, not to the process after it"
    assert cli.main(["--lang", "zh", "analyze", trace, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "op-level"
    assert cli.main(["analyze", trace, "--top", "0", "--lang", "zh"]) == 2
    assert "--top must be a whole number >= 1, got 0" in capsys.readouterr().err


def test_lang_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("STRAGGLE_EDU_LANG", "zh")
    assert cli.main(["analyze", _example_trace(), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith(_zh("Slowdown S = {S:.3f}: the job ran {S:.2f}x as long as it would "
                                              "without stragglers;").split("{S:.3f}")[0])
