"""Relaxed synchronization: what dropping or delaying the slowest costs the optimizer.

A small, seeded SGD run on a toy problem (least squares on generated data),
trained three ways by the same W workers, each worker's compute time drawn
from a step-time model so that the runs can be compared at equal wall-clock
time:

``"sync"``
    every step waits for all W gradients (the barrier), then applies their
    average: step = slowest worker + sync.
``"drop"``
    every step keeps the fastest W - b gradients and drops the b late ones:
    shorter steps, fewer gradients per step (a k-of-n barrier; the name of
    :mod:`straggle_edu.instruments.sgd`'s scheme that does the same, where
    ``"backup"`` means N + b workers that keep the first N, Chen et al., 2016).
``"async"``
    no barrier: each worker reads the parameters, computes, and pushes its
    gradient, which is applied at once with learning rate ``lr / W``, as in
    DistBelief's Downpour SGD (Dean et al., NeurIPS 2012). Nobody waits, but
    each gradient was computed on parameters that are ``staleness`` updates
    old.

Heterogeneous shards (``heterogeneity > 0``) give every worker data with
its own optimum; a persistently slow worker (``slow_factor > 1``) then shows
the hidden price of dropped gradients: drop steps almost always drop the
same worker, so its shard stops counting and the run settles on the wrong
answer. With shards alike (``heterogeneity=0``) the same straggler costs its
work and little else (notebook 11: random batches, no bias).

- :func:`make_problem`: the toy least-squares problem, seeded.
- :func:`run_sgd`: one run, returning an :class:`SGDRun` (time, loss,
  gradients used and dropped, staleness).
- :func:`compare_sgd`: the three runs on one problem, for one chart.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_memory, in_range, nonnegative, positive, require, whole
from ..math.order_stats import check_dist, quantile

__all__ = ["LeastSquares", "SGDComparison", "SGDRun", "compare_sgd", "make_problem", "run_sgd"]

MODES = ("sync", "drop", "async")
MAX_UPDATES = 200_000


@dataclass(frozen=True)
class LeastSquares:
    """Least squares split into worker shards: minimise 0.5 * mean((X theta - y)**2).

    Attributes
    ----------
    X : numpy.ndarray, shape (workers, rows, features)
        Each worker's shard of the design matrix.
    y : numpy.ndarray, shape (workers, rows)
        Each worker's targets.
    theta_star : numpy.ndarray
        The minimiser over all shards together.
    smoothness : float
        Largest eigenvalue L of the Hessian; plain gradient descent is stable
        for learning rates below 2 / L.

    Examples
    --------
    >>> p = make_problem(workers=4, rows=32, features=5, rng=0)
    >>> p.workers, p.X.shape, round(p.excess_loss(p.theta_star), 12)
    (4, (4, 32, 5), 0.0)
    """

    X: np.ndarray
    y: np.ndarray
    theta_star: np.ndarray
    smoothness: float
    _A: np.ndarray
    _c: np.ndarray
    _loss_star: float

    @property
    def workers(self):
        return int(self.X.shape[0])

    def excess_loss(self, theta):
        """Loss of ``theta`` minus the optimal loss (>= 0; 0 at theta_star)."""
        d = np.asarray(theta, dtype=float) - self.theta_star
        return float(0.5 * d @ self._A @ d)

    def gradient(self, theta, worker, rows):
        """Mean gradient over the given rows of ``worker``'s shard."""
        Xb = self.X[worker, rows]
        return Xb.T @ (Xb @ theta - self.y[worker, rows]) / Xb.shape[0]


