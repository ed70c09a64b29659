"""A Chrome trace (PyTorch profiler JSON) read as a stream of events, in bounded memory.

:class:`ChromeStream` yields the events of ``traceEvents`` one at a time,
parsed by :mod:`ijson` with its C backend (yajl2): an 86 MB trace streams in
about 1.2 s holding 13 MB, where :func:`json.load` takes 2.9 s and 529 MB.
The top-level keys beside ``traceEvents`` (``distributedInfo``,
``baseTimeNanoseconds``, ``host_name``, ...), which PyTorch writes before or
after the events, are read from the first bytes and the last bytes of the
stream once it is done (:attr:`ChromeStream.meta`).

What a hostile file cannot do:

- exhaust memory: the events are never held together, one event (or what
  precedes ``traceEvents``) larger than :data:`EVENT_BYTES` is refused, and
  a reader that keeps events checks its own total against the memory budget;
- nest its JSON deeper than :data:`~straggle_edu.traces._safe.MAX_DEPTH`
  (the depth is measured chunk by chunk before the parser sees the bytes: a
  parser's memory grows with the square of the nesting);
- hide a truncated or corrupt gzip stream, or JSON that does not parse: each
  is one :class:`~straggle_edu.traces.TraceError` naming the file.

Parsing only: nothing is evaluated, and the file is opened read-only.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import zlib
from pathlib import Path

import numpy as np

from ._safe import MAX_DEPTH
from ._table import column_error, display_path

__all__ = ["ChromeStream", "EVENT_BYTES", "missing_ijson"]

#: The largest single event (and the largest part of a file before ``traceEvents``), in bytes.
EVENT_BYTES = 64 << 20
_CHUNK = 1 << 16
_TAIL = 4 << 20
_REPORT_BYTES = 16 << 20  # a progress callback hears of every 16 MiB read
_GZIP_MAGIC = b"\x1f\x8b"


def missing_ijson():
    """The error when ijson is not installed (it is a dependency of straggle-edu).

    Examples
    --------
    >>> print(missing_ijson())
    reading PyTorch profiler traces needs ijson: pip install "ijson>=3.2"
    """
    return ValueError('reading PyTorch profiler traces needs ijson: pip install "ijson>=3.2"')


def _ijson():
    try:
        import ijson
    except ImportError:  # pragma: no cover - a dependency
        raise missing_ijson() from None
    try:
        return ijson.get_backend("yajl2_c")
    except ImportError:  # pragma: no cover - a wheel without the C extension: still correct, slower
        return ijson


_KEEP_DELETE = bytes(b for b in range(256) if b not in b'[]{}"')


class _Depth:
    """The nesting of a JSON stream, fed chunk by chunk, at about 1 GB/s.

    Escapes are dropped first (``\\\\`` then ``\\"``), then every byte but
    quotes and brackets; the quotes of strings without brackets cancel in
    pairs; what is left (a few % of the bytes) is scanned with numpy.

    Examples
    --------
    >>> d = _Depth()
    >>> for part in (b'{"a": [1, "[[", {"b', b'": [[]]}]}'):
    ...     d.feed(part)
    >>> d.best, d.depth
    (5, 0)
    """

    def __init__(self, event_depth=2):
        self.depth = self.best = 0
        self.in_string = False
        self.carry = b""
        self.event_depth = event_depth
        self.inside = 0  # bytes since the stream was last at most event_depth deep (between two events)

    def feed(self, chunk):
        if self.carry:
            chunk, self.carry = self.carry + chunk, b""
        if b"\\" in chunk:
            tail = len(chunk) - len(chunk.rstrip(b"\\"))
            if tail:  # an escape that the chunk's end splits goes with the next chunk
                chunk, self.carry = chunk[:-tail], chunk[-tail:]
            chunk = chunk.replace(b"\\\\", b"").replace(b'\\"', b"")
        r = chunk.translate(None, _KEEP_DELETE).replace(b'""', b"")
        self.inside += len(chunk)
        if not r:
            self.inside = 0 if self.depth <= self.event_depth else self.inside
            return
        a = np.frombuffer(r, np.uint8)
        quote = a == 0x22
        inside = (np.cumsum(quote) & 1).astype(bool) ^ self.in_string
        step = ((a == 0x5B) | (a == 0x7B)).astype(np.int64) - ((a == 0x5D) | (a == 0x7D))
        step[inside | quote] = 0
        levels = self.depth + np.cumsum(step)
        if self.depth <= self.event_depth or levels.min() <= self.event_depth:
            self.inside = len(chunk) if levels[-1] > self.event_depth else 0  # an event ended in this chunk
        self.best = max(self.best, int(levels.max()))
        self.depth = int(levels[-1])
        self.in_string = bool(inside[-1])


class _Tap:
    """The decompressed bytes of a file, as ijson reads them: keeps the head and the tail, bounds one event."""

    def __init__(self, raw, shown, on_bytes=None):
        self._raw, self.shown, self._on_bytes, self.total = raw, shown, on_bytes, 0
        self.head = bytearray()
        self.head_done = False
        self.tail = bytearray()
        self._pending = b""
        self._depth = _Depth()


    def peek_start(self):
        """The first non-blank byte of the stream (what was read for it is handed to the next read)."""
        self._pending = self._take(_CHUNK)
        if b"\x00" in self._pending:
            raise column_error(self.shown, problem="a binary file, not JSON (expected a Chrome trace)")
        return self._pending.lstrip()[:1]

    def _take(self, n):
        try:
            data = self._raw.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise column_error(self.shown, problem=f"not a readable gzip file (truncated or corrupt: {exc})") from None
        self._depth.feed(data)
        self.total += len(data)
        if self._on_bytes is not None and self.total % _REPORT_BYTES < len(data):  # just passed a multiple
            self._on_bytes(self.total)
        if self._depth.best > MAX_DEPTH:
            raise column_error(self.shown, problem=f"JSON nested at least {self._depth.best} levels deep, more than "
                               f"the {MAX_DEPTH} a reader accepts (expected a Chrome trace)")
        if self._depth.inside > EVENT_BYTES:
            raise column_error(self.shown, problem=f"one event (or what comes before 'traceEvents') is larger than "
                               f"{EVENT_BYTES >> 20} MiB; a profiler trace's events are a few hundred bytes each")
        if not self.head_done:
            self.head += data
            self.head_done = b'"traceEvents"' in self.head[-len(data) - 16:] or len(self.head) > EVENT_BYTES
        self.tail += data
        if len(self.tail) > 2 * _TAIL:
            del self.tail[:-_TAIL]
        return data

    def read(self, n=-1):
        if n == 0:  # ijson asks for 0 bytes to learn whether the stream gives bytes or text
            return b""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        return self._take(_CHUNK if n is None or n < 0 else n)


class ChromeStream:
    """The events of one Chrome trace file, one at a time; then its other top-level keys.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.json`` or ``.json.gz`` trace (gzip is recognised by its magic
        bytes, not by the name). A top-level list of events is read too.
    on_bytes : callable, optional
        Called with the bytes read so far (decompressed), every 16 MiB.

    Attributes
    ----------
    meta : dict
        The top-level keys other than ``traceEvents`` (whose value is True
        when the key is there); complete once the iteration is done.

    Examples
    --------
    >>> import gzip, json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rank0.json.gz"
    >>> doc = {"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}],
    ...        "distributedInfo": {"rank": 0, "world_size": 2}}
    >>> _ = p.write_bytes(gzip.compress(json.dumps(doc).encode()))
    >>> s = ChromeStream(p)
    >>> [e["name"] for e in s], s.meta["distributedInfo"], s.meta["schemaVersion"]
    (['a'], {'rank': 0, 'world_size': 2}, 1)
    """

    def __init__(self, path, on_bytes=None):
        self.path = Path(path)
        self.on_bytes = on_bytes
        self.shown = display_path(self.path)
        self.meta = {}
        if not self.path.exists():
            raise FileNotFoundError(f"{self.shown}: no such file")
        if self.path.is_dir():
            raise column_error(self.shown, problem="is a folder, expected a file")
        if self.path.stat().st_size == 0:
            raise column_error(self.shown, problem="the file is empty")

    def __iter__(self):
        with self.open() as events:
            yield from events

    @contextlib.contextmanager
    def open(self):
        """The events as ijson's own iterator (the fastest to loop over); :attr:`meta` is set on a clean exit.

        A JSON error while the caller loops becomes one TraceError naming the file.
        """
        backend = _ijson()
        with open(self.path, "rb") as f:
            gz = f.read(2) == _GZIP_MAGIC
            f.seek(0)
            tap = _Tap(gzip.GzipFile(fileobj=f, mode="rb") if gz else f, self.shown, self.on_bytes)
            first = tap.peek_start()
            if first not in (b"{", b"["):
                raise column_error(self.shown, problem="not valid JSON (expected a Chrome trace JSON object with a "
                                   "traceEvents list)")
            try:
                yield backend.items(tap, "item" if first == b"[" else "traceEvents.item", use_float=True)
            except backend.common.JSONError as exc:
                raise column_error(self.shown, problem=f"not valid JSON ({_short(exc)}; expected a Chrome trace "
                                   f"JSON object with a traceEvents list)") from None
        if first == b"[":
            self.meta = {"traceEvents": True}
            return
        head, found = _head_keys(bytes(tap.head))
        self.meta = {**head, **_tail_keys(bytes(tap.tail[-_TAIL:]))}
        self.meta["traceEvents"] = found


def _short(exc):
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:117] + "..."


def _real_quotes(a):
    """Per byte of ``a`` (uint8, forward order): a quote that no odd run of backslashes escapes."""
    bs = a == 0x5C
    pos = np.arange(len(a))
    last_other = np.maximum.accumulate(np.where(bs, -1, pos))
    run = np.where(bs, pos - last_other, 0)
    before = np.zeros(len(a), np.int64)
    before[1:] = run[:-1]
    return (a == 0x22) & (before % 2 == 0)


def _depth(a, quote, opens, closes):
    """Depth after each byte of ``a``, counting ``opens``/``closes`` outside strings (scanned from outside a string)."""
    inside = (np.cumsum(quote) % 2).astype(bool) | quote
    step = ((a == opens[0]) | (a == opens[1])).astype(np.int8) - ((a == closes[0]) | (a == closes[1]))
    step[inside] = 0
    return np.cumsum(step, dtype=np.int32), step


def _head_keys(head):
    """The top-level keys before ``traceEvents``, parsed from the first bytes of the document; and whether the key
    ``traceEvents`` is there (at the top level)."""
    if not head:
        return {}, False
    a = np.frombuffer(head, np.uint8)
    quote = _real_quotes(a)
    depth, _ = _depth(a, quote, (0x5B, 0x7B), (0x5D, 0x7D))
    key = b'"traceEvents"'
    at = head.find(key)
    while at >= 0:
        if depth[at] == 1 and quote[at]:
            start = head.lstrip()[:1]
            return (_loads_object(head[:at] + b'"traceEvents": []}') if start == b"{" else {}), True
        at = head.find(key, at + 1)
    return {}, False


def _tail_keys(tail):
    """The top-level keys after the ``traceEvents`` list, parsed from the last bytes of the document.

    Scanned backward from the end, which lies outside every string at depth
    0: the first list closing at depth 1 that is ``traceEvents`` (its ``[``
    follows that key, or lies before the bytes scanned) ends the events;
    what follows it is the rest of the object. The last 64 KiB are scanned
    first, then more, up to the whole tail.
    """
    end = tail.rstrip()
    if not end.endswith(b"}"):
        return {}
    size = 1 << 16
    while True:
        part = end[-size:]
        found = _after_events(part, whole=len(part) == len(end))
        if found is not None or len(part) == len(end):
            return found or {}
        size *= 16


def _after_events(end, whole):
    """The object after the traceEvents list in ``end`` (a dict), or None when this part holds no sure answer."""
    fwd = np.frombuffer(end, np.uint8)
    r, quote = fwd[::-1], _real_quotes(fwd)[::-1]
    depth, step = _depth(r, quote, (0x5D, 0x7D), (0x5B, 0x7B))  # backward, a closing bracket opens
    n = len(end)
    for c in np.flatnonzero((r == 0x5D) & (step == 1) & (depth == 2)):
        back = np.flatnonzero(depth[c:] == 1)
        opened = n - 1 - (c + int(back[0])) if back.size else -1  # its '[' (forward index), or before this part
        before = end[:opened].rstrip() if opened >= 0 else b""
        if before.endswith(b":") and before[:-1].rstrip().endswith(b'"traceEvents"'):
            pass
        elif opened >= 0 or whole:
            continue
        rest = end[n - c:].lstrip()
        return _loads_object(b"{" + rest[1:]) if rest.startswith(b",") else {}
    return None


def _loads_object(data):
    try:
        out = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return {}
    return out if isinstance(out, dict) else {}
