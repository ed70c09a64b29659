"""Reading a table of columns from CSV or Parquet, with errors a reader can act on.

Every trace reader in this package turns a file into ``{column: numpy array}``
through :func:`read_table`, then checks each column with :func:`int_column`,
:func:`float_column` or :func:`str_column`. A bad value stops the reader with
one :class:`TraceError` that names the file, the column and the row::

    trace.csv: column 'duration', row 7: expected a duration in seconds >= 0, got -0.5

Rows are counted from 1 at the first data row (the header is not a row), so
row 7 of a CSV file is on line 8 when there are no comment lines.

Lines that start with ``#`` are comments (a writer that stopped early ends its
file with ``# incomplete``). Parsing only: nothing is evaluated or unpickled,
and the input file is opened read-only.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path

import numpy as np

__all__ = [
    "TraceError",
    "column_error",
    "show_value",
    "read_table",
    "int_column",
    "float_column",
    "str_column",
    "require_columns",
    "missing_pyarrow",
    "dense_codes",
    "arrow_numpy",
    "arrow_array",
    "folder_files",
    "file_size",
]

# Above this size a CSV is read with pyarrow when it is installed (much less
# memory than Python's csv module); smaller files use the standard library.
_ARROW_CSV_BYTES = 512 * 2**10


class TraceError(ValueError):
    """A trace file that cannot be analysed; the message names file, column and row.

    Examples
    --------
    >>> cells = np.array(["0", "1.5"], dtype=object)   # as read_table reads a CSV column
    >>> try:
    ...     int_column("trace.csv", {"step": cells}, "step")
    ... except TraceError as e:
    ...     print(e)
    trace.csv: column 'step', row 2: expected a whole number >= 0, got 1.5
    """


_UNSET = object()
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(nan|inf|infinity)", re.IGNORECASE)
_SHOWN_CHARS = 60


def show_value(value):
    """A value as the user wrote it: ``-1``, ``nan``, ``2.5``, ``'soon'``, never ``np.int8(-1)``.

    Numbers (NumPy's too) read as in the file; text that holds a number (a CSV
    cell) is shown as written; other text is quoted; long text is cut short.

    Examples
    --------
    >>> show_value(np.int8(-1)), show_value(float("nan")), show_value(" -0.5"), show_value("soon")
    ('-1', 'nan', '-0.5', "'soon'")
    >>> show_value(None), show_value(True), show_value("")
    ('null', 'true', 'an empty cell')
    """
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return value.strip()
    if isinstance(value, str) and not value.strip():
        return "an empty cell"
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def column_error(path, column=None, row=None, expected=None, got=_UNSET, *, problem=None, layout=False):
    """The one :class:`TraceError` of every reader: file, column, row, then what is wrong.

    Parameters
    ----------
    path : str or os.PathLike
        The file, as the user named it.
    column : str, optional
        The column (or JSON key) at fault; None for a problem of the whole file.
    row : int, optional
        The row, counted from 1 at the first data row.
    expected : str, optional
        What a valid value looks like; with ``got``, the message reads
        ``expected <expected>, got <got>`` and ``got`` is shown as written.
    problem : str, optional
        Free text for what ``expected``/``got`` cannot say.
    layout : bool
        The file is well formed but its rows contradict each other
        (``inconsistent layout: ...``).

    Examples
    --------
    >>> print(column_error("t.csv", "duration", 7, "a duration in seconds >= 0", np.float64(-0.5)))
    t.csv: column 'duration', row 7: expected a duration in seconds >= 0, got -0.5
    >>> print(column_error("t.csv", "rank", problem="no row for rank 3 in step 0", layout=True))
    t.csv: inconsistent layout: column 'rank': no row for rank 3 in step 0
    >>> print(column_error("t.csv", problem="the file is empty"))
    t.csv: the file is empty
    """
    where = "inconsistent layout: " if layout else ""
    if column is not None:
        where += f"column {column!r}"
    if row is not None:
        where += f", row {row}" if column is not None else f"row {row}"
    parts = []
    if expected is not None:
        parts.append(f"expected {expected}" + ("" if got is _UNSET else f", got {show_value(got)}"))
    if problem is not None:
        parts.append(problem)
    text = "; ".join(parts) if expected is None or problem is None else f"{parts[0]} ({parts[1]})"
    head = f"{os.fspath(path)}: "
    if where:
        head += f"{where}: " if text else where
    return TraceError(" ".join((head + text).split()))


def missing_pyarrow(path, what="Parquet files"):
    """The error for a missing optional pyarrow.

    Examples
    --------
    >>> print(missing_pyarrow("trace.parquet"))
    trace.parquet: reading Parquet files needs the optional package pyarrow, which is not installed; ...
    """
    return TraceError(
        f"{path}: reading {what} needs the optional package pyarrow, which is not installed; "
        f"install it with  pip install 'straggle-edu[parquet]'  (or convert the trace to CSV "
        f"with the same columns)"
    )


def _first_bad(ok):
    return int(np.flatnonzero(~ok)[0])


def read_table(path):
    """Read a CSV or Parquet file into ``(columns, comments)``.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv`` (optionally with ``#`` comment lines) or ``.parquet`` file.

    Returns
    -------
    columns : dict of str to numpy.ndarray
        One array per column, in file order. CSV cells arrive as strings
        (object arrays) unless pyarrow parsed them; Parquet keeps its types.
    comments : list of str
        The comment lines of a CSV file, without the ``#``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("step,rank\\n0,1\\n# incomplete\\n")
    >>> cols, comments = read_table(p)
    >>> list(cols), comments
    (['step', 'rank'], ['incomplete'])
    """
    path = Path(path)
    size = file_size(path, str(path), empty="the file is empty (expected a header line and rows)")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return _read_parquet(path), []
    if size > _ARROW_CSV_BYTES:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            pass
        else:
            return _read_csv_arrow(path)
    return _read_csv_stdlib(path)


def _read_parquet(path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise missing_pyarrow(path) from None
    try:
        # ParquetFile reads without importing pyarrow.dataset (a quarter second)
        table = pq.ParquetFile(path).read()
    except Exception as exc:  # pyarrow raises its own types for corrupt files
        raise column_error(path, problem=f"not a readable Parquet file ({exc})") from None
    if table.num_rows == 0:
        raise column_error(path, problem="the file has no rows")
    return _arrow_columns(table)


def arrow_numpy(col):
    """A numeric Arrow column (an Array or a ChunkedArray) as a numpy array, without pyarrow's pandas shim.

    pyarrow's ``to_numpy`` imports pandas on its first call: 0.15 s of CPU in
    every ``analyze`` of a Parquet trace that never uses pandas. A fixed-width
    integer or float column without missing cells is read from its data buffer
    (no copy for one chunk); anything else goes through ``to_numpy``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_numpy(pa.chunked_array([[1, 2], [3]], type=pa.int8())).tolist()
    [1, 2, 3]
    >>> arrow_numpy(pa.array([1.5, None])).tolist()
    [1.5, nan]
    """
    import pyarrow as pa

    kind = col.type
    if col.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return col.to_numpy(zero_copy_only=False)
    dtype = np.dtype(kind.to_pandas_dtype())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = [np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * dtype.itemsize)
             for c in chunks if len(c)]
    if not parts:
        return np.empty(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def arrow_array(values, kind):
    """``pa.array(values, type=kind)`` built from buffers, without pyarrow's pandas shim (:func:`arrow_numpy`'s inverse).

    ``pa.array`` imports pandas to ask whether its input is pandas' (0.3 s
    of CPU). Built from buffers: a numpy array of integers or floats of
    ``kind``'s width (no copy), or a list of numbers, of str for a string
    ``kind``, with None for a missing cell. Anything else goes through
    ``pa.array``, which also says what is wrong with a value.

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_array(np.array([1, 2], dtype=np.int32), pa.int32()).to_pylist()
    [1, 2]
    >>> arrow_array(["a", None, "é"], pa.string()).to_pylist(), arrow_array([1.5, None], pa.float64()).null_count
    (['a', None, 'é'], 1)
    """
    import pyarrow as pa

    numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
    if isinstance(values, np.ndarray):
        if numeric and values.ndim == 1 and values.dtype == np.dtype(kind.to_pandas_dtype()):
            return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])
        return pa.array(values, type=kind)
    values = list(values)
    n = len(values)
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    nulls = n - int(valid.sum())
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    try:
        if numeric:
            data = np.array([0 if v is None else v for v in values], dtype=kind.to_pandas_dtype())
            return pa.Array.from_buffers(kind, n, [bitmap, pa.py_buffer(data)], null_count=nulls)
        if kind in (pa.string(), pa.large_string()):
            data = [b"" if v is None else v.encode("utf-8") for v in values]
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=n), out=offsets[1:])
            if kind == pa.string() and offsets[-1] >= 2**31:
                return pa.array(values, type=kind)
            offsets = offsets if kind == pa.large_string() else offsets.astype(np.int32)
            return pa.Array.from_buffers(kind, n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))],
                                         null_count=nulls)
    except (TypeError, ValueError, AttributeError, UnicodeEncodeError, OverflowError):
        pass  # a value of another kind: pyarrow says what is wrong with it
    return pa.array(values, type=kind)


def _arrow_columns(table):
    import pyarrow as pa

    cols = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_dictionary(col.type):
            col = col.combine_chunks()
            if not pa.types.is_dictionary(col.type):
                col = col.dictionary_encode()
            # keep strings as (codes, labels): cheap for millions of rows
            codes = arrow_numpy(col.indices)
            if col.null_count:
                codes = np.where(col.is_null().to_numpy(zero_copy_only=False), -1, codes)
            labels = np.asarray(col.dictionary.to_pylist(), dtype=object)
            cols[name] = _compact(codes.astype(np.int64), labels)
        else:
            if col.null_count:
                arr = col.to_numpy(zero_copy_only=False).astype(float)
                arr[col.is_null().to_numpy(zero_copy_only=False)] = np.nan
            else:
                arr = arrow_numpy(col)
            cols[name] = arr
    return cols


def _compact(codes, labels):
    """Drop the labels no row uses (a Parquet dictionary may hold unused ones)."""
    used = np.bincount(codes if not len(codes) or codes.min() >= 0 else codes[codes >= 0], minlength=len(labels)) > 0
    if used.all():
        return _Coded(codes, labels)
    remap = np.cumsum(used) - 1
    if not len(codes) or codes.min() >= 0:  # no missing cell
        return _Coded(remap[codes], labels[used])
    return _Coded(np.where(codes >= 0, remap[np.clip(codes, 0, None)], -1), labels[used])


class _Coded:
    """A string column stored as integer codes into an array of labels (-1: missing)."""

    __slots__ = ("codes", "labels")

    def __init__(self, codes, labels):
        self.codes = codes
        self.labels = labels

    def __len__(self):
        return len(self.codes)

    def values(self):
        out = self.labels[np.clip(self.codes, 0, None)] if len(self.labels) else np.full(len(self.codes), "", object)
        if (self.codes < 0).any():
            out = out.copy()
            out[self.codes < 0] = ""
        return out


def _read_csv_arrow(path):
    import pyarrow.csv as pcsv

    comments = []

    def skip_comments(row):
        if row.text.lstrip().startswith("#"):
            comments.append(row.text.lstrip()[1:].strip())
            return "skip"
        return "error"

    try:
        table = pcsv.read_csv(
            path,
            parse_options=pcsv.ParseOptions(invalid_row_handler=skip_comments),
            convert_options=pcsv.ConvertOptions(strings_can_be_null=False),
        )
    except Exception as exc:
        raise column_error(path, problem=f"not a readable CSV file ({exc})") from None
    if table.num_rows == 0:
        raise column_error(path, problem="the file has a header but no rows")
    return _arrow_columns(table), comments


def _read_csv_stdlib(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise column_error(path, problem="not a text CSV file (it is not UTF-8)") from None
    comments = []
    kept = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comments.append(stripped[1:].strip())
            continue
        kept.append(line)
    if not kept:
        raise column_error(path, problem="the file is empty (only comments or blank lines)")
    rows = list(csv.reader(io.StringIO("\n".join(kept))))
    header = [h.strip() for h in rows[0]]
    if len(rows) == 1:
        raise column_error(path, problem="the file has a header but no rows")
    data = rows[1:]
    width = len(header)
    for i, row in enumerate(data):
        if len(row) != width:
            raise column_error(
                path, row=i + 1, expected=f"{width} comma-separated values ({', '.join(header)})", got=len(row)
            )
    columns = list(zip(*data))
    return {name: np.asarray(col, dtype=object) for name, col in zip(header, columns)}, comments


def require_columns(path, columns, required, what):
    """Raise a TraceError naming the missing columns of a ``what`` file.

    Examples
    --------
    >>> require_columns("ranks.csv", {"step": [], "rank": []}, ["step", "rank", "duration_s"], "per-rank CSV")
    Traceback (most recent call last):
    ...
    straggle_edu.traces._table.TraceError: ranks.csv: missing column 'duration_s'; a per-rank CSV needs the columns
    step, rank, duration_s (found: step, rank)
    """
    missing = [c for c in required if c not in columns]
    if missing:
        raise column_error(
            path,
            problem=f"missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}; a {what} needs the columns "
            f"{', '.join(required)} (found: {', '.join(columns) or 'none'})",
        )


def _as_float(path, name, col, expected):
    if isinstance(col, _Coded):
        col = col.values()
    arr = np.asarray(col)
    if arr.dtype.kind in "fiu":
        return arr.astype(np.float64, copy=False)
    if arr.dtype.kind == "b":
        raise column_error(path, name, 1, expected, problem="the column holds true/false values")
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        pass
    for i, v in enumerate(arr):
        try:
            float(v)
        except (TypeError, ValueError):
            raise column_error(path, name, i + 1, expected, v) from None
    return arr.astype(np.float64)  # pragma: no cover


def _raw(col, arr, i):
    """Cell ``i`` as the file had it (the text of a CSV cell, else the number)."""
    if isinstance(col, _Coded):
        return col.labels[col.codes[i]] if col.codes[i] >= 0 else ""
    raw = np.asarray(col)
    return raw[i] if raw.dtype.kind in "OU" else arr[i]


def float_column(path, columns, name, *, expected="a number", low=None):
    """Column ``name`` as float64; NaN, infinity and values below ``low`` are errors.

    Examples
    --------
    >>> float_column("t.csv", {"duration": ["0.5", "1.25"]}, "duration", low=0).tolist()
    [0.5, 1.25]
    >>> float_column("t.csv", {"duration": np.array(["0.5", "fast"], dtype=object)}, "duration")
    Traceback (most recent call last):
    ...
    straggle_edu.traces._table.TraceError: t.csv: column 'duration', row 2: expected a number, got 'fast'
    """
    arr = _as_float(path, name, columns[name], expected)
    if arr.size:  # the smallest and the largest value are finite (NaN would spread) and in range: all are
        lo, hi = arr.min(), arr.max()
        if np.isfinite(lo) and np.isfinite(hi) and (low is None or lo >= low):
            return arr
    ok = np.isfinite(arr)
    if low is not None:
        ok &= arr >= low
    if not ok.all():
        i = _first_bad(ok)
        raise column_error(path, name, i + 1, expected, _raw(columns[name], arr, i))
    return arr


def int_column(path, columns, name, *, expected="a whole number >= 0", low=0):
    """Column ``name`` as int64; fractions, NaN and values below ``low`` are errors.

    Examples
    --------
    >>> int_column("t.csv", {"rank": ["0", "3", "7.0"]}, "rank").tolist()
    [0, 3, 7]
    """
    col = columns[name]
    arr = col.values() if isinstance(col, _Coded) else np.asarray(col)
    if arr.dtype.kind in "iu":
        out = arr.astype(np.int64, copy=False)
        if not out.size or out.min() >= low:  # one reduction instead of a mask, when all are fine
            return out
        ok = out >= low
    else:
        f = _as_float(path, name, arr, expected)
        ok = np.isfinite(f) & (f == np.round(f)) & (f >= low)
        out = None
    if not ok.all():
        i = _first_bad(ok)
        raise column_error(path, name, i + 1, expected, arr[i])
    if out is None:
        out = f.astype(np.int64)
    return out


def str_column(path, columns, name):
    """Column ``name`` as ``(codes, labels)``: int64 codes into an array of labels.

    Empty cells are errors.

    Examples
    --------
    >>> codes, labels = str_column("t.csv", {"optype": ["forward", "backward", "forward"]}, "optype")
    >>> codes.tolist(), labels.tolist()
    ([0, 1, 0], ['forward', 'backward'])
    """
    col = columns[name]
    if isinstance(col, _Coded):
        codes, labels = col.codes, col.labels
        labels = np.asarray([str(x).strip() for x in labels], dtype=object)
    else:
        arr = np.asarray(col)
        if arr.dtype.kind in "fiub":
            raise column_error(path, name, 1, "text", arr[0])
        mapping = {}
        codes = np.fromiter(
            (mapping.setdefault(str(v).strip(), len(mapping)) for v in arr), dtype=np.int64, count=len(arr)
        )
        labels = np.asarray(list(mapping), dtype=object)
    empty = np.flatnonzero(labels == "")
    bad = (codes < 0) | np.isin(codes, empty)
    if bad.any():
        i = _first_bad(~bad)
        raise column_error(path, name, i + 1, "text", "")
    return codes, labels


def dense_codes(values):
    """``(uniques, inverse)`` of an int array, like ``np.unique(..., return_inverse=True)``.

    Small non-negative ranges (ids, steps, ranks) use a lookup table instead
    of a sort: several times faster on millions of rows.

    Examples
    --------
    >>> u, inv = dense_codes(np.array([5, 3, 5, 9]))
    >>> u.tolist(), inv.tolist()
    ([3, 5, 9], [1, 0, 1, 2])
    """
    values = np.asarray(values)
    if values.size and values.dtype.kind in "iu":
        lo, hi = int(values.min()), int(values.max())
        if lo == hi:  # one value (a block of one step): no table needed
            return values[:1].copy(), np.zeros(values.size, dtype=np.int64)
        if lo >= 0 and hi < max(4 * values.size, 1 << 16) and hi < (1 << 26):
            present = np.bincount(values, minlength=hi + 1) > 0
            uniques = np.flatnonzero(present)
            lookup = np.cumsum(present) - 1
            return uniques.astype(values.dtype), lookup[values]
    return np.unique(values, return_inverse=True)


def file_size(path, shown, *, empty="the file is empty"):
    """The size in bytes of the file at ``path``, once the checks every reader makes have passed: it exists, it is
    not a folder, it is not empty (``empty`` says what was expected). Errors name the file as ``shown``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("step\\n0\\n")
    >>> file_size(d / "t.csv", "t.csv")
    7
    >>> file_size(d, "runs")
    Traceback (most recent call last):
    ...
    straggle_edu.traces._table.TraceError: runs: is a folder, expected a file
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{shown}: no such file")
    if path.is_dir():
        raise column_error(shown, problem="is a folder, expected a file")
    size = path.stat().st_size
    if size == 0:
        raise column_error(shown, problem=empty)
    return size


def display_path(path):
    """A short path for messages: relative when under the working folder."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def folder_files(path, keep, problem):
    """The file at ``path``, or the files of the folder at ``path`` that ``keep``, sorted by name.

    Parameters
    ----------
    path : str or Path
        One file, or a folder (one file per rank).
    keep : callable
        ``keep(file) -> bool`` for each file of the folder.
    problem : str
        What the error says when the folder holds no such file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for name in ("rank_1.log", "rank_0.log", "notes.txt"):
    ...         _ = (Path(d) / name).write_text("")
    ...     [f.name for f in folder_files(d, lambda f: f.name.endswith(".log"), "no logs")]
    ['rank_0.log', 'rank_1.log']
    >>> folder_files("no/such/folder", bool, "no logs")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no/such/folder: no such file or folder
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{display_path(p)}: no such file or folder")
    if p.is_file():
        return [p]
    files = sorted(f for f in p.iterdir() if f.is_file() and keep(f))
    if not files:
        raise column_error(display_path(p), problem=problem)
    return files
