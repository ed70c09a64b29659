"""Benchmark: what-if analysis of op-level traces as whole processes.

Generates the two traces of the performance targets into a temporary folder:

- a 128-GPU job as traced: 64 workers (DP 32 x PP 2, 1F1B, 8 microbatches),
  43 steps, about 10^5 ops; target <= 1.5 s for the whole process with
  attribution (the paper's reference implementation takes about 1.7-1.9 s);
- a 4096-worker job (DP 512 x PP 8, 8 microbatches), 20 steps, about 4 x 10^6
  ops; target <= 60 s within 2 GB.

With ``--huge``, also the scale case: a 16,384-rank job (DP 2048 x PP 8, 8
microbatches), 50 steps, about 4 x 10^7 ops, written once as Parquet block by
block into ``--huge-dir`` (default ``/tmp/straggle-edu-16k``; kept and reused,
about 600 MB) and analysed block by block (``--block-steps auto``); target
within 4 GB of peak memory at no lower throughput per op (ops per CPU second)
than the 4096-worker trace read whole (``--block-steps 0``, the method before
streaming), which is timed in the same run.

Then runs ``python -m straggle_edu analyze TRACE --json`` on each as a
separate process (several times; the best and the median are shown), with
its wall time and peak resident memory. Finally it compares the vectorised
replay with a naive one (a straightforward per-op Python replay of the same
dependency model, one variant, step and DP rank at a time) on the small
trace, in process, and checks they agree.

Against the artifact. When a clone of the OSDI 2025 artifact
(``git clone https://github.com/ByteDance-Seed/StragglerAnalysis``) and a
Python with its requirements (``python3 -m venv V && V/bin/pip install
"pandas<3" pyarrow pyyaml scipy tqdm numpy ujson seaborn``) are present, it
also times ``analyze`` on the artifact's SE trace as a whole process against
the artifact's ``analyzer/wia.py`` in the same run, and prints the CPU ratio
(goal: at least 5x less CPU than wia.py; CPU seconds, which a loaded machine
does not stretch as it stretches wall time), the wall ratio beside it, and
both peak memories (with less memory). Where they
are looked for: ``$STRAGGLE_EDU_ARTIFACT`` (the clone; default
``../StragglerAnalysis`` beside this repository, then
``/work/artifact/StragglerAnalysis``) and ``$STRAGGLE_EDU_ARTIFACT_PYTHON``
(default: ``<clone>/.venv/bin/python``, then ``/work/artifact-venv/bin/python``).
Without them the comparison is skipped, saying why.

Run: ``.venv/bin/python benchmarks/bench_whatif.py [--repeat 3] [--skip-large] [--only-artifact] [--huge]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_MEASURE = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rss = ru.ru_maxrss  # KiB on Linux
cpu = ru.ru_utime + ru.ru_stime
sys.stdout.write(f"{wall} {rss} {r.returncode} {cpu}\n")
sys.stderr.write(r.stderr.decode(errors="replace")[-2000:])
"""


