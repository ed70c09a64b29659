"""The fleet on real Dask clusters (slow): a LocalCluster of worker processes, a scheduler and workers
started as separate processes with one of them killed mid-run, and a whole run killed with SIGKILL
and resumed. Every result is compared with the serial run in this process (workers=0), which
tests/test_fleet_engine.py compares with ``straggle-edu analyze``.

Skipped, saying why, when dask's ``distributed`` is not installed (``pip install "straggle-edu[fleet]"``).
"""

import json
import logging
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from _fleet import synthetic_fleet, without_seconds
from _procs import live_processes
from straggle_edu.fleet.engine import run_fleet
from straggle_edu.fleet.store import clean_row, read_rows
from straggle_edu.traces.optrace import ARTIFACT_DATA

pytest.importorskip("distributed", reason='the fleet on a cluster needs dask: pip install "straggle-edu[fleet]"')

pytestmark = pytest.mark.slow
OSDI = ARTIFACT_DATA
JOBS = 48


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """48 jobs: 8 synthetic traces, each under 6 names with their own hours (so 48 content hashes),
    and the three public jobs; with its serial rows."""
    src = tmp_path_factory.mktemp("fleet")
    for path in synthetic_fleet(src, 8, seed=5, dp=16, pp=4, microbatches=8, steps=8):
        meta = path.with_name(path.name.replace("trace-", "meta-").replace(".parquet", ".yaml"))
        for k in range(1, JOBS // 8):
            copy = path.with_name(path.name.replace(".parquet", f"-{k}.parquet"))
            shutil.copy(path, copy)
            (copy.with_name(copy.name.replace("trace-", "meta-").replace(".parquet", ".yaml"))
             .write_text(meta.read_text() + f"# copy {k}\nhours: {k}.5\n"))
    for n in ("AR", "SE", "ST"):
        shutil.copy(OSDI / f"trace-{n}.parquet", src)
        shutil.copy(OSDI / f"meta-{n}.yaml", src)
    serial = tmp_path_factory.mktemp("serial")
    run = run_fleet([src], serial, workers=0, progress=False)
    assert run.jobs == JOBS + 3 and run.errors == 0
    return src, without_seconds(read_rows(serial))


def test_local_cluster_of_two_worker_processes_equals_serial(fleet, tmp_path):
    src, serial = fleet
    before = set(live_processes(ppid=os.getpid()))  # a slow-tier session already holds JupyterLab, chromium's driver...
    environ = {k: v for k, v in os.environ.items() if not k.startswith("__DASK")}
    run = run_fleet([src], tmp_path, workers=2, progress=False)
    # the workers' variables (one malloc arena, OMP_NUM_THREADS=1...) are not left in this process for what it
    # starts next: under them torch's DDP ranks crashed in the slow tier's next test
    assert {k: v for k, v in os.environ.items() if not k.startswith("__DASK")} == environ
    assert (run.jobs, run.analysed, run.errors) == (JOBS + 3, JOBS + 3, 0)
    assert without_seconds(read_rows(tmp_path)) == serial
    left = {p: _cmdline(p) for p in set(live_processes(ppid=os.getpid())) - before}
    left = {p: cmd for p, cmd in left.items() if cmd is not None and b"resource_tracker" not in cmd}
    assert left == {}  # the cluster's nannies and workers are gone (multiprocessing's resource tracker stays with us)


# The fleet command's process, as it sets itself up (one malloc arena, Arrow's pool the C library's malloc, before
# pyarrow is imported), starts a LocalCluster of one worker; then again with a second Python thread running. What
# each worker reports of itself and of its fork server.
_FORKED = """
import json, os, sys, threading
from straggle_edu.traces.blocks import keep_freed_memory
keep_freed_memory(one_arena=True)
from straggle_edu.fleet.cluster import close_local, local_cluster
held = open(os.environ["HELD"], "w")  # a file this process has open: not the server's, nor its workers'

def probe():
    import os, pyarrow as pa
    from straggle_edu.fleet.cluster import _malloc_arenas
    server = os.getppid()
    with open(f"/proc/{server}/stat") as f:
        server_parent = int(f.read().rsplit(")", 1)[1].split()[1])
    with open(f"/proc/{server}/cmdline", "rb") as f, open(f"/proc/{server_parent}/cmdline", "rb") as g:
        started_anew = f.read() != g.read()  # a fresh interpreter's, not this script's
    blocked = [int(line.split()[1], 16) for line in open("/proc/self/status") if line.startswith("SigBlk")][0]
    held = [p for p in (server, os.getpid()) for fd in os.listdir(f"/proc/{p}/fd")
            if os.path.realpath(f"/proc/{p}/fd/{fd}") == os.path.realpath(os.environ["HELD"])]
    return {"started_anew": started_anew, "server_parent": server_parent, "arena_max": os.environ.get("MALLOC_ARENA_MAX"),
            "held": held,
            "pool": pa.default_memory_pool().backend_name, "arenas": _malloc_arenas(), "sigint_blocked": bool(blocked & 2)}

out = []
for busy in (False, True):
    stop = threading.Event()
    if busy:
        threading.Thread(target=stop.wait, daemon=True).start()
    client, cluster = local_cluster(1)
    try:
        out.append(list(client.run(probe).values()))
    finally:
        client.close()
        close_local(cluster)
        stop.set()
    out[-1].append(sorted(open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")[:200]
                          for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid()) and
                          open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid())))
print(json.dumps({"pid": os.getpid(), "runs": out}))
"""


def test_fork_server_is_forked_from_the_fleets_process_where_safe_and_its_workers_are_set_as_before(tmp_path):
    done = subprocess.run([sys.executable, "-c", _FORKED], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HELD": str(tmp_path / "held.txt")})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    (forked, left_forked), (anew, left_anew) = [(run[0], run[1]) for run in result["runs"]]
    # one thread: the server is a fork of this process (no fresh interpreter importing distributed, numpy, pyarrow)
    assert forked["started_anew"] is False and forked["server_parent"] == result["pid"]
    # a second Python thread (a notebook's kernel has several): started anew, as before
    assert anew["started_anew"] is True and anew["server_parent"] == result["pid"]
    for worker in (forked, anew):  # either way the workers are set as the nanny sets them
        assert worker["arena_max"] == "1" and worker["pool"] == "system" and worker["arenas"] == 1
        assert worker["sigint_blocked"] is True  # Ctrl-C stops the fleet, which closes its workers
        assert worker["held"] == []  # no descriptor of the fleet's process but the standard ones
    # the server and its workers are gone once the cluster is closed (the resource tracker stays with the process)
    assert [c for c in left_forked if "resource_tracker" not in c] == [] == [c for c in left_anew if "resource_tracker" not in c]


def _cmdline(pid):
    """The process's command line, or None when it ended between the listing and the read."""
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def _start(args):
    return subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
def cluster(tmp_path):
    """``dask scheduler`` and two ``dask worker`` processes (no nanny: a killed worker stays dead) on 127.0.0.1."""
    info = tmp_path / "scheduler.json"
    procs = [_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)])]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        for name in ("w0", "w1"):
            procs.append(_start(["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--name", name, "--host", "127.0.0.1"]))
        yield address, procs
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait(timeout=30)


