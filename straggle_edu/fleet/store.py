"""The fleet's results on disk: a row per job as it finishes, resume by content hash, the two tables.

``DIR/parts/<ab>/<hash>.json``
    one finished job, named by the BLAKE3 hash of its trace's bytes (the first two
    hex digits name a sub-folder, so that a fleet of a million jobs spreads
    over 256 folders). Written to a temporary name, flushed to disk with
    ``fsync`` and renamed: a file under its final name is always whole. A
    rerun skips every job whose hash is there (:meth:`Store.cached`).
``DIR/jobs.parquet`` and ``DIR/jobs.csv``
    every job of the run, in the columns of :data:`COLUMNS` and in job-id
    order (then path; :func:`row_key`), whatever order they finished in, written when the
    run ends (streamed in batches, then renamed into place the same way); and
    during the run, the jobs finished so far, rewritten the same way at most
    every :data:`REFRESH_SECONDS` (:class:`Refresh`).

A run killed at any point (``SIGKILL`` included) loses no finished job:
the next run reads the parts back and writes the tables; the tables a killed
run leaves are whole, and hold the jobs finished by their last rewrite. Temporary files of
a killed run (``.tmp-*``: the parts', the tables', ``fleet.json``'s and the
report's, all written by :func:`atomic_write` or the same rule) are removed
when the next run opens the folder.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
import time
from pathlib import Path

__all__ = ["COLUMNS", "REFRESH_SECONDS", "Store", "Spool", "Refresh", "content_hash", "atomic_write", "read_rows", "clean_row",
           "row_key"]

# The columns of jobs.parquet / jobs.csv, in order, and their kinds (int columns are nullable).
COLUMNS = (
    ("job_id", "str"), ("path", "str"), ("content_hash", "str"), ("format", "str"), ("gpus", "int"),
    ("hours", "float"), ("slowdown", "float"), ("waste", "float"), ("gpu_hours_lost", "float"),
    ("top_optype", "str"), ("top_optype_s", "float"), ("top_stage", "int"), ("top_stage_s", "float"),
    ("top_dp_rank", "int"), ("top_dp_rank_s", "float"), ("top_worker", "str"), ("top_worker_s", "float"),
    ("worker_share", "float"), ("worker_steps", "float"), ("dp_rank_steps", "float"), ("culprit_class", "str"),
    ("culprit_where", "str"), ("steps", "int"),
    ("workers", "int"), ("ops", "int"), ("seconds", "float"), ("error", "str"),
)
_NAMES = tuple(name for name, _ in COLUMNS)
_KIND = dict(COLUMNS)
_KEPT = ("meta_gpus", "meta_hours")  # a part also keeps what the layout file said, for a job that reuses it
_CHUNK = 1 << 20
_TMP = ".tmp-"
REFRESH_SECONDS = 30.0  # during a run, the tables are rewritten from the rows so far at most this often
_REFRESH_SHARE = 10  # and no sooner after a rewrite than 10x the time it took: at most ~1/11 of a huge run's time


def _hash_file(h, path, buffer):
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buffer):
            h.update(memoryview(buffer)[:n])


def content_hash(path, meta=None):
    """The BLAKE3 hash (hex, 256 bits) of a trace's bytes: a file's, or a folder's files in name order with their
    names.

    ``meta``, a layout file read with the trace, is hashed after it (a
    changed layout is a changed job). BLAKE3, not sha256: a resumed run
    hashes every trace of the fleet and analyses only the new ones, and
    BLAKE3 hashed the 592 MiB 16,384-rank trace in 0.05 s of CPU, sha256
    (with the CPU's SHA instructions) in 0.31 s. Rows stored by an earlier
    version, under the sha256 of their trace, are not found: their jobs are
    analysed again.

    Examples
    --------
    >>> import tempfile, pathlib, blake3
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"step,rank,duration_s\\n0,0,1.0\\n")
    >>> content_hash(p) == blake3.blake3(p.read_bytes()).hexdigest()
    True
    """
    import blake3

    h, buffer = blake3.blake3(), bytearray(_CHUNK)
    p = Path(path)
    if p.is_dir():
        for f in sorted(x for x in p.iterdir() if x.is_file()):
            h.update(f.name.encode("utf-8", "surrogateescape") + b"\0" + str(f.stat().st_size).encode() + b"\0")
            _hash_file(h, f, buffer)
    else:
        _hash_file(h, p, buffer)
    if meta is not None:
        h.update(b"\0meta\0")
        _hash_file(h, meta, buffer)
    return h.hexdigest()


def _mkstemp(path):
    """A temporary file beside ``path``, readable as the umask allows (mkstemp alone makes it 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=_TMP + path.name + ".", dir=path.parent)
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)
    return fd, tmp


