"""Benchmark: the mitigation algorithms against naive baselines, and notebook 07's explorer callbacks.

Run from the repository root::

    python benchmarks/bench_mitigations.py            # prints the figures
    python benchmarks/bench_mitigations.py --strict   # exit 1 if a callback budget is missed
    python benchmarks/bench_mitigations.py --repeats 5

In one run it prints:

1. Algorithms against a naive way of getting the same answer:

   - greedy LPT, Karmarkar-Karp and branch and bound against brute force over
     every assignment (12 sequences, 3 workers: 531,441 assignments), with
     the makespans (the heuristics' quality, the exact methods' agreement);
   - LPT and Karmarkar-Karp on 4,096 sequences and 64 workers (time, and
     distance to the lower bound);
   - ``partition_layers`` (binary-searched, vectorised DP, O(P n log n))
     against the textbook O(n^2 P) recurrence in Python, 512 layers, 16 stages;
   - ``backup_workers`` (exact order statistics, 11 values of b) against Monte
     Carlo that draws all N + b workers for 20,000 steps and sorts;
   - ``hedging_tradeoff`` (one bisection for all delays) against one
     ``fanout_quantile`` per delay, 100 delays.

2. Explorer callbacks: for every control of every explorer of notebook 07, the
   median time of one change (set ``.value`` back and forth), which is
   everything the kernel does before the browser redraws. Each change is
   timed as CPU time of this process (what it costs on an idle core; the
   budgets apply to it) and as wall time (which also counts waiting for a
   core). Budgets: <= 30 ms closed form (a param, a readout, an exact
   integral), <= 150 ms sampling (new random draws or a simulation).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np

from straggle_edu.explorers.mitigations import (
    backup_explorer,
    hedging_explorer,
    packing_explorer,
    partition_explorer,
    sgd_explorer,
)
from straggle_edu.models.backup import backup_workers, inception_50_setup
from straggle_edu.models.balance import (
    best_packing,
    greedy_lpt,
    karmarkar_karp,
    packing_lower_bound,
    partition_layers,
)
from straggle_edu.models.hedging import HedgedLatency, fanout_quantile, hedging_tradeoff, tail_at_scale_latency
from straggle_edu.models.samplers import sample_order_stat

from _timing import BUDGET_MS, CLOSED, SAMPLING


def best_time(fn, repeats):
    """Best wall time of ``repeats`` calls, in seconds, and the last result."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def ms(seconds):
    return f"{seconds * 1e3:10.2f} ms"


# ----------------------------------------------------------------- naive ---


def brute_force_makespan(costs, m):
    """Every assignment of len(costs) items to m workers, in Python."""
    best = math.inf
    for assign in itertools.product(range(m), repeat=len(costs)):
        loads = [0.0] * m
        for c, w in zip(costs, assign):
            loads[w] += c
        best = min(best, max(loads))
    return best


def naive_partition(costs, P):
    """The textbook O(n^2 P) linear-partition recurrence, in Python."""
    n = len(costs)
    S = [0.0]
    for c in costs:
        S.append(S[-1] + c)
    f = [math.inf] + S[1:]
    for j in range(2, P + 1):
        g = [math.inf] * (n + 1)
        for i in range(j, n + 1):
            g[i] = min(max(f[l], S[i] - S[l]) for l in range(j - 1, i))
        f = g
    return f[n]


def naive_backup(dist, n, max_b, steps, rng):
    """Monte Carlo: draw all n + b workers per step and sort."""
    out = []
    for b in range(max_b + 1):
        x = np.asarray(dist.rvs(size=(steps, n + b), random_state=rng))
        out.append(np.sort(x, axis=1)[:, n - 1].mean())
    return np.array(out)


# ------------------------------------------------------------ algorithms ---


