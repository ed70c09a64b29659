"""Reading real traces and finding their stragglers by what-if analysis.

The method is the one of Lin et al., "Understanding Stragglers in Large Model
Training Using What-if Analysis" (OSDI 2025): replay each step through a
dependency model, once with the recorded op durations and once with "ideal"
durations (what the op would take without stragglers), and compare.

Map of the package
------------------
:func:`read_trace`
    any supported file or folder -> an :class:`OpTrace`, a :class:`RankTrace`,
    a Flight Recorder trace, or (formats without step times) a
    :class:`SuspectAnalysis`.
:mod:`~straggle_edu.traces.detect`
    which file is which: the format from what a file holds (top-level JSON
    keys, read as a stream; columns; report lines), for a file, a folder or
    a list; the one detection of ``analyze`` and the fleet.
:func:`analyze`
    a path or a trace -> a frozen :class:`Analysis` (``slowdown``, ``waste``,
    ``per_step``, ``by_rank`` / ``by_optype`` / ``by_dp_rank`` / ``by_stage`` /
    ``by_worker``, ``m_w``, ``m_s``, ``replay_error``, ``to_json()``).
:mod:`~straggle_edu.traces.perrank`
    the simple ``step,rank,duration_s[,phase]`` CSV and its barrier analysis.
:mod:`~straggle_edu.traces.optrace`
    op-level traces in the schema of the OSDI 2025 artifact (.parquet, .csv).
:mod:`~straggle_edu.traces.profiler`
    PyTorch profiler (Kineto) traces, read as a stream: each rank's steps,
    collectives and arrivals.
:mod:`~straggle_edu.traces.syncpoints`
    profiler traces on the one what-if engine: collectives as
    synchronisation points, the compute between them as segments.
:mod:`~straggle_edu.traces.flight_recorder`
    PyTorch Flight Recorder dumps: the ranks the others wait on.
:mod:`~straggle_edu.traces.straggler_log`
    Megatron-LM ``--log-straggler`` lines and nvidia-resiliency-ext reports.
:mod:`~straggle_edu.traces.nccl_inspector`
    NCCL Inspector JSON lines: per-collective execution time per rank.
:mod:`~straggle_edu.traces.noise`
    the noise floor of a profiler or per-rank analysis.
:mod:`~straggle_edu.traces.suspects`
    :class:`SuspectAnalysis`, the result of the formats without step times.
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

See ``docs/trace-formats.md`` for the formats. Files are parsed (CSV, JSON,
Parquet, text), never evaluated, and never modified; Flight Recorder pickles
are read as plain data only (see :mod:`~straggle_edu.traces._safe`).
"""

from __future__ import annotations

import importlib

from ._table import TraceError
from .detect import FORMATS
from .perrank import RankTrace, analyze_rank_times, analyze_ranks, rank_trace_from_times, read_rank_csv
from .result import Analysis

