"""The data-parallel training step: compute, wait for the slowest, all-reduce.

In data parallelism (DP) every worker holds the whole model, runs forward
and backward on its own slice of the batch, then all workers all-reduce
their gradients. The all-reduce cannot finish before the last gradient
arrives, so it is a barrier::

    step = max over workers of (forward + backward) + all-reduce

This module turns that into curves against n, on top of the cluster model
(:class:`~.cluster.Cluster`, :class:`~.step_time.StepTime`,
:class:`~.cluster.AllReduce`):

- :func:`data_parallel_scaling`: expected step time, throughput, speed-up
  and scaling efficiency for every n at once, split into compute, waiting
  for the slowest, and synchronization;
- :func:`data_parallel_step_time`: one worker's step-time model from a
  forward and a backward time;
- :func:`slow_mask`, :func:`slowed_durations`, :func:`slowed_ops` and
  :func:`delay_response`: slow one worker, stage, replica or microbatch's op
  of a DP x PP step, and how much of the added work the pipeline's slack
  absorbs (the pipeline explorer's model).

Pipeline and tensor parallelism add barriers inside the step; see
:mod:`straggle_edu.models.pipeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import nonnegative, positive, require, whole
from ..math.tail import p_any_slow
from .cluster import AllReduce, ring_allreduce_time
from .pipeline import pipeline_step_times
from .step_time import StepTime
from .waste import _slowest_curve

__all__ = [
    "DataParallelScaling",
    "data_parallel_scaling",
    "data_parallel_step_time",
    "SLOW_TARGETS",
    "SLOW_OPS",
    "DelayResponse",
    "slow_mask",
    "slowed_durations",
    "slowed_ops",
    "delay_response",
    "interleaved_chunks",
]


def data_parallel_step_time(forward, backward, *, jitter=0.05, pause_prob=0.0, pause=0.0):
    """One DP worker's compute time per step, as a :class:`StepTime`.

    Parameters
    ----------
    forward, backward : float
        Mean seconds of the forward and backward pass (> 0 together).
    jitter, pause_prob, pause
        As in :class:`StepTime`: the coefficient of variation, and a pause
        (a GC, say) of ``pause`` seconds with probability ``pause_prob``.

    Returns
    -------
    StepTime

    Examples
    --------
    >>> data_parallel_step_time(0.1, 0.2, jitter=0.05).mean()
    0.30000000000000004
    """
    f = nonnegative("forward", forward)
    b = nonnegative("backward", backward)
    base = positive("forward + backward", f + b)
    return StepTime(base, jitter=jitter, pause_prob=pause_prob, pause=pause)


@dataclass(frozen=True)
class DataParallelScaling:
    """Expected DP step times against the number of workers n.

    Attributes
    ----------
    n : numpy.ndarray of int
        Worker counts.
    compute : float
        Mean compute time of one worker, seconds.
    slowest : numpy.ndarray
        E[max of n compute times], seconds.
    sync : numpy.ndarray
        All-reduce seconds at each n.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> s = data_parallel_scaling([1, 8, 4096], StepTime(1.0, jitter=0.05))
    >>> s.wait.round(3).tolist(), s.efficiency.round(3).tolist()   # wait = 0.05 x E[max of n normals]
    ([0.0, 0.071, 0.181], [1.0, 0.934, 0.847])
    """

    n: np.ndarray
    compute: float
    slowest: np.ndarray
    sync: np.ndarray

    @property
    def step_time(self):
        """E[step] = E[slowest] + sync, seconds."""
        return self.slowest + self.sync

    @property
    def wait(self):
        """E[slowest] - mean compute: the average worker's wait at the barrier, seconds."""
        return self.slowest - self.compute

    @property
    def throughput(self):
        """Worker-batches per second: n / E[step]."""
        return self.n / self.step_time

    @property
    def speedup(self):
        """Throughput over one worker's (whose step is its mean compute)."""
        return self.throughput * self.compute

    @property
    def efficiency(self):
        """Scaling efficiency: speed-up / n = compute / E[step], in (0, 1];
        the one meaning, :func:`~.cluster.scaling_efficiency`'s."""
        return self.speedup / self.n

    def rows(self):
        """Rows ``{"n", "part", "seconds"}`` splitting each step into
        ``compute``, ``wait`` and ``sync``, for a stacked chart."""
        out = []
        for i, n in enumerate(self.n.tolist()):
            for part, value in (("compute", self.compute), ("wait", self.wait[i]), ("sync", self.sync[i])):
                out.append({"n": int(n), "part": part, "seconds": float(value)})
        return out


