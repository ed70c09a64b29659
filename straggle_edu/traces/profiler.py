"""PyTorch profiler (Kineto) traces: each rank's collectives, its arrivals at them and its steps.

``torch.profiler`` writes one Chrome trace per rank and profiling cycle
(``export_chrome_trace``, ``tensorboard_trace_handler``), optionally
gzipped. Each file is read as a stream (:class:`~straggle_edu.traces._stream.ChromeStream`):
only what the what-if needs is kept, in compact arrays, so a 500 MB trace
costs tens of MB. From each file this module keeps:

``ProfilerStep#N`` spans (host)
    the steps (``prof.step()`` marks them).
collectives (the synchronisation points)
    on a GPU trace, the communication kernels: a kernel whose name matches
    one of :data:`COMM_PATTERNS` (NCCL and RCCL, DeepEP's dispatch and
    combine, custom all-reduce kernels, ...; ``comm_patterns`` adds more).
    Its kind and process group come from its args (``Collective name``,
    ``Process Group Name``, ``Group size``, ``Seq``) or, in older traces,
    from its name. On a host-only trace (gloo), the ``c10d::`` op on the
    issuing thread and the ``gloo:`` span that runs it on a
    ``pt_gloo_runloop`` thread, matched by kind and order.
arrivals
    when the rank was ready for each collective. On the host: the issue time
    of its ``c10d::`` op. On the GPU: the later of the kernel's launch (its
    ``correlation`` to the host's launch call) and the end of the compute
    kernels launched before it, so that a GPU running a step behind its host
    is read by launch, not by overlap. The gaps between are included: a
    sleep or a data-loading stall leaves no event, yet it is lateness.
the rank's own timeline
    when its compute kernels (GPU), or its issuing thread's ops (host), ran:
    a pause that ends when a collective ends was a wait for it.

:func:`read_profiler_traces` combines the files of a job: several files of
one rank (``schedule(repeat=k)``) are joined, a rank is taken from
``distributedInfo.rank`` (a file name that says another rank is warned
about), and files of different jobs are refused with the reason. The
result, a :class:`ProfilerTrace`, is what
:func:`~straggle_edu.traces.syncpoints.analyze_profiler` replays.

Files are parsed, never evaluated, and never modified.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import warnings
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_memory
from ..i18n import N_
from ._stream import ChromeStream, Unsure, fast_decoding
from ._table import column_error, display_path, show_value
from .result import Note

__all__ = ["COMM_PATTERNS", "RankEvents", "ProfilerTrace", "read_profiler_rank", "read_profiler_traces",
           "profiler_files", "comm_regex", "DDP_GLOO_LATE", "measured_run"]

#: Communication kernels, by name (case-insensitive regular expressions): what ``--comm-kernel`` adds to.
COMM_PATTERNS = (
    r"nccl",  # NCCL and RCCL: ncclKernel_*, ncclDevKernel_*
    # DeepEP (expert parallel): deep_ep::intranode::dispatch, deep_ep::internode_ll::combine, and the names of
    # deepseek-ai/profile-data's trace, dpsk::ep::internode::notify_dispatch (not dpsk::ep::cuda::get_dispatch_layout)
    r"(deep_?ep|dpsk::ep)::(intra|inter)node\w*::(notify_)?(dispatch|combine)",
    r"\b(moe_)?(dispatch|combine)_?kernel",  # other MoE dispatch / combine kernels
    r"all_?to_?all",
    r"all_?reduce",  # custom all-reduce: vLLM's cross_device_reduce, symm_mem's multimem_all_reduce
    r"cross_device_reduce",
    r"all_?gather",
    r"reduce_?scatter",
    r"gloo",
    r"c10d",
)
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_HOST_COMM = ("c10d::", "_c10d_functional::", "c10d_functional::", "gloo:")
_KERNEL_CATS = frozenset(("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"))
_RUNTIME_CATS = frozenset(("cuda_runtime", "cuda_driver", "runtime", "hip_runtime", "hip_driver"))
_BUSY_CATS = frozenset(("cpu_op", "operator", "python_function"))  # record_function ranges may hold waits
_KERNEL, _RUNTIME, _OTHER, _HOST, _BUSY = 0, 1, 2, 3, 4
_COMM_ARGS = ("Collective name", "Process Group Name", "Process Group Description", "Process Group Ranks",
              "Group size", "Seq")
_NCCL_NAME = re.compile(r"(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)", re.IGNORECASE)
#: Bytes of memory per event a reader keeps (its arrays), for the memory budget.
BYTES_PER_KEPT = 48


def comm_regex(extra=()):
    """One compiled pattern for :data:`COMM_PATTERNS` and the ``extra`` patterns (``--comm-kernel``).

    Examples
    --------
    >>> rx = comm_regex([r"my_a2a"])
    >>> [bool(rx.search(n)) for n in ("ncclDevKernel_AllReduce_Sum_f32", "my_a2a_kernel", "sm90_gemm")]
    [True, True, False]
    >>> [bool(rx.search(n)) for n in ("void dpsk::ep::internode::combine<false, 8>", "void deep_ep::intranode::dispatch<8>",
    ...                               "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>")]   # DeepEP's
    [True, True, False]
    """
    pats = list(COMM_PATTERNS)
    for p in extra or ():
        try:
            re.compile(p)
        except re.error as exc:
            raise ValueError(f"comm_kernel must be a regular expression, got {p!r} ({exc})") from None
        pats.append(p)
    return re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE)


def kind_of(name):
    """The kind of a collective from an op or kernel name: ``allreduce``, ``alltoall``, ``broadcast``, ...

    Examples
    --------
    >>> [kind_of(n) for n in ("c10d::allreduce_", "gloo:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float",
    ...                       "c10d::alltoall_base_", "nccl:all_to_all", "ncclDevKernel_SendRecv")]
    ['allreduce', 'allreduce', 'allreduce', 'alltoall', 'alltoall', 'sendrecv']
    >>> kind_of("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16>(int4*, float*)")
    'combine'
    """
    m = _NCCL_NAME.search(name)
    base = re.split(r"[<(]", name.removeprefix("void ").strip(), maxsplit=1)[0]  # a kernel's templates, arguments
    text = m.group(1) if m else base.split("::")[-1].split(":")[-1]
    text = re.sub(r"[^a-z]", "", text.lower())
    for base in ("base", "coalesced", "intotensor", "tensor"):
        text = text.replace(base, "")
    return {"allgather": "allgather", "reducescatter": "reducescatter"}.get(text, text) or "collective"


@dataclass(frozen=True, eq=False)
class RankEvents:
    """What the what-if needs from one rank's profiler trace(s): steps, collectives, arrivals (microseconds).

    Attributes
    ----------
    source : str
        The file (or files, joined by ``", "``).
    rank : int or None
        ``distributedInfo.rank``, else the rank the file name gives.
    world_size : int or None
        ``distributedInfo.world_size`` (None: not recorded).
    pg_config : tuple
        ``((pg_name, pg_desc, ranks, pg_size), ...)`` from ``distributedInfo.pg_config``.
    host : str or None
        ``host_name``: ranks of one host share a clock.
    recorded_at : float or None
        When the first step began, in seconds since 1970.
    timeline : {"gpu", "host", "none"}
        Where the collectives and the compute were read: GPU kernels, the
        host's ``c10d::`` ops and ``gloo:`` spans, or no collective at all.
    steps, step_start, step_end : numpy.ndarray
        ``ProfilerStep#N``: N, and its span on the host clock.
    coll_step, coll_seq : numpy.ndarray
        Per collective: the step it was issued (launched) in, and its ``Seq`` (-1: none).
    coll_kind, coll_group : tuple of str
        Per collective: ``allreduce``, ``alltoall``, ...; its process group name ("" when not recorded).
    arrival, start, end : numpy.ndarray
        Per collective: when the rank was ready for it, and when its transfer
        began and ended on this rank.
    busy_start, busy_end : numpy.ndarray
        The rank's own timeline (its compute kernels, or its issuing
        thread's ops), merged into intervals: the gaps between them are
        where it waited or stalled.
    groups : dict
        ``{pg_name: (description, size, ranks or None)}`` from the collectives' args.
    notes : tuple of str

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace
    >>> r = _demo_trace([[1.0, 2.0]] * 3).ranks[1]   # rank 1 computes 2 s a step, then an all-reduce
    >>> r.rank, r.timeline, r.steps.tolist(), r.coll_kind, (r.arrival / 1e6).tolist()   # seconds from the start
    (1, 'host', [0, 1, 2], ('allreduce', 'allreduce', 'allreduce'), [2.0, 4.1, 6.2])
    """

    source: str
    rank: int | None
    name_rank: int | None
    world_size: int | None
    backend: str | None
    pg_config: tuple
    host: str | None
    recorded_at: float | None
    timeline: str
    steps: np.ndarray
    step_start: np.ndarray
    step_end: np.ndarray
    coll_step: np.ndarray
    coll_kind: tuple
    coll_group: tuple
    coll_seq: np.ndarray
    arrival: np.ndarray
    start: np.ndarray
    end: np.ndarray
    busy_start: np.ndarray
    busy_end: np.ndarray
    groups: dict = field(default_factory=dict)
    notes: tuple = ()

    @property
    def n_collectives(self):
        return len(self.arrival)

    def __repr__(self):
        return (f"RankEvents(rank={self.rank}, steps={len(self.steps)}, collectives={self.n_collectives}, "
                f"timeline={self.timeline!r}, source={self.source!r})")


class _Scan:
    """What one pass over the events keeps: the few kinds the what-if needs, in compact arrays."""

    def __init__(self):
        self.steps, self.host_comm, self.step_tid = [], [], None
        self.k_corr, self.k_ts, self.k_dur, self.k_idx = array("q"), array("d"), array("d"), array("q")
        self.k_comm = bytearray()
        self.k_info = {}  # kernel index -> args of a communication kernel
        self.r_corr, self.r_ts = array("q"), array("d")
        self.h_tid, self.h_ts, self.h_dur, self.h_idx = array("q"), array("d"), array("d"), array("q")
        self.tids = {}  # thread id as written -> its number in h_tid

    def kept(self):
        return len(self.k_ts) + len(self.r_ts) + len(self.h_ts)


def _cat_code(cat):
    c = str(cat).lower()
    if c in _KERNEL_CATS:
        return _KERNEL
    if c in _RUNTIME_CATS:
        return _RUNTIME
    if c == "trace" or c.startswith("gpu_") or c in ("ac2g", "flow"):
        return _OTHER
    return _BUSY if c in _BUSY_CATS else _HOST


def _host_name_kind(name):
    """0: an op like any other; 1: a ``ProfilerStep#N``; 2: a collective's host op."""
    if name.startswith("ProfilerStep#"):
        return 1 if _STEP.match(name) else 0
    return 2 if name.startswith(_HOST_COMM) or name == "record_param_comms" else 0


