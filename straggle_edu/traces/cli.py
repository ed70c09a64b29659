"""``straggle-edu analyze TRACE [--json] [--attribution full]``.

Prints a readable report (in Chinese with ``--lang zh`` or
``STRAGGLE_EDU_LANG=zh``; the notes and diagnosis that the analysis writes
are translated where the traces room has them), or with ``--json`` one JSON
object on stdout, always English (warnings go to stderr). Bad input raises ``ValueError``; the dispatcher in
:mod:`straggle_edu.app.cli` prints it as one error line, without a traceback.
"""

from __future__ import annotations

import sys
import warnings

from ..i18n import N_, _

__all__ = ["configure", "run", "report", "add_block_steps"]

# The attribution tables by their Python names (the --json keys); the report shows the translated label.
# TRANSLATORS: an attribution table of the readable report, such as 按 op 类型 for by_optype.
TABLES = {"by_rank": N_("by_rank"), "by_optype": N_("by_optype"), "by_stage": N_("by_stage"),
          "by_dp_rank": N_("by_dp_rank"), "by_worker": N_("by_worker")}

# The formats of straggle_edu.traces.FORMATS, spelled out so that the parser
# needs no import of the readers (tests/test_traces_detect.py holds them equal).
FORMATS = ("op-level", "per-rank", "torch-profiler", "flight-recorder", "straggler-log", "nccl-inspector")
# TRANSLATORS: a format as the report's first line names it (op-level: op 级).
FORMAT_NAMES = {"op-level": N_("op-level"), "per-rank": N_("per-rank")}