def atomic_write(path, data, *, sync_folder=True):
    """Write ``data`` (bytes) to ``path`` so that ``path`` is never half-written: temp name, fsync, rename.

    With ``sync_folder`` the folder is flushed too, so that the rename
    itself survives a power cut (a killed process never loses it: the kernel
    keeps it); :class:`Store` flushes its part folders once, at the end.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "row.json"
    >>> atomic_write(p, b"{}")
    >>> p.read_bytes(), [f.name for f in p.parent.iterdir()]
    (b'{}', ['row.json'])
    """
    path = Path(path)
    with _replacing(path, sync_folder=sync_folder) as (fd, _tmp):
        with os.fdopen(fd, "wb") as f:
            f.write(data)


@contextlib.contextmanager
def _replacing(path, *, sync_folder=True):
    """The one rule of every file the store writes: the block writes a temporary file beside ``path`` (given as
    ``(fd, name)``; the block closes the fd), which then is flushed to disk and renamed to ``path`` (the folder
    flushed too, with ``sync_folder``); when the block fails, it is removed."""
    fd, tmp = _mkstemp(path)
    try:
        yield fd, tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with _quiet():
            os.unlink(tmp)
        raise
    if sync_folder:
        _fsync_dir(path.parent)


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, OSError)


def _fsync_dir(folder):
    with _quiet():
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _plain(v):
    """A JSON- and table-safe value: NaN and infinities become None, numpy scalars Python ones."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def clean_row(row):
    """``row`` with exactly the columns of :data:`COLUMNS`, in order, each value plain data or None.

    Examples
    --------
    >>> r = clean_row({"job_id": "a", "slowdown": float("nan"), "extra": 1})
    >>> r["job_id"], r["slowdown"], "extra" in r, len(r)
    ('a', None, False, 27)
    """
    out = {}
    for name in _NAMES:
        v = _plain(row.get(name))
        if v is not None:
            kind = _KIND[name]
            v = int(v) if kind == "int" else float(v) if kind == "float" else str(v)
        out[name] = v
    return out


def row_key(row):
    """The order of the tables' rows: by job id, then path.

    Examples
    --------
    >>> sorted([{"job_id": "b"}, {"job_id": "a"}], key=row_key)[0]["job_id"]
    'a'
    """
    return str(row.get("job_id")), str(row.get("path"))


class Spool:
    """The rows of one run, in order, in an anonymous temporary file (gone with the process, even on SIGKILL).

    Iterating gives them in the order they came; :meth:`in_order`, in job-id order.

    Examples
    --------
    >>> s = Spool()
    >>> s.append({"job_id": "b"}); s.append({"job_id": "a"})
    >>> [r["job_id"] for r in s], len(s), [r["job_id"] for r in s.in_order()]
    (['b', 'a'], 2, ['a', 'b'])
    """

    def __init__(self, folder=None):
        self._file = tempfile.TemporaryFile(mode="w+b", dir=folder)
        self._count = 0
        self._keys, self._offsets = [], []

    def append(self, row):
        self._file.seek(0, io.SEEK_END)
        self._keys.append(row_key(row))
        self._offsets.append(self._file.tell())
        self._file.write(json.dumps(row, separators=(",", ":")).encode() + b"\n")
        self._count += 1

    def __len__(self):
        return self._count

    def __iter__(self):
        self._file.flush()
        self._file.seek(0)
        for line in self._file:
            yield json.loads(line)

    def in_order(self):
        """The rows in job-id order (:func:`row_key`): a re-iterable view, read from the file row by row."""
        return _InOrder(self)

    def close(self):
        self._file.close()


class _InOrder:
    def __init__(self, spool):
        self.spool = spool

    def __len__(self):
        return len(self.spool)

    def __iter__(self):
        sp = self.spool
        sp._file.flush()
        for i in sorted(range(sp._count), key=sp._keys.__getitem__):
            sp._file.seek(sp._offsets[i])
            yield json.loads(sp._file.readline())


class Store:
    """The output folder of a fleet: finished jobs by content hash, and the two tables.

    Examples
    --------
    >>> import tempfile
    >>> st = Store(tempfile.mkdtemp())
    >>> st.put({"job_id": "a", "content_hash": "ab12", "slowdown": 1.25})
    >>> st.cached("ab12")["slowdown"], st.cached("cd34")
    (1.25, None)
    """

    def __init__(self, out_dir):
        self.out = Path(out_dir)
        if self.out.exists() and not self.out.is_dir():
            raise NotADirectoryError(f"--out must be a folder, got {str(out_dir)!r} (a file)")
        self.parts = self.out / "parts"
        self.parts.mkdir(parents=True, exist_ok=True)
        self._unsynced = set()
        self._clean()

    def _clean(self):
        """Remove the temporary files a killed run left behind."""
        for folder in (self.out, self.parts, *(d for d in self.parts.iterdir() if d.is_dir())):
            for f in folder.iterdir():
                if f.name.startswith(_TMP):
                    with _quiet():
                        f.unlink()

    def _part(self, h):
        return self.parts / h[:2] / f"{h}.json"

    def cached(self, h):
        """The stored row of the job whose trace has content hash ``h``, or None."""
        if not h:
            return None
        try:
            row = json.loads(self._part(h).read_bytes())
        except (OSError, ValueError):
            return None
        return row if isinstance(row, dict) and set(_NAMES) <= row.keys() else None  # an older version's part: redo

    def done(self):
        """The content hashes of every finished job (a set)."""
        return {f.stem for d in self.parts.iterdir() if d.is_dir() for f in d.iterdir()
                if f.suffix == ".json" and not f.name.startswith(_TMP)}

    def put(self, row):
        """Store a finished job's row under its content hash (atomically); rows without a hash are not kept."""
        h = row.get("content_hash")
        if not h:
            return
        self._part(h).parent.mkdir(exist_ok=True)
        kept = {**clean_row(row), **{k: _plain(row.get(k)) for k in _KEPT}}
        atomic_write(self._part(h), json.dumps(kept, separators=(",", ":")).encode(), sync_folder=False)
        self._unsynced.add(self._part(h).parent)

    def sync(self):
        """Flush the part folders written since the last call (the renames, for a power cut)."""
        for folder in sorted(self._unsynced):
            _fsync_dir(folder)
        _fsync_dir(self.parts)
        self._unsynced.clear()

    def write_tables(self, rows):
        """Write ``DIR/jobs.csv`` and, with pyarrow, ``DIR/jobs.parquet`` from ``rows`` (re-iterable: a list or a
        :class:`Spool`), in job-id order; return their paths. Flushes the part folders first."""
        self.sync()
        rows = rows.in_order() if hasattr(rows, "in_order") else sorted(rows, key=row_key)
        return [p for p in (_write_csv(self.out / "jobs.csv", rows), _write_parquet(self.out / "jobs.parquet", rows))
                if p is not None]


