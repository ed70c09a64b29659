"""Balance the work first: pack sequences across workers, split layers across stages.

A synchronous step waits for the most loaded worker, so the first mitigation
is to stop handing out unequal work. Two problems, two classic algorithms.

Sequences across data-parallel workers (multiway number partitioning)
----------------------------------------------------------------------
Given the cost of every sequence in a global batch (tokens plus attention,
in seconds) and ``workers`` workers, assign each sequence to one worker so
that the largest load, the *makespan*, is as small as possible. That problem
is NP-hard; these heuristics are fast and close:

- :func:`split_in_order`: the baseline a data loader gives you: equal
  numbers of sequences per worker, in arrival order.
- :func:`greedy_lpt`: Graham's longest-processing-time rule: sort the
  sequences longest first and give each to the least loaded worker. Its
  makespan is at most ``4/3 - 1/(3 m)`` times the optimum (Graham, 1969):
  :func:`lpt_bound`.
- :func:`karmarkar_karp`: the largest differencing method (Karmarkar and
  Karp, 1982), multi-way form: repeatedly merge the two partial partitions
  with the largest spread, biggest part with smallest part. Usually much
  closer to optimal than LPT when there are many small items.
- :func:`best_packing`: exact, by branch and bound, for small inputs (tests,
  and to show how close the heuristics come).
- :func:`pack_sequences`: any of the above, by name.

Each returns a :class:`Packing` with the assignment, the per-worker loads and
the makespan.

Layers across pipeline stages (linear partition)
------------------------------------------------
A pipeline stage must hold *contiguous* layers. :func:`partition_layers`
splits layer costs into ``stages`` contiguous, non-empty groups minimising
the largest stage cost, optionally with extra work on the first stage (the
embedding) and the last stage (the loss and output head): the linear
partition problem, solved exactly by dynamic programming. The textbook
recurrence is O(n² P); here the split point of each cell is found by binary
search, because the best cost of the first stages rises with the number of
layers while the cost of the last stage falls: O(P n log n), vectorised.
:func:`split_layers_evenly` is the baseline: equal numbers of layers.

The smallest bottleneck is not always the shortest step: a 1F1B step also
pays the pipeline's fill and drain, which depend on every stage, not just
the slowest. :func:`partition_for_step` optimises the step itself: it times
every contiguous split through the pipeline simulator
(:func:`~.pipeline.pipeline_step_times`) and keeps the fastest, exactly, for
small layer counts.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass

import numpy as np

from .._validate import check_memory, nonnegative, require, whole
from .pipeline import pipeline_step_times

__all__ = [
    "Packing",
    "StagePartition",
    "best_packing",
    "greedy_lpt",
    "karmarkar_karp",
    "lpt_bound",
    "pack_sequences",
    "packing_lower_bound",
    "partition_for_step",
    "partition_layers",
    "split_in_order",
    "split_layers_evenly",
]

PACKING_METHODS = ("in_order", "lpt", "karmarkar_karp", "best")
BEST_PACKING_MAX_ITEMS = 24
#: The most contiguous splits :func:`partition_for_step` times (C(n - 1, P - 1)).
STEP_SEARCH_MAX_SPLITS = 200_000


# ---------------------------------------------------------------- packing ---


@dataclass(frozen=True)
class Packing:
    """Items (sequences) assigned to workers.

    Attributes
    ----------
    costs : numpy.ndarray
        The cost of each item, in seconds (or tokens), as given.
    assignment : numpy.ndarray of int
        ``assignment[i]`` is the worker that gets item i.
    loads : numpy.ndarray
        Total cost per worker.
    method : str
        The algorithm that produced it.

    Examples
    --------
    >>> p = greedy_lpt([8, 7, 1, 1], 2)
    >>> p.loads.tolist(), p.makespan, p.mean_load, round(p.imbalance, 3)
    ([9.0, 8.0], 9.0, 8.5, 1.059)
    >>> p.items(1).tolist()   # worker 1 got the 7 and a 1
    [1, 2]
    """

    costs: np.ndarray
    assignment: np.ndarray
    loads: np.ndarray
    method: str

    @property
    def workers(self):
        """The number of workers."""
        return int(self.loads.size)

    @property
    def makespan(self):
        """The largest load: how long the synchronous step waits."""
        return float(self.loads.max())

    @property
    def mean_load(self):
        """The average load: what a perfectly balanced step would take."""
        return float(self.loads.mean())

    @property
    def imbalance(self):
        """``makespan / mean_load`` (1 is perfect balance)."""
        mean = self.mean_load
        return float(self.makespan / mean) if mean > 0 else 1.0

    def items(self, worker):
        """Indices of the items assigned to ``worker``."""
        worker = whole("worker", worker, low=0, high=self.workers - 1)
        return np.flatnonzero(self.assignment == worker)


def _costs_and_workers(costs, workers, name="costs"):
    costs = nonnegative(name, costs)
    costs = np.atleast_1d(np.asarray(costs, dtype=float))
    require(costs.ndim == 1 and costs.size >= 1, name, costs, "a non-empty 1-D array of costs >= 0")
    workers = whole("workers", workers)
    return costs, workers


def _packing(costs, assignment, workers, method):
    loads = np.bincount(assignment, weights=costs, minlength=workers).astype(float)
    return Packing(costs=costs, assignment=assignment.astype(np.int64), loads=loads, method=method)


def packing_lower_bound(costs, workers):
    """A lower bound on the optimal makespan: ``max(max cost, sum / workers)``.

    Examples
    --------
    >>> packing_lower_bound([3, 3, 2, 2, 2], 2)
    6.0
    >>> packing_lower_bound([10, 1, 1], 2)
    10.0
    """
    costs, workers = _costs_and_workers(costs, workers)
    return float(max(costs.max(), costs.sum() / workers))


def lpt_bound(workers):
    """Graham's guarantee for LPT: makespan <= (4/3 - 1/(3 m)) x optimum.

    Examples
    --------
    >>> lpt_bound(1), round(lpt_bound(2), 4), round(lpt_bound(8), 4)
    (1.0, 1.1667, 1.2917)
    """
    workers = whole("workers", workers)
    return 4.0 / 3.0 - 1.0 / (3.0 * workers)


def split_in_order(costs, workers):
    """The data loader's split: equal numbers of items per worker, in order.

    Item i goes to worker ``i * workers // n``, so the first worker gets the
    first ``n / workers`` items, and so on; counts differ by at most one.
    This is the "before" of sequence packing.

    Parameters
    ----------
    costs : array_like
        Cost of each item (seconds or tokens), >= 0.
    workers : int
        Number of workers, >= 1.

    Returns
    -------
    Packing

    Examples
    --------
    >>> p = split_in_order([8, 7, 1, 1], 2)
    >>> p.loads.tolist(), p.makespan
    ([15.0, 2.0], 15.0)
    """
    costs, workers = _costs_and_workers(costs, workers)
    n = costs.size
    assignment = (np.arange(n) * workers) // n
    return _packing(costs, assignment, workers, "in_order")


def greedy_lpt(costs, workers):
    """Longest processing time first: each item, largest first, goes to the
    least loaded worker (ties: the lowest-numbered worker).

    Graham (1969) proved ``makespan <= (4/3 - 1/(3 m)) * optimum``
    (:func:`lpt_bound`). O(n log n).

    Parameters and return value as in :func:`split_in_order`.

    Examples
    --------
    Graham's tight example for two workers: LPT gets 7, the optimum is 6.

    >>> greedy_lpt([3, 3, 2, 2, 2], 2).makespan
    7.0
    >>> greedy_lpt([8, 7, 1, 1], 2).loads.tolist()
    [9.0, 8.0]
    """
    costs, workers = _costs_and_workers(costs, workers)
    order = np.argsort(-costs, kind="stable")
    assignment = np.empty(costs.size, dtype=np.int64)
    heap = [(0.0, w) for w in range(workers)]
    for i in order.tolist():
        load, w = heap[0]
        assignment[i] = w
        heapq.heapreplace(heap, (load + float(costs[i]), w))
    return _packing(costs, assignment, workers, "lpt")


def karmarkar_karp(costs, workers):
    """Largest differencing method (Karmarkar-Karp), multi-way.

    Start with one partial partition per item: the item alone in one of the
    ``workers`` parts, the other parts empty. Repeatedly take the two partial
    partitions whose spread (largest part minus smallest) is largest, and
    merge them, the largest part of one with the smallest part of the other,
    and so on. The last partition left is the packing. O(n log n + n m log m).

    Parameters and return value as in :func:`split_in_order`.

    Examples
    --------
    Two workers, costs 8, 7, 6, 5, 4: LPT gets 17, differencing 16 (the
    optimum is 15: 8 + 7 against 6 + 5 + 4).

    >>> greedy_lpt([8, 7, 6, 5, 4], 2).makespan, karmarkar_karp([8, 7, 6, 5, 4], 2).makespan
    (17.0, 16.0)
    >>> karmarkar_karp([8, 7, 6, 5, 4], 3).loads.tolist()
    [11.0, 11.0, 8.0]
    """
    costs, workers = _costs_and_workers(costs, workers)
    n, m = costs.size, workers
    check_memory(8 * n * m + 64 * n, f"Karmarkar-Karp with {n} items and {m} workers")
    # A partial partition: parts sorted by sum, largest first, each part
    # a node id (-1 = empty). Node ids < n are items; node n + j is the
    # union of left[j] and right[j]. Each merge of two non-empty parts
    # removes one root, so there are at most n - 1 of them.
    left = np.empty(max(n - 1, 1), dtype=np.int64)
    right = np.empty(max(n - 1, 1), dtype=np.int64)
    made = 0
    heap = []
    for i in range(n):
        sums = np.zeros(m)
        sums[0] = costs[i]
        nodes = np.full(m, -1, dtype=np.int64)
        nodes[0] = i
        heap.append((-float(costs[i]), i, sums, nodes))
    heapq.heapify(heap)
    counter = n
    while len(heap) > 1:
        _, _, sa, na = heapq.heappop(heap)
        _, _, sb, nb = heapq.heappop(heap)
        # Largest of a with smallest of b: sa is descending, so reverse sb.
        sums = sa + sb[::-1]
        x, y = na, nb[::-1]
        both = (x >= 0) & (y >= 0)
        nodes = np.maximum(x, y)
        k = int(both.sum())
        if k:
            left[made:made + k] = x[both]
            right[made:made + k] = y[both]
            nodes[both] = n + made + np.arange(k)
            made += k
        order = np.argsort(-sums, kind="stable")
        sums, nodes = sums[order], nodes[order]
        heapq.heappush(heap, (-(float(sums[0] - sums[-1])), counter, sums, nodes))
        counter += 1
    _, _, sums, nodes = heap[0]
    # Label every node with its part, from the roots down (children have
    # smaller ids than their parents, so one pass from the top suffices).
    label = np.full(n + made, -1, dtype=np.int64)
    roots = nodes >= 0
    label[nodes[roots]] = np.flatnonzero(roots)
    for j in range(made - 1, -1, -1):
        label[left[j]] = label[right[j]] = label[n + j]
    assignment = label[:n]
    return _packing(costs, assignment, workers, "karmarkar_karp")


def best_packing(costs, workers):
    """The optimal packing, by branch and bound (small inputs only).

    Items are placed largest first; a branch is cut when it cannot beat the
    best makespan found so far, and workers with equal loads are tried once.
    Starts from the better of LPT and Karmarkar-Karp and stops as soon as it
    meets :func:`packing_lower_bound`.

    Parameters and return value as in :func:`split_in_order`, with at most
    24 items.

    Examples
    --------
    >>> best_packing([3, 3, 2, 2, 2], 2).makespan
    6.0
    >>> best_packing([5, 5, 4, 3, 3], 3).makespan
    8.0
    """
    costs, workers = _costs_and_workers(costs, workers)
    n = costs.size
    require(
        n <= BEST_PACKING_MAX_ITEMS,
        "costs",
        costs,
        f"at most {BEST_PACKING_MAX_ITEMS} items for the exact search (use greedy_lpt or karmarkar_karp for more)",
    )
    start = min(greedy_lpt(costs, workers), karmarkar_karp(costs, workers), key=lambda p: p.makespan)
    lower = packing_lower_bound(costs, workers)
    best = [start.makespan, start.assignment.copy()]
    if best[0] <= lower:
        return _packing(costs, best[1], workers, "best")
    order = np.argsort(-costs, kind="stable")
    items = costs[order].tolist()
    loads = [0.0] * workers
    chosen = [0] * n
    eps = 1e-12 * max(1.0, lower)

    def place(k):
        if k == n:
            span = max(loads)
            if span < best[0] - eps:
                best[0] = span
                assign = np.empty(n, dtype=np.int64)
                assign[order] = chosen
                best[1] = assign
            return best[0] <= lower + eps
        c = items[k]
        tried = set()
        for w in range(workers):
            if loads[w] in tried or loads[w] + c >= best[0] - eps:
                continue
            tried.add(loads[w])
            loads[w] += c
            chosen[k] = w
            done = place(k + 1)
            loads[w] -= c
            if done:
                return True
        return False

    place(0)
    return _packing(costs, best[1], workers, "best")


def pack_sequences(costs, workers, method="karmarkar_karp"):
    """Assign sequences to workers with the named method.

    Parameters
    ----------
    costs : array_like
        Cost of each sequence (seconds or tokens), >= 0.
    workers : int
        Number of data-parallel workers, >= 1.
    method : {"in_order", "lpt", "karmarkar_karp", "best"}
        The data loader's split, greedy LPT, largest differencing, or exact.

    Returns
    -------
    Packing

    Examples
    --------
    >>> costs = [9, 1, 1, 1, 4, 4, 4, 4]
    >>> [pack_sequences(costs, 2, m).makespan for m in ("in_order", "lpt", "karmarkar_karp")]
    [16.0, 14.0, 14.0]
    >>> pack_sequences(costs, 2, "best").makespan
    14.0
    """
    require(method in PACKING_METHODS, "method", method, f"one of {', '.join(map(repr, PACKING_METHODS))}")
    fn = {
        "in_order": split_in_order,
        "lpt": greedy_lpt,
        "karmarkar_karp": karmarkar_karp,
        "best": best_packing,
    }[method]
    return fn(costs, workers)


# -------------------------------------------------------------- partition ---


@dataclass(frozen=True)
class StagePartition:
    """Contiguous layers per pipeline stage.

    Attributes
    ----------
    costs : numpy.ndarray
        The per-layer costs, in seconds per microbatch (forward + backward).
    bounds : numpy.ndarray of int
        Stage s holds layers ``bounds[s]`` to ``bounds[s + 1] - 1``;
        ``bounds[0] = 0`` and ``bounds[-1] = len(costs)``.
    stage_costs : numpy.ndarray
        Cost of each stage, extras included.
    method : str

    Examples
    --------
    >>> p = partition_layers([1] * 8, 4, last_stage_extra=1.5)
    >>> p.bounds.tolist(), p.bottleneck, p.step_time(4)   # 9.5 + (4 - 1) * 3
    ([0, 2, 4, 7, 8], 3.0, 18.5)
    """

    costs: np.ndarray
    bounds: np.ndarray
    stage_costs: np.ndarray
    method: str

    @property
    def stages(self):
        """The number of stages P."""
        return int(self.stage_costs.size)

    @property
    def layers_per_stage(self):
        """Number of layers in each stage."""
        return np.diff(self.bounds)

    @property
    def bottleneck(self):
        """The largest stage cost: the pipeline's beat."""
        return float(self.stage_costs.max())

    def step_time(self, microbatches):
        """Step time of M microbatches through the stages, ignoring communication.

        For identical microbatches flowing through stages in order (a
        permutation flow shop), the makespan is
        ``sum(stage_costs) + (M - 1) * bottleneck``: the first microbatch
        crosses every stage, and each later one waits for the slowest.
        With equal stages c this is ``(M + P - 1) c``, the 1F1B formula.

        Examples
        --------
        >>> split_layers_evenly([1, 1, 1, 1], 2).step_time(4)  # (4 + 2 - 1) * 2
        10.0
        """
        m = whole("microbatches", microbatches)
        return float(self.stage_costs.sum() + (m - 1) * self.bottleneck)


