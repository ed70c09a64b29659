"""Ground truth for the profiler what-if: real PyTorch DDP jobs with a known slow rank.

Each job is a real ``torchrun`` job on gloo (CPU), started with ``--standalone``
(torchrun's rendezvous binds a free port on localhost), with ``torch.profiler``
on for every measured step. Every rank trains the same tiny MLP under
``DistributedDataParallel`` and writes its Kineto trace,
``<job>/rank<r>.pt.trace.json.gz``. The variants:

- ``none``: no slowness;
- ``even``: the extra work spread evenly: every rank does ``extra / R`` extra
  matmuls in its forward;
- ``slow``: one rank (``--slow-rank``, default the middle one) does all
  ``extra`` matmuls in its forward (recorded ops, ``aten::mm``);
- ``late``: that rank sleeps ``sleep`` seconds before each forward (no event
  in its trace: the lateness is a gap);
- ``even-late``: the same sleep spread evenly: every rank sleeps ``sleep / R``.

So ``even`` is the baseline of ``slow`` (the same work, spread) and
``even-late`` the baseline of ``late``. The measured step time of a job is
the median of rank 0's ``prof.step()`` intervals over its recorded steps
(``--steps``, at least 20 by default); the ratio of a slowed job is its
measured step time over that of its baseline. A slowed job runs between two
runs of its baseline (``even, slow, even``; ``even-late, late, even-late``)
and its ratio is over the mean of the two, so a drift in the machine's load
shows in both sides.

The sidecar ``<out>/runs.json`` records each job: ranks, variant, the slow
rank, the command, the torch version, rank 0's step intervals, the measured
step time, and for a slowed job its baselines and ratio.

Every child is reaped: torchrun runs in a session of its own, and on an
error, a timeout, Ctrl-C or SIGTERM it gets SIGTERM (which it passes on to
its workers), then every process of its tree gets SIGKILL after a grace
period; each worker also dies with its parent (``PR_SET_PDEATHSIG``). Work
over 2 s logs a line on stderr every 2 s, with or without a terminal.

Run (the committed fixtures, ``tests/data/ddp-gloo/README.md``; ``--nice -20`` needs root and shields the
jobs from other load on a shared machine; ``--keep`` leaves out traces nobody needs, their times stay)::

    .venv/bin/python benchmarks/ddp_traces.py --out tests/data/ddp-gloo --ranks 2 --keep first --nice -20
    .venv/bin/python benchmarks/ddp_traces.py --out tests/data/ddp-gloo --ranks 4 --variants slow late --keep slowed --nice -20

``--repeat N`` runs the ``none`` job N times (``none-1`` ... ``none-N``): the false-alarm check of the slow
tier runs ``--ranks 2 --variants none --repeat 10 --steps 8 --warmup 2``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from straggle_edu.instruments._procs import sigterm_as

VARIANTS = ("none", "even", "slow", "late", "even-late")
BASELINE = {"slow": "even", "late": "even-late"}
HEARTBEAT_S = 2.0
WIDTH, BATCH = 512, 256  # the MLP: two 512 x 512 layers, batches of 256 (about 10 ms a step on one core)
GRACE_S = 10.0


def log(message):
    print(f"[ddp_traces] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the worker (one rank)


def _die_with_parent():
    """Ask Linux to SIGKILL this process when its parent (torchrun's agent) dies."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: torchrun's own shutdown still stops the workers
        pass


def _renice(n):
    """Give this worker niceness ``n``, also as its scheduling group: torchrun starts each worker in a session
    of its own, and where Linux groups the CPU by session (autogroup), only the group's niceness counts."""
    if not n:
        return
    os.nice(n)
    try:
        Path("/proc/self/autogroup").write_text(str(n))
    except OSError:  # no autogroup here, or not allowed: the process niceness still applies
        pass


def _extra_matmuls(args, rank, world):
    if args.variant == "slow":
        return args.extra if rank == args.slow_rank else 0
    if args.variant == "even":
        return args.extra // world
    return 0


def _sleep_s(args, rank, world):
    if args.variant == "late":
        return args.sleep if rank == args.slow_rank else 0.0
    if args.variant == "even-late":
        return args.sleep / world
    return 0.0


def _model(torch, n_extra, size):
    class Burdened(torch.nn.Module):
        """A tiny MLP whose forward first does ``n_extra`` matmuls of two fixed matrices."""

        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH, bias=False), torch.nn.ReLU(),
                                           torch.nn.Linear(WIDTH, WIDTH, bias=False))
            # a plain attribute, not a buffer: DDP would broadcast a buffer before every forward
            self.a = torch.randn(size, size, generator=torch.Generator().manual_seed(0))

        def forward(self, x):
            with torch.no_grad():
                for _ in range(n_extra):
                    torch.mm(self.a, self.a)
            return self.net(x)

    return Burdened()