def algorithms(repeats):
    rng = np.random.default_rng(0)
    print("1 · Algorithms against naive baselines (best of %d)" % repeats)

    small = (rng.pareto(2.0, 12) + 1.0).round(3).tolist()
    t_brute, brute = best_time(lambda: brute_force_makespan(small, 3), 1)
    t_lpt, lpt = best_time(lambda: greedy_lpt(small, 3).makespan, repeats)
    t_kk, kk = best_time(lambda: karmarkar_karp(small, 3).makespan, repeats)
    t_bb, bb = best_time(lambda: best_packing(small, 3).makespan, repeats)
    print(f"  packing 12 sequences on 3 workers; brute force over 3^12 assignments: {ms(t_brute)}  makespan {brute:.3f}")
    for name, t, v in (("greedy LPT", t_lpt, lpt), ("Karmarkar-Karp", t_kk, kk), ("branch and bound", t_bb, bb)):
        print(f"    {name:<17} {ms(t)}  {t_brute / t:10.0f}x faster  makespan {v:.3f} ({100 * (v / brute - 1):.2f}% over optimal)")

    big = rng.pareto(2.5, 4096) + 1.0
    lower = packing_lower_bound(big, 64)
    t_lpt, lpt = best_time(lambda: greedy_lpt(big, 64).makespan, repeats)
    t_kk, kk = best_time(lambda: karmarkar_karp(big, 64).makespan, repeats)
    print("  packing 4,096 sequences on 64 workers (brute force: 64^4096 assignments)")
    print(f"    greedy LPT        {ms(t_lpt)}  {100 * (lpt / lower - 1):.3f}% over the lower bound")
    print(f"    Karmarkar-Karp    {ms(t_kk)}  {100 * (kk / lower - 1):.3f}% over the lower bound")

    layers = (rng.random(512) + 0.5).tolist()
    t_naive, naive = best_time(lambda: naive_partition(layers, 16), 1)
    t_dp, dp = best_time(lambda: partition_layers(layers, 16).bottleneck, repeats)
    print(f"  linear partition, 512 layers into 16 stages: O(n^2 P) recurrence {ms(t_naive)}, "
          f"partition_layers {ms(t_dp)}: {t_naive / t_dp:.0f}x; bottlenecks {naive:.6f} / {dp:.6f}")

    setup = inception_50_setup()
    t_mc, mc = best_time(lambda: naive_backup(setup["dist"], 50, 10, 20_000, np.random.default_rng(1)), 1)
    t_ex, ex = best_time(lambda: backup_workers(setup["dist"], 50, 10).compute, repeats)
    t_os, _ = best_time(lambda: [sample_order_stat(setup["dist"], 50, 50 + b, 20_000, 2) for b in range(11)], repeats)
    print(f"  backup workers, E[50th of 50 + b] for b = 0..10: Monte Carlo drawing all workers (20,000 steps) "
          f"{ms(t_mc)}, exact {ms(t_ex)}: {t_mc / t_ex:.0f}x; largest difference {np.abs(mc - ex).max() * 1e3:.2f} ms "
          f"(order-statistic sampler: {ms(t_os)})")

    lat = tail_at_scale_latency()
    delays = np.geomspace(1e-4, 1.0, 100)
    t_loop, loop = best_time(lambda: [fanout_quantile(HedgedLatency(lat, d), 0.999, 1000) for d in delays], 1)
    t_vec, vec = best_time(lambda: hedging_tradeoff(lat, delays, 0.999, 1000).tail, repeats)
    print(f"  hedging trade-off, 100 delays: one quantile per delay {ms(t_loop)}, vectorised {ms(t_vec)}: "
          f"{t_loop / t_vec:.0f}x; largest relative difference {np.max(np.abs(np.array(loop) / vec - 1)):.1e}")


# ------------------------------------------------------------- callbacks ---

EXPLORERS = {
    "packing": (packing_explorer, {}, {"workers": (SAMPLING, 8, 32), "per_worker": (SAMPLING, 16, 64),
                                       "sigma": (SAMPLING, 0.5, 1.5), "seed": (SAMPLING, 1, 2)}),
    "partition": (partition_explorer, {}, {"layers": (CLOSED, 24, 48), "stages": (CLOSED, 4, 8),
                                           "output_layers": (CLOSED, 1.0, 3.0), "microbatches": (CLOSED, 8, 16)}),
    "backup": (backup_explorer, {}, {"n": (CLOSED, 50, 100), "jitter": (CLOSED, 0.02, 0.05),
                                     "pause_prob": (CLOSED, 0.03, 0.05), "pause": (CLOSED, 0.55, 1.0),
                                     "sync_per_worker": (CLOSED, 0.012, 0.02), "price": (CLOSED, 1.0, 0.5)}),
    "hedging": (hedging_explorer, {}, {"delay_ms": (CLOSED, 10.0, 20.0), "fanout": (CLOSED, 1000, 100),
                                       "slow_prob": (CLOSED, 0.002, 0.004)}),
    "sgd": (sgd_explorer, {}, {"workers": (SAMPLING, 16, 8), "backups": (SAMPLING, 2, 1),
                               "pause_prob": (SAMPLING, 0.05, 0.1), "lr_scale": (SAMPLING, 0.5, 1.0),
                               "slow_factor": (SAMPLING, 1.0, 1.5), "heterogeneity": (SAMPLING, 0.0, 1.0),
                               "full_batch": (SAMPLING, False, True)}),
}


def callbacks(repeats):
    print(f"\n2 · Explorer callbacks (median of {2 * repeats} changes; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")
    print(f"  {'explorer':<10} {'control':<16} {'kind':<12} {'CPU':>10} {'wall':>10}  budget")
    missed = []
    for name, (make, kwargs, controls) in EXPLORERS.items():
        ex = make(**kwargs)
        for control, (kind, a, b) in controls.items():
            widget = ex.controls[control]
            cpu, wall = [], []
            for value in [b, a] * repeats:
                c0, w0 = time.process_time(), time.perf_counter()
                widget.value = value
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - w0)
            c_ms, w_ms = 1e3 * statistics.median(cpu), 1e3 * statistics.median(wall)
            ok = c_ms <= BUDGET_MS[kind]
            if not ok:
                missed.append(f"{name}.{control}")
            print(f"  {name:<10} {control:<16} {kind:<12} {c_ms:8.1f} ms {w_ms:8.1f} ms  "
                  f"<= {BUDGET_MS[kind]:.0f} ms {'ok' if ok else 'MISSED'}")
    return missed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a callback budget is missed")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per measurement (default 3)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    algorithms(max(1, args.repeats))
    missed = callbacks(max(1, args.repeats))
    if missed:
        print(f"\nover budget: {', '.join(missed)}")
    return 1 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