def make_problem(workers=16, rows=64, features=10, noise=0.5, heterogeneity=0.0, condition=10.0, rng=0):
    """A seeded least-squares problem sharded over ``workers``.

    Features have scales from 1 down to 1/sqrt(condition), so the Hessian's
    condition number is about ``condition``. Worker w's targets come from
    ``theta_true + heterogeneity * delta_w`` plus Gaussian noise: with
    heterogeneity 0 every shard looks alike (i.i.d. data).

    Parameters
    ----------
    workers : int
        Number of shards, 1 .. 1024.
    rows : int
        Rows per shard, 1 .. 4096.
    features : int
        Number of features, 1 .. 200.
    noise : float
        Standard deviation of the target noise, >= 0.
    heterogeneity : float
        How far apart the shards' own optima are, >= 0.
    condition : float
        Condition number of the Hessian, >= 1.

    Returns
    -------
    LeastSquares

    Examples
    --------
    >>> p = make_problem(workers=4, rows=32, features=5, rng=0)
    >>> p.X.shape, p.excess_loss(p.theta_star)
    ((4, 32, 5), 0.0)
    >>> p.excess_loss(p.theta_star + 1) > 0
    True
    """
    workers = whole("workers", workers, 1, 1024)
    rows = whole("rows", rows, 1, 4096)
    features = whole("features", features, 1, 200)
    noise = nonnegative("noise", noise)
    heterogeneity = nonnegative("heterogeneity", heterogeneity)
    condition = in_range("condition", condition, 1.0, 1e6)
    check_memory(8 * workers * rows * (features + 1) * 2, f"a problem with {workers} x {rows} rows")
    rng = as_rng(rng)
    scales = np.geomspace(1.0, 1.0 / math.sqrt(condition), features)
    X = rng.standard_normal((workers, rows, features)) * scales
    theta_true = rng.standard_normal(features)
    shift = heterogeneity * rng.standard_normal((workers, features))
    y = np.einsum("wrf,wf->wr", X, theta_true + shift) + noise * rng.standard_normal((workers, rows))
    flat_X, flat_y = X.reshape(-1, features), y.reshape(-1)
    n = flat_y.size
    A = flat_X.T @ flat_X / n
    c = flat_X.T @ flat_y / n
    theta_star = np.linalg.lstsq(flat_X, flat_y, rcond=None)[0]
    loss_star = 0.5 * float(np.mean((flat_X @ theta_star - flat_y) ** 2))
    return LeastSquares(
        X=X,
        y=y,
        theta_star=theta_star,
        smoothness=float(np.linalg.eigvalsh(A)[-1]),
        _A=A,
        _c=c,
        _loss_star=loss_star,
    )


@dataclass(frozen=True)
class SGDRun:
    """One training run against the wall clock.

    Attributes
    ----------
    mode : str
        ``"sync"``, ``"drop"`` or ``"async"``.
    times : numpy.ndarray
        Wall-clock seconds at 0 and after each update.
    losses : numpy.ndarray
        Excess loss at those times.
    gradients_used, gradients_dropped : int
        Gradients applied, and computed but thrown away.
    staleness : numpy.ndarray
        For each update, how many updates happened between reading the
        parameters and applying the gradient (0 for sync and drop).
    dropped_by_worker : numpy.ndarray
        Gradients dropped per worker (drop runs).

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> p = make_problem(workers=4, rows=32, features=5, rng=0)
    >>> r = run_sgd(p, StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), "sync", wall_time=10.0, rng=1)
    >>> r.updates, r.gradients_used, round(r.final_loss, 3)   # 4 gradients per update
    (7, 28, 0.043)
    """

    mode: str
    times: np.ndarray
    losses: np.ndarray
    gradients_used: int
    gradients_dropped: int
    staleness: np.ndarray
    dropped_by_worker: np.ndarray

    @property
    def updates(self):
        """Parameter updates applied."""
        return int(self.times.size - 1)

    @property
    def final_loss(self):
        return float(self.losses[-1])

    def loss_at(self, t):
        """Excess loss at wall-clock times t: the last value at or before each t."""
        t = np.asarray(t, dtype=float)
        i = np.searchsorted(self.times, t, side="right") - 1
        return self.losses[np.clip(i, 0, None)]


def _rows(rng, rows, batch):
    """A minibatch of row indices (with replacement), or every row when batch == rows."""
    return slice(None) if batch == rows else rng.integers(0, rows, batch)


def _draw_times(dist, size, rng):
    u = rng.random(size)
    return quantile(dist, u.ravel(), (1.0 - u).ravel()).reshape(size)


