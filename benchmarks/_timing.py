"""Timing helpers shared by the benchmark scripts (run as scripts, so this
module is imported as ``_timing`` from the scripts' own folder)."""

import statistics
import time

CLOSED, SAMPLING = "closed form", "sampling"
# Python-side callback budgets for an explorer control (issue 3).
BUDGET_MS = {CLOSED: 30.0, SAMPLING: 150.0}


def median_ms(fn, repeats, clock=time.perf_counter):
    """Median milliseconds of ``repeats`` calls of ``fn`` on ``clock``."""
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return 1e3 * statistics.median(times)


def median_cpu_wall_ms(fn, repeats):
    """(median CPU ms, median wall ms) of ``repeats`` calls of ``fn``."""
    cpu, wall = [], []
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return 1e3 * statistics.median(cpu), 1e3 * statistics.median(wall)


def control_latency(factory, control, a, b, repeats):
    """(CPU ms, wall ms), medians of one change of ``control`` of a fresh
    ``factory()`` explorer, alternating between values a and b."""
    ex = factory()
    widget = ex.controls[control]
    widget.value = a
    values = iter([b, a] * (repeats + 1))
    return median_cpu_wall_ms(lambda: setattr(widget, "value", next(values)), repeats)
