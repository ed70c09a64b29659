"""Exercises for ``01_restaurant.ipynb``: the table waits for its slowest dish.

- ``q1``: 12 dishes, 11 at 8 minutes and one at 20: when is the table served?
- ``q2``: the same table: how many dish-minutes do finished dishes sit waiting?
- ``q3``: four GPUs take 1.0, 1.1, 0.9 and 1.6 s in one step: what share of
  the GPU time held for that step is spent waiting at the barrier?
- ``q4``: two steps of two GPUs, [[1.0, 1.2], [1.3, 1.0]] s: how many times
  longer than the average worker's pace does the job take?
- ``q5`` (a design question): batch the restaurant. 16 dishes, 15 at 10
  minutes and one at 20, go out in tables of b (1, 2, 4, 8 or 16), each
  served when its own slowest dish is out. The largest b (fewest waiter
  trips) that keeps the average diner's wait at or under 13 minutes.
"""

from __future__ import annotations

from ..models.restaurant import dish_times, run_with_barrier, serve_table
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

q1 = Exercise(
    "q1", expected=lambda: serve_table(dish_times(12, dish=8, slow=20)).served_at,
    hint="Nobody eats until every dish is out. Which dish is out last?",
    solution="serve_table(dish_times(12, dish=8, slow=20)).served_at  # 20 minutes, the slowest dish",
)

q2 = Exercise(
    "q2", expected=lambda: serve_table(dish_times(12, dish=8, slow=20)).total_waiting,
    hint="Each of the 11 ordinary dishes is ready at 8 minutes and sits until the slow one is out.",
    solution="serve_table(dish_times(12, dish=8, slow=20)).total_waiting  # 11 * (20 - 8) = 132 dish-minutes",
)

q3 = Exercise(
    "q3", expected=lambda: serve_table([1.0, 1.1, 0.9, 1.6]).idle_fraction,
    hint="The step lasts as long as the slowest GPU. The GPU time held is 4 x that; "
         "the waiting is the sum of each GPU's gap to the slowest. serve_table(times).idle_fraction.",
    solution="serve_table([1.0, 1.1, 0.9, 1.6]).idle_fraction  # (0.6 + 0.5 + 0.7) / (4 * 1.6) = 0.28125",
    fraction=True,
)

q4 = Exercise(
    "q4", expected=lambda: run_with_barrier([[1.0, 1.2], [1.3, 1.0]]).slowdown,
    hint="The job takes the slowest time of each step, summed over steps. The average worker's pace is the "
         "mean time of each step, summed. run_with_barrier(times).slowdown divides one by the other.",
    solution="run_with_barrier([[1.0, 1.2], [1.3, 1.0]]).slowdown  # (1.2 + 1.3) / (1.1 + 1.15) = 1.111",
    rel_tol=1e-3,
)


def _average_wait(b, dishes=16):
    """Average diner's wait (min) when the dishes go out in tables of ``b``."""
    times = dish_times(dishes, dish=10, slow=20)
    tables = [times[i:i + b] for i in range(0, dishes, b)]
    return sum(serve_table(t).served_at * len(t) for t in tables) / dishes


q5 = Exercise(
    "q5", expected=lambda: max(b for b in (1, 2, 4, 8, 16) if _average_wait(b) <= 13),
    hint="Only the table with the slow dish waits 20 minutes; every other table is served at 10. "
         "A table of b puts b diners behind the slow dish: average = (10 x (16 - b) + 20 x b) / 16.",
    solution="max(b for b in [1, 2, 4, 8, 16] if (10 * (16 - b) + 20 * b) / 16 <= 13)"
             "  # 4: the average is 12.5 min; tables of 8 give 15",
)