def _layers(costs, stages, first_stage_extra, last_stage_extra):
    costs = nonnegative("costs", costs)
    costs = np.atleast_1d(np.asarray(costs, dtype=float))
    require(costs.ndim == 1 and costs.size >= 1, "costs", costs, "a non-empty 1-D array of layer costs >= 0")
    stages = whole("stages", stages, low=1, high=costs.size)
    first = nonnegative("first_stage_extra", first_stage_extra)
    last = nonnegative("last_stage_extra", last_stage_extra)
    extra = np.zeros(stages)
    extra[0] += first
    extra[-1] += last
    return costs, stages, extra


def _partition(costs, bounds, extra, method):
    sums = np.add.reduceat(costs, bounds[:-1]) + extra
    return StagePartition(costs=costs, bounds=np.asarray(bounds, dtype=np.int64), stage_costs=sums, method=method)


def split_layers_evenly(costs, stages, first_stage_extra=0.0, last_stage_extra=0.0):
    """The naive split: equal numbers of layers per stage (earlier stages get
    one more when it does not divide). The "before" of re-partitioning.

    Parameters
    ----------
    costs : array_like
        Per-layer cost, seconds per microbatch, >= 0.
    stages : int
        Number of pipeline stages P, 1 <= P <= number of layers.
    first_stage_extra, last_stage_extra : float
        Extra seconds on the first stage (embedding) and on the last stage
        (output head and loss), >= 0.

    Returns
    -------
    StagePartition

    Examples
    --------
    >>> p = split_layers_evenly([1] * 8, 4, last_stage_extra=1.5)
    >>> p.layers_per_stage.tolist(), p.stage_costs.tolist()
    ([2, 2, 2, 2], [2.0, 2.0, 2.0, 3.5])
    """
    costs, stages, extra = _layers(costs, stages, first_stage_extra, last_stage_extra)
    n = costs.size
    q, r = divmod(n, stages)
    sizes = np.full(stages, q) + (np.arange(stages) < r)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return _partition(costs, bounds, extra, "even")