# The children run as a user's shell runs them: with Python's bytecode cache. Where the environment
# turns it off (PYTHONDONTWRITEBYTECODE), every run of either program would compile its modules
# again, which is no part of either analysis.
_CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(args):
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process.

    On a shared machine the wall time grows with the load; the CPU time does
    not, and on an idle machine the wall time is about the CPU time.
    """
    out = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, text=True, env=_CHILD_ENV)
    wall, rss, rc, cpu = out.stdout.split()
    if int(rc) != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr}")
    return float(wall), int(rss) / 1024, float(cpu)


def generate(folder, skip_large):
    from straggle_edu import set_memory_budget
    from straggle_edu.traces import write_trace
    from straggle_edu.traces.synthetic import synthetic_trace

    set_memory_budget(4 * 2**30)
    made = {}
    t = time.perf_counter()
    small = synthetic_trace(dp=32, pp=2, microbatches=8, steps=43, jitter=0.03, seq_imbalance=0.2,
                            slow_worker=(5, 1, 1.3), gc_pauses=(0.02, 0.05), rng=1)
    made["128-GPU (DP32 x PP2, 43 steps)"] = (write_trace(small, folder / "trace-dp32.parquet"), len(small), small)
    write_trace(small, folder / "trace-dp32.csv")
    print(f"generated {len(small):,} ops in {time.perf_counter() - t:.1f} s")
    if not skip_large:
        t = time.perf_counter()
        big = synthetic_trace(dp=512, pp=8, microbatches=8, steps=20, jitter=0.03, slow_worker=(100, 7, 1.5), rng=2)
        made["4096 workers (DP512 x PP8, 20 steps)"] = (write_trace(big, folder / "trace-4k.parquet"), len(big), None)
        print(f"generated {len(big):,} ops in {time.perf_counter() - t:.1f} s")
        del big
    return made


HUGE = {"dp": 2048, "pp": 8, "microbatches": 8, "steps": 50}  # 16,384 ranks (one per worker, TP 1)


def generate_huge(folder, block=2):
    """Write the 16,384-rank x 50-step trace as Parquet, ``block`` steps (one row group) at a time.

    Each block is simulated on its own (same slow worker, its own seed) and
    appended, so the writing never holds more than one block. Kept and
    reused when ``folder/trace-16k.parquet`` exists.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from straggle_edu import set_memory_budget
    from straggle_edu.traces.optrace import OPTYPES
    from straggle_edu.traces.synthetic import synthetic_trace

    path = Path(folder) / "trace-16k.parquet"
    if path.exists():
        return path, pq.ParquetFile(path).metadata.num_rows
    set_memory_budget(4 * 2**30)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, writer, rows, t0, clock = path.with_suffix(".part"), None, 0, time.perf_counter(), 0.0
    for lo in range(0, HUGE["steps"], block):
        t = synthetic_trace(dp=HUGE["dp"], pp=HUGE["pp"], microbatches=HUGE["microbatches"], steps=block,
                            jitter=0.03, slow_worker=(100, 7, 1.5), rng=lo)
        cols = t.columns()
        cols["step"] = cols["step"] + lo
        cols["start_ts"] = cols["start_ts"] - cols["start_ts"].min() + clock
        clock = float((cols["start_ts"] + cols["duration"]).max()) + 0.001
        arrays = {k: pa.array(v) for k, v in cols.items() if k != "optype"}
        arrays["optype"] = pa.DictionaryArray.from_arrays(pa.array(t.optype.astype(np.int32)), pa.array(OPTYPES))
        table = pa.table({k: arrays[k] for k in cols})
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
        rows += len(t)
        del t, cols, arrays, table
    writer.close()
    tmp.rename(path)
    (Path(folder) / "meta-16k.yaml").write_text(
        f"dp_size: {HUGE['dp']}\npp_size: {HUGE['pp']}\ntp_size: 1\ndsp_size: 1\nvpp_size: 1\n"
        f"world_size: {HUGE['dp'] * HUGE['pp']}\n", encoding="utf-8")
    print(f"generated {rows:,} ops ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.0f} s")
    return path, rows


REPO = Path(__file__).resolve().parent.parent


def find_artifact():
    """``(clone, python)`` of the artifact, or ``(None, reason)``."""
    env = os.environ.get("STRAGGLE_EDU_ARTIFACT")
    clones = [Path(env)] if env else [REPO.parent / "StragglerAnalysis", Path("/work/artifact/StragglerAnalysis")]
    clone = next((c for c in clones if (c / "analyzer" / "wia.py").is_file()), None)
    if clone is None:
        return None, f"no clone of the artifact with analyzer/wia.py at {', '.join(map(str, clones))}"
    env = os.environ.get("STRAGGLE_EDU_ARTIFACT_PYTHON")
    pythons = [Path(env)] if env else [clone / ".venv" / "bin" / "python", Path("/work/artifact-venv/bin/python")]
    python = next((p for p in pythons if p.is_file()), None)
    if python is None:
        return None, f"no Python for the artifact at {', '.join(map(str, pythons))} (a venv with 'pandas<3' ...)"
    ok = subprocess.run([str(python), "-c", "import pandas, pyarrow, yaml, tqdm"], capture_output=True)
    if ok.returncode != 0:
        return None, f"{python} lacks the artifact's requirements (pandas<3, pyarrow, pyyaml, tqdm)"
    return clone, python


CPU_GOAL = 5.0  # the goal: at least 5x less CPU than the artifact's wia.py


