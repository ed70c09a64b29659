"""The fleet as platform teams run it: how it fails, how it is stopped, how it reports progress, how it finds its
cluster (docs/fleet.md, "Errors and hostile fleets", "Progress", "Where it runs"; straggle_edu/fleet/cluster.py).

The slow tests run real processes: the ``straggle-edu fleet`` command, ``dask scheduler`` and ``dask worker``,
a LocalCluster, real signals to the whole process group as a terminal or Slurm sends them, the hand recipe of
docs/fleet.md as written, and a dask-jobqueue ``SLURMCluster`` whose worker starts through a stand-in ``sbatch``.
Time bounds here are wide (a refusal well inside the timeout), never a measure of speed.
"""

import ast
import gc
import json
import os
import pathlib
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from _procs import live_processes
from straggle_edu.app.cli import main
from straggle_edu.fleet.cluster import ENV_ADDRESS, Terminated, check_signals, scheduler_address, stopping_signals
from straggle_edu.fleet.store import clean_row, read_rows
from straggle_edu.traces.optrace import ARTIFACT_DATA

ROOT = pathlib.Path(__file__).resolve().parents[1]
OSDI = ARTIFACT_DATA
DOC = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
FLEET = [sys.executable, "-m", "straggle_edu", "fleet"]
DASK = [sys.executable, "-m", "dask"]
PROGRESS = re.compile(r"fleet progress: (\w+=\S+)( \w+=\S+)*")


# -- quick: the precedence, the options, the progress lines -------------------------------------------------------

def test_scheduler_address_precedence_scheduler_then_file_then_environment_then_local():
    env = {ENV_ADDRESS: "tcp://10.0.0.7:8786"}
    assert scheduler_address("tcp://a:1", "s.json", None, env) == ("tcp://a:1", "--scheduler")
    assert scheduler_address(None, "s.json", None, env) == (None, "--scheduler-file s.json")
    assert scheduler_address(None, None, None, env) == ("tcp://10.0.0.7:8786", ENV_ADDRESS)
    assert scheduler_address(None, None, 2, env) == (None, None)  # --workers asks for a LocalCluster in so many words
    assert scheduler_address(None, None, 0, env) == (None, None)  # and 0 for this process
    assert scheduler_address(None, None, None, {ENV_ADDRESS: " "}) == (None, None)
    assert scheduler_address(None, None, None, {}) == (None, None)