def _wait_for_workers(client, n):
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) < n:
        assert time.monotonic() < deadline, "the workers did not join the scheduler"
        time.sleep(0.1)


def test_worker_killed_mid_run_has_its_task_rerun_and_the_results_equal_serial(fleet, cluster, tmp_path):
    from distributed import Client

    src, serial = fleet
    address, procs = cluster
    with Client(address, timeout="30s") as watcher:
        _wait_for_workers(watcher, 2)
        pids = watcher.run(os.getpid)  # worker address -> pid
        w0 = next(a for a, info in watcher.scheduler_info()["workers"].items() if info["name"] == "w0")
        result = {}
        runner = threading.Thread(target=lambda: result.update(run=run_fleet([src], tmp_path, scheduler=address,
                                                                            progress=False)))
        runner.start()
        killed = None
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline:
            busy = watcher.processing(workers=[w0]).get(w0, [])
            if any("-jobs-" in str(k) for k in busy) and len(list((tmp_path / "parts").rglob("*.json"))) >= 2:
                os.kill(pids[w0], signal.SIGKILL)  # a real worker process, killed while it runs a job
                killed = list(busy)
            time.sleep(0.002)
        runner.join(timeout=300)
    assert killed, "the worker never ran a job to be killed in"
    assert procs[1].wait(timeout=30) == -signal.SIGKILL
    run = result["run"]
    assert (run.jobs, run.errors) == (JOBS + 3, 0)
    assert without_seconds(read_rows(tmp_path)) == serial


def test_worker_killed_holding_a_jobs_blocks_has_them_read_again_and_the_analysis_is_unchanged(cluster, tmp_path):
    import pyarrow.parquet as pq
    from distributed import Client

    from straggle_edu.fleet import _split
    from straggle_edu.fleet.engine import job_row
    from straggle_edu.traces.blocks import analyze_op_file

    (trace,) = synthetic_fleet(tmp_path, 1, seed=3, dp=8, pp=2, microbatches=2, steps=40)
    pq.write_table(pq.read_table(trace), trace, row_group_size=500)
    plan = job_row(trace, block_steps=1, split=True)
    address, procs = cluster
    with Client(address, timeout="30s") as client:
        _wait_for_workers(client, 2)
        pids = client.run(os.getpid)
        w0 = next(a for a, info in client.scheduler_info()["workers"].items() if info["name"] == "w0")
        fut = _split.submit(client, str(trace), plan["plan"], "kill", plan["budget"], workers=2, analysis=True)
        deadline, held = time.monotonic() + 60, []
        while not held and not fut.done() and time.monotonic() < deadline:
            held = [k for k, who in client.who_has().items() if "-read-" in str(k) and w0 in who]
            time.sleep(0.002)
        assert held and not fut.done(), "w0 never held a run of blocks to be killed with"
        os.kill(pids[w0], signal.SIGKILL)  # the blocks' models it read are lost with it
        a = fut.result(timeout=120)
    assert procs[1].wait(timeout=30) == -signal.SIGKILL
    want = analyze_op_file(trace, block_steps=1, attribution="full")
    assert a.details["blocks"] == want.details["blocks"] == 40
    assert (a.slowdown, a.m_w, a.m_s) == (want.slowdown, want.m_w, want.m_s)
    for by in ("per_step", "by_optype", "by_stage", "by_dp_rank", "by_worker"):
        assert dict(getattr(a, by)) == dict(getattr(want, by)), by


