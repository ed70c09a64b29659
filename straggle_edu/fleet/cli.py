"""``straggle-edu fleet SOURCE... --out DIR [--scheduler tcp://HOST:PORT] [--workers N] [--follow-links]``
and ``straggle-edu fleet-demo DIR [--jobs N] [--seed S] [--no-public] [--format csv|parquet]``.

``fleet`` analyses every job of the SOURCE arguments (directories, globs,
manifests, trace files) on a Dask cluster (a LocalCluster on 127.0.0.1 by
default), writes ``DIR/jobs.parquet``, ``DIR/jobs.csv`` and ``DIR/fleet.json``,
and prints the fleet figures (in Chinese with ``--lang zh``). A rerun into the
same DIR skips the jobs already done. See ``docs/fleet.md``.

``fleet-demo`` writes a demo fleet (:func:`straggle_edu.fleet.demo.write_demo`)
and prints what it wrote and the command that analyses it.

Importing this module (the CLI parser does) imports no Dask.
"""

from __future__ import annotations

import sys

from ..i18n import _, fill, format_int, join_list
from ._progress import LOG_SECONDS
from .cluster import NOTICE_SECONDS, REFUSED_SECONDS, SMALL_FLEET_BYTES, TIMEOUT_SECONDS

__all__ = ["configure", "run", "summary", "configure_demo", "run_demo"]


def configure(parser):
    """Add the ``fleet`` arguments to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="straggle-edu fleet")
    >>> configure(parser)
    >>> args = parser.parse_args(["runs/", "fleet.csv", "--out", "out", "--workers", "2"])
    >>> args.source, args.out, args.workers, args.scheduler, args.follow_links, args.block_steps
    (['runs/', 'fleet.csv'], 'out', 2, None, False, 'auto')
    """
    from ..traces.cli import add_block_steps

    parser.add_argument("source", nargs="+", metavar="SOURCE",
                        help="a directory of traces (walked), a quoted glob ('runs/**/trace-*.parquet'), a manifest "
                        "(.csv or .parquet with job_id,path[,gpus,hours]) or a trace file; each job is any trace "
                        "that 'straggle-edu analyze' reads")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="output folder (made once SOURCE is walked and the cluster is there): jobs.parquet, "
                        "jobs.csv, fleet.json, report.html (report.zh.html with --lang zh), and parts/ (one file per "
                        "finished job, so that a rerun resumes)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="run on this running Dask scheduler instead of a new LocalCluster; first of all the "
                        "ways to name a cluster")
    parser.add_argument("--scheduler-file", metavar="PATH",
                        help="run on the scheduler whose address this JSON file holds (dask scheduler "
                        "--scheduler-file PATH, dask-mpi), waiting for the file to appear; without --scheduler or "
                        "--scheduler-file, $DASK_SCHEDULER_ADDRESS, else a new LocalCluster")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS, metavar="SECONDS",
                        help="seconds (default %(default)g) for the connection to a running scheduler and the wait "
                        f"for its first worker, together (after {NOTICE_SECONDS:g} s: '0 workers on ...; waiting'); "
                        "and how long the cluster may stay without workers mid-run. A refused connection fails after "
                        f"{REFUSED_SECONDS:g} s; the failures are one line, exit status 1")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="worker processes of the LocalCluster on 127.0.0.1 (default: one per core; none for a fleet "
                        f"under {SMALL_FLEET_BYTES // 2**20} MiB of traces, analysed in this process; given, it "
                        "also overrides $DASK_SCHEDULER_ADDRESS); 0 runs every job in this process, without Dask")
    parser.add_argument("--follow-links", action="store_true",
                        help="analyse paths that leave their SOURCE (through '..', an absolute path in a manifest, "
                        "or a symbolic link); refused by default")
    add_block_steps(parser, also=", and a job too large for a worker's memory")
    parser.add_argument("--refresh", type=float, metavar="SECONDS",
                        help="during the run, rewrite jobs.parquet and jobs.csv from the jobs finished so far every "
                        "SECONDS, the first time after that long (default 30), or ten times as long as the last "
                        "rewrite took when that is longer; they are written at the end too")
    parser.add_argument("--log-every", type=float, default=LOG_SECONDS, metavar="SECONDS",
                        help="when stderr is not a terminal (a batch log, nohup, CI): a progress line every SECONDS "
                        "(default %(default)g), 'fleet progress: done=N total=N errors=N elapsed_s=S jobs_per_s=R "
                        "eta_s=S', and one at the end")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="worst jobs listed in the summary (default 5)")


