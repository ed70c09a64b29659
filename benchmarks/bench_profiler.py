"""Benchmark: ``straggle-edu analyze`` against HolisticTraceAnalysis on large multi-rank profiler traces.

Generates a synthetic job of ``--ranks`` (default 8) PyTorch profiler (Kineto) traces of about ``--mb`` MB each,
shaped like a real multi-rank NCCL trace (modelled on facebookresearch/param's DLRM trace, HTA's samples and
TraceLens' B200 trace, PyTorch 2.x layout): ``schemaVersion``, ``deviceProperties``, then ``distributedInfo``
with ``pg_config`` (``--groups`` process groups, so that ``traceEvents`` starts past the first 64 KiB, as in a
large job), then ``traceEvents``: ``ProfilerStep#N`` spans; ``cpu_op`` events each launching a kernel
(``cudaLaunchKernel``, then the ``kernel`` on the compute stream, linked by ``correlation``, ``External id`` and
``ac2g`` flow events, every id unique within its rank); every ``--ops-per-collective`` ops a gradient all-reduce:
``record_param_comms`` with ``Collective name``, ``Process Group Name``/``Description``/``Ranks``, ``Group size``,
``dtype`` and message sizes, launching ``ncclKernel_AllReduce_RING_LL_Sum_float`` (with ``--nccl-names new``,
``ncclDevKernel_AllReduce_Sum_f32_RING_LL``) on the NCCL stream with the same args; the step ends in
``cudaDeviceSynchronize``. Each rank's GPU runs its kernels back to back; an NCCL kernel starts when its rank's
compute before it is done and ends when the last rank has arrived plus the transfer, so the waits are in the
kernels, as on a real GPU. Rank ``--slow-rank`` (default 3) computes ``--slow`` (1.15) times as long. The files
are written once, plain (``<dir>/plain/rank-<r>.pt.trace.json``) and gzipped (``<dir>/gz/rank-<r>.pt.trace.json.gz``),
and reused while their settings are the same.

Then, in the same run, each folder is analysed as whole processes by

- ``python -m straggle_edu analyze FOLDER --json``;
- HolisticTraceAnalysis, where a Python with it is found (``--hta-python``, else ``$STRAGGLE_EDU_HTA_PYTHON``, else
  ``/tmp/hta-venv/bin/python``; make one with ``python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install
  HolisticTraceAnalysis``): ``TraceAnalysis(trace_dir=FOLDER)``, then ``get_potential_stragglers()``. Without it
  that half is skipped, saying how to install it.

For each it reports the wall time, the CPU time (user + system of the process and every child it waited for) and
the peak memory as the summed RSS of the process tree, sampled every 50 ms (HTA forks a pool of workers, whose RSS
counts), with the summed PSS beside it (pages shared by forked workers counted once), and the ratios HTA /
analyze. The goals of issue 25: at 8 x 100 MB, analyze at least 8 x faster than HTA and at most a fifth of its
peak memory; at 8 x 500 MB, analyze within 2 GB.

Run: ``.venv/bin/python benchmarks/bench_profiler.py [--mb 100] [--ranks 8] [--dir D] [--skip-hta] [--only gz]
[--repeat 3]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
COMPUTE_STREAM, NCCL_STREAM = 7, 20
MAIN_TID = 1000
KERNELS = ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
           "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, F, A)",
           "void at::native::(anonymous namespace)::layer_norm_kernel<float>(long, float, float const*)")
OPS = ("aten::mm", "aten::add_", "aten::native_layer_norm")
# The kernel's name in NCCL before 2.19 (as in the DLRM and HTA traces) and after; HTA 0.5.0 recognises only the
# first (``ncclKernel*``) and fails on the second ("attempt to get argmax of an empty sequence").
NCCL_KERNELS = {"old": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                "new": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"}
HTA_SCRIPT = ("import sys; from hta.trace_analysis import TraceAnalysis; "
              "print(TraceAnalysis(trace_dir=sys.argv[1]).get_potential_stragglers())")


def log(message):
    print(f"[bench_profiler] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the synthetic job


def header(rank, ranks, groups):
    """The JSON text before the events: device properties, distributedInfo with pg_config, then '"traceEvents": ['."""
    pgs = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": ranks,
            "ranks": list(range(ranks))}]
    pgs += [{"pg_name": str(g), "pg_desc": "undefined", "backend_config": "cuda:nccl", "pg_size": ranks,
             "ranks": list(range(ranks))} for g in range(1, groups)]
    devices = [{"id": d, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "computeMajor": 9,
                "computeMinor": 0, "numSms": 132} for d in range(ranks)]
    head = {"schemaVersion": 1, "deviceProperties": devices,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks, "pg_count": groups,
                                "pg_config": pgs},
            "record_shapes": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000}
    text = json.dumps(head)[:-1]
    meta = [{"ph": "M", "name": "process_name", "pid": 4000 + rank, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": f"GPU {rank}"}},
            {"ph": "M", "name": "thread_name", "pid": 4000 + rank, "tid": MAIN_TID, "args": {"name": "python"}},
            {"ph": "M", "name": "thread_name", "pid": rank, "tid": COMPUTE_STREAM, "args": {"name": "stream 7"}},
            {"ph": "M", "name": "thread_name", "pid": rank, "tid": NCCL_STREAM, "args": {"name": "stream 20"}}]
    return text + ', "traceEvents": [' + ",\n".join(json.dumps(m) for m in meta)


def _x(cat, name, pid, tid, ts, dur, args):
    return (f',\n{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts:.3f}, '
            f'"dur": {dur:.3f}, "args": {args}}}')


def _flow(ph, fid, pid, tid, ts):
    binding = ', "bp": "e"' if ph == "f" else ""
    return (f',\n{{"ph": "{ph}", "id": {fid}, "pid": {pid}, "tid": {tid}, "ts": {ts:.3f}, "cat": "ac2g", '
            f'"name": "ac2g"{binding}}}')


class Rank:
    """One rank's writer: its ids, its host clock and its GPU streams."""

    def __init__(self, rank, ranks):
        self.rank, self.ranks, self.pid = rank, ranks, 4000 + rank
        # ids as deep into a run as in HTA's sample (External id ~ 4e4, correlation ~ 7e6); HTA 0.5.0 fails on
        # correlation ids that fit int16 while a rank has more events than that ("Invalid value ... for dtype int16")
        self.ext, self.corr = 40_000, 6_900_000
        self.host = self.gpu = 1.0e6

    def launch(self, out, op, kernel, dur_host, dur_gpu, stream=COMPUTE_STREAM, extra=""):
        """A cpu_op launching one kernel; returns the kernel's start. Host ahead, GPU back to back."""
        ext, corr = self.ext, self.corr
        self.ext += 1
        self.corr += 1
        t = self.host
        args_op = f'{{"External id": {ext}, "Record function id": 0, "Ev Idx": {ext}{extra}}}'
        out.append(_x("cpu_op", op, self.pid, MAIN_TID, t, dur_host, args_op))
        out.append(_x("cuda_runtime", "cudaLaunchKernel", self.pid, MAIN_TID, t + 2.0, 6.0,
                      f'{{"External id": {ext}, "cbid": 211, "correlation": {corr}}}'))
        out.append(_flow("s", corr, self.pid, MAIN_TID, t + 2.0))
        start = max(self.gpu, t + 10.0)
        if stream == COMPUTE_STREAM:
            self.gpu = start + dur_gpu
        out.append(_x("kernel", kernel, self.rank, stream, start, dur_gpu,
                      f'{{"External id": {ext}, "queued": 0, "device": {self.rank}, "context": 1, '
                      f'"stream": {stream}, "correlation": {corr}, "registers per thread": 96, '
                      f'"grid": [132, 1, 1], "block": [512, 1, 1]{extra}}}'))
        out.append(_flow("f", corr, self.rank, stream, start))
        self.host = t + dur_host + 1.0
        return start