def versus_artifact(repeat, trial="SE"):
    """Whole-process CPU, wall time and peak memory: ours and the artifact's wia.py on one public trace; return
    the CPU ratio wia.py / ours."""
    clone, python = find_artifact()
    print(f"versus the artifact's analyzer/wia.py on trace-{trial}.parquet:")
    if clone is None:
        print(f"  skipped: {python}")
        return None
    data = clone / "data"
    with tempfile.TemporaryDirectory(prefix="bench-wia-") as out:
        theirs_cmd = ["env", f"PYTHONPATH={clone}", str(python), str(clone / "analyzer" / "wia.py"),
                      "--metadata", str(data / f"meta-{trial}.yaml"), "--trace", str(data / f"trace-{trial}.parquet"),
                      "--dump-dir", out]
        ours_cmd = [sys.executable, "-m", "straggle_edu", "analyze", str(data / f"trace-{trial}.parquet"), "--json"]
        measure(ours_cmd), measure(theirs_cmd)  # untimed: each writes its bytecode cache
        ours, theirs = [], []
        for _ in range(repeat):  # interleaved, so both see the same load
            ours.append(measure(ours_cmd))
            theirs.append(measure(theirs_cmd))
    o_wall, t_wall = statistics.median(r[0] for r in ours), statistics.median(r[0] for r in theirs)
    o_rss, t_rss = max(r[1] for r in ours), max(r[1] for r in theirs)
    o_cpu, t_cpu = min(r[2] for r in ours), min(r[2] for r in theirs)
    print(f"  {'':28} {'median s':>9} {'cpu s':>7} {'peak MiB':>9}")
    print(f"  {'straggle-edu analyze':28} {o_wall:>9.2f} {o_cpu:>7.2f} {o_rss:>9.0f}")
    print(f"  {'artifact analyzer/wia.py':28} {t_wall:>9.2f} {t_cpu:>7.2f} {t_rss:>9.0f}")
    cpu = t_cpu / o_cpu
    print(f"  CPU wia.py / ours: {cpu:.1f}x (goal >= {CPU_GOAL:g}x less CPU than wia.py: "
          f"{'met' if cpu >= CPU_GOAL else 'NOT MET'}); wall {t_wall / o_wall:.1f}x; "
          f"peak memory wia.py / ours {t_rss / o_rss:.2f}")
    return cpu


def naive_replay(model, work, steps=None):
    """Per-op Python replay of one variant: ``work[n][s][d]`` in seconds; returns step times."""
    S, D = len(model.steps), model.dp_size
    out = []
    for s in range(S if steps is None else steps):
        start = {}
        end = {}
        for kind, n in model.order:
            if kind == 0:
                for d in range(D):
                    t = 0.0
                    for p in model.preds[n]:
                        t = max(t, end[p, d])
                    start[n, d] = t
            else:
                arrive = [max([start[n, d]] + [start[u, d] for u in model.peers[n]]) for d in range(D)]
                if model.dpsync[n]:
                    arrive = [max(arrive)] * D
                for d in range(D):
                    end[n, d] = arrive[d] + work[n][s][d]
        out.append(max(end.values()))
    return np.array(out)


def naive_vs_vectorised(trace):
    from straggle_edu.traces.replay import build_model, replay
    from straggle_edu.traces.whatif import analyze_ops, ideal_work

    model = build_model(trace)
    ideal = ideal_work(model)
    t = time.perf_counter()
    analyze_ops(trace)
    vec = time.perf_counter() - t
    # the variants the analysis replays: recorded, ideal, each stage, each optype, each DP rank, M_S, M_W
    n_variants = 2 + model.pp_size + len({c for codes in model.node_codes for c in codes}) + model.dp_size + 2
    orig_l, ideal_l = model.work.tolist(), ideal.tolist()
    steps = 3
    t = time.perf_counter()
    t_orig = naive_replay(model, orig_l, steps)
    t_ideal = naive_replay(model, ideal_l, steps)
    per_variant_step = (time.perf_counter() - t) / (2 * steps)
    naive = per_variant_step * n_variants * len(model.steps)
    vec_orig = replay(model, lambda n: model.work[n][None])[0][:steps]
    vec_ideal = replay(model, lambda n: ideal[n][None])[0][:steps]
    assert np.allclose(t_orig, vec_orig) and np.allclose(t_ideal, vec_ideal), "naive and vectorised replays disagree"
    return vec, naive, n_variants


