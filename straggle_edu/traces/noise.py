"""The noise floor of a profiler or per-rank analysis: the S that ranks of equal speed reach by their own spread.

A slowdown S computed from a few noisy steps is above 1 even when no rank is
slower than another: each step waits for the slowest of R ranks, and noise
alone makes one of them the slowest. :func:`noise_floor` is the 99th
percentile of that S (the expected maximum of notebook 03, averaged over the
steps); an S at or below it is "within noise", not "Yes"
(:mod:`~straggle_edu.traces.diagnose`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["noise_floor", "NOISE_QUANTILE"]

#: The noise floor is the S that equal ranks reach by noise alone this rarely (1 - NOISE_QUANTILE).
NOISE_QUANTILE = 0.99


def noise_floor(work, ideal_step):
    """The S that ranks of equal mean reach by noise alone, at its 99th percentile; None with one step or one rank.

    Each rank's own step-to-step spread is measured around the step's mean
    over the ranks, so that a slow rank's steady excess is no spread and a
    step slow on every rank is no spread either (the spread pooled across
    ranks would grow with the slow rank itself). With sigma the root mean
    square of the ranks' spreads (corrected for the mean they are measured
    around), the floor is 1 + q / mean ideal step time, where q is the 99th
    percentile of the mean over the K steps of the slowest of R ranks, each
    N(0, sigma^2) (:func:`~straggle_edu.math.order_stats.mean_max_quantile`,
    the expected maximum of notebook 03).

    Parameters
    ----------
    work : array_like, shape (steps, ranks)
        Each rank's own work in each step, seconds.
    ideal_step : array_like, shape (steps,)
        The ideal step times, seconds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> work = 1.0 + 0.02 * rng.standard_normal((50, 8))   # 8 equal ranks, 2% noise
    >>> round(noise_floor(work, np.ones(50)), 3)   # E[max of 8 normals] = 1.42 sigma, and a little more
    1.033
    >>> noise_floor([[1.0, 2.0]], [1.5]) is None   # one step: no spread to measure
    True
    """
    from ..math.order_stats import mean_max_quantile

    w = np.asarray(work, dtype=float)
    K, R = w.shape
    if K < 2 or R < 2:
        return None
    rel = w - w.mean(axis=1, keepdims=True)
    sigma = float(np.sqrt(np.mean(np.var(rel, axis=0, ddof=1)) * R / (R - 1)))
    if sigma <= 0.0:
        return 1.0
    excess = mean_max_quantile(_Normal(sigma), R, K, NOISE_QUANTILE)
    return 1.0 + max(excess, 0.0) / float(np.mean(ideal_step))


class _Normal:
    """N(0, sigma^2) as the order-statistics layer takes a distribution (ppf, isf, mean), without loading scipy.stats.

    Examples
    --------
    >>> from scipy import stats
    >>> u = np.array([0.01, 0.5, 0.975])
    >>> bool(np.allclose(_Normal(2.0).ppf(u), stats.norm(0, 2.0).ppf(u)))
    True
    """

    def __init__(self, sigma):
        self.sigma = sigma

    def ppf(self, u):
        from scipy import special

        return self.sigma * special.ndtri(u)

    def isf(self, w):
        return -self.ppf(w)

    def mean(self):
        return 0.0