def _scan(path, comm, on_bytes=None):
    """Stream one file's events into a :class:`_Scan`: by the fast reader, else by the exact one.

    The fast reader (msgspec, :meth:`ChromeStream.batches`) builds only the
    fields read here; where it is unsure of a file, or the file has an event
    it cannot take, the exact reader (ijson, :func:`_scan_exact`) reads the
    file again and gives the answer or the error that names the event.
    """
    event = _fast_event()
    if event is not None:
        try:
            return _scan_fast(path, comm, on_bytes, event)
        except NOT_FAST:
            pass
    return _scan_exact(path, comm, on_bytes)


#: What makes the fast scan leave a file to the exact one: doubt, an event it cannot take, a refusal of the stream.
NOT_FAST = (Unsure, TypeError, KeyError, AttributeError, OverflowError, ValueError)


def _fast_event(cache=[]):  # noqa: B006 - the Struct types, made once
    """The msgspec Struct of an event: the fields the scan reads (the others are skipped); None without msgspec."""
    if not cache:
        ms = fast_decoding()
        cache.append(None if ms is None else _event_struct(ms))
    return cache[0]


def _event_struct(ms):
    from typing import Any, Optional

    unset = ms.UNSET
    args = ms.defstruct("Args", [("correlation", Any, unset)] +
                        [(f"a{n}", Any, ms.field(default=unset, name=k)) for n, k in enumerate(_COMM_ARGS)], gc=False)
    return ms.defstruct("Event", [("ph", Any, None), ("cat", Any, None), ("name", Any, unset), ("tid", Any, None),
                                  ("ts", Any, unset), ("dur", Any, unset), ("args", Optional[args], None)], gc=False)