def comm_args(ranks, nelems, rank):
    listed = str(list(range(ranks)))
    return (f', "Collective name": "allreduce", "In msg nelems": {nelems}, "Out msg nelems": {nelems}, '
            f'"Group size": {ranks}, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
            f'"Process Group Name": "0", "Process Group Description": "default_pg", '
            f'"Process Group Ranks": "{listed}", "Rank": {rank}')


def write_step(writers, outs, step, settings, rng):
    """Every rank's events of one step, appended to ``outs`` (one list per rank)."""
    ranks, ops, every = len(writers), settings.ops_per_step, settings.ops_per_collective
    scale = np.where(np.arange(ranks) == settings.slow_rank, settings.slow, 1.0)
    base = rng.uniform(20.0, 200.0, size=ops)  # µs of GPU time per op, the same op on every rank
    noise = rng.normal(1.0, 0.03, size=(ranks, ops)).clip(0.8, 1.2)
    starts = [w.host for w in writers]
    marks = [len(out) for out in outs]
    for out in outs:
        out.append(None)  # the step span, written at the end when its length is known
    for lo in range(0, ops, every):
        for r, (w, out) in enumerate(zip(writers, outs)):
            for i in range(lo, min(lo + every, ops)):
                k = i % len(OPS)
                w.launch(out, OPS[k], KERNELS[k], 30.0, base[i] * noise[r, i] * scale[r])
        # a rank's NCCL kernel starts when its compute is done and the host has launched it (at host + 15 µs)
        arrivals = [max(w.gpu, w.host + 15.0) for w in writers]
        end = max(arrivals) + settings.transfer_us
        for w, out, arrival in zip(writers, outs, arrivals):
            extra = comm_args(ranks, 1 << 20, w.rank)
            w.host += 5.0
            out.append(_x("cpu_op", "c10d::allreduce_", w.pid, MAIN_TID, w.host - 4.0, 60.0,
                          f'{{"External id": {w.ext}, "Record function id": 0, "Ev Idx": {w.ext}}}'))
            w.ext += 1
            w.launch(out, "record_param_comms", NCCL_KERNELS[settings.nccl_names], 40.0, end - arrival, NCCL_STREAM, extra)
            w.gpu = end  # the next compute kernel waits for the all-reduce (the stream wait)
    for w, out, t0, mark in zip(writers, outs, starts, marks):
        sync = max(w.host, w.gpu)
        out.append(_x("cuda_runtime", "cudaDeviceSynchronize", w.pid, MAIN_TID, w.host, sync - w.host,
                      f'{{"External id": {w.ext}, "cbid": 165, "correlation": {w.corr}}}'))
        w.ext += 1
        w.corr += 1
        w.host = w.gpu = sync + 20.0
        out[mark] = _x("user_annotation", f"ProfilerStep#{step}", w.pid, MAIN_TID, t0, sync - t0,
                                f'{{"External id": {w.ext}, "Record function id": 0, "Ev Idx": {w.ext}}}')
        w.ext += 1