def _pct(x):
    return _("n/a") if x is None else f"{100 * x:.1f}%"


def _num(x, digits=3):
    return _("n/a") if x is None else f"{x:.{digits}f}"


def _hours(x):
    """GPU-hours as prose reads them: 169,640 and 9,832 (English), 17万 and 9832 (Chinese)."""
    from ..i18n import format_count

    return _("n/a") if x is None else format_count(round(x))


def _demo_line(demo):
    return _("demo: these jobs are the demo fleet (seed {seed}, {truth}), drawn from distributions calibrated to the "
             "study's figures: where its figures match the study's, they match by construction; they are not "
             "measurements.").format(seed=demo.get("seed"), truth=demo.get("demo_json"))


def _worst_lines(worst, top):
    lines = [_("Worst jobs, by GPU-hours lost (open one with the command after it):")]
    for w in worst[:top]:
        lines.append("  " + fill(_("{job}  S = {S}  {lost} GPU-hours lost"),
                                 job=w["job_id"], S=f"{w['slowdown']:.3f}", lost=_hours(w.get("gpu_hours_lost")))
                     + "  " + w["analyze"])
    return lines


def summary(run, top=5):
    """The lines printed at the end of a fleet run (shown text, translated).

    A demo fleet's figures (``fleet.json`` has ``demo``) come under a
    ``demo:`` line that says they are calibrated, not measured.

    Examples
    --------
    >>> import tempfile
    >>> from straggle_edu.fleet.engine import run_fleet
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> print(summary(run_fleet([public_trace_path()], tempfile.mkdtemp(), workers=0, progress=False)))
    Fleet: 1 jobs in ... s (1 analysed now, 0 done by an earlier run, 0 errors).
    ...
    """
    f = run.figures
    q = f["slowdown_quantiles"]
    lost, total = f["gpu_hours_lost"], f["gpu_hours"]
    lines = [
        fill(_("Fleet: {jobs} jobs in {seconds:.1f} s ({analysed} analysed now, {cached} done by an earlier run, "
               "{errors} errors)."), jobs=format_int(run.jobs), seconds=run.seconds, analysed=format_int(run.analysed),
             cached=format_int(run.cached), errors=format_int(f["errors"])),
    ]
    if f.get("demo"):
        lines.append(_demo_line(f["demo"]))
    lines += [
        fill(_("Slowed by at least 10% (S >= 1.1): {share} of the {count} jobs with a slowdown ({gpu} of their "
               "GPU-hours)."), share=_pct(f["share_slowed_10pct"]), count=format_int(f["analysed"]),
             gpu=_pct(f["share_slowed_10pct_gpu_hours"])),
        _("Slowdown S: median {p50}, p90 {p90}, p99 {p99}, max {max}.").format(
            **{k: _num(v) for k, v in q.items()}),
        fill(_("GPU-hours lost to stragglers: {lost}, {share} of all {total}."),
             lost=_hours(lost), total=_hours(total), share=_pct(lost / total if total else None)),
        fill(_("Of the {slowed} slowed jobs, one worker explains most of the excess, step after step, in {workers} "
               "({worker}); one DP rank in {dp_ranks} ({dp_rank})."),
             slowed=format_int(f["slowed_jobs"]), workers=format_int(f["slowed_single_worker"]),
             worker=_pct(f["share_slowed_single_worker"]), dp_ranks=format_int(f["slowed_single_dp_rank"]),
             dp_rank=_pct(f["share_slowed_single_dp_rank"])),
    ]
    if f["worst"]:
        lines += _worst_lines(f["worst"], top)
    lines.append(_("Rows: {tables}; figures: {figures}").format(
        tables=join_list(run.tables), figures=f"{run.out}/fleet.json"))
    return "\n".join(lines)