def data_parallel_scaling(n, step_time, *, sync=0.0):
    """Expected step time, throughput and efficiency of DP training against n.

    ``E[step](n) = E[max of n step times] + sync(n)``, computed for every n
    on one shared integration grid (about a millisecond for a whole curve).
    ``sync`` is seconds, or an :class:`~.cluster.AllReduce` whose ring time
    ``2(n-1)/n * nbytes/bandwidth + 2(n-1) * latency`` grows with n.

    Parameters
    ----------
    n : int or array of int
        Worker counts, >= 1 (at most 1000 of them).
    step_time : StepTime
        One worker's compute time.
    sync : float or AllReduce
        Synchronization per step.

    Returns
    -------
    DataParallelScaling

    Examples
    --------
    1 s of compute, 5% jitter, a 0.5 s pause on 1% of steps, and a 1 GB
    gradient all-reduce at 100 GB/s:

    >>> t = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
    >>> s = data_parallel_scaling([1, 8, 4096], t, sync=AllReduce(1e9, 100e9, 5e-6))
    >>> s.step_time.round(3).tolist()
    [1.005, 1.122, 1.669]
    >>> s.efficiency.round(3).tolist()
    [1.0, 0.896, 0.602]
    """
    ns = np.atleast_1d(whole("n", np.asarray(n, dtype=float)))
    require(ns.ndim == 1 and 1 <= ns.size <= 1000, "n", ns, "between 1 and 1000 worker counts")
    if not isinstance(step_time, StepTime):
        require(False, "step_time", type(step_time).__name__, "a StepTime")
    if isinstance(sync, AllReduce):
        sync_t = np.asarray(ring_allreduce_time(ns, sync.nbytes, sync.bandwidth, sync.latency), dtype=float)
    else:
        sync_t = np.full(ns.shape, nonnegative("sync", sync), dtype=float)
        require(np.ndim(sync) == 0, "sync", sync, "seconds >= 0 or an AllReduce")
    mean = float(step_time.mean())
    slowest = np.full(ns.shape, mean)
    many = ns >= 2
    if many.any():
        if step_time.degenerate:
            # no jitter: mu, plus the pause if any of n workers pauses
            slowest[many] = step_time.mu + step_time.pause * p_any_slow(step_time.pause_prob, ns[many])
        else:
            slowest[many] = _slowest_curve(step_time, ns[many])
    return DataParallelScaling(n=ns, compute=mean, slowest=np.maximum(slowest, mean), sync=sync_t)


# ------------------------------------------------ slowing part of a DP x PP step

#: What can be slowed in a DP x PP step.
SLOW_TARGETS = ("nothing", "one worker", "one stage", "one replica", "one microbatch's op")
#: Which op of the chosen cells is slowed.
SLOW_OPS = ("forward", "backward", "both")


def slow_mask(shape, target, *, dp=0, stage=0, microbatch=0):
    """Which (dp, stage, microbatch) cells a target slows, as a boolean array.

    Parameters
    ----------
    shape : tuple
        (dp, stages, microbatches).
    target : str
        One of ``SLOW_TARGETS``.
    dp, stage, microbatch : int
        The chosen replica, stage and microbatch (clipped into range).

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> int(slow_mask((2, 4, 8), "one stage", stage=3).sum())   # 2 replicas x 8 microbatches
    16
    >>> int(slow_mask((2, 4, 8), "one microbatch's op", dp=1, stage=3, microbatch=9).sum())
    1
    """
    require(target in SLOW_TARGETS, "target", target, "one of " + ", ".join(map(repr, SLOW_TARGETS)))
    D, P, M = shape
    d, s, m = min(max(dp, 0), D - 1), min(max(stage, 0), P - 1), min(max(microbatch, 0), M - 1)
    mask = np.zeros(shape, bool)
    if target == "one worker":
        mask[d, s] = True
    elif target == "one stage":
        mask[:, s] = True
    elif target == "one replica":
        mask[d] = True
    elif target == "one microbatch's op":
        mask[d, s, m] = True
    return mask


def slowed_durations(mask, factor, op="both", *, forward=1.0, backward=2.0):
    """Forward and backward durations with the masked cells' ``op`` ``factor`` times slower.

    Parameters
    ----------
    mask : numpy.ndarray of bool
        Shape (dp, stages, microbatches), from :func:`slow_mask`.
    factor : float
        How many times slower, >= 0.
    op : {"forward", "backward", "both"}
        Which op of the masked cells.
    forward, backward : float
        Normal durations of one op, in seconds.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Forward and backward durations, in seconds, shaped like ``mask``.

    Examples
    --------
    >>> fwd, bwd = slowed_durations(slow_mask((1, 2, 2), "one stage", stage=1), 3.0, "forward")
    >>> fwd.tolist(), bwd.tolist()
    ([[[1.0, 1.0], [3.0, 3.0]]], [[[2.0, 2.0], [2.0, 2.0]]])
    """
    require(op in SLOW_OPS, "op", op, "one of " + ", ".join(map(repr, SLOW_OPS)))
    factor = nonnegative("factor", factor)
    mask = np.asarray(mask, bool)
    fwd = np.where(mask & (op != "backward"), forward * factor, forward)
    bwd = np.where(mask & (op != "forward"), backward * factor, backward)
    return fwd, bwd