def _comm_args_of(args):
    """The collective's args of a fast-read event (as ``{k: args[k] for k in _COMM_ARGS if k in args}``)."""
    if args is None:
        return {}
    unset = fast_decoding().UNSET
    return {k: v for n, k in enumerate(_COMM_ARGS) if (v := getattr(args, f"a{n}")) is not unset}


def _as_dict(ev):
    """A fast-read event as the dict :func:`_host_special` takes."""
    return {"name": ev.name, "ts": ev.ts, "dur": ev.dur, "tid": ev.tid, "args": _comm_args_of(ev.args)}


def _scan_fast(path, comm, on_bytes, event):
    """:func:`_scan_exact`'s loop over msgspec's events; any doubt or any bad event raises (the exact reader then
    reads the file and names the error)."""
    stream, sc = ChromeStream(path, on_bytes), _Scan()
    codes, kernels, hosts, tids, unset = {}, {}, {}, sc.tids, fast_decoding().UNSET
    k_ts, k_dur, k_corr, k_idx, k_comm = sc.k_ts.append, sc.k_dur.append, sc.k_corr.append, sc.k_idx.append, \
        sc.k_comm.append
    r_ts, r_corr, h_tid, h_ts, h_dur, h_idx = sc.r_ts.append, sc.r_corr.append, sc.h_tid.append, sc.h_ts.append, \
        sc.h_dur.append, sc.h_idx.append
    i = 0
    for batch in stream.batches(event):
        for i, ev in enumerate(batch, i + 1):
            if ev.ph != "X":
                continue
            cat = ev.cat
            code = codes.get(cat)
            if code is None:
                code = codes[cat] = _cat_code(cat)
            if code >= _HOST:
                tid = ev.tid
                t = tids.get(tid)
                if t is None:
                    t = tids[tid] = len(tids)
                name = ev.name
                kind = hosts.get(name)
                if kind is None:
                    kind = hosts[name] = _host_name_kind(name)
                if kind:
                    _host_special(sc, _as_dict(ev), kind, i)
                if code == _BUSY:
                    h_ts(ev.ts)
                    h_dur(ev.dur)
                    h_tid(t)
                    h_idx(i)
            elif code == _KERNEL:
                name = ev.name
                if name is unset:
                    raise Unsure("a kernel without a name")
                is_comm = kernels.get(name)
                if is_comm is None:
                    is_comm = kernels[name] = bool(comm.search(str(name)))
                args = ev.args
                k_ts(ev.ts)
                k_dur(ev.dur)
                k_corr(-1 if args is None or args.correlation is unset else args.correlation)
                k_idx(i)
                k_comm(is_comm)
                if is_comm:
                    sc.k_info[len(sc.k_ts) - 1] = {"name": str(name), **_comm_args_of(args)}
            elif code == _RUNTIME:
                corr = None if ev.args is None else ev.args.correlation
                if corr is not None and corr is not unset:
                    r_corr(corr)
                    r_ts(ev.ts)
            if not i & 0xFFFFF:
                check_memory(sc.kept() * BYTES_PER_KEPT, f"{display_path(path)}: the {sc.kept():,} events kept so far")
    _within_64_bits(sc, codes, kernels)
    if not stream.meta.get("traceEvents"):
        raise Unsure("no traceEvents")
    return sc, stream.meta


def _within_64_bits(sc, codes, kernels):
    """Refuse (:class:`Unsure`) an integer beyond 64 bits among the values kept, as ijson refuses the file."""
    def big(v):
        return type(v) is int and not -(1 << 63) <= v < (1 << 63)  # noqa: E721

    floats = (np.frombuffer(a) for a in (sc.k_ts, sc.k_dur, sc.r_ts, sc.h_ts, sc.h_dur) if len(a))
    if any(bool((np.abs(f) >= 2.0 ** 63).any()) for f in floats):  # an integer of 2**63 or more, as a float
        raise Unsure("a time beyond 64 bits")
    kept = [*codes, *kernels, *sc.tids, *(v for s in sc.steps for v in s[1:3]),
            *(v for o in sc.host_comm for v in (o[2], o[3], *o[5].values())),
            *(v for info in sc.k_info.values() for v in info.values())]
    while kept:
        v = kept.pop()
        if big(v):
            raise Unsure(f"the integer {v} is beyond 64 bits")
        kept += v.values() if type(v) is dict else v if type(v) is list else ()  # noqa: E721


