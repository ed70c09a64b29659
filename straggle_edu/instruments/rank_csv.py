"""Writing the per-rank trace CSV that ``straggle-edu analyze`` reads.

The format (shared with :mod:`straggle_edu.traces`)::

    step,rank,duration_s,phase
    0,0,0.050123,compute
    0,0,0.000210,wait
    ...
    # incomplete

``step`` and ``rank`` are whole numbers >= 0, ``duration_s`` is in seconds,
``phase`` is ``compute`` (the worker's own work), ``wait`` (blocked at the
barrier until the last peer arrives) or ``comm`` (the transfer). A writer
that stops early appends the comment line ``# incomplete``; readers skip
lines that start with ``#``.

Both the live barrier lab and the cluster probe write through
:class:`RankTraceWriter`, which flushes after every step, so an interrupted
run keeps every step it finished. The format's constants (``HEADER``,
``INCOMPLETE``, ``PHASES``) are defined once, by the reader in
:mod:`straggle_edu.traces.perrank`, and imported here.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from .._validate import one_of, require
from ..traces.perrank import HEADER, INCOMPLETE, PHASES

__all__ = ["RankTraceWriter", "check_out_path", "HEADER", "INCOMPLETE", "PHASES"]


def check_out_path(out, name="out"):
    """Check that ``out`` names a file in a folder that exists; return a Path.

    Examples
    --------
    >>> check_out_path("/no/such/folder/trace.csv")
    Traceback (most recent call last):
    ...
    ValueError: out must be a file in a folder that exists, got '/no/such/folder/trace.csv';
    the folder '/no/such/folder' does not exist: create it first
    """
    require(isinstance(out, (str, os.PathLike)) and str(out) != "", name, out, "a file path")
    path = Path(out).expanduser()
    folder = path.parent
    require(folder.is_dir(), name, str(out), "a file in a folder that exists",
            fix=f"the folder {str(folder)!r} does not exist: create it first")
    require(not path.is_dir(), name, str(out), "a file, not a folder")
    return path


class RankTraceWriter:
    """Write a per-rank trace, one step at a time, flushing as it goes.

    Parameters
    ----------
    out : str or os.PathLike
        The CSV file to (over)write. Its folder must exist.

    Use it as a context manager: leaving the block with an exception (an
    interrupt included) appends ``# incomplete``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "trace.csv"
    >>> with RankTraceWriter(path) as w:
    ...     w.write_step(0, [(0, 0.05, "compute"), (0, 0.01, "wait")])
    >>> print(path.read_text().strip())
    step,rank,duration_s,phase
    0,0,0.050000000,compute
    0,0,0.010000000,wait
    """

    def __init__(self, out):
        self.path = check_out_path(out)
        self.rows = 0
        self.closed = False
        self._file = open(self.path, "w", newline="", encoding="utf-8")
        self._file.write(HEADER + "\n")
        self._file.flush()

    def write_step(self, step, rows):
        """Append the rows ``(rank, duration_s, phase)`` of one step, then flush."""
        lines = []
        for rank, duration, phase in rows:
            one_of("phase", phase, PHASES)
            duration = float(duration)
            require(math.isfinite(duration) and duration >= 0, "duration_s", duration, "a finite number >= 0")
            lines.append(f"{int(step)},{int(rank)},{duration:.9f},{phase}\n")
        self._file.write("".join(lines))
        self._file.flush()
        self.rows += len(lines)

    def close(self, complete=True):
        """Close the file; mark it ``# incomplete`` unless ``complete``."""
        if self.closed:
            return
        self.closed = True
        try:
            if not complete:
                self._file.write(INCOMPLETE + "\n")
        finally:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(complete=exc_type is None)
        return False
