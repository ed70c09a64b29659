"""Benchmark: the fleet (``straggle-edu fleet``) against the serial run and against ``analyze``, as ratios.

Every fleet it writes and every output goes under ``--out DIR`` (default: a new temporary folder, removed at
the end; give a folder to keep the fleets for the next run, where they are reused).

The goals are ratios to a baseline timed in the same run, each the median of 3 interleaved runs (``--runs``):
on a shared machine the load stretches both sides of a ratio alike, where it would stretch an absolute time.
The CPU of a command is summed over every process it starts (the client, the Dask scheduler and its workers,
the nannies, the resource tracker): the command runs under a small parent that is a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), so every process of its tree is reaped there or below, and
``getrusage(RUSAGE_CHILDREN)`` counts it; psutil samples the tree for its peak resident memory (the sum over its
processes; the largest single process is ``ru_maxrss``). User and system time are shown apart.

1. The CLI on the demo (``--jobs``, default 200, ``straggle_edu.fleet.demo.write_demo`` as ``straggle-edu
   fleet-demo`` writes it): ``straggle-edu fleet DEMO --out NEW`` as a whole process (its default: the demo's 11 MB
   are under ``SMALL_FLEET_BYTES``, so it runs in that process, without a LocalCluster, as a user's command does;
   the report included; caches warm: one untimed run first writes the page-script cache and the bytecode), against
   the serial run in one process (``run_fleet(..., workers=0)`` in this process, its imports warm, no report).
   Goal: the CLI's wall time within 1.5x the serial run's.
2. With ``--huge``, the 16,384-rank x 50-step trace of ``bench_whatif.py --huge`` (about 4 x 10^7 ops, 590 MiB
   of Parquet, written once into ``--huge-dir``): ``straggle-edu analyze --attribution full --json`` (what the
   fleet computes) and ``straggle-edu fleet --workers 2`` on it, interleaved. Goals: ``analyze``'s system time
   under 10% of its CPU; the fleet's CPU within 1.3x ``analyze``'s. Then, untimed, the fleet's block tasks are
   run again on a LocalCluster of 2 workers asking for the job's whole analysis (``fleet._split.submit(...,
   analysis=True)``, the same tasks): S and every S_X (per step, optype, stage, DP rank, worker; M_W, M_S) must
   equal ``analyze --json``'s, bit for bit.
3. With ``--table``, the older table in this process: the fleet serially, its analysis alone (``job_row`` in a
   loop), and on a LocalCluster of 1 and of 2 workers started before the clock (the Dask overhead and the
   scaling); the rows of every run must equal the serial rows (seconds aside). With ``--profile``, where the
   serial fleet spends its time (cProfile).

The load average is printed before and after: read every figure against it.

Run: ``.venv/bin/python benchmarks/bench_fleet.py [--out DIR] [--jobs 200] [--runs 3] [--huge | --only-huge]
[--table] [--profile]``
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import logging
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Ratio goals, each over the median of the interleaved runs.
GOALS = {"analyze_sys_share": 0.10, "fleet_over_analyze_cpu": 1.3, "cli_over_serial_wall": 1.5}
S_X = ("slowdown", "waste", "per_step", "by_optype", "by_stage", "by_dp_rank", "by_worker", "m_w", "m_s")

# The parent a measured command runs under: a child subreaper, so that every process of the command's tree
# (Dask's workers, the nannies, the resource tracker) is reaped in the tree or here, and RUSAGE_CHILDREN holds its
# CPU; a thread samples the tree's resident memory.
_MEASURE = r"""
import ctypes, json, os, resource, subprocess, sys, threading, time
import psutil
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
me, peak, stop = psutil.Process(), [0], threading.Event()
def sample():
    while not stop.wait(0.05):
        total = 0
        for p in me.children(recursive=True):
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        peak[0] = max(peak[0], total)
threading.Thread(target=sample, daemon=True).start()
t = time.perf_counter()
with open(os.environ["BENCH_STDERR"], "wb") as err:
    rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=err).returncode