def configure(parser):
    """Add the ``analyze`` arguments to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="straggle-edu analyze")
    >>> configure(parser)
    >>> args = parser.parse_args(["trace.csv", "--json", "--top", "3"])
    >>> args.trace, args.json, args.top, args.attribution
    (['trace.csv'], True, 3, 'auto')
    """
    parser.add_argument(
        "trace",
        nargs="+",
        metavar="TRACE",
        help="an op-level trace (.parquet or .csv), a per-rank .csv, PyTorch profiler traces (a file, a "
        "folder or several files, any names), Flight Recorder dumps, NCCL Inspector logs (JSON or "
        "Prometheus), or a straggler-detector log; the format is read from the files (see docs/trace-formats.md)",
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
    add_block_steps(parser)
    parser.add_argument("--meta", metavar="FILE", help="op-level layout file (default: meta-<name>.yaml beside the trace)")
    parser.add_argument(
        "--comm-kernel",
        action="append",
        default=[],
        metavar="REGEX",
        help="profiler traces: a GPU kernel whose name matches REGEX is a collective (added to the default patterns: "
        "nccl, DeepEP dispatch/combine, all_to_all, all_reduce, ...; see docs/trace-formats.md); may be repeated",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
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

    Examples
    --------
    >>> import argparse, contextlib, io, json
    >>> from straggle_edu.traces.synthetic import example_trace_path
    >>> parser = argparse.ArgumentParser()
    >>> configure(parser)
    >>> from straggle_edu import _validate
    >>> budget = _validate.memory_budget()
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run(parser.parse_args([str(example_trace_path("slow-worker")), "--json"]))
    >>> code, round(json.loads(out.getvalue())["slowdown"], 2)
    (0, 1.56)
    >>> _validate.memory_budget() == budget   # raised for the run only
    True
    """
    import os

    from .. import _validate
    from .blocks import keep_freed_memory

    keep_freed_memory()  # this process exists to analyse: freed memory is kept for the next block
    if "STRAGGLE_EDU_MEMORY_MIB" in os.environ:
        return _run(args)
    old = _validate.set_memory_budget(max(_validate.memory_budget(), 2 * 2**30))
    try:
        return _run(args)
    finally:
        _validate.set_memory_budget(old)


def _run(args):
    from . import analyze, read_trace

    if args.top < 1:
        raise ValueError(f"--top must be a whole number >= 1, got {args.top}")
    paths = args.trace if len(args.trace) > 1 else args.trace[0]
    folder = _op_folder(paths, args.format)
    if folder is not None:
        return _run_folder(paths, *folder, args)
    if isinstance(paths, list) and args.format not in (None, "torch-profiler", "flight-recorder", "nccl-inspector"):
        # several files are the per-rank (or per-process) files of one job
        raise ValueError(f"several TRACE files are the per-rank files of one job (profiler traces, Flight Recorder "
                         f"dumps or NCCL Inspector logs), got --format {args.format}: analyse one file at a time")
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
            trace = _read_with_a_hint(read_trace, paths, args, bar)
            if bar is not None:
                bar.update(1)
                bar.set_description("analysing")
            result = analyze(trace, attribution=args.attribution, ideal=args.ideal, comm_kernel=args.comm_kernel)
            if bar is not None:
                bar.update(1)
                bar.close()
    finally:
        warnings.showwarning = old
    return _print(result, args)


def _read_with_a_hint(read_trace, paths, args, bar=None):
    """``read_trace``; when a file beside op-level traces is not a trace (the artifact's ms-ST.json), say which to read."""
    import os

    from . import TraceError, _detection, op_traces_in

    try:
        det = _detection(paths, args.format)
        if det.format == "torch-profiler":
            from .profiler import read_profiler_traces

            return read_profiler_traces(det.paths, args.comm_kernel, progress=_Reading(bar), source=paths)
        return read_trace(paths, format=args.format, meta=args.meta)
    except TraceError as exc:
        folder = os.path.dirname(os.path.abspath(paths)) if isinstance(paths, (str, os.PathLike)) else None
        traces = op_traces_in(folder)[0] if folder and os.path.isfile(paths) else []
        if not traces:
            raise
        tag = os.path.basename(str(paths)).split(".")[0].split("-")[-1]  # ms-ST.json -> ST
        pick = next((t for t in traces if t.name.split(".")[0].split("-")[-1] == tag), traces[0])
        raise TraceError(f"{exc}; this folder holds op-level traces: try straggle-edu analyze "
                         f"{os.path.join(os.path.dirname(str(paths)), pick.name)}, or the folder itself") from None


class _Reading:
    """Progress of reading profiler traces file by file: the bar on a terminal, else a line on stderr every 2 s."""

    EVERY = 2.0

    def __init__(self, bar):
        import time

        self.bar, self.n, self.t0 = bar, 0, time.monotonic()
        self.last = self.t0

    def __call__(self, path, done=None):
        import os
        import time

        now = time.monotonic()
        name = os.path.basename(str(path))
        if done is None:
            self.n += 1
        if self.bar is not None:
            self.bar.set_description(_("reading {n} files").format(n=self.n) if done is None else
                                     _("reading {name}: {mib:.0f} MiB").format(name=name, mib=done / 2**20))
        elif now - self.last >= self.EVERY:
            print(_("reading: {n} file(s) read in {seconds:.0f} s, the last {name}").format(
                n=self.n, seconds=now - self.t0, name=name) if done is None else
                _("reading: {n} file(s) read in {seconds:.0f} s; {name}: {mib:.0f} MiB so far").format(
                n=self.n, seconds=now - self.t0, name=name, mib=done / 2**20), file=sys.stderr, flush=True)
            self.last = now


def _op_folder(paths, fmt):
    """``(traces, layouts, others)`` when ``paths`` is one folder that holds op-level traces (the OSDI 2025
    artifact's layout), else None."""
    import os

    from . import op_traces_in

    from .detect import PER_RANK_FILES, sniff

    if isinstance(paths, list) or fmt not in (None, "op-level") or not os.path.isdir(paths):
        return None
    traces, layouts, others = op_traces_in(paths)
    if not traces or (fmt is None and any(sniff(f).format in PER_RANK_FILES for f in others)):
        return None  # per-rank files beside them: the detection names both formats
    return traces, layouts, others


def _names(files, most=8):
    shown = ", ".join(f.name for f in files[:most])
    return shown + (_(", and {n} more").format(n=len(files) - most) if len(files) > most else "")


def _run_folder(folder, traces, layouts, others, args):
    """Analyse each op-level trace of ``folder`` in turn; say which files were read and which were skipped."""
    import json

    from .blocks import analyze_op_file

    if args.meta:
        raise ValueError(f"--meta names one layout file, got {args.meta!r} with the folder {folder!r}: each trace "
                         "of a folder uses the meta-<name>.yaml beside it")
    results = []
    shown = _progress(traces, not args.json and sys.stderr.isatty())
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _warning_to_stderr
        for path in shown:
            results.append(analyze_op_file(path, block_steps=_block_steps(args.block_steps),
                                           attribution=args.attribution, ideal=args.ideal))
    if args.json:
        for r in results:
            for note in r.notes:
                print(f"note: {r.source}: {note}", file=sys.stderr)
        print(json.dumps({"folder": str(folder), "read": [f.name for f in traces], "layouts": [f.name for f in layouts],
                          "skipped": [f.name for f in others], "analyses": [json.loads(r.to_json()) for r in results]}))
        return 0
    lines = [_("Folder {folder}: read {n} op-level trace(s), one at a time: {names}.").format(
        folder=folder, n=len(traces), names=_names(traces))]
    if layouts:
        lines.append(_("Layouts read with them: {names}.").format(names=_names(layouts)))
    if others:
        lines.append(_("Skipped {n} file(s) that are not traces: {names}.").format(n=len(others), names=_names(others)))
    for r in results:
        lines += ["", report(r, top=args.top)]
    print("\n".join(lines))
    return 0


def _progress(items, show):
    """``items``, with a progress bar on a terminal (each trace takes about a second)."""
    if not show:
        return items
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return items
    return tqdm(items, desc="analysing", unit="trace", leave=False, file=sys.stderr)


def _op_file(paths, fmt):
    """An op-level .parquet or .csv file (analysed block by block when large)."""
    from . import TraceError, _detect

    if isinstance(paths, list) or fmt:
        return fmt == "op-level" and not isinstance(paths, list)
    try:
        return _detect(paths) == "op-level"
    except TraceError:
        return False  # not a trace: read_trace names the problem, with a hint where one helps


def add_block_steps(parser, also=""):
    """Add ``--block-steps`` to ``parser``: ``analyze``'s, and the fleet's, where ``'auto'`` does ``also`` too
    (:func:`_block_steps` reads it).

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_block_steps(parser)
    >>> _block_steps(parser.parse_args([]).block_steps), _block_steps(parser.parse_args(["--block-steps", "0"]).block_steps)
    ('auto', None)
    """
    from .blocks import STREAM_ROWS

    parser.add_argument("--block-steps", default="auto", metavar="N",
                        help="op-level files: analyse N steps at a time (peak memory set by one block); 'auto' "
                        f"(default) streams traces of more than {STREAM_ROWS / 1e6:g} million ops{also}; 0 reads "
                        "each trace whole")


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
        if isinstance(key, tuple):
            key = _("dp {dp} / stage {stage}").format(dp=key[0], stage=key[1])
        else:
            key = f"{label} {key}" if label else str(key)
        lines.append(f"    {_pad(key, 34)} S_X = {value:.3f}")
    return lines


def _pad(text, width):
    """``text`` padded to ``width`` terminal columns (a Chinese character takes two).

    Examples
    --------
    >>> _pad("stage 1", 9) + "|", _pad("阶段 1", 9) + "|"
    ('stage 1  |', '阶段 1   |')
    """
    import unicodedata

    columns = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - columns, 0)


def _share(x, digits=2):
    """``x`` with ``digits`` decimals, never ``-0.00``.

    Examples
    --------
    >>> _share(-1e-9), _share(-0.004, 1), _share(-0.5)
    ('0.00', '0.0', '-0.50')
    """
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _suspect_report(result):
    """The report of a format without step times: its suspects and their evidence."""
    lines = [_("Trace: {source} ({format})").format(source=result.source, format=_format_name(result.format))]
    if result.suspects:
        lines.append(_("Suspects (most suspicious first): {ranks}").format(ranks=", ".join(map(str, result.suspects))))
    else:
        lines.append(_("Suspects: none; the evidence shows no rank that the others wait on."))
    ev = result.evidence or {}
    for g in ev.get("groups", [])[:8]:
        lines.append("  " + _("group {group} ({desc}), {op} #{seq}: ranks {waiting} wait; missing {missing}").format(
            group=g["process_group"], desc=g["desc"], op=g["op"] or _("collective"), seq=g["collective_seq_id"],
            waiting=g["waiting"], missing=g["missing"] + g["no_dump"]))
    for row in ev.get("megatron", {}).get("intervals", [])[:8]:
        lines.append("  " + _("line {line}: slowest rank {slow} ({slow_rtt}), fastest {fast} ({fast_rtt}): "
                              "S <= {bound:.3f}").format(
            line=row["line"], slow=row["max_rank"], slow_rtt=f"{row['max_rtt']:g}{row['unit']}", fast=row["min_rank"],
            fast_rtt=f"{row['min_rtt']:g}{row['unit']}", bound=row["s_upper_bound"]))
    for rep in ev.get("nvrx", {}).get("reports", [])[:4]:
        worst = [s for s in rep["scores"] if s["group"] in ("worst", "all")][:5]
        scores = ", ".join(_("rank {rank} {score}").format(rank=s["rank"], score=_share(s["score"])) for s in worst)
        lines.append("  " + _("{kind} scores (line {line}): {scores}").format(kind=rep["kind"], line=rep["line"],
                                                                            scores=scores))
    for row in ev.get("last", [])[:5]:
        lines.append("  " + _("{comm} {collective} {size}: {gpu} arrives last; the others wait {wait:.1f} us per "
                              "collective, on average").format(comm=row["comm_name"], collective=row["collective"],
                                                              size=row["message_size"], gpu=row["last"],
                                                              wait=row["caused_wait_us"]))
    for row in ev.get("cannot_tell", [])[:5]:
        lines.append("  " + _("{comm} {collective} {size}: cannot tell ({reason})").format(
            comm=row["comm_name"], collective=row["collective"], size=row["message_size"], reason=_note(row["reason"])))
    if ev.get("collectives"):
        lines.append("  " + _("{count} collectives; waiting = {share}% of their time").format(
            count=ev["collectives"], share=_share(100 * ev["wait_s"] / ev["exec_s"], 1)))
        for k, v in list(ev["caused_wait_s"].items())[:5]:
            lines.append("    " + _("rank {rank}: the others waited {seconds:.6f} s for it (last in {share}% of "
                                   "collectives)").format(rank=k, seconds=v, share=_share(100 * ev["last_share"][k], 0)))
    lines.extend(_("Note: {note}").format(note=_note(note)) for note in result.notes)
    return "\n".join(lines)


def _profiler_lines(result):
    """The report's lines on a profiler trace: ranks and groups, the noise floor, M_W, who the others waited for."""
    d = result.details or {}
    present, world = d.get("ranks_present", []), d.get("world_size")
    ranks = _("{n} of {world} ranks").format(n=len(present), world=world) if world else \
        _("{n} ranks (world size not recorded)").format(n=len(present))
    lines = ["  " + _("Ranks: {ranks}; analysed: {used}; synchronised by {groups}; clocks: {clock}.").format(
        ranks=ranks, used=", ".join(map(str, result.workers)), groups=", ".join(d.get("groups", [])) or _("none"),
        clock=_note(d.get("clock", "")))]
    floor = d.get("noise_floor")
    lines.append("  " + (_("Noise floor: S = {floor:.3f}, the 99th percentile of S for {n} ranks of equal speed over "
                           "{steps} steps, from each rank's own step-to-step spread.").format(
        floor=floor, n=len(result.workers), steps=len(result.steps)) if floor is not None else
        _("Noise floor: not measurable from {steps} step(s) (each rank's step-to-step spread needs 2).").format(
            steps=len(result.steps))))
    if result.m_w is not None:
        lines.append("  " + _("M_W (share fixed by the slowest {n} rank(s)) = {mw}").format(
            n=d.get("mw_workers", 1), mw=_share(result.m_w)))
    table = d.get("collectives")
    caused = d.get("caused_wait", {})
    if table and caused:
        top = max(caused, key=caused.get)
        lines.append("  " + _("Collectives: {n} in {steps} steps; rank {rank} arrived last at {last} of them, and the "
                              "others waited {seconds:.4f} s for it in all.").format(
            n=len(table["step"]), steps=len(result.steps), rank=top, last=int((table["last_rank"] == top).sum()),
            seconds=caused[top]))
    return lines


def _format_name(fmt):
    """A format as the report names it, in the reader's language ("op 级" for op-level); the key elsewhere."""
    return _(FORMAT_NAMES[fmt]) if fmt in FORMAT_NAMES else fmt


def _note(note):
    """A note in the current language (a :class:`~straggle_edu.traces.result.Note` keeps its template)."""
    return note.translated() if hasattr(note, "translated") else _(note)


def _line(question, answer):
    """One diagnosis line: no space after a full-width question mark.

    Examples
    --------
    >>> _line("Which worker?", "rank 3"), _line("是哪个 worker？", "rank 3")
    ('  - Which worker? rank 3', '  - 是哪个 worker？rank 3')
    """
    sep = "" if question.endswith(("？", "：")) else " "
    return f"  - {question}{sep}{answer}"


def report(result, top=5):
    """A readable, multi-line report of an :class:`~straggle_edu.traces.Analysis`.

    Examples
    --------
    >>> from straggle_edu.traces import analyze, rank_trace_from_times
    >>> print(report(analyze(rank_trace_from_times([[1.0, 2.0], [1.0, 1.0]]))))
    Trace: <memory> (per-rank, 2 steps, 2 workers)
    Slowdown S = 1.200: the job ran 1.20x as long as it would without stragglers;
      waste = 1 - 1/S = 16.7% of its time and GPU-hours.
    ...
    """
    from .diagnose import diagnose

    if hasattr(result, "suspects"):
        return _suspect_report(result)
    S = result.slowdown
    lines = [
        _("Trace: {source} ({format}, {steps} steps, {workers} workers)").format(
            source=result.source, format=_format_name(result.format), steps=len(result.steps),
            workers=len(result.workers)),
        _("Slowdown S = {S:.3f}: the job ran {S:.2f}x as long as it would without stragglers;").format(S=S),
        "  " + _("waste = 1 - 1/S = {waste}% of its time and GPU-hours.").format(waste=_share(100 * result.waste, 1)),
        _("Replay check: the replay of the recorded durations is off by {error:.2f}% from the recorded step times "
          "(idle gaps the replay drops).").format(error=100 * result.replay_error),
    ]
    per = list(result.per_step.values())
    if per:
        lines.append(_("Per-step S: min {low:.3f}, median {median:.3f}, max {high:.3f}").format(
            low=min(per), median=sorted(per)[len(per) // 2], high=max(per)))
    for name, label in (
        ("by_rank", _("rank")),
        ("by_optype", ""),
        ("by_stage", _("stage")),
        ("by_dp_rank", _("dp rank")),
        ("by_worker", ""),
    ):
        table = getattr(result, name)
        if table:
            lines.append("  " + _("Attribution {table} (S_X, largest first):").format(table=_(TABLES[name])))
            lines.extend(_fmt_table(result.ranking(name), label, top))
    if result.format == "torch-profiler":
        lines += _profiler_lines(result)
    if result.format == "op-level":
        mw = _("n/a") if result.m_w is None else _share(result.m_w)
        ms = _("n/a") if result.m_s is None else _share(result.m_s)
        lines.append("  " + _("M_W (share fixed by the slowest workers) = {mw};  M_S (share fixed by the last stage) = "
                              "{ms}").format(mw=mw, ms=ms))
        if max(result.m_w or 0.0, result.m_s or 0.0) > 1.0:
            lines.append("  " + _("(M_W and M_S divide the time a fix saves by the what-if excess, T_recorded - T_ideal: "
                                  "above 1, the fix saves more than the rebalanced ideal does.)"))
    shown = [v for name in ("by_rank", "by_optype", "by_stage", "by_dp_rank", "by_worker") if getattr(result, name)
             for __, v in result.ranking(name)[:top]]
    if any(v < 1.0 - 5e-4 for v in shown):
        lines.append("  " + _("(S_X below 1: X alone at its recorded durations runs faster than the ideal, a mean "
                              "that includes the stragglers.)"))
    lines.append(_("Diagnosis:"))
    for question, answer in diagnose(result):
        lines.append(_line(question, answer))
    for note in result.notes:
        lines.append(_("Note: {note}").format(note=_note(note)))
    return "\n".join(lines)
