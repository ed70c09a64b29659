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
  forward and a backward time.

Pipeline and tensor parallelism add barriers inside the step; see
:mod:`straggle_edu.models.pipeline`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import nonnegative, positive, require, whole
from ..math.tail import p_any_slow
from .cluster import AllReduce, ring_allreduce_time
from .step_time import StepTime
from .waste import _slowest_curve

__all__ = ["DataParallelScaling", "data_parallel_scaling", "data_parallel_step_time"]


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
        """Scaling efficiency: speed-up / n, in (0, 1]."""
        return self.speedup / self.n

    @property
    def straggler_efficiency(self):
        """(compute + sync) / E[step]: the share not lost to waiting, the
        efficiency :func:`~.cluster.scaling_efficiency` reports."""
        return (self.compute + self.sync) / self.step_time

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