def generate(folder, settings):
    """Write the job into ``folder``/plain and ``folder``/gz, unless it is there already with these settings."""
    stamp = folder / "settings.json"
    wanted = {k: getattr(settings, k) for k in ("ranks", "mb", "ops_per_step", "ops_per_collective", "groups",
                                                  "slow_rank", "slow", "transfer_us", "seed", "nccl_names")}
    wanted["ids"] = "v2"  # the ids' first values, changed once
    if stamp.exists() and json.loads(stamp.read_text()) == wanted:
        log(f"reusing the traces in {folder}")
        return
    (folder / "plain").mkdir(parents=True, exist_ok=True)
    (folder / "gz").mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    rng = np.random.default_rng(settings.seed)
    writers = [Rank(r, settings.ranks) for r in range(settings.ranks)]
    plain = [open(folder / "plain" / f"rank-{r}.pt.trace.json", "w") for r in range(settings.ranks)]
    zipped = [gzip.open(folder / "gz" / f"rank-{r}.pt.trace.json.gz", "wt", compresslevel=6)
              for r in range(settings.ranks)]
    try:
        _write_all(writers, plain, zipped, settings, rng)
    finally:
        for f in plain + zipped:
            f.close()
    stamp.write_text(json.dumps(wanted))


def _write_all(writers, plain, zipped, settings, rng):
    for r, (p, z) in enumerate(zip(plain, zipped)):
        text = header(r, settings.ranks, settings.groups)
        p.write(text)
        z.write(text)
    target, step, start, said = settings.mb * 1e6, 1, time.monotonic(), time.monotonic()
    while plain[0].tell() < target:
        outs = [[] for _ in writers]
        write_step(writers, outs, step, settings, rng)
        for out, p, z in zip(outs, plain, zipped):
            text = "".join(out)
            p.write(text)
            z.write(text)
        step += 1
        if time.monotonic() - said > 2:
            said = time.monotonic()
            log(f"writing: {plain[0].tell() / 1e6:.0f} of {settings.mb} MB a rank, {step - 1} steps, "
                f"{said - start:.0f} s")
    for p, z in zip(plain, zipped):
        tail = '\n], "traceName": "synthetic"}\n'
        p.write(tail)
        z.write(tail)
    log(f"wrote {settings.ranks} ranks x {plain[0].tell() / 1e6:.0f} MB, {step - 1} steps, "
        f"in {time.monotonic() - start:.0f} s")


# ----------------------------------------------------------------------------- measuring a process tree


