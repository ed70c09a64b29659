"""What ``straggle-edu fleet SOURCE...`` analyses: SOURCE arguments -> one :class:`Job` per trace.

A SOURCE is one of:

a directory
    walked top down in name order; every trace file in it is a job, and a
    folder of per-rank files (PyTorch profiler traces, Flight Recorder dumps,
    NCCL Inspector logs) is one job. Files that are not traces are skipped:
    a ``.json`` without ``traceEvents`` (the artifact's ``ms-*.json``,
    ``result-*.json``), a ``.csv`` or ``.parquet`` without an ``optype``
    column or ``step,rank,duration_s``, a layout sidecar ``meta-*.yaml``
    (read with its trace: ``trace-AR.parquet`` and ``meta-AR.yaml`` are one
    job), text that no reader knows. A file named like a trace (``.parquet``,
    ``.pq``, ``.csv``, ``.json``, ``.json.gz``, ``.gz``, ``.log``, ``.txt``,
    ``.pkl``, ``.pickle``, or ``trace*``, ``rank_*``, ``rank-*``,
    ``_dump_*``) whose bytes are no file of any kind (empty, binary noise,
    a broken gzip stream) is not skipped: it is a job, and its row says what
    ``analyze`` says of it. The job id is the trace's path.
a glob
    ``'runs/**/trace-*.parquet'`` (quoted, so that the shell leaves it
    alone; ``**`` matches any depth); each match is a trace file, or a
    directory walked as above; the files that match are taken as a walk
    takes them.
a manifest
    a ``.csv`` or ``.parquet`` file with the columns ``job_id`` and ``path``
    and, optionally, ``gpus`` and ``hours`` (empty: taken from the trace's
    layout file, ``gpus:`` or else ``world_size:``, and ``hours:``). Paths
    are relative to the manifest's folder. Read a batch of rows at a time,
    never whole, so a million-row manifest costs the memory of its job ids.
a trace file
    one job.

Rules for a hostile fleet:

- a path that leaves its SOURCE (through ``..``, an absolute path, or a
  symbolic link that points outside) is refused, as an error row of its own,
  unless ``follow_links=True`` (``--follow-links``);
- a manifest row naming a missing file is an error row; the fleet goes on;
- job ids are unique: a repeated id stops the fleet before any work, naming
  both rows (rename one of them);
- a SOURCE that yields no job (a glob that matches no path, a folder or
  manifest without a trace) is a ``ValueError`` naming it, also beside
  other SOURCEs, raised when the walk reaches its end, so before any work
  (the CLI exits with 2 and creates nothing).

:func:`expand` yields the jobs one by one; :func:`count_jobs` is the
same walk, counted, and checks the ids.
"""

from __future__ import annotations

import csv
import glob
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Job", "expand", "count_jobs", "trace_kind", "is_manifest", "PER_RANK_FILES"]

# Formats whose traces are one file per rank: a folder of them is one job.
PER_RANK_FILES = ("torch-profiler", "flight-recorder", "nccl-inspector")  # = traces.detect.PER_RANK_FILES
_MAGIC = set("*?[")
_BATCH = 65_536  # manifest rows read at a time


@dataclass(frozen=True)
class Job:
    """One job of the fleet: its id, its trace (a file or a folder), and what the manifest says of it.

    ``error`` is set (and the job is not analysed) when the source refused
    the path: missing, outside its SOURCE, or a bad manifest cell.

    Examples
    --------
    >>> Job("a", "runs/trace-a.parquet", gpus=128)
    Job(job_id='a', path='runs/trace-a.parquet', gpus=128, hours=None, error=None)
    """

    job_id: str
    path: str
    gpus: int | None = None
    hours: float | None = None
    error: str | None = None

    def as_dict(self):
        """The job as plain data (what a spool line holds)."""
        return {"job_id": self.job_id, "path": self.path, "gpus": self.gpus, "hours": self.hours, "error": self.error}


def trace_kind(path):
    """The trace format of one file, or None when it is not a trace (a sidecar, a result, a README).

    The detection of ``straggle-edu analyze``
    (:func:`straggle_edu.traces.detect.sniff`): decided by what the file holds,
    whatever its name; a text file is scanned for reports up to
    :data:`~straggle_edu.traces.detect.TEXT_SCAN_BYTES`, a JSON document for
    its top-level keys up to :data:`~straggle_edu.traces.detect.JSON_SCAN_BYTES`.
    A file that cannot be read is None here; analysing it names the problem.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> trace_kind(public_trace_path()), trace_kind(public_trace_path().with_name("meta-ST.yaml"))
    ('op-level', None)
    """
    from ..traces.detect import sniff

    try:
        return sniff(path).format
    except FileNotFoundError:  # gone since the folder was listed
        return None


