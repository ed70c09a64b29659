"""Benchmark: the pipeline simulator against a naive event loop, and the callback
latency of the explorers of notebooks 05 and 06.

Run from the repository root::

    python benchmarks/bench_pipeline.py            # prints the figures
    python benchmarks/bench_pipeline.py --strict   # exit 1 if a budget is missed
    python benchmarks/bench_pipeline.py --repeats 3

Simulator. The naive baseline is a pure-Python event loop: sweep the devices
of each DP replica and run any op whose dependencies have ended (the same
dependency model, one op at a time, no numpy). The library builds the
dependency graph once per (P, M, schedule) and times whole levels of
independent ops at once, vectorized over replicas; ``pipeline_step_times``
also batches many steps (Monte Carlo samples, what-if variants) in one call.
Both are checked to agree before timing.

Explorers. For every control it sets ``.value`` back and forth and reports the
median time of one change: callback, model, new chart's serialization, param
links. Budgets: <= 30 ms for closed-form updates (a param, a readout, a curve
on one grid); <= 150 ms for sampling and simulation updates (new draws, a
re-simulated step, a what-if replay).

Medians over repeats, with the machine's load average, because a shared
2-core machine is noisy.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

from straggle_edu.explorers.root_causes import (
    debug_checklist_explorer,
    gc_explorer,
    sequence_imbalance_explorer,
    stage_imbalance_explorer,
)
from straggle_edu.explorers.training_step import dp_scaling_explorer, pipeline_explorer
from straggle_edu.models.causes import straggler_scenario
from straggle_edu.traces.diagnose import diagnose_job
from straggle_edu.models.pipeline import pipeline_schedule, pipeline_step_times, simulate_pipeline

from _timing import BUDGET_MS, CLOSED, SAMPLING, control_latency, median_ms


CASES = [
    (pipeline_explorer, "factor", 3.0, 4.0, SAMPLING),
    (pipeline_explorer, "target", "one microbatch's op", "one stage", SAMPLING),
    (pipeline_explorer, "slow_stage", 2, 1, SAMPLING),
    (pipeline_explorer, "microbatches", 8, 12, SAMPLING),
    (pipeline_explorer, "allreduce", 1.0, 2.0, SAMPLING),
    (pipeline_explorer, "color", "microbatch", "op", SAMPLING),
    (dp_scaling_explorer, "n", 1024, 64, CLOSED),
    (dp_scaling_explorer, "jitter", 0.05, 0.1, CLOSED),
    (dp_scaling_explorer, "pause_prob", 0.01, 0.02, CLOSED),
    (dp_scaling_explorer, "gradient_gb", 1.0, 4.0, CLOSED),
    (dp_scaling_explorer, "measure", "efficiency", "speedup", CLOSED),
    (stage_imbalance_explorer, "moved", 0, 2, CLOSED),
    (stage_imbalance_explorer, "vocab", 131072, 32000, CLOSED),
    (stage_imbalance_explorer, "stages", 4, 8, CLOSED),
    (sequence_imbalance_explorer, "workers", 64, 256, SAMPLING),
    (sequence_imbalance_explorer, "batching", "whole sequences", "packed", SAMPLING),
    (sequence_imbalance_explorer, "sigma", 1.0, 1.5, SAMPLING),
    (gc_explorer, "workers", 64, 1024, SAMPLING),
    (gc_explorer, "pause", 0.3, 0.6, SAMPLING),
    (debug_checklist_explorer, "seed", 0, 1, SAMPLING),
    (debug_checklist_explorer, "cause", "slow worker", "slow link", SAMPLING),
    (debug_checklist_explorer, "severity", 1.0, 2.0, SAMPLING),
]


def naive_step_time(P, M, fwd, bwd, p2p, ar, opt):
    """Pure-Python event loop over every op of every replica."""
    D = len(fwd)
    order = pipeline_schedule(P, M)
    step = 0.0
    arrival = [[0.0] * P for _ in range(D)]
    for d in range(D):
        ends, pos, free = {}, [0] * P, [0.0] * P
        left = 2 * M * P
        while left:
            for s in range(P):
                if pos[s] == len(order[s]):
                    continue
                kind, m, _ = order[s][pos[s]]
                dep = ("F", m, s - 1) if kind == "F" and s > 0 else ("B", m, s + 1) if kind == "B" and s < P - 1 else None
                if dep is not None and dep not in ends:
                    continue
                link = s - 1 if kind == "F" else s
                ready = free[s] if dep is None else max(free[s], ends[dep] + p2p[d][link][m])
                ends[(kind, m, s)] = free[s] = ready + (fwd if kind == "F" else bwd)[d][s][m]
                pos[s] += 1
                left -= 1
        for s in range(P):
            arrival[d][s] = ends[("B", M - 1, s)]
    for s in range(P):
        ar_end = max(arrival[d][s] for d in range(D)) + max(ar[d][s] for d in range(D))
        step = max(step, max(ar_end + opt[d][s] for d in range(D)))
    return step


def simulator_rows(repeats):
    rng = np.random.default_rng(0)
    rows = []
    for D, P, M in [(1, 4, 8), (8, 4, 16), (32, 8, 32), (64, 16, 64)]:
        f, b = rng.uniform(0.5, 1.5, (D, P, M)), rng.uniform(1, 3, (D, P, M))
        x, ar, opt = rng.uniform(0, 0.1, (D, P, M)), rng.uniform(0, 1, (D, P)), np.full((D, P), 0.2)
        lists = [a.tolist() for a in (f, b, x, ar, opt)]
        want = naive_step_time(P, M, *lists)
        got = simulate_pipeline(P, M, f, b, dp=D, p2p=x, allreduce=ar, optimizer=opt)
        assert abs(got.step_time - want) <= 1e-9 * want, (got.step_time, want)
        reps = max(3, repeats // (1 + D // 8))
        full = median_ms(lambda: simulate_pipeline(P, M, f, b, dp=D, p2p=x, allreduce=ar, optimizer=opt), reps)
        steps = median_ms(lambda: pipeline_step_times(P, M, f, b, dp=D, p2p=x, allreduce=ar, optimizer=opt), reps)
        naive = median_ms(lambda: naive_step_time(P, M, *lists), max(1, reps // 3))
        rows.append((f"D={D} x P={P} x M={M} ({2 * D * P * M:,} compute ops)", full, steps, naive))
    # many steps at once: 1,000 Monte Carlo steps of an 8 x 4 x 16 job
    T, D, P, M = 1000, 8, 4, 16
    f, b = rng.uniform(0.5, 1.5, (T, D, P, M)), rng.uniform(1, 3, (T, D, P, M))
    batched = median_ms(lambda: pipeline_step_times(P, M, f, b, dp=D), max(3, repeats // 3))
    one = [a.tolist() for a in (f[0], b[0], np.zeros((D, P, M)), np.zeros((D, P)), np.zeros((D, P)))]
    naive_one = median_ms(lambda: naive_step_time(P, M, *one), max(3, repeats // 3))
    rows.append((f"{T} steps of D={D} x P={P} x M={M}, batched", batched, batched, naive_one * T))
    sc = straggler_scenario("slow worker", rng=0)
    rows.append(("diagnose_job(): record + what-if engine, 20 steps, 4x4x8", median_ms(lambda: diagnose_job(sc), repeats),
                 float("nan"), float("nan")))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="changes timed per control (default 9)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a control misses its budget")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"pipeline simulator (load average {load:.1f} on {os.cpu_count()} cores), median ms")
    print(f"{'case':<58} {'simulate':>9} {'step_times':>11} {'naive loop':>11} {'ratio':>7}")
    for what, full, steps, naive in simulator_rows(args.repeats):
        ratio = f"{naive / steps:>6.0f}x" if np.isfinite(naive) else ""
        naive_s = f"{naive:>11.1f}" if np.isfinite(naive) else f"{'':>11}"
        steps_s = f"{steps:>11.2f}" if np.isfinite(steps) else f"{'':>11}"
        print(f"{what:<58} {full:>9.2f} {steps_s} {naive_s} {ratio}")
    print()
    print(f"explorer callbacks, Python side: median of {args.repeats} changes")
    print(f"{'explorer':<28} {'control':<14} {'kind':<12} {'median ms':>10} {'budget':>8}")
    missed = []
    for factory, control, a, b, kind in CASES:
        ms = control_latency(factory, control, a, b, args.repeats)[1]  # wall
        ok = ms <= BUDGET_MS[kind]
        if not ok:
            missed.append((factory.__name__, control, ms))
        print(f"{factory.__name__:<28} {control:<14} {kind:<12} {ms:>10.1f} {BUDGET_MS[kind]:>6.0f} ms {'' if ok else ' OVER'}")
    if missed:
        print(f"\n{len(missed)} control(s) over budget: " + ", ".join(f"{e}.{c} ({ms:.0f} ms)" for e, c, ms in missed))
    return 1 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