wall = time.perf_counter() - t
left = time.monotonic() + 10
while me.children() and time.monotonic() < left:  # orphans of the tree: reap them (their CPU counts)
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    time.sleep(0.05)
orphans = [p.pid for p in me.children()]
for p in me.children():
    p.kill()
stop.set()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "user": ru.ru_utime, "sys": ru.ru_stime, "rc": rc, "max_rss_mib": ru.ru_maxrss / 1024,
                  "tree_peak_mib": peak[0] / 2**20, "minflt": ru.ru_minflt, "majflt": ru.ru_majflt,
                  "orphans": orphans}))
"""

# The children run as a user's shell runs them: with Python's bytecode cache.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def load():
    return "load average {:.1f} {:.1f} {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count())


def measure(cmd, stdout=None):
    """One run of ``cmd`` (argv) as a whole process tree: wall, user, sys (seconds, summed over every process),
    ``cpu``, the largest process's peak RSS and the tree's peak RSS (MiB), the page faults; ``stdout``: a file for
    its output."""
    if stdout is not None:
        import shlex

        cmd = ["sh", "-c", " ".join(map(shlex.quote, cmd)) + f" > {shlex.quote(str(stdout))}"]
    with tempfile.NamedTemporaryFile(prefix="bench-fleet-stderr-") as err:
        out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True,
                             env={**_CHILD_ENV, "BENCH_STDERR": err.name})
        if out.returncode:
            raise RuntimeError(f"the measuring parent failed:\n{out.stderr}")
        r = json.loads(out.stdout)
        if r["rc"]:
            raise RuntimeError(f"{' '.join(map(str, cmd))} failed (rc {r['rc']}):\n{Path(err.name).read_text()[-3000:]}")
    if r["orphans"]:
        print(f"  (note: {len(r['orphans'])} processes of {cmd[0]} outlived it and were killed)")
    r["cpu"] = r["user"] + r["sys"]
    return r


def in_process(fn):
    """``fn()`` in this process: (its result, wall, user, sys, minor page faults)."""
    a, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    result = fn()
    wall, b = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF)
    return result, {"wall": wall, "user": b.ru_utime - a.ru_utime, "sys": b.ru_stime - a.ru_stime,
                    "cpu": b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime, "minflt": b.ru_minflt - a.ru_minflt}


def _row(name, r):
    peak = f"{r['max_rss_mib']:>8.0f} {r['tree_peak_mib']:>8.0f}" if "max_rss_mib" in r else f"{'':>8} {'':>8}"
    return (f"  {name:44} {r['wall']:>7.2f} {r['user']:>7.2f} {r['sys']:>6.2f} {100 * r['sys'] / r['cpu']:>5.1f}% "
            f"{peak} {r['minflt'] / 1e6:>7.2f}")


_HEAD = (f"  {'':44} {'wall s':>7} {'user s':>7} {'sys s':>6} {'sys%':>6} {'rss MiB':>8} {'tree MiB':>8} "
         f"{'Mflt':>7}")


def _median(runs, key):
    return statistics.median(r[key] for r in runs)


def _goal(name, ratios, goal, what):
    m = statistics.median(ratios)
    print(f"  {name}: {m:.3f} (runs {', '.join(f'{x:.3f}' for x in ratios)}); goal {what} {goal:g}: "
          f"{'met' if m < goal else 'NOT MET'}")
    return m


# ---------------------------------------------------------------------------------------------------------------
# the fleets


def demo_fleet(jobs, folder):
    """The demo fleet of ``jobs`` synthetic jobs and the study's public ones, as ``straggle-edu fleet-demo`` writes
    it: made once in ``folder``, reused after that."""
    from straggle_edu.fleet import demo

    folder = Path(folder)
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        t = time.perf_counter()
        fleet = demo.write_demo(folder, jobs=jobs, seed=0)
        done.write_text(str(len(fleet.jobs) + len(fleet.public)))
        print(f"wrote the demo fleet ({len(fleet.jobs)} jobs and {len(fleet.public)} public ones) in "
              f"{time.perf_counter() - t:.0f} s")
    return folder


def without_seconds(rows):
    return {r["job_id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}


def serial_run(src, out):
    """The serial fleet in this process (no report) into the new folder ``out``; its rows."""
    from straggle_edu.fleet.engine import run_fleet
    from straggle_edu.fleet.store import read_rows

    run_fleet([src], out, workers=0, progress=False)
    return read_rows(out)


def cli_vs_serial(src, work, runs):
    """The CLI (report included, caches warm) against the serial run in this process, interleaved."""
    fleet = [sys.executable, "-m", "straggle_edu", "fleet", str(src)]
    serial_run(src, work / "serial-warm")  # this process's imports
    measure([*fleet, "--out", str(work / "cli-warm")])  # the page-script and bytecode caches
    print(f"\nthe CLI on the demo fleet against the serial run in one process ({load()})")
    print(_HEAD)
    serial, cli, base = [], [], None
    for i in range(runs):
        rows, r = in_process(lambda: serial_run(src, work / f"serial-{i}"))
        base = base or without_seconds(rows)
        assert without_seconds(rows) == base, "the serial rows differ from run to run"
        serial.append(r)
        print(_row(f"serial, in this process (run {i + 1})", r))
        cli.append(measure([*fleet, "--out", str(work / f"cli-{i}")]))
        print(_row(f"straggle-edu fleet, report included ({i + 1})", cli[-1]))
    from straggle_edu.fleet.store import read_rows

    assert without_seconds(read_rows(work / "cli-0")) == base, "the CLI's rows differ from the serial rows"
    print(f"  {len(base)} jobs; the CLI's rows equal the serial rows (seconds aside); medians: serial "
          f"{_median(serial, 'wall'):.2f} s wall, CLI {_median(cli, 'wall'):.2f} s wall, {_median(cli, 'cpu'):.2f} s "
          f"CPU ({_median(cli, 'sys'):.2f} s sys) over its processes")
    return _goal("CLI wall / serial wall", [c["wall"] / s["wall"] for c, s in zip(cli, serial)],
                 GOALS["cli_over_serial_wall"], "<")


# ---------------------------------------------------------------------------------------------------------------
# the 16,384 x 50 trace


def fleet_analysis(path, block_steps="auto"):
    """The job's whole Analysis from the fleet's block tasks, on a LocalCluster of 2 workers started as the fleet
    starts one; the plan and budget come from ``job_row`` on a worker, as in the fleet."""
    from straggle_edu.fleet import _split
    from straggle_edu.fleet.cluster import close_local, local_cluster
    from straggle_edu.fleet.engine import job_row

    client, cluster = local_cluster(2)
    try:
        first = client.submit(job_row, str(path), block_steps=block_steps, split=True, pure=False).result()
        if first.get("plan") is None:
            raise RuntimeError(f"the fleet analyses {path} in one task, not in block tasks: {first.get('error')}")
        return _split.submit(client, str(path), first["plan"], "bench-analysis", first["budget"], workers=2,
                             analysis=True).result()
    finally:
        client.close()
        close_local(cluster)


def fleet_vs_analyze(path, work, runs, check=True):
    """analyze and the 2-worker fleet on one trace as whole process trees, interleaved, against the goals; then
    every S_X of the fleet's block tasks against analyze's, bit for bit."""
    from straggle_edu.fleet.figures import analysis_row
    from straggle_edu.fleet.store import read_rows

    analyze_cmd = [sys.executable, "-m", "straggle_edu", "analyze", str(path), "--json", "--attribution", "full"]
    print(f"\nanalyze and the fleet (2 workers) on {path.name} ({load()})")
    print(_HEAD)
    analyze, fleet = [], []
    for i in range(runs):
        analyze.append(measure(analyze_cmd, stdout=work / f"analyze-{i}.json"))
        print(_row(f"straggle-edu analyze --attribution full ({i + 1})", analyze[-1]))
        fleet.append(measure([sys.executable, "-m", "straggle_edu", "fleet", str(path), "--out", str(work / f"huge-{i}"),
                              "--workers", "2"]))
        print(_row(f"straggle-edu fleet --workers 2 ({i + 1})", fleet[-1]))
    print(f"  medians: analyze {_median(analyze, 'wall'):.1f} s wall, {_median(analyze, 'cpu'):.1f} s CPU; fleet "
          f"{_median(fleet, 'wall'):.1f} s wall, {_median(fleet, 'cpu'):.1f} s CPU ({load()})")
    shares = _goal("analyze's system time / its CPU", [a["sys"] / a["cpu"] for a in analyze],
                   GOALS["analyze_sys_share"], "<")
    cpu = _goal("the fleet's CPU / analyze's", [f["cpu"] / a["cpu"] for f, a in zip(fleet, analyze)],
                GOALS["fleet_over_analyze_cpu"], "<=")
    walls = [f["wall"] / a["wall"] for f, a in zip(fleet, analyze)]
    print(f"  the fleet's wall / analyze's: {statistics.median(walls):.3f} (runs {', '.join(f'{x:.3f}' for x in walls)})")
    want = json.loads((work / "analyze-0.json").read_text())
    rows = [read_rows(work / f"huge-{i}")[0] for i in range(runs)]
    same = all(r["slowdown"] == want["slowdown"] for r in rows)
    print(f"  the fleet's S {'equals' if same else 'DIFFERS FROM'} analyze's in every run: {want['slowdown']!r}")
    if not check:
        return shares, cpu
    a = fleet_analysis(path)
    cols = analysis_row(a)
    stored = {k: rows[0][k] for k in cols if k in rows[0]}
    print(f"  the block tasks' analysis (rerun, untimed): {a.details['blocks']} blocks; its columns "
          f"{'are' if stored == {k: cols[k] for k in stored} else 'DIFFER FROM'} the fleet's stored row")
    got = json.loads(a.to_json())
    differ = [k for k in S_X if got.get(k) != want.get(k)]
    sizes = ", ".join(f"{len(want[k])} {k.removeprefix('by_').replace('_', ' ')}" for k in S_X
                      if isinstance(want.get(k), dict))
    print(f"  S = {want['slowdown']!r} and every S_X ({sizes}; M_W, M_S): the fleet's block tasks "
          + ("equal analyze's, bit for bit" if not differ else f"DIFFER from analyze's in {', '.join(differ)}"))
    return shares, cpu


def huge(folder, work, runs, check=True):
    from bench_whatif import generate_huge

    path, rows = generate_huge(folder)
    print(f"\nthe 16,384 x 50 trace: {rows:,} ops, {path.stat().st_size / 2**20:.0f} MiB, in {path.parent}")
    return fleet_vs_analyze(path, work, runs, check=check)


# ---------------------------------------------------------------------------------------------------------------
# the older table, in this process


def timed_run(src, workers, scheduler=None):
    """(wall s, rows) of one fleet run into a fresh folder."""
    from straggle_edu.fleet.engine import run_fleet
    from straggle_edu.fleet.store import read_rows

    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as out:
        t = time.perf_counter()
        run_fleet([src], out, workers=None if scheduler else workers, scheduler=scheduler, progress=False)
        wall = time.perf_counter() - t
        return wall, read_rows(out)


def analysis_only(src):
    """Wall seconds of every job's job_row in this process, one after another: the compute of the fleet."""
    from straggle_edu.fleet.engine import job_row
    from straggle_edu.fleet.sources import expand

    paths = [j.path for j in expand([src])]
    t = time.perf_counter()
    for p in paths:
        job_row(p)
    return time.perf_counter() - t