class Refresh:
    """When to rewrite a run's two tables from its rows so far: call it after each row; it rewrites them when
    ``every`` seconds have passed since the run began or the last rewrite, and rows came since.

    ``every=None`` never rewrites (the tables come at the end only). Each rewrite is the whole table, through
    :meth:`Store.write_tables` (the same columns, types and atomic renames as the final one), so its cost grows
    with the rows (100,000 rows take about 4 s): the next one waits at least ten times as long as this one took,
    so that rewrites take at most about a tenth of a huge run's time.

    Examples
    --------
    >>> import tempfile
    >>> st, rows = Store(tempfile.mkdtemp()), [{"job_id": "a"}]
    >>> refresh = Refresh(st, rows, every=0)
    >>> refresh(), refresh(), read_rows(st.out)[0]["job_id"]  # the second call: no new row since
    (True, False, 'a')
    """

    def __init__(self, store, rows, every=REFRESH_SECONDS, *, clock=time.monotonic):
        self.store, self.rows, self.clock = store, rows, clock
        self.every = math.inf if every is None else every
        self.due, self.written = clock() + self.every, 0
        if every is not None:  # paid now, not in the first rewrite, whose time sets the wait after it
            _warm_parquet()

    def __call__(self):
        """Rewrite the tables if a rewrite is due and rows came since the last; return whether it did."""
        if len(self.rows) == self.written or self.clock() < self.due:
            return False
        start = self.clock()
        self.store.write_tables(self.rows)
        self.written, end = len(self.rows), self.clock()
        self.due = end + max(self.every, _REFRESH_SHARE * (end - start))
        return True


