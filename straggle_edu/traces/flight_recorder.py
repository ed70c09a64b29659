"""PyTorch Flight Recorder dumps: which ranks the others are waiting for.

With ``TORCH_FR_BUFFER_SIZE`` set (``TORCH_NCCL_TRACE_BUFFER_SIZE`` before
PyTorch 2.8, still read as a fallback), every rank keeps a ring buffer of
its last collectives, for NCCL and gloo process groups alike, and writes it
out when the job hangs or times out (``TORCH_NCCL_DUMP_ON_TIMEOUT=1``; files
``<prefix><rank>``, the prefix ``TORCH_FR_DUMP_TEMP_FILE``, formerly
``TORCH_NCCL_DEBUG_INFO_TEMP_FILE``, by default ``/tmp/nccl_trace_rank_``).
A dump is a pickled dict (seen at versions "2.9" and "2.10"), or the same
dict as JSON (``_dump_fr_trace_json``)::

    {"version": "2.9", "pg_config": {name: {"desc", "ranks"}}, "pg_status": {...},
     "entries": [{"process_group": (name, desc), "collective_seq_id": 20536,
                  "is_p2p": False, "state": "scheduled" | "started" | "completed",
                  "profiling_name": "nccl:all_to_all", ...}, ...]}

The timestamps are often null, so the analysis uses sequence ids and states
only. For every process group, each rank's progress is the highest
``collective_seq_id`` among its entries there (point-to-point entries have a
sequence of their own and are left out). An entry is completed when its
``state`` is ``"completed"`` or it is ``retired`` (gloo entries stay
``"scheduled"`` and are retired when done). A group is stuck when some rank
enqueued the group's latest collective but has not completed it; the ranks
that never enqueued that collective are *missing*: the others wait on them.
The suspects are the missing ranks of all stuck groups, and the ranks of a
group that left no dump at all.

A group's ranks come from ``pg_config``. When an entry names a group that
is not a key of ``pg_config`` and ``pg_config`` holds one group, that
group's ranks are used, with a note: PyTorch 2.13's gloo dumps key
``pg_config`` by ``''`` while the entries name group ``'0'``.

Pickles are read with :func:`~straggle_edu.traces._safe.load_pickle`: plain
containers, strings and numbers only; nothing is imported or called.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..i18n import N_
from ._safe import load_json, load_pickle, read_bytes
from ._table import column_error, display_path
from .detect import detect, name_rank
from .result import Note
from .suspects import suspect_analysis

__all__ = ["FlightRecorderTrace", "read_flight_recorder", "analyze_flight_recorder"]

_WHAT = "a PyTorch Flight Recorder dump (a pickled or JSON dict with 'entries' and 'pg_config')"
_PICKLE_START = b"\x80"


@dataclass(frozen=True, eq=False)
class FlightRecorderTrace:
    """The dumps of one job: ``dumps`` maps rank -> the dump's dict.

    Attributes
    ----------
    source : str
        The folder or file.
    dumps : dict
        rank (int) -> the dump (plain dict).
    files : dict
        rank (int) -> the file it came from (for messages).
    version : str
        The dump format version of the first dump.
    """

    source: str
    dumps: dict
    files: dict
    version: str

    def __repr__(self):
        return f"FlightRecorderTrace(ranks={len(self.dumps)}, version={self.version!r}, source={self.source!r})"


def _load_dump(path):
    shown = display_path(path)
    data = read_bytes(path)
    if data.startswith(_PICKLE_START):
        dump = load_pickle(path, _WHAT, data=data)
    else:
        dump = load_json(path, _WHAT, data=data)
    if not isinstance(dump, dict):
        raise column_error(shown, expected=_WHAT, got=type(dump).__name__)
    for key, kind in (("entries", list), ("pg_config", dict)):
        if not isinstance(dump.get(key), kind):
            raise column_error(shown, key, expected=f"a {kind.__name__} ({_WHAT})", got=dump.get(key))
    return dump


def _rank_of(path, dump, pos):
    rank = dump.get("rank")
    if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0:
        return rank
    named = name_rank(path, "flight-recorder")
    return named if named is not None else pos


def read_flight_recorder(path, *, files=None):
    """Read a folder of Flight Recorder dumps (one per rank), a list of them, or one dump.

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        A folder of dumps (``<prefix><rank>``), a list of dump files, or one.
    files : list of paths, optional
        The dumps to read, when the caller has detected them; by default
        the files of ``path`` that :func:`~straggle_edu.traces.detect.detect`
        finds to be dumps (the others, ``fault_injection.log``, are skipped).

    Returns
    -------
    FlightRecorderTrace

    Examples
    --------
    >>> import pickle, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> dump = {"version": "2.9", "pg_config": {}, "pg_status": {}, "entries": []}
    >>> _ = (folder / "nccl_trace_rank_0").write_bytes(pickle.dumps(dump))
    >>> read_flight_recorder(folder)
    FlightRecorderTrace(ranks=1, version='2.9', source=...)
    """
    if files is None:
        files = detect(path, format="flight-recorder").paths
    dumps, where = {}, {}
    for pos, f in enumerate(files):
        dump = _load_dump(f)
        rank = _rank_of(f, dump, pos)
        if rank in dumps:
            raise column_error(display_path(f), "rank", problem=f"rank {rank} is also the rank of "
                               f"{display_path(where[rank])} (one dump per rank)")
        dumps[rank], where[rank] = dump, Path(f)
    first = dumps[min(dumps)]
    source = ", ".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)
    return FlightRecorderTrace(source, dumps, where, str(first.get("version", "unknown")))


def _members(shown, name, cfg):
    ranks = cfg.get("ranks") if isinstance(cfg, dict) else None
    if isinstance(ranks, str):  # written as "[0, 1, 2]": parsed as JSON, never evaluated
        try:
            ranks = json.loads(ranks)
        except json.JSONDecodeError:
            ranks = None
    if not isinstance(ranks, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in ranks):
        raise column_error(shown, "pg_config", problem=f"process group {name!r} has no list of ranks "
                           f"(got {cfg.get('ranks') if isinstance(cfg, dict) else cfg!r:.60})")
    return ranks


def _entry_fields(shown, i, e):
    if not isinstance(e, dict):
        raise column_error(shown, "entries", i + 1, "a dict per collective", type(e).__name__)
    pg = e.get("process_group")
    seq = e.get("collective_seq_id")
    if not isinstance(pg, (list, tuple)) or not pg or not isinstance(pg[0], str):
        raise column_error(shown, "process_group", i + 1, "a (name, description) pair", pg)
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise column_error(shown, "collective_seq_id", i + 1, "a whole number", seq)
    return pg[0], seq, bool(e.get("is_p2p", False)), str(e.get("state", "")), str(e.get("profiling_name", ""))


def _progress(trace):
    """Per group name: {rank: [enqueued seq, completed seq, last op name]} and the groups' members."""
    progress, members, descs = {}, {}, {}
    for rank, dump in trace.dumps.items():
        shown = display_path(trace.files[rank])
        for name, cfg in dump["pg_config"].items():
            members[str(name)] = _members(shown, name, cfg)
            descs[str(name)] = str(cfg.get("desc", "")) if isinstance(cfg, dict) else ""
        for i, e in enumerate(dump["entries"]):
            name, seq, p2p, state, op = _entry_fields(shown, i, e)
            if not descs.get(name) and len(e["process_group"]) > 1:  # pg_config may lack it (gloo, PyTorch 2.13)
                descs[name] = str(e["process_group"][1])
            if p2p:
                continue
            cur = progress.setdefault(name, {}).setdefault(rank, [-1, -1, ""])
            if seq > cur[0]:
                cur[0], cur[2] = seq, op
            if state == "completed" or e.get("retired") is True:
                cur[1] = max(cur[1], seq)
    return progress, members, descs


