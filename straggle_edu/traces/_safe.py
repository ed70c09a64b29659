"""Opening files that someone else wrote, without trusting them.

Every reader of JSON, JSON lines and pickles in this package reads its file
through :func:`read_bytes` and parses it with :func:`load_json` or
:func:`load_pickle`; text logs are streamed line by line (:func:`iter_lines`).
Each refuses a hostile or broken file with one
:class:`~straggle_edu.traces.TraceError` that names the file:

- a file, or a gzip stream once decompressed, larger than the memory budget
  allows (a compression bomb is stopped after reading just past the limit);
- a truncated or corrupt gzip stream, and binary data where text is expected;
- JSON nested deeper than :data:`MAX_DEPTH` (measured before parsing);
- a pickle that would import or call anything: only plain containers,
  strings and numbers are built, and the opcodes are checked before any runs.

Parsing only: nothing is evaluated, imported or executed, and the input file
is opened read-only.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import pickletools
import zlib
from pathlib import Path

import numpy as np

from .._validate import memory_budget
from ._table import column_error, display_path, file_size

__all__ = ["MAX_DEPTH", "BYTES_PER_BYTE", "read_bytes", "iter_lines", "load_json", "load_pickle",
           "json_depth"]

#: The deepest JSON nesting a reader accepts (a Chrome trace needs about 4).
MAX_DEPTH = 64
#: Memory per byte of input, for parsed JSON or a pickle's objects (about 8x).
BYTES_PER_BYTE = 8
_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def byte_limit():
    """The largest input, in bytes (decompressed), that fits the memory budget."""
    return memory_budget() // BYTES_PER_BYTE


def _too_big(shown, amount):
    limit = byte_limit()
    return column_error(
        shown,
        problem=f"{amount} more than the {limit / 2**20:.0f} MiB that fit the memory budget of "
        f"{memory_budget() // 2**20} MiB (reading takes about {BYTES_PER_BYTE} bytes of memory per byte); raise the "
        f"budget with STRAGGLE_EDU_MEMORY_MIB or straggle_edu.set_memory_budget(nbytes)",
    )


def _gunzip(path, shown, limit):
    out = bytearray()
    try:
        with gzip.open(path, "rb") as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > limit:
                    raise _too_big(shown, "decompresses to")
    except (OSError, EOFError, zlib.error) as exc:
        raise column_error(shown, problem=f"not a readable gzip file (truncated or corrupt: {exc})") from None
    return bytes(out)


def read_bytes(path):
    """The bytes of ``path``, decompressed when it is gzip, within the memory budget.

    Examples
    --------
    >>> import gzip, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json.gz"
    >>> _ = p.write_bytes(gzip.compress(b'{"a": 1}'))
    >>> read_bytes(p)
    b'{"a": 1}'
    """
    path = Path(path)
    shown = display_path(path)
    size = file_size(path, shown)
    limit = byte_limit()
    with open(path, "rb") as f:
        head = f.read(2)
    if head == _GZIP_MAGIC:
        return _gunzip(path, shown, limit)
    if size > limit:
        raise _too_big(shown, f"the file holds {size / 2**20:.0f} MiB,")
    return path.read_bytes()


#: The longest line :func:`iter_lines` yields whole; a longer one comes in pieces of this size.
MAX_LINE = 1 << 20


def iter_lines(path, what):
    """``(line number, text)`` of every line of ``path`` (UTF-8, gzip allowed), read as a stream.

    Memory stays at one line (at most :data:`MAX_LINE` characters), whatever
    the file's size. Binary data (a NUL byte in the first MiB) and a broken
    gzip stream are errors that name the file and ``what`` was expected; a
    byte that is not UTF-8 reads as U+FFFD.

    Examples
    --------
    >>> import gzip, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "train.log.gz"
    >>> _ = p.write_bytes(gzip.compress(b"one\\ntwo\\n"))
    >>> list(iter_lines(p, "a log"))
    [(1, 'one'), (2, 'two')]
    """
    path = Path(path)
    shown = display_path(path)
    file_size(path, shown)
    with open(path, "rb") as raw:
        gz = raw.read(2) == _GZIP_MAGIC
        try:
            raw.seek(0)
            src = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
            if b"\x00" in src.read(_CHUNK):
                raise column_error(shown, problem=f"a binary file, not text (expected {what})")
            raw.seek(0)
            src = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
            text = io.TextIOWrapper(src, encoding="utf-8", errors="replace")
            lineno = 1
            while True:
                piece = text.readline(MAX_LINE)
                if not piece:
                    return
                yield lineno, piece.rstrip("\r\n")
                lineno += piece.endswith("\n")
        except (OSError, EOFError, zlib.error) as exc:
            raise column_error(shown, problem=f"not a readable gzip file (truncated or corrupt: {exc})") from None


def json_depth(data):
    """The deepest nesting of ``[`` and ``{`` outside strings in JSON ``data`` (bytes).

    Linear time, chunk by chunk, before any parsing.

    Examples
    --------
    >>> json_depth(b'{"a": [1, {"b": "[[[["}]}')
    3
    """
    depth = best = 0
    in_string = False
    slashes = 0  # backslashes just before the chunk (inside a string)
    for start in range(0, len(data), _CHUNK):
        a = np.frombuffer(data, np.uint8, count=min(_CHUNK, len(data) - start), offset=start)
        depth, best, in_string, slashes = _scan(a, depth, best, in_string, slashes)
    return best


def _scan(a, depth, best, in_string, slashes):
    """One chunk of :func:`json_depth`; returns the state carried to the next chunk."""
    n = len(a)
    if n == 0:
        return depth, best, in_string, slashes
    pos = np.arange(n)
    bs = a == 0x5C
    last_other = np.maximum.accumulate(np.where(bs, -1, pos))
    run = np.where(bs, pos - last_other, 0)  # backslashes ending at each position
    run = np.where(bs & (last_other < 0), run + slashes, run)
    before = np.empty(n, np.int64)  # backslashes right before each position
    before[0] = slashes
    before[1:] = run[:-1]
    quote = (a == 0x22) & (before % 2 == 0)
    odd = (np.cumsum(quote) % 2).astype(bool)
    inside = odd ^ in_string  # at a non-quote position: within a string
    step = (((a == 0x5B) | (a == 0x7B)).astype(np.int64) - ((a == 0x5D) | (a == 0x7D)))
    step[inside] = 0
    levels = depth + np.cumsum(step)
    best = max(best, int(levels.max()))
    return int(levels[-1]), best, bool(inside[-1]), int(run[-1])


def load_json(path, what, *, data=None):
    """Parse JSON from ``path`` (or its ``data``) after the size and depth checks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "deep.json"
    >>> _ = p.write_text("[" * 100 + "]" * 100)
    >>> load_json(p, "a Chrome trace")
    Traceback (most recent call last):
    ...
    straggle_edu.traces._table.TraceError: ...deep.json: JSON nested 100 levels deep, more than the 64 a reader
    accepts (expected a Chrome trace)
    """
    shown = display_path(path)
    if data is None:
        data = read_bytes(path)
    if b"\x00" in data[:_CHUNK]:
        raise column_error(shown, problem=f"a binary file, not JSON (expected {what})")
    depth = json_depth(data)
    if depth > MAX_DEPTH:
        raise column_error(
            shown, problem=f"JSON nested {depth} levels deep, more than the {MAX_DEPTH} a reader accepts (expected {what})"
        )
    try:
        return json.loads(data)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise column_error(shown, problem=f"JSON nested too deeply (expected {what})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise column_error(shown, problem=f"not valid JSON ({_short(exc)}; expected {what})") from None


def _short(exc):
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."


# Opcodes that build plain data only; everything that imports, calls or
# looks up an object by name (GLOBAL, STACK_GLOBAL, INST, OBJ, REDUCE, BUILD,
# NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, READONLY_BUFFER, ...) is not here.
_PLAIN_OPCODES = frozenset(
    """PROTO FRAME STOP MARK POP POP_MARK DUP NONE NEWTRUE NEWFALSE INT BININT BININT1 BININT2 LONG LONG1
    LONG4 FLOAT BINFLOAT STRING BINSTRING SHORT_BINSTRING UNICODE SHORT_BINUNICODE BINUNICODE BINUNICODE8
    BINBYTES SHORT_BINBYTES BINBYTES8 BYTEARRAY8 EMPTY_LIST LIST APPEND APPENDS EMPTY_DICT DICT SETITEM SETITEMS
    EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_SET ADDITEMS FROZENSET GET BINGET LONG_BINGET PUT BINPUT
    LONG_BINPUT MEMOIZE""".split()
)


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler that never imports: any class or function lookup is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"the pickle asks for {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("the pickle asks for a persistent object")


def load_pickle(path, what, *, data=None):
    """Unpickle plain data (dicts, lists, tuples, sets, str, bytes, numbers, None) only.

    The opcodes are checked first; a pickle that would import or call
    anything (``os.system``, a class, a reducer) is refused before one runs.

    Examples
    --------
    >>> import pickle, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ok.pkl"
    >>> _ = p.write_bytes(pickle.dumps({"version": "2.9", "entries": [1, 2.5, None]}))
    >>> load_pickle(p, "a Flight Recorder dump")
    {'version': '2.9', 'entries': [1, 2.5, None]}
    """
    shown = display_path(path)
    if data is None:
        data = read_bytes(path)
    try:
        for op, _arg, pos in pickletools.genops(data):
            if op.name not in _PLAIN_OPCODES:
                raise column_error(
                    shown,
                    problem=f"the pickle wants to run code (opcode {op.name} at byte {pos}); only plain data "
                    f"is read, nothing is imported or called (expected {what})",
                )
        return _PlainUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, ValueError, EOFError, TypeError, KeyError, IndexError, AttributeError,
            MemoryError, OverflowError) as exc:
        if isinstance(exc, type(column_error(""))):
            raise
        raise column_error(shown, problem=f"not a readable pickle ({_short(exc)}; expected {what})") from None