def _write_csv(path, rows):
    with _replacing(path) as (fd, _tmp), os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(_NAMES)
        for row in rows:
            r = clean_row(row)
            w.writerow(["" if r[n] is None else repr(r[n]) if _KIND[n] == "float" else r[n] for n in _NAMES])
    return path


def _arrow_schema():
    import pyarrow as pa

    kinds = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    return pa.schema([(name, kinds[kind]) for name, kind in COLUMNS])


def _warm_parquet():
    """Write an empty table to memory: the first Parquet write of a process imports pyarrow's parts, which the
    final tables pay anyway."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return
    with pq.ParquetWriter(pa.BufferOutputStream(), _arrow_schema()) as writer:
        writer.write_table(_arrow_table([], _arrow_schema()))


def _arrow_table(rows, schema):
    """The clean rows as a pyarrow Table of :data:`COLUMNS`: what ``pa.Table.from_pylist`` gives, built from
    buffers (:func:`~straggle_edu.traces._table.arrow_array`: ``pa.array`` imports pandas, 0.3 s of CPU in a
    process that has no other use for it: the fleet's)."""
    import pyarrow as pa

    from ..traces._table import arrow_array

    return pa.Table.from_arrays([arrow_array([r[name] for r in rows], schema.field(name).type) for name, _ in COLUMNS],
                                schema=schema)


def _write_parquet(path, rows, batch=10_000):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    schema = _arrow_schema()
    with _replacing(path) as (fd, tmp):
        os.close(fd)
        with pq.ParquetWriter(tmp, schema) as writer:
            chunk = []
            for row in rows:
                chunk.append(clean_row(row))
                if len(chunk) >= batch:
                    writer.write_table(_arrow_table(chunk, schema))
                    chunk = []
            writer.write_table(_arrow_table(chunk, schema))
    return path


def read_rows(out_dir):
    """The rows of ``DIR/jobs.parquet`` (or, without pyarrow or that file, ``DIR/jobs.csv``): a list of dicts.

    Examples
    --------
    >>> import tempfile
    >>> st = Store(tempfile.mkdtemp())
    >>> _ = st.write_tables([{"job_id": "a", "gpus": 8, "slowdown": 1.5}])
    >>> r = read_rows(st.out)[0]
    >>> r["job_id"], r["gpus"], r["slowdown"], r["error"]
    ('a', 8, 1.5, None)
    """
    out = Path(out_dir)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pq = None
    if pq is not None and (out / "jobs.parquet").exists():
        # ParquetFile, not read_table: read_table imports pyarrow.dataset, which imports pandas (0.3 s of CPU)
        with pq.ParquetFile(out / "jobs.parquet") as f:
            return f.read().to_pylist()
    rows = []
    with open(out / "jobs.csv", encoding="utf-8", newline="") as f:
        for raw in csv.DictReader(f):
            rows.append({n: _parse(raw.get(n, ""), _KIND[n]) for n in _NAMES})
    return rows


def _parse(text, kind):
    if text == "":
        return None
    return int(text) if kind == "int" else float(text) if kind == "float" else text
