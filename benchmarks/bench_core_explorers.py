"""Benchmark: Python-side callback latency of the explorers of notebooks 03 and 04.

Run from the repository root::

    python benchmarks/bench_core_explorers.py            # prints the figures
    python benchmarks/bench_core_explorers.py --strict   # exit 1 if a budget is missed
    python benchmarks/bench_core_explorers.py --repeats 3

For every control of every explorer it sets ``.value`` back and forth
between two values and reports the median time of one change: the callback,
the model, the new chart's serialization and the param links, which is
everything the kernel does before the browser redraws. Budgets:

- <= 30 ms for closed-form updates (a param, a readout, an exact integral);
- <= 150 ms for sampling updates (new Monte Carlo draws).

Then, in the same run, the ratios against a naive way of doing the same work:

- the histogram slider moves a Vega-Lite param over pre-binned histograms;
  naive: draw and bin again on every move;
- the lost-fraction curve integrates all n on one shared grid; naive: one
  exact integral per n;
- the Monte Carlo curve draws each maximum directly (``sample_max``);
  naive: draw all n workers' times and keep the largest (n = 4096 only,
  since the naive way needs size * n numbers).

Each change is timed twice: the CPU time of this process (``time.process_time``,
what the update costs on an idle core; the budgets apply to it) and the wall
time (which also counts waiting for a core that other processes hold). Medians
over repeats are quoted, with the machine's load average, because a shared
2-core machine is noisy.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

from straggle_edu.explorers.cost import cost_explorer, lost_fraction_explorer
from straggle_edu.explorers.expected_max import (
    expected_max_explorer,
    max_histogram_explorer,
    slow_card_explorer,
    speedup_explorer,
)
from straggle_edu.models.cluster import Cluster, expected_slowest
from straggle_edu.models.max_growth import max_histograms, step_time_dist
from straggle_edu.models.samplers import sample_max
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.waste import lost_fraction_curves

from _timing import BUDGET_MS, CLOSED, SAMPLING, control_latency
from _timing import median_ms as _median_ms


# (explorer factory, control, value a, value b, kind)
CASES = [
    (expected_max_explorer, "n", 256, 4096, CLOSED),
    (expected_max_explorer, "shape", "normal", "pareto", SAMPLING),
    (expected_max_explorer, "jitter", 0.1, 0.2, SAMPLING),
    (expected_max_explorer, "size", 2000, 10_000, SAMPLING),
    (expected_max_explorer, "seed", 0, 1, SAMPLING),
    (max_histogram_explorer, "n", 16, 4096, CLOSED),
    (max_histogram_explorer, "shape", "normal", "log-normal", SAMPLING),
    (max_histogram_explorer, "jitter", 0.1, 0.2, SAMPLING),
    (slow_card_explorer, "n", 64, 4096, CLOSED),
    (slow_card_explorer, "jitter", 0.01, 0.02, CLOSED),
    (slow_card_explorer, "slow_factor", 1.05, 1.2, CLOSED),
    (slow_card_explorer, "days", 10.0, 30.0, CLOSED),
    (speedup_explorer, "jitter", 0.05, 0.1, CLOSED),
    (speedup_explorer, "n", 64, 4096, CLOSED),
    (cost_explorer, "gpus", 4096, 1024, CLOSED),
    (cost_explorer, "days", 10.0, 30.0, CLOSED),
    (cost_explorer, "lost_fraction", 0.1, 0.25, CLOSED),
    (cost_explorer, "usd_per_gpu_hour", 2.0, 5.0, CLOSED),
    (lost_fraction_explorer, "n", 256, 4096, CLOSED),
    (lost_fraction_explorer, "jitter", 0.03, 0.05, CLOSED),
    (lost_fraction_explorer, "pause_prob", 0.0, 1e-3, CLOSED),
    (lost_fraction_explorer, "pause", 0.1, 0.5, CLOSED),
    (lost_fraction_explorer, "sync", 0.0, 0.1, CLOSED),
]


def median_ms(fn, repeats):
    """Median CPU milliseconds: the comparisons here are about work done."""
    return _median_ms(fn, repeats, clock=time.process_time)


def baselines(repeats):
    """(what, fast ms, naive ms) for the three naive comparisons."""
    out = []
    ex = max_histogram_explorer()
    values = iter([4096, 16] * (repeats + 1))
    fast = median_ms(lambda: setattr(ex.controls["n"], "value", next(values)), repeats)
    dist = step_time_dist("normal", 1.0, 0.1)
    naive = median_ms(lambda: max_histograms(dist, [2**k for k in range(13)], size=20_000, bins=60, rng=0), max(3, repeats // 3))
    out.append(("histogram slider: param vs redraw all histograms", fast, naive))

    t = StepTime(1.0, jitter=0.03, pause_prob=1e-3, pause=0.1)
    ns = [2**k for k in range(15)]
    fast = median_ms(lambda: lost_fraction_curves(ns, {"s": t}), repeats)
    naive = median_ms(lambda: [expected_slowest(Cluster.uniform(n, t)) for n in ns], max(3, repeats // 3))
    out.append(("lost-fraction curve: shared grid vs exact per n", fast, naive))

    rng = np.random.default_rng(0)
    fast = median_ms(lambda: sample_max(stats.norm(), 4096, 2000, rng), repeats)

    def naive_max():
        for _ in range(2000 // 250):  # chunks of 250 x 4096, to bound memory
            rng.standard_normal((250, 4096)).max(axis=1)

    naive = median_ms(naive_max, max(3, repeats // 3))
    out.append(("Monte Carlo maxima, n = 4096, 2000 draws: sample_max vs all n", fast, naive))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="changes timed per control (default 9)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a control misses its budget")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"explorer callbacks, Python side: median of {args.repeats} changes (load average {load:.1f} on {os.cpu_count()} cores)")
    print(f"{'explorer':<24} {'control':<18} {'kind':<12} {'CPU ms':>8} {'wall ms':>8} {'budget':>8}")
    missed = []
    for factory, control, a, b, kind in CASES:
        ms, wall = control_latency(factory, control, a, b, args.repeats)
        ok = ms <= BUDGET_MS[kind]
        if not ok:
            missed.append((factory.__name__, control, ms))
        print(f"{factory.__name__:<24} {control:<18} {kind:<12} {ms:>8.1f} {wall:>8.1f} {BUDGET_MS[kind]:>5.0f} ms{'' if ok else '  OVER'}")
    print()
    print(f"{'against a naive way (CPU time)':<62} {'fast ms':>9} {'naive ms':>10} {'ratio':>8}")
    for what, fast, naive in baselines(args.repeats):
        print(f"{what:<62} {fast:>9.2f} {naive:>10.1f} {naive / fast:>7.0f}x")
    if missed:
        print(f"\n{len(missed)} control(s) over budget: " + ", ".join(f"{e}.{c} ({ms:.0f} ms)" for e, c, ms in missed))
    return 1 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