def worker(args):
    """One rank's job: DDP on gloo, profiled; rank 0 writes its step intervals to ``args.times``."""
    _die_with_parent()
    _renice(args.nice)
    import datetime

    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    # one bucket per layer (1 MiB each), so that the first layer's all-reduce overlaps the backward of the second
    model = torch.nn.parallel.DistributedDataParallel(_model(torch, _extra_matmuls(args, rank, world), args.size),
                                                      bucket_cap_mb=WIDTH * WIDTH * 4 / 2**20)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x, y = torch.randn(BATCH, WIDTH), torch.randn(BATCH, WIDTH)
    nap = _sleep_s(args, rank, world)
    out = Path(args.out)

    def write(prof):
        prof.export_chrome_trace(str(out / f"rank{rank}.pt.trace.json.gz"))

    marks = []
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=args.warmup, active=args.steps),
                 on_trace_ready=write) as prof:
        for _ in range(args.warmup + args.steps):
            if nap:
                time.sleep(nap)
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            marks.append(time.perf_counter())
            prof.step()
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        steps = [b - a for a, b in zip(marks[args.warmup - 1:], marks[args.warmup:])] if args.warmup else []
        Path(args.times).write_text(json.dumps({"torch": torch.__version__, "step_times_s": steps}))


# ----------------------------------------------------------------------------- the parent: jobs, reaping, progress


def _descendants(pid):
    """Pids of every live process below ``pid``, read from /proc (empty where /proc is absent)."""
    children = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
                children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(d))
            except (OSError, ValueError, IndexError):
                continue
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def stop(proc):
    """Stop torchrun and every process below it; never raises. SIGTERM first, SIGKILL after GRACE_S."""
    if proc.poll() is not None:
        return
    tree = _descendants(proc.pid)
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(GRACE_S)
    except (subprocess.TimeoutExpired, OSError):
        pass
    for pid in [proc.pid, *tree]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # already gone
            pass
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
        pass


def _worker_args(args, variant, folder, times):
    return ["--worker", "--variant", variant, "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--extra", str(args.extra), "--size", str(args.size), "--sleep", str(args.sleep),
            "--slow-rank", str(args.slow_rank), "--timeout", str(args.timeout), "--out", str(folder),
            "--times", str(times), "--nice", str(args.nice)]