def _tree(pid):
    """The pids of ``pid`` and every process below it."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
                parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, todo = [pid], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def _memory(pids):
    """(summed RSS, summed PSS) of ``pids`` in bytes, from /proc/<pid>/smaps_rollup."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return rss, pss


def measure(cmd, label, timeout):
    """Run ``cmd``; its wall s, CPU s (itself and the children it waited for), peak summed RSS and PSS (bytes)."""
    import tempfile

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = said = time.monotonic()
    # the output goes to files: a pipe that nobody reads until the end stops a child that writes more than 64 KiB
    sink_out, sink_err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(cmd, stdout=sink_out, stderr=sink_err, text=True, cwd=ROOT, start_new_session=True)
    peak_rss = peak_pss = 0
    try:
        while proc.poll() is None:
            rss, pss = _memory(_tree(proc.pid))
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            if time.monotonic() - said > 2:
                said = time.monotonic()
                log(f"  {label}: {said - start:.0f} s, {rss / 2**20:.0f} MiB now")
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{label} ran past {timeout} s")
            time.sleep(0.05)
        proc.wait()
        out, err = (_read_back(f) for f in (sink_out, sink_err))
    finally:
        if proc.poll() is None:
            for pid in reversed(_tree(proc.pid)):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            proc.wait()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "rss": peak_rss, "pss": peak_pss, "rc": proc.returncode,
            "out": out.strip(), "err": err.strip()[-400:]}


def _read_back(f):
    f.seek(0)
    text = f.read()
    f.close()
    return text