__all__ = [
    "Analysis",
    "FORMATS",
    "OpTrace",
    "ProfilerTrace",
    "rank_table",
    "SuspectAnalysis",
    "RankTrace",
    "TraceError",
    "analyze",
    "analyze_rank_times",
    "analyze_ranks",
    "rank_trace_from_times",
    "read_flight_recorder",
    "read_nccl_inspector",
    "read_rank_csv",
    "read_straggler_log",
    "read_trace",
    "op_traces_in",
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
    "ProfilerTrace": "profiler",
    "analyze_profiler": "syncpoints",
    "rank_table": "syncpoints",
    "read_flight_recorder": "flight_recorder",
    "analyze_flight_recorder": "flight_recorder",
    "read_straggler_log": "straggler_log",
    "read_nccl_inspector": "nccl_inspector",
    "SuspectAnalysis": "suspects",
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


def _detection(path, format=None):
    """What :func:`read_trace` reads at ``path``: a :class:`~straggle_edu.traces.detect.Detection`.

    The detection of :func:`~straggle_edu.traces.detect.detect`, plus the rules
    of one analysis: op-level traces, per-rank CSVs and straggler logs are
    read one file at a time.
    """
    import os
    from pathlib import Path

    from .detect import PER_RANK_FILES, detect

    det = detect(path, format=format)
    if det.format in PER_RANK_FILES:
        return det
    folder = not isinstance(path, (list, tuple)) and Path(path).is_dir()
    if det.format == "op-level" and folder:
        names = ", ".join(f.path.name for f in det.files[:6])
        raise ValueError(f"trace must be one file, got the folder {os.fspath(path)!r}, which holds {len(det.files)} "
                         f"op-level trace(s): {names}; read them one at a time (straggle-edu analyze FOLDER reads "
                         f"each in turn)")
    if len(det.files) > 1:
        names = ", ".join(f.path.name for f in det.files[:6])
        raise ValueError(f"trace must be one {det.format} file, got {len(det.files)}: {names}; analyse them one at a "
                         f"time")
    return det


def _detect(path):
    """The format of ``path``: one of :data:`FORMATS`.

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> _detect(public_trace_path())
    'op-level'
    """
    return _detection(path).format


def op_traces_in(folder):
    """The op-level trace files in ``folder``, their layout files, and the other files, each list sorted by name.

    An op-level trace is a ``.parquet``/``.pq`` file, or a ``.csv`` whose
    header has an ``optype`` column. A layout file (``meta-*.yaml``,
    ``meta-*.json``) is read with the trace of the same name.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name, text in [("trace-A.csv", "dp_rank,stage,step,optype\\n"), ("meta-A.yaml", "dp: 1\\n"),
    ...                    ("ms-A.json", "{}"), ("README.md", "# hi\\n")]:
    ...     _ = (d / name).write_text(text)
    >>> [[p.name for p in part] for part in op_traces_in(d)]
    [['trace-A.csv'], ['meta-A.yaml'], ['README.md', 'ms-A.json']]
    """
    from pathlib import Path

    from .detect import sniff

    traces, layouts, others = [], [], []
    for f in sorted(p for p in Path(folder).iterdir() if p.is_file()):
        name = f.name.lower()
        if name.startswith("meta-") and name.endswith((".yaml", ".yml", ".json")):
            layouts.append(f)
            continue
        (traces if sniff(f).format == "op-level" else others).append(f)
    return traces, layouts, others


def read_trace(path, *, format=None, meta=None, comm_kernel=()):
    """Read a trace file, or a folder or list of per-rank files.

    The format is decided by :func:`~straggle_edu.traces.detect.detect` from
    what the files hold, whatever their names.

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        ``.parquet`` / ``.csv`` op-level trace, per-rank ``.csv``, PyTorch
        profiler ``.json[.gz]`` (one file, a folder or a list of them, one or
        more per rank); Flight Recorder dumps (a file, folder or list); NCCL
        Inspector JSON lines or Prometheus files (a file, folder or list); a
        straggler-detector log. A folder's other files are skipped.
    format : one of :data:`FORMATS`, optional
        Skip the detection of one file; of a folder or list, read the files
        of this format.
    meta : str or os.PathLike, optional
        Op-level only: the layout file (``meta-<name>.yaml`` or ``.json``);
        by default it is looked up beside the trace.
    comm_kernel : sequence of str
        Profiler traces only: regular expressions of communication kernels
        beyond :data:`~straggle_edu.traces.profiler.COMM_PATTERNS`.

    Returns
    -------
    OpTrace, RankTrace, ProfilerTrace, FlightRecorderTrace or SuspectAnalysis
        Straggler logs and NCCL Inspector logs hold no step times; they are
        read straight into their :class:`SuspectAnalysis`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = p.write_text("step,rank,duration_s,phase\\n0,0,1.0,compute\\n0,1,2.0,compute\\n")
    >>> read_trace(p)
    RankTrace(format='per-rank', ranks=2, steps=1, source=...)
    """
    import warnings

    det = _detection(path, format)
    fmt, files = det.format, det.paths
    for line in det.warnings if fmt != "torch-profiler" else ():  # the profiler reader warns, seeing every file's rank
        warnings.warn(line, stacklevel=2)
    if fmt == "flight-recorder":
        from .flight_recorder import read_flight_recorder

        return read_flight_recorder(path, files=files)
    if fmt == "straggler-log":
        from .straggler_log import read_straggler_log

        return read_straggler_log(files[0])
    if fmt == "nccl-inspector":
        from .nccl_inspector import read_nccl_inspector

        return read_nccl_inspector(path, files=files)
    if fmt == "per-rank":
        return read_rank_csv(files[0])
    if fmt == "op-level":
        from .optrace import read_op_trace

        return read_op_trace(files[0], meta=meta)
    from .profiler import read_profiler_traces

    return read_profiler_traces(files, comm_kernel, source=path)


def analyze(trace, *, attribution="auto", progress=False, ideal="artifact", comm_kernel=()):
    """What-if analysis of a trace: how much slower than ideal, and who is to blame.

    Parameters
    ----------
    trace : path, list of paths, or what :func:`read_trace` returned
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
    comm_kernel : sequence of str
        Profiler traces read from a path: more communication kernel patterns.

    Returns
    -------
    Analysis
        A :class:`SuspectAnalysis` (``suspects``, ``evidence``; slowdown NaN)
        for Flight Recorder dumps, straggler logs and NCCL Inspector logs.

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
    if not _is_op_trace(trace) and not _is_suspect_source(trace) and not _is_profiler(trace):
        trace = read_trace(trace, comm_kernel=comm_kernel)
        if isinstance(trace, RankTrace):
            return analyze_ranks(trace)
    if _is_profiler(trace):
        from .syncpoints import analyze_profiler

        return analyze_profiler(trace)
    if _is_suspect_source(trace):
        return _suspects_of(trace)
    from .whatif import analyze_ops

    return analyze_ops(trace, attribution=attribution, progress=progress, ideal=ideal)


def _is_suspect_source(obj):
    mod = type(obj).__module__
    return mod.endswith(("traces.flight_recorder", "traces.suspects"))


def _suspects_of(trace):
    if type(trace).__module__.endswith("traces.suspects"):
        return trace
    from .flight_recorder import analyze_flight_recorder

    return analyze_flight_recorder(trace)


def _is_profiler(obj):
    return type(obj).__module__.endswith("traces.profiler")


def _is_op_trace(obj):
    mod = type(obj).__module__
    return mod.endswith("traces.optrace")
