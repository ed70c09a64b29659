"""The restaurant: independent tasks feel the average, a synchronized batch feels the maximum.

A kitchen cooks eight dishes for one table. Seven take 10 minutes, one takes 14.
At a counter, where each diner eats as soon as their own dish is ready, a
diner waits 10.5 minutes on average. At a table, where nobody eats until every
dish is out, everyone waits 14 minutes: the table is served at the speed of
its slowest dish.

A synchronous training step is the table. Each of n workers computes, then
all of them meet at a barrier; the step ends when the slowest arrives.

Times here are in any one unit: minutes for the restaurant, seconds for GPUs.

- :func:`dish_times`: the cooking time of each dish, fixed or random, with
  one slow dish (the last one). :func:`dish_noise` draws the randomness once,
  so the same dishes can be re-cooked with other settings.
- :func:`serve_table` -> :class:`Table`: one synchronized batch: the average,
  the maximum, and how long each finished dish sits waiting.
- :func:`worker_times`: step times of n workers over several steps, drawn from
  a step-time distribution.
- :func:`run_with_barrier` -> :class:`BarrierRun`: those steps with a barrier
  after each one: when each step starts and ends, who waits and how long,
  and how far the job falls behind the average worker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_memory, in_range, nonnegative, positive, require, whole

__all__ = [
    "dish_noise",
    "dish_times",
    "Table",
    "serve_table",
    "worker_times",
    "BarrierRun",
    "run_with_barrier",
]

# The largest table the restaurant charts draw (rows of a timeline).
MAX_DISHES = 64


def _frozen(arr):
    arr = np.array(arr, dtype=float)
    arr.setflags(write=False)
    return arr


def dish_noise(count=MAX_DISHES, rng=None):
    """Standard-normal draws that make dish times random, reproducibly.

    Draw them once and pass them to :func:`dish_times` (and to the restaurant
    chart), so that moving a slider re-cooks the same dishes instead of new ones.

    Parameters
    ----------
    count : int
        How many dishes the draws must cover, a whole number >= 1.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``count`` standard-normal draws.

    Examples
    --------
    >>> dish_noise(3, rng=0).round(3)
    array([ 0.126, -0.132,  0.64 ])
    """
    count = whole("count", count)
    check_memory(8 * count, f"drawing noise for {count} dishes")
    return as_rng(rng).standard_normal(count)


def dish_times(dishes=8, dish=10.0, slow=14.0, spread=0.0, noise=None, rng=None):
    """The cooking time of each dish; the last one is the slow dish.

    With ``spread = 0`` the times are fixed: ``dish`` for every dish but the
    last, which takes ``slow``. With ``spread > 0`` each time is random,
    log-normal with that mean and a coefficient of variation of ``spread``
    (so it is never negative)::

        time_i = mean_i * exp(s * z_i - s**2 / 2),   s = sqrt(log(1 + spread**2))

    where ``z_i`` are the standard-normal ``noise`` draws.

    Parameters
    ----------
    dishes : int
        Number of dishes, a whole number >= 1. With one dish, it is the slow one.
    dish : float
        Mean cooking time of an ordinary dish (minutes), > 0.
    slow : float
        Mean cooking time of the slow dish (minutes), > 0.
    spread : float
        Coefficient of variation of each dish's time, in [0, 3]; 0 means fixed.
    noise : array_like, optional
        At least ``dishes`` standard-normal draws (see :func:`dish_noise`).
        Drawn from ``rng`` when omitted and ``spread > 0``.
    rng : numpy.random.Generator, int or None
        Used only when ``noise`` is omitted.

    Returns
    -------
    numpy.ndarray
        ``dishes`` cooking times, in the unit of ``dish``.

    Examples
    --------
    >>> dish_times()
    array([10., 10., 10., 10., 10., 10., 10., 14.])
    >>> dish_times(3, dish=10, slow=20, spread=0.1, noise=[0.0, 1.0, -1.0]).round(2)
    array([ 9.95, 10.99, 18.01])
    """
    dishes = whole("dishes", dishes)
    check_memory(8 * dishes, f"cooking {dishes} dishes")
    dish = positive("dish", dish)
    slow = positive("slow", slow)
    spread = in_range("spread", spread, 0.0, 3.0)
    means = np.full(dishes, dish)
    means[-1] = slow
    if spread == 0:
        return means
    if noise is None:
        z = as_rng(rng).standard_normal(dishes)
    else:
        z = in_range("noise", np.asarray(noise, dtype=float).ravel())
        require(z.size >= dishes, "noise", z, f"at least dishes={dishes} draws")
        z = z[:dishes]
    s = math.sqrt(math.log1p(spread**2))
    return means * np.exp(s * z - s * s / 2)


def _times_1d(times, name="times"):
    arr = np.asarray(times, dtype=float) if not isinstance(times, (str, bytes)) else None
    require(arr is not None and arr.ndim == 1 and arr.size >= 1, name, times, "a 1-D sequence of at least one time")
    return nonnegative(name, arr)


@dataclass(frozen=True)
class Table:
    """One synchronized batch: tasks that start together and finish together.

    Attributes
    ----------
    times : numpy.ndarray
        Each task's own time (read-only).

    Examples
    --------
    >>> table = serve_table(dish_times())   # seven 10-minute dishes and one of 14
    >>> table.n, table.slowest, table.slowdown, table.idle_fraction
    (8, 7, 1.3333333333333333, 0.25)
    """

    times: np.ndarray

    @property
    def n(self):
        """Number of tasks."""
        return int(self.times.size)

    @property
    def average(self):
        """The mean time: what a diner waits on average at a counter."""
        return float(self.times.mean())

    @property
    def served_at(self):
        """The maximum: when the whole table is served (the barrier)."""
        return float(self.times.max())

    @property
    def slowest(self):
        """Index of the slowest task (the first one, on a tie)."""
        return int(np.argmax(self.times))

    @property
    def waiting(self):
        """How long each finished task sits waiting for the slowest."""
        return self.served_at - self.times

    @property
    def total_waiting(self):
        """The sum of :attr:`waiting`: task-minutes (or GPU-seconds) spent idle."""
        return float(self.waiting.sum())

    @property
    def idle_fraction(self):
        """Share of the capacity held (n x served_at) that was spent waiting."""
        held = self.n * self.served_at
        return self.total_waiting / held if held > 0 else 0.0

    @property
    def slowdown(self):
        """served_at / average: how much longer the table takes than the average task."""
        return self.served_at / self.average if self.average > 0 else 1.0


def serve_table(times):
    """Serve tasks as one synchronized batch.

    Parameters
    ----------
    times : array_like
        Each task's time (any unit, >= 0), at least one.

    Returns
    -------
    Table

    Examples
    --------
    >>> table = serve_table(dish_times())
    >>> table.average, table.served_at
    (10.5, 14.0)
    >>> table.total_waiting, table.waiting.tolist()[-2:]
    (28.0, [4.0, 0.0])
    """
    return Table(_frozen(_times_1d(times)))


def worker_times(dist, n, steps=1, rng=None):
    """Draw the step times of n workers over several steps.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        One worker's step-time distribution, in seconds; anything with
        ``rvs(size, random_state)``.
    n : int
        Number of workers, a whole number >= 1.
    steps : int
        Number of steps, a whole number >= 1.

    Returns
    -------
    numpy.ndarray
        Shape ``(steps, n)``, seconds.

    Examples
    --------
    >>> from scipy import stats
    >>> worker_times(stats.norm(1.0, 0.05), n=4, steps=2, rng=0).shape
    (2, 4)
    """
    require(callable(getattr(dist, "rvs", None)), "dist", dist, "a distribution with an rvs method")
    n = whole("n", n)
    steps = whole("steps", steps)
    check_memory(8 * 4 * n * steps, f"drawing {steps} steps of {n} workers")
    out = np.asarray(dist.rvs(size=(steps, n), random_state=as_rng(rng)), dtype=float)
    return out.reshape(steps, n)


@dataclass(frozen=True)
class BarrierRun:
    """Steps of n workers with a barrier after each step.

    Every worker starts step s at ``starts[s]``, computes for ``times[s, w]``,
    then waits until the slowest worker arrives at ``ends[s]``.

    Attributes
    ----------
    times : numpy.ndarray
        Compute time of each worker in each step, shape ``(steps, n)`` (read-only).

    Examples
    --------
    >>> run = run_with_barrier([[1.0, 1.2, 0.9], [1.1, 1.0, 1.0]])
    >>> run.steps, run.n, run.slowest.tolist(), run.step_times.tolist()
    (2, 3, [1, 0], [1.2, 1.1])
    >>> run.independent_finish.round(2).tolist()   # without the barrier, each worker's own total
    [2.1, 2.2, 1.9]
    """

    times: np.ndarray

    @property
    def steps(self):
        """Number of steps."""
        return int(self.times.shape[0])

    @property
    def n(self):
        """Number of workers."""
        return int(self.times.shape[1])

    @property
    def step_times(self):
        """Each step's length: its slowest worker's time."""
        return self.times.max(axis=1)

    @property
    def ends(self):
        """When each step's barrier releases, from the start of the run."""
        return np.cumsum(self.step_times)

    @property
    def starts(self):
        """When each step starts."""
        return self.ends - self.step_times

    @property
    def waiting(self):
        """How long each worker waits at each barrier, shape ``(steps, n)``."""
        return self.step_times[:, None] - self.times

    @property
    def job_time(self):
        """When the last step ends: the job's time."""
        return float(self.step_times.sum())

    @property
    def average_time(self):
        """The job's time if it ran at the average worker's pace:
        the sum over steps of the mean worker time."""
        return float(self.times.mean(axis=1).sum())

    @property
    def slowdown(self):
        """job_time / average_time (1.0 when there is nothing to wait for)."""
        return self.job_time / self.average_time if self.average_time > 0 else 1.0

    @property
    def idle_fraction(self):
        """Share of the worker-time held (n x job_time) spent waiting."""
        held = self.n * self.job_time
        return float(self.waiting.sum()) / held if held > 0 else 0.0

    @property
    def slowest(self):
        """Index of each step's slowest worker."""
        return self.times.argmax(axis=1)

    @property
    def independent_finish(self):
        """When each worker would finish all its steps with no barrier."""
        return self.times.sum(axis=0)


def run_with_barrier(times):
    """Run steps of n workers with a barrier after each step.

    Parameters
    ----------
    times : array_like
        Compute times (seconds, >= 0): shape ``(steps, n)``, or ``(n,)`` for one step.

    Returns
    -------
    BarrierRun

    Examples
    --------
    >>> run = run_with_barrier([[1.0, 1.2, 0.9], [1.1, 1.0, 1.0]])
    >>> run.ends.tolist(), run.job_time
    ([1.2, 2.3], 2.3)
    >>> round(run.average_time, 3), round(run.slowdown, 3)
    (2.067, 1.113)
    >>> run.waiting.round(2).tolist()
    [[0.2, 0.0, 0.3], [0.0, 0.1, 0.1]]
    """
    arr = np.asarray(times, dtype=float) if not isinstance(times, (str, bytes)) else None
    ok = arr is not None and arr.ndim in (1, 2) and arr.size >= 1
    require(ok, "times", times, "an array of shape (steps, n) or (n,) with at least one time")
    arr = nonnegative("times", np.atleast_2d(arr))
    return BarrierRun(_frozen(arr))