def _as_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _group_ranks(name, per_rank, members, descs, fallback):
    """The ranks of the group an entry names; ``fallback`` records the groups not keyed so in ``pg_config``."""
    if name in members:
        return members[name], descs.get(name, "")
    if len(members) == 1:
        key = next(iter(members))
        fallback[name] = {"pg_config_key": key, "ranks": members[key]}
        return members[key], descs.get(name) or descs.get(key, "")
    fallback[name] = {"pg_config_key": None, "ranks": sorted(per_rank)}
    return sorted(per_rank), descs.get(name, "")


def _fallback_notes(fallback):
    notes = []
    for name, f in fallback.items():
        if f["pg_config_key"] is not None:
            notes.append(Note(N_("the entries name process group {group}, which is not a key of pg_config; pg_config "
                                 "holds one group ({key}), so its ranks {ranks} are used (PyTorch 2.13's gloo dumps "
                                 "key pg_config by '')"), group=repr(name), key=repr(f["pg_config_key"]),
                              ranks=f["ranks"]))
        else:
            notes.append(Note(N_("process group {group} is not in pg_config: its ranks are taken to be the ranks whose "
                                 "dumps name it, {ranks}"), group=repr(name), ranks=f["ranks"]))
    return notes


def _stuck_groups(trace, progress, members, descs, fallback):
    groups = []
    for name, per_rank in sorted(progress.items(), key=lambda kv: _as_int(kv[0]) or 0):
        ranks, desc = _group_ranks(name, per_rank, members, descs, fallback)
        if len(ranks) < 2:
            continue
        top = max(v[0] for v in per_rank.values())
        waiting = [r for r in ranks if r in per_rank and per_rank[r][0] == top and per_rank[r][1] < top]
        if top < 0 or not waiting:
            continue
        no_dump = [r for r in ranks if r not in trace.dumps]
        missing = [r for r in ranks if r in trace.dumps and per_rank.get(r, [-1])[0] < top]
        if not missing and not no_dump:
            continue
        groups.append({
            "process_group": name, "desc": desc, "op": per_rank[waiting[0]][2],
            "collective_seq_id": int(top), "waiting": waiting, "missing": missing, "no_dump": no_dump,
            "missing_progress": {str(r): int(per_rank[r][0]) if r in per_rank else None for r in missing},
        })
    return groups