def run_job(args, name, variant, out):
    """One torchrun job into ``out/name``; returns its record for the sidecar."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("rank*.pt.trace.json*"):
        old.unlink()
    times = Path(tempfile.mkstemp(prefix="ddp_times_", suffix=".json")[1])
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={args.ranks}",
           os.path.abspath(__file__), *_worker_args(args, variant, folder, times)]
    start, load = time.monotonic(), os.getloadavg()[0]
    with tempfile.TemporaryFile(mode="w+") as output:
        proc = subprocess.Popen(cmd, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "OMP_NUM_THREADS": "1"})
        try:
            while True:
                try:
                    proc.wait(HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    spent = time.monotonic() - start
                    if spent > args.timeout:
                        raise TimeoutError(f"job {name} ran past --timeout {args.timeout} s") from None
                    log(f"  {name}: running, {spent:.0f} s")
        finally:
            stop(proc)
        if proc.returncode != 0:
            output.seek(0)
            raise RuntimeError(f"job {name} failed (torchrun exit status {proc.returncode}):\n"
                               + output.read()[-3000:])
    measured = json.loads(times.read_text())
    times.unlink()
    step = statistics.median(measured["step_times_s"])
    log(f"  {name}: {time.monotonic() - start:.1f} s, measured step {1e3 * step:.2f} ms")
    return {"job": name, "ranks": args.ranks, "variant": variant,
            "slow_rank": args.slow_rank if variant in BASELINE else None,
            "extra_matmuls": args.extra if variant in ("slow", "even") else 0,
            "matmul_size": args.size, "sleep_s": args.sleep if variant in ("late", "even-late") else 0.0,
            "steps": args.steps, "torch": measured["torch"], "nice": args.nice, "load_before": round(load, 2),
            "trace": f"{name}/",
            "step_times_s": [round(t, 6) for t in measured["step_times_s"]], "step_s": round(step, 6)}


def plan(variants, repeat):
    """The order of the jobs: each slowed job between two runs of its baseline.

    >>> plan(["none", "slow", "late"], 1)
    [('none', 'none'), ('even-1', 'even'), ('slow', 'slow'), ('even-2', 'even'), ('even-late-1', 'even-late'), \
('late', 'late'), ('even-late-2', 'even-late')]
    """
    jobs = [(f"none-{i + 1}" if repeat > 1 else "none", "none") for i in range(repeat if "none" in variants else 0)]
    for slowed in ("slow", "late"):
        base = BASELINE[slowed]
        if slowed in variants:
            jobs += [(f"{base}-1", base), (slowed, slowed), (f"{base}-2", base)]
        elif base in variants:
            jobs.append((base, base))
    return jobs


def add_ratios(records):
    """Each slowed job's ratio: its measured step over the mean of its baseline's runs around it.

    >>> rs = add_ratios([{"job": "2r-even-1", "variant": "even", "step_s": 0.03},
    ...                  {"job": "2r-slow", "variant": "slow", "step_s": 0.05},
    ...                  {"job": "2r-even-2", "variant": "even", "step_s": 0.02}])
    >>> rs[1]["ratio"], rs[1]["baselines"], rs[1]["baseline_spread"]
    (2.0, ['2r-even-1', '2r-even-2'], 0.4)
    """
    by_name = {r["job"]: r for r in records}
    for r in records:
        base = BASELINE.get(r["variant"])
        prefix = r["job"][: -len(r["variant"])]
        around = [by_name[n] for n in (f"{prefix}{base}-1", f"{prefix}{base}-2") if n in by_name] if base else []
        if around:
            steps = [b["step_s"] for b in around]
            r["baselines"] = [b["job"] for b in around]
            r["ratio"] = round(r["step_s"] / statistics.mean(steps), 4)
            r["baseline_spread"] = round((max(steps) - min(steps)) / statistics.mean(steps), 4)
            if r["baseline_spread"] > 0.1:
                log(f"warning: the runs of {base} around {r['job']} differ by {100 * r['baseline_spread']:.0f}% "
                    "(the machine's load changed): its ratio is uncertain; rerun on a quieter machine or with --nice")
    return records


def drop_traces(records, out, keep):
    """Delete the traces that ``keep`` leaves out ("first": the second run of a baseline; "slowed": all but the
    slowed jobs and "none"); their records stay, with ``trace`` set to None."""
    for r in records:
        second = r["job"].endswith("-2")
        if keep == "all" or (keep == "first" and not second) or (keep == "slowed" and r["variant"] in
                                                                    ("slow", "late", "none")):
            continue
        for f in (out / r["trace"]).glob("rank*.pt.trace.json*"):
            f.unlink()
        (out / r["trace"]).rmdir()
        r["trace"] = None


def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=False, help="folder of the jobs' folders and runs.json")
    p.add_argument("--ranks", type=int, default=2, help="ranks per job (default 2)")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    p.add_argument("--repeat", type=int, default=1, help="runs of the 'none' job (default 1)")
    p.add_argument("--steps", type=int, default=20, help="profiled and measured steps (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="steps before the profiler records (default 3)")
    p.add_argument("--extra", type=int, default=16, help="extra matmuls per step in the slowed job (default 16)")
    p.add_argument("--size", type=int, default=512, help="the extra matmuls' matrix size (default 512)")
    p.add_argument("--sleep", type=float, default=0.04, help="the late rank's sleep per step, s (default 0.04)")
    p.add_argument("--slow-rank", type=int, default=None, help="the slow or late rank (default ranks // 2)")
    p.add_argument("--timeout", type=float, default=300, help="seconds a job may take (default 300)")
    p.add_argument("--keep", choices=("all", "first", "slowed"), default="all",
                   help="traces to keep: all (default), first (not the second run of a baseline), slowed "
                        "(only the slow, late and none jobs); the sidecar keeps every job's times")
    p.add_argument("--nice", type=int, default=0,
                   help="the jobs' niceness (default 0; a negative one, as root, shields them from other load)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--variant", default="none", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--times", help=argparse.SUPPRESS)
    return p


def check(p, args):
    if args.ranks < 2:
        p.error(f"--ranks must be at least 2, got {args.ranks}")
    if args.steps < 4 or args.warmup < 1 or args.repeat < 1:
        p.error(f"--steps must be >= 4, --warmup >= 1 and --repeat >= 1; got {args.steps}, {args.warmup}, "
                f"{args.repeat}")
    if args.extra % args.ranks:
        p.error(f"--extra must be a multiple of --ranks ({args.ranks}) to spread evenly, got {args.extra}")
    if not 0 <= args.slow_rank < args.ranks:
        p.error(f"--slow-rank must be in 0..{args.ranks - 1}, got {args.slow_rank}")
    if not args.out:
        p.error("--out is required")
    if args.nice < 0 and hasattr(os, "geteuid") and os.geteuid() != 0:
        p.error(f"--nice {args.nice} (below 0) needs root; leave it out or run as root")


def run_jobs(args, out):
    """Every job of the plan, in order; the records, or an exit status when a job failed or was stopped."""
    jobs = plan(args.variants, args.repeat)
    records = []
    with sigterm_as(signal.default_int_handler):  # SIGTERM stops the jobs as Ctrl-C does
        try:
            for i, (name, variant) in enumerate(jobs):
                log(f"job {i + 1}/{len(jobs)}: {name} on {args.ranks} ranks")
                records.append(run_job(args, f"{args.ranks}r-{name}", variant, out))
        except KeyboardInterrupt:
            log("interrupted: every child stopped")
            return 130
        except (RuntimeError, TimeoutError) as exc:
            log(f"error: {exc}")
            return 1
    return records


def write_sidecar(out, records, command):
    """Add ``records`` to ``out/runs.json`` (a job of the same name is replaced)."""
    sidecar = out / "runs.json"
    old = json.loads(sidecar.read_text())["runs"] if sidecar.exists() else []
    names = {r["job"] for r in records}
    runs = [r for r in old if r["job"] not in names] + [{**r, "command": command} for r in records]
    sidecar.write_text(json.dumps({"runs": runs}, indent=1) + "\n")
    return sidecar


def main(argv=None):
    p = _parser()
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.slow_rank is None:
        args.slow_rank = args.ranks // 2
    check(p, args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    records = run_jobs(args, out)
    if isinstance(records, int):
        return records
    add_ratios(records)
    drop_traces(records, out, args.keep)
    sidecar = write_sidecar(out, records, " ".join(["benchmarks/ddp_traces.py", *argv]))
    log(f"{len(records)} jobs in {time.monotonic() - start:.0f} s; sidecar {sidecar}")
    for r in records:
        log(f"  {r['job']:16s} step {1e3 * r['step_s']:7.2f} ms" + (f"  ratio {r['ratio']:.3f}" if "ratio" in r else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