def _scan_exact(path, comm, on_bytes=None):
    """Stream one file's events into a :class:`_Scan` by ijson (the reference; any bad event is named)."""
    shown = display_path(path)
    stream, sc = ChromeStream(path, on_bytes), _Scan()
    codes, kernels, hosts, tids = {}, {}, {}, sc.tids
    k_ts, k_dur, k_corr, k_idx, k_comm = sc.k_ts.append, sc.k_dur.append, sc.k_corr.append, sc.k_idx.append, \
        sc.k_comm.append
    r_ts, r_corr, h_tid, h_ts, h_dur, h_idx = sc.r_ts.append, sc.r_corr.append, sc.h_tid.append, sc.h_ts.append, \
        sc.h_dur.append, sc.h_idx.append
    i, ev = 0, None
    try:
        with stream.open() as events:
            for i, ev in enumerate(events, 1):
                if ev.get("ph") != "X":
                    continue
                cat = ev.get("cat")
                code = codes.get(cat)
                if code is None:
                    code = codes[cat] = _cat_code(cat)
                if code >= _HOST:
                    tid = ev.get("tid")
                    t = tids.get(tid)
                    if t is None:
                        t = tids[tid] = len(tids)
                    name = ev["name"]
                    kind = hosts.get(name)
                    if kind is None:
                        kind = hosts[name] = _host_name_kind(name)
                    if kind:
                        _host_special(sc, ev, kind, i)
                    if code == _BUSY:
                        h_ts(ev["ts"])
                        h_dur(ev["dur"])
                        h_tid(t)
                        h_idx(i)
                elif code == _KERNEL:
                    name = ev["name"]
                    is_comm = kernels.get(name)
                    if is_comm is None:
                        is_comm = kernels[name] = bool(comm.search(str(name)))
                    args = ev.get("args") or {}
                    k_ts(ev["ts"])
                    k_dur(ev["dur"])
                    k_corr(args.get("correlation", -1))
                    k_idx(i)
                    k_comm(is_comm)
                    if is_comm:
                        sc.k_info[len(sc.k_ts) - 1] = {"name": str(name), **{k: args[k] for k in _COMM_ARGS if k in args}}
                elif code == _RUNTIME:
                    corr = (ev.get("args") or {}).get("correlation")
                    if corr is not None:
                        r_corr(corr)
                        r_ts(ev["ts"])
                if not i & 0xFFFFF:
                    check_memory(sc.kept() * BYTES_PER_KEPT, f"{shown}: the {sc.kept():,} events kept so far")
    except (TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise _bad_event(shown, i, ev, exc) from None
    if not stream.meta.get("traceEvents"):
        raise column_error(shown, "traceEvents", problem="is missing: expected a Chrome trace with a traceEvents list")
    return sc, stream.meta


def _host_special(sc, ev, kind, i):
    """Keep a ``ProfilerStep#N`` span, or a collective's host op with its args."""
    ts, dur = ev["ts"], ev["dur"]
    if type(ts) not in (int, float) or type(dur) not in (int, float):  # noqa: E721 - the scan names the key
        raise TypeError("a time that is not a number")
    if kind == 1:
        sc.steps.append((int(_STEP.match(ev["name"]).group(1)), ts, dur, i))
        sc.step_tid = sc.tids[ev.get("tid")]
        return
    args = ev.get("args") or {}
    sc.host_comm.append((ev["name"], sc.tids[ev.get("tid")], ts, dur, i, {k: args[k] for k in _COMM_ARGS if k in args}))


def _bad_event(shown, i, ev, exc):
    """The error for event ``i`` that the scan could not take: which key, what value."""
    if not isinstance(ev, dict):
        return column_error(shown, row=i, problem=f"event {i} is not a JSON object (got {show_value(ev)})")
    what = f"event {show_value(ev.get('name', '?'))}"
    if not isinstance(ev.get("name", ""), str):
        return column_error(shown, "name", i, f"a text ({what})", ev.get("name"))
    for key in ("ts", "dur"):
        v = ev.get(key)
        if type(v) not in (int, float):  # noqa: E721 - a bool is no time either
            return column_error(shown, key, i, f"a number ({what})", v)
    args = ev.get("args")
    if args is not None and not isinstance(args, dict):
        return column_error(shown, "args", i, f"a JSON object ({what})", args)
    for key in ("correlation",):
        v = args.get(key) if isinstance(args, dict) else None
        if v is not None and type(v) is not int:  # noqa: E721
            return column_error(shown, f"args.{key}", i, f"a whole number ({what})", v)
    return column_error(shown, row=i, problem=f"event {i} cannot be read ({type(exc).__name__}: {exc})")


def _finite(shown, values, rows, key, low=None):
    """Refuse a non-finite timestamp (or a duration below ``low``), naming the event (``rows``: event numbers)."""
    bad = ~np.isfinite(values) if low is None else ~(np.isfinite(values) & (values >= low))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise column_error(shown, key, int(rows[i]), "a finite number" if low is None else f"a duration >= {low:g}",
                           float(values[i]))


def _steps(sc, shown):
    """``ProfilerStep#N``: N, start and end (host clock, microseconds), in time order."""
    if not sc.steps:
        raise column_error(shown, "name", problem="no ProfilerStep#N events; profile with torch.profiler and call "
                           "prof.step() once per training step (docs/your-own-job.md)")
    n, ts, dur, rows = (np.array(c) for c in zip(*sorted(sc.steps, key=lambda s: s[1])))
    _finite(shown, ts, rows, "ts")
    _finite(shown, dur, rows, "dur", low=0.0)
    order = np.argsort(n, kind="stable")
    twice = np.flatnonzero(n[order][1:] == n[order][:-1])
    if twice.size:
        a, b = order[twice[0]], order[twice[0] + 1]
        raise column_error(shown, "name", int(rows[b]), problem=f"ProfilerStep#{n[a]} appears twice (events "
                           f"{rows[a]} and {rows[b]}); one file holds one profiling cycle of one rank")
    return n.astype(np.int64), ts.astype(float), (ts + dur).astype(float)


def _step_of(times, steps):
    """The step id each time (host clock) falls in, -1 outside every ``ProfilerStep``."""
    n, start, end = steps
    i = np.searchsorted(start, times, side="right") - 1
    ok = (i >= 0) & (times < end[np.maximum(i, 0)])
    return np.where(ok, n[np.maximum(i, 0)], -1)


#: Microseconds: pauses shorter than this between a rank's ops or kernels (a launch's latency) are no pause.
MIN_PAUSE = 10.0


def _merged(starts, ends, gap=MIN_PAUSE):
    """Intervals merged where they overlap or lie less than ``gap`` apart: sorted starts and their ends.

    Examples
    --------
    >>> [a.tolist() for a in _merged(np.array([0.0, 5.0, 40.0]), np.array([4.0, 20.0, 50.0]))]
    [[0.0, 40.0], [20.0, 50.0]]
    """
    if len(starts) == 0:
        return np.zeros(0), np.zeros(0)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1] + gap]
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first)


def _launches(sc):
    """Each kernel's launch on the host clock (the runtime call of the same ``correlation``); NaN when unknown."""
    k_corr = np.frombuffer(sc.k_corr, np.int64) if len(sc.k_corr) else np.zeros(0, np.int64)
    out = np.full(len(k_corr), np.nan)
    if len(sc.r_corr) and len(k_corr):
        r_corr, r_ts = np.frombuffer(sc.r_corr, np.int64), np.frombuffer(sc.r_ts)
        order = np.argsort(r_corr, kind="stable")
        rc = r_corr[order]
        pos = np.minimum(np.searchsorted(rc, k_corr), len(rc) - 1)
        hit = (rc[pos] == k_corr) & (k_corr >= 0)
        out[hit] = r_ts[order][pos[hit]]
    return out


def _group_ranks(text):
    """``Process Group Ranks`` ("[0, 1, 2]") as a tuple, or None when cut short or unreadable."""
    if not isinstance(text, str) or "..." in text:
        return None
    try:
        return tuple(int(x) for x in text.strip("[] ").split(",") if x.strip())
    except ValueError:
        return None


def _comm_identity(info):
    """(kind, group, seq) of a collective from its args (kernel or host op)."""
    name = info.get("Collective name")
    kind = kind_of(str(name)) if isinstance(name, str) and name else kind_of(info.get("name", ""))
    seq = info.get("Seq")
    return kind, str(info.get("Process Group Name", "")), seq if type(seq) is int else -1  # noqa: E721


