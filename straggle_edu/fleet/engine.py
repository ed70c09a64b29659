"""The fleet engine: every job's row by the one what-if engine, on a ``distributed`` cluster or in this process.

:func:`job_row`
    one trace -> its row: the functions ``straggle-edu analyze`` calls
    (``analyze_op_file`` for an op-level file, else ``read_trace`` and
    ``analyze``), with ``attribution="full"`` so that even a 16,384-worker job
    names its DP rank and worker; S and every S_X are ``analyze``'s, bit for bit.
:func:`run_fleet`
    SOURCE arguments -> ``DIR/parts/``, ``DIR/jobs.parquet``, ``DIR/jobs.csv``
    and ``DIR/fleet.json``, with a progress bar of jobs done and the ETA; the
    two tables are also rewritten during the run, from the jobs finished so far.

Where it runs
-------------
``workers=None`` (default) starts a ``distributed.LocalCluster`` on
127.0.0.1, one single-threaded worker process per core; ``workers=N``, N of
them; ``scheduler="tcp://HOST:PORT"``, ``scheduler_file=PATH`` or
``$DASK_SCHEDULER_ADDRESS`` use a running cluster (its workers need
straggle-edu installed and must see the traces at the same paths; see
:mod:`~straggle_edu.fleet.cluster` for the precedence, the ``timeout`` and
the failures); ``workers=0`` runs every job here, one after another,
without Dask.

Small jobs share a task (up to :data:`CHUNK_JOBS` of them, so that Dask's
cost per task, a few milliseconds, is spread), and two tasks per worker
thread are in flight, so a fleet of a million jobs is fed to the scheduler
as it drains. A worker process that dies (killed, out of memory) has its
tasks rerun on the others by the scheduler; a task that kills three workers
is split into one task per job, and a job that still does gets an error row.
A job larger than a worker's memory budget is cut into blocks of steps,
analysed as the block-by-block ``analyze`` does (:data:`BYTES_PER_OP`).

Errors: a job's trace that ``analyze`` refuses gets the same one-line
message in its row's ``error`` (led by the path when the message does not
name the file), and the fleet goes on. A cluster that fails (lost, no
workers) or a SIGTERM stops the run after the tables of the jobs finished;
a task the cluster cancelled gives no row.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import _validate
from . import _split
from ._progress import LOG_SECONDS, progress as _progress
from .cluster import (SMALL_FLEET_BYTES, TIMEOUT_SECONDS, ClusterError, Terminated, Watch, check_signals,
                      close_local, connect, local_cluster, say, scheduler_address)
from .demo import demo_of
from .figures import analysis_row, fleet_figures
from .sources import count_jobs, expand
from .store import REFRESH_SECONDS, Refresh, Spool, Store, atomic_write, clean_row, content_hash

__all__ = ["job_row", "job_rows", "run_fleet", "FleetRun", "BYTES_PER_OP", "CHUNK_JOBS", "CHUNK_BYTES",
           "small_fleet", "missing_dask"]

# Peak memory of the analysis, per op: about 250 bytes per op of a block plus
# 12 per op of the whole trace (straggle_edu.traces.blocks).
BYTES_PER_OP = 262
_CLI_BUDGET = 2 * 2**30  # what `straggle-edu analyze` allows itself
CHUNK_JOBS = 32  # jobs of one task at most: small jobs share a task, so Dask's cost per task is spread
CHUNK_BYTES = 64 * 2**20  # trace bytes of one task at most
# Errors that analyze prints as its one error line; their rows are kept for resume.
_ANALYZE_ERRORS = (ValueError, FileNotFoundError, NotADirectoryError, PermissionError)


def missing_dask():
    """The error for a fleet on a cluster without ``distributed`` installed.

    Examples
    --------
    >>> print(missing_dask())
    the fleet on a cluster needs dask: pip install "straggle-edu[fleet]" (or run in this process with --workers 0)
    """
    return ValueError('the fleet on a cluster needs dask: pip install "straggle-edu[fleet]" '
                      '(or run in this process with --workers 0)')


def _meta_path(path):
    """The layout file read with the trace at ``path``, or None."""
    from ..traces.optrace import _meta_candidates

    p = Path(path)
    cands = [p / f"meta{ext}" for ext in (".yaml", ".yml", ".json")] if p.is_dir() else _meta_candidates(p)
    return next((c for c in cands if c.is_file()), None)


def _meta_sizes(meta):
    """``(gpus, hours)`` from a layout file: ``gpus`` (else ``world_size``) and ``hours``; None when absent."""
    from ..traces._table import column_error, display_path
    from ..traces.optrace import read_meta

    if meta is None:
        return None, None
    data = read_meta(meta)
    gpus, hours = data.get("gpus", data.get("world_size")), data.get("hours")
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1):
        raise column_error(display_path(meta), "gpus", expected="a whole number >= 1", got=gpus)
    if hours is not None:
        try:
            hours = float(hours)
        except (TypeError, ValueError):
            hours = float("nan")
        if not (math.isfinite(hours) and hours >= 0):
            raise column_error(display_path(meta), "hours", expected="a number of hours >= 0", got=data.get("hours"))
    return gpus, hours


def _analyze(path, block_steps):
    """What ``straggle-edu analyze PATH`` computes, with full attribution; and, when op-level, the op count and
    the number of blocks of steps it was analysed in."""
    from ..traces import _detect, analyze, read_trace

    if not Path(path).is_dir() and _detect(path) == "op-level":
        from ..traces.blocks import analyze_op_file, count_rows

        a = analyze_op_file(path, block_steps=block_steps, attribution="full")
        trace = a.details.get("trace")
        exact = trace is not None or Path(path).suffix.lower() in (".parquet", ".pq")
        return a, len(trace) if trace is not None else count_rows(path) if exact else None, a.details["blocks"]
    return analyze(read_trace(path), attribution="full"), None, None


class _Budget:
    """The memory budget for one job: the worker's share of memory, at least what the CLI allows itself."""

    def __init__(self, nbytes):
        self.nbytes = nbytes

    def __enter__(self):
        self.old = _validate.set_memory_budget(max(_validate.memory_budget(), self.nbytes))
        return self

    def __exit__(self, *exc):
        _validate.set_memory_budget(self.old)