def test_help_names_the_report_the_timeout_the_wait_and_where_the_cluster_comes_from(capsys):
    with pytest.raises(SystemExit):
        main(["fleet", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("report.html", "--timeout SECONDS", "(default 60)", "wait for its first worker",
                  "'0 workers on ...; waiting'", "--scheduler-file PATH", "$DASK_SCHEDULER_ADDRESS",
                  "or ten times as long as the last rewrite took", "--log-every SECONDS", "fleet progress: done=N"):
        assert words in text, words


@pytest.mark.parametrize("argv, message", [
    (["--timeout", "0"], "timeout must be > 0, got 0"),
    (["--log-every", "-1"], "log_every must be > 0, got -1"),
    (["--scheduler-file", "s.json", "--workers", "2"], "workers must not be given with a scheduler_file"),
])
def test_bad_options_are_one_line_and_create_nothing(tmp_path, capsys, argv, message):
    assert main(["fleet", str(OSDI), "--out", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_scheduler_file_that_is_not_a_schedulers_is_one_line(tmp_path, capsys):
    (tmp_path / "s.json").write_text("{}")
    assert main(["fleet", str(OSDI), "--out", str(tmp_path / "out"), "--scheduler-file", str(tmp_path / "s.json")]) == 2
    assert capsys.readouterr().err == (f"straggle-edu fleet: error: --scheduler-file {tmp_path / 's.json'} must be "
                                       "JSON with an \"address\" (as 'dask scheduler --scheduler-file' writes it), "
                                       "got '{}'\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("signum, exc", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)])
def test_a_stop_signal_dropped_inside_a_gc_callback_is_raised_again(capfd, signum, exc):
    # Python runs a handler wherever the main thread is; inside a garbage-collection callback (distributed's GC
    # diagnosis has one) the exception is printed as 'Exception ignored' and dropped, and the fleet went on
    fired = []

    def callback(phase, info):
        if phase == "start" and not fired:
            fired.append(signum)
            os.kill(os.getpid(), signum)
            sum(range(10_000))  # the handler runs here, at a bytecode of this callback

    with stopping_signals():
        gc.callbacks.append(callback)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(callback)
        assert fired
        with pytest.raises(exc):
            check_signals()
    assert "Exception ignored" not in capfd.readouterr().err and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def _logfmt(line):
    match = PROGRESS.fullmatch(line)
    assert match, line
    return {k: float(v) for k, v in (w.split("=") for w in line.removeprefix("fleet progress: ").split())}


def test_progress_without_a_terminal_is_log_lines_a_reader_can_parse(tmp_path, capsys):
    import argparse

    from straggle_edu.fleet import cli

    parser = argparse.ArgumentParser()
    cli.configure(parser)  # the fleet room's command, without the report
    assert cli.run(parser.parse_args([str(OSDI), "--out", str(tmp_path), "--workers", "0", "--log-every", "1e-9"])) == 0
    lines = capsys.readouterr().err.splitlines()  # pytest's stderr is no terminal, as in a batch log
    fields = [_logfmt(line) for line in lines]
    assert [f["done"] for f in fields] == [1, 2, 3, 3]  # one at each job (due every 1e-9 s), and one at the end
    assert all(f["total"] == 3 and f["errors"] == 0 and f["elapsed_s"] >= 0 for f in fields)
    assert all(f["eta_s"] >= 0 and f["jobs_per_s"] > 0 for f in fields) and fields[-1]["eta_s"] == 0


# -- slow: real processes ------------------------------------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fleet(args, env=None, **kw):
    return subprocess.Popen([*FLEET, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, **kw)


def _finish(proc, timeout=180):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _start(args, **kw):
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def _stop(procs):
    for p in reversed(procs):
        if p.poll() is None:
            p.kill()
        p.wait(timeout=30)


def _wait_for(what, condition, proc=None, seconds=120):
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc is None or proc.poll() is None, f"the process ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.02)


def _scheduler(tmp_path, name="scheduler.json"):
    """A real ``dask scheduler`` on 127.0.0.1 (no dashboard, a free port); its process and its scheduler file."""
    info = tmp_path / name
    proc = _start([*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(info)])
    _wait_for("scheduler file", lambda: info.exists() and "address" in info.read_text(), proc)
    return proc, info, json.loads(info.read_text())["address"]


def _worker(address):
    return _start([*DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """200 small synthetic jobs (several seconds on 2 workers): long enough to be stopped mid-run."""
    from straggle_edu.fleet.demo import write_demo

    return write_demo(tmp_path_factory.mktemp("demo") / "demo", jobs=200, seed=0, public=False, format="parquet").manifest


def _parts(out):
    return [p for p in (out / "parts").rglob("*.json") if not p.name.startswith(".tmp-")]


def _tables_hold_only_finished_jobs(out):
    """The tables a stopped run wrote: whole, every row a job that finished (its part, equal), no error row."""
    rows = read_rows(out)
    parts = {(r := clean_row(json.loads(p.read_bytes())))["content_hash"]: r for p in _parts(out)}
    assert rows and all(r["error"] is None for r in rows)
    assert all({k: v for k, v in r.items() if k not in ("job_id", "path")} ==
               {k: v for k, v in parts[r["content_hash"]].items() if k not in ("job_id", "path")} for r in rows)
    return rows


@pytest.mark.slow
def test_refused_unresolvable_silent_and_foreign_addresses_fail_in_one_line(tmp_path):
    silent = socket.socket()  # listens (the kernel completes the handshake) and never speaks Dask
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    full = socket.socket()  # a full backlog: the kernel drops new SYNs, as a firewall or a host that is down does
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    queued = [socket.socket() for _ in range(3)]
    for q in queued:
        q.setblocking(False)
        q.connect_ex(full.getsockname())
    banner = socket.socket()  # speaks first and not Dask, as sshd does: Dask read its banner as a message length
    banner.bind(("127.0.0.1", 0))
    banner.listen(8)
    accepted = []

    def greet():
        try:
            while True:
                conn, _ = banner.accept()
                accepted.append(conn)
                conn.sendall(b"SSH-2.0-OpenSSH_9.6p1 Debian\r\n")
        except OSError:  # closed at the end
            pass

    threading.Thread(target=greet, daemon=True).start()
    cases = {  # address, --timeout, the line's start, a bound well inside the timeout or just past it
        "refused": (f"tcp://127.0.0.1:{_free_port()}", 60, "cannot connect to the scheduler tcp://127.0.0.1:", 30),
        "unresolvable": ("tcp://no-such-host.invalid:8786", 60, "cannot connect to the scheduler tcp://no-such-host"
                         ".invalid:8786: the host 'no-such-host.invalid' does not resolve", 60 + 30),
        "silent": (f"tcp://127.0.0.1:{silent.getsockname()[1]}", 4, "no answer from the scheduler tcp://127.0.0.1:",
                   4 + 30),
        "unreachable": (f"tcp://127.0.0.1:{full.getsockname()[1]}", 4, f"no answer from the scheduler tcp://127.0.0.1:"
                        f"{full.getsockname()[1]} within 4 s (--timeout): the host is unreachable", 4 + 30),
        "not Dask": (f"tcp://127.0.0.1:{banner.getsockname()[1]}", 60, f"cannot connect to the scheduler tcp://"
                     f"127.0.0.1:{banner.getsockname()[1]}: what answers there does not speak Dask's protocol", 30),
    }
    try:
        started = {k: (time.monotonic(), _fleet([OSDI, "--out", tmp_path / k, "--scheduler", a, "--timeout", t]))
                   for k, (a, t, _, _) in cases.items()}
        for name, (t0, proc) in started.items():
            code, out, err = _finish(proc)
            elapsed = time.monotonic() - t0
            address, timeout, start, bound = cases[name]
            assert code == 1 and out == "", (name, err)
            assert err.count("\n") == 1 and err.startswith(f"straggle-edu fleet: error: {start}"), (name, err)
            assert elapsed < bound, (name, elapsed)
            assert not (tmp_path / name).exists()  # --out is made only once the cluster is there
            if name == "refused":
                assert "connection refused (nothing listens on 127.0.0.1:" in err
    finally:
        for sock in (silent, full, *queued, banner, *accepted):
            sock.close()


@pytest.mark.slow
def test_scheduler_without_workers_says_so_and_stops_at_the_timeout_also_when_its_workers_leave(demo, tmp_path):
    sched, info, address = _scheduler(tmp_path)
    procs = [sched]
    try:
        code, out, err = _finish(_fleet([OSDI, "--out", tmp_path / "none", "--scheduler-file", info, "--timeout", 5]))
        shown = f"{address} (from --scheduler-file {info})"
        waiting, error = err.splitlines()
        assert code == 1 and re.fullmatch(rf"0 workers on {re.escape(shown)}; waiting \([34] s of 5, --timeout\)", waiting)
        assert error == (f"straggle-edu fleet: error: 0 workers on {shown} after 5 s (--timeout); start some with: "
                         f"dask worker {address}")
        assert not (tmp_path / "none").exists()
        # the same scheduler named by the environment; a worker joins once the wait is said, and leaves mid-run
        out_dir = tmp_path / "out"
        proc = _fleet([demo, "--out", out_dir, "--timeout", 12, "--log-every", 1000], env={ENV_ADDRESS: address})
        first = proc.stderr.readline()
        assert first.startswith(f"0 workers on {address} (from {ENV_ADDRESS}); waiting ("), first
        worker = _start([*DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                         "--no-nanny"])
        procs.append(worker)
        _wait_for("3 finished jobs", lambda: out_dir.exists() and len(_parts(out_dir)) >= 3, proc)
        worker.kill()
        code, out, err = _finish(proc)
    finally:
        _stop(procs)
    shown = f"{address} (from {ENV_ADDRESS})"
    joined, *waits, error = err.splitlines()
    assert code == 1 and out == "" and joined == f"fleet: on the scheduler {shown}, 1 worker"
    assert waits and all(re.fullmatch(rf"0 workers on {re.escape(shown)}; waiting \(\d+ s of 12, --timeout\)", w)
                         for w in waits), waits
    rows = _tables_hold_only_finished_jobs(out_dir)
    assert error == (f"straggle-edu fleet: error: 0 workers on {shown} for 12 s (--timeout); the jobs left were not "
                     f"analysed; the {len(rows)} of 200 jobs finished are in {out_dir / 'jobs.csv'} and "
                     f"{out_dir / 'jobs.parquet'}; run the same command again to analyse the rest")


@pytest.mark.slow
def test_lost_scheduler_is_one_line_and_the_tables_hold_only_jobs_that_finished(demo, tmp_path):
    sched, info, address = _scheduler(tmp_path)
    procs = [sched, _worker(address)]
    out = tmp_path / "out"
    try:
        # the scheduler file is named first; a wrong DASK_SCHEDULER_ADDRESS beside it is not used
        proc = _fleet([demo, "--out", out, "--scheduler-file", info, "--log-every", 1000],
                      env={ENV_ADDRESS: f"tcp://127.0.0.1:{_free_port()}"})
        _wait_for("5 finished jobs", lambda: out.exists() and len(_parts(out)) >= 5, proc)
        sched.kill()  # the scheduler dies mid-run (its workers leave with it, as Dask's do)
        code, stdout, err = _finish(proc)
    finally:
        _stop(procs)
    lines = err.splitlines()
    assert code == 1 and stdout == "" and "Traceback" not in err
    assert lines[0] == f"fleet: on the scheduler {address} (from --scheduler-file {info}), 1 worker"
    assert len(lines) == 2 and re.fullmatch(
        rf"straggle-edu fleet: error: lost the connection to the scheduler {re.escape(address)} \(from "
        rf"--scheduler-file {re.escape(str(info))}\); the fleet's tasks were not finished; the (\d+) of 200 jobs "
        rf"finished are in {re.escape(str(out / 'jobs.csv'))} and {re.escape(str(out / 'jobs.parquet'))}; run the "
        r"same command again to analyse the rest", lines[1]), lines[1]
    rows = _tables_hold_only_finished_jobs(out)  # no 'scheduler-connection-lost' rows for jobs never analysed
    assert 5 <= len(rows) < 200 and f"the {len(rows)} of 200" in lines[1]


def _spawned_workers(sid):
    """Worker processes multiprocessing started in the session (whose leader is the CLI): spawned, or forked by the
    fork server, a child of the CLI, started anew or forked from it (the server's children; the server itself and
    the resource tracker left out)."""
    spawned = live_processes(sid=sid, cmdline_has=b"spawn_main")
    tracker = live_processes(sid=sid, cmdline_has=b"resource_tracker")
    servers = [p for p in live_processes(ppid=sid, sid=sid) if p not in spawned and p not in tracker]
    return spawned + [p for server in servers for p in live_processes(ppid=server, sid=sid)]


def _run_and_signal(demo, out, sig, when="mid-run"):
    """The command on a LocalCluster of 2 workers, in a session of its own; ``sig`` to the whole group, as a
    terminal's Ctrl-C or Slurm's scancel sends it: once jobs have finished, or as soon as the cluster's worker
    processes exist (still importing). (exit status, stderr)."""
    proc = _fleet([demo, "--out", out, "--workers", 2, "--log-every", 1000], start_new_session=True)
    try:
        if when == "mid-run":
            _wait_for("3 finished jobs", lambda: out.exists() and len(_parts(out)) >= 3, proc)
        else:
            _wait_for("the worker processes", lambda: len(_spawned_workers(proc.pid)) == 2, proc)
        os.killpg(proc.pid, sig)
        code, _, err = _finish(proc, timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _wait_for("the run's processes to end", lambda: live_processes(sid=proc.pid) == [], seconds=10)
    return code, err


@pytest.mark.slow
@pytest.mark.parametrize("when", ["mid-run", "while the cluster starts"])
def test_ctrl_c_to_the_process_group_says_interrupted_without_worker_tracebacks(demo, tmp_path, when):
    code, err = _run_and_signal(demo, tmp_path / "out", signal.SIGINT, when)
    assert (code, err) == (130, "interrupted\n")  # no 'Process Dask Worker process (from Nanny)' traceback


@pytest.mark.slow
def test_ctrl_c_on_a_terminal_ends_the_bar_before_interrupted(demo, tmp_path):
    """On a terminal the bar ends its line first: 'interrupted' was glued to the bar, which tqdm drew again after it."""
    import fcntl
    import pty
    import struct
    import termios

    out = tmp_path / "out"
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # tqdm draws only with rows
    proc = subprocess.Popen([*FLEET, str(demo), "--out", str(out), "--workers", "0"], stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    chunks = []

    def drain():
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        _wait_for("3 finished jobs", lambda: out.exists() and len(_parts(out)) >= 3, proc)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(10)
        os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    assert code == 130 and "%|" in text, text  # the bar was drawn
    assert "\ninterrupted\n" in text and text.rstrip().endswith("\ninterrupted"), text


@pytest.mark.slow
def test_sigterm_writes_the_tables_of_what_finished_and_says_terminated(demo, tmp_path):
    out = tmp_path / "out"
    code, err = _run_and_signal(demo, out, signal.SIGTERM)
    # one line, which says where the tables are and what they hold, as the line of a lost scheduler does
    line = re.fullmatch(rf"terminated: the (\d+) of 200 jobs finished are in {re.escape(str(out / 'jobs.csv'))}, "
                        rf"{re.escape(str(out / 'jobs.parquet'))}; run the same command again to analyse the rest\n",
                        err)
    assert code == 143 and line, err
    rows = _tables_hold_only_finished_jobs(out)
    assert 3 <= len(rows) < 200 and not (out / "fleet.json").exists()  # the run did not end: no figures
    assert int(line.group(1)) == len(rows)


def _bash_block(after):
    """The commands of the first ```bash block after the text ``after`` in docs/fleet.md."""
    block = DOC[DOC.index(after):].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("#")[0]) for line in block.splitlines() if line.strip() and line[0] != "#"]


def test_hand_recipe_binds_every_process_to_the_address_the_others_reach():
    scheduler, worker, fleet = _bash_block("Here the scheduler's machine is 10.0.0.5")
    assert scheduler[:2] == ["dask", "scheduler"] and worker[:2] == ["dask", "worker"] and fleet[0] == "straggle-edu"
    opt = lambda cmd, name: cmd[cmd.index(name) + 1]  # noqa: E731
    assert opt(scheduler, "--host") == "10.0.0.5" and opt(scheduler, "--dashboard-address").startswith("10.0.0.5:")
    assert worker[2] == f"tcp://10.0.0.5:{opt(scheduler, '--port')}" == opt(fleet, "--scheduler")
    assert opt(worker, "--host") == "10.0.0.6" and opt(worker, "--dashboard-address").startswith("10.0.0.6:")
    section = DOC.split("### A cluster by hand")[1].split("### SLURM")[0]
    assert not any("0.0.0.0" in block.split("```")[0] for block in section.split("```bash\n")[1:])


def _listening(pid):
    """(ip, port) of every listening socket of the process ``pid`` and its children."""
    import psutil

    root = psutil.Process(pid)
    found = set()
    for p in [root, *root.children(recursive=True)]:
        try:
            found |= {(c.laddr.ip, c.laddr.port) for c in p.net_connections("inet") if c.status == psutil.CONN_LISTEN}
        except psutil.NoSuchProcess:
            pass
    return found


@pytest.mark.slow
def test_hand_recipe_on_one_machine_runs_as_written_and_listens_on_127_0_0_1_only(tmp_path):
    ports = {"8786": str(_free_port()), "8787": str(_free_port())}
    place = {"runs/": str(OSDI), "fleet-out": str(tmp_path / "fleet-out"), **ports}
    commands = [[place.get(w, re.sub(r"(?<=:)(8786|8787)$", lambda m: ports[m[1]], w)) for w in cmd]
                for cmd in _bash_block("On one machine, everything on 127.0.0.1")]
    (scheduler, worker, fleet) = commands
    assert scheduler[:2] == ["dask", "scheduler"] and worker[:2] == ["dask", "worker"]
    address = f"tcp://127.0.0.1:{ports['8786']}"
    procs = [_start([*DASK, *scheduler[1:]], start_new_session=True)]
    try:
        _wait_for("the scheduler", lambda: ("127.0.0.1", int(ports["8786"])) in _listening(procs[0].pid), procs[0])
        procs.append(_start([*DASK, *worker[1:]], start_new_session=True))
        from distributed import Client

        with Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=120)
            sockets = {p.pid: _listening(p.pid) for p in procs}
        assert fleet[:2] == ["straggle-edu", "fleet"]
        code, out, err = _finish(_fleet(fleet[2:]))
        assert code == 0, err
        assert f"fleet: on the scheduler {address}, 2 workers" in err and len(read_rows(tmp_path / "fleet-out")) == 3
    finally:
        _stop(procs)
    assert ("127.0.0.1", int(ports["8787"])) in sockets[procs[0].pid]  # the scheduler's dashboard, where it was put
    assert len(sockets[procs[1].pid]) >= 4  # two nannies, two workers (and their dashboards)
    assert {ip for found in sockets.values() for ip, _ in found} == {"127.0.0.1"}


def _slurm_example():
    """The keyword arguments of the SLURMCluster(...) call in docs/fleet.md's example, as written."""
    block = DOC[DOC.index("### SLURM"):].split("```python\n", 1)[1].split("```", 1)[0]
    call = next(n for n in ast.walk(ast.parse(block)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") ==
                "SLURMCluster")
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def test_slurm_example_job_script():
    jobqueue = pytest.importorskip("dask_jobqueue", reason='the SLURM example needs pip install "straggle-edu[test]"')

    with jobqueue.SLURMCluster(**_slurm_example()) as cluster:
        script = cluster.job_script()
    lines = script.splitlines()
    for directive in ("#SBATCH -p cpu", "#SBATCH -A my-account", "#SBATCH -n 1", "#SBATCH --cpus-per-task=16",
                      "#SBATCH --mem=60G", "#SBATCH -t 02:00:00"):
        assert directive in lines, script
    (worker,) = [shlex.split(line) for line in lines if "distributed.cli.dask_worker" in line]
    opt = lambda name: worker[worker.index(name) + 1]  # noqa: E731
    assert worker[0] == sys.executable and (opt("--nworkers"), opt("--nthreads")) == ("16", "1")


FAKE_SBATCH = """#!/bin/sh
# sbatch, without Slurm: run a copy of the job script in a session of its own; say its id as sbatch does
id=$$
for script; do :; done
cp "$script" "$FAKE_SLURM/job-$id.sh"
setsid bash "$FAKE_SLURM/job-$id.sh" > "$FAKE_SLURM/job-$id.log" 2>&1 < /dev/null &
echo $! > "$FAKE_SLURM/job-$id.pid"
echo "Submitted batch job $id"
"""
FAKE_SCANCEL = """#!/bin/sh
kill -TERM -- "-$(cat "$FAKE_SLURM/job-$1.pid")"
"""


@pytest.mark.slow
def test_slurm_cluster_starts_a_worker_through_sbatch_and_runs_the_fleet(tmp_path, monkeypatch):
    jobqueue = pytest.importorskip("dask_jobqueue", reason='the SLURM example needs pip install "straggle-edu[test]"')
    from distributed import Client

    from straggle_edu.fleet.engine import run_fleet

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", FAKE_SBATCH), ("scancel", FAKE_SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM", str(tmp_path))
    kwargs = {**_slurm_example(), "cores": 1, "processes": 1, "memory": "2GB",  # one worker, not 8 jobs of 16
              "scheduler_options": {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}}
    with jobqueue.SLURMCluster(**kwargs) as cluster, Client(cluster) as client:
        cluster.scale(jobs=1)
        client.wait_for_workers(1, timeout=120)
        (pid_file,) = tmp_path.glob("job-*.pid")
        job = int(pid_file.read_text())
        run = run_fleet([OSDI], tmp_path / "out", scheduler=cluster.scheduler_address, progress=False)
        assert (run.jobs, run.errors) == (3, 0)
    _wait_for("the batch job to end after scancel", lambda: live_processes(sid=job) == [], seconds=30)
    assert "#SBATCH -p cpu" in (tmp_path / f"{pid_file.stem}.sh").read_text()