def _parts(out):
    return [p for p in (out / "parts").rglob("*.json") if not p.name.startswith(".tmp-")]


def test_run_killed_with_sigkill_loses_no_finished_job_and_resumes(fleet, tmp_path):
    src, serial = fleet
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "straggle_edu", "fleet", str(src), "--out", str(out), "--workers", "1",
           "--refresh", "0"]  # the tables rewritten as often as their cost allows: a kill may land in a rewrite
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_parts(out)) < 5 or not (out / "jobs.parquet").exists() if out.exists() else True:
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
            time.sleep(0.005)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI, its LocalCluster's nanny and worker: the whole run
        proc.wait(timeout=30)
    time.sleep(0.5)
    assert live_processes(sid=proc.pid) == []
    finished = _parts(out)
    assert 5 <= len(finished) < JOBS + 3
    for p in finished:  # every file under its final name is whole
        row = clean_row(json.loads(p.read_bytes()))
        assert without_seconds([row])[row["job_id"]] == serial[row["job_id"]]
    kept = {clean_row(json.loads(p.read_bytes()))["content_hash"] for p in finished}
    table = read_rows(out)  # the last rewrite of the tables before the kill: whole, and every row a finished job's
    assert 1 <= len(table) <= len(finished) and {r["content_hash"] for r in table} <= kept
    assert all(without_seconds([r])[r["job_id"]] == serial[r["job_id"]] for r in table)
    (out / "jobs.parquet").unlink()  # and the CSV (written just before the Parquet file), as a reader without pyarrow
    assert {r["content_hash"] for r in read_rows(out)} <= kept
    run = run_fleet([src], out, workers=0, progress=False)
    assert run.cached >= len(finished) and run.cached + run.analysed == JOBS + 3
    assert without_seconds(read_rows(out)) == serial
    assert not list(out.rglob(".tmp-*"))


@pytest.mark.parametrize("block_steps", [3])
def test_jobs_cut_into_block_tasks_equal_analyze_bit_for_bit(tmp_path, block_steps):
    import pyarrow.parquet as pq
    from distributed import Client, LocalCluster

    from straggle_edu.fleet import _split
    from straggle_edu.fleet.engine import job_row
    from straggle_edu.fleet.figures import analysis_row
    from straggle_edu.traces.blocks import analyze_op_file

    # and a job of more DP ranks (72) than the program sample holds (64), as a 16,384-rank job has
    wide = tmp_path / "wide"
    wide.mkdir()
    (trace,) = synthetic_fleet(wide, 1, seed=7, dp=72, pp=2, microbatches=2, steps=5)
    pq.write_table(pq.read_table(trace), trace, row_group_size=1000)  # row groups across steps: read in parts
    assert pq.ParquetFile(trace).metadata.num_row_groups > 5
    table = pq.read_table(trace)  # and a copy with its rows out of step order: read per block, sampled apart
    order = np.random.default_rng(0).permutation(table.num_rows)
    pq.write_table(table.take(order), wide / "trace-shuffled.parquet", row_group_size=1000)
    (wide / "meta-shuffled.yaml").write_text((wide / "meta-job000.yaml").read_text())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as lc, Client(lc) as client:
        run = run_fleet([OSDI, wide], tmp_path / "out", scheduler=lc.scheduler_address, block_steps=block_steps,
                        progress=False)
        assert (run.jobs, run.errors) == (5, 0)
        rows = read_rows(tmp_path / "out")
        # the same block tasks, asked for the whole Analysis the row's columns are taken from (every S_X)
        plans = [job_row(r["path"], block_steps=block_steps, split=True) for r in rows]
        futures = [_split.submit(client, r["path"], p["plan"], f"test-{i}", p["budget"], workers=2, analysis=True)
                   for i, (r, p) in enumerate(zip(rows, plans))]
        tasks = client.gather(futures)
    for row, p, a in zip(rows, plans, tasks):
        whole = analyze_op_file(row["path"], block_steps=None, attribution="full")  # the trace read whole, in memory
        assert a.details["blocks"] == len(p["plan"]["ranges"]) > 1
        assert (a.slowdown, a.m_w, a.m_s) == (whole.slowdown, whole.m_w, whole.m_s)
        for by in ("per_step", "by_optype", "by_stage", "by_dp_rank", "by_worker"):  # every S_X, bit for bit
            assert dict(getattr(a, by)) == dict(getattr(whole, by)), (row["path"], by)
        want = analysis_row(whole)
        assert {k: row[k] for k in want if k in row} == {k: want[k] for k in want if k in row}
        assert analysis_row(a) == want and row["ops"] == len(whole.details["trace"])
