"""A Chrome trace (PyTorch profiler JSON) read as a stream of events, in bounded memory.

:class:`ChromeStream` reads the events of ``traceEvents`` in two ways:

- :meth:`~ChromeStream.open`, the exact reader: one event at a time,
  parsed by :mod:`ijson` with its C backend (yajl2), every field built: an
  86 MB trace streams in about 1.2 s holding 13 MB, where :func:`json.load`
  takes 2.9 s and 529 MB;
- :meth:`~ChromeStream.batches`, the fast reader: a megabyte of events at a
  time, cut between two events, decoded by :mod:`msgspec` into Structs that
  name only the fields the caller reads (the others are checked as JSON,
  never built): a 100 MB trace in 0.45 s where the exact reader takes 1.35 s.
  It reads what the exact reader reads, or raises :class:`Unsure` and
  leaves the file to it.

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

import codecs
import contextlib
import gzip
import json
import zlib
from collections import deque
from pathlib import Path

import numpy as np

from ._safe import MAX_DEPTH
from ._table import column_error, display_path

__all__ = ["ChromeStream", "EVENT_BYTES", "Unsure", "fast_decoding", "missing_ijson"]

#: The largest single event (and the largest part of a file before ``traceEvents``), in bytes.
EVENT_BYTES = 64 << 20
_CHUNK = 1 << 16
_TAIL = 4 << 20
_REPORT_BYTES = 16 << 20  # a progress callback hears of every 16 MiB read
_GZIP_MAGIC = b"\x1f\x8b"
_BATCH = 1 << 20  # what the batch reader reads at a time
_BATCH_MOST = 16 << 20  # no boundary between two events in this many bytes: the file goes to the exact reader
_KEY = b'"traceEvents"'
_WS = b" \t\n\r"  # JSON's whitespace (bytes.strip() would take \x0b and \x0c too)


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
        self._tail, self._tail_bytes = deque(), 0  # the last chunks read, at least _TAIL bytes of them
        self._pending = b""
        self._depth = _Depth()
        self._utf8 = None

    def check_utf8(self):
        """From now on, bytes that are not UTF-8 raise :class:`Unsure` (ijson's parser refuses them)."""
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        if self._pending and not self._pending.isascii():
            self._utf8_ok(self._pending)

    def finish(self):
        """At the end of the stream: a UTF-8 sequence cut short is refused too."""
        if self._utf8 is not None:
            self._utf8_ok(b"", True)

    def _utf8_ok(self, data, final=False):
        try:
            self._utf8.decode(data, final)
        except UnicodeDecodeError as exc:
            raise Unsure(f"not UTF-8 ({exc})") from None

    @property
    def tail(self):
        """The last bytes read (at most 4 MiB)."""
        return b"".join(self._tail)[-_TAIL:]

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
        if self._utf8 is not None and (not data.isascii() or self._utf8.getstate()[0]):
            self._utf8_ok(data)
        self._tail.append(data)
        self._tail_bytes += len(data)
        while self._tail_bytes - len(self._tail[0]) >= _TAIL:
            self._tail_bytes -= len(self._tail.popleft())
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
        """The events as ijson's own iterator (the reference reader); :attr:`meta` is set on a clean exit.

        A JSON error while the caller loops becomes one TraceError naming the file.
        """
        backend = _ijson()
        with open(self.path, "rb") as f:
            tap = self._tap(f)
            first = tap.peek_start()
            if first not in (b"{", b"["):
                raise column_error(self.shown, problem="not valid JSON (expected a Chrome trace JSON object with a "
                                   "traceEvents list)")
            try:
                yield backend.items(tap, "item" if first == b"[" else "traceEvents.item", use_float=True)
            except backend.common.JSONError as exc:
                raise column_error(self.shown, problem=f"not valid JSON ({_short(exc)}; expected a Chrome trace "
                                   f"JSON object with a traceEvents list)") from None
        self._set_meta(tap, first)

    def batches(self, event_type):
        """The events as lists of ``event_type`` (a msgspec Struct), each list decoded by msgspec from a megabyte.

        The fast reader: the fields of an event that the Struct does not name
        are checked as JSON but never built, about seven times faster than
        :meth:`open`. It reads what :meth:`open` reads, or raises
        :class:`Unsure` (and then :meth:`open` is the reader): where the
        document is not one JSON object (or list) with one top-level
        ``traceEvents`` list, where msgspec refuses a batch (JSON that does
        not parse, an event that is not an object, a number out of range),
        where the bytes are not UTF-8, and where the parts before and after
        the events hold an integer beyond 64 bits (ijson refuses those). An
        integer beyond 64 bits in a field of an event is the caller's to
        check, in the fields it reads; in the fields it does not read, it is
        skipped where ijson would refuse the file. The limits of
        :class:`_Tap` (depth, the size of one event) hold as in :meth:`open`.
        :attr:`meta` is set once the last list is taken.
        """
        ms = fast_decoding()
        if ms is None:
            raise Unsure("msgspec is not installed")
        with open(self.path, "rb") as f:
            tap = self._tap(f)
            first = tap.peek_start()
            tap.check_utf8()
            if first not in (b"{", b"["):
                raise Unsure("not a JSON object or list")
            buf = _events_start(tap, ms) if first == b"{" else tap.read(_BATCH).lstrip(_WS)[1:]
            decoder, cut_before = ms.json.Decoder(list[event_type]), False
            while data := tap.read(_BATCH):
                buf += data
                cut = _cut(buf)
                batch = _decode(ms, decoder, b"[" + buf[:cut] + b"]", cut_wrong=True) if cut else None
                if batch is not None:
                    yield batch
                    buf, cut_before = buf[cut:].lstrip(_WS)[1:], True  # past the comma
                elif len(buf) > _BATCH_MOST:
                    raise Unsure(f"no end of an event found in {_BATCH_MOST >> 20} MiB")
            tap.finish()
            if cut_before and buf.lstrip(_WS)[:1] == b"]":
                raise Unsure("a comma before the end of the list")
            yield _last_events(ms, buf, first, event_type)
        self._set_meta(tap, first)

    def _tap(self, f):
        gz = f.read(2) == _GZIP_MAGIC
        f.seek(0)
        return _Tap(gzip.GzipFile(fileobj=f, mode="rb") if gz else f, self.shown, self.on_bytes)

    def _set_meta(self, tap, first):
        if first == b"[":
            self.meta = {"traceEvents": True}
            return
        head, found = _head_keys(bytes(tap.head))
        self.meta = {**head, **_tail_keys(tap.tail)}
        self.meta["traceEvents"] = found


class Unsure(Exception):
    """The fast reader (:meth:`ChromeStream.batches`) cannot vouch for a file: :meth:`ChromeStream.open` reads it."""


def fast_decoding():
    """msgspec, whose JSON decoder the fast reader uses; None where it is not installed.

    Examples
    --------
    >>> fast_decoding().__name__
    'msgspec'
    """
    try:
        import msgspec
    except ImportError:  # pragma: no cover - a dependency; the exact reader does without it
        return None
    return msgspec


def _decode(ms, decoder, text, cut_wrong=False):
    """``text`` decoded; None where ``cut_wrong`` and it does not parse (a batch cut inside a string: read on)."""
    try:
        return decoder.decode(text)
    except ms.ValidationError as exc:
        raise Unsure(str(exc)) from None
    except ms.DecodeError as exc:
        if cut_wrong:
            return None
        raise Unsure(str(exc)) from None


def _cut(buf):
    """Where the last event in ``buf`` that a comma follows ends (0: none among the last few ``}``).

    Only a guess: a ``}`` inside a string may look the same. The batch is
    ``[`` + ``buf[:cut]`` + ``]``, and where that parses, the guess was
    right: JSON is read left to right, so text that parses as a list of
    values ended between two of them in the whole document too.

    Examples
    --------
    >>> _cut(b'{"a": 1}, {"b": "},"}, {"c"'), _cut(b'{"a": 1}')
    (21, 0)
    """
    end = len(buf)
    for _ in range(8):
        at = buf.rfind(b"}", 0, end)
        if at < 0:
            return 0
        if buf[at + 1:at + 65].lstrip(_WS)[:1] == b",":
            return at + 1
        end = at
    return 0


def _events_start(tap, ms):
    """The bytes after the ``[`` of the top-level ``traceEvents`` list; what precedes it is checked as JSON."""
    tap.read(_CHUNK)  # the first chunk (peeked at): the head holds it, and all that is read until the key
    while not tap.head_done:
        if not tap.read(_CHUNK):
            raise Unsure("no traceEvents")
    head = bytes(tap.head)
    at = head.find(_KEY)
    if at < 0 or not _top_level_key(head, at):
        raise Unsure("the first 'traceEvents' is not the top-level key")
    _check_json(ms, head[:at] + b'"traceEvents": []}')
    after = head[at + len(_KEY):]
    while len(after) < 4096 and (more := tap.read(_BATCH)):
        after += more
    opened = after.lstrip(_WS)
    opened = opened[1:].lstrip(_WS) if opened[:1] == b":" else b""
    if opened[:1] != b"[":
        raise Unsure("traceEvents is not a list")
    return opened[1:]


def _top_level_key(head, at):
    """Whether the quote at ``head[at]`` opens a key of the top-level object."""
    a = np.frombuffer(head[:at + 1], np.uint8)
    quote = _real_quotes(a)
    depth, _ = _depth(a, quote, (0x5B, 0x7B), (0x5D, 0x7D))
    return bool(quote[at]) and int(depth[at]) == 1


def _last_events(ms, buf, first, event_type):
    """The events after the last batch; what follows the list is checked as JSON, without another traceEvents."""
    events = ms.json.Decoder(list[event_type])
    if first == b"[":
        return _decode(ms, events, b"[" + buf)
    if _KEY in buf:
        raise Unsure("'traceEvents' after the events")
    text = b'{"traceEvents": [' + buf
    listed = _decode(ms, ms.json.Decoder(_document(ms)), text).traceEvents  # the list's bytes; the whole parses
    rest = text[16 + len(listed):].lstrip(_WS)  # ', "key": value, ...}' or '}'
    if rest.rstrip(_WS) != b"}":
        _check_json(ms, b"{" + rest[1:])
    return _decode(ms, events, listed)


def _document(ms, cache=[]):  # noqa: B006 - one Struct, made once
    if not cache:
        cache.append(ms.defstruct("Document", [("traceEvents", ms.Raw)]))
    return cache[0]


def _check_json(ms, text):
    """Refuse (:class:`Unsure`) JSON that does not parse, or that holds an integer beyond 64 bits."""
    todo = [_decode(ms, ms.json.Decoder(), text)]
    while todo:
        v = todo.pop()
        if type(v) is int and not -(1 << 63) <= v < (1 << 63):  # noqa: E721
            raise Unsure(f"the integer {v} is beyond 64 bits")
        if type(v) is dict:  # noqa: E721
            todo += v.values()
        elif type(v) is list:  # noqa: E721
            todo += v


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
    key = b'"traceEvents"'
    if key not in head:
        return {}, False
    a = np.frombuffer(head, np.uint8, count=head.rfind(key) + 1)  # what follows the last key tells nothing
    quote = _real_quotes(a)
    depth, _ = _depth(a, quote, (0x5B, 0x7B), (0x5D, 0x7D))
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