def on_cluster(src, n):
    """(start-up s, wall s, rows) on a LocalCluster of n single-threaded worker processes."""
    from distributed import LocalCluster

    t = time.perf_counter()
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster:
        start = time.perf_counter() - t
        timed_run(src, None, cluster.scheduler_address)  # warm the workers' imports, as a long fleet would
        wall, rows = timed_run(src, None, cluster.scheduler_address)
    return start, wall, rows


def fleet_table(src, repeat):
    print(f"\n{'':26} {'wall s':>8} {'jobs/s':>8} {'ops/s':>12} {'vs serial':>10}   ({load()})")
    timed_run(src, 0)  # warm this process's imports
    serial = min((timed_run(src, 0) for _ in range(repeat)), key=lambda r: r[0])
    base = without_seconds(serial[1])
    jobs = len(serial[1])
    ops = sum(r["ops"] or 0 for r in serial[1])

    def line(name, wall, note=""):
        print(f"{name:26} {wall:>8.2f} {jobs / wall:>8.1f} {ops / wall:>12,.0f} {wall / serial[0]:>9.2f}x {note}")

    line("serial (one process)", serial[0], "(writes each part, fsync, before the next job)")
    line("  its analysis alone", analysis_only(src), "(job_row in a loop, nothing written)")
    for n in (1, 2):
        runs = [on_cluster(src, n) for _ in range(repeat)]
        start, wall, rows = min(runs, key=lambda r: r[1])
        assert without_seconds(rows) == base, f"the rows on {n} workers differ from the serial rows"
        line(f"LocalCluster, {n} worker{'s' if n > 1 else ''}", wall, f"(start-up {start:.1f} s, not counted)")
    print(f"{jobs} jobs, {ops:,} ops; the rows of every run equal the serial rows (seconds aside); best of {repeat}.")


