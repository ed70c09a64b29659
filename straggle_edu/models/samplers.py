"""Samplers for the slowest worker, at a cost that does not depend on n.

The naive way to draw the maximum of n step times draws all n and keeps one:
``rng.standard_normal((size, n)).max(axis=1)`` costs size * n draws and
size * n * 8 bytes. The order-statistic representation draws it directly:

- the maximum of n uniforms is V**(1/n) with V uniform, so
  max = Q(V**(1/n)), with 1 - V**(1/n) = -expm1(log(V)/n) kept exact;
- the k-th smallest of n uniforms is Beta(k, n - k + 1), so the k-th order
  statistic is Q(Beta(k, n - k + 1)).

Both give exactly the distribution of the naive draw, at a cost of ``size``
quantile evaluations whatever n is. A distribution with its own
``sample_max(n, size, rng)`` method (a :class:`~straggle_edu.models.step_time.StepTime`,
whose quantile needs root finding) draws its maximum itself, in closed form.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_rng, check_memory, whole
from ..math.order_stats import check_dist, quantile

__all__ = ["sample_max", "sample_order_stat"]

# Bytes of temporary arrays per sample (uniforms, 1 - u, quantiles, masks).
_BYTES_PER_SAMPLE = 48


def _size(size):
    size = whole("size", size, low=0)
    check_memory(size * _BYTES_PER_SAMPLE, f"drawing size={size} samples")
    return size


def sample_max(dist, n, size, rng=None):
    """Draw ``size`` maxima of n independent step times, without drawing n each.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        One worker's step-time distribution, in seconds.
    n : int
        Number of workers, >= 1.
    size : int
        Number of maxima to draw, >= 0.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``size`` draws of the slowest worker's time.

    Examples
    --------
    >>> from scipy import stats
    >>> x = sample_max(stats.norm(), 4096, 20_000, rng=0)
    >>> x.shape, round(float(x.mean()), 1)
    ((20000,), 3.6)
    """
    dist = check_dist(dist)
    n = whole("n", n)
    size = _size(size)
    rng = as_rng(rng)
    direct = getattr(dist, "sample_max", None)
    if callable(direct):  # a model that draws its own maximum exactly (StepTime)
        return np.asarray(direct(n, size, rng), dtype=float)
    log_v = -rng.standard_exponential(size)  # log of a uniform
    u = np.exp(log_v / n)
    w = -np.expm1(log_v / n)
    return quantile(dist, u, w)


def sample_order_stat(dist, k, n, size, rng=None):
    """Draw ``size`` k-th smallest values of n independent step times.

    Uses U_(k) ~ Beta(k, n - k + 1), drawn as X / (X + Y) with X ~ Gamma(k)
    and Y ~ Gamma(n - k + 1), so that both U_(k) and 1 - U_(k) = Y / (X + Y)
    keep full relative precision: the fastest worker (tiny U) and the slowest
    (U near 1) are both drawn from the exact tail.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
    k : int
        Order-statistic index, 1 <= k <= n (k = n is the maximum).
    n : int
        Number of workers, >= 1.
    size : int
        Number of draws, >= 0.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    The 94th fastest of 100 workers (what backup workers wait for):

    >>> from scipy import stats
    >>> x = sample_order_stat(stats.norm(), 94, 100, 20_000, rng=1)
    >>> round(float(x.mean()), 1)
    1.5
    """
    dist = check_dist(dist)
    n = whole("n", n)
    k = whole("k", k, low=1, high=n)
    size = _size(size)
    rng = as_rng(rng)
    if k == n:
        return sample_max(dist, n, size, rng)
    x = rng.standard_gamma(k, size)
    y = rng.standard_gamma(n - k + 1, size)
    total = x + y
    return quantile(dist, x / total, y / total)
