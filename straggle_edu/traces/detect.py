"""Which file is which: the one format detection of ``analyze``, :func:`read_trace` and the fleet.

A file's format is decided by what it holds, never by its name or by a
substring in its first bytes (as Perfetto's trace processor does):

JSON, gzipped or not
    its top-level keys, found with a streaming parser (:mod:`ijson`, C
    backend) that skips the values it does not need, so a key after a large
    ``distributedInfo.pg_config`` is found in constant memory. ``traceEvents``
    is a PyTorch profiler (Kineto) trace; ``entries``, ``pg_config`` or
    ``pg_status`` (the dump's own keys; a profiler trace keeps its
    ``pg_config`` inside ``distributedInfo``) a Flight Recorder dump;
    ``coll_perf`` or ``p2p_perf`` NCCL Inspector output (JSON lines: the first
    object decides); a list whose first item has ``ph`` a Chrome trace in
    array form. The keys are looked for in the first :data:`JSON_SCAN_BYTES`.
a pickle
    a Flight Recorder dump when its opcodes, read without running any, name
    ``entries``, ``pg_config`` or ``pg_status`` before importing anything.
Parquet and CSV
    the columns: ``optype`` is an op-level trace, ``duration_s`` or
    ``compute_s`` a per-rank trace.
text
    a first ``[`` or ``{`` means JSON only if it parses as JSON; otherwise
    the lines of the first :data:`TEXT_SCAN_BYTES` are scanned for
    straggler-detector reports (Megatron-LM ``MnRtt/Rnk:``,
    nvidia-resiliency-ext ``GPU relative performance:``, whatever prefix
    the line has: ``[2024-03-14 23:07:56]``, ``[default0]:``, ``[NeMo I ...]``)
    and for NCCL Inspector's Prometheus metrics (``nccl_...{...comm_name=...}``).

Anything else is refused with the reason (:attr:`FileInfo.reason`): a tar or
zip archive, binary data, a JSON document of other keys, an execution trace,
a text without reports. :attr:`FileInfo.damaged` tells a file that cannot be
read as anything (empty, binary noise, a broken gzip stream, no permission)
from a file of another kind; the fleet makes the first a row when its name
says it is a trace.

:func:`sniff` classifies one file and never raises for its content;
:func:`detect` takes a file, a folder or a list of files and returns a
:class:`Detection`: the format, the files of that format (any names: several
per rank are grouped by :meth:`Detection.by_rank`), and the files skipped,
each with its reason. ``straggle-edu analyze``, every reader of a folder and
the fleet's :func:`~straggle_edu.fleet.sources.trace_kind` call these two.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickletools
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from ._table import TraceError, column_error, display_path

__all__ = ["FORMATS", "PER_RANK_FILES", "JSON_SCAN_BYTES", "TEXT_SCAN_BYTES", "FileInfo", "Detection", "sniff",
           "detect", "name_rank"]

#: Every format that ``straggle-edu analyze`` reads (``--format``).
FORMATS = ("op-level", "per-rank", "torch-profiler", "flight-recorder", "straggler-log", "nccl-inspector")
#: Formats whose traces are one file per rank (or per process): a folder of them is one job.
PER_RANK_FILES = ("torch-profiler", "flight-recorder", "nccl-inspector")
#: How far into a JSON document (decompressed) its top-level keys are looked for: 64 MiB.
JSON_SCAN_BYTES = 64 << 20
#: How far into a text file (decompressed) its straggler reports or Inspector metrics are looked for: 16 MiB.
TEXT_SCAN_BYTES = 16 << 20

_HEAD = 1 << 16
_CHUNK = 1 << 20
_DECISIVE = {"traceEvents": "torch-profiler", "entries": "flight-recorder", "pg_config": "flight-recorder",
             "pg_status": "flight-recorder", "coll_perf": "nccl-inspector", "p2p_perf": "nccl-inspector"}
_FR_STRINGS = frozenset(("entries", "pg_config", "pg_status"))
_PROM = re.compile(rb'^nccl_\w+\{[^}\n]*\bcomm_name="', re.MULTILINE)
_SAMPLE = re.compile(rb"[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?[ \t]+"
                     rb"([-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+)|NaN|[-+]?Inf)([ \t]+-?\d+)?")
_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"(\d+)(?:\.json|\.pkl|\.pickle)?$", re.IGNORECASE)
_EXPECTED = ("expected a PyTorch profiler trace ('traceEvents'), a Flight Recorder dump ('entries', 'pg_config'), "
             "NCCL Inspector output ('coll_perf' JSON or Prometheus 'nccl_...' lines), a straggler-detector log, "
             "an op-level .parquet/.csv or a per-rank .csv (see docs/trace-formats.md); --format skips the detection")


@dataclass(frozen=True)
class FileInfo:
    """What one file is.

    Attributes
    ----------
    path : Path
    format : str or None
        One of :data:`FORMATS`, or None: not a trace (see ``reason``).
    reason : str
        What decided it: the keys or lines found, or why the file is no trace.
    variant : str or None
        How the format is written: ``"json"``, ``"chrome-array"``,
        ``"pickle"``, ``"json-lines"``, ``"prometheus"``, ``"parquet"``,
        ``"csv"``, ``"text"``.
    rank : int or None
        The rank the file records about itself, where detection saw it
        (``distributedInfo.rank`` before ``traceEvents``).
    world_size : int or None
        ``distributedInfo.world_size``, where detection saw it.
    damaged : bool
        The bytes cannot be read as a file of any kind: empty, unreadable (an
        I/O error, no permission), a broken gzip stream, binary data of no
        known format, a pickle that does not parse. A file of some other kind
        (a README, a JSON result, a Parquet table of other columns) is not.
    """

    path: Path
    format: str | None
    reason: str
    variant: str | None = None
    rank: int | None = None
    world_size: int | None = None
    damaged: bool = False

    @property
    def name_rank(self):
        """The rank in the file name (``rank3``, ``rank-3``, ``rank_3``; a dump's trailing number), or None."""
        return name_rank(self.path, self.format)


def name_rank(path, format=None):
    """The rank a file name gives: ``rank<r>``, ``rank-<r>``, ``rank_<r>``; for a Flight Recorder dump also a
    trailing number (``_dump_3``, ``nccl_trace_rank_3``). None when the name has none.

    Examples
    --------
    >>> [name_rank(n) for n in ("rank3.json", "rank-12.json.gz", "rank0_trace.json", "bs_32_rank1.json.gz",
    ...                         "host_123.1700000000.pt.trace.json")]
    [3, 12, 0, 1, None]
    >>> name_rank("_dump_7", "flight-recorder")
    7
    """
    name = Path(path).name
    m = _RANK_IN_NAME.search(name)
    if m:
        return int(m.group(1))
    if format == "flight-recorder":
        m = _TRAILING_NUMBER.search(name)
        return int(m.group(1)) if m else None
    return None


@dataclass(frozen=True)
class Detection:
    """The format of a file, a folder or a list of files, and which files hold it.

    Attributes
    ----------
    format : str
        One of :data:`FORMATS`.
    files : tuple of FileInfo
        The files of that format, in name order (a folder) or as given (a list).
    skipped : tuple of FileInfo
        The other files of a folder, each with its reason.
    """

    format: str
    files: tuple
    skipped: tuple = ()

    @property
    def paths(self):
        """The paths of :attr:`files`."""
        return [f.path for f in self.files]

    def by_rank(self):
        """``{rank: [FileInfo, ...]}``: several files of one rank (``schedule(repeat=k)``) stay together.

        The rank is what the file records (``distributedInfo.rank``), else
        the rank in its name, else None (the reader numbers those in order).
        """
        out = {}
        for f in self.files:
            rank = f.rank if f.rank is not None else f.name_rank
            out.setdefault(rank, []).append(f)
        return out

    @property
    def warnings(self):
        """One line per file whose recorded rank and file name disagree."""
        return tuple(rank_mismatch(f.path, f.rank) for f in self.files
                     if f.rank is not None and f.name_rank is not None and f.rank != f.name_rank)


def rank_mismatch(path, rank):
    """The warning for a file that records ``rank`` while its name says another one."""
    return (f"{display_path(path)}: distributedInfo.rank is {rank} but the file name says rank "
            f"{name_rank(path)}; the rank the trace records is used")


class _Stop(Exception):
    """The scan reached its limit."""


class _Broken(Exception):
    """The file cannot be read to the end of what the scan needs (truncated gzip, I/O error)."""


class _Bounded(io.RawIOBase):
    """At most ``limit`` bytes of a binary stream; reading past them raises :class:`_Stop`."""

    def __init__(self, f, limit):
        self._f, self._left = f, limit

    def readable(self):
        return True

    def readinto(self, b):
        try:
            if self._left <= 0:
                if self._f.read(1):
                    raise _Stop()
                return 0
            data = self._f.read(min(len(b), self._left))
        except (OSError, EOFError, zlib.error) as exc:
            raise _Broken(_gzip_problem(exc)) from None
        b[: len(data)] = data
        self._left -= len(data)
        return len(data)


def _gzip_problem(exc):
    return f"not a readable gzip file (truncated or corrupt: {exc})" if not isinstance(exc, PermissionError) \
        else f"cannot be read ({exc.strerror})"


class _Gunzip:
    """A gzip stream's bytes, member after member; one that ends inside a member raises EOFError.

    (``gzip.GzipFile`` behind a buffer can hand back a truncated stream's bytes, then a quiet end.)
    """

    def __init__(self, raw):
        self._raw, self._d, self._pending, self._out, self._eof = raw, zlib.decompressobj(31), b"", b"", False

    def _next_member(self):
        rest = self._d.unused_data + self._pending
        if not rest.strip(b"\x00"):
            rest = self._raw.read(_HEAD)
            if not rest.strip(b"\x00"):  # a clean end (trailing zeros are padding, as gzip allows)
                self._eof = True
                return
        self._d, self._pending = zlib.decompressobj(31), rest

    def read(self, n):
        while len(self._out) < n and not self._eof:
            if self._d.eof:
                self._next_member()
                continue
            if not self._pending:
                self._pending = self._raw.read(_HEAD)
                if not self._pending:
                    raise EOFError("the gzip stream ends before its end-of-stream marker")
            self._out += self._d.decompress(self._pending, n - len(self._out))
            self._pending = self._d.unconsumed_tail
        data, self._out = self._out[:n], self._out[n:]
        return data


@contextlib.contextmanager
def _stream(path, limit):
    """The file's bytes (decompressed when gzip), at most ``limit`` of them, buffered."""
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        yield io.BufferedReader(_Bounded(_Gunzip(raw) if gz else raw, limit), _HEAD)


def _head(path):
    """The first 64 KiB (decompressed), and a problem (str) when even they cannot be read."""
    try:
        with _stream(path, _HEAD) as s:
            return s.read(_HEAD), None
    except _Broken as exc:
        return b"", str(exc)


def sniff(path):
    """What one file is (a :class:`FileInfo`); never raises for the file's content.

    Raises FileNotFoundError when there is no such file.

    Examples
    --------
    >>> import gzip, json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> big = {"distributedInfo": {"rank": 1, "world_size": 2, "pg_config": [{"ranks": list(range(30000))}]},
    ...        "traceEvents": []}
    >>> _ = (d / "whatever.gz").write_bytes(gzip.compress(json.dumps(big).encode()))
    >>> info = sniff(d / "whatever.gz")          # 'traceEvents' sits after 170 KB of pg_config
    >>> info.format, info.rank, info.world_size
    ('torch-profiler', 1, 2)
    >>> _ = (d / "train.log").write_text("[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0\\n")
    >>> sniff(d / "train.log").format
    'straggler-log'
    >>> _ = (d / "ms-ST.json").write_text('{"steps": [1, 2]}')
    >>> sniff(d / "ms-ST.json").reason
    "a JSON object whose top-level keys are 'steps': no trace"
    """
    p = Path(path)
    name = p.name.lower()
    if not p.exists():
        raise FileNotFoundError(f"{display_path(p)}: no such file")
    if p.is_dir():
        return FileInfo(p, None, "a folder")
    if name.startswith("meta-") and name.endswith((".yaml", ".yml", ".json")) or name in ("meta.yaml", "meta.yml"):
        return FileInfo(p, None, "a layout file, read with the op-level trace of the same name")
    try:
        if p.stat().st_size == 0:
            return FileInfo(p, None, "the file is empty", damaged=True)
        head, problem = _head(p)
    except OSError as exc:
        return FileInfo(p, None, f"cannot be read ({exc.strerror or exc})", damaged=True)
    if problem:
        return FileInfo(p, None, problem, damaged=True)
    return _classify(p, head)


def _classify(p, head):
    if head[:4] == b"PAR1":
        return _parquet(p)
    if head[:1] == b"\x80":
        return _pickle(p)
    if head[:4] == b"PK\x03\x04":
        return FileInfo(p, None, "a zip archive (a torch.save checkpoint is one): extract the traces and pass them")
    if head[257:262] == b"ustar":
        return FileInfo(p, None, "a tar archive: extract it (tar xf) and pass the folder")
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    json_problem = None
    if text[:1] in (b"{", b"["):
        info = _json(p)
        if info.format is not None or info.variant != "invalid":
            return info
        json_problem = info.reason
    if b"\x00" in head:
        reason = _binary_reason(p.name.lower())
        return FileInfo(p, None, reason, damaged=reason == _NOISE)
    csv = _csv(p, head)
    if csv is not None and csv.format is not None:
        return csv if not _gzipped(p) else FileInfo(p, None, f"a gzipped CSV ({csv.reason}): the CSV readers read "
                                                    "plain text; gunzip it (gunzip -k) and pass the .csv")
    info = _text(p, head)
    if info.format is not None:
        return info
    return csv or FileInfo(p, None, f"{json_problem}; {info.reason}" if json_problem else info.reason)


def _binary_reason(name):
    """Why a binary file is no trace, with what its name suggests it is."""
    for ends, what in ((".xplane.pb", "a JAX/TensorFlow profiler trace (XPlane protobuf)"),
                       ((".nsys-rep", ".qdrep"), "an Nsight Systems report"),
                       ((".pt", ".pth", ".bin", ".safetensors"), "a checkpoint")):
        if name.endswith(ends):
            return f"binary data, {what} by its name: straggle-edu reads PyTorch profiler traces (JSON), not this"
    return _NOISE


_NOISE = "binary data, not a trace"


def _gzipped(p):
    with open(p, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _parquet(p):
    try:
        import pyarrow.parquet as pq

        names = pq.ParquetFile(p).schema_arrow.names
    except ImportError:
        return FileInfo(p, "op-level", "a Parquet file (pyarrow is missing: the reader says how to install it)",
                        "parquet")
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds; the reader names the problem
        return FileInfo(p, "op-level", f"a Parquet file that pyarrow cannot open ({type(exc).__name__})", "parquet")
    cols = {c.lower() for c in names}
    if "optype" in cols:
        return FileInfo(p, "op-level", "a Parquet file with an 'optype' column", "parquet")
    return FileInfo(p, None, f"a Parquet file without an 'optype' column (columns: {', '.join(names[:8])})")


def _csv_header(head):
    """The first line of ``head`` that is neither blank nor a ``#`` comment, when it reads as a CSV header."""
    for line in head.decode("utf-8", "replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            cols = [c.strip() for c in line.split(",")]
            return line if len(cols) > 1 and all(c.replace("_", "").isalnum() for c in cols) else ""
    return ""


def _csv(p, head):
    """A CSV trace's FileInfo from its header; a refusal for a .csv of other columns; None for no CSV."""
    header = _csv_header(head)
    csv_name = p.name.lower().endswith(".csv")
    if not header and not csv_name:
        return None
    cols = {c.strip().lower() for c in header.split(",")}
    if "optype" in cols:
        return FileInfo(p, "op-level", "a CSV with an 'optype' column", "csv")
    if cols & {"duration_s", "compute_s"}:
        return FileInfo(p, "per-rank", "a CSV with a 'duration_s' column", "csv")
    if {"job_id", "path"} <= cols:
        return FileInfo(p, None, "a fleet manifest (job_id, path): pass it to straggle-edu fleet")
    if not csv_name:
        return None
    first = header or head.decode("utf-8", "replace").strip().splitlines()[0] if head.strip() else ""
    return FileInfo(p, None, f"cannot tell the trace format from the header {first.strip()[:80]!r}: an op-level "
                    "trace has an 'optype' column, a per-rank trace has 'step,rank,duration_s[,phase]'")


def _json(p):
    """A JSON file's FileInfo from its top-level keys; variant "invalid" when it does not parse."""
    import ijson

    scan = _KeyScan()
    try:
        with _stream(p, JSON_SCAN_BYTES) as s:
            if s.peek(3)[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte order mark, which json.loads accepts too
                s.read(3)
            for event, value in ijson.basic_parse(s, multiple_values=True, use_float=True):
                if scan.feed(event, value):
                    break
    except _Stop:
        return FileInfo(p, None, f"no 'traceEvents', 'entries' or 'coll_perf' among the top-level keys of its "
                        f"first {_size(JSON_SCAN_BYTES)} ({scan.shown()}); --format names the format")
    except _Broken as exc:
        if scan.format is None:
            return FileInfo(p, None, str(exc), damaged=True)
    except ijson.JSONError as exc:
        if scan.format is None:
            return FileInfo(p, None, f"not valid JSON ({_first_line(exc)})", "invalid")
    except (ValueError, OverflowError, RecursionError) as exc:  # a number or nesting the parser refuses
        if scan.format is None:
            return FileInfo(p, None, f"not valid JSON ({_first_line(exc)})", "invalid")
    return scan.result(p)


def _size(n):
    """``n`` bytes as a reader says it: "16 MiB", "64 KiB"."""
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0][:100] if text else type(exc).__name__


class _KeyScan:
    """The state of a streaming scan for the top-level keys of the first JSON value."""

    def __init__(self):
        self.depth, self.top, self.keys, self.format, self.variant = 0, None, [], None, "json"
        self.in_info, self.pending, self.meta, self.item_keys, self.first_item = False, None, {}, [], None

    def feed(self, event, value):
        """Take one parser event; True when the scan is decided."""
        depth = self.depth
        if depth > 2:  # inside a value nobody asked for (a pg_config): only the nesting counts
            if event == "start_map" or event == "start_array":
                self.depth = depth + 1
            elif event == "end_map" or event == "end_array":
                self.depth = depth - 1
            return False
        if self.top is None:
            self.top = event
        elif self.top == "start_array" and self.depth == 1 and self.first_item is None:
            self.first_item = event
        if event == "map_key":
            return self._key(value)
        if event in ("start_map", "start_array"):
            self.depth += 1
            self.pending = None
            return False
        if event in ("end_map", "end_array"):
            self.depth -= 1
            return self.depth == 0 or (self.top == "start_array" and self.depth == 1)
        if self.pending is not None and self.depth == 2:
            if isinstance(value, int) and not isinstance(value, bool):
                self.meta[self.pending] = value
            self.pending = None
        return self.depth == 0

    def _key(self, key):
        if self.depth == 1 and self.top == "start_map":
            self.keys.append(key)
            self.in_info = key == "distributedInfo"
            self.format = _DECISIVE.get(key)
            if self.format == "nccl-inspector":
                self.variant = "json-lines"
            return self.format is not None
        if self.depth == 2 and self.in_info and key in ("rank", "world_size"):
            self.pending = key
        elif self.depth == 2 and self.top == "start_array":
            self.item_keys.append(key)
            if key == "ph":
                self.format, self.variant = "torch-profiler", "chrome-array"
                return True
        return False

    def shown(self, most=8):
        keys = ", ".join(repr(k) for k in self.keys[:most])
        return keys + (f" and {len(self.keys) - most} more" if len(self.keys) > most else "") if keys else "none"

    def result(self, p):
        rank, world = self.meta.get("rank"), self.meta.get("world_size")
        if self.format is not None:
            found = "a list of trace events ('ph')" if self.variant == "chrome-array" else \
                f"the top-level key {self.keys[-1]!r}"
            return FileInfo(p, self.format, f"JSON with {found}", self.variant, rank, world)
        if self.top == "start_map" and {"schema", "nodes"} <= set(self.keys):
            return FileInfo(p, None, "a PyTorch execution trace (ExecutionTraceObserver: 'schema', 'nodes'), "
                            "which holds no times: pass the profiler (Kineto) trace of the same run")
        if self.top == "start_map":
            return FileInfo(p, None, f"a JSON object whose top-level keys are {self.shown()}: no trace")
        if self.top == "start_array":
            if self.first_item in (None, "end_array"):
                return FileInfo(p, None, "an empty JSON list: no trace")
            what = f"an object with keys {', '.join(map(repr, self.item_keys[:6]))}" if self.item_keys else \
                "not an object"
            return FileInfo(p, None, f"a JSON list whose first item is {what} (a Chrome trace's events have 'ph')")
        return FileInfo(p, None, "a JSON value that is neither an object nor a list: no trace")


class _NoTell:
    """A stream that offers only ``read`` and ``readline`` (pickletools asks an object with ``tell`` for it)."""

    def __init__(self, s):
        self.read, self.readline = s.read, s.readline


def _pickle(p):
    """A pickle's FileInfo from its opcodes, read without running any."""
    from ._safe import _PLAIN_OPCODES

    try:
        with _stream(p, JSON_SCAN_BYTES) as s:
            for op, arg, _pos in pickletools.genops(_NoTell(s)):
                if op.name not in _PLAIN_OPCODES:
                    return FileInfo(p, None, f"a pickle that wants to run code (opcode {op.name}); nothing was run, "
                                    "and a Flight Recorder dump holds plain data only")
                if isinstance(arg, str) and arg in _FR_STRINGS:
                    return FileInfo(p, "flight-recorder", f"a pickle of plain data with the key {arg!r}", "pickle")
    except _Stop:
        return FileInfo(p, None, f"a pickle whose first {_size(JSON_SCAN_BYTES)} name no 'entries' or "
                        "'pg_config'; --format flight-recorder reads it anyway")
    except _Broken as exc:
        return FileInfo(p, None, str(exc), damaged=True)
    except (ValueError, EOFError, KeyError, TypeError, OverflowError, MemoryError) as exc:
        return FileInfo(p, None, f"not a readable pickle ({_first_line(exc)})", damaged=True)
    return FileInfo(p, None, "a pickle without 'entries' or 'pg_config': not a Flight Recorder dump")


def _prometheus(head):
    """Whether text starts as Prometheus text does: its first line that is neither blank nor ``#`` is a sample.

    (A README that quotes metric lines in its body is not a metrics file.)

    Examples
    --------
    >>> _prometheus(b'# HELP x\\nnccl_x{gpu="GPU0"} 1.5\\n'), _prometheus(b"# Inspector\\nThe plugin...\\n")
    (True, False)
    """
    for line in head.splitlines():
        if line.strip() and not line.lstrip().startswith(b"#"):
            return bool(_SAMPLE.fullmatch(line.strip()))
    return False


_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)


def _report_outside_fences(pattern, text, fences):
    """The first match of ``pattern`` in ``text`` outside a Markdown code block, and the fences counted so far.

    ``fences`` is the number of ````` lines before ``text``: a report line that a document quotes in a
    code block (Megatron's README_STRAGGLER.md) makes no log.

    Examples
    --------
    >>> import re
    >>> _report_outside_fences(re.compile("Rnk:"), "doc\\n```\\nRnk: 1\\n```\\n", 0)
    (None, 2)
    >>> _report_outside_fences(re.compile("Rnk:"), "[x] Rnk: 1\\n", 0)[0] is not None
    True
    """
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            return None, fences + len(_FENCE.findall(text))
        inside = (fences + len(_FENCE.findall(text, 0, m.start()))) % 2
        if not inside:
            return m, fences
        pos = m.end()


def _text(p, head):
    """A text file's FileInfo: straggler-detector reports or Prometheus Inspector metrics in its first lines."""
    from .straggler_log import REPORT_LINE

    prom, carry, fences = _prometheus(head), b"", 0
    try:
        with _stream(p, TEXT_SCAN_BYTES) as s:
            while True:
                try:
                    chunk = s.read(_CHUNK)
                except _Stop:
                    chunk, stopped = b"", True
                else:
                    stopped = False
                data = carry + chunk
                cut = data.rfind(b"\n") if chunk else len(data) - 1
                body, carry = data[: cut + 1], data[cut + 1:]
                if prom and _PROM.search(body):
                    return FileInfo(p, "nccl-inspector", "Prometheus lines of NCCL Inspector metrics", "prometheus")
                m, fences = _report_outside_fences(REPORT_LINE, body.decode("utf-8", "replace"), fences)
                if m:
                    return FileInfo(p, "straggler-log", f"a straggler-detector line ({m.group(0)[:40]!r})", "text")
                if not chunk:
                    break
    except _Broken as exc:
        return FileInfo(p, None, str(exc), damaged=True)
    if stopped:
        return FileInfo(p, None, f"no straggler-detector report or NCCL Inspector metric in its first "
                        f"{_size(TEXT_SCAN_BYTES)} (a log whose first report comes later: --format straggler-log)")
    return FileInfo(p, None, "text without straggler-detector reports or NCCL Inspector metrics")


def detect(path, *, format=None):
    """The format of a file, a folder or a list of files, and the files that hold it.

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        One file, a folder (its files, not its sub-folders), or several files.
    format : one of :data:`FORMATS`, optional
        Take the files of this format only (a folder or a list), or trust
        the user (one file).

    Returns
    -------
    Detection

    Raises
    ------
    TraceError
        No trace in the input; a folder or list of several formats (each
        named, with a file of each); a file that is no trace (its reason).
    FileNotFoundError

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("rank0_trace.json", "rank1_trace.json", "rank1_trace.1.json"):
    ...     r = int(name[4])
    ...     _ = (d / name).write_text(json.dumps({"distributedInfo": {"rank": r}, "traceEvents": []}))
    >>> _ = (d / "README.md").write_text("# job 42\\n")
    >>> found = detect(d)
    >>> found.format, [f.path.name for f in found.skipped], sorted(found.by_rank())
    ('torch-profiler', ['README.md'], [0, 1])
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, got {format!r}")
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("trace must name at least one file, got an empty list")
        return _decide([sniff(p) for p in path], format, "the files given hold")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"trace must be a path, a list of paths or a trace object, got {type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{display_path(p)}: no such file or folder")
    if p.is_dir():
        return _decide([sniff(f) for f in sorted(p.iterdir()) if f.is_file()], format,
                       f"{display_path(p)}: the folder holds", folder=p)
    info = sniff(p)
    if format is not None:
        return Detection(format, (FileInfo(p, format, f"--format {format}", info.variant, info.rank,
                                           info.world_size),))
    if info.format is None:
        raise column_error(display_path(p), problem=f"unknown trace file type: {info.reason}; {_EXPECTED}")
    return Detection(info.format, (info,))


def _decide(infos, format, where, folder=None):
    groups = {}
    for info in infos:
        if info.format is not None:
            groups.setdefault(info.format, []).append(info)
    if format is not None:
        chosen = groups.get(format, [])
        if not chosen:
            raise TraceError(f"{where} no {format} file ({_found(groups, infos)})")
        return Detection(format, tuple(chosen), tuple(i for i in infos if i not in chosen))
    if not groups and folder is not None and not infos:
        subs = sorted(f.name for f in folder.iterdir() if f.is_dir())
        if subs:
            raise TraceError(f"{where} no file, only folders: pass one of them ({', '.join(subs[:6])}"
                             f"{', ...' if len(subs) > 6 else ''}), e.g. torchtitan's profile_trace/iteration_<N>")
    if not groups:
        if folder is None and len(infos) == 1:
            raise column_error(display_path(infos[0].path), problem=f"unknown trace file type: {infos[0].reason}; "
                               f"{_EXPECTED}")
        raise TraceError(f"{where} no trace file ({_found(groups, infos)}); {_EXPECTED}")
    if len(groups) > 1:
        raise TraceError(f"{where} files of {len(groups)} formats: {_found(groups, [])}; pass the files of "
                         "one format (a folder or a list of them), or --format FORMAT")
    fmt, chosen = next(iter(groups.items()))
    return Detection(fmt, tuple(chosen), tuple(i for i in infos if i.format is None))


def _found(groups, infos, most=3):
    """'2 torch-profiler (a.json, b.json), 1 flight-recorder (...)', or the reasons of the first files."""
    if groups:
        return ", ".join(f"{len(v)} {k} ({', '.join(i.path.name for i in v[:most])}"
                         f"{', ...' if len(v) > most else ''})" for k, v in groups.items())
    if not infos:
        return "it is empty"
    shown = "; ".join(f"{i.path.name}: {i.reason}" for i in infos[:most])
    return shown + (f"; and {len(infos) - most} more" if len(infos) > most else "")