def profile(src, top=18):
    from straggle_edu.fleet.engine import run_fleet

    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as out:
        prof = cProfile.Profile()
        prof.enable()
        run_fleet([src], out, workers=0, progress=False)
        prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(top)
    print("\nwhere the serial fleet spends its time (cProfile, cumulative):")
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip()))


# ---------------------------------------------------------------------------------------------------------------


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", metavar="DIR",
                   help="where the fleets and every output go (kept, and the fleets reused, on the next run); "
                   "default: a new temporary folder, removed at the end")
    p.add_argument("--jobs", type=int, default=200,
                   help="synthetic jobs of the demo fleet (default %(default)s; written once into DIR/demo-N, as "
                   "'straggle-edu fleet-demo' writes them, with the study's public jobs)")
    p.add_argument("--runs", type=int, default=3, help="interleaved runs of each side of a ratio (default 3; the "
                   "median is shown)")
    p.add_argument("--huge", action="store_true", help="also analyze and the fleet on the 16,384 x 50 trace")
    p.add_argument("--only-huge", action="store_true", help="only the 16,384 x 50 trace")
    p.add_argument("--huge-dir", metavar="DIR",
                   help="where the 16,384 x 50 trace is written once (about 590 MiB, a few minutes) and reused "
                   "(default DIR/16k under --out)")
    p.add_argument("--no-check", dest="check", action="store_false",
                   help="skip the untimed bit-for-bit check of the fleet's block tasks against analyze")
    p.add_argument("--table", action="store_true",
                   help="also the older table in this process: serial, its analysis alone, LocalClusters of 1 and 2")
    p.add_argument("--repeat", type=int, default=1, help="with --table: runs of each configuration (the best is shown)")
    p.add_argument("--profile", action="store_true", help="also profile the serial fleet")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
        else:
            out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-fleet-")))
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="runs-", dir=out)))  # this run's outputs
        print(f"bench_fleet: outputs in {out} ({load()})")
        if not args.only_huge:
            src = demo_fleet(args.jobs, out / f"demo-{args.jobs}")
            cli_vs_serial(src, work, args.runs)
            if args.table:
                fleet_table(src, args.repeat)
            if args.profile:
                profile(src)
        if args.huge or args.only_huge:
            huge(Path(args.huge_dir) if args.huge_dir else out / "16k", work, args.runs, check=args.check)
        print(f"\ndone ({load()})")


if __name__ == "__main__":
    main()
