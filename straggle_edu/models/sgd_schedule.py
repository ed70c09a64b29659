"""The SGD experiment's plan: who gets which batch, who is slow when, and
which gradients count (the k-of-n rule). Plain arrays, pure functions of seeds.

The real experiment (:mod:`straggle_edu.instruments.sgd`) only *executes*
this plan with real processes; so a run is reproducible given its seeds,
and a test can assert on the plan instead of on measured timing.

- :func:`batch_plan`: sample indices, shape (steps, processes, batch), from
  the data ``seed``. Rank r draws from its own stream, so a ``backup`` run's
  first N ranks get the same batches as ``sync``'s N. With ``slow="data"``
  the batches are length-bucketed: ``m = round(long_share * processes)``
  of each step's batches come from the long bucket.
- :func:`slowness`: each process's slowdown factor and stall (in base
  steps), shape (steps, processes), from the ``timing_seed`` only.
- :func:`durations`: a process's gradient time, seconds: proportional to
  its batch's total length, times its factor, plus its stall.
- :func:`counted_mask`: the first k of n by planned duration, ties broken
  by rank (the k-of-n rule).
- :func:`sgd_update`, :func:`sync_reference`: the update every scheme
  applies, and sync's trajectory replayed without processes.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_rng, check_memory, in_range, probability, require, whole
from .softmax import gradient_sum, loss

__all__ = [
    "SCHEMES",
    "SLOWS",
    "processes_for",
    "counted_per_step",
    "batch_plan",
    "slowness",
    "durations",
    "counted_mask",
    "step_times",
    "discarded_share",
    "balanced_split",
    "balanced_cuts",
    "sgd_update",
    "sync_reference",
]

SCHEMES = ("sync", "backup", "drop", "local", "balanced")
SLOWS = ("none", "transient", "persistent", "data")
SLOW_RANK = 0  # the persistently slow process


def processes_for(scheme, workers, backups=0):
    """How many processes a scheme runs: N + b for ``backup``, else N.

    Examples
    --------
    >>> processes_for("backup", 8, 2), processes_for("drop", 8, 2)
    (10, 8)
    """
    require(scheme in SCHEMES, "scheme", scheme, f"one of {', '.join(SCHEMES)}")
    return workers + backups if scheme == "backup" else workers


def counted_per_step(scheme, workers, backups=0):
    """How many gradients count in a step: N - b for ``drop``, else N.

    Examples
    --------
    >>> [(scheme, counted_per_step(scheme, 8, 2)) for scheme in SCHEMES]
    [('sync', 8), ('backup', 8), ('drop', 6), ('local', 8), ('balanced', 8)]
    """
    require(scheme in SCHEMES, "scheme", scheme, f"one of {', '.join(SCHEMES)}")
    return workers - backups if scheme == "drop" else workers


def _rank_streams(seed, processes, salt):
    return [np.random.default_rng(s) for s in np.random.SeedSequence([int(seed), salt]).spawn(processes)]


def batch_plan(data, processes, steps, batch, slow="transient", seed=0):
    """Sample indices of every process's batch, shape (steps, processes, batch).

    Examples
    --------
    >>> from straggle_edu.models.softmax import make_length_data
    >>> d = make_length_data(0, n_train=512)
    >>> idx = batch_plan(d, 4, 3, 5, seed=1)
    >>> idx.shape, bool((idx[:, :2] == batch_plan(d, 2, 3, 5, seed=1)).all())
    ((3, 4, 5), True)
    >>> d.long[batch_plan(d, 5, 2, 4, slow="data")].all(axis=2).sum(axis=1).tolist()
    [1, 1]
    """
    processes = whole("processes", processes, 1, 1024)
    steps = whole("steps", steps, 1, 10**6)
    batch = whole("batch", batch, 1, 4096)
    require(slow in SLOWS, "slow", slow, f"one of {', '.join(SLOWS)}")
    check_memory(steps * processes * batch * 8, f"a batch plan of {steps} x {processes} x {batch}")
    if slow != "data":
        n = len(data.y)
        return np.stack([g.integers(0, n, (steps, batch)) for g in _rank_streams(seed, processes, 1)], axis=1)
    rng = as_rng(np.random.SeedSequence([int(seed), 2]))
    long_pool, short_pool = np.flatnonzero(data.long), np.flatnonzero(~data.long)
    m = min(processes, max(1, int(round(data.long.mean() * processes))))
    idx = short_pool[rng.integers(0, len(short_pool), (steps, processes, batch))]
    for s in range(steps):
        slots = rng.choice(processes, m, replace=False)
        idx[s, slots] = long_pool[rng.integers(0, len(long_pool), (m, batch))]
    return idx


def slowness(slow, steps, processes, *, p=0.1, stall=4.0, factor=3.0, timing_seed=0):
    """Each process's slowdown factor and stall (in base steps) per step.

    ``transient``: a stall of ``stall`` base steps with probability ``p``,
    independently per process and step (rank r's own stream of
    ``timing_seed``); ``persistent``: process 0 is ``factor`` times slower;
    ``none`` and ``data``: nothing (data slowness comes from lengths).

    Returns
    -------
    factor, stall : numpy.ndarray, shape (steps, processes)

    Examples
    --------
    >>> f, s = slowness("persistent", 2, 3, factor=3.0)
    >>> f.tolist(), s.tolist()
    ([[3.0, 1.0, 1.0], [3.0, 1.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> f, s = slowness("transient", 1000, 4, p=0.1, stall=4.0)
    >>> round(float((s > 0).mean()), 2), float(s.max())
    (0.1, 4.0)
    """
    require(slow in SLOWS, "slow", slow, f"one of {', '.join(SLOWS)}")
    p = probability("p", p)
    stall = in_range("stall", stall, 0.0, 1000.0)
    factor = in_range("factor", factor, 1.0, 100.0)
    fac = np.ones((steps, processes))
    st = np.zeros((steps, processes))
    if slow == "transient":
        hit = np.stack([g.random(steps) < p for g in _rank_streams(timing_seed, processes, 3)], axis=1)
        st[hit] = stall
    elif slow == "persistent":
        fac[:, SLOW_RANK] = factor
    return fac, st


def durations(lengths, mean_batch_length, factor, stall, base_step):
    """Planned gradient times, seconds: ``base_step * (length / mean * factor + stall)``.

    ``lengths`` is each batch's total length; a batch of average total
    length takes one ``base_step``.

    Examples
    --------
    >>> durations(np.array([[4.0, 8.0]]), 4.0, np.array([[1.0, 1.0]]), np.array([[0.0, 1.0]]), 0.02).tolist()
    [[0.02, 0.06]]
    """
    return base_step * (np.asarray(lengths, float) / mean_batch_length * factor + stall)


def counted_mask(durations, k):
    """Which gradients count: the first k of each row by duration, ties by rank.

    Examples
    --------
    >>> counted_mask(np.array([[3.0, 1.0, 2.0, 1.0]]), 2).astype(int).tolist()
    [[0, 1, 0, 1]]
    >>> counted_mask(np.array([[1.0, 1.0, 1.0]]), 2).astype(int).tolist()
    [[1, 1, 0]]
    """
    d = np.atleast_2d(np.asarray(durations, float))
    k = whole("k", k, 1, d.shape[1])
    order = np.argsort(d, axis=1, kind="stable")
    mask = np.zeros(d.shape, dtype=bool)
    np.put_along_axis(mask, order[:, :k], True, axis=1)
    return mask


def step_times(durations, k):
    """Each step's planned length: the k-th smallest duration (seconds).

    k = n gives the maximum: synchronous SGD waits for the slowest.

    Examples
    --------
    >>> step_times(np.array([[3.0, 1.0, 2.0]]), 2).tolist(), step_times(np.array([[3.0, 1.0, 2.0]]), 3).tolist()
    ([2.0], [3.0])
    """
    d = np.atleast_2d(np.asarray(durations, float))
    k = whole("k", k, 1, d.shape[1])
    return np.sort(d, axis=1)[:, k - 1]


def discarded_share(durations, k):
    """Share of the gradient work thrown away when late work is cancelled at
    the step's end: ``sum over the late of t_k / total work``.

    With equal durations it is b / (N + b) for k = N of N + b.

    Examples
    --------
    >>> discarded_share(np.ones((5, 10)), 8)
    0.2
    """
    d = np.atleast_2d(np.asarray(durations, float))
    t = step_times(d, k)[:, None]
    done = np.minimum(d, t)
    late = ~counted_mask(d, k)
    return float(done[late].sum() / done.sum())


def balanced_split(total, speeds):
    """Split ``total`` samples in proportion to ``speeds`` (largest
    remainder, at least one each).

    Examples
    --------
    >>> balanced_split(32, [1.0, 1.0, 1.0, 1 / 3]).tolist()
    [10, 9, 9, 4]
    """
    speeds = np.asarray(speeds, float)
    n = len(speeds)
    total = whole("total", total, n)
    require(np.isfinite(speeds).all() and (speeds > 0).all(), "speeds", speeds, "positive numbers")
    share = (total - n) * speeds / speeds.sum()
    sizes = 1 + np.floor(share).astype(int)
    rest = total - sizes.sum()
    sizes[np.argsort(-(share - np.floor(share)), kind="stable")[:rest]] += 1
    return sizes


def balanced_cuts(lengths, speeds):
    """Split a batch (samples in order, with these lengths) into contiguous
    chunks whose total lengths are in proportion to ``speeds``; at least one
    sample each. Returns the chunk sizes.

    Examples
    --------
    >>> balanced_cuts([1.0] * 8 + [4.0] * 2, [1.0, 1.0]).tolist()
    [8, 2]
    >>> balanced_cuts([1.0] * 12, [1.0, 1.0, 1 / 3]).tolist()
    [5, 5, 2]
    """
    lengths = np.asarray(lengths, float)
    speeds = np.asarray(speeds, float)
    n = len(speeds)
    require(len(lengths) >= n, "lengths", lengths, f"at least {n} samples, one per process")
    require(np.isfinite(speeds).all() and (speeds > 0).all(), "speeds", speeds, "positive numbers")
    cum = np.cumsum(lengths)
    goals = np.cumsum(speeds)[:-1] / speeds.sum() * cum[-1]
    ends = np.rint(np.interp(goals, cum, np.arange(1, len(cum) + 1))).astype(int)  # the nearest cut
    ends = np.clip(ends, np.arange(1, n), len(lengths) - np.arange(n - 1, 0, -1))
    ends = np.maximum.accumulate(np.maximum(ends, np.arange(1, n)))
    bounds = np.concatenate([[0], ends, [len(lengths)]])
    return np.diff(bounds)


def sgd_update(W, grad_sums, samples, lr):
    """One update: ``W - lr / samples * (g_0 + g_1 + ...)``, summed in the given order.

    Examples
    --------
    >>> sgd_update(np.zeros(2), [np.ones(2), np.ones(2)], 4, 0.5).tolist()
    [-0.25, -0.25]
    """
    total = grad_sums[0].copy()
    for g in grad_sums[1:]:
        total += g
    return W - (lr / samples) * total


def sync_reference(data, W0, idx, lr):
    """Synchronous SGD replayed without processes: the test loss after every step.

    Parameters
    ----------
    data : LengthData
    W0 : numpy.ndarray
        Initial weights.
    idx : numpy.ndarray
        The batch plan, (steps, workers, batch).
    lr : float

    Returns
    -------
    W, losses : the final weights and the test loss after each step.

    Examples
    --------
    >>> from straggle_edu.models.softmax import make_length_data, init_weights
    >>> d = make_length_data(0, n_train=512)
    >>> W, losses = sync_reference(d, init_weights(d), batch_plan(d, 4, 30, 8), 0.5)
    >>> bool(losses[-1] < losses[0] < 1.7)
    True
    """
    W = np.array(W0, dtype=float)
    losses = np.empty(len(idx))
    for s, step in enumerate(idx):
        grads = [gradient_sum(W, data.X[b], data.y[b]) for b in step]
        W = sgd_update(W, grads, step.size, lr)
        losses[s] = loss(W, data.X_test, data.y_test)
    return W, losses
