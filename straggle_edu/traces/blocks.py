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
    block (work spilled to a temporary folder) when it is large.

Peak memory is about 250 bytes per op of one block (the rows, the model's
cells and the replays' variants), plus 12 bytes per op of the whole trace
on disk. Needs pyarrow for streaming; without it the file is read whole.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .._validate import whole
from ._table import TraceError, _arrow_columns, arrow_numpy, display_path, missing_pyarrow
from .optrace import find_meta, op_trace_from_columns, read_op_trace

__all__ = ["iter_op_blocks", "analyze_op_file", "program_sample", "count_rows", "auto_block_steps", "block_ranges",
           "read_op_block", "read_op_blocks", "read_block_tables", "op_block", "step_row_groups", "sample_rows",
           "BLOCK_ROWS", "STREAM_ROWS"]

BLOCK_ROWS = 1_000_000  # "auto": about this many ops per block
STREAM_ROWS = 6_000_000  # "auto": traces with more ops than this are analysed block by block
_BATCH = 262_144  # rows per read batch
_WHOLE_GROUP = 4 * _BATCH  # a Parquet row group of up to this many rows is read in one piece


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
            if f.metadata.row_group(rg).num_rows <= _WHOLE_GROUP:
                yield from f.read_row_group(rg, columns=columns, use_threads=False).to_batches()
            else:
                yield from f.iter_batches(batch_size=_BATCH, row_groups=[rg], columns=columns, use_threads=False)
        return
    import pyarrow.csv as pcsv

    convert = pcsv.ConvertOptions(strings_can_be_null=False, include_columns=columns)
    parse = pcsv.ParseOptions(invalid_row_handler=lambda row: "skip" if row.text.lstrip().startswith("#") else "error")
    yield from pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 24), parse_options=parse,
                             convert_options=convert)


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


def iter_op_blocks(path, *, block_steps, meta=None):
    """Read an op-level trace as :class:`OpTrace` blocks of ``block_steps`` whole steps each.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.parquet`` or ``.csv`` trace in the artifact schema.
    block_steps : int
        Steps per block, >= 1 (the last block may hold fewer).
    meta : str or os.PathLike, optional
        The layout file, as for :func:`~straggle_edu.traces.optrace.read_op_trace`.

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
    steps, ordered = _step_order(path)
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
    import pyarrow as pa

    path = Path(path)
    if row_groups is None:
        batches = _batches(path)
    else:
        import pyarrow.parquet as pq

        batches = pq.ParquetFile(path).iter_batches(batch_size=_BATCH, row_groups=list(row_groups))
    parts = []
    for batch in batches:
        d = arrow_numpy(batch.column(batch.schema.get_field_index("dp_rank")))
        parts.append(pa.Table.from_batches([batch]).filter(pa.array(d < dp_ranks)))
    return parts


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
    return [op_block(path, tables, meta=meta) for tables in read_block_tables(path, ranges)[0]]


def read_block_tables(path, ranges, *, dp_ranks=None):
    """The rows of each ``(first, last)`` of ``ranges`` as pyarrow tables (for :func:`op_block`), the file read once;
    with ``dp_ranks``, also the rows read of the first ``dp_ranks`` DP ranks, in file order (:func:`sample_rows`
    of those row groups, when the blocks' row groups hold no other steps).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> blocks, sample = read_block_tables(public_trace_path(), [(23, 1048)], dp_ranks=1)
    >>> sum(t.num_rows for t in blocks[0]), sum(t.num_rows for t in sample)
    (6784, 3392)
    """
    import pyarrow as pa

    path = Path(path)
    lo, hi = ranges[0][0], ranges[-1][1]
    tables, steps, sample = [], [], []
    for batch in _step_batches(path, lo, hi):
        s = arrow_numpy(batch.column(batch.schema.get_field_index("step")))
        table = pa.Table.from_batches([batch])
        table, s = _rows_between(table, s, lo, hi)
        if table.num_rows:
            tables.append(table)
            steps.append(s)
            if dp_ranks is not None:
                d = arrow_numpy(table.column("dp_rank"))
                sample.append(table.filter(pa.array(d < dp_ranks)))
    blocks = []
    for first, last in ranges:
        parts = [_rows_between(t, s, first, last)[0] for t, s in zip(tables, steps)]
        blocks.append([t for t in parts if t.num_rows])
    return blocks, sample if dp_ranks is not None else None


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
    >>> op_block(public_trace_path(), read_block_tables(public_trace_path(), [(1043, 1048)])[0][0]).steps.tolist()
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

    f = pq.ParquetFile(path)
    col = f.schema_arrow.get_field_index("step")
    out = []
    for rg in range(f.metadata.num_row_groups):
        st = f.metadata.row_group(rg).column(col).statistics
        out.append((int(st.min), int(st.max)) if st is not None and st.has_min_max else None)
    return out


def _step_batches(path, first, last):
    """The file's batches that may hold steps first..last: for Parquet, only the row groups whose statistics say so."""
    if path.suffix.lower() not in (".parquet", ".pq"):
        yield from _batches(path)
        return
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    col = f.schema_arrow.get_field_index("step")
    for rg in range(f.metadata.num_row_groups):
        st = f.metadata.row_group(rg).column(col).statistics
        if st is not None and st.has_min_max and (st.max < first or st.min > last):
            continue
        yield from f.iter_batches(batch_size=_BATCH, row_groups=[rg])


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
    from .whatif import analyze_blocks, analyze_ops

    path = Path(path)
    if block_steps == "auto":
        block_steps = auto_block_steps(path)
    if not block_steps:
        return analyze_ops(read_op_trace(path, meta=meta), attribution=attribution, progress=progress, ideal=ideal)
    block_steps = whole("block_steps", block_steps)
    from .replay import build_model

    program = build_model(program_sample(path, meta=meta))
    with tempfile.TemporaryDirectory(prefix="straggle-edu-blocks-") as spill:
        return analyze_blocks(iter_op_blocks(path, block_steps=block_steps, meta=meta), program=program,
                              attribution=attribution, progress=progress, ideal=ideal, spill=spill)
