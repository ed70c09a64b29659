"""Reading real traces and finding their stragglers by what-if analysis.

The method is the one of Lin et al., "Understanding Stragglers in Large Model
Training Using What-if Analysis" (OSDI 2025): replay each step through a
dependency model, once with the recorded op durations and once with "ideal"
durations (what the op would take without stragglers), and compare.

Map of the package
------------------
:func:`read_trace`
    any supported file or folder -> an :class:`OpTrace` or a :class:`RankTrace`.
:func:`analyze`
    a path or a trace -> a frozen :class:`Analysis` (``slowdown``, ``waste``,
    ``per_step``, ``by_rank`` / ``by_optype`` / ``by_dp_rank`` / ``by_stage`` /
    ``by_worker``, ``m_w``, ``m_s``, ``replay_error``, ``to_json()``).
:mod:`~straggle_edu.traces.perrank`
    the simple ``step,rank,duration_s[,phase]`` CSV and its barrier analysis.
:mod:`~straggle_edu.traces.optrace`
    op-level traces in the schema of the OSDI 2025 artifact (.parquet, .csv).
:mod:`~straggle_edu.traces.profiler`
    PyTorch profiler Chrome traces, reduced to per-rank step times.
:mod:`~straggle_edu.traces.replay`
    the dependency model and the vectorised replay.
:mod:`~straggle_edu.traces.whatif`
    ideal durations, slowdown, attribution, M_W and M_S (the one what-if engine).
:mod:`~straggle_edu.traces.blocks`
    large traces read and analysed a block of steps at a time.
:mod:`~straggle_edu.traces.diagnose`
    the debugging questions answered, for a trace or a scenario model's job.
:mod:`~straggle_edu.traces.synthetic`
    op-level traces with injected causes and known answers.
:mod:`~straggle_edu.traces.cli`
    ``straggle-edu analyze TRACE [--json]``.

See ``docs/trace-formats.md`` for the three formats. Files are parsed (CSV,
JSON, Parquet), never unpickled or evaluated, and never modified.
"""

from __future__ import annotations

import importlib

from ._table import TraceError
from .perrank import RankTrace, analyze_rank_times, analyze_ranks, rank_trace_from_times, read_rank_csv
from .result import Analysis

__all__ = [
    "Analysis",
    "OpTrace",
    "RankTrace",
    "TraceError",
    "analyze",
    "analyze_rank_times",
    "analyze_ranks",
    "rank_trace_from_times",
    "read_rank_csv",
    "read_trace",
    "synthetic_trace",
    "write_trace",
    "example_trace",
    "example_trace_path",
    "trace_or_example",
    "cause_gallery",
    "ops_table",
]

# Loaded on first use, so that ``import straggle_edu.traces`` stays light.
_LAZY = {
    "OpTrace": "optrace",
    "read_op_trace": "optrace",
    "write_trace": "optrace",
    "read_profiler_traces": "profiler",
    "synthetic_trace": "synthetic",
    "example_trace_path": "synthetic",
    "example_trace": "synthetic",
    "trace_or_example": "synthetic",
    "cause_gallery": "synthetic",
    "ops_table": "optrace",
    "analyze_ops": "whatif",
}


def __getattr__(name):
    if name in _LAZY:
        mod = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _detect(path):
    """The format of ``path``: "op-level", "per-rank" or "torch-profiler"."""
    import os
    from pathlib import Path

    if isinstance(path, (list, tuple)):
        return "torch-profiler"
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"trace must be a path, a list of paths or a trace object, got {type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.is_dir():
        return "torch-profiler"
    name = p.name.lower()
    if name.endswith((".json", ".json.gz", ".pt.trace.json", ".pt.trace.json.gz")):
        return "torch-profiler"
    if name.endswith((".parquet", ".pq")):
        return "op-level"
    if name.endswith(".csv"):
        if p.stat().st_size == 0:
            raise TraceError(f"{p}: the file is empty (expected a header line and rows)")
        with open(p, encoding="utf-8", errors="replace") as f:
            header = ""
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    header = line
                    break
        cols = {c.strip().lower() for c in header.split(",")}
        if "optype" in cols:
            return "op-level"
        if "duration_s" in cols:
            return "per-rank"
        raise TraceError(
            f"{p}: cannot tell the trace format from the header {header.strip()!r}: an op-level trace "
            f"has an 'optype' column, a per-rank trace has 'step,rank,duration_s[,phase]'"
        )
    raise TraceError(
        f"{p}: unknown trace file type; expected .parquet or .csv (op-level), .csv (per-rank), "
        f".json or .json.gz (PyTorch profiler), or a folder of rank-* profiler traces"
    )


def read_trace(path, *, format=None, meta=None):
    """Read a trace file (or a folder / list of profiler traces).

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        ``.parquet`` / ``.csv`` op-level trace, per-rank ``.csv``, PyTorch
        profiler ``.json[.gz]``, a folder of ``rank-*`` profiler files, or a list.
    format : {"op-level", "per-rank", "torch-profiler"}, optional
        Skip the detection.
    meta : str or os.PathLike, optional
        Op-level only: the layout file (``meta-<name>.yaml`` or ``.json``);
        by default it is looked up beside the trace.

    Returns
    -------
    OpTrace or RankTrace

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = p.write_text("step,rank,duration_s,phase\\n0,0,1.0,compute\\n0,1,2.0,compute\\n")
    >>> read_trace(p)
    RankTrace(format='per-rank', ranks=2, steps=1, source=...)
    """
    fmt = format or _detect(path)
    if fmt == "per-rank":
        return read_rank_csv(path)
    if fmt == "op-level":
        from .optrace import read_op_trace

        return read_op_trace(path, meta=meta)
    if fmt == "torch-profiler":
        from .profiler import read_profiler_traces

        return read_profiler_traces(path)
    raise ValueError(f"format must be one of 'op-level', 'per-rank', 'torch-profiler', got {fmt!r}")


def analyze(trace, *, attribution="auto", progress=False, ideal="artifact"):
    """What-if analysis of a trace: how much slower than ideal, and who is to blame.

    Parameters
    ----------
    trace : path, list of paths, OpTrace or RankTrace
        What :func:`read_trace` reads, or what it returned.
    attribution : {"auto", "full", "basic"}
        Op-level traces: ``"full"`` always reports ``by_dp_rank`` and
        ``by_worker``; ``"basic"`` leaves them out; ``"auto"`` reports them up
        to 1024 workers. Per-rank formats always report ``by_rank``.
    progress : bool
        Show a progress bar for large op-level traces.
    ideal : {"artifact", "per-step"}
        Op-level traces: how ideal durations are set (see
        :func:`~straggle_edu.traces.whatif.ideal_work`).

    Returns
    -------
    Analysis

    Examples
    --------
    >>> a = analyze(rank_trace_from_times([[2.0, 1.0, 1.0, 1.0]]))
    >>> round(a.slowdown, 3), a.culprit()
    (1.6, 0)
    """
    if attribution not in ("auto", "full", "basic"):
        raise ValueError(f"attribution must be one of 'auto', 'full', 'basic', got {attribution!r}")
    if isinstance(trace, RankTrace):
        return analyze_ranks(trace)
    if not _is_op_trace(trace):
        trace = read_trace(trace)
        if isinstance(trace, RankTrace):
            return analyze_ranks(trace)
    from .whatif import analyze_ops

    return analyze_ops(trace, attribution=attribution, progress=progress, ideal=ideal)


def _is_op_trace(obj):
    mod = type(obj).__module__
    return mod.endswith("traces.optrace")
