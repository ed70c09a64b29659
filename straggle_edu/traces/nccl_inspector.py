"""NCCL Inspector logs: each collective's execution time on each rank.

The NCCL Inspector profiler plugin (NVIDIA/nccl ``plugins/profiler/inspector``;
``NCCL_PROFILER_PLUGIN=.../libnccl-profiler-inspector.so``,
``NCCL_INSPECTOR_ENABLE=1``) writes one JSON object per collective per
communicator, per process, into ``NCCL_INSPECTOR_DUMP_DIR``
(``<host>-pid<pid>.log``)::

    {"header": {"id": "0x7f8c496ae9f661", "rank": 2, "n_ranks": 8, "nnodes": 1},
     "metadata": {"hostname": "...", "pid": 1639453, ...},
     "coll_perf": {"coll": "AllReduce", "coll_sn": 1407, "coll_msg_size_bytes": 17179869184,
                   "coll_exec_time_us": 61974, ...}}

A collective's execution time on a rank includes the time that rank waited
for the last one to arrive, so the rank that arrives last has the shortest
time, and ``t_r - min(t)`` is rank r's wait. Per collective instance
(communicator ``id`` and ``coll_sn``, seen on two or more ranks) the last
arriver *causes* the others' waits. A rank is a suspect when it causes at
least :data:`SUSPECT_SHARE` of all the waiting and there is waiting worth
naming: at least :data:`WAIT_SHARE` of all the execution time. The rank ids
are the ranks in the communicator: plain ints when the log has one
communicator, ``"<id>:<rank>"`` otherwise.

With ``NCCL_INSPECTOR_PROM_DUMP=1`` the plugin writes Prometheus text files
instead, aggregated per GPU; :func:`read_nccl_inspector` reads those with
:mod:`~straggle_edu.traces.nccl_prometheus`.
"""

from __future__ import annotations

import json

from ..i18n import N_
from ._safe import MAX_DEPTH, json_depth, read_bytes
from ._table import column_error, display_path
from .detect import detect
from .result import Note
from .suspects import SUSPECT_SHARE, WAIT_SHARE, suspect_analysis

__all__ = ["read_nccl_inspector", "SUSPECT_SHARE", "WAIT_SHARE"]

_WHAT = "NCCL Inspector JSON lines ({'header': ..., 'coll_perf': ...} per collective)"


