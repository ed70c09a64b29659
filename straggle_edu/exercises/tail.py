"""Exercises for ``02_tail_probability.ipynb``: P(some worker is slow) and its inverses.

- ``q1``: 1,000 workers, each slow on 1 step in 1,000: P(the step is slow)?
- ``q2``: at 1 in 500 per worker, how many workers until a slow step is a coin flip?
- ``q3``: the per-worker budget that keeps 1,024 GPUs clean on 99.9% of steps.
- ``q4``: with 1,000 workers, the job's median step sits at which percentile
  of one worker's step time?
- ``q5`` (a design question): choose the per-worker slow-step rate, among
  1 in 1,000, 10,000, 100,000 and 1,000,000, for a 2,048-GPU job: the
  loosest (cheapest) one that keeps P(some worker slow) under 10%.
"""

from __future__ import annotations

from ..math.tail import p_any_slow, per_worker_budget, workers_until
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

# The per-worker slow-step rates q5 offers, loosest first.
_Q5_RATES = (1e-3, 1e-4, 1e-5, 1e-6)

q1 = Exercise(
    "q1", expected=lambda: p_any_slow(0.001, 1000),
    hint="The step is clean only when all 1,000 workers are: (1 - p)**n. The rest is se.p_any_slow(p, n).",
    solution="se.p_any_slow(0.001, 1000)  # 1 - 0.999**1000, about 0.632",
    abs_tol=5e-4,
    fraction=True,
)

q2 = Exercise(
    "q2", expected=lambda: workers_until(0.002, 0.5),
    hint="Find the smallest n with 1 - (1 - p)**n >= 0.5, that is n >= log(0.5) / log(1 - p). Or se.workers_until(p, target).",
    solution="se.workers_until(0.002, 0.5)  # 347, about ln 2 / p = 346.6 rounded up",
)

q3 = Exercise(
    "q3", expected=lambda: per_worker_budget(1024, 0.001),
    hint="Clean on 99.9% of steps means P(some worker slow) <= 0.001. Solve 1 - (1 - p)**1024 = 0.001 for p, "
         "or use se.per_worker_budget(n, target).",
    solution="se.per_worker_budget(1024, 0.001)  # 1 - 0.999**(1/1024), about 9.77e-07: 1 step in a million",
    fraction=True,
)

q4 = Exercise(
    "q4", expected=lambda: 100 * (1 - per_worker_budget(1000, 0.5)),
    hint="The job's step is below t when every worker's is: F(t)**n. Its median is where F(t)**n = 0.5, "
         "so F(t) = 0.5**(1/n). As a percentile, multiply by 100.",
    solution="100 * 0.5 ** (1 / 1000)  # = 100 * (1 - se.per_worker_budget(1000, 0.5)), the worker's p99.93",
    digits=4,  # a percentile near 100: the question asks for 4 significant figures
)


q5 = Exercise(
    "q5", expected=lambda: max(p for p in _Q5_RATES if p_any_slow(p, 2048) < 0.10),
    hint="Each tighter rate costs more engineering, so take the loosest that works. Try se.p_any_slow(p, 2048) "
         "for each offer, or compare the offers with se.per_worker_budget(2048, 0.10).",
    solution="max(p for p in [1e-3, 1e-4, 1e-5, 1e-6] if se.p_any_slow(p, 2048) < 0.10)"
             "  # 1e-05: 2.0% of steps slow; 1 in 10,000 gives 18.5%",
)
