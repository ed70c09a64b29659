"""A real multi-rank NCCL trace: facebookresearch/param's DLRM on 8 x V100 (tests/data/param-dlrm/README.md).

The culprit is read here independently of the package, from the raw events (json and gzip only): the NCCL kernels
of every rank matched by their order on the NCCL stream; for each collective, the caused wait
sum_r (latest start - start_r) is booked to the rank that starts it latest; the rank with the largest sum wins.
``analyze`` must name the same rank.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path


DLRM = Path(__file__).resolve().parent / "data" / "param-dlrm"


def nccl_kernels(path):
    """(rank, world size, the NCCL kernels of its one NCCL stream by start, its ProfilerStep names)."""
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    evs = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    kernels = [e for e in evs if e.get("cat") == "kernel" and "nccl" in e["name"].lower()]
    assert len({e["args"]["stream"] for e in kernels}) == 1, f"{path.name}: NCCL kernels on several streams"
    steps = sorted(e["name"] for e in evs if e["name"].startswith("ProfilerStep#"))
    info = data["distributedInfo"]
    return info["rank"], info["world_size"], sorted(kernels, key=lambda e: e["ts"]), steps


def caused_waits():
    """{rank: µs of waiting it caused}, and the per-collective table [(kernel name, last rank, µs)]."""
    ranks = {rank: kernels for rank, __, kernels, __ in map(nccl_kernels, sorted(DLRM.glob("*.json.gz")))}
    counts = {len(k) for k in ranks.values()}
    assert len(counts) == 1, f"the ranks launch different numbers of NCCL kernels: {counts}"
    caused, table = dict.fromkeys(ranks, 0), []
    for i in range(counts.pop()):
        names = {k[i]["name"] for k in ranks.values()}
        assert len(names) == 1, f"collective {i} is not the same kernel on every rank: {names}"
        starts = {rank: k[i]["ts"] for rank, k in ranks.items()}
        last = max(starts, key=lambda r: (starts[r], -r))
        wait = sum(starts[last] - s for s in starts.values())
        caused[last] += wait
        table.append((names.pop().split("(")[0], last, wait))
    return caused, table


def test_the_trace_is_the_published_8_rank_job():
    read = [nccl_kernels(p) for p in sorted(DLRM.glob("*.json.gz"))]
    assert sorted(r for r, *__ in read) == list(range(8)) and {w for __, w, *__ in read} == {8}
    assert all(steps == ["ProfilerStep#10"] for *__, steps in read), "one profiled step per rank"
    assert all(len(k) == 8 for __, __, k, __ in read)


def test_independent_reading_books_the_most_caused_wait_to_rank_7():
    caused, table = caused_waits()
    assert max(caused, key=caused.get) == 7
    # µs, summed over the 8 collectives (the trace's own integer timestamps)
    assert caused == {0: 0, 1: 0, 2: 0, 3: 0, 4: 5009, 5: 6282, 6: 0, 7: 35552}
    assert [last for __, last, __ in table] == [7, 7, 7, 7, 7, 5, 5, 4]
    assert caused[7] > 5 * max(v for r, v in caused.items() if r != 7)


def test_analyze_names_the_rank_the_gpu_timeline_names():
    from straggle_edu.traces import analyze

    caused, __ = caused_waits()
    assert analyze(DLRM).culprit() == max(caused, key=caused.get)
