"""The barrier lab's model: what the order statistics predict for a run of real workers.

The live barrier lab (:mod:`straggle_edu.instruments.barrier_lab`) runs
worker processes that meet at a barrier every step. Its model is the
cluster model: a step lasts as long as the slowest worker's work, plus the
barrier's own cost, which the lab measures::

    predicted mean step time = E[max over the workers' StepTime models]
                               + measured barrier overhead

Everything here takes plain inputs (the workers' step-time models, arrays of
measured times), so models never import the instrument:

- :func:`lab_cluster`: the workers as a :class:`~.cluster.Cluster`;
- :func:`predict_step_time`, :func:`predicted_slowdown`: the predictions;
- :func:`measured_vs_predicted`: a run's measurements against them, as a
  :class:`Prediction`;
- :func:`replaced_step_time`: the other "ideal": the step with every slow
  worker replaced by a healthy one (the what-if ideal of
  :func:`predicted_slowdown` rebalances the work instead);
- :func:`measured_max_of_k`: the run's own measured max, checked against
  the fixed-work mode's prediction from the machine's own measured times
  (:func:`~straggle_edu.models.empirical.empirical_expected_max`);
  :func:`measured_vs_empirical` puts them in a :class:`Prediction`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..i18n import _
from .._validate import finite, nonnegative, require, whole
from .cluster import Cluster, Group, expected_step_time
from .empirical import empirical_expected_max

__all__ = [
    "Prediction",
    "lab_cluster",
    "predict_step_time",
    "predicted_slowdown",
    "replaced_step_time",
    "measured_vs_predicted",
    "measured_max_of_k",
    "measured_vs_empirical",
]


@dataclass(frozen=True)
class Prediction:
    """Measured against predicted mean step time, in seconds.

    Attributes
    ----------
    measured : float
        The measured mean step time.
    stderr : float
        Its standard error (the error bar).
    predicted : float
        ``expected_max + overhead``.
    expected_max : float
        E[max over the workers' StepTime models].
    overhead : float
        The measured barrier overhead.
    drawn_max : float
        The mean over steps of the slowest drawn work time: what E[max]
        would be with this run's draws, so ``measured - drawn_max -
        overhead`` is what the machine added (sleep overshoot, scheduling).
        In the fixed-work mode (:func:`measured_vs_empirical`) nothing is
        drawn, and this is the run's measured mean of each step's slowest
        compute: the max that ``expected_max`` predicts.
    steps : int
        Number of steps measured.
    """

    measured: float
    stderr: float
    predicted: float
    expected_max: float
    overhead: float
    drawn_max: float
    steps: int

    @property
    def error(self):
        """Relative prediction error: (measured - predicted) / predicted."""
        return (self.measured - self.predicted) / self.predicted

    @property
    def z(self):
        """(measured - predicted) in units of the standard error."""
        return (self.measured - self.predicted) / self.stderr if self.stderr > 0 else math.inf

    def __str__(self):
        return _(
            "measured {measured:.2f} ± {stderr:.2f} ms per step "
            "(mean of {steps} steps ± 1 standard error); predicted {predicted:.2f} ms "
            "= E[max] {expected_max:.2f} ms + barrier overhead {overhead:.2f} ms; "
            "error {error:+.1%}"
        ).format(measured=self.measured * 1e3, stderr=self.stderr * 1e3, steps=self.steps, predicted=self.predicted * 1e3,
                 expected_max=self.expected_max * 1e3, overhead=self.overhead * 1e3, error=self.error)


def _models(step_times):
    models = tuple(step_times)
    require(len(models) >= 1 and all(hasattr(t, "mean") and hasattr(t, "cdf") for t in models), "step_times",
            step_times, "one step-time model (a StepTime) per worker")
    return models


def lab_cluster(step_times, overhead=0.0):
    """The workers as a :class:`~.cluster.Cluster`: one group per distinct
    step-time model (in order of first appearance), and the barrier overhead
    (seconds) as the synchronization.

    Parameters
    ----------
    step_times : sequence of StepTime
        Each worker's step-time model, one per rank.
    overhead : float
        Barrier overhead per step, in seconds, >= 0.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> healthy, slow = StepTime(0.05, jitter=0.0), StepTime(0.05, jitter=0.0, slowdown=2.0)
    >>> c = lab_cluster([healthy, slow, healthy, healthy])
    >>> [(g.count, g.step_time.slowdown) for g in c.groups]
    [(3, 1.0), (1, 2.0)]
    """
    models = _models(step_times)
    overhead = nonnegative("overhead", overhead)
    counts = {}
    for t in models:
        counts[t] = counts.get(t, 0) + 1
    return Cluster(tuple(Group(k, t) for t, k in counts.items()), sync=overhead)


def predict_step_time(step_times, overhead=0.0):
    """The predicted mean step time, in seconds: E[max] over the workers'
    step-time models plus a barrier ``overhead`` in seconds.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> healthy, slow = StepTime(0.05, jitter=0.0), StepTime(0.05, jitter=0.0, slowdown=2.0)
    >>> predict_step_time([healthy, slow, healthy, healthy], overhead=0.001)
    0.101
    >>> round(predict_step_time([StepTime(0.05, jitter=0.05)] * 4), 5)
    0.0526
    """
    return float(expected_step_time(lab_cluster(step_times, overhead)))


def predicted_slowdown(step_times):
    """The per-rank what-if slowdown the model predicts: E[max] over the
    workers, over the mean of their expected work times.

    This is the definition ``straggle-edu analyze`` uses for a per-rank
    trace (the ideal step gives every worker the per-step mean), in
    expectation. That ideal *rebalances* the work: the slow worker's extra
    time is spread over everyone. Replacing the slow worker by a healthy one
    removes its extra time instead, which is faster still: see
    :func:`replaced_step_time`.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> healthy, slow = StepTime(0.05, jitter=0.0), StepTime(0.05, jitter=0.0, slowdown=2.0)
    >>> predicted_slowdown([healthy, slow, healthy, healthy])   # 0.1 / (0.25 / 4)
    1.6
    """
    models = _models(step_times)
    mean_work = sum(t.mean() for t in models) / len(models)
    return float(expected_step_time(lab_cluster(models)) / mean_work)


def replaced_step_time(step_times):
    """The predicted mean step time, in seconds, with every slow worker
    replaced by a healthy one: each model's ``slowdown`` set to 1.

    This is the other "ideal". :func:`predicted_slowdown` compares the step
    with the work rebalanced (every worker gets the mean); this one compares
    it with a new GPU in the slow one's place, which also removes the slow
    worker's extra work. One 2x worker among 4 (no jitter): rebalanced, the
    step is (100 + 3 x 50) / 4 = 62.5 ms... of 50 ms work units, so 1.6x;
    replaced, it is 50 ms, so 2.0x.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> healthy, slow = StepTime(0.05, jitter=0.0), StepTime(0.05, jitter=0.0, slowdown=2.0)
    >>> lab = [healthy, slow, healthy, healthy]
    >>> predict_step_time(lab) / replaced_step_time(lab), predicted_slowdown(lab)
    (2.0, 1.6)
    """
    models = _models(step_times)
    return predict_step_time([replace(t, slowdown=1.0) for t in models])


def _prediction(measured, expected_max, overhead, drawn_max):
    """The Prediction of ``measured`` (one step time per step) by ``expected_max + overhead``."""
    steps = measured.size
    return Prediction(
        measured=float(measured.mean()),
        stderr=float(measured.std(ddof=1) / math.sqrt(steps)),
        predicted=expected_max + overhead,
        expected_max=expected_max,
        overhead=overhead,
        drawn_max=drawn_max,
        steps=steps,
    )


def measured_vs_predicted(step_times, measured, planned, overhead):
    """Compare a run's measured mean step time with the model's prediction.

    Parameters
    ----------
    step_times : sequence of StepTime
        Each worker's step-time model, one per rank.
    measured : array of float
        Each measured step's length, release to release, in seconds (at least 2).
    planned : array of float
        Shape (steps, workers): the work times drawn for those steps, in seconds.
    overhead : float
        The measured barrier overhead per step, in seconds.

    Returns
    -------
    Prediction
        The measured mean step with its error bar, E[max] + overhead, and the relative error.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> p = measured_vs_predicted([StepTime(0.05, jitter=0.0)] * 2, [0.052, 0.054], [[0.05, 0.05], [0.05, 0.05]], 0.002)
    >>> round(p.measured, 4), round(p.stderr, 4), round(p.predicted, 4), round(p.error, 4)
    (0.053, 0.001, 0.052, 0.0192)
    """
    measured = np.asarray(measured, dtype=float)
    planned = np.asarray(planned, dtype=float)
    steps = len(measured)
    require(measured.ndim == 1 and steps >= 2, "steps measured", steps, "at least 2 to compare")
    require(planned.ndim == 2 and planned.shape[0] == steps, "planned", planned.shape,
            f"an array of shape ({steps}, workers), one row per measured step")
    overhead = finite("overhead", overhead)  # measured: noise can make it a hair below 0
    emax = predict_step_time(step_times)
    return _prediction(measured, emax, overhead, drawn_max=float(planned.max(axis=1).mean()))


def measured_max_of_k(times, k):
    """The run's own measured E[max of k workers], in seconds: the mean over
    steps, and over every choice of k of the W workers, of the slowest one's time.

    For one step with times sorted x_(1) <= ... <= x_(W), the i-th smallest
    is the slowest of a random k-subset with probability C(i-1, k-1) / C(W, k).

    Parameters
    ----------
    times : array_like, shape (steps, W)
        Each worker's measured time per step, in seconds.
    k : int
        Number of workers, 1..W.

    Examples
    --------
    >>> measured_max_of_k([[1.0, 2.0, 4.0]], 3)     # every worker: the step's max
    4.0
    >>> round(measured_max_of_k([[1.0, 2.0, 4.0]], 1), 4)     # one worker: the mean
    2.3333
    >>> round(measured_max_of_k([[1.0, 2.0, 4.0]], 2), 4)     # pairs: 2, 4, 4
    3.3333
    """
    x = np.asarray(times, dtype=float)
    require(x.ndim == 2 and x.size >= 1 and bool(np.isfinite(x).all()), "times", f"shape {x.shape}",
            "a 2-d array (steps, workers) of finite seconds")
    w = x.shape[1]
    k = whole("k", k, 1, w)
    weights = np.array([math.comb(i, k - 1) for i in range(w)], dtype=float) / math.comb(w, k)
    return float((np.sort(x, axis=1) @ weights).mean())


def measured_vs_empirical(busy, measured, overhead, slow_rank=None):
    """The fixed-work mode's comparison: E[max] predicted from the measured
    compute times, against the measured mean step time.

    Every healthy worker did the same fixed work, so their compute times are
    pooled into one measured distribution (the slow rank, if any, is its own
    group). The prediction is
    :func:`~straggle_edu.models.empirical.empirical_expected_max` of those groups:
    it uses how long each worker took, but not which slow steps came
    together, so it assumes the workers independent. ``drawn_max`` is the
    run's own measured mean of the slowest compute per step, the number the
    prediction is checked against.

    Parameters
    ----------
    busy : array_like, shape (steps, W)
        Each worker's measured compute time per step, in seconds (>= 2 steps).
    measured, overhead
        As in :func:`measured_vs_predicted`.
    slow_rank : int or None
        The rank that did more work, or None.

    Returns
    -------
    Prediction

    Examples
    --------
    >>> busy = [[0.010, 0.012], [0.012, 0.010]]
    >>> p = measured_vs_empirical(busy, [0.0125, 0.0125], 0.0005)
    >>> round(p.expected_max, 4), round(p.drawn_max, 4), round(p.predicted, 5)   # E[max] = 0.25 x 10 + 0.75 x 12 ms
    (0.0115, 0.012, 0.012)
    """
    busy = np.asarray(busy, dtype=float)
    require(busy.ndim == 2 and busy.shape[0] >= 2 and bool(np.isfinite(busy).all()), "busy", f"shape {busy.shape}",
            "a 2-d array (steps >= 2, workers) of finite seconds")
    measured = np.asarray(measured, dtype=float)
    steps, w = busy.shape
    require(measured.shape == (steps,), "measured", f"shape {measured.shape}", f"one step time per step ({steps})")
    if slow_rank is not None:
        slow_rank = whole("slow_rank", slow_rank, 0, w - 1)
    healthy = [r for r in range(w) if r != slow_rank]
    groups = [(busy[:, healthy], len(healthy))] + ([(busy[:, slow_rank], 1)] if slow_rank is not None else [])
    emax = empirical_expected_max([g for g in groups if g[1] > 0])
    overhead = finite("overhead", overhead)
    return _prediction(measured, emax, overhead, drawn_max=float(busy.max(axis=1).mean()))