def partition_layers(costs, stages, first_stage_extra=0.0, last_stage_extra=0.0):
    """Split layers into contiguous stages, minimising the largest stage cost.

    Exact dynamic program over prefix sums S. With ``f_j(i)`` the best
    bottleneck for the first i layers in j stages::

        f_1(i) = S(i) + first_stage_extra
        f_j(i) = min over l of max(f_(j-1)(l), S(i) - S(l) + e_j)

    where ``e_j`` is ``last_stage_extra`` for the last stage and 0 otherwise.
    ``f_(j-1)(l)`` rises with l and ``S(i) - S(l)`` falls, so the best l is at
    their crossing, found by binary search for every i at once.

    Parameters and return value as in :func:`split_layers_evenly`; the
    bottleneck of the partition returned is optimal.

    Examples
    --------
    Eight equal layers, four stages, and a last stage that also computes the
    loss (1.5 layers' worth): give the last stage fewer layers.

    >>> p = partition_layers([1] * 8, 4, last_stage_extra=1.5)
    >>> p.layers_per_stage.tolist(), p.bottleneck
    ([2, 2, 3, 1], 3.0)
    >>> partition_layers([1, 2, 3, 4, 5, 6, 7, 8, 9], 3).stage_costs.tolist()
    [15.0, 13.0, 17.0]
    """
    costs, P, extra = _layers(costs, stages, first_stage_extra, last_stage_extra)
    n = costs.size
    check_memory(8 * P * (n + 1) + 32 * (n + 1), f"partitioning {n} layers into {P} stages")
    S = np.concatenate([[0.0], np.cumsum(costs)])
    f = S + extra[0]  # f_1(i), valid for i >= 1
    f[0] = math.inf
    split = np.zeros((P, n + 1), dtype=np.int64)
    for j in range(2, P + 1):
        e = extra[j - 1] if j == P else 0.0
        # Valid l for f_(j-1): j - 1 .. n - 1; valid i for f_j: j .. n.
        ls = np.arange(j - 1, n)
        h = f[ls] + S[ls]  # rises with l
        i = np.arange(j, n + 1)
        pos = np.searchsorted(h, S[i] + e, side="left")
        best_val = np.full(i.size, math.inf)
        best_l = np.zeros(i.size, dtype=np.int64)
        for shift in (-1, 0):
            l = ls[0] + np.clip(pos + shift, 0, ls.size - 1)
            l = np.minimum(l, i - 1)
            val = np.maximum(f[l], S[i] - S[l] + e)
            better = val < best_val
            best_val = np.where(better, val, best_val)
            best_l = np.where(better, l, best_l)
        g = np.full(n + 1, math.inf)
        g[i] = best_val
        split[j - 1, i] = best_l
        f = g
    bounds = [n]
    for j in range(P, 1, -1):
        bounds.append(int(split[j - 1, bounds[-1]]))
    bounds.append(0)
    return _partition(costs, np.array(bounds[::-1]), extra, "optimal")