def slowed_ops(ops, mask, op="both"):
    """Which rows of a :class:`~.pipeline.PipelineRun`'s ``ops`` table ran slowed.

    Parameters
    ----------
    ops : numpy structured array
        ``PipelineRun.ops`` (fields ``kind``, ``dp``, ``stage``, ``microbatch``).
    mask : numpy.ndarray of bool
        The slowed cells, shape (dp, stages, microbatches).
    op : {"forward", "backward", "both"}

    Returns
    -------
    numpy.ndarray of bool, one per row

    Examples
    --------
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> r = simulate_pipeline(2, 2, 1.0, 2.0)
    >>> rows = slowed_ops(r.ops, slow_mask((1, 2, 2), "one worker", stage=0), "forward")
    >>> sorted((str(k), int(s), int(m)) for k, s, m in r.ops[rows][["kind", "stage", "microbatch"]])
    [('F', 0, 0), ('F', 0, 1)]
    """
    require(op in SLOW_OPS, "op", op, "one of " + ", ".join(map(repr, SLOW_OPS)))
    compute = np.isin(ops["kind"], ["F", "B"])
    kinds = {"forward": ["F"], "backward": ["B"], "both": ["F", "B"]}[op]
    rows = compute & np.isin(ops["kind"], kinds)
    rows[compute] &= np.asarray(mask, bool)[ops["dp"][compute], ops["stage"][compute], ops["microbatch"][compute]]
    return rows


def interleaved_chunks(stages, microbatches, chunks):
    """The model chunks an interleaved schedule can use: ``chunks`` when the
    microbatches are a multiple of the stages, else 1 (plain 1F1B).

    Examples
    --------
    >>> interleaved_chunks(4, 8, 2), interleaved_chunks(4, 6, 2)
    (2, 1)
    """
    return chunks if whole("microbatches", microbatches) % whole("stages", stages) == 0 else 1


@dataclass(frozen=True)
class DelayResponse:
    """How a step's time grows as part of it slows down.

    Attributes
    ----------
    factors : numpy.ndarray
        The slow-down factors (1 = not slowed).
    added : numpy.ndarray
        Work added to the slowed ops at each factor, in seconds.
    increase : numpy.ndarray
        The step's time minus the unslowed step's, in seconds.
    """

    factors: np.ndarray
    added: np.ndarray
    increase: np.ndarray

    @property
    def absorbed(self):
        """Added work the pipeline's slack hid, in seconds: ``added - increase`` (>= 0)."""
        return np.maximum(self.added - self.increase, 0.0)


def delay_response(mask, op="both", factors=None, *, forward=1.0, backward=2.0, **pipeline):
    """Step-time increase as the masked ops slow down, all factors in one batched simulation.

    Parameters
    ----------
    mask : numpy.ndarray of bool
        The slowed cells, shape (dp, stages, microbatches).
    op : {"forward", "backward", "both"}
    factors : array of float, optional
        Slow-down factors, starting at 1; default 11 from 1 to 6.
    forward, backward : float
        Normal op durations, in seconds.
    **pipeline
        ``p2p``, ``allreduce``, ``optimizer``, ``schedule``, ``chunks`` of
        :func:`~.pipeline.pipeline_step_times` (``dp`` comes from the mask).

    Returns
    -------
    DelayResponse

    Examples
    --------
    One forward on stage 0 of a 2-stage, 2-microbatch 1F1B pipeline has 2 s
    of slack: the first 2 s of delay vanish.

    >>> mask = slow_mask((1, 2, 2), "one microbatch's op", stage=0, microbatch=1)
    >>> r = delay_response(mask, "forward", [1.0, 2.0, 3.0, 4.0])
    >>> r.added.tolist(), r.increase.tolist(), r.absorbed.tolist()
    ([0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 2.0, 2.0])
    """
    factors = np.linspace(1.0, 6.0, 11) if factors is None else np.asarray(factors, dtype=float)
    pairs = [slowed_durations(mask, k, op, forward=forward, backward=backward) for k in factors]
    fwd, bwd = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    D, P, M = np.shape(mask)
    times = pipeline_step_times(P, M, fwd, bwd, dp=D, **pipeline)
    added = (fwd - forward).sum(axis=(1, 2, 3)) + (bwd - backward).sum(axis=(1, 2, 3))
    base = pipeline_step_times(P, M, fwd[:1] * 0 + forward, bwd[:1] * 0 + backward, dp=D, **pipeline)[0]
    return DelayResponse(factors, added, times - base)