def _worker_budget():
    """60% of this Dask worker's memory limit, else (no worker, no limit) what ``analyze`` allows itself."""
    if "STRAGGLE_EDU_MEMORY_MIB" in os.environ:
        return _validate.memory_budget()
    if "distributed" not in sys.modules:  # not in a Dask worker (which has it imported): importing it costs 0.5 s
        return _CLI_BUDGET
    try:
        from distributed import get_worker

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError, AttributeError):
        limit = None
    return int(0.6 * limit) if limit else _CLI_BUDGET


def _block_steps(path, block_steps, budget):
    """``"auto"``: ``analyze``'s own choice, or blocks that fit ``budget`` when the trace read whole would not."""
    from ..traces.blocks import STREAM_ROWS, _step_order, count_rows

    if block_steps != "auto" or Path(path).is_dir() or Path(path).suffix.lower() not in (".parquet", ".pq", ".csv"):
        return block_steps
    rows = count_rows(path)
    if rows <= STREAM_ROWS and rows * BYTES_PER_OP > budget:
        steps = len(_step_order(Path(path))[0])
        return max(1, int(budget // BYTES_PER_OP // max(1, rows // steps)))
    return "auto"


def job_row(path, *, block_steps="auto", done=frozenset(), split=False):
    """Analyse one job's trace; return its row (without the job's id, path, gpus and hours).

    Returns ``{"content_hash": h, "cached": True}`` when ``h`` is in ``done``;
    with ``split``, a Parquet trace that is analysed in blocks is not
    analysed here: its row holds the ``plan`` of its blocks, for the fleet to
    run as tasks (:mod:`~straggle_edu.fleet._split`).
    Private keys the fleet reads and does not store: ``cache`` (the row may
    be kept for resume), ``meta_gpus`` / ``meta_hours`` (from the layout
    file), the runner-ups of :func:`~straggle_edu.fleet.figures.analysis_row`,
    ``budget`` (the memory budget it ran under, bytes) and ``blocks`` (the
    blocks of steps an op-level trace was analysed in; 1: read whole).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> r = job_row(public_trace_path())
    >>> r["format"], round(r["slowdown"], 4), r["top_stage"], r["error"]
    ('op-level', 1.1796, 3, None)
    """
    t0 = time.perf_counter()
    row = {"error": None, "cache": True}
    try:
        meta = _meta_path(path)
        row["content_hash"] = content_hash(path, meta)
        if row["content_hash"] in done:
            return {"content_hash": row["content_hash"], "cached": True}
        row["meta_gpus"], row["meta_hours"] = _meta_sizes(meta)
        with _Budget(_worker_budget()) as budget:
            steps = _block_steps(path, block_steps, budget.nbytes)
            row["plan"] = _split.plan(path, steps, meta) if split else None
            if row["plan"] is None:
                a, ops, blocks = _analyze(path, steps)
                row.update(analysis_row(a), ops=ops, blocks=blocks)
            row["budget"] = budget.nbytes
    except _ANALYZE_ERRORS as exc:
        row["error"] = _named(path, exc)
    except OSError as exc:  # a link loop, a file gone while read: the file's fault, kept like analyze's errors
        row["error"] = _named(path, exc)
    except MemoryError:
        row.update(error="MemoryError: the job needs more memory than this worker has", cache=False)
    except Exception as exc:  # a defect, not the trace's fault: say so, keep going, retry next run
        row.update(error=f"{type(exc).__name__}: {' '.join(str(exc).split())}", cache=False)
    row["seconds"] = time.perf_counter() - t0
    return row


def _named(path, exc):
    """The one-line error of ``exc``, led by the trace's path unless it names the file already (pyarrow's "Parquet
    file size is 0 bytes" does not).

    Examples
    --------
    >>> _named("runs/a.parquet", ValueError("Parquet file size is 0 bytes"))
    'runs/a.parquet: Parquet file size is 0 bytes'
    >>> _named("runs/a.csv", PermissionError(13, "Permission denied", "runs/a.csv"))
    "[Errno 13] Permission denied: 'runs/a.csv'"
    """
    text = " ".join(str(exc).split()) or type(exc).__name__
    names = {str(path), os.path.basename(str(path))}
    if isinstance(exc, OSError) and exc.filename is not None:
        names.add(str(exc.filename))
    return text if any(n and n in text for n in names) else f"{path}: {text}"


def _finish(job, row):
    """The stored row of ``job``: its identity, gpus and hours (the manifest's, else the layout file's)."""
    row = dict(row)
    gpus = job.gpus if job.gpus is not None else row.get("meta_gpus")
    hours = job.hours if job.hours is not None else row.get("meta_hours")
    waste = row.get("waste")
    lost = None if gpus is None or hours is None or waste is None else gpus * hours * waste
    row.update(job_id=job.job_id, path=job.path, gpus=gpus, hours=hours, gpu_hours_lost=lost)
    return row


@dataclass(frozen=True)
class FleetRun:
    """What :func:`run_fleet` did: the output folder, the counts, the tables and the figures.

    ``analysed``: jobs analysed by this run without an error; ``cached``:
    jobs a previous run had finished (skipped); ``errors``: rows with an error.

    Examples
    --------
    >>> FleetRun(out="fleet", jobs=3, analysed=2, cached=0, errors=1, seconds=0.5, tables=(), figures={})
    FleetRun(out='fleet', jobs=3, analysed=2, cached=0, errors=1, seconds=0.5, tables=(), figures={})
    """

    out: str
    jobs: int
    analysed: int
    cached: int
    errors: int
    seconds: float
    tables: tuple
    figures: dict


def _source_error(job):
    return {"error": job.error, "cache": False}


def _serial_rows(jobs, block_steps, done, total=None, tick=None):
    """``(job, row)`` for every job, analysed here one after another."""
    for job in jobs:
        yield job, _source_error(job) if job.error is not None else job_row(job.path, block_steps=block_steps, done=done)


def job_rows(paths, *, block_steps="auto", done=frozenset(), split=False):
    """:func:`job_row` of each path: one task of the fleet runs a chunk of small jobs.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> [r.get("format") for r in job_rows([public_trace_path(), "no-such.csv"])]
    ['op-level', None]
    """
    return [job_row(p, block_steps=block_steps, done=done, split=split) for p in paths]


def _lost(exc, n):
    """Error rows for the ``n`` jobs of a task the cluster lost (not kept: the next run retries them)."""
    name = type(exc).__name__
    if name == "KilledWorker":
        text = "KilledWorker: the job's task ended every worker process it ran on (out of memory?); not analysed"
    else:
        text = f"{name}: {' '.join(str(exc).split())}"
    return [{"error": text, "cache": False}] * n


def _chunks(jobs, total, threads):
    """Jobs in chunks (lists) for tasks: source errors alone, the rest about ``total / (8 threads)`` at a time,
    at most :data:`CHUNK_JOBS` and :data:`CHUNK_BYTES` of trace files each (a large trace is a chunk alone)."""
    size = max(1, min(CHUNK_JOBS, total // (8 * threads)))
    chunk, nbytes = [], 0
    for job in jobs:
        if job.error is not None:
            yield [job]
            continue
        try:
            b = os.stat(job.path).st_size
        except OSError:
            b = 0
        if chunk and (len(chunk) >= size or nbytes + b > CHUNK_BYTES):
            yield chunk
            chunk, nbytes = [], 0
        chunk.append(job)
        nbytes += b
    if chunk:
        yield chunk


def _next_done(ac, watch, tick):
    """The next finished task of ``ac``; meanwhile, about every 10 ms, ``watch.check()`` (a lost scheduler, no
    workers) and ``tick()`` (the progress lines)."""
    while not ac.has_ready():
        watch.check()
        tick()
        time.sleep(0.01)
    watch.finished()
    fut = next(ac)
    if fut.status == "cancelled":  # not the job's doing: the scheduler went away or dropped it; no row
        raise watch.lost()
    return fut


def _dask_rows(client, jobs, block_steps, done, total, watch, tick):
    """``(job, row)`` for every job, as their tasks finish; two chunks of jobs per worker thread in flight."""
    import uuid

    from distributed import as_completed

    threads = max(1, sum(client.nthreads().values()))
    window, run, count = 2 * threads, uuid.uuid4().hex[:8], 0
    done_arg = client.scatter([done], broadcast=True, hash=False)[0] if done else frozenset()  # one object, not each
    ac, pending, chunks = as_completed(), {}, _chunks(jobs, total, threads)
    while True:
        while len(pending) < window:
            chunk = next(chunks, None)
            if chunk is None:
                break
            if chunk[0].error is not None:
                yield chunk[0], _source_error(chunk[0])
                continue
            count += 1
            fut = client.submit(job_rows, [j.path for j in chunk], block_steps=block_steps, done=done_arg, split=True,
                                pure=False, key=f"fleet-jobs-{run}-{count}")
            pending[fut.key] = chunk
            ac.add(fut)
        if not pending:
            return
        fut = _next_done(ac, watch, tick)
        chunk = pending.pop(fut.key)
        if isinstance(chunk, tuple):  # a job's blocks, done
            yield chunk[0], _split_row(fut, chunk[1])
            continue
        try:
            rows = fut.result()
        except Exception as exc:
            if type(exc).__name__ == "KilledWorker" and len(chunk) > 1:  # find the one job that kills workers
                for job in chunk:
                    count += 1
                    one = client.submit(job_rows, [job.path], block_steps=block_steps, done=done_arg, pure=False,
                                        key=f"fleet-jobs-{run}-{count}")
                    pending[one.key] = [job]
                    ac.add(one)
                continue
            rows = _lost(exc, len(chunk))
        fut.release()
        for job, row in zip(chunk, rows):
            if row.get("plan") is None:
                yield job, row
                continue
            count += 1
            one = _split.submit(client, job.path, row["plan"], f"{run}-{count}", row["budget"], threads)
            pending[one.key] = (job, {**row, "t0": time.perf_counter()})
            ac.add(one)


def _split_row(fut, row):
    """The row of a job analysed in blocks: what its first task found, and the columns its last returned."""
    base = {k: v for k, v in row.items() if k not in ("plan", "t0")}
    try:
        return {**base, **fut.result(), "seconds": row["seconds"] + time.perf_counter() - row["t0"]}
    except _ANALYZE_ERRORS as exc:
        return {**base, "error": " ".join(str(exc).split())}
    except Exception as exc:
        return {**base, **_lost(exc, 1)[0]}
    finally:
        fut.release()


class _Rows:
    """Where the rows come from: this process (``workers=0``), a running cluster (``address``, or the address in
    ``scheduler_file``; :func:`~straggle_edu.fleet.cluster.connect`), or a new LocalCluster; closed on exit."""

    def __init__(self, address, origin, workers, timeout, scheduler_file=None):
        self.address, self.origin, self.workers, self.timeout = address, origin, workers, timeout
        self.scheduler_file = scheduler_file
        self.client = self.cluster = None

    def __enter__(self):
        if self.origin is None and self.workers == 0:
            return _serial_rows
        if importlib.util.find_spec("distributed") is None:
            raise missing_dask()
        if self.origin is None:
            self.client, self.cluster = local_cluster(self.workers)
            self.address = self.cluster.scheduler_address
            try:
                check_signals()  # a Ctrl-C that distributed dropped while the cluster started
            except BaseException:
                self.client.close()
                close_local(self.cluster, hurry=True)
                raise
        else:
            self.client, self.address = connect(self.address, self.origin, self.timeout, self.scheduler_file)
        watch = Watch(self.client, self.address, self.timeout)

        def rows(jobs, block_steps, done, total, tick):
            return _dask_rows(self.client, jobs, block_steps, done, total, watch, tick)

        return rows

    def __exit__(self, kind, value, tb):
        if self.client is not None and self.client.status == "running":
            self.client.close()
        elif self.client is not None:  # it lost its scheduler: stop its attempts to reconnect, without their traceback
            dask_log = logging.getLogger("distributed.client")
            level = dask_log.level
            dask_log.setLevel(logging.CRITICAL + 1)
            try:
                self.client.close(timeout=2)
            finally:
                dask_log.setLevel(level)
        if self.cluster is not None:
            close_local(self.cluster, hurry=kind is not None)


def _resolve(store, job, row):
    """A task's row as stored: a cached job's stored row, with this job's identity; None when it vanished."""
    if row.get("cached"):
        kept = store.cached(row["content_hash"])
        return None if kept is None else _finish(job, kept)
    return _finish(job, row)


def _check(scheduler, scheduler_file, workers, block_steps, refresh, timeout):
    if refresh is not None:
        _validate.nonnegative("refresh", refresh)
    _validate.positive("timeout", timeout)
    given = "scheduler" if scheduler is not None else "scheduler_file" if scheduler_file is not None else None
    if given and workers is not None:
        raise ValueError(f"workers must not be given with a {given} (its cluster has its workers), got {workers}")
    if workers is not None:
        _validate.whole("workers", workers, low=0)
    if block_steps not in ("auto", None):
        _validate.whole("block_steps", block_steps, low=1)
    if scheduler is not None and not str(scheduler).startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise ValueError(f"scheduler must be an address like tcp://HOST:PORT, got {scheduler!r}")


def run_fleet(sources, out, *, scheduler=None, scheduler_file=None, workers=None, follow_links=False,
              block_steps="auto", progress=True, refresh=REFRESH_SECONDS, timeout=TIMEOUT_SECONDS,
              log_every=LOG_SECONDS):
    """Analyse every job of ``sources`` into the folder ``out``; resume what a previous run there finished.

    Parameters
    ----------
    sources : iterable of str or os.PathLike
        Directories, globs, manifests, trace files (see :mod:`~straggle_edu.fleet.sources`).
    out : str or os.PathLike
        The output folder (made when missing, once the sources are walked and the cluster is there).
    scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler.
    scheduler_file : str or os.PathLike, optional
        The JSON file a scheduler wrote (``dask scheduler --scheduler-file``); used when ``scheduler`` is not
        given. Without either, ``$DASK_SCHEDULER_ADDRESS``, unless ``workers`` is given
        (:func:`~straggle_edu.fleet.cluster.scheduler_address`).
    workers : int, optional
        Worker processes of the LocalCluster (default: one per core); 0 runs in this process, without Dask.
        Not given, with no cluster named, a fleet whose traces hold less than :data:`~straggle_edu.fleet.cluster.SMALL_FLEET_BYTES` runs in
        this process too (:func:`small_fleet`).
    follow_links : bool
        Analyse paths that leave their SOURCE.
    block_steps : "auto", int or None
        As ``analyze --block-steps``; ``"auto"`` also cuts a job that would not fit a worker's memory.
    progress : bool or str
        ``True`` (or ``"bar"``): a progress bar (tqdm) of jobs done, with the ETA; ``"log"``: a line every
        ``log_every`` seconds (:mod:`~straggle_edu.fleet._progress`); ``False``: nothing.
    refresh : float or None
        Seconds between rewrites of ``DIR/jobs.parquet`` and ``DIR/jobs.csv`` from the jobs finished so far
        (the first one after that long; see :class:`~straggle_edu.fleet.store.Refresh`); None: at the end only.
    timeout : float
        Seconds for the connection to a running scheduler and the wait for its first worker, together; and how
        long a cluster may stay without workers during the run.
    log_every : float
        Seconds between progress lines with ``progress="log"``.

    Returns
    -------
    FleetRun

    Raises
    ------
    ValueError
        Bad options or SOURCE, before any work and before ``out`` is made.
    ~straggle_edu.fleet.cluster.ClusterError
        The cluster refused, did not answer, had no worker, or was lost; the tables then hold the jobs finished.
    ~straggle_edu.fleet.cluster.Terminated
        SIGTERM, under :func:`~straggle_edu.fleet.cluster.terminating`; the tables then hold the jobs finished.

    Examples
    --------
    >>> import tempfile
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> run = run_fleet([public_trace_path()], tempfile.mkdtemp(), workers=0, progress=False)
    >>> run.jobs, run.analysed, run.errors, round(run.figures["slowdown_quantiles"]["max"], 4)
    (1, 1, 0, 1.1796)
    """
    _check(scheduler, scheduler_file, workers, block_steps, refresh, timeout)
    _validate.positive("log_every", log_every)
    t0 = time.perf_counter()
    address, origin = scheduler_address(scheduler, scheduler_file, workers)
    if Path(out).exists() and not Path(out).is_dir():
        raise NotADirectoryError(f"--out must be a folder, got {str(out)!r} (a file)")
    total = count_jobs(expand(sources, follow_links=follow_links, skip=[out]))  # creates nothing
    if origin is None and workers is None and small_fleet(expand(sources, follow_links=follow_links, skip=[out])):
        workers = 0
        if progress:
            say(f"fleet: {total} job{'' if total == 1 else 's'} under {SMALL_FLEET_BYTES // 2**20} MiB of traces, "
                "analysed in this process (a LocalCluster would take longer to start; --workers N starts one)")
    counts = {"analysed": 0, "cached": 0}
    with _Rows(address, origin, workers, timeout, scheduler_file) as rows_of:
        store = Store(out)
        spool, shown = Spool(store.out), _progress(progress, total, log_every)
        try:
            _rows(store, spool, counts, shown, rows_of, sources, follow_links, block_steps, total, refresh)
            tables = tuple(str(p) for p in store.write_tables(spool))
        except (ClusterError, Terminated) as exc:
            _stopped(store, spool, exc, total)
        except BaseException:
            spool.close()
            raise
    try:
        figures = fleet_figures(list(spool), demo=demo_of(sources))
        atomic_write(store.out / "fleet.json", json.dumps(figures, indent=1).encode())
    finally:
        spool.close()
    return FleetRun(out=str(store.out), jobs=total, analysed=counts["analysed"], cached=counts["cached"],
                    errors=figures["errors"], seconds=time.perf_counter() - t0, tables=tables, figures=figures)


def _job_bytes(path):
    """The bytes of a job's trace: its file, or the files directly in its folder (0 where it cannot be read)."""
    try:
        st = os.stat(path)
        if not os.path.isdir(path):
            return st.st_size
        with os.scandir(path) as entries:
            return sum(e.stat().st_size for e in entries if e.is_file())
    except OSError:
        return 0  # its row will name the error


def small_fleet(jobs, limit=SMALL_FLEET_BYTES):
    """Whether the traces of ``jobs`` (from :func:`~straggle_edu.fleet.sources.expand`) hold less than ``limit``
    bytes in all; it stops reading sizes at the limit.

    Examples
    --------
    >>> from straggle_edu.fleet.sources import Job
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> small_fleet([Job("a", str(public_trace_path()))]), small_fleet([Job("a", str(public_trace_path()))], limit=1)
    (True, False)
    """
    total = 0
    for job in jobs:
        total += _job_bytes(job.path)
        if total >= limit:
            return False
    return True


def _rows(store, spool, counts, shown, rows_of, sources, follow_links, block_steps, total, refresh):
    """Analyse (or reuse) every job, keep its row, rewrite the tables now and then, show the progress."""
    done = frozenset(store.done())
    tables_so_far = Refresh(store, spool, refresh)
    jobs = expand(sources, follow_links=follow_links, skip=[store.out])
    try:
        for job, row in rows_of(jobs, block_steps, done, total, shown.tick):
            check_signals()
            error = _record(store, spool, counts, job, row)
            tables_so_far()
            shown.update(error=error)
    except BaseException:
        shown.stop()  # the bar ends its line before 'interrupted', 'terminated' or the error line is printed
        raise
    shown.close()


def _stopped(store, spool, exc, total):
    """The cluster failed or SIGTERM came: write the tables of the jobs that finished, close, and raise again
    (a ClusterError with what was kept added to its one line)."""
    try:
        written = store.write_tables(spool) if len(spool) else []
    finally:
        spool.close()
    if isinstance(exc, ClusterError):
        kept = (f"; the {len(spool)} of {total} jobs finished are in {' and '.join(map(str, written))}" if written
                else "; no job finished")
        raise ClusterError(f"{exc}{kept}; run the same command again to analyse the rest") from None
    raise Terminated(len(spool), total, written) from None


def _record(store, spool, counts, job, row):
    """Keep one finished job: its part file (for resume) first, then its line in this run's rows; return whether
    the row holds an error."""
    resolved = _resolve(store, job, row)
    if resolved is None:  # its stored row vanished since the run began (or an older version wrote it): analyse it
        resolved = row = _finish(job, job_row(job.path))
    if row.get("cached"):
        counts["cached"] += 1
    else:
        if resolved.get("cache") and resolved.get("content_hash"):
            store.put(resolved)
        counts["analysed"] += resolved.get("error") is None
    spool.append(clean_row(resolved))
    return resolved.get("error") is not None