def _parquet_columns(path):
    try:
        import pyarrow.parquet as pq

        return set(pq.ParquetFile(path).schema_arrow.names)
    except ImportError:
        return {"optype"}  # without pyarrow, every .parquet is taken for a trace; analyze says what is wrong
    except Exception:  # not a Parquet file: analyze names the problem
        return {"optype"}


def _csv_columns(path):
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    return {c.strip().lower() for c in line[:2000].split(",")}
    except OSError:
        return set()
    return set()


def is_manifest(path):
    """Whether ``path`` is a manifest: a ``.csv`` or ``.parquet`` with ``job_id`` and ``path`` columns.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> m = pathlib.Path(tempfile.mkdtemp()) / "fleet.csv"
    >>> _ = m.write_text("job_id,path\\na,trace-a.parquet\\n")
    >>> is_manifest(m)
    True
    """
    p = Path(path)
    if not p.is_file():
        return False
    name = p.name.lower()
    if name.endswith(".csv"):
        cols = _csv_columns(p)
    elif name.endswith((".parquet", ".pq")):
        cols = {c.lower() for c in _parquet_columns(p)}
    else:
        return False
    return {"job_id", "path"} <= cols


def _inside(path, root):
    """Whether ``path``, symbolic links resolved, lies in the folder ``root`` (also resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _refused(shown, root):
    return (f"{shown}: refused: the path leaves {root} (through '..', an absolute path or a symbolic link); "
            f"pass --follow-links to analyse it")


def _walk(root, follow_links, skip):
    """Jobs of a directory tree, in name order; ``skip`` is a set of real paths to leave out (the output)."""
    seen = set()
    stack = [Path(root)]
    while stack:
        folder = stack.pop()
        real = os.path.realpath(folder)
        if real in seen or real in skip:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield Job(str(folder), str(folder), error=f"{folder}: cannot be read ({exc.strerror})")
            continue
        subdirs, jobs = _folder_jobs(folder, entries, root, follow_links)
        yield from jobs
        stack.extend(reversed(subdirs))


def _folder_jobs(folder, entries, root, follow_links):
    """The jobs of one folder's files, and its sub-folders to walk.

    A folder whose traces are all per-rank files of one format (profiler
    traces, Flight Recorder dumps, NCCL Inspector logs) is one job, as
    ``straggle-edu analyze FOLDER`` reads it; otherwise every trace file is a job.
    """
    subdirs, refused, traces = [], [], []
    for e in entries:
        path = Path(folder) / e.name
        if e.is_symlink() and not follow_links and not _inside(path, root):
            refused.append(Job(str(path), str(path), error=_refused(path, root)))
            continue
        try:
            is_dir, is_file = e.is_dir(), e.is_file()
        except OSError as exc:  # a link to itself, or a loop of links: nothing behind it can be opened
            if _trace_name(e.name):
                refused.append(Job(str(path), str(path), error=f"{path}: cannot be opened ({exc.strerror})"))
            continue
        if is_dir:
            subdirs.append(path)
        elif is_file:
            kind, error = _kind(path)
            if error is not None:
                refused.append(Job(str(path), str(path), error=error))
            elif kind == _DAMAGED:  # a job of its own: its row says what analyze says of it
                refused.append(Job(str(path), str(path)))
            elif kind is not None:
                traces.append((path, kind))
    kinds = {kind for _, kind in traces}
    if len(kinds) == 1 and kinds <= set(PER_RANK_FILES):
        return subdirs, refused + [Job(str(folder), str(folder))]
    return subdirs, refused + [Job(str(p), str(p)) for p, _ in traces]


# What a trace file may be called, for a file that cannot be looked inside (a link loop) or whose bytes are no file of
# any kind (empty, binary noise): the suffixes of trace-formats.md, and the names Flight Recorder gives its dumps.
_TRACE_SUFFIXES = (".parquet", ".pq", ".csv", ".json", ".json.gz", ".gz", ".log", ".txt", ".pkl", ".pickle")
_TRACE_PREFIXES = ("_dump_", "rank_", "rank-", "trace")


def _trace_name(name):
    """Whether a file called ``name`` could be a trace (judged by its name alone).

    Examples
    --------
    >>> _trace_name("self.parquet"), _trace_name("_dump_3"), _trace_name("notes.md")
    (True, True, False)
    """
    low = name.lower()
    return low.endswith(_TRACE_SUFFIXES) or low.startswith(_TRACE_PREFIXES)


_DAMAGED = "damaged"  # _kind's word for a file named like a trace that holds no file of any kind


def _kind(path):
    """What a file found by a walk or a glob is: ``(format, None)``, ``(None, None)`` for a file of another kind,
    ``(None, error)`` for one that cannot be read, ``(_DAMAGED, None)`` for one named like a trace whose bytes are no
    file of any kind.

    A file that may be a trace and cannot be read is a row, never a silent gap: one that cannot be opened, whatever
    its name (a layout file's trace reports it when it reads it), and one named like a trace (:func:`_trace_name`;
    a text name such as ``notes.txt`` only with a trace's prefix) that is empty, binary noise or a broken gzip
    stream (:attr:`~straggle_edu.traces.detect.FileInfo.damaged`), which is a job whose row says what ``analyze``
    says of it, as when it is given as a SOURCE.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "trace-x.parquet").write_bytes(b""), (d / "notes.md").write_bytes(b""), (d / "notes.txt").write_bytes(b"")
    >>> _kind(d / "trace-x.parquet"), _kind(d / "notes.md"), _kind(d / "notes.txt")
    (('damaged', None), (None, None), (None, None))
    """
    from ..traces.detect import sniff

    try:
        info = sniff(path)
    except FileNotFoundError:  # gone since the folder was listed
        return None, None
    name = Path(path).name.lower()
    if info.format is not None or name.startswith("meta"):
        return info.format, None
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as exc:
        return None, f"{path}: cannot be read ({exc.strerror})"
    # An empty or garbled file with a text name is often no trace at all (notes.txt, an empty worker .log): it is a
    # row only when its name also starts like a trace's; a binary trace name (.parquet, .gz) is always one.
    named = name.startswith(_TRACE_PREFIXES) or (_trace_name(name) and not name.endswith(_TEXT_SUFFIXES))
    return (_DAMAGED if info.damaged and named else None), None


_TEXT_SUFFIXES = (".csv", ".json", ".log", ".txt")


def _glob_root(pattern):
    """The folder part of a glob before its first wildcard."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def _glob(pattern, follow_links, skip):
    root = _glob_root(pattern)
    for match in sorted(glob.iglob(pattern, recursive=True)):
        p = Path(match)
        if not follow_links and not _inside(p, root):
            yield Job(match, match, error=_refused(match, root))
        elif p.is_dir():
            yield from _walk(p, follow_links, skip)
        elif p.is_file():  # a FIFO, a socket or a device is never opened (it could block)
            kind, error = _kind(p)
            if error is not None or kind is not None:
                yield Job(match, match, error=error)