def partition_for_step(costs, stages, microbatches, first_stage_extra=0.0, last_stage_extra=0.0):
    """Split layers into contiguous stages, minimising the 1F1B step time itself.

    :func:`partition_layers` minimises the slowest stage. A 1F1B step also
    fills and drains the pipeline through every stage, so two splits with the
    same bottleneck can give different steps, and the bottleneck-optimal one
    need not be the fastest. This search times every split with every stage
    non-empty, C(n - 1, P - 1) of them, through the pipeline simulator
    (forward a third of a stage's cost, backward two thirds, no
    communication, as :func:`~.causes.stage_imbalance` does) and keeps the
    fastest; ties go to the smaller bottleneck, then to the first split in
    order. Exact, for small layer counts only.

    Parameters
    ----------
    costs, stages, first_stage_extra, last_stage_extra
        As in :func:`split_layers_evenly` (a layer's cost is its forward and
        backward together).
    microbatches : int
        Microbatches M per step, >= 1.

    Returns
    -------
    StagePartition
        ``method`` is ``"step"``; time it with
        :func:`~.causes.stage_imbalance` or the pipeline simulator.

    Examples
    --------
    Four equal layers, two stages, four microbatches, and a loss worth one
    layer on the last stage. Splits 2 | 2 (stages of 2 and 3) and 3 | 1 (3 and
    2) share the bottleneck, 3; the linear partition returns the first. But
    the drain runs through the last stage: lighter there, the step is shorter.

    >>> from straggle_edu.models.causes import stage_imbalance
    >>> by_beat = partition_layers([1] * 4, 2, last_stage_extra=1.0)
    >>> by_step = partition_for_step([1] * 4, 2, 4, last_stage_extra=1.0)
    >>> by_beat.layers_per_stage.tolist(), by_step.layers_per_stage.tolist(), by_beat.bottleneck == by_step.bottleneck
    ([2, 2], [3, 1], True)
    >>> [round(stage_imbalance(4, 2, 4, output_layers=1.0, layers_per_stage=p.layers_per_stage).step_time, 6)
    ...  for p in (by_beat, by_step)]
    [14.0, 13.0]
    """
    costs, P, extra = _layers(costs, stages, first_stage_extra, last_stage_extra)
    M = whole("microbatches", microbatches)
    n = costs.size
    splits = math.comb(n - 1, P - 1)
    require(splits <= STEP_SEARCH_MAX_SPLITS, "costs", f"{n} layers on {P} stages",
            f"at most {STEP_SEARCH_MAX_SPLITS:,} contiguous splits to time (this has {splits:,}); "
            "use partition_layers for large models")
    check_memory(8 * splits * (2 * P + 4), f"timing {splits:,} splits of {n} layers into {P} stages")
    cuts = np.array(list(itertools.combinations(range(1, n), P - 1)), dtype=np.int64).reshape(splits, P - 1)
    bounds = np.concatenate([np.zeros((splits, 1), np.int64), cuts, np.full((splits, 1), n)], axis=1)
    S = np.concatenate([[0.0], np.cumsum(costs)])
    stage = S[bounds[:, 1:]] - S[bounds[:, :-1]] + extra  # (splits, P)
    block = max(1, (32 << 20) // (64 * (2 * P * M + 1)))  # about 32 MiB of simulator state at a time
    step = np.empty(splits)
    for lo in range(0, splits, block):
        work = np.broadcast_to(stage[lo:lo + block, None, :, None], (min(block, splits - lo), 1, P, M))
        step[lo:lo + block] = pipeline_step_times(P, M, work / 3, 2 * work / 3)
    key = np.round(step / max(float(step.min()), 1e-300), 9)
    best = np.lexsort((stage.max(axis=1), key))[0]
    return _partition(costs, bounds[best], extra, "step")
