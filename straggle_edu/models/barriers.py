"""Barriers inside a step: the sum of maxima, not the maximum of sums.

A tensor-parallel (TP) group meets in a collective inside every layer, so
its step is not "the slowest rank's total" but a sum, over the barriers, of
the slowest rank between two barriers. This module states that model exactly
and gives its closed forms, with samplers to check them.

The jitter model
----------------
One step of ``n`` ranks is ``segments`` segments of equal mean work; the
whole step has mean ``T``. Segment j of rank r takes::

    (T / segments) * (1 + jitter * Z[r, j]),   Z[r, j] iid standard normal

so ``jitter`` is the coefficient of variation of one segment. ``barriers``
collectives, evenly spaced, cut the step into blocks of
``m = segments / barriers`` segments; every rank waits for the slowest at
the end of each block. A block of m segments of one rank has mean ``T / barriers``
and standard deviation ``(T / barriers) * jitter / sqrt(m)``, so::

    E[step] / T - 1 = jitter * E[M_n] * sqrt(barriers / segments)

with ``E[M_n]`` the expected maximum of n standard normals. One barrier
per step (the maximum of sums) pays ``jitter * E[M_n] / sqrt(segments)``; a
barrier after every segment (the sum of maxima) pays ``jitter * E[M_n]``,
``sqrt(segments)`` times more.

- :func:`barrier_overhead`, :func:`sample_barrier_overhead`: that overhead,
  closed form and Monte Carlo.
- :func:`barrier_overhead_rows`: the overhead against the barrier count,
  for a chart.
- :func:`accumulation_time`: gradient accumulation, k microbatches per
  DP all-reduce: seconds per microbatch.
- :func:`bucketed_step`, :func:`bucketed_step_no_jitter`: the backward pass
  overlapped with a bucketed all-reduce.
- :func:`expert_load`, :func:`expert_load_normal`: the busiest expert of a
  mixture-of-experts layer under uniform top-1 routing.
- :func:`grid_waits`: one slow TP rank in a DP x PP x TP grid, and where
  every other rank waits for it.
- :func:`step_barriers`: the barriers one step puts between the ranks of a
  DP x PP x TP grid, by kind, and how many of each a rank meets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validate import as_rng, check_memory, in_range, nonnegative, positive, require, whole
from ..math.order_stats import expected_max
from .pipeline import simulate_pipeline, slowed

__all__ = ["barrier_overhead", "sample_barrier_overhead", "barrier_overhead_rows", "accumulation_time", "bucketed_step",
           "bucketed_step_no_jitter", "expert_load", "expert_load_normal", "GRID_ROLES", "grid_waits", "BARRIER_KINDS",
           "StepBarriers", "step_barriers"]


def _blocks(barriers, segments):
    segments = whole("segments", segments)
    barriers = whole("barriers", barriers, 1, segments)
    require(np.all(segments % np.asarray(barriers) == 0), "barriers", barriers, f"a divisor of segments ({segments})")
    return barriers, segments


def barrier_overhead(n, jitter, barriers=1, segments=1):
    """Expected step time over its mean, minus 1, with barriers inside the step (closed form).

    ``jitter * E[max of n standard normals] * sqrt(barriers / segments)``;
    see the module docstring for the model.

    Parameters
    ----------
    n : int
        Ranks that meet at every barrier, >= 1.
    jitter : float
        Coefficient of variation of one segment, >= 0.
    barriers : int or array of int
        Barriers per step, evenly spaced: each a divisor of ``segments``.
    segments : int
        Segments of equal mean work per step, >= 1.

    Returns
    -------
    float or numpy.ndarray
        The expected overhead, a share of the mean step (0.07 = 7%).

    Examples
    --------
    8 ranks, 5% jitter per segment, 128 segments:

    >>> round(barrier_overhead(8, 0.05, barriers=128, segments=128), 4)   # a barrier after each
    0.0712
    >>> round(barrier_overhead(8, 0.05, barriers=1, segments=128), 4)     # one barrier at the end
    0.0063
    """
    n = whole("n", n)
    jitter = nonnegative("jitter", jitter)
    barriers, segments = _blocks(barriers, segments)
    m = expected_max(stats.norm(), n) if n > 1 else 0.0
    out = jitter * m * np.sqrt(np.asarray(barriers, dtype=float) / segments)
    return float(out) if np.ndim(out) == 0 else out


def sample_barrier_overhead(n, jitter, barriers=1, segments=1, *, size=2000, rng=None):
    """Monte Carlo of :func:`barrier_overhead`: draws every segment of every rank.

    Parameters
    ----------
    n, jitter, barriers, segments
        As in :func:`barrier_overhead` (``barriers`` a single number).
    size : int
        Steps to draw, >= 1.

    Returns
    -------
    numpy.ndarray
        ``size`` step times over their mean, minus 1.

    Examples
    --------
    >>> x = sample_barrier_overhead(8, 0.05, 128, 128, size=4000, rng=1)
    >>> round(float(x.mean()), 3)
    0.071
    """
    n = whole("n", n)
    jitter = nonnegative("jitter", jitter)
    barriers, segments = _blocks(barriers, segments)
    size = whole("size", size)
    check_memory(8.0 * size * n * segments, "the sampled segments (size x n x segments)")
    z = as_rng(rng).standard_normal((size, barriers, segments // barriers, n))
    block = (1.0 + jitter * z).sum(axis=2) / segments  # each rank's block time, step mean = 1
    return block.max(axis=2).sum(axis=1) - 1.0


def barrier_overhead_rows(n, jitter, segments=128):
    """Rows ``{"barriers", "overhead"}`` for every divisor of ``segments``: the chart's curve.

    Examples
    --------
    >>> [(r["barriers"], round(r["overhead"], 4)) for r in barrier_overhead_rows(8, 0.05, 4)]
    [(1, 0.0356), (2, 0.0503), (4, 0.0712)]
    """
    segments = whole("segments", segments)
    ks = np.array([k for k in range(1, segments + 1) if segments % k == 0])
    values = np.atleast_1d(barrier_overhead(n, jitter, ks, segments))
    return [{"barriers": int(k), "overhead": float(v)} for k, v in zip(ks, values)]


def accumulation_time(n, microbatches, microbatch=1.0, jitter=0.05, allreduce=0.0):
    """Seconds per microbatch of DP training with gradient accumulation.

    Each of n replicas runs ``microbatches`` microbatches (each ``microbatch``
    seconds on average, coefficient of variation ``jitter``, independent),
    then all replicas all-reduce once (``allreduce`` seconds). The wait at
    that one barrier is over sums of k microbatches, so it shrinks like
    1/sqrt(k), and the all-reduce is paid once per k::

        (k * microbatch * (1 + jitter * E[M_n] / sqrt(k)) + allreduce) / k

    A rank that is slow on every microbatch (a persistent straggler) does
    not average out: this model is for independent jitter only.

    Examples
    --------
    >>> round(accumulation_time(64, 1, jitter=0.05, allreduce=0.1), 4)
    1.2172
    >>> round(accumulation_time(64, 8, jitter=0.05, allreduce=0.1), 4)
    1.0539
    """
    k = whole("microbatches", microbatches)
    mb = positive("microbatch", microbatch)
    ar = nonnegative("allreduce", allreduce)
    return (k * mb * (1.0 + barrier_overhead(n, jitter, 1, k)) + ar) / k


def bucketed_step_no_jitter(backward, comm, buckets):
    """Backward pass overlapped with a bucketed all-reduce, no jitter (closed form).

    Bucket j's gradients are ready at ``j * backward / buckets``; its
    all-reduce takes ``comm / buckets`` and starts when the bucket is ready
    and the previous all-reduce is done. The last all-reduce ends at::

        backward / b + comm / b + (b - 1) * max(backward / b, comm / b)

    that is ``backward + comm / b`` when the communication keeps up.

    Examples
    --------
    >>> bucketed_step_no_jitter(1.0, 0.4, 1), bucketed_step_no_jitter(1.0, 0.4, 4)
    (1.4, 1.1)
    >>> bucketed_step_no_jitter(1.0, 2.0, 4)    # communication-bound
    2.25
    """
    backward, comm = positive("backward", backward), nonnegative("comm", comm)
    b = whole("buckets", buckets)
    return backward / b + comm / b + (b - 1) * max(backward / b, comm / b)


def bucketed_step(n, backward, comm, buckets, jitter=0.05, *, size=2000, rng=None):
    """Sampled step times of n ranks whose backward overlaps a bucketed all-reduce.

    Each rank's backward is ``buckets`` segments of ``backward / buckets``
    seconds, each normal with coefficient of variation ``jitter * sqrt(buckets)``,
    so that the whole backward's is ``jitter`` whatever the bucket count. Bucket j's all-reduce is a barrier: it starts when the slowest
    rank has produced bucket j and the previous all-reduce has ended, and
    takes ``comm / buckets`` seconds. Overlap hides the communication, not
    the wait: the last all-reduce still starts after the slowest backward.

    Returns
    -------
    numpy.ndarray
        ``size`` times, in seconds, from the start of the backward to the
        end of the last all-reduce.

    Examples
    --------
    >>> float(bucketed_step(8, 1.0, 0.4, 4, jitter=0.0, size=1)[0])   # the closed form
    1.1
    >>> t = bucketed_step(8, 1.0, 0.4, 4, jitter=0.05, size=4000, rng=1)
    >>> round(float(t.mean()), 2)     # the slowest backward, 1 + 0.05 * E[M_8], + 0.4 / 4
    1.17
    """
    n, b, size = whole("n", n), whole("buckets", buckets), whole("size", size)
    backward, comm = positive("backward", backward), nonnegative("comm", comm)
    jitter = nonnegative("jitter", jitter)
    check_memory(8.0 * size * n * b, "the sampled buckets (size x n x buckets)")
    seg = backward / b * (1.0 + jitter * math.sqrt(b) * as_rng(rng).standard_normal((size, n, b)))
    ready = np.cumsum(seg, axis=2).max(axis=1)  # (size, b): the slowest rank's bucket j
    end = np.zeros(size)
    for j in range(b):
        end = np.maximum(ready[:, j], end) + comm / b
    return end


def expert_load_normal(tokens, experts):
    """Busiest expert's tokens over the mean, under uniform top-1 routing (normal approximation).

    Each of ``tokens`` tokens picks one of ``experts`` experts, uniformly
    and independently. An expert's load is Binomial(tokens, 1/experts):
    mean ``N p``, standard deviation ``sqrt(N p (1 - p))``, so::

        E[max load] / mean ~= 1 + sqrt((1 - p) / (N p)) * E[M_experts]

    Examples
    --------
    >>> round(expert_load_normal(4096, 8), 4)
    1.0589
    """
    N, e = whole("tokens", tokens), whole("experts", experts)
    p = 1.0 / e
    m = expected_max(stats.norm(), e) if e > 1 else 0.0
    return 1.0 + math.sqrt((1.0 - p) / (N * p)) * m


def expert_load(tokens, experts, *, size=2000, rng=None):
    """Sampled busiest-expert loads over the mean, under uniform top-1 routing.

    An all-to-all after every mixture-of-experts layer waits for the expert
    with the most tokens, so this ratio is that layer's slowdown when every
    token costs the same.

    Returns
    -------
    numpy.ndarray
        ``size`` ratios max load / mean load.

    Examples
    --------
    >>> round(float(expert_load(4096, 8, size=4000, rng=1).mean()), 3)   # whole tokens: a little above the normal 1.059
    1.064
    """
    N, e, size = whole("tokens", tokens), whole("experts", experts), whole("size", size)
    loads = as_rng(rng).multinomial(N, np.full(e, 1.0 / e), size=size)
    return loads.max(axis=1) / (N / e)


#: Where each rank of the grid waits for one slow TP rank.
GRID_ROLES = ("the slow rank", "its TP group: every collective", "its pipeline: the stage", "other replicas: the DP all-reduce")


def _grid_roles(dp, pp, slow):
    d0, s0, _ = slow
    role = np.full((dp, pp), 3)
    role[d0] = 2
    role[d0, s0] = 1
    return role


def grid_waits(dp, pp, tp, slow=(0, 0, 0), factor=1.5, *, microbatches=8, forward=1.0, backward=2.0,
               allreduce=1.0):
    """One slow TP rank in a DP x PP x TP grid: how long each rank waits for it, and where.

    Every rank of a TP group meets its peers in every layer, so the group
    runs each op at its slowest rank's pace: the slow rank (``factor`` times
    slower) slows its stage's ops in one replica. The pipeline
    (:func:`~.pipeline.simulate_pipeline`, 1F1B) carries that to the other
    stages, and the DP all-reduce to the other replicas. Compared with the
    same grid without the slow rank, each rank's added wait is split into
    ``tp`` (inside its TP group's collectives), ``pipeline`` (idle before its
    last backward) and ``dp`` (from its last backward to the end of the
    step: the DP all-reduce and the wait around it).

    Parameters
    ----------
    dp, pp, tp : int
        Replicas, stages and TP ranks per stage.
    slow : (int, int, int)
        (replica, stage, TP rank) of the slow rank.
    factor : float
        How many times slower it computes, >= 1.
    microbatches, forward, backward, allreduce
        The pipeline: microbatches per step, seconds per op and stage, and
        the DP all-reduce's seconds.

    Returns
    -------
    list of dict
        One row per rank: ``dp``, ``stage``, ``tp``, ``role`` (one of
        ``GRID_ROLES``), ``tp_wait``, ``pipeline_wait``, ``dp_wait`` and
        ``added`` (their sum), seconds.

    Examples
    --------
    2 replicas, 2 stages, 2 TP ranks, 2 microbatches; rank (1, 0, 1) is 2x slower:

    >>> rows = grid_waits(2, 2, 2, slow=(1, 0, 1), factor=2.0, microbatches=2)
    >>> [(r["tp"], r["role"], r["tp_wait"], r["pipeline_wait"]) for r in rows if r["dp"] == 1 and r["stage"] == 0]
    [(0, 'its TP group: every collective', 6.0, -2.0), (1, 'the slow rank', 0.0, -2.0)]

    Its peer waits 6 s inside the collectives, less the 2 s of bubble the
    longer ops fill. Every rank but the slow one waits 4 s more, the step's growth:

    >>> sorted({(r["role"], r["added"]) for r in rows})
    [('its TP group: every collective', 4.0), ('its pipeline: the stage', 4.0), \
('other replicas: the DP all-reduce', 4.0), ('the slow rank', -2.0)]
    """
    dp, pp, tp = whole("dp", dp), whole("pp", pp), whole("tp", tp)
    M = whole("microbatches", microbatches)
    factor = in_range("factor", factor, 1.0, 100.0)
    d0, s0, t0 = (whole("slow replica", slow[0], 0, dp - 1), whole("slow stage", slow[1], 0, pp - 1),
                  whole("slow TP rank", slow[2], 0, tp - 1))
    shape = (dp, pp, M)
    runs = [simulate_pipeline(pp, M, slowed(forward, k, shape, dp=d0, stage=s0), slowed(backward, k, shape, dp=d0, stage=s0),
                              dp=dp, allreduce=allreduce) for k in (1.0, factor)]
    role = _grid_roles(dp, pp, (d0, s0, t0))
    rows = []
    for d in range(dp):
        for s in range(pp):
            (busy0, last0), (busy1, last1) = (_worker_times(r, d, s) for r in runs)
            for t in range(tp):
                mine = t == t0 and role[d, s] == 1
                tp_wait = 0.0 if mine else busy1 - busy0  # a peer's own work is unchanged
                pipe = (last1 - busy1) - (last0 - busy0)
                dpw = (runs[1].step_time - last1) - (runs[0].step_time - last0)
                rows.append({"dp": d, "stage": s, "tp": t, "role": GRID_ROLES[0 if mine else role[d, s]],
                             "tp_wait": float(tp_wait), "pipeline_wait": float(pipe), "dp_wait": float(dpw),
                             "added": float(tp_wait + pipe + dpw)})
    return rows


def _worker_times(run, d, s):
    """(seconds of F and B, end of the last backward) of one (replica, stage)."""
    ops = run.ops[run.select(["F", "B"], dp=d, stage=s)]
    return float(np.sum(ops["end"] - ops["start"])), float(ops["end"].max())


#: The kinds of barrier in one step of a DP x PP x TP grid.
BARRIER_KINDS = ("TP collective", "PP send/recv", "DP all-reduce")


@dataclass(frozen=True)
class StepBarriers:
    """The barriers of one training step in a DP x PP x TP grid (from :func:`step_barriers`).

    A rank is ``(replica, stage, TP rank)``. Every TP group (one per replica
    and stage) meets in ``tp_per_step`` collectives; every pair of
    neighbouring stages of a replica, TP rank by TP rank, meets in
    ``pp_per_step`` sends and receives; every DP group (one per stage and TP
    rank, across the replicas) meets once, in the gradient all-reduce.
    """

    dp: int
    pp: int
    tp: int
    microbatches: int
    layers_per_stage: int
    tp_per_layer: int

    @property
    def tp_per_step(self):
        """Collectives of one TP group in one step: per layer, per microbatch (0 without TP)."""
        return self.tp_per_layer * self.layers_per_stage * self.microbatches if self.tp > 1 else 0

    @property
    def pp_per_step(self):
        """Sends/receives between two neighbouring stages in one step: each microbatch forward, then back."""
        return 2 * self.microbatches if self.pp > 1 else 0

    @property
    def dp_per_step(self):
        """All-reduces of one DP group in one step (0 with one replica)."""
        return 1 if self.dp > 1 else 0

    def met_by(self, stage):
        """``{kind: count}``: the barriers a rank of pipeline stage ``stage`` meets in one step.

        Examples
        --------
        >>> grid = step_barriers(2, 4, 4)
        >>> grid.met_by(0), sum(grid.met_by(1).values())   # a middle stage has two neighbours
        ({'TP collective': 256, 'PP send/recv': 16, 'DP all-reduce': 1}, 289)
        """
        stage = whole("stage", stage, 0, self.pp - 1)
        neighbours = int(stage > 0) + int(stage < self.pp - 1)
        return dict(zip(BARRIER_KINDS, (self.tp_per_step, neighbours * self.pp_per_step, self.dp_per_step)))

    def groups(self):
        """Every barrier group: ``[{"kind", "members", "per_step"}]``, members as ``(replica, stage, TP rank)``.

        Examples
        --------
        >>> from collections import Counter
        >>> Counter(g["kind"] for g in step_barriers(2, 4, 4).groups())   # 2 x 4 TP groups, 2 x 3 x 4 links, 4 x 4
        Counter({'PP send/recv': 24, 'DP all-reduce': 16, 'TP collective': 8})
        """
        D, P, T = range(self.dp), range(self.pp), range(self.tp)
        tp = [[(d, s, t) for t in T] for d in D for s in P] if self.tp > 1 else []
        pp = [[(d, s, t), (d, s + 1, t)] for d in D for s in P[:-1] for t in T]
        dp = [[(d, s, t) for d in D] for s in P for t in T] if self.dp > 1 else []
        counts = (self.tp_per_step, self.pp_per_step, self.dp_per_step)
        return [{"kind": kind, "members": members, "per_step": n}
                for kind, found, n in zip(BARRIER_KINDS, (tp, pp, dp), counts) for members in found]


def step_barriers(dp, pp, tp, *, microbatches=8, layers_per_stage=8, tp_per_layer=4):
    """The barriers one training step puts between the ranks of a DP x PP x TP grid.

    Parameters
    ----------
    dp, pp, tp : int
        Replicas, pipeline stages and TP ranks per stage.
    microbatches : int
        Microbatches per step.
    layers_per_stage : int
        Transformer layers on each stage.
    tp_per_layer : int
        TP collectives per layer and microbatch: 4 in Megatron-LM's tensor
        parallelism (an all-reduce after attention and one after the MLP, in
        the forward and again in the backward).

    Returns
    -------
    StepBarriers

    Examples
    --------
    2 replicas x 4 stages x 4 TP ranks, 8 microbatches of 8 layers a stage:

    >>> grid = step_barriers(2, 4, 4)
    >>> grid.tp_per_step, grid.pp_per_step, grid.dp_per_step   # 4 x 8 x 8; 2 x 8; one all-reduce
    (256, 16, 1)
    """
    return StepBarriers(whole("dp", dp), whole("pp", pp), whole("tp", tp), whole("microbatches", microbatches),
                        whole("layers_per_stage", layers_per_stage), whole("tp_per_layer", tp_per_layer))
