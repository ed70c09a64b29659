"""Every notebook executed once per test session, its outputs shared by every test that reads them.

:func:`executed` returns a :class:`Run` for a notebook: the executed notebook
(widget state stored), the seconds it took and the first error, if any. The
first call for a notebook executes it; later calls return the same run. Who
reads the runs:

- ``tests/test_notebook_runs.py``: every notebook, both languages, runs top to
  bottom without an error (the suite's plain execution);
- ``tests/test_exercise_values.py``: no exercise's answer is printed above it;
- ``tests/test_zh_output.py``: the Chinese twins' output speaks Chinese.

Runs happen in the background. When the tests that read them are collected,
``tests/conftest.py`` calls :func:`start`: a pool of :data:`KERNELS` kernels
executes the notebooks in the order the tests will want them, while pytest
goes on with the unit tests, which run before them (the conftest moves the
tests that read runs to the end). On 2 cores that keeps both busy.

The notebooks that time real processes (their metadata says
``"straggle_edu": {"runs_alone": true}``, see :func:`straggle_edu.app.site.runs_alone`:
the live barrier lab and real SGD, whose claims compare measured and predicted
seconds) are not run in the pool. :func:`executed` runs each of them when a test first asks, after
the pool has finished, with nothing else running: the test that asks is
the only work pytest is doing at that moment.

Each kernel starts in its notebook's folder, like a reader's, with the
environment the session started with, less ``STRAGGLE_EDU_*`` (a test that
sets the language for itself never leaks it into a kernel), and with this
checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ENGLISH = sorted(NOTEBOOKS.glob("*.ipynb"))
CHINESE = sorted(NOTEBOOKS.glob("zh/*.ipynb"))
ALL = ENGLISH + CHINESE

# Kernels at once in the background pool (the main thread runs unit tests meanwhile).
KERNELS = 2
# Seconds one cell may take before its run fails (a notebook's cell budget is 15 s).
CELL_TIMEOUT = 300

_ENV = {k: v for k, v in os.environ.items() if not k.startswith("STRAGGLE_EDU_")}
# The kernel imports this checkout's package, whichever environment it was installed from.
_ENV["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


@dataclass
class Run:
    """One execution of one notebook."""

    path: Path
    nb: object
    seconds: float
    error: str | None

    @property
    def cells(self):
        return self.nb.cells


def solo(path):
    """True when the notebook must run with no other kernel beside it."""
    from straggle_edu.app.site import runs_alone

    return runs_alone(path)


def rel(path):
    """The notebook's name under ``notebooks/`` ("zh/01_restaurant.ipynb")."""
    return Path(path).resolve().relative_to(NOTEBOOKS).as_posix()


def _first_error(nb):
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "error":
                return f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
    return None


def run_notebook(path):
    """Execute the notebook at ``path`` now, in a fresh kernel; return its :class:`Run`.

    Every cell runs even after one fails (the error is kept in the cell's
    outputs and the first one in :attr:`Run.error`), so one broken cell shows
    as one failure, not as the silence of the cells after it.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                            store_widget_state=True, record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    try:
        with open(os.devnull, "wb") as quiet:
            client.execute(env=dict(_ENV), cwd=str(path.parent), stdout=quiet, stderr=quiet)
        error = _first_error(nb)
    except (CellTimeoutError, DeadKernelError) as exc:
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
    return Run(path, nb, time.perf_counter() - start, error)


class _Runs:
    def __init__(self):
        self.lock = threading.Lock()
        self.futures = {}
        self.done = {}
        self.pool = None

    def start(self, paths):
        paths = [Path(p).resolve() for p in paths]
        with self.lock:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(max_workers=KERNELS, thread_name_prefix="notebook-run")
            for path in paths:
                if not solo(path) and path not in self.futures and path not in self.done:
                    self.futures[path] = self.pool.submit(run_notebook, path)

    def get(self, path):
        path = Path(path).resolve()
        with self.lock:
            if path in self.done:
                return self.done[path]
            future = self.futures.get(path)
        if future is not None:
            result = future.result()
        else:
            if solo(path):
                self.drain()
            result = run_notebook(path)
        with self.lock:
            self.done[path] = result
            self.futures.pop(path, None)
        return result

    def drain(self):
        """Wait for every run in the pool (the solo notebooks need the machine to themselves)."""
        with self.lock:
            pending = list(self.futures.values())
        for future in pending:
            future.result()

    def shutdown(self):
        with self.lock:
            pool, self.pool = self.pool, None
            pending = list(self.futures.values())
        for future in pending:
            future.cancel()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_RUNS = _Runs()


def start(paths):
    """Queue ``paths`` for the background pool (solo notebooks wait for :func:`executed`)."""
    _RUNS.start(paths)


def executed(path):
    """The notebook at ``path`` executed once this session: a :class:`Run`."""
    return _RUNS.get(path)


def shutdown():
    """Stop the pool at the end of the session (runs not yet started are dropped)."""
    _RUNS.shutdown()
