"""PyTorch profiler traces (Chrome trace JSON), reduced to per-rank step times.

``torch.profiler`` writes one JSON file per rank (``export_chrome_trace`` or
``tensorboard_trace_handler``), optionally gzipped; HolisticTraceAnalysis
reads the same files. Per rank this reader takes:

- the ``ProfilerStep#N`` spans (complete events, ``"ph": "X"``, host side)
  as the step durations;
- the NCCL kernel time (GPU events whose name contains ``nccl``; without
  any, host-side ``gloo:``/``c10d::`` collectives) as communication, the
  union of their intervals, each assigned to the step in which it starts;
- the rest of the step as compute.

The rank comes from the trace's ``distributedInfo.rank`` when present, else
from a ``rank-<N>`` / ``rank<N>`` in the file name, else from the order of
the files. The communication time includes the wait for the slowest peer;
the rank that arrives last waits least, so the step's transfer time is
taken as the smallest communication time over the ranks, and the rest of
each rank's communication time is waiting. The result is a
:class:`~straggle_edu.traces.RankTrace` (format ``"torch-profiler"``),
analysed like the per-rank CSV.

Files are parsed with :mod:`json` only, never evaluated, and never modified.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np

from ._safe import load_json
from ._table import column_error, display_path, show_value
from .perrank import RankTrace

__all__ = ["read_profiler_traces", "profiler_step_times"]

_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_RANK = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
_HOST_COMM = re.compile(r"^(gloo:|c10d::|nccl:)|record_param_comms", re.IGNORECASE)


def _load(path):
    shown = display_path(path)
    data = load_json(path, "a Chrome trace JSON object")
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise column_error(shown, "traceEvents", problem="is missing: expected a Chrome trace with a traceEvents list")
    return data


def _num(shown, i, ev, key):
    v = ev.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
        raise column_error(shown, key, i + 1, f"a number (event {show_value(ev.get('name', '?'))})", v)
    if key == "dur" and v < 0:
        raise column_error(shown, "dur", i + 1, f"a duration >= 0 (event {show_value(ev.get('name', '?'))})", v)
    return float(v)


def _union_by_step(starts_steps, intervals):
    """Total length of the union of intervals that start in each step window."""
    out = np.zeros(len(starts_steps))
    if not intervals:
        return out
    iv = np.array(sorted(intervals))
    # merge overlapping intervals
    merged = []
    cur_s, cur_e = iv[0]
    for s, e in iv[1:]:
        if s <= cur_e:
            cur_e = max(cur_e, e)
        else:
            merged.append((cur_s, cur_e))
            cur_s, cur_e = s, e
    merged.append((cur_s, cur_e))
    merged = np.array(merged)
    k = np.searchsorted(starts_steps, merged[:, 0], side="right") - 1
    ok = k >= 0
    np.add.at(out, k[ok], merged[ok, 1] - merged[ok, 0])
    return out


def profiler_step_times(path):
    """One rank's ``{step: (duration_s, comm_s)}`` and its rank (or None).

    Parameters
    ----------
    path : str or os.PathLike
        A Chrome trace ``.json`` or ``.json.gz``.

    Returns
    -------
    steps : dict
        ``{N: (step seconds, communication seconds)}`` for every ``ProfilerStep#N``.
    rank : int or None
        ``distributedInfo.rank``, if the trace has it.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rank3.json"
    >>> _ = p.write_text(json.dumps({"distributedInfo": {"rank": 3}, "traceEvents": [
    ...     {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 2000},
    ...     {"ph": "X", "name": "ncclKernel_AllReduce", "cat": "kernel", "ts": 1500, "dur": 400},
    ...     {"ph": "X", "name": "ProfilerStep#2", "cat": "user_annotation", "ts": 2000, "dur": 1000}]}))
    >>> steps, rank = profiler_step_times(p)   # Chrome traces count microseconds
    >>> {n: (round(float(t), 4), round(float(c), 4)) for n, (t, c) in steps.items()}, rank
    ({1: (0.002, 0.0004), 2: (0.001, 0.0)}, 3)
    """
    path = Path(path)
    shown = display_path(path)
    data = _load(path)
    events = data["traceEvents"]
    steps = {}
    gpu_comm, host_comm = [], []
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        name = str(ev.get("name", ""))
        cat = str(ev.get("cat", "")).lower()
        m = _STEP.match(name)
        if m and not cat.startswith("gpu"):
            n = int(m.group(1))
            ts, dur = _num(shown, i, ev, "ts"), _num(shown, i, ev, "dur")
            if n in steps:
                raise column_error(shown, "name", i + 1, problem=f"ProfilerStep#{n} appears twice")
            steps[n] = (ts, dur)
            continue
        if "nccl" in name.lower() and cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            ts, dur = _num(shown, i, ev, "ts"), _num(shown, i, ev, "dur")
            gpu_comm.append((ts, ts + dur))
        elif _HOST_COMM.search(name) and not cat.startswith("gpu") and cat != "kernel":
            ts, dur = _num(shown, i, ev, "ts"), _num(shown, i, ev, "dur")
            host_comm.append((ts, ts + dur))
    if not steps:
        raise column_error(shown, "name", problem="no ProfilerStep#N events; profile with torch.profiler and "
                           "call prof.step() once per training step")
    order = sorted(steps)
    starts = np.array([steps[n][0] for n in order])
    if (np.diff(starts) < 0).any():
        raise column_error(shown, "ts", problem="ProfilerStep#N spans are not in step order")
    comm = _union_by_step(starts, gpu_comm if gpu_comm else host_comm)
    out = {}
    for j, n in enumerate(order):
        dur_s = steps[n][1] * 1e-6  # Chrome traces count microseconds
        out[n] = (dur_s, min(comm[j] * 1e-6, dur_s))
    info = data.get("distributedInfo")
    rank = None
    if isinstance(info, dict) and isinstance(info.get("rank"), int) and not isinstance(info.get("rank"), bool):
        rank = int(info["rank"])
    return out, rank


def _files(path):
    if isinstance(path, (list, tuple)):
        files = [Path(p) for p in path]
        if not files:
            raise ValueError("trace must name at least one profiler file, got an empty list")
        for f in files:
            if not f.exists():
                raise FileNotFoundError(f"{f}: no such file")
        return files
    folder = Path(path)
    if folder.is_file():
        return [folder]
    from .detect import detect  # the folder's profiler traces by content, whatever their names

    return detect(folder, format="torch-profiler").paths


def read_profiler_traces(path):
    """Read PyTorch profiler traces (one per rank) into a :class:`RankTrace`.

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        A folder of ``rank-*`` traces (or of ``*.json[.gz]`` traces), one trace
        file, or a list of files.

    Returns
    -------
    RankTrace
        ``format="torch-profiler"``; ``compute`` = step - communication,
        ``comm`` = the step's transfer (the smallest communication time over
        the ranks), ``wait`` = the rest of the communication time,
        ``recorded`` = the slowest rank's ``ProfilerStep`` duration.

    Examples
    --------
    Two ranks; rank 1 computes 2 s, rank 0 computes 1 s and then waits in the all-reduce:

    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for rank, (compute, comm) in enumerate([(1.0, 1.1), (2.0, 0.1)]):
    ...     events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 3.1e6},
    ...               {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "ts": compute * 1e6,
    ...                "dur": comm * 1e6}]
    ...     data = {"traceEvents": events, "distributedInfo": {"rank": rank}}
    ...     _ = (folder / f"rank-{rank}.json").write_text(json.dumps(data))
    >>> t = read_profiler_traces(folder)
    >>> t.compute.round(3).tolist(), t.comm.round(3).tolist(), t.wait.round(3).tolist()
    ([[2.0, 3.0]], [[0.1, 0.1]], [[1.0, 0.0]])
    """
    files = _files(path)
    per_rank = {}
    where = {}
    for pos, f in enumerate(files):
        times, rank = profiler_step_times(f)
        if rank is None:
            m = _RANK.search(f.name)
            rank = int(m.group(1)) if m else pos
        if rank in per_rank:
            raise column_error(display_path(f), "distributedInfo.rank", problem=f"rank {rank} is also the rank of "
                               f"{display_path(where[rank])} (one trace per rank)")
        per_rank[rank] = times
        where[rank] = f
    ranks = sorted(per_rank)
    common = set.intersection(*(set(per_rank[r]) for r in ranks))
    every = set.union(*(set(per_rank[r]) for r in ranks))
    if not common:
        raise column_error(display_path(where[ranks[0]]), "name", problem="the ranks share no ProfilerStep#N "
                           "(each rank must profile the same steps)")
    if common != every:
        dropped = sorted(every - common)
        warnings.warn(
            f"{len(dropped)} step(s) not profiled on every rank are left out: ProfilerStep#"
            + ", #".join(map(str, dropped[:8]))
            + (" ..." if len(dropped) > 8 else ""),
            stacklevel=2,
        )
    steps = sorted(common)
    dur = np.array([[per_rank[r][n][0] for r in ranks] for n in steps])
    comm_raw = np.array([[per_rank[r][n][1] for r in ranks] for n in steps])
    transfer = comm_raw.min(axis=1, keepdims=True)
    compute = dur - comm_raw
    wait = comm_raw - transfer
    comm = np.broadcast_to(transfer, comm_raw.shape).copy()
    source = os.fspath(path) if not isinstance(path, (list, tuple)) else ", ".join(map(os.fspath, path))
    return RankTrace(
        format="torch-profiler",
        source=source,
        steps=np.array(steps, dtype=np.int64),
        ranks=np.array(ranks, dtype=np.int64),
        compute=compute,
        wait=wait,
        comm=comm,
        recorded=dur.max(axis=1),
    )
