"""How the slowest of n workers grows with n, four ways, for four step-time shapes.

A synchronous step lasts as long as its slowest worker, so the question of
this module is how E[max of n step times] grows with n, and what the
maximum's distribution looks like.

- :func:`step_time_dist`: four step-time shapes with the same mean and the
  same standard deviation (normal, log-normal, shifted exponential and a
  shifted Pareto tail), so that only the shape of the tail differs.
- :func:`max_growth`: E[max] against n computed four ways (exact, Monte
  Carlo, the Gumbel approximation and the normal's sqrt(2 ln n) term),
  returned as a :class:`MaxGrowth`.
- :func:`max_histograms`: histograms of the maximum for several n on shared
  bins, pre-binned with numpy, returned as a :class:`MaxHistograms`.
- :func:`normal_max_sigmas`: E[max of n standard normals], the sequence that
  turns every closed-form chart of a jittery cluster into arithmetic.

Everything here is seeded through ``rng`` and imports only the math layer,
the samplers, numpy and scipy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validate import as_rng, check_memory, in_range, positive, require, whole
from ..math.order_stats import check_dist, expected_max, gumbel_max_approx, sqrt_2_ln_n
from .samplers import sample_max

__all__ = [
    "STEP_TIME_SHAPES",
    "step_time_dist",
    "MaxGrowth",
    "max_growth",
    "MaxHistograms",
    "max_histograms",
    "normal_max_sigmas",
    "log_grid",
]

STEP_TIME_SHAPES = ("normal", "log-normal", "exponential", "pareto")


def step_time_dist(shape, mean=1.0, std=0.1, *, tail_index=3.0):
    """A step-time distribution of a given shape, mean and standard deviation.

    Parameters
    ----------
    shape : {"normal", "log-normal", "exponential", "pareto"}
        ``"exponential"`` is shifted, ``mean - std + Exp(std)``;
        ``"pareto"`` is a shifted Pareto (Lomax) tail with ``tail_index``,
        whose maximum grows like a power of n rather than a logarithm.
    mean : float
        Mean step time in seconds, > 0.
    std : float
        Standard deviation in seconds, > 0 (``std / mean`` is the jitter).
    tail_index : float
        Pareto tail index, > 2 so that the standard deviation is finite.

    Returns
    -------
    frozen scipy.stats distribution

    Examples
    --------
    >>> d = step_time_dist("pareto", mean=1.0, std=0.1)
    >>> round(float(d.mean()), 12), round(float(d.std()), 12)
    (1.0, 0.1)
    >>> step_time_dist("gamma")
    Traceback (most recent call last):
    ...
    ValueError: shape must be one of 'normal', 'log-normal', 'exponential', 'pareto', got 'gamma'
    """
    require(shape in STEP_TIME_SHAPES, "shape", shape, "one of " + ", ".join(map(repr, STEP_TIME_SHAPES)))
    mean = positive("mean", mean)
    std = positive("std", std)
    if shape == "normal":
        return stats.norm(mean, std)
    if shape == "log-normal":
        s2 = math.log1p((std / mean) ** 2)
        return stats.lognorm(math.sqrt(s2), scale=mean * math.exp(-s2 / 2))
    if shape == "exponential":
        return stats.expon(loc=mean - std, scale=std)
    c = in_range("tail_index", tail_index, 2.0, low_open=True)
    # Lomax(c, scale=lam): mean lam/(c-1), variance lam^2 c / ((c-1)^2 (c-2)).
    lam = std * (c - 1) * math.sqrt((c - 2) / c)
    return stats.lomax(c, loc=mean - lam / (c - 1), scale=lam)


def log_grid(n_max=4096, points=25):
    """About ``points`` distinct whole numbers from 1 to ``n_max``, evenly
    spaced on a log scale (always including 1 and ``n_max``).

    Examples
    --------
    >>> log_grid(4096, 5).tolist()
    [1, 8, 64, 512, 4096]
    """
    n_max = whole("n_max", n_max)
    points = whole("points", points, low=2, high=10_000)
    grid = np.round(np.logspace(0, math.log10(n_max), points)).astype(np.int64)
    return np.unique(grid)


def _as_ns(ns):
    ns = whole("ns", np.atleast_1d(np.asarray(ns)))
    require(ns.ndim == 1 and ns.size > 0, "ns", ns, "a non-empty list of worker counts")
    require(ns.size <= 10_000, "the number of worker counts in ns", ns.size, "at most 10000")
    return ns


@dataclass(frozen=True)
class MaxGrowth:
    """E[max of n step times] against n, four ways, in seconds.

    Attributes
    ----------
    n : numpy.ndarray
        Worker counts.
    exact : numpy.ndarray
        E[max], by numerical integration (:func:`straggle_edu.expected_max`).
    monte_carlo, monte_carlo_se : numpy.ndarray
        Mean of ``size`` sampled maxima, and its standard error.
    gumbel : numpy.ndarray
        The Gumbel approximation (:func:`straggle_edu.gumbel_max_approx`).
    sqrt_2_ln_n : numpy.ndarray
        ``mean + std * sqrt(2 ln n)``: the normal's leading extreme-value term.
    mean, std : float
        One worker's mean and standard deviation, in seconds.
    size : int
        Monte Carlo draws per n.

    Examples
    --------
    >>> from scipy import stats
    >>> g = max_growth(stats.norm(), [1, 100], size=500, rng=0)
    >>> g.exact.round(3).tolist(), g.gumbel.round(3).tolist(), g.sqrt_2_ln_n.round(3).tolist()
    ([0.0, 2.508], [0.0, 2.543], [0.0, 3.035])
    """

    n: np.ndarray
    exact: np.ndarray
    monte_carlo: np.ndarray
    monte_carlo_se: np.ndarray
    gumbel: np.ndarray
    sqrt_2_ln_n: np.ndarray
    mean: float
    std: float
    size: int

    METHODS = ("exact", "monte_carlo", "gumbel", "sqrt_2_ln_n")

    def sigmas(self, values):
        """``(values - mean) / std``: seconds turned into σ above the mean."""
        return (np.asarray(values, dtype=float) - self.mean) / self.std

    def records(self, shape="", *, in_sigmas=True):
        """Rows for a chart: one dict per (n, method), with ``value`` in σ above
        the mean (or in seconds) and, for Monte Carlo, ``low``/``high`` at
        two standard errors."""
        conv = self.sigmas if in_sigmas else (lambda v: np.asarray(v, dtype=float))
        se = self.monte_carlo_se / (self.std if in_sigmas else 1.0)
        rows = []
        for method in self.METHODS:
            vals = conv(getattr(self, method))
            for i, (n, v) in enumerate(zip(self.n.tolist(), vals.tolist())):
                row = {"shape": shape, "n": n, "method": method, "value": v}
                if method == "monte_carlo":
                    row["low"], row["high"] = v - 2 * se[i], v + 2 * se[i]
                rows.append(row)
        return rows


def max_growth(dist, ns=None, size=2000, rng=None):
    """E[max of n step times] for each n in ``ns``, four ways.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        One worker's step time, in seconds (it needs a ``pdf`` for the Gumbel
        approximation and an ``std``).
    ns : array_like of int, optional
        Worker counts; by default :func:`log_grid` from 1 to 4096.
    size : int
        Monte Carlo maxima drawn per n, >= 2 (:func:`straggle_edu.sample_max`,
        which costs ``size`` draws whatever n is).

    Returns
    -------
    MaxGrowth

    Examples
    --------
    >>> g = max_growth(stats.norm(), [1, 100, 4096], size=4000, rng=0)
    >>> g.exact.round(2).tolist()
    [0.0, 2.51, 3.63]
    >>> bool(np.all(abs(g.monte_carlo - g.exact) < 3 * g.monte_carlo_se))
    True
    """
    dist = check_dist(dist)
    ns = log_grid() if ns is None else _as_ns(ns)
    size = whole("size", size, low=2)
    check_memory(size * 48 + ns.size * 64, f"drawing size={size} maxima")
    rng = as_rng(rng)
    mean, std = float(dist.mean()), float(dist.std())
    require(math.isfinite(std) and std > 0, "dist", f"a distribution with std {std}", "a distribution with a finite std > 0")
    exact = np.asarray(expected_max(dist, ns), dtype=float)
    draws = [sample_max(dist, int(n), size, rng) for n in ns]
    mc = np.array([d.mean() for d in draws])
    se = np.array([d.std(ddof=1) for d in draws]) / math.sqrt(size)
    with np.errstate(invalid="ignore", divide="ignore"):
        gumbel = np.asarray(gumbel_max_approx(dist, ns), dtype=float)
    gumbel = np.where(ns == 1, mean, gumbel)
    leading = mean + std * np.asarray(sqrt_2_ln_n(ns), dtype=float)
    return MaxGrowth(ns, exact, mc, se, gumbel, leading, mean, std, size)


def normal_max_sigmas(ns):
    """E[max of n standard normals], for each n: how many σ the slowest of n
    normally jittered workers sits above the mean.

    A worker whose step is ``base * (1 + jitter * Z)`` makes the expected
    step of n such workers ``base * (1 + jitter * normal_max_sigmas(n))``.

    Examples
    --------
    >>> normal_max_sigmas([1, 2, 100, 4096]).round(4).tolist()
    [0.0, 0.5642, 2.5076, 3.6261]
    """
    ns = _as_ns(ns)
    return np.asarray(expected_max(stats.norm(), ns), dtype=float)


@dataclass(frozen=True)
class MaxHistograms:
    """Histograms of the slowest of n, on shared bins, as shares of draws.

    Attributes
    ----------
    n : numpy.ndarray
        Worker counts, one histogram each.
    edges : numpy.ndarray
        ``bins + 1`` shared bin edges, in seconds.
    shares : numpy.ndarray
        ``(len(n), bins)``: share of the draws in each bin (rows sum to
        ``shown`` rather than 1 when some draws fall outside the edges).
    shown : numpy.ndarray
        Share of each row's draws inside the edges.
    mean, std : numpy.ndarray
        Sample mean and standard deviation of the maximum, per n, in seconds.

    Examples
    --------
    >>> from scipy import stats
    >>> h = max_histograms(stats.norm(), [1, 100], size=2000, bins=10, rng=0)
    >>> h.shares.shape, h.mean.round(2).tolist()   # the slowest of 100 sits 2.5 sigma out
    ((2, 10), [-0.01, 2.5])
    """

    n: np.ndarray
    edges: np.ndarray
    shares: np.ndarray
    shown: np.ndarray
    mean: np.ndarray
    std: np.ndarray

    def records(self):
        """One dict per (n, bin): ``n``, ``start``, ``end``, ``share`` and
        ``share_one`` (the same bin's share for the first row, usually n = 1),
        plus the row's ``mean`` and ``std``."""
        rows = []
        for i, n in enumerate(self.n.tolist()):
            for j in range(self.shares.shape[1]):
                rows.append(
                    {
                        "n": n,
                        "bin": j,
                        "start": float(self.edges[j]),
                        "end": float(self.edges[j + 1]),
                        "share": float(self.shares[i, j]),
                        "share_one": float(self.shares[0, j]),
                        "mean": float(self.mean[i]),
                        "std": float(self.std[i]),
                    }
                )
        return rows


def max_histograms(dist, ns, size=20_000, bins=60, rng=None, *, tail=1e-3):
    """Histograms of the slowest of n step times, for each n, on shared bins.

    The bins run from the ``tail`` quantile of the smallest n's maximum to
    the ``1 - tail`` quantile of the largest n's maximum, so the histograms
    can be stacked on one time axis and watched slide right.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
    ns : array_like of int
        Worker counts, one histogram each (put n = 1 first to compare with
        one worker).
    size : int
        Maxima drawn per n (:func:`straggle_edu.sample_max`).
    bins : int
        Number of shared bins, 2..500.
    tail : float
        Share of draws each end may leave off the axis, in (0, 0.1].

    Returns
    -------
    MaxHistograms

    Examples
    --------
    >>> h = max_histograms(stats.norm(), [1, 4096], size=20_000, bins=40, rng=0)
    >>> h.shares.shape, bool(h.mean[1] > h.mean[0]), bool(h.std[1] < h.std[0])
    ((2, 40), True, True)
    """
    dist = check_dist(dist)
    ns = _as_ns(ns)
    size = whole("size", size, low=2)
    bins = whole("bins", bins, low=2, high=500)
    tail = in_range("tail", tail, 0.0, 0.1, low_open=True)
    check_memory(size * 48 + ns.size * bins * 8, f"drawing size={size} maxima")
    rng = as_rng(rng)
    # Quantile of the max of n at level q is Q(q**(1/n)).
    lo_u = tail ** (1.0 / ns.min())
    hi_w = -math.expm1(math.log1p(-tail) / ns.max())
    lo, hi = float(dist.ppf(lo_u)), float(dist.isf(hi_w))
    edges = np.linspace(lo, hi, bins + 1)
    shares, shown, means, stds = [], [], [], []
    for n in ns:
        x = sample_max(dist, int(n), size, rng)
        counts, _ = np.histogram(x, edges)
        shares.append(counts / size)
        shown.append(counts.sum() / size)
        means.append(x.mean())
        stds.append(x.std(ddof=1))
    return MaxHistograms(ns, edges, np.array(shares), np.array(shown), np.array(means), np.array(stds))