def run_sgd(problem, dist, mode="sync", *, backups=0, wall_time=None, lr=None, batch=8, sync=0.0,
            slow_factor=1.0, rng=0):
    """Train ``problem`` with its workers until ``wall_time`` seconds have passed.

    Parameters
    ----------
    problem : LeastSquares
        From :func:`make_problem`; one worker per shard.
    dist : frozen scipy.stats distribution or StepTime
        One worker's compute time per gradient, seconds (> 0 in practice).
    mode : {"sync", "drop", "async"}
    backups : int
        For ``"drop"``: gradients dropped per step (b), 0 .. workers - 1.
    wall_time : float, optional
        Seconds to train; default 60 mean step times.
    lr : float, optional
        Learning rate of a synchronous step; default ``0.5 / L``. Async
        applies each gradient with ``lr / workers``.
    batch : int
        Rows per gradient, 1 .. rows per shard, drawn with replacement; the
        whole shard (an exact shard gradient) when equal to the shard size.
    sync : float
        Seconds per step for the collective (sync, drop) or per update for
        the push and pull (async), >= 0.
    slow_factor : float
        Worker 0's compute times are multiplied by this, >= 1 (a persistent
        straggler).

    Returns
    -------
    SGDRun
        The excess loss at each update's wall-clock time, the gradients used
        and dropped, and the staleness of each update.

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> p = make_problem(rng=0)
    >>> t = StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0)
    >>> runs = [run_sgd(p, t, m, backups=2, wall_time=60.0, rng=1) for m in ("sync", "drop", "async")]
    >>> [r.updates for r in runs]  # in the same 60 s
    [36, 52, 911]
    >>> [round(r.final_loss, 3) for r in runs]
    [0.006, 0.001, 0.002]
    >>> round(float(runs[2].staleness.mean()), 1)  # async: updates between read and write
    14.9
    """
    require(isinstance(problem, LeastSquares), "problem", problem, "a LeastSquares from make_problem")
    dist = check_dist(dist)
    require(mode in MODES, "mode", mode, "'sync', 'drop' or 'async'")
    W = problem.workers
    rows = problem.X.shape[1]
    backups = whole("backups", backups, 0, W - 1)
    if mode != "drop":
        backups = 0
    mean_t = float(dist.mean())
    wall_time = 60.0 * max(mean_t, 1e-9) if wall_time is None else positive("wall_time", wall_time)
    lr = 0.5 / problem.smoothness if lr is None else positive("lr", lr)
    batch = whole("batch", batch, 1, rows)
    sync = nonnegative("sync", sync)
    slow_factor = in_range("slow_factor", slow_factor, 1.0, 100.0)
    rng = as_rng(rng)
    per_step = max(mean_t, 1e-12) + sync
    expected_updates = wall_time / per_step * (W if mode == "async" else 1)
    require(
        expected_updates <= MAX_UPDATES,
        "wall_time",
        wall_time,
        f"short enough for at most {MAX_UPDATES} updates (about {expected_updates:.0f} asked)",
    )
    scale = np.ones(W)
    scale[0] = slow_factor

    log = _Log(problem, W)
    setting = (problem, dist, scale, wall_time, lr, batch, rows, sync, rng)
    if mode in ("sync", "drop"):
        _sync_steps(log, *setting, backups)
    else:
        _async_updates(log, *setting)
    times, losses, stale, used, dropped, dropped_by = log.times, log.losses, log.stale, log.used, log.dropped, log.by
    return SGDRun(
        mode=mode,
        times=np.array(times),
        losses=np.array(losses),
        gradients_used=used,
        gradients_dropped=dropped,
        staleness=np.array(stale, dtype=np.int64),
        dropped_by_worker=dropped_by,
    )


class _Log:
    """What a run records: the weights, each update's time, loss and staleness, and the gradient counts."""

    def __init__(self, problem, W):
        self.problem, self.theta = problem, np.zeros(problem.X.shape[2])
        self.times, self.losses, self.stale = [0.0], [problem.excess_loss(self.theta)], []
        self.used = self.dropped = 0
        self.by = np.zeros(W, dtype=np.int64)

    def update(self, theta, now, staleness, used):
        self.theta = theta
        self.times.append(now)
        self.losses.append(self.problem.excess_loss(theta))
        self.stale.append(staleness)
        self.used += used


def _sync_steps(log, problem, dist, scale, wall_time, lr, batch, rows, sync, rng, backups):
    """Synchronous steps (with ``backups`` gradients dropped each step) until ``wall_time``."""
    W = problem.workers
    keep, now = W - backups, 0.0
    while now < wall_time:
        chunk = _draw_times(dist, (64, W), rng) * scale
        for t_workers in chunk:
            order = np.argsort(t_workers, kind="stable")
            now += float(t_workers[order[keep - 1]]) + sync
            if now > wall_time:
                break
            g = np.zeros_like(log.theta)
            for w in order[:keep].tolist():
                g += problem.gradient(log.theta, w, _rows(rng, rows, batch))
            log.update(log.theta - lr * g / keep, now, 0, keep)
            log.dropped += backups
            log.by[order[keep:]] += 1