def _objects(path):
    shown = display_path(path)
    data = read_bytes(path)
    if b"\x00" in data[: 1 << 20]:
        raise column_error(shown, problem=f"a binary file, not JSON lines (expected {_WHAT})")
    depth = json_depth(data)
    if depth > MAX_DEPTH:
        raise column_error(shown, problem=f"JSON nested {depth} levels deep, more than the {MAX_DEPTH} a reader "
                           f"accepts (expected {_WHAT})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise column_error(shown, problem=f"not UTF-8 text (byte {exc.start}; expected {_WHAT})") from None
    decoder, pos, n, row = json.JSONDecoder(), 0, len(text), 0
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            return
        row += 1
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise column_error(shown, row=row, problem=f"not valid JSON ({exc.msg} at line {exc.lineno}, "
                               f"column {exc.colno}; expected {_WHAT})") from None
        yield row, obj


def _record(shown, row, obj):
    """(comm id, rank, n_ranks, coll_sn, coll, exec seconds) of one coll_perf record, or None."""
    if not isinstance(obj, dict) or not isinstance(obj.get("coll_perf"), dict):
        return None  # p2p_perf and other records hold no collective
    header, perf = obj.get("header"), obj["coll_perf"]
    if not isinstance(header, dict):
        raise column_error(shown, "header", row, "a JSON object with id, rank, n_ranks", header)
    for key, where in (("rank", header), ("n_ranks", header), ("coll_sn", perf)):
        v = where.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise column_error(shown, key, row, "a whole number >= 0", v)
    t = perf.get("coll_exec_time_us")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not t >= 0 or t == float("inf"):
        raise column_error(shown, "coll_exec_time_us", row, "a time in microseconds >= 0", t)
    return str(header.get("id", "")), header["rank"], header["n_ranks"], perf["coll_sn"], str(perf.get("coll", "")), t * 1e-6


def _collect(files):
    groups = {}  # (comm, sn) -> {rank: seconds}
    for f in files:
        shown = display_path(f)
        for row, obj in _objects(f):
            rec = _record(shown, row, obj)
            if rec is None:
                continue
            comm, rank, n_ranks, sn, coll, t = rec
            if rank >= n_ranks:
                raise column_error(shown, "rank", row, f"a rank below n_ranks = {n_ranks}", rank)
            groups.setdefault((comm, sn), {})[rank] = t
    return groups


def read_nccl_inspector(path, *, files=None):
    """Who the others wait for, from NCCL Inspector logs (a file, a folder or a list of them).

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        JSON-lines logs (``<host>-pid<pid>.log``) or Prometheus files
        (``nccl_inspector_metrics_<uuid>.prom``), not both.
    files : list of paths, optional
        The logs to read, when the caller has detected them; by default the
        files of ``path`` that :func:`~straggle_edu.traces.detect.detect`
        finds to be Inspector output.

    Returns
    -------
    SuspectAnalysis
        ``format="nccl-inspector"``. ``evidence``: ``collectives`` (instances
        seen on 2+ ranks), ``exec_s`` (all execution time, seconds),
        ``wait_s`` (all waiting), ``caused_wait_s`` and ``last_share`` per rank
        (the waiting it caused; the share of collectives it arrived last in).

    Examples
    --------
    Rank 1 arrives 3 ms late at every all-reduce; rank 0 waits:

    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "host-pid1.log"
    >>> lines = [json.dumps({"header": {"id": "0xa", "rank": r, "n_ranks": 2, "nnodes": 1},
    ...                      "coll_perf": {"coll": "AllReduce", "coll_sn": sn, "coll_exec_time_us": t}})
    ...          for sn in range(3) for r, t in ((0, 4000), (1, 1000))]
    >>> _ = p.write_text("\\n".join(lines))
    >>> a = read_nccl_inspector(p)
    >>> a.suspects, a.evidence["caused_wait_s"]
    ((1,), {'1': 0.009})
    """
    if files is None:
        files = detect(path, format="nccl-inspector").paths
    prom = [f for f in files if _is_prometheus(f)]
    if prom and len(prom) < len(files):
        raise column_error(display_path(prom[0]), problem=f"Prometheus files ({len(prom)}) and JSON-lines logs "
                           f"({len(files) - len(prom)}) of NCCL Inspector mixed; pass one kind")
    if prom:
        from .nccl_prometheus import read_nccl_prometheus

        return read_nccl_prometheus(path, prom)
    source = ", ".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)
    shown = display_path(source) if not isinstance(path, (list, tuple)) else source
    groups = _collect(files)
    comms = {c for c, _ in groups}
    caused, last, total, waited, count = {}, {}, 0.0, 0.0, 0
    for (comm, sn), times in groups.items():
        if len(times) < 2:
            continue
        count += 1
        late = min(times, key=lambda r: (times[r], r))
        key = late if len(comms) == 1 else f"{comm}:{late}"
        wait = sum(t - times[late] for t in times.values())
        caused[key] = caused.get(key, 0.0) + wait
        last[key] = last.get(key, 0) + 1
        total += sum(times.values())
        waited += wait
    records = sum(len(t) for t in groups.values())
    if records == 0:
        raise column_error(shown, "coll_perf", problem=f"no collective records (expected {_WHAT})")
    worth = count > 0 and waited >= WAIT_SHARE * total
    suspects = sorted((k for k in caused if worth and caused[k] >= SUSPECT_SHARE * waited),
                      key=lambda k: (-caused[k], str(k)))
    evidence = {
        "output": "json", "collectives": count, "exec_s": round(total, 9), "wait_s": round(waited, 9),
        "caused_wait_s": {str(k): round(v, 9) for k, v in sorted(caused.items(), key=lambda kv: -kv[1])},
        "last_share": {str(k): last[k] / count for k in sorted(last, key=str)}, "records": records,
        "suspect_share": SUSPECT_SHARE, "wait_share": WAIT_SHARE,
    }
    notes = [Note(N_("NCCL Inspector times collectives only: it shows who the others wait for, not each rank's "
                     "compute, so it gives no slowdown"))]
    if count == 0:
        notes.append(Note(N_("no collective was seen on two or more ranks ({records} record(s)); pass the logs of "
                             "every rank of a communicator to compare them"), records=records))
    return suspect_analysis("nccl-inspector", source, suspects=suspects, evidence=evidence, notes=notes)


def _is_prometheus(path):
    """Whether an Inspector file is Prometheus text (its first non-blank, non-comment line is no JSON)."""
    from .detect import sniff

    return sniff(path).variant == "prometheus"
