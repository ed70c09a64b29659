"""``straggle-edu analyze TRACE [--json] [--attribution full]``.

Prints a readable report, or with ``--json`` one JSON object on stdout
(warnings go to stderr). Bad input raises ``ValueError``; the dispatcher in
:mod:`straggle_edu.app.cli` prints it as one error line, without a traceback.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["configure", "run", "report"]


def configure(parser):
    """Add the ``analyze`` arguments to ``parser``."""
    parser.add_argument(
        "trace",
        nargs="+",
        metavar="TRACE",
        help="an op-level trace (.parquet or .csv), a per-rank .csv, a PyTorch profiler "
        ".json[.gz], a folder of rank-* profiler traces, or several profiler files",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--attribution",
        choices=("auto", "full", "basic"),
        default="auto",
        help="op-level traces: 'full' always reports by_dp_rank and by_worker, 'basic' never, "
        "'auto' up to 1024 workers (default)",
    )
    parser.add_argument(
        "--ideal",
        choices=("artifact", "per-step"),
        default="artifact",
        help="op-level traces: ideal durations as the OSDI 2025 artifact sets them (default), or per step "
        "and microbatch (see docs/trace-formats.md)",
    )
    parser.add_argument(
        "--block-steps",
        default="auto",
        metavar="N",
        help="op-level files: analyse N steps at a time (peak memory set by one block); 'auto' (default) "
        "streams traces of more than 6 million ops, 0 reads the trace whole",
    )
    parser.add_argument("--meta", metavar="FILE", help="op-level layout file (default: meta-<name>.yaml beside the trace)")
    parser.add_argument(
        "--format",
        choices=("op-level", "per-rank", "torch-profiler"),
        help="skip format detection",
    )
    parser.add_argument("--top", type=int, default=5, metavar="N", help="rows per table in the report (default 5)")


def _bar(show):
    """A two-phase progress bar (reading, analysing) on a terminal, else None."""
    if not show:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=2, desc="reading", unit="phase", leave=False, file=sys.stderr)


def _warning_to_stderr(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def run(args):
    """Analyse ``args.trace``; print the report or the JSON; return 0.

    The command line may use up to 2 GiB (a 4096-worker trace needs about
    1.2 GiB) unless ``STRAGGLE_EDU_MEMORY_MIB`` says otherwise.
    """
    import os

    from .. import _validate
    from . import analyze, read_trace

    if "STRAGGLE_EDU_MEMORY_MIB" not in os.environ:
        _validate.set_memory_budget(max(_validate.memory_budget(), 2 * 2**30))

    if args.top < 1:
        raise ValueError(f"--top must be a whole number >= 1, got {args.top}")
    paths = args.trace if len(args.trace) > 1 else args.trace[0]
    if isinstance(paths, list) and args.format not in (None, "torch-profiler"):
        raise ValueError("several TRACE files are read as PyTorch profiler traces (one per rank)")
    old = warnings.showwarning
    warnings.showwarning = _warning_to_stderr
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _warning_to_stderr
            bar = _bar(not args.json and sys.stderr.isatty())
            if _op_file(paths, args.format):
                from .blocks import analyze_op_file

                result = analyze_op_file(paths, meta=args.meta, block_steps=_block_steps(args.block_steps),
                                         attribution=args.attribution, ideal=args.ideal)
                if bar is not None:
                    bar.close()
                return _print(result, args)
            trace = read_trace(paths, format=args.format, meta=args.meta)
            if bar is not None:
                bar.update(1)
                bar.set_description("analysing")
            result = analyze(trace, attribution=args.attribution, ideal=args.ideal)
            if bar is not None:
                bar.update(1)
                bar.close()
    finally:
        warnings.showwarning = old
    return _print(result, args)


def _op_file(paths, fmt):
    """An op-level .parquet or .csv file (analysed block by block when large)."""
    from . import _detect

    return not isinstance(paths, list) and (fmt or _detect(paths)) == "op-level"


def _block_steps(text):
    if text == "auto":
        return "auto"
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError(f"--block-steps must be 'auto' or a whole number >= 0, got {text!r}")
    return n or None


def _print(result, args):
    if args.json:
        for note in result.notes:
            print(f"note: {note}", file=sys.stderr)
        print(result.to_json())
    else:
        print(report(result, top=args.top))
    return 0


def _fmt_table(items, label, top):
    lines = []
    for key, value in items[:top]:
        key = f"dp {key[0]} / stage {key[1]}" if isinstance(key, tuple) else f"{label} {key}" if label else str(key)
        lines.append(f"    {key:<34} S_X = {value:.3f}")
    return lines


def report(result, top=5):
    """A readable, multi-line report of an :class:`~straggle_edu.traces.Analysis`."""
    from .diagnose import diagnose

    S = result.slowdown
    lines = [
        f"Trace: {result.source} ({result.format}, {len(result.steps)} steps, {len(result.workers)} workers)",
        f"Slowdown S = {S:.3f}: the job ran {S:.2f}x as long as it would without stragglers;",
        f"  waste = 1 - 1/S = {100 * result.waste:.1f}% of its time and GPU-hours.",
        f"Replay check: the replay of the recorded durations is off by {100 * result.replay_error:.2f}% "
        f"from the recorded step times (idle gaps the replay drops).",
    ]
    per = list(result.per_step.values())
    if per:
        lines.append(
            f"Per-step S: min {min(per):.3f}, median {sorted(per)[len(per) // 2]:.3f}, max {max(per):.3f}"
        )
    for name, label in (
        ("by_rank", "rank"),
        ("by_optype", ""),
        ("by_stage", "stage"),
        ("by_dp_rank", "dp rank"),
        ("by_worker", ""),
    ):
        table = getattr(result, name)
        if table:
            lines.append(f"  Attribution {name} (S_X, largest first):")
            lines.extend(_fmt_table(result.ranking(name), label, top))
    if result.format == "op-level":
        mw = "n/a" if result.m_w is None else f"{result.m_w:.2f}"
        ms = "n/a" if result.m_s is None else f"{result.m_s:.2f}"
        lines.append(f"  M_W (share fixed by the slowest workers) = {mw};  M_S (share fixed by the last stage) = {ms}")
    lines.append("Diagnosis:")
    for question, answer in diagnose(result):
        lines.append(f"  - {question} {answer}")
    for note in result.notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines)