def run(args):
    """Run the fleet of ``args``; print the summary; return 0 (a job's error is in its row, not the exit code), or 1
    when the cluster failed (refused, no answer, no worker, lost), after one line on stderr.

    Examples
    --------
    >>> import argparse, contextlib, io, tempfile
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> parser = argparse.ArgumentParser()
    >>> configure(parser)
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run(parser.parse_args([str(public_trace_path()), "--out", tempfile.mkdtemp(), "--workers", "0"]))
    >>> code, "Slowdown S: median 1.180" in out.getvalue()
    (0, True)
    """
    from ..traces.cli import _block_steps
    from .cluster import ClusterError
    from .engine import run_fleet
    from .store import REFRESH_SECONDS

    if args.top < 1:
        raise ValueError(f"--top must be a whole number >= 1, got {args.top}")
    _as_workers(args)
    try:
        result = run_fleet(args.source, args.out, scheduler=args.scheduler, scheduler_file=args.scheduler_file,
                           workers=args.workers, follow_links=args.follow_links,
                           block_steps=_block_steps(args.block_steps), progress="bar" if sys.stderr.isatty() else "log",
                           refresh=REFRESH_SECONDS if args.refresh is None else args.refresh, timeout=args.timeout,
                           log_every=args.log_every)
    except ClusterError as exc:
        print(f"straggle-edu fleet: error: {exc}", file=sys.stderr)
        return 1
    print(summary(result, top=args.top))
    return 0


def _as_workers(args):
    """Where the fleet may start a LocalCluster and pyarrow is not imported yet: set this process's memory as its
    workers' (:func:`~straggle_edu.traces.blocks.keep_freed_memory`, one malloc arena), so that their fork server
    can be forked from this process, with the modules it has imported
    (:func:`~straggle_edu.fleet.cluster.local_cluster`)."""
    import os

    from .cluster import ENV_ADDRESS

    if args.scheduler is not None or args.scheduler_file is not None or "pyarrow" in sys.modules:
        return
    if args.workers == 0 or (args.workers is None and os.environ.get(ENV_ADDRESS, "").strip()):
        return
    from ..traces.blocks import keep_freed_memory

    keep_freed_memory(one_arena=True)


def configure_demo(parser):
    """Add ``fleet-demo``'s arguments to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> configure_demo(p)
    >>> args = p.parse_args(["demo", "--jobs", "20"])
    >>> args.jobs, args.seed, args.public
    (20, 0, True)
    """
    parser.add_argument("dir", metavar="DIR", help="a new or empty folder to write the fleet into")
    parser.add_argument("--jobs", type=int, default=200, help="synthetic jobs (default 200; 1 to 100,000)")
    parser.add_argument("--seed", type=int, default=0, help="the same seed writes the same fleet (default 0)")
    parser.add_argument("--no-public", dest="public", action="store_false",
                        help="leave out the OSDI 2025 study's three public jobs")
    parser.add_argument("--format", choices=("parquet", "csv"), default=None,
                        help="trace format (default: parquet when pyarrow is installed, else csv)")


def run_demo(args):
    """Write the demo fleet; print a summary and the next command; return 0.

    Examples
    --------
    >>> import argparse, contextlib, io, tempfile, pathlib
    >>> p = argparse.ArgumentParser()
    >>> configure_demo(p)
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run_demo(p.parse_args([str(folder), "--jobs", "4", "--no-public", "--format", "csv"]))
    >>> code, out.getvalue().splitlines()[0]
    (0, "Wrote 4 synthetic jobs (... ops) and 0 of the study's sample traces to ...demo")
    """
    from .demo import _has_pyarrow, write_demo

    fleet = write_demo(args.dir, jobs=args.jobs, seed=args.seed, public=args.public, format=args.format,
                       progress=sys.stderr.isatty())
    from ..i18n import format_count

    print(fill(_("Wrote {jobs} synthetic jobs ({ops} ops) and {public} of the study's sample traces to {folder}"),
               jobs=format_int(len(fleet.jobs)), ops=format_count(fleet.ops), public=len(fleet.public),
               folder=fleet.folder))
    print(_("Sizes, causes and slowdowns are drawn from distributions calibrated to the study's fleet figures "
            "(see {truth}); they are not measurements.").format(truth=fleet.truth))
    if fleet.public:
        print(_("The study's sample traces ({ids}) come from its public artifact, Apache-2.0: see {license}.").format(
            ids=join_list(fleet.public),
            license=fleet.folder / "public" / "LICENSE.txt"))
    if args.public and not _has_pyarrow():
        print(_("The study's AR and SE traces are left out: they are Parquet, which needs pyarrow "
                "(pip install \"straggle-edu[fleet]\")."))
    print(_("Analyse it with:"))
    print(f"  straggle-edu fleet {fleet.manifest} --out {fleet.folder / 'out'}")
    return 0