def _manifest_rows(path):
    """``(row number, {column: value})`` of a manifest, a batch at a time; names lower-cased."""
    if path.name.lower().endswith(".csv"):
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            lines = (line for line in f if line.strip() and not line.lstrip().startswith("#"))
            reader = csv.reader(lines)
            header = [c.strip().lower() for c in next(reader, [])]
            for i, cells in enumerate(reader, 1):
                yield i, dict(zip(header, cells))
        return
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    names = {n.lower(): n for n in f.schema_arrow.names}
    wanted = [names[c] for c in ("job_id", "path", "gpus", "hours") if c in names]
    i = 0
    for batch in f.iter_batches(batch_size=_BATCH, columns=wanted):
        for row in batch.to_pylist():
            i += 1
            yield i, {k.lower(): v for k, v in row.items()}


def _cell_text(value):
    return "" if value is None else str(value).strip()


def _number(shown, row, cells, column, whole):
    """A manifest's optional gpus/hours cell: None when empty; raises TraceError when bad."""
    from ..traces._table import column_error

    text = _cell_text(cells.get(column))
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    ok = value == value and value != float("inf") and (value >= 1 and value == int(value) if whole else value >= 0)
    if not ok:
        raise column_error(shown, column, row, "a whole number >= 1" if whole else "a number of hours >= 0",
                           cells.get(column))
    return int(value) if whole else value


