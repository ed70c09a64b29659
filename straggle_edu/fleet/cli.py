"""``straggle-edu fleet-demo DIR [--jobs N] [--seed S] [--no-public] [--format csv|parquet]``.

Writes a demo fleet (:func:`straggle_edu.fleet.demo.write_demo`) and prints
what it wrote and the command that analyses it. Nothing heavy is imported
until a command runs, so that the CLI parser stays fast.
"""

from __future__ import annotations

import sys

from ..i18n import _

__all__ = ["configure_demo", "run_demo"]


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
    (0, 'Wrote 4 synthetic jobs (... ops) and 0 public jobs to ...demo')
    """
    from .demo import write_demo

    fleet = write_demo(args.dir, jobs=args.jobs, seed=args.seed, public=args.public, format=args.format,
                       progress=sys.stderr.isatty())
    print(_("Wrote {jobs} synthetic jobs ({ops:,} ops) and {public} public jobs to {folder}").format(
        jobs=len(fleet.jobs), ops=fleet.ops, public=len(fleet.public), folder=fleet.folder))
    print(_("Sizes, causes and slowdowns are drawn from distributions calibrated to the study's fleet figures "
            "(see {truth}); they are not measurements.").format(truth=fleet.truth))
    if fleet.public:
        print(_("The public jobs ({ids}) are the study's own traces, Apache-2.0: see {license}.").format(
            ids=", ".join(fleet.public), license=fleet.folder / "public" / "LICENSE.txt"))
    print(_("Analyse it with:"))
    print(f"  straggle-edu fleet {fleet.manifest} --out {fleet.folder / 'out'}")
    return 0
