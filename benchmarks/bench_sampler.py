"""Benchmark: order-statistic samplers and exact E[max] against the naive way.

Run from the repository root::

    python benchmarks/bench_sampler.py            # prints the figures
    python benchmarks/bench_sampler.py --strict   # exit 1 if a target is missed

In one run it prints:

- the time of ``sample_max`` against the naive
  ``rng.standard_normal((size, n)).max(axis=1)`` at n=4096, size=20000, and the
  ratio (target >= 1000x);
- the peak memory of each (tracemalloc), with the sampler at n = 4096 and
  n = 10**6 to show that its memory does not depend on n;
- the time of ``expected_max(norm, 10**6)`` (target <= 10 ms);
- for context, the same for the step-time and cluster models.

Times are the best of several repeats (the least disturbed by other load).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np
from scipy import stats

import straggle_edu as se

SIZE = 20_000
N = 4096
RATIO_TARGET = 1000.0
EXPECTED_MAX_TARGET_S = 10e-3


def best_time(fn, repeats):
    """Best wall time of ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_bytes(fn):
    """Peak traced allocation of one call, in bytes (numpy reports to tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def mib(nbytes):
    return f"{nbytes / 2**20:9.2f} MiB"


def ms(seconds):
    return f"{seconds * 1e3:9.3f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    args = parser.parse_args(argv)

    norm = stats.norm()
    rng = np.random.default_rng(0)

    def naive(n=N):
        return rng.standard_normal((SIZE, n)).max(axis=1)

    def fast(n=N):
        return se.sample_max(norm, n, SIZE, rng)

    fast(), naive()  # warm up imports and caches
    t_naive = best_time(naive, 5)
    t_fast = best_time(fast, 20)
    ratio = t_naive / t_fast

    mem_naive = peak_bytes(naive)
    mem_fast = peak_bytes(fast)
    mem_fast_big = peak_bytes(lambda: fast(10**6))

    se.expected_max(norm, 10**6)
    t_emax = best_time(lambda: se.expected_max(norm, 10**6), 50)
    t_emax_7 = best_time(lambda: se.expected_max(norm, 10**7), 50)

    step = se.StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
    cluster = se.Cluster.with_slow(10**6, step, slow_count=8, slow_factor=1.2, sync=se.AllReduce(1e9, 100e9, 5e-6))
    t_step_emax = best_time(lambda: se.expected_max(step, 10**6), 20)
    t_cluster = best_time(lambda: se.expected_step_time(cluster), 20)
    t_cluster_sample = best_time(lambda: se.sample_step_times(cluster, SIZE, rng), 5)

    ok_ratio = ratio >= RATIO_TARGET
    ok_memory = mem_fast_big <= 1.5 * mem_fast
    ok_emax = t_emax <= EXPECTED_MAX_TARGET_S
    mark = lambda ok: "target met" if ok else "TARGET MISSED"

    print(f"straggle_edu {se.__version__}, numpy {np.__version__}; best of several runs")
    print()
    print(f"Maximum of n={N} standard normals, size={SIZE} draws")
    print(f"  naive rng.standard_normal((size, n)).max(axis=1)  {ms(t_naive)}")
    print(f"  sample_max(norm, n, size, rng)                    {ms(t_fast)}")
    print(f"  ratio                                             {ratio:9.0f}x   (>= {RATIO_TARGET:.0f}x: {mark(ok_ratio)})")
    print()
    print("Peak memory (tracemalloc)")
    print(f"  naive,      n=4096                                {mib(mem_naive)}")
    print(f"  naive,      n=10**6 (not run: size * n * 8 bytes) {mib(SIZE * 10**6 * 8)}")
    print(f"  sample_max, n=4096                                {mib(mem_fast)}")
    print(f"  sample_max, n=10**6                               {mib(mem_fast_big)}   (independent of n: {mark(ok_memory)})")
    print()
    print("Exact expected maximum")
    print(f"  expected_max(norm, 10**6)                         {ms(t_emax)}   (<= 10 ms: {mark(ok_emax)})")
    print(f"  expected_max(norm, 10**7)                         {ms(t_emax_7)}")
    print(f"  expected_max(StepTime with pauses, 10**6)         {ms(t_step_emax)}")
    print(f"  expected_step_time(10**6 workers, 2 groups)       {ms(t_cluster)}")
    print(f"  sample_step_times(same cluster, size={SIZE})      {ms(t_cluster_sample)}")

    if args.strict and not (ok_ratio and ok_memory and ok_emax):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