def _manifest(path, follow_links):
    from ..traces._table import TraceError, column_error, display_path

    shown, root = display_path(path), path.parent
    for row, cells in _manifest_rows(path):
        job_id, rel = _cell_text(cells.get("job_id")), _cell_text(cells.get("path"))
        if not job_id or not rel:
            column = "job_id" if not job_id else "path"
            raise column_error(shown, column, row, "a job id and a path on every row", cells.get(column) or "")
        full = Path(rel) if Path(rel).is_absolute() else root / rel
        try:
            gpus, hours = _number(shown, row, cells, "gpus", True), _number(shown, row, cells, "hours", False)
        except TraceError as exc:
            yield Job(job_id, str(full), error=str(exc))
            continue
        if not follow_links and not _inside(full, root):
            yield Job(job_id, str(full), gpus, hours, error=_refused(full, display_path(root)))
        elif not full.exists():
            yield Job(job_id, str(full), gpus, hours, error=f"{full}: no such file or folder")
        else:
            yield Job(job_id, str(full), gpus, hours)


def _why_not(path):
    """Why ``path`` is neither a file nor a folder: missing, a dangling link, a link loop, a FIFO or a device.

    Examples
    --------
    >>> _why_not("no-such-dir")
    'no such file or folder'
    """
    try:
        os.stat(path)
    except FileNotFoundError:
        return "a symbolic link to a missing path" if os.path.islink(path) else "no such file or folder"
    except OSError as exc:
        return f"cannot be opened: {exc.strerror}"
    return "neither a file nor a folder (a FIFO, a socket or a device)"


def expand(sources, *, follow_links=False, skip=()):
    """Every job of the SOURCE arguments, one at a time (see the module docstring for the rules).

    Parameters
    ----------
    sources : iterable of str or os.PathLike
        Directories, globs, manifests and trace files.
    follow_links : bool
        Analyse paths that leave their SOURCE (``..``, absolute, symbolic links).
    skip : iterable of paths
        Folders a directory walk leaves out (the fleet's own output).

    Yields
    ------
    Job

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> here = public_trace_path().parent   # ST as CSV, a gloo DDP job's folder of profiler traces, the artifact's folder
    >>> [Path(j.job_id).relative_to(here).as_posix() for j in expand([here])]
    ['trace-ST.csv', 'ddp_gloo_late', 'osdi2025/trace-AR.parquet', 'osdi2025/trace-SE.parquet', 'osdi2025/trace-ST.parquet']
    """
    skip = {os.path.realpath(s) for s in skip}
    for source in sources:
        n = 0
        for n, job in enumerate(_source_jobs(source, follow_links, skip), 1):
            yield job
        if not n:  # said of this SOURCE, also beside others: a mistyped one never leaves a fleet that lacks it
            raise ValueError(_EMPTY + (f", got the glob {str(source)!r}, which matches no path" if _globbed(source)
                                       else f", got none in {str(source)!r}{_LOOKED_FOR}"))


_EMPTY = "SOURCE must hold at least one trace"
_LOOKED_FOR = " (no trace file, folder of per-rank traces or manifest row was found)"


def _globbed(source):
    """Whether ``source`` is a glob that matches no path (not a path that is there)."""
    return not os.path.lexists(source) and bool(_MAGIC & set(str(source))) and next(
        glob.iglob(str(source), recursive=True), None) is None


def _source_jobs(source, follow_links, skip):
    p = Path(source)
    if p.is_dir():
        yield from _walk(p, follow_links, skip)
    elif p.is_file():
        yield from _manifest(p, follow_links) if is_manifest(p) else [Job(str(p), str(p))]
    elif _MAGIC & set(str(source)):
        yield from _glob(str(source), follow_links, skip)
    else:
        raise ValueError(f"SOURCE must be a directory, a glob, a manifest or a trace file, got {str(source)!r} "
                         f"({_why_not(p)})")


def count_jobs(jobs):
    """Check that job ids are unique, and count the jobs: ``(count, jobs as a list-free iterator)``.

    Use it as a pass over :func:`expand` before any work; it holds only the
    ids. Raises ``ValueError`` on a repeated id and when there is no job.

    Examples
    --------
    >>> count_jobs([Job("a", "x"), Job("b", "y")])
    2
    >>> count_jobs([Job("a", "x"), Job("a", "y")])
    Traceback (most recent call last):
    ...
    ValueError: job_id must be unique, got 'a' for job 1 and job 2 (paths x and y); rename one of them in the manifest
    """
    first, n = {}, 0
    for job in jobs:
        n += 1
        if job.job_id in first:
            i, path = first[job.job_id]
            raise ValueError(f"job_id must be unique, got {job.job_id!r} for job {i} and job {n} (paths {path} and "
                             f"{job.path}); rename one of them in the manifest")
        first[job.job_id] = (n, job.path)
    if not n:
        raise ValueError(f"{_EMPTY}, got none{_LOOKED_FOR}")
    return n
