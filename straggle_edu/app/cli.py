"""The ``straggle-edu`` command.

Each subcommand lives in the module that owns its work. That module exposes
``configure(parser)``, which adds its arguments, and ``run(args) -> int``,
which does the work and returns the exit code. A module that holds several
subcommands names them ``module:name``, with ``configure_name`` and
``run_name``. This file only dispatches.

``--lang {en,zh}`` is accepted before or after the subcommand
(``straggle-edu lab --lang zh``); without it, ``STRAGGLE_EDU_LANG`` decides.
It changes what the commands print for a reader, not error messages, JSON or
CSV, and not the ``--help`` text, which stays English like the options it names.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading

__all__ = ["main"]

# name: (module, one-line help)
SUBCOMMANDS = {
    "lab": ("straggle_edu.app.launch", "open the notebooks in JupyterLab (localhost only, with a token)"),
    "analyze": ("straggle_edu.traces.cli", "find the stragglers in a trace (what-if analysis)"),
    "fleet": ("straggle_edu.app.fleet_report:fleet",
              "analyse every job of a cluster on Dask: the study's fleet figures and an HTML report"),
    "barrier": ("straggle_edu.instruments.barrier_lab", "run real worker processes at a real barrier and record a trace"),
    "sgd": ("straggle_edu.instruments.sgd", "train real SGD with real processes: sync, backup workers, drop, local SGD"),
    "site": ("straggle_edu.app.site", "export every notebook to a static HTML site"),
    "student-copies": ("straggle_edu.app.classroom", "write the notebooks without exercise solutions"),
    "fleet-demo": ("straggle_edu.fleet.cli:demo", "write a demo fleet of job traces, calibrated to the OSDI 2025 study"),
}


def _entry(spec, what):
    """The ``configure`` or ``run`` function of a subcommand's ``module`` or ``module:name``."""
    module, __, name = spec.partition(":")
    return getattr(importlib.import_module(module), f"{what}_{name}" if name else what)


def _language_option():
    """A parent parser with ``--lang``; SUPPRESS lets it stand before or after the subcommand."""
    from ..i18n import LANGUAGES

    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS,
                        help="language of the printed output (default: $STRAGGLE_EDU_LANG, else en)")
    return parent


def _parser(only=None):
    """The command line's parser; ``only``: the one subcommand to configure (others keep their help line; "": none).

    Configuring a subcommand imports its room, so a call configures just the
    one it runs: ``analyze`` does not pay for the SGD experiment's imports.
    """
    lang = _language_option()
    parser = argparse.ArgumentParser(
        prog="straggle-edu",
        description="Why a synchronous job runs at the speed of its slowest worker.",
        parents=[lang],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=text, description=text, parents=[lang])
        p.set_defaults(_module=module)
        if only not in (None, name):
            continue
        try:
            _entry(module, "configure")(p)
        except ImportError as exc:  # a room that has not been built yet
            p.set_defaults(_missing=str(exc))
    return parser


def _command(argv):
    """The subcommand that ``argv`` names, or None.

    Examples
    --------
    >>> _command(["--lang", "zh", "analyze", "trace.csv"]), _command(["site", "--lang=zh", "out"]), _command(["--help"])
    ('analyze', 'site', None)
    """
    words = iter(sys.argv[1:] if argv is None else argv)
    for word in words:
        if word == "--lang":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def _catch_ctrl_c():
    """Make Ctrl-C (SIGINT) raise KeyboardInterrupt; return the handler it replaced.

    A process started from a shell in the background (``cmd &``), or by a
    parent that ignores SIGINT, starts with SIGINT ignored, and Python then
    keeps it ignored: Ctrl-C and the notebook's stop button would do nothing.
    Only the main thread may install a handler; elsewhere returns None.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv=None):
    """Run the command line; return the exit code."""
    previous = _catch_ctrl_c()
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _main(argv):
    parser = _parser(only=_command(argv) or "")
    args = parser.parse_args(argv)
    if getattr(args, "lang", None) is None:
        return _dispatch(parser, args)
    # --lang holds for this command only: main() may run inside a notebook or a test.
    with speaking(args.lang):
        return _dispatch(parser, args)


@contextlib.contextmanager
def speaking(lang):
    """The library speaks ``lang`` inside the block, and what it spoke before (an explicit choice or the environment) after it.

    Examples
    --------
    >>> from straggle_edu.i18n import get_language
    >>> with speaking("zh"):
    ...     get_language()
    'zh'
    >>> get_language()
    'en'
    """
    from .. import i18n

    previous = i18n._state["lang"]  # None: the environment decides
    i18n.set_language(lang)
    try:
        yield
    finally:
        i18n.set_language(previous)


def _terminated(exc):
    """The line SIGTERM ends a command with: "terminated", and, where the fleet wrote its tables first, how many
    jobs they hold and where they are (as the line of a lost scheduler says it).

    Examples
    --------
    >>> from straggle_edu.fleet.cluster import Terminated
    >>> _terminated(Terminated())
    'terminated'
    >>> print(_terminated(Terminated(352, 1003, ["out/jobs.csv", "out/jobs.parquet"])))
    terminated: the 352 of 1,003 jobs finished are in out/jobs.csv, out/jobs.parquet; run the same command again ...
    """
    from ..i18n import _, fill, join_list

    if exc.total is None:
        return _("terminated")
    if not exc.tables:
        return _("terminated: no job finished; run the same command again to analyse them")
    return fill(_("terminated: the {finished:,} of {total:,} jobs finished are in {tables}; run the same command "
                  "again to analyse the rest"), finished=exc.finished, total=exc.total, tables=join_list(exc.tables))


def _dispatch(parser, args):
    from ..fleet.cluster import Terminated
    from ..i18n import _

    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    missing = getattr(args, "_missing", None)
    if missing:
        print(f"straggle-edu {args.command}: not available ({missing})", file=sys.stderr)
        return 2
    try:
        return int(_entry(args._module, "run")(args) or 0)
    except KeyboardInterrupt:
        print(_("interrupted"), file=sys.stderr)
        return 130
    except Terminated as exc:  # SIGTERM, where a command turned it into an exception (the fleet: after its tables)
        print(_terminated(exc), file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader closed the pipe (``straggle-edu analyze t.csv | head``):
        # stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (ValueError, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        print(f"straggle-edu {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
