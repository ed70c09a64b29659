"""The synthetic profiler traces of ``benchmarks/bench_profiler.py`` are shaped as the issue asks (issue 25, "Speed
and memory"): 8 ranks, plain and gzipped, ``traceEvents`` past the first 64 KiB, ``correlation`` and
``External id`` unique, NCCL kernels with their collective args, and the slow rank the last to start each one."""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_profiler.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_profiler", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    bench = _bench()
    args = bench._parser().parse_args(["--mb", "0.5", "--ops-per-step", "100"])
    folder = tmp_path_factory.mktemp("bench")
    bench.generate(folder, args)
    return folder, args


def load(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        text = f.read()
    return text, json.loads(text)


def test_each_rank_is_written_plain_and_gzipped_alike(job):
    folder, args = job
    for r in range(args.ranks):
        plain, data = load(folder / "plain" / f"rank-{r}.pt.trace.json")
        __, zipped = load(folder / "gz" / f"rank-{r}.pt.trace.json.gz")
        assert data == zipped and data["distributedInfo"]["rank"] == r
        assert plain.index('"traceEvents"') > 64 * 1024  # after a large pg_config, as in a large job
        assert len(data["distributedInfo"]["pg_config"]) == data["distributedInfo"]["pg_count"] == args.groups


def test_ids_are_unique_and_link_each_launch_to_its_kernel(job):
    folder, args = job
    __, data = load(folder / "plain" / "rank-5.pt.trace.json")
    evs = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    launches = [e for e in evs if e["name"] == "cudaLaunchKernel"]
    kernels = [e for e in evs if e["cat"] == "kernel"]
    assert len({e["args"]["correlation"] for e in launches}) == len(launches) == len(kernels)
    assert {e["args"]["correlation"] for e in launches} == {e["args"]["correlation"] for e in kernels}
    host = [e["args"]["External id"] for e in evs if e["cat"] in ("cpu_op", "user_annotation")]
    assert len(set(host)) == len(host)
    comms = [e for e in evs if e["name"] == "record_param_comms"]
    assert comms and all(e["args"]["Collective name"] == "allreduce" and e["args"]["Group size"] == 8 for e in comms)
    steps = [e for e in evs if e["name"].startswith("ProfilerStep#")]
    assert len(steps) >= 2 and all(s["dur"] > 0 for s in steps)


def test_the_slow_rank_starts_every_nccl_kernel_last(job):
    folder, args = job
    starts, ends = {}, {}
    for r in range(args.ranks):
        __, data = load(folder / "gz" / f"rank-{r}.pt.trace.json.gz")
        nccl = sorted((e for e in data["traceEvents"] if e.get("cat") == "kernel" and "nccl" in e["name"]),
                      key=lambda e: e["ts"])
        starts[r], ends[r] = [e["ts"] for e in nccl], [e["ts"] + e["dur"] for e in nccl]
    assert all(ends[r] == pytest.approx(ends[0]) for r in ends), "an all-reduce ends together on every rank"
    last = Counter(max(starts, key=lambda r: starts[r][i]) for i in range(len(starts[0])))
    assert last == {args.slow_rank: len(starts[0])}


def test_bad_settings_are_refused_naming_them(capsys):
    bench = _bench()
    p = bench._parser()
    with pytest.raises(SystemExit):
        bench.check(p, p.parse_args(["--slow-rank", "9"]))
    assert "--slow-rank must be in 0..7, got 9" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.check(p, p.parse_args(["--repeat", "0"]))
    assert "--repeat must be >= 1, got 0" in capsys.readouterr().err


def test_interleaved_rounds_are_reported_as_medians_with_the_load_seen():
    bench = _bench()
    runs = [{"wall_s": w, "cpu_s": c, "rss": r, "pss": r, "rc": 0, "out": "", "err": "", "load": load}
            for w, c, r, load in ((10.0, 5.0, 100, (2.0, 3.0)), (30.0, 6.0, 300, (9.0, 8.0)), (20.0, 7.0, 200, (4.0, 1.5)))]
    m = bench.median_of(runs)
    assert (m["wall_s"], m["cpu_s"], m["rss"], m["load"], m["n"]) == (20.0, 6.0, 200, (1.5, 9.0), 3)