def explorer_callbacks(repeat=7):
    """Median milliseconds of the debug-job explorer's callbacks (Python side)."""
    from straggle_edu.explorers.debug_job import debug_job_explorer

    ex = debug_job_explorer()
    workers = [w for _, w in ex.controls["worker"].options]
    steps = list(ex.controls["step"].options)
    causes = ["last-stage", "gc-pauses", "seq-imbalance", "slow-link", "none", "slow-worker"]

    def timed(action, n):
        out = []
        for i in range(n):
            t = time.perf_counter()
            action(i)
            out.append(1000 * (time.perf_counter() - t))
        return statistics.median(out)

    return {
        "pick a worker (replay one step, redraw its ops)": timed(
            lambda i: setattr(ex.controls["worker"], "value", workers[(i + 1) % len(workers)]), repeat),
        "pick a step": timed(lambda i: setattr(ex.controls["step"], "value", steps[(i + 1) % len(steps)]), repeat),
        "switch example (generate, analyse, redraw all)": timed(
            lambda i: setattr(ex.controls["example"], "value", causes[i % len(causes)]), len(causes)),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true", help="skip the 4096-worker trace")
    parser.add_argument("--only-artifact", action="store_true", help="only the comparison with the artifact")
    parser.add_argument("--huge", action="store_true", help="also the 16,384-rank x 50-step trace, streamed")
    parser.add_argument("--huge-dir", default="/tmp/straggle-edu-16k", help="where the huge trace is kept")
    parser.add_argument("--skip-artifact", action="store_true", help="skip the comparison with the artifact")
    args = parser.parse_args(argv)
    if not args.skip_artifact:
        versus_artifact(args.repeat)
        print()
    if args.only_artifact:
        return 0
    env_python = [sys.executable, "-m", "straggle_edu", "analyze"]
    with tempfile.TemporaryDirectory(prefix="bench-whatif-") as tmp:
        folder = Path(tmp)
        made = generate(folder, args.skip_large)
        print()
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        if args.huge:
            Path(args.huge_dir).mkdir(parents=True, exist_ok=True)
            path, rows = generate_huge(args.huge_dir)
            made["16,384 ranks (DP2048 x PP8, 50 steps)"] = (path, rows, None)
        print(f"{'trace':42} {'ops':>10} {'mode':>18} {'best s':>8} {'median s':>9} {'cpu s':>7} {'peak MiB':>9} "
              f"{'target':>8} {'kops/cpu-s':>10}")
        for name, (path, n_ops, _) in made.items():
            large = "4096" in name or "16,384" in name
            modes = [("--json", [])] + ([("--attribution full", ["--attribution", "full"])] if "4096" in name else [])
            if "4096" in name:
                modes.append(("whole (--block-steps 0)", ["--block-steps", "0"]))
            if not large:
                modes.append(("csv --json", "csv"))
            for label, extra in modes:
                target_path = path if extra != "csv" else path.with_suffix(".csv")
                cmd = env_python + [str(target_path), "--json"] + ([] if extra == "csv" else extra)
                runs = [measure(cmd) for _ in range(1 if large else args.repeat)]
                walls = [r[0] for r in runs]
                peak = max(r[1] for r in runs)
                cpu = min(r[2] for r in runs)
                target = "4 GB" if "16,384" in name else "60 s" if large else ("1.5 s" if label == "--json" else "-")
                print(f"{name:42} {n_ops:>10,} {label:>18} {min(walls):>8.2f} {statistics.median(walls):>9.2f} "
                      f"{cpu:>7.2f} {peak:>9.0f} {target:>8} {n_ops / cpu / 1000:>10.0f}")
        bare = [measure([sys.executable, "-c", "import straggle_edu.app.cli"]) for _ in range(args.repeat)]
        print(f"{'(python + import straggle_edu.app.cli alone)':42} {'':>10} {'':>18} {min(b[0] for b in bare):>8.2f} "
              f"{statistics.median(b[0] for b in bare):>9.2f} {min(b[2] for b in bare):>7.2f}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        small = next(v[2] for k, v in made.items() if "128" in k)
        vec, naive, nv = naive_vs_vectorised(small)
        print()
        print(f"in-process analysis of the 128-GPU trace ({nv} replay variants x {len(small.steps)} steps):")
        print(f"  vectorised (all variants, steps, DP ranks at once): {vec:8.3f} s")
        print(f"  naive per-op Python replay (extrapolated from 3 steps): {naive:8.1f} s")
        print(f"  ratio naive / vectorised: {naive / vec:8.0f}x")
    print()
    print("debug-job explorer callbacks (median, Python side; budget 150 ms):")
    for name, ms in explorer_callbacks().items():
        print(f"  {name:52} {ms:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