def _groups_seen(infos):
    """``{pg_name: (description, size, ranks or None)}`` from collectives' args."""
    out = {}
    for info in infos:
        name = info.get("Process Group Name")
        if name is None or str(name) in out:
            continue
        size = info.get("Group size")
        out[str(name)] = (str(info.get("Process Group Description", "")), size if type(size) is int else None,  # noqa: E721
                          _group_ranks(info.get("Process Group Ranks")))
    return out


def _kernels(sc, shown):
    """Kernel arrays: start, end, launch (NaN: unknown), is-communication."""
    ts = np.frombuffer(sc.k_ts) if len(sc.k_ts) else np.zeros(0)
    dur = np.frombuffer(sc.k_dur) if len(sc.k_dur) else np.zeros(0)
    rows = np.frombuffer(sc.k_idx, np.int64) if len(sc.k_idx) else np.zeros(0, np.int64)
    _finite(shown, ts, rows, "ts")
    _finite(shown, dur, rows, "dur", low=0.0)
    return ts, ts + dur, _launches(sc), np.frombuffer(bytes(sc.k_comm), np.uint8).astype(bool)


def _gpu_collectives(sc, steps, shown):
    """The communication kernels as collectives: step (by launch), identity, arrival, start, end; the compute's busy
    intervals."""
    start, end, launch, comm = _kernels(sc, shown)
    ci = np.flatnonzero(comm)
    comp = np.flatnonzero(~comm)
    known = ~np.isnan(launch)
    at = np.where(known, launch, start)  # a kernel whose launch is unknown counts from its start
    order = comp[np.argsort(at[comp], kind="stable")]
    ready_end = np.maximum.accumulate(end[order]) if order.size else np.zeros(0)
    j = np.searchsorted(at[order], at[ci], side="left") - 1
    ready = np.where(j >= 0, ready_end[np.maximum(j, 0)] if order.size else 0.0, -np.inf)
    arrival = np.where(known[ci], np.maximum(at[ci], ready), start[ci])
    infos = [sc.k_info[int(i)] for i in ci]
    kind, group, seq = zip(*(_comm_identity(x) for x in infos)) if infos else ((), (), ())
    notes = []
    if ci.size and not known[ci].all():
        notes.append(Note(N_("{count} communication kernels have no launch record (correlation); their start is "
                             "taken as their arrival"), count=int((~known[ci]).sum())))
    return {"step": _step_of(at[ci], steps), "kind": kind, "group": group, "seq": np.array(seq, np.int64),
            "arrival": arrival, "start": start[ci], "end": end[ci], "busy": _merged(start[comp], end[comp]),
            "groups": _groups_seen(infos), "notes": notes}


def _outermost(ops):
    """Host collective ops that no other collective op of their thread encloses, in time order."""
    out, reach = [], {}
    for op in sorted(ops, key=lambda o: (o[2], -o[3])):
        tid = op[1]
        if op[2] < reach.get(tid, -math.inf):
            continue
        reach[tid] = op[2] + op[3]
        out.append(op)
    return out


def _host_collectives(sc, steps, shown):
    """The ``c10d::`` ops (issue) and the ``gloo:`` spans that ran them, matched by kind and order."""
    issued = _outermost([o for o in sc.host_comm if not o[0].startswith("gloo:") and o[0] != "record_param_comms"
                         and "wait" not in o[0].lower()])
    spans = sorted((o for o in sc.host_comm if o[0].startswith("gloo:")), key=lambda o: o[2])
    args = {}
    for o in sorted((o for o in sc.host_comm if o[0] == "record_param_comms" and o[5]), key=lambda o: o[2]):
        args.setdefault(o[1], ([], []))
        args[o[1]][0].append(o[2])
        args[o[1]][1].append(o[5])
    by_kind = {}
    for o in spans:
        by_kind.setdefault(kind_of(o[0]), []).append(o)
    rows, notes, unmatched = [], [], 0
    for kind in dict.fromkeys(kind_of(o[0]) for o in issued):
        mine = [o for o in issued if kind_of(o[0]) == kind]
        theirs = [o for o in by_kind.get(kind, []) if o[2] >= mine[0][2]]
        unmatched += abs(len(mine) - len(theirs))
        rows += [(a, b) for a, b in zip(mine, theirs)]
    if unmatched:
        notes.append(Note(N_("{count} host collectives and gloo spans could not be paired (cut off by the profiling "
                             "window) and are left out"), count=unmatched))
    rows.sort(key=lambda ab: ab[0][2])
    issue = np.array([a[2] for a, _ in rows], float)
    ident = [_comm_identity({"name": a[0], **_nested_args(args, a)}) for a, _ in rows]
    kind, group, seq = zip(*ident) if ident else ((), (), ())
    return {"step": _step_of(issue, steps), "kind": kind, "group": group, "seq": np.array(seq, np.int64),
            "arrival": issue, "start": np.array([b[2] for _, b in rows], float),
            "end": np.array([b[2] + b[3] for _, b in rows], float), "busy": _thread_busy(sc, {a[1] for a, _ in rows}, shown),
            "groups": _groups_seen(_nested_args(args, a) for a, _ in rows), "notes": notes}


def _thread_busy(sc, tids, shown):
    """The merged busy intervals of the threads that issue collectives, and of the thread of the steps."""
    t = np.frombuffer(sc.h_tid, np.int64) if len(sc.h_tid) else np.zeros(0, np.int64)
    keep = np.isin(t, sorted(set(tids) | {sc.step_tid} - {None}))
    ts, dur = (np.frombuffer(a)[keep] if len(a) else np.zeros(0) for a in (sc.h_ts, sc.h_dur))
    rows = np.frombuffer(sc.h_idx, np.int64)[keep] if len(sc.h_idx) else np.zeros(0, np.int64)
    _finite(shown, ts, rows, "ts")
    _finite(shown, dur, rows, "dur", low=0.0)
    return _merged(ts, ts + dur)


def _nested_args(args, op):
    """The args of the ``record_param_comms`` inside a host collective op (its group), when recorded."""
    times, infos = args.get(op[1], ((), ()))
    i = bisect.bisect_left(times, op[2])
    return infos[i] if i < len(times) and times[i] <= op[2] + op[3] else {}


