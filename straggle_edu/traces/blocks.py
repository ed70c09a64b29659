"""Reading and analysing an op-level trace block by block of steps.

A job of 16,384 ranks traced for 50 steps holds about 5 x 10^7 ops: several
GB as arrays, more than a laptop has. Its steps are independent until the
very end of the analysis (only the ideal durations and the rankings look at
the whole trace), so the file is read a block of whole steps at a time, each
block is checked and modelled on its own, and
:func:`~straggle_edu.traces.whatif.analyze_blocks` combines them into the
same :class:`~straggle_edu.traces.Analysis` as the whole trace would give.

:func:`iter_op_blocks`
    a ``.parquet`` or ``.csv`` trace -> one :class:`OpTrace` per block of
    steps. A file sorted by step (the artifact's traces are) is read once,
    batch by batch; an unsorted one is read once per block, keeping each
    block's steps.
:func:`analyze_op_file`
    the analysis of a trace file, in one block when it is small and block by
    block when it is large (its work spilled to a temporary folder when it
    would take more than a third of the memory budget).

Peak memory is about 250 bytes per op of one block (the rows, the model's
cells and the replays' variants), plus about 10 bytes per op of the whole
trace (its work and microbatches, kept for the later passes) in memory when
that takes at most a third of the memory budget, else on disk
(:data:`KEPT_BYTES_PER_OP`).
Needs pyarrow for streaming; without it the file is read whole.

The analysis allocates and frees arrays of megabytes by the thousand; how the
process gets its memory decides how much of its CPU the kernel spends on page
faults (:func:`batch_memory`, :func:`keep_freed_memory`).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np

from .._validate import whole
from ._kept import KeptRows
from ._table import TraceError, _arrow_columns, arrow_numpy, column_error, display_path, missing_pyarrow
from .optrace import find_meta, op_trace_from_columns, read_op_trace

__all__ = ["iter_op_blocks", "analyze_op_file", "program_sample", "count_rows", "auto_block_steps", "block_ranges",
           "read_op_block", "read_op_blocks", "read_block_tables", "op_block", "step_row_groups", "sample_rows",
           "sample_row_groups",
           "batch_memory", "keep_freed_memory", "MALLOC_ENV", "WORKER_ENV", "BLOCK_ROWS", "STREAM_ROWS", "KEPT_BYTES_PER_OP"]

BLOCK_ROWS = 1_000_000  # "auto": about this many ops per block
STREAM_ROWS = 6_000_000  # "auto": traces with more ops than this are analysed block by block
KEPT_BYTES_PER_OP = 10  # the blocks' work (8) and microbatches (1 or 2), kept for the later passes
_BATCH = 262_144  # rows per read batch
_WHOLE_GROUP = 4 * _BATCH  # a Parquet row group of up to this many rows is read in one piece


_MEMORY = {"lock": threading.Lock(), "users": 0, "saved": None}


@contextlib.contextmanager
def batch_memory():
    """Inside the block, memory is reused rather than faulted in anew: a large trace's analysis allocates and frees
    arrays of megabytes by the thousand, and each page the process gets fresh from the kernel costs a page fault.

    - pyarrow's buffers come from the C library's ``malloc`` (its system pool), which reuses what the last batch
      freed; pyarrow's default pool (mimalloc) gives it back to the kernel, and every batch faulted it in again.
      The Parquet reader decodes into Arrow's C++ default pool, which this does not change: a process that exists
      to analyse sets that too, before pyarrow is imported (:func:`keep_freed_memory`);
    - numpy asks for no transparent huge pages (it calls ``madvise(MADV_HUGEPAGE)`` on every array of 4 MiB or
      more): where the kernel compacts memory to serve them (``defrag`` set to ``madvise``, as on most
      distributions), a busy machine paid for the compaction in each fault.

    On the 16,384-rank x 50-step trace (a loaded 2-core machine), ``analyze``'s system time fell from 4.3 s, 37% of
    its CPU, to about 2 s (``benchmarks/bench_fleet.py --huge``). The settings are the process's: they are set
    when the first block that uses them starts (in any thread) and put back when the last ends.

    Examples
    --------
    >>> import pyarrow as pa
    >>> with batch_memory():
    ...     pa.default_memory_pool().backend_name
    'system'
    """
    with _MEMORY["lock"]:
        if _MEMORY["users"] == 0:
            _MEMORY["saved"] = _memory_settings(None)
        _MEMORY["users"] += 1
    try:
        yield
    finally:
        with _MEMORY["lock"]:
            _MEMORY["users"] -= 1
            if _MEMORY["users"] == 0:
                _memory_settings(_MEMORY["saved"])


def _memory_settings(saved):
    """Put back ``saved`` (pyarrow's pool, numpy's huge-page flag), or (None) set the batch settings and return the
    ones they replace."""
    try:
        import pyarrow as pa
    except ImportError:
        pa = None
    hugepage = getattr(getattr(np, "_core", None), "multiarray", None)
    hugepage = getattr(hugepage, "_set_madvise_hugepage", None)  # numpy >= 2 (numpy.core before)
    if saved is not None:
        pool, madvise = saved
        if pa is not None and pool is not None:
            pa.set_memory_pool(pool)
        if hugepage is not None and madvise is not None:
            hugepage(madvise)
        return None
    pool = None
    if pa is not None:
        pool = pa.default_memory_pool()
        pa.set_memory_pool(pa.system_memory_pool())
    return pool, hugepage(False) if hugepage is not None else None


# glibc's malloc, for a process that analyses large traces: arrays up to 32 MiB (the most glibc allows) come from
# its heap, and up to 256 MiB of freed heap is kept for the next block instead of going back to the kernel. By
# default the threshold grows only after a large array is freed, and a freed top of the heap above twice it goes
# back: each block's arrays were then faulted in anew. The same settings as environment variables (read by glibc
# when a process starts: the fleet's workers). And Arrow's own default pool, which the Parquet reader decodes into
# whatever pyarrow.set_memory_pool says (read when pyarrow is first imported): the C library's malloc, so that the
# decoded columns are reused from the heap too. Its mimalloc gave freed pages back (MADV_DONTNEED) and faulted its
# 1 GiB arena in as huge pages: about 0.1 s of analyze's system time on the 16,384-rank trace.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(256 * 2**20),
              "ARROW_DEFAULT_MEMORY_POOL": "system"}
# And, for the fleet's worker processes only, one malloc arena: a thread other than the main one (a Dask worker's
# task thread) otherwise gets an arena of its own, built of heaps of at most 64 MiB that a block's arrays outgrow
# and that are deleted as they empty. analyze run in a thread faulted in 350,000 pages rather than 250,000 (with
# one arena, 240,000); the fleet of the 16,384-rank trace, 0.93-1.1 million rather than 0.41 million. Never in a
# process that runs other people's code: torch's DDP ranks crashed (SIGSEGV) in 3 runs of 3 under it.
WORKER_ENV = {**MALLOC_ENV, "MALLOC_ARENA_MAX": "1"}


def keep_freed_memory(one_arena=False):
    """Set :data:`MALLOC_ENV` in this process (glibc's ``mallopt``; elsewhere nothing); return whether it did.

    For a process that exists to analyse (``straggle-edu analyze``): the settings hold until it exits, and it keeps
    up to 256 MiB of freed memory rather than give it back. On the 16,384-rank x 50-step trace they took
    ``analyze``'s page faults from about 950,000 to 330,000, with :func:`batch_memory`. Arrow's default pool is
    set (unless ``ARROW_DEFAULT_MEMORY_POOL`` is) for a pyarrow imported after this call.

    ``one_arena``: also :data:`WORKER_ENV`'s one malloc arena, for the threads started after this call (the
    ``fleet`` command's process, from which its workers' fork server is forked, and that server). Never in a
    process that runs other people's code (:data:`WORKER_ENV`).

    Examples
    --------
    In a process of its own (the settings are the process's, for good):

    >>> import subprocess, sys
    >>> code = "from straggle_edu.traces.blocks import keep_freed_memory; print(keep_freed_memory())"
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() in ("True", "False")
    True
    """
    import ctypes
    import os
    import sys

    if not sys.platform.startswith("linux"):
        return False
    if "pyarrow" not in sys.modules:  # pyarrow reads it once, on import
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", MALLOC_ENV["ARROW_DEFAULT_MEMORY_POOL"])
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    options = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_MMAP_THRESHOLD_": -3}  # M_* of malloc.h
    if one_arena:
        options["MALLOC_ARENA_MAX"] = -8
    settings = {**MALLOC_ENV, **WORKER_ENV}
    return all([bool(mallopt(option, int(settings[name]))) for name, option in options.items()])


def count_rows(path):
    """The number of ops in a trace file: exact for Parquet, estimated from the size for CSV.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> count_rows(public_trace_path()) > 6000   # 6,784 ops in about 0.5 MB
    True
    """
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    lines = max(1, head.count(b"\n") - 1)
    return int(path.stat().st_size / (len(head) / lines)) if len(head) else 0


def _batches(path, columns=None):
    """The file as pyarrow RecordBatches, in file order.

    A Parquet row group of up to :data:`_WHOLE_GROUP` rows comes whole, as
    one batch (a block's columns are then copied once on their way to
    numpy, not once per batch and again to join them); a larger one in
    batches of :data:`_BATCH` rows. Decoded on one thread: about 35% less
    CPU time than pyarrow's thread pool, which on two cores bought little.
    """
    try:
        import pyarrow as pa  # noqa: F401
    except ImportError:
        raise missing_pyarrow(display_path(path), "reading a trace block by block") from None
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        for rg in range(f.metadata.num_row_groups):
            yield from _group_batches(f, rg, columns)
        return
    import pyarrow.csv as pcsv

    convert = pcsv.ConvertOptions(strings_can_be_null=False, include_columns=columns)
    parse = pcsv.ParseOptions(invalid_row_handler=lambda row: "skip" if row.text.lstrip().startswith("#") else "error")
    yield from pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 24), parse_options=parse,
                             convert_options=convert)


def _group_batches(f, rg, columns=None):
    """Row group ``rg`` of the ParquetFile ``f`` as :func:`_batches` reads it: whole up to :data:`_WHOLE_GROUP` rows,
    else :data:`_BATCH` rows at a time; decoded on one thread."""
    if f.metadata.row_group(rg).num_rows <= _WHOLE_GROUP:
        return f.read_row_group(rg, columns=columns, use_threads=False).to_batches()
    return f.iter_batches(batch_size=_BATCH, row_groups=[rg], columns=columns, use_threads=False)


def _step_order(path):
    """The sorted step ids of the file, and whether its rows come in step order."""
    seen, last, ordered = [], None, True
    for batch in _batches(path, ["step"]):
        s = arrow_numpy(batch.column(0))
        if not len(s):
            continue
        if not np.issubdtype(s.dtype, np.integer):
            raise TraceError(f"{display_path(path)}: column 'step': expected whole numbers, got {s.dtype} values")
        rising = bool((s[1:] >= s[:-1]).all())
        ordered &= rising and (last is None or s[0] >= last)
        last = s[-1]
        seen.append(s[np.r_[True, s[1:] != s[:-1]]] if rising else np.unique(s))  # a sorted batch needs no sort
    if not seen:
        raise TraceError(f"{display_path(path)}: the file has no rows")
    return np.unique(np.concatenate(seen)), ordered


def _block(path, tables, meta, meta_source):
    """One block's rows (a list of pyarrow tables) as a checked OpTrace."""
    import pyarrow as pa

    table = pa.concat_tables(tables).unify_dictionaries()
    return op_trace_from_columns(_arrow_columns(table), source=str(path), meta=meta, meta_source=meta_source)


def _sorted_blocks(path, bounds, meta, meta_source):
    """One read: batches are cut at block boundaries (the rows come in step order)."""
    import pyarrow as pa

    pending, b = [], 0
    for batch in _batches(path):
        table = pa.Table.from_batches([batch])
        s = arrow_numpy(table.column("step"))
        while b < len(bounds) and s[-1] >= bounds[b]:  # the block ending before bounds[b] is complete
            cut = int(np.searchsorted(s, bounds[b]))
            pending.append(table.slice(0, cut))
            yield _block(path, pending, meta, meta_source)
            pending, table, s, b = [], table.slice(cut), s[cut:], b + 1
        pending.append(table)
    yield _block(path, pending, meta, meta_source)


def _unsorted_blocks(path, steps, meta, meta_source):
    """One read per block, keeping the rows of the block's steps."""
    import pyarrow as pa

    for block in steps:
        lo, hi = block[0], block[-1]
        parts = []
        for batch in _batches(path):
            s = arrow_numpy(batch.column(batch.schema.get_field_index("step")))
            keep = (s >= lo) & (s <= hi)
            if keep.any():
                parts.append(pa.Table.from_batches([batch]).filter(pa.array(keep)))
        yield _block(path, parts, meta, meta_source)


def iter_op_blocks(path, *, block_steps, meta=None, order=None):
    """Read an op-level trace as :class:`OpTrace` blocks of ``block_steps`` whole steps each.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.parquet`` or ``.csv`` trace in the artifact schema.
    block_steps : int
        Steps per block, >= 1 (the last block may hold fewer).
    meta : str or os.PathLike, optional
        The layout file, as for :func:`~straggle_edu.traces.optrace.read_op_trace`.
    order : tuple, optional
        The file's sorted step ids and whether its rows come in step order,
        when the caller has read them (:func:`block_ranges` takes the same).

    Yields
    ------
    OpTrace
        Each checked as a trace of its own (row numbers in messages count
        from the block's first row).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> [len(b.steps) for b in iter_op_blocks(public_trace_path(), block_steps=10)]
    [10, 10, 10, 2]
    """
    path = Path(path)
    block_steps = whole("block_steps", block_steps)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    meta_data, meta_source = find_meta(path, meta)
    steps, ordered = _step_order(path) if order is None else order
    blocks = [steps[i:i + block_steps] for i in range(0, len(steps), block_steps)]
    if ordered:
        yield from _sorted_blocks(path, [b[0] for b in blocks[1:]], meta_data, meta_source)
    else:
        yield from _unsorted_blocks(path, blocks, meta_data, meta_source)


def program_sample(path, *, meta=None, dp_ranks=64, parts=None):
    """The ops of the first ``dp_ranks`` DP ranks over every step, as one OpTrace (read in one pass).

    The replay orders a stage's ops by their median times over every step
    and the first 64 DP ranks, so this sample's dependency model is the
    whole trace's (for traces of up to 64 DP ranks it is the whole trace).
    ``parts``: the sampled rows already read (:func:`sample_rows`), in file order.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> program_sample(public_trace_path(), dp_ranks=1)
    OpTrace(ops=3392, dp=1, pp=4, steps=32, source='...trace-ST.csv')
    """
    path = Path(path)
    dp_ranks = whole("dp_ranks", dp_ranks)
    meta_data, meta_source = find_meta(path, meta)
    if parts is None:
        parts = sample_rows(path, dp_ranks=dp_ranks)
    if not any(t.num_rows for t in parts):
        raise column_error(display_path(path), "dp_rank", layout=True,
                           problem=f"no row with a dp_rank from 0 to {dp_ranks - 1} (DP ranks count from 0)")
    pp = {k: v for k, v in (meta_data or {}).items() if k in ("pp_size", "vpp_size")}
    return _block(path, parts, pp or None, meta_source)


def sample_rows(path, row_groups=None, *, dp_ranks=64):
    """The rows of the first ``dp_ranks`` DP ranks, as pyarrow tables in file order; of some row groups only.

    :func:`program_sample` of the tables of consecutive row groups, concatenated in
    file order, is :func:`program_sample` of the whole file: the reading can be shared.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> sum(t.num_rows for t in sample_rows(public_trace_path(), dp_ranks=1))
    3392
    """
    path = Path(path)
    if row_groups is None and path.suffix.lower() in (".parquet", ".pq"):
        row_groups = sample_row_groups(path, dp_ranks)
    if row_groups is None:
        batches = _batches(path)
    else:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        batches = (batch for rg in row_groups for batch in _group_batches(f, rg))
    rows = KeptRows()
    for batch in batches:
        d = arrow_numpy(batch.column(batch.schema.get_field_index("dp_rank")))
        rows.add(batch, d < dp_ranks)
    return rows.tables()


def sample_row_groups(path, dp_ranks=64):
    """The row groups of a Parquet file that may hold rows of the first ``dp_ranks`` DP ranks (the only ones
    :func:`sample_rows` reads): all but those whose statistics say that their smallest dp_rank is ``dp_ranks`` or
    more. In a file written in step and DP-rank order that is about half of them, when a row group holds less
    than a step (the 16,384-rank trace: 25 of 50).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from straggle_edu.traces.optrace import read_op_trace, public_trace_path, write_trace
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "trace-ST.parquet"
    >>> t = read_op_trace(public_trace_path())
    >>> _ = write_trace(t, p)
    >>> import pyarrow.parquet as pq
    >>> table = pq.read_table(p)
    >>> pq.write_table(table.sort_by([("dp_rank", "ascending")]), p, row_group_size=table.num_rows // 4)
    >>> sample_row_groups(p, dp_ranks=1)   # 2 DP ranks; row groups 2 and 3 hold DP rank 1 only
    [0, 1]
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise missing_pyarrow(display_path(path), "reading a trace block by block") from None
    return [rg for rg, r in enumerate(_group_ranges(pq.ParquetFile(path), "dp_rank")) if r is None or r[0] < dp_ranks]


def _group_ranges(f, name):
    """``[(min, max), ...]`` of column ``name`` in each row group of the ParquetFile ``f``, as ints (None where the
    file has no such column, or no numbers for its statistics)."""
    col = f.schema_arrow.get_field_index(name)
    out = []
    for rg in range(f.metadata.num_row_groups):
        st = f.metadata.row_group(rg).column(col).statistics if col >= 0 else None
        ok = st is not None and st.has_min_max and all(isinstance(v, (int, float)) for v in (st.min, st.max))
        out.append((int(st.min), int(st.max)) if ok else None)
    return out


def auto_block_steps(path, steps=None):
    """What ``block_steps="auto"`` picks: None (read whole) up to :data:`STREAM_ROWS` ops, else steps of about
    :data:`BLOCK_ROWS` ops (``steps``: the file's step ids, when the caller has read them).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> auto_block_steps(public_trace_path()) is None
    True
    """
    path = Path(path)
    rows = count_rows(path) if path.exists() else 0
    if rows <= STREAM_ROWS:
        return None
    n_steps = len(_step_order(path)[0] if steps is None else steps)
    return max(1, int(BLOCK_ROWS // max(1, rows // n_steps)))


def block_ranges(path, block_steps, order=None):
    """``[(first step, last step), ...]`` of the blocks :func:`iter_op_blocks` cuts, and whether the file is in step order.

    ``order``: what ``_step_order`` found, when the caller has it (the file's steps are then not read again).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> block_ranges(public_trace_path(), 10)   # the artifact's step ids, 32 steps
    ([(23, 266), (273, 530), (535, 1039), (1043, 1048)], True)
    """
    steps, ordered = _step_order(Path(path)) if order is None else order
    block_steps = whole("block_steps", block_steps)
    return [(int(steps[i]), int(steps[min(i + block_steps, len(steps)) - 1])) for i in range(0, len(steps), block_steps)], ordered


def read_op_block(path, first, last, *, meta=None):
    """The ops of steps ``first..last`` of a trace file, as the :class:`OpTrace` that :func:`iter_op_blocks` yields
    for that block; a Parquet file's row groups outside the steps are not read.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> [b.steps.tolist() for b in iter_op_blocks(public_trace_path(), block_steps=30)][1]
    [1043, 1048]
    >>> read_op_block(public_trace_path(), 1043, 1048).steps.tolist()
    [1043, 1048]
    """
    import pyarrow as pa

    path = Path(path)
    meta_data, meta_source = find_meta(path, meta)
    parts = []
    for batch in _step_batches(path, first, last):
        s = arrow_numpy(batch.column(batch.schema.get_field_index("step")))
        keep = (s >= first) & (s <= last)
        if keep.any():
            parts.append(pa.Table.from_batches([batch]).filter(pa.array(keep)))
    return _block(path, parts, meta_data, meta_source)


def read_op_blocks(path, ranges, *, meta=None):
    """:func:`read_op_block` of each ``(first, last)`` of ``ranges`` (consecutive blocks), the file read once for all.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> [b.steps.tolist() for b in read_op_blocks(public_trace_path(), [(23, 1039), (1043, 1048)])][1]
    [1043, 1048]
    """
    return [op_block(path, tables, meta=meta) for tables in read_block_tables(path, ranges)]


def read_block_tables(path, ranges):
    """The rows of each ``(first, last)`` of ``ranges`` as pyarrow tables (for :func:`op_block`), the file read once.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> blocks = read_block_tables(public_trace_path(), [(23, 1039), (1043, 1048)])
    >>> [sum(t.num_rows for t in b) for b in blocks]
    [6360, 424]
    """
    import pyarrow as pa

    path = Path(path)
    lo, hi = ranges[0][0], ranges[-1][1]
    tables, steps = [], []
    for batch in _step_batches(path, lo, hi):
        s = arrow_numpy(batch.column(batch.schema.get_field_index("step")))
        table, s = _rows_between(pa.Table.from_batches([batch]), s, lo, hi)
        if table.num_rows:
            tables.append(table)
            steps.append(s)
    blocks = []
    for first, last in ranges:
        parts = [_rows_between(t, s, first, last)[0] for t, s in zip(tables, steps)]
        blocks.append([t for t in parts if t.num_rows])
    return blocks


def _rows_between(table, s, first, last):
    """The rows of ``table`` (``s``: its steps) of steps ``first..last``, and their steps: a slice (no copy) when the
    steps rise, as a Parquet file written in step order gives them; else a filter, in the same row order.

    Examples
    --------
    >>> import numpy as np, pyarrow as pa
    >>> s = np.array([1, 2, 2, 3])
    >>> t, kept = _rows_between(pa.table({"step": s}), s, 2, 2)
    >>> t.column("step").to_pylist(), kept.tolist()
    ([2, 2], [2, 2])
    """
    import pyarrow as pa

    if len(s) < 2 or (s[1:] >= s[:-1]).all():
        i, j = np.searchsorted(s, first, "left"), np.searchsorted(s, last, "right")
        return table.slice(i, j - i), s[i:j]
    keep = (s >= first) & (s <= last)
    return table.filter(pa.array(keep)), s[keep]


def op_block(path, tables, *, meta=None):
    """One block's rows (pyarrow tables, as :func:`read_block_tables` gives them) as its checked :class:`OpTrace`.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> op_block(public_trace_path(), read_block_tables(public_trace_path(), [(1043, 1048)])[0]).steps.tolist()
    [1043, 1048]
    """
    meta_data, meta_source = find_meta(Path(path), meta)
    return _block(Path(path), tables, meta_data, meta_source)


def step_row_groups(path):
    """``[(min step, max step), ...]`` of each row group of a Parquet file (None where it has no statistics).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from straggle_edu.traces.optrace import read_op_trace, public_trace_path, write_trace
    >>> p = write_trace(read_op_trace(public_trace_path()), pathlib.Path(tempfile.mkdtemp()) / "trace-ST.parquet")
    >>> step_row_groups(p)
    [(23, 1048)]
    """
    import pyarrow.parquet as pq

    return _group_ranges(pq.ParquetFile(path), "step")


def _step_batches(path, first, last):
    """The file's batches that may hold steps first..last: for Parquet, only the row groups whose statistics say so."""
    if path.suffix.lower() not in (".parquet", ".pq"):
        yield from _batches(path)
        return
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    for rg, r in enumerate(_group_ranges(f, "step")):
        if r is None or not (r[1] < first or r[0] > last):
            yield from _group_batches(f, rg)


def analyze_op_file(path, *, meta=None, block_steps="auto", attribution="auto", progress=False, ideal="artifact"):
    """What-if analysis of an op-level trace file, block by block when it is large.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.parquet`` or ``.csv`` trace.
    meta : str or os.PathLike, optional
        The layout file.
    block_steps : int, "auto" or None
        Steps per block; ``"auto"`` reads traces of up to :data:`STREAM_ROWS`
        ops whole and cuts larger ones into blocks of about
        :data:`BLOCK_ROWS` ops; None (or 0) reads the trace whole.
    attribution, progress, ideal
        As for :func:`~straggle_edu.traces.whatif.analyze_ops`.

    Returns
    -------
    Analysis
        The same as the whole trace gives (to rounding).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> a = analyze_op_file(public_trace_path(), block_steps=4)
    >>> round(a.slowdown, 4), a.details["blocks"]   # the same S as in one block
    (1.1796, 8)
    """
    from .whatif import analyze_ops

    path = Path(path)
    with batch_memory():  # from the first read of the file (its steps), so that no read uses pyarrow's own pool
        order = None
        if block_steps == "auto":
            order = _step_order(path) if path.exists() and count_rows(path) > STREAM_ROWS else None
            block_steps = auto_block_steps(path, None if order is None else order[0])
        if not block_steps:
            return analyze_ops(read_op_trace(path, meta=meta), attribution=attribution, progress=progress, ideal=ideal)
        return _analyze_in_blocks(path, whole("block_steps", block_steps), order, meta, attribution, progress, ideal)


def _analyze_in_blocks(path, block_steps, order, meta, attribution, progress, ideal):
    """:func:`analyze_op_file` block by block (``order``: the file's steps, when read already)."""
    from .replay import build_model
    from .whatif import analyze_blocks

    with tempfile.TemporaryDirectory(prefix="straggle-edu-blocks-") as folder:
        program = build_model(program_sample(path, meta=meta))  # its wiring only: the sample's cells go
        program = replace(program, work=None, start=None, duration=None, node_mb=None, cell_of_row=None)
        blocks = iter_op_blocks(path, block_steps=block_steps, meta=meta, order=order)
        return analyze_blocks(blocks, program=program, attribution=attribution, progress=progress, ideal=ideal,
                              spill=_spill(path, folder))


def _spill(path, folder):
    """Where the blocks' work waits for the later passes: in memory (None) when it takes at most a third of the
    memory budget, else in ``folder``. On the 16,384-rank trace, writing it out (0.4 GB, to the page cache) saves
    0.1 GB of a 1.2 GB peak.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> _spill(public_trace_path(), "spill") is None
    True
    """
    from .._validate import memory_budget

    return None if count_rows(path) * KEPT_BYTES_PER_OP <= memory_budget() // 3 else folder