def _async_updates(log, problem, dist, scale, wall_time, lr, batch, rows, sync, rng):
    """Asynchronous updates: each worker pushes a gradient of the weights it last read, with ``lr / workers``."""
    W = problem.workers
    lr_w, version = lr / W, 0
    read_version = np.zeros(W, dtype=np.int64)
    snapshot = np.zeros((W, log.theta.size))
    first = _draw_times(dist, (W,), rng) * scale + sync
    heap = [(float(first[w]), w) for w in range(W)]
    heapq.heapify(heap)
    pool = iter(())
    while heap[0][0] <= wall_time:
        now, w = heapq.heappop(heap)
        g = problem.gradient(snapshot[w], w, _rows(rng, rows, batch))
        log.update(log.theta - lr_w * g, now, version - int(read_version[w]), 1)
        version += 1
        snapshot[w] = log.theta
        read_version[w] = version
        nxt = next(pool, None)
        if nxt is None:
            pool = iter(_draw_times(dist, (256,), rng).tolist())
            nxt = next(pool)
        heapq.heappush(heap, (now + nxt * scale[w] + sync, w))


@dataclass(frozen=True)
class SGDComparison:
    """Sync, drop and async runs of one problem, at equal wall-clock time.

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> c = compare_sgd(StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), make_problem(rng=0), 2, 10.0)
    >>> list(c.runs), c.wall_time
    (['sync', 'drop', 'async'], 10.0)
    >>> c.summary()[0]["updates"], c.summary()[0]["gradients_used"]   # 16 workers, 5 sync steps in 10 s
    (5, 80)
    """

    runs: dict
    wall_time: float

    def records(self, points=120):
        """Excess loss of every run on a common time grid, for charts."""
        points = whole("points", points, 2, 2000)
        grid = np.linspace(0.0, self.wall_time, points)
        out = []
        for name, run in self.runs.items():
            for t, loss in zip(grid.tolist(), run.loss_at(grid).tolist()):
                out.append({"time": t, "loss": loss, "mode": name})
        return out

    def summary(self):
        """One dict per run: updates, gradients used and dropped, staleness, final loss."""
        return [
            {
                "mode": name,
                "updates": run.updates,
                "gradients_used": run.gradients_used,
                "gradients_dropped": run.gradients_dropped,
                "mean_staleness": float(run.staleness.mean()) if run.staleness.size else 0.0,
                "final_loss": run.final_loss,
            }
            for name, run in self.runs.items()
        ]


def compare_sgd(dist, problem, backups=2, wall_time=None, *, lr=None, batch=8, sync=0.0, slow_factor=1.0, rng=0):
    """Sync, drop and async SGD on the same problem, for the same wall-clock time.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or StepTime
        One worker's compute time per gradient, seconds.
    problem : LeastSquares
        From :func:`make_problem`.
    backups, wall_time, lr, batch, sync, slow_factor
        As in :func:`run_sgd` (``backups`` applies to the drop run).
    rng : numpy.random.Generator, int or None
        Each run gets its own stream spawned from it.

    Returns
    -------
    SGDComparison
        The three runs, and :meth:`~SGDComparison.summary` rows to compare them.

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> c = compare_sgd(StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), make_problem(rng=0), 2, 60.0)
    >>> [(s["mode"], s["updates"], s["gradients_dropped"]) for s in c.summary()]
    [('sync', 36, 0), ('drop', 52, 104), ('async', 897, 0)]
    """
    require(isinstance(problem, LeastSquares), "problem", problem, "a LeastSquares from make_problem")
    dist = check_dist(dist)
    wall = 60.0 * float(dist.mean()) if wall_time is None else positive("wall_time", wall_time)
    seeds = np.random.SeedSequence(int(as_rng(rng).integers(2**63))).spawn(3)
    runs = {
        mode: run_sgd(problem, dist, mode, backups=backups, wall_time=wall, lr=lr, batch=batch, sync=sync,
                      slow_factor=slow_factor, rng=np.random.default_rng(seed))
        for mode, seed in zip(MODES, seeds)
    }
    return SGDComparison(runs=runs, wall_time=wall)