def _dist_info(meta, shown):
    """(rank, world_size, backend, pg_config) from ``distributedInfo``; Nones when it is not recorded."""
    info = meta.get("distributedInfo")
    if not isinstance(info, dict):
        return None, None, None, ()

    def whole(v, low):
        return v if type(v) is int and v >= low else None  # noqa: E721

    groups = []
    for g in info.get("pg_config") or ():
        if isinstance(g, dict) and isinstance(g.get("ranks"), list):
            ranks = tuple(r for r in g["ranks"] if type(r) is int)  # noqa: E721
            groups.append((str(g.get("pg_name", "")), str(g.get("pg_desc", "")), ranks,
                           whole(g.get("pg_size"), 1) or len(ranks)))
    backend = info.get("backend")
    return whole(info.get("rank"), 0), whole(info.get("world_size"), 1), \
        backend if isinstance(backend, str) else None, tuple(groups)


def _recorded_at(meta, step_start):
    """When the first step began, in seconds since 1970 (``baseTimeNanoseconds`` + ``ts``), or None."""
    base = meta.get("baseTimeNanoseconds")
    t = (base / 1e9 if type(base) is int else 0.0) + float(step_start[0]) / 1e6  # noqa: E721
    return t if 946684800.0 <= t <= 4102444800.0 else None  # 2000 to 2100


def _name_rank(path):
    """The rank a file name gives (``rank3``, ``rank-3``, ``rank_3``), or None."""
    from .detect import name_rank

    return name_rank(path, "torch-profiler")


def read_profiler_rank(path, comm_patterns=(), on_bytes=None):
    """Read one rank's profiler trace into :class:`RankEvents`, as a stream.

    Parameters
    ----------
    path : str or os.PathLike
        A Chrome trace ``.json`` or ``.json.gz`` that ``torch.profiler`` wrote.
    comm_patterns : sequence of str
        Regular expressions of communication kernels beyond :data:`COMM_PATTERNS`.
    on_bytes : callable, optional
        Called with the bytes read so far (decompressed), every 16 MiB: progress within a large file.

    Examples
    --------
    Two steps on the GPU; each launches an all-reduce after a matmul:

    >>> import json, tempfile, pathlib
    >>> ev = []
    >>> for n, t in enumerate([0, 10_000]):
    ...     ev += [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": t, "dur": 10_000},
    ...            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 100, "dur": 5,
    ...             "args": {"correlation": 2 * n}},
    ...            {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "ts": t + 200, "dur": 4_000,
    ...             "args": {"correlation": 2 * n}},
    ...            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 300, "dur": 5,
    ...             "args": {"correlation": 2 * n + 1}},
    ...            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32", "ts": t + 4_300,
    ...             "dur": 500, "args": {"correlation": 2 * n + 1}}]
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rank3.json"
    >>> _ = p.write_text(json.dumps({"traceEvents": ev, "distributedInfo": {"rank": 3, "world_size": 4}}))
    >>> r = read_profiler_rank(p)
    >>> r.rank, r.timeline, r.coll_kind, r.arrival.tolist()   # ready when the matmul ended
    (3, 'gpu', ('allreduce', 'allreduce'), [4200.0, 14200.0])
    """
    path = Path(path)
    shown = display_path(path)
    sc, meta = _scan(path, comm_regex(comm_patterns), on_bytes)
    steps = _steps(sc, shown)
    rank, world, backend, pg = _dist_info(meta, shown)
    if any(sc.k_comm):
        coll, timeline = _gpu_collectives(sc, steps, shown), "gpu"
        if any(o[0].startswith("gloo:") for o in sc.host_comm):
            coll["notes"].append(Note(N_("host-side gloo collectives are left out: the GPU's collectives are the "
                                         "synchronisation points")))
    elif world != 1 and any(not o[0].startswith("gloo:") and o[0] != "record_param_comms" for o in sc.host_comm):
        _need_comm_kernels(sc, shown, comm_patterns)
        coll, timeline = _host_collectives(sc, steps, shown), "host"
    else:  # no collective (a job of one rank runs none)
        sc.host_comm = []
        coll, timeline = _host_collectives(sc, steps, shown), "none"
    host = meta.get("host_name")
    return RankEvents(
        source=str(path), rank=rank if rank is not None else _name_rank(path), name_rank=_name_rank(path),
        world_size=world, backend=backend, pg_config=pg, host=host if isinstance(host, str) else None,
        recorded_at=_recorded_at(meta, steps[1]), timeline=timeline, steps=steps[0], step_start=steps[1],
        step_end=steps[2], coll_step=coll["step"], coll_kind=tuple(coll["kind"]), coll_group=tuple(coll["group"]),
        coll_seq=coll["seq"], arrival=coll["arrival"], start=coll["start"], end=coll["end"],
        busy_start=coll["busy"][0], busy_end=coll["busy"][1], groups=coll["groups"], notes=tuple(coll["notes"]),
    )


def _need_comm_kernels(sc, shown, comm_patterns):
    """A GPU trace whose collectives ran no kernel the patterns know: say how to name them."""
    if len(sc.k_ts) and not any(o[0].startswith("gloo:") for o in sc.host_comm):
        raise column_error(shown, "name", problem=f"the trace issues collectives ({sc.host_comm[0][0]}, ...) and runs "
                           f"{len(sc.k_ts):,} GPU kernels, but no kernel's name matches the communication patterns "
                           f"({', '.join(COMM_PATTERNS + tuple(comm_patterns))}); name yours with --comm-kernel REGEX")


@dataclass(frozen=True, eq=False)
class ProfilerTrace:
    """The profiler traces of one job: one :class:`RankEvents` per rank, checked to be of one job.

    Attributes
    ----------
    source : str
        The folder, file or files read.
    ranks : tuple of RankEvents
        Sorted by rank; several files of one rank are joined into one.
    world_size : int or None
        What the traces record (None: not recorded).
    notes : tuple of str
        What reading found: files joined, ranks missing, names that disagree.

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace
    >>> t = _demo_trace([[1.0, 2.0]] * 3)   # 3 steps of 2 ranks, in memory
    >>> t, t.rank_ids, t.steps.tolist()
    (ProfilerTrace(ranks=2, world_size=2, steps=3, source='<memory>'), [0, 1], [0, 1, 2])
    """

    source: str
    ranks: tuple
    world_size: int | None
    notes: tuple = ()
    format: str = "torch-profiler"

    @property
    def rank_ids(self):
        """The ranks present, in order."""
        return [r.rank for r in self.ranks]

    @property
    def steps(self):
        """The ``ProfilerStep`` ids every rank recorded, in order."""
        common = set.intersection(*(set(r.steps.tolist()) for r in self.ranks)) if self.ranks else set()
        return np.array(sorted(common), dtype=np.int64)

    def __repr__(self):
        return (f"ProfilerTrace(ranks={len(self.ranks)}, world_size={self.world_size}, "
                f"steps={len(self.ranks[0].steps) if self.ranks else 0}, source={self.source!r})")