def hta_python(given):
    for candidate in (given, os.environ.get("STRAGGLE_EDU_HTA_PYTHON"), "/tmp/hta-venv/bin/python"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


# ----------------------------------------------------------------------------- the run


def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=100, help="MB of plain JSON per rank (default 100)")
    p.add_argument("--ranks", type=int, default=8, help="ranks (default 8)")
    p.add_argument("--dir", default=None, help="where the traces go (default /tmp/straggle-edu-profiler-<mb>mb)")
    p.add_argument("--ops-per-step", type=int, default=400, help="kernels a step on each rank (default 400)")
    p.add_argument("--ops-per-collective", type=int, default=50, help="kernels between all-reduces (default 50)")
    p.add_argument("--groups", type=int, default=600,
                   help="process groups in pg_config (default 600: traceEvents starts past 64 KiB)")
    p.add_argument("--nccl-names", choices=tuple(NCCL_KERNELS), default="old",
                   help="NCCL kernel names before 2.19 (old, default: HTA 0.5.0 reads only these) or after (new)")
    p.add_argument("--slow-rank", type=int, default=3, help="the rank that computes longer (default 3)")
    p.add_argument("--slow", type=float, default=1.15, help="how much longer (default 1.15)")
    p.add_argument("--transfer-us", type=float, default=1000.0,
                   help="µs of each all-reduce's transfer (default 1000: over 1%% of a step, so that HTA, which leaves out "
                        "communication kernels shorter than that, sees the slow rank's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=("plain", "gz"), default=None, help="only the plain or the gzipped files")
    p.add_argument("--skip-hta", action="store_true", help="analyze only")
    p.add_argument("--hta-python", default=None, help="a Python with HolisticTraceAnalysis installed")
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds, each tool once a round in alternating order; medians reported (default 1)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds each analysis may take (default 1800)")
    return p


def check(p, a):
    if a.repeat < 1:
        p.error(f"--repeat must be >= 1, got {a.repeat}")
    if a.mb <= 0 or a.ranks < 2 or a.ops_per_step < 1 or a.ops_per_collective < 1 or a.groups < 1:
        p.error("--mb must be > 0, --ranks >= 2, --ops-per-step, --ops-per-collective and --groups >= 1; got "
                f"{a.mb}, {a.ranks}, {a.ops_per_step}, {a.ops_per_collective}, {a.groups}")
    if not 0 <= a.slow_rank < a.ranks:
        p.error(f"--slow-rank must be in 0..{a.ranks - 1}, got {a.slow_rank}")


def run_tools(folder, args):
    """{(tool, kind): [measurement, ...]} for each kind of file and each tool, ``--repeat`` rounds interleaved.

    Each round runs every tool once, in turns (analyze, HTA; then HTA, analyze; ...), so that on a shared
    machine both see the same load; the load average (1 minute) is kept beside each measurement.
    """
    hta = None if args.skip_hta else hta_python(args.hta_python)
    if not args.skip_hta and hta is None:
        log("HolisticTraceAnalysis not found: python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install "
            "HolisticTraceAnalysis (or --hta-python PATH); measuring analyze alone")
    results = {}
    for kind in ("plain", "gz") if args.only is None else (args.only,):
        tools = {"analyze": [sys.executable, "-m", "straggle_edu", "analyze", str(folder / kind), "--json"]}
        if hta:
            tools["HTA"] = [hta, "-c", HTA_SCRIPT, str(folder / kind)]
        for round_ in range(args.repeat):
            order = list(tools) if round_ % 2 == 0 else list(tools)[::-1]
            for tool in order:
                log(f"{tool} on {kind}, round {round_ + 1} of {args.repeat}")
                load = os.getloadavg()[0]
                m = measure(tools[tool], f"{tool} {kind}", args.timeout)
                m["load"] = (load, os.getloadavg()[0])
                results.setdefault((tool, kind), []).append(m)
                log(f"  {tool} {kind}: {m['wall_s']:.1f} s wall, {m['cpu_s']:.1f} s CPU, "
                    f"{m['rss'] / 2**20:.0f} MiB RSS, exit {m['rc']}, load {load:.1f} -> {m['load'][1]:.1f}")
    return results


def median_of(runs):
    """One measurement: the medians of ``runs``' numbers, the lowest and highest load seen, the last run's output."""
    import statistics

    out = dict(runs[-1])
    for key in ("wall_s", "cpu_s", "rss", "pss"):
        out[key] = statistics.median(m[key] for m in runs)
    out["rc"] = max(m["rc"] for m in runs)
    loads = [x for m in runs for x in m["load"]]
    out["load"] = (min(loads), max(loads))
    out["n"] = len(runs)
    return out


def _said(m):
    """What a tool answered: analyze's S and top rank, HTA's list of potential stragglers."""
    try:
        out = json.loads(m["out"])
    except json.JSONDecodeError:
        return m["out"].splitlines()[-1][:90] if m["out"] else ""
    if not isinstance(out, dict):  # HTA's list
        return f"potential stragglers {out}"
    by_rank = out.get("by_rank") or {}
    top = f", top rank {max(by_rank, key=by_rank.get)}" if by_rank else ""
    return f"S = {out['slowdown']:.3f}{top}" if out.get("slowdown") is not None else str(out)[:90]


def report(results, args):
    results = {key: median_of(runs) for key, runs in results.items()}
    print(f"\n{args.ranks} ranks x {args.mb:g} MB (plain JSON per rank); memory: peak summed over the process tree; "
          f"medians of {args.repeat} interleaved run(s); load: 1-minute load average, lowest and highest seen "
          f"(on {os.cpu_count()} CPUs)")
    print(f"{'tool':8s} {'files':6s} {'wall s':>8s} {'CPU s':>8s} {'RSS MiB':>9s} {'PSS MiB':>9s} {'load':>10s}  said")
    for (tool, kind), m in results.items():
        said = _said(m) if m["rc"] == 0 else f"exit {m['rc']}: {m['err']}".replace("\n", " ")[-90:]
        print(f"{tool:8s} {kind:6s} {m['wall_s']:8.1f} {m['cpu_s']:8.1f} {m['rss'] / 2**20:9.0f} "
              f"{m['pss'] / 2**20:9.0f} {m['load'][0]:4.1f}-{m['load'][1]:<5.1f}  {said}")
    for kind in ("plain", "gz"):
        a, h = results.get(("analyze", kind)), results.get(("HTA", kind))
        if a and h and a["rc"] == 0 and h["rc"] == 0:
            print(f"{kind}: HTA / analyze: wall {h['wall_s'] / a['wall_s']:.2f}x, CPU {h['cpu_s'] / a['cpu_s']:.2f}x, "
                  f"peak RSS {h['rss'] / a['rss']:.2f}x, peak PSS {h['pss'] / a['pss']:.2f}x "
                  "(goals at 8 x 100 MB: wall >= 8x, RSS >= 5x)")
        if a and a["rc"] == 0 and args.mb >= 500:
            print(f"{kind}: analyze peak RSS {a['rss'] / 2**30:.2f} GiB (goal at 8 x 500 MB: within 2 GB)")


def main(argv=None):
    p = _parser()
    args = p.parse_args(argv)
    check(p, args)
    folder = Path(args.dir or f"/tmp/straggle-edu-profiler-{args.mb:g}mb")
    generate(folder, args)
    try:
        results = run_tools(folder, args)
    except TimeoutError as exc:
        log(f"error: {exc}")
        return 1
    report(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
