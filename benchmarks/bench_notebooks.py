"""How fast the notebooks run and how fast their explorers answer a slider.

Two measurements, printed as tables with the budgets from the notebooks issue:

1. Run-All of every notebook in ``notebooks/``, each in a fresh kernel
   (nbclient): the kernel's start-up and the cells, separately. Budget: the
   cells in <= 15 s on a 2-core machine.
2. The Python-side latency of every control of the core explorers (notebooks
   00-04): the median time of a ``.value`` change (observers, chart updates
   and all). A control linked to a chart param is a closed-form update
   (budget <= 30 ms); any other control recomputes in Python, which for these
   explorers means sampling (budget <= 150 ms). The naive baseline is what a
   re-render costs instead: building a fresh chart widget from the chart's
   spec, which is what an explorer without params would do on every change;
   the ratio says how much the params save.

Usage::

    .venv/bin/python benchmarks/bench_notebooks.py                 # everything
    .venv/bin/python benchmarks/bench_notebooks.py 01 02           # notebooks matching 01 or 02
    .venv/bin/python benchmarks/bench_notebooks.py --no-notebooks  # explorers only
    .venv/bin/python benchmarks/bench_notebooks.py --all-explorers # not only the core ones

The machine's load average is printed first: on a shared machine, figures
scale with it.
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK_BUDGET_S = 15.0
PARAM_BUDGET_MS = 30.0
RECOMPUTE_BUDGET_MS = 150.0
# Modules of the explorers behind notebooks 00-04.
CORE_MODULES = {"start_here", "restaurant", "tail", "expected_max", "expected_maximum", "cost", "cost_accounting"}


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_notebook(path):
    """(kernel start-up s, cells s, kernel CPU s, error or None) for one notebook in a fresh kernel.

    The kernel's CPU time (start-up and cells, read once the kernel has exited)
    barely depends on how busy the machine is, unlike the wall-clock times.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    error = None
    with client.setup_kernel():
        t1 = time.perf_counter()
        try:
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
        except CellExecutionError as exc:
            error = str(exc).strip().splitlines()[-1][:120]
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1, _children_cpu() - cpu0, error


def bench_notebooks(patterns):
    paths = sorted((REPO / "notebooks").glob("*.ipynb"))
    if patterns:
        paths = [p for p in paths if any(pat in p.name for pat in patterns)]
    print(f"\nRun-All, fresh kernel each (budget: cells <= {NOTEBOOK_BUDGET_S:.0f} s)")
    print(f"{'notebook':<34}{'kernel start':>14}{'cells':>10}{'kernel CPU':>12}  verdict")
    for path in paths:
        start, cells, cpu, error = run_notebook(path)
        verdict = f"ERROR {error}" if error else ("ok" if cells <= NOTEBOOK_BUDGET_S else "OVER BUDGET")
        print(f"{path.name:<34}{start:>12.1f} s{cells:>8.1f} s{cpu:>10.1f} s  {verdict}", flush=True)


def _two_values(control):
    """Two different valid values for a control, or None for a button."""
    import ipywidgets as widgets

    if isinstance(control, widgets.Button):
        return None
    if hasattr(control, "options") and not isinstance(control, widgets.Text):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        if len(values) < 2:
            return None
        other = values[len(values) // 2] if values[len(values) // 2] != control.value else values[0]
        return control.value, other
    if isinstance(control, widgets.FloatLogSlider):
        exponent = control.min + (control.max - control.min) / 3
        return control.value, control.base**exponent
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return control.value, not control.value
    if hasattr(control, "min") and hasattr(control, "max"):
        other = control.min + (control.max - control.min) / 3
        if isinstance(control.value, int):
            other = int(round(other))
        if other == control.value:
            other = control.max
        return control.value, other
    return None


def _time_changes(control, values, repeat):
    """Median wall-clock and CPU milliseconds of one change of the control."""
    wall, cpu = [], []
    for i in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        if values is None:
            control.click()
        else:
            control.value = values[(i + 1) % 2]
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3


def _time_rerender(jchart, repeat=5):
    from straggle_edu.notebook.display import chart_widget

    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        widget = chart_widget(jchart.chart)
        times.append(time.perf_counter() - t0)
        widget.close()
    return statistics.median(times) * 1e3


def core_explorers(all_explorers=False):
    import straggle_edu.explorers as explorers

    found = []
    for name in explorers.__all__:
        fn = getattr(explorers, name)
        if not (callable(fn) and name.endswith("_explorer") and inspect.isfunction(fn)):
            continue
        if all_explorers or fn.__module__.rsplit(".", 1)[-1] in CORE_MODULES:
            found.append((name, fn))
    return found


def bench_explorers(all_explorers=False, repeat=15):
    warnings.simplefilter("ignore")
    print(f"\nExplorer callbacks, Python side, median of {repeat} changes "
          f"(budgets: param <= {PARAM_BUDGET_MS:.0f} ms, recompute <= {RECOMPUTE_BUDGET_MS:.0f} ms)")
    print("(wall: elapsed time; CPU: this process's CPU time, which a busy machine inflates much less)")
    print(f"{'explorer.control':<38}{'kind':>10}{'wall':>11}{'CPU':>11}{'re-render':>12}{'ratio':>8}  verdict")
    for name, fn in core_explorers(all_explorers):
        try:
            ex = fn()
        except Exception as exc:  # an explorer that needs arguments is listed, not hidden
            print(f"{name:<38}{'':>10}  could not build with defaults: {exc}")
            continue
        linked = {control: chart for control, chart, *_ in getattr(ex, "links", [])}
        for cname, control in ex.controls.items():
            values = _two_values(control)
            kind = "param" if cname in linked else ("button" if values is None else "recompute")
            runs = repeat if kind == "param" else max(5, repeat // 3)
            if values is None and not hasattr(control, "click"):
                continue
            ms, cpu = _time_changes(control, values, runs)
            budget = PARAM_BUDGET_MS if kind == "param" else RECOMPUTE_BUDGET_MS
            naive = ratio = ""
            if kind == "param":
                rerender = _time_rerender(ex.charts[linked[cname]])
                naive, ratio = f"{rerender:>9.1f} ms", f"{rerender / max(ms, 1e-3):>7.0f}x"
            verdict = "ok" if ms <= budget else ("ok on CPU time" if cpu <= budget else "OVER BUDGET")
            print(f"{name + '.' + cname:<38}{kind:>10}{ms:>8.2f} ms{cpu:>8.2f} ms{naive:>12}{ratio:>8}  {verdict}",
                  flush=True)
        ex.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="*", help="only notebooks whose file name contains one of these")
    parser.add_argument("--no-notebooks", action="store_true", help="skip the Run-All measurements")
    parser.add_argument("--no-explorers", action="store_true", help="skip the explorer measurements")
    parser.add_argument("--all-explorers", action="store_true", help="every explorer, not only notebooks 00-04's")
    parser.add_argument("--repeat", type=int, default=15, help="value changes per control (default 15)")
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]} · {os.cpu_count()} cores · load average {load}")
    if not args.no_explorers:
        bench_explorers(args.all_explorers, args.repeat)
    if not args.no_notebooks:
        bench_notebooks(args.patterns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