def profiler_files(path):
    """The profiler trace files of a folder (found by content, whatever their names), a file, or a list of files.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name, text in (("rank1.trace", '{"traceEvents": []}'), ("rank0.out", '{"traceEvents": []}'),
    ...                    ("notes.json", '{"lr": 0.1}'), ("README.md", "# notes")):
    ...     _ = (d / name).write_text(text)
    >>> [p.name for p in profiler_files(d)]   # told by what they hold
    ['rank0.out', 'rank1.trace']
    """
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


def _join(parts):
    """Several files of one rank (``schedule(repeat=k)``) as one :class:`RankEvents`, in time order."""
    if len(parts) == 1:
        return parts[0]
    parts = sorted(parts, key=lambda r: float(r.step_start[0]))
    seen = {}
    for r in parts:
        for n in r.steps.tolist():
            if n in seen:
                raise column_error(display_path(r.source), "name", problem=f"ProfilerStep#{n} is also in "
                                   f"{display_path(seen[n])}; the files of one rank must hold different steps")
            seen[n] = r.source
    cat = lambda name: np.concatenate([getattr(r, name) for r in parts])  # noqa: E731
    joined = {k: cat(k) for k in ("steps", "step_start", "step_end", "coll_step", "coll_seq", "arrival", "start",
                                  "end", "busy_start", "busy_end")}
    first = parts[0]
    return RankEvents(
        source=", ".join(r.source for r in parts), rank=first.rank, name_rank=first.name_rank,
        world_size=first.world_size, backend=first.backend, pg_config=first.pg_config, host=first.host,
        recorded_at=first.recorded_at, timeline=_timeline(parts), coll_kind=sum((r.coll_kind for r in parts), ()),
        coll_group=sum((r.coll_group for r in parts), ()), groups={k: v for r in parts for k, v in r.groups.items()},
        notes=tuple(dict.fromkeys(n for r in parts for n in r.notes)), **joined)


def _timeline(parts):
    kinds = {r.timeline for r in parts} - {"none"}
    return kinds.pop() if len(kinds) == 1 else "none" if not kinds else "mixed"


def _by_rank(per_file):
    """``{rank: [RankEvents, ...]}``: the recorded rank, else the file name's, else the next free number."""
    out, free = {}, []
    for r in per_file:
        if r.rank is None:
            free.append(r)
        else:
            if r.name_rank is not None and r.name_rank != r.rank:
                from .detect import rank_mismatch

                warnings.warn(rank_mismatch(r.source, r.rank), stacklevel=3)
            out.setdefault(r.rank, []).append(r)
    n = 0
    for r in free:
        while n in out:
            n += 1
        out[n] = [RankEvents(**{**r.__dict__, "rank": n})]
    return out


def _when(t):
    import datetime

    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _same_job(ranks):
    """Refuse traces of different jobs: other world sizes, other process groups, recorded over an hour apart."""
    def shown(r):
        return display_path(r.source.split(", ")[0])

    def refuse(r, why):
        return column_error(shown(r), problem=f"trace must be the ranks of one job, got traces of different jobs: {why}")

    sizes = {}
    for r in ranks:
        sizes.setdefault(r.world_size, r)
    if len(sizes) > 1:
        told = "; ".join(f"{'not recorded' if w is None else w} in {shown(r)}" for w, r in sizes.items())
        raise refuse(ranks[0], f"their world sizes differ ({told})")
    groups = {}
    for r in ranks:
        for name, _desc, members, _size in r.pg_config:
            if name in groups and groups[name][0] != members:
                raise refuse(r, f"process group {name!r} has ranks {_few(groups[name][0])} in "
                                f"{shown(groups[name][1])} but {_few(members)} in {shown(r)}")
            groups.setdefault(name, (members, r))
    times = [(r.recorded_at, r) for r in ranks if r.recorded_at is not None]
    if len(times) > 1:
        (t0, a), (t1, b) = min(times, key=lambda x: x[0]), max(times, key=lambda x: x[0])
        if t1 - t0 > 3600:
            apart = f"{(t1 - t0) / 86400:.1f} days" if t1 - t0 >= 86400 else f"{(t1 - t0) / 3600:.1f} hours"
            raise refuse(b, f"recorded {apart} apart ({shown(a)} at {_when(t0)}, {shown(b)} at {_when(t1)}; one "
                            f"job's ranks are profiled within the same hour)")


def _few(ranks, most=8):
    ranks = list(ranks)
    return "[" + ", ".join(map(str, ranks[:most])) + (", ..." if len(ranks) > most else "") + "]"


def _present(ranks, world):
    """The notes on which ranks are here, against the world size; refuse a rank outside it."""
    ids = sorted(ranks)
    if world is None:
        return [Note(N_("world size not recorded (no distributedInfo); {n} rank(s) given: {ranks}"), n=len(ids),
                     ranks=_few(ids))]
    outside = [r for r in ids if r >= world]
    if outside:
        raise ValueError(f"rank must be in 0..{world - 1} (distributedInfo.world_size is {world}), got rank "
                         f"{outside[0]}")
    if len(ids) < world:
        return [Note(N_("{n} of {world} ranks: {ranks}"), n=len(ids), world=world, ranks=_few(ids))]
    return []


