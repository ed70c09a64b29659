"""Tail probabilities: how likely it is that some worker is slow.

If each of n independent workers has a slow step with probability p, the
step is slow for the job when at least one of them is::

    p_any_slow(p, n) = 1 - (1 - p)**n

Functions here are vectorised over p and n and computed through
``log1p``/``expm1``, so that tiny p and huge n stay accurate.

- :func:`p_any_slow`, :func:`p_none_slow`: the forward question.
- :func:`workers_until`: how many workers until the job-level probability
  reaches a target.
- :func:`per_worker_budget`: how rare a per-worker slow step must be to keep
  the job-level probability under a target.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_output, in_range, probability, require, whole

__all__ = ["p_any_slow", "p_none_slow", "workers_until", "per_worker_budget"]


def _first(values, mask):
    """The first entry of values (broadcast against mask) where mask holds."""
    values = np.broadcast_to(values, np.shape(mask))
    return values[mask].flat[0] if np.ndim(mask) else values[()]


def _log_none(p, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        return n * np.log1p(-p)


def _any(p, n):
    """1 - (1 - p)**n; n = 1 is p itself, exactly (the log round trip can
    cost an ulp). n = 0 gives 0."""
    with np.errstate(invalid="ignore"):
        return np.where(n == 1, p, np.where(n == 0, 0.0, -np.expm1(_log_none(p, n))))


def p_none_slow(p, n):
    """Probability that none of n independent workers is slow: ``(1 - p)**n``.

    Accurate even when the answer is far below float64's resolution near 1,
    which is what a notebook needs to show how close to certain
    :func:`p_any_slow` is at 4096 workers.

    Parameters
    ----------
    p : float or array_like
        Per-worker probability of a slow step, in [0, 1].
    n : int or array_like
        Number of workers, a whole number >= 1.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar input, an array otherwise.

    Examples
    --------
    >>> p_none_slow(0.01, 4096)
    1.3236...e-18
    >>> p_none_slow([0.0, 1.0], 5)
    array([1., 0.])
    """
    p = probability("p", p)
    n = whole("n", n)
    return as_output(np.exp(_log_none(p, n)), p, n)


def p_any_slow(p, n):
    """Probability that at least one of n independent workers is slow.

    ``1 - (1 - p)**n``, computed as ``-expm1(n * log1p(-p))``. Parameters and
    return as in :func:`p_none_slow`.

    Examples
    --------
    >>> round(p_any_slow(0.01, 100), 3)
    0.634
    >>> p_any_slow(1e-15, 10**12)
    0.000999500166...
    >>> p_any_slow(0.01, [1, 10, 100]).round(4)
    array([0.01  , 0.0956, 0.634 ])
    """
    p = probability("p", p)
    n = whole("n", n)
    return as_output(_any(p, n), p, n)


def workers_until(p, target):
    """Smallest n for which ``p_any_slow(p, n) >= target``.

    Parameters
    ----------
    p : float or array_like
        Per-worker probability of a slow step, in (0, 1].
    target : float or array_like
        Job-level probability to reach, in [0, 1).

    Returns
    -------
    int or numpy.ndarray of int

    Examples
    --------
    How many workers until a slow step is a coin flip, at 1% per worker?

    >>> workers_until(0.01, 0.5)
    69
    >>> workers_until([0.01, 0.001], 0.5)
    array([ 69, 693])
    """
    p = in_range("p", p, 0.0, 1.0, low_open=True)
    target = in_range("target", target, 0.0, 1.0, high_open=True)
    with np.errstate(divide="ignore"):
        ratio = np.log1p(-target) / np.log1p(-p)
    n = np.maximum(np.ceil(ratio), 1.0)
    # Guard against rounding in the ratio: step to the exact smallest n.
    n = np.where(_any(p, n - 1) >= target, np.maximum(n - 1, 1), n)
    n = np.where(_any(p, n) < target, n + 1, n)
    too_big = ~(n < 2**62)
    if np.any(too_big):
        require(False, "p", _first(p, too_big), "large enough that the target is reachable with fewer than 2**62 workers")
    if np.ndim(n) == 0:
        return int(n)
    return n.astype(np.int64)


def per_worker_budget(n, target):
    """Largest per-worker p that keeps ``p_any_slow(p, n) <= target``.

    Parameters
    ----------
    n : int or array_like
        Number of workers, a whole number >= 1.
    target : float or array_like
        Highest acceptable job-level probability of a slow step, in [0, 1].

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    What per-worker tail keeps a 4096-GPU job clean on 99% of steps?

    >>> per_worker_budget(4096, 0.01)
    2.4536...e-06
    >>> per_worker_budget(1, 0.3)
    0.3
    """
    n = whole("n", n)
    target = probability("target", target)
    with np.errstate(divide="ignore"):
        p = -np.expm1(np.log1p(-target) / n)
    # Make sure rounding never puts p above the budget.
    p = np.where(_any(p, n) > target, np.nextafter(p, 0), p)
    return as_output(p, n, target)