def analyze_flight_recorder(trace):
    """The ranks the others wait on, from Flight Recorder dumps (a :class:`SuspectAnalysis`).

    Parameters
    ----------
    trace : FlightRecorderTrace or path
        What :func:`read_flight_recorder` returned, or its input.

    Returns
    -------
    SuspectAnalysis
        ``format="flight-recorder"``; ``suspects`` = the missing ranks of every
        stuck process group, most often missing first; ``evidence["groups"]``
        = one record per stuck group (``process_group``, ``desc``, ``op``,
        ``collective_seq_id``, ``waiting``, ``missing``, ``no_dump``);
        ``evidence["groups_not_in_pg_config"]`` = per group that the entries
        name but ``pg_config`` does not key, the ``pg_config_key`` whose
        ranks were used (None: the ranks whose dumps name it) and ``ranks``.

    Examples
    --------
    Two ranks in group "0"; rank 0 waits in its all-reduce #5, rank 1 stopped at #4:

    >>> import pickle, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for rank, (seq, state) in enumerate([(5, "started"), (4, "completed")]):
    ...     e = {"process_group": ("0", "default_pg"), "collective_seq_id": seq, "is_p2p": False,
    ...          "state": state, "profiling_name": "nccl:all_reduce", "pg_id": 0}
    ...     dump = {"version": "2.9", "pg_config": {"0": {"desc": "default_pg", "ranks": "[0, 1]"}},
    ...             "pg_status": {}, "entries": [e]}
    ...     _ = (folder / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(dump))
    >>> analyze_flight_recorder(folder).suspects
    (1,)
    """
    if not isinstance(trace, FlightRecorderTrace):
        trace = read_flight_recorder(trace)
    progress, members, descs = _progress(trace)
    fallback = {}
    groups = _stuck_groups(trace, progress, members, descs, fallback)
    count = {}
    for g in groups:
        for r in g["missing"] + g["no_dump"]:
            count[r] = count.get(r, 0) + 1
    suspects = sorted(count, key=lambda r: (-count[r], r))
    notes = [Note(N_("a Flight Recorder dump holds each rank's last collectives, not step times: it names the ranks "
                     "the others wait on, and no slowdown can be computed from it"))]
    if any(g["no_dump"] for g in groups):
        notes.append(Note(N_("ranks without a dump file are counted as never arrived")))
    notes += _fallback_notes(fallback)
    evidence = {"version": trace.version, "ranks": sorted(trace.dumps), "groups": groups,
                "groups_not_in_pg_config": fallback}
    return suspect_analysis("flight-recorder", trace.source, suspects=suspects, evidence=evidence,
                            workers=sorted(trace.dumps), notes=notes)