def read_profiler_traces(path, comm_patterns=(), progress=None, source=None, workers=None):
    """Read the PyTorch profiler traces of one job into a :class:`ProfilerTrace`.

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        A folder of traces (one or more files per rank, any names), one file,
        or a list of files.
    comm_patterns : sequence of str
        Regular expressions of communication kernels beyond :data:`COMM_PATTERNS`.
    progress : callable, optional
        Called with each file's path once it is read, and with ``(path, bytes read)`` every 16 MiB of a
        file read in this process.
    source : str or os.PathLike, optional
        What to call the job (the folder the files came from); by default ``path``.
    workers : int, optional
        Processes that read files side by side (default: one per core) when the files hold more than
        :data:`PARALLEL_BYTES`; 1 reads them one after another in this process.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for rank in (0, 1):
    ...     ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000}]
    ...     info = {"rank": rank, "world_size": 4}
    ...     _ = (folder / f"rank{rank}.json").write_text(json.dumps({"traceEvents": ev, "distributedInfo": info}))
    >>> t = read_profiler_traces(folder)
    >>> t, t.notes
    (ProfilerTrace(ranks=2, world_size=4, steps=1, source=...), ('2 of 4 ranks: [0, 1]',))
    """
    files = profiler_files(path)
    return profiler_trace_of(_read_files(files, comm_patterns, progress, workers),
                             path if source is None else source)


#: Files holding more JSON than this in all are read by several processes (each starts in about half a second).
PARALLEL_BYTES = 64 << 20


def _read_files(files, comm_patterns, progress, workers):
    """Each file's :class:`RankEvents`, in the order of ``files``: in parallel processes when they are large."""
    from .._validate import memory_budget

    n = min(len(files), os.cpu_count() or 1, workers or os.cpu_count() or 1)
    if n < 2 or sum(_json_bytes(f) for f in files) < PARALLEL_BYTES:
        out = []
        for f in files:
            within = None if progress is None else (lambda done, f=f: progress(f, done))
            out.append(read_profiler_rank(f, comm_patterns, within))
            if progress is not None:
                progress(f)
        return out
    import concurrent.futures as cf
    import multiprocessing
    import threading

    # fork where this process runs one thread (the command line: no import to redo, about 1 s of CPU a worker);
    # spawn where it runs several (a notebook's kernel), whose locks a fork would copy mid-flight
    single = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    with cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork" if single else "spawn")) as pool:
        futures = {pool.submit(_read_in_child, f, tuple(comm_patterns), memory_budget()): i
                   for i, f in enumerate(files)}
        out = [None] * len(files)
        for fut in cf.as_completed(futures):
            out[futures[fut]] = fut.result()
            if progress is not None:
                progress(files[futures[fut]])
    return out


def _json_bytes(path):
    """About how many bytes of JSON a file holds: its size, 8 times that when gzipped (a trace compresses 8 to 12x)."""
    with open(path, "rb") as f:
        return os.path.getsize(path) * (8 if f.read(2) == b"\x1f\x8b" else 1)


def _read_in_child(path, comm_patterns, budget):
    """:func:`read_profiler_rank` in a worker process, under the caller's memory budget (warnings come back too)."""
    from .. import _validate

    _validate.set_memory_budget(budget)
    return read_profiler_rank(path, comm_patterns)


def profiler_trace_of(per_file, path="<memory>"):
    """The :class:`ProfilerTrace` of files read apart (:func:`read_profiler_rank`, e.g. as parallel tasks).

    Examples
    --------
    >>> profiler_trace_of([])
    Traceback (most recent call last):
    ...
    ValueError: trace must hold at least one profiler file, got none
    """
    if not per_file:
        raise ValueError("trace must hold at least one profiler file, got none")
    ranks = [_join(parts) for _, parts in sorted(_by_rank(per_file).items())]
    _same_job(ranks)
    world = ranks[0].world_size
    notes = _present([r.rank for r in ranks], world)
    joined = [r for r in ranks if ", " in r.source]
    if joined:
        notes.append(Note(N_("{files} files of {ranks} rank(s) joined (several profiling cycles per rank)"),
                          files=sum(r.source.count(", ") + 1 for r in joined), ranks=len(joined)))
    source = os.fspath(path) if not isinstance(path, (list, tuple)) else ", ".join(map(os.fspath, path))
    return ProfilerTrace(source=source, ranks=tuple(ranks), world_size=world, notes=tuple(notes))


# ---------------------------------------------------------------------------
# the real job shipped with the package

#: A real PyTorch 2.13 DDP job on gloo (CPU, 2 ranks, 20 profiled steps) whose rank 1 sleeps 40 ms before each
#: forward pass: the traces PyTorch wrote (``rank<r>.pt.trace.json.gz``) and the generator's record of its
#: measured step times and of its evenly spread twin's (``runs.json``), from ``benchmarks/ddp_traces.py``
#: (``tests/data/ddp-gloo/2r-late``; MIT, see its README.md). Package data, so that an installed wheel has it too
#: (notebook 09).
DDP_GLOO_LATE = Path(__file__).parent / "data" / "ddp_gloo_late"


def measured_run(folder=DDP_GLOO_LATE):
    """What the generator measured of a generated job: its step time, its baseline's, their ratio, its slow rank.

    Reads the ``runs.json`` beside the traces (written by ``benchmarks/ddp_traces.py``). The measured step
    time of a run is the median of rank 0's ``prof.step()`` intervals; the baseline is the mean over the two
    runs of the same work spread evenly over the ranks, run just before and just after it. Their ratio is
    the what-if measured on real jobs: how much slower the job ran than with its slowness spread evenly.

    Returns
    -------
    dict
        ``step_s``, ``baseline_s`` (seconds), ``ratio``, ``slow_rank``, ``ranks``, ``variant``, ``steps``.

    Examples
    --------
    >>> run = measured_run()
    >>> run["variant"], run["slow_rank"], run["steps"], round(run["step_s"], 4), round(run["ratio"], 3)
    ('late', 1, 20, 0.0589, 1.686)
    """
    import json
    import statistics

    path = Path(folder) / "runs.json"
    runs = {r["job"]: r for r in json.loads(path.read_text(encoding="utf-8"))["runs"]}
    slowed = [r for r in runs.values() if r.get("baselines")]
    if len(slowed) != 1 or not all(b in runs for b in slowed[0]["baselines"]):
        raise column_error(display_path(path), problem=f"runs must hold one slowed run and its baselines, got "
                           f"{len(slowed)} slowed run(s) among {sorted(runs)}")
    run = slowed[0]
    step = statistics.median(run["step_times_s"])
    baseline = statistics.mean(statistics.median(runs[b]["step_times_s"]) for b in run["baselines"])
    return {"step_s": step, "baseline_s": baseline, "ratio": step / baseline, "slow_rank": run["slow_rank"],
            "ranks": run["ranks"], "variant": run["variant"], "steps": len(run["step_times_s"])}
