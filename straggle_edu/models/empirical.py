"""Your own step times: the empirical distribution, and what it can predict.

Paste step times measured on your machine (or read a per-rank CSV in the
explorer) and the models use them instead of a normal jitter:

- :func:`parse_step_times`: text such as ``"1.02, 0.98 1.10"`` to an array,
  with an error that names the item a reader has to fix.
- :func:`empirical_expected_max`: E[slowest of n] when each worker's step
  time is a draw from your sample (or from one of several groups' samples).
  Exact, by order statistics: the largest of n draws is the k-th smallest
  value with probability ``(k/m)^n - ((k-1)/m)^n``.
- :func:`predict_at_scale`: "measure at 8, predict 4096". The empirical
  answer never exceeds your sample's maximum, so it cannot see a tail it
  never sampled. Two tail models (a normal fit, and an exponential tail
  above the sample's 90th percentile) extrapolate; a bootstrap of each
  gives its spread, and the interval spans both. When n is far beyond the
  sample, the interval widens: the data cannot tell which tail you have.
- :func:`empirical_growth`: E[slowest of n] against n from your sample, the
  same four ways as :func:`~straggle_edu.models.max_growth.max_growth`, so
  the 03 and 04 explorers draw your numbers where they drew the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validate import as_rng, check_memory, described, require, whole
from ..math.order_stats import expected_max, gumbel_max_approx, sqrt_2_ln_n
from .max_growth import MaxGrowth

__all__ = ["parse_step_times", "empirical_expected_max", "empirical_growth", "ScalePrediction", "predict_at_scale"]

_SPLIT = re.compile(r"[\s,;]+")
_TAIL_QUANTILE = 0.9


def parse_step_times(text, name="step_times"):
    """Read step times in seconds from text: numbers separated by commas, spaces or new lines.

    Parameters
    ----------
    text : str
        For example ``"1.02, 0.98, 1.10"``.
    name : str
        The input's name in error messages.

    Returns
    -------
    numpy.ndarray
        The step times, at least 2, each finite and > 0.

    Examples
    --------
    >>> parse_step_times("1.02, 0.98\\n1.10").tolist()
    [1.02, 0.98, 1.1]
    >>> parse_step_times("1.0, 1.1s, 0.9")
    Traceback (most recent call last):
    ...
    ValueError: step_times must be numbers in seconds separated by commas, spaces or new lines, got '1.1s' (item 2)
    """
    require(isinstance(text, str), name, text, "text with numbers in seconds")
    items = [item for item in _SPLIT.split(text.strip()) if item]
    values = []
    for i, item in enumerate(items, start=1):
        try:
            value = float(item)
        except ValueError:
            value = None
        shown = described(f"{item!r} (item {i})")
        require(value is not None, name, shown, "numbers in seconds separated by commas, spaces or new lines")
        require(np.isfinite(value) and value > 0, name, shown, "durations in seconds > 0")
        values.append(value)
    require(len(values) >= 2, name, text if len(text) < 40 else text[:40] + "...", "at least 2 step times")
    return np.asarray(values, dtype=float)


def _sample(values):
    x = np.sort(np.asarray(values, dtype=float).ravel())
    require(x.size >= 2, "values", x.size, "at least 2 step times")
    require(bool(np.all(np.isfinite(x)) and x[0] > 0), "values", x[0] if x[0] <= 0 else "NaN",
            "finite durations in seconds > 0")
    return x


def _samples(name, x):
    arr = np.asarray(x, dtype=float).ravel()
    require(arr.size >= 1 and bool(np.isfinite(arr).all()), name, x, "at least one finite time in seconds")
    return np.sort(arr)


def _max_of_groups(pairs):
    """E[max] of workers drawing from sorted samples: P(max <= t) = prod F_g(t)^count_g."""
    t = np.unique(np.concatenate([x for x, _ in pairs]))
    cdf = np.ones_like(t)
    for x, k in pairs:
        cdf *= (np.searchsorted(x, t, side="right") / x.size) ** float(k)
    return float(np.sum(t * np.diff(cdf, prepend=0.0)))


def empirical_expected_max(values, n=None):
    """E[slowest of n] when each worker draws its step time from your sample.

    Exact for resampling: with the sample sorted, the maximum of n draws is
    the k-th value with probability ``(k/m)^n - ((k-1)/m)^n``; with several
    groups, P(max <= t) = prod over groups of F_g(t)^count_g, with F_g the
    group's empirical CDF. No model, no fitted curve: it cannot see past its
    data, and for n much larger than the sample it tends to the largest
    value, so there it is a lower bound.

    Parameters
    ----------
    values : array_like, or sequence of (array_like, int)
        Measured step times, seconds (at least 2, > 0). With ``n`` left out:
        groups ``(samples, count)``, ``count`` workers (>= 0) each drawing
        from ``samples`` (at least one finite time, seconds).
    n : int or array of int, optional
        Workers, >= 1 (leave out to pass groups).

    Returns
    -------
    float or numpy.ndarray
        Seconds, one per ``n`` (a float for a single n or for groups).

    Examples
    --------
    Two values, two workers: the maximum is 2 unless both draw 1 (1 in 4).

    >>> empirical_expected_max([1.0, 2.0], 2)
    1.75
    >>> round(empirical_expected_max([1.0, 2.0, 3.0], 10**6), 6)   # never above the sample's maximum
    3.0
    >>> empirical_expected_max([([1.0, 2.0], 1)])          # groups; one worker: the mean
    1.5
    >>> empirical_expected_max([([0.05], 3), ([0.1], 1)])  # the slow one decides
    0.1
    """
    if n is None:
        pairs = [(_samples("samples", x), whole("count", k, 0)) for x, k in values]
        total = sum(k for _, k in pairs)
        require(total >= 1, "the total count", total, "at least 1 worker")
        check_memory(8 * 4 * sum(x.size for x, _ in pairs), "the empirical CDFs")
        return _max_of_groups(pairs)
    x = _sample(values)
    ns = whole("n", n)
    result = np.array([_max_of_groups([(x, k)]) for k in np.atleast_1d(ns)])
    return float(result[0]) if np.ndim(ns) == 0 else result


def _normal_max(x, n):
    return float(x.mean() + x.std(ddof=1) * expected_max(stats.norm(), n))


def _exp_tail_max(x, n):
    """E[max of n] when the top 10% of the sample is replaced by an exponential tail."""
    u = float(np.quantile(x, _TAIL_QUANTILE))
    over = x[x > u] - u
    beta = float(over.mean()) if over.size else 0.0
    zeta = over.size / x.size
    body = x[x <= u]
    levels = np.arange(1, body.size + 1) / x.size  # empirical CDF on the body
    gaps = np.diff(np.append(body, u))
    below = float(body[0] + np.sum((1.0 - levels**n) * gaps))
    if beta == 0.0:
        return below
    s = np.linspace(0.0, beta * (np.log(max(n * zeta, 1.0)) + 40.0), 4001)
    above = np.trapezoid(-np.expm1(n * np.log1p(-zeta * np.exp(-s / beta))), s)
    return below + float(above)


@dataclass(frozen=True)
class ScalePrediction:
    """E[slowest of n] predicted from a small sample, with its honest range.

    Attributes
    ----------
    m : int
        Step times measured.
    n : int
        Workers to predict for.
    empirical : float
        Resampling your sample (exact); capped by the sample's maximum.
    normal : float
        A normal fitted to the sample.
    exponential_tail : float
        The sample with an exponential tail above its 90th percentile.
    low, high : float
        The 5th and 95th bootstrap percentiles, the widest over both tail models.
    sample_max : float
        The largest step time measured.
    extrapolating : bool
        True when n > m: the slowest of n lives beyond the 1 - 1/m quantile,
        where the sample has no data.

    Examples
    --------
    >>> pred = predict_at_scale(np.random.default_rng(0).normal(1.0, 0.05, 400), 8, rng=1)
    >>> pred.extrapolating, pred.low < pred.empirical < pred.high
    (False, True)
    """

    m: int
    n: int
    empirical: float
    normal: float
    exponential_tail: float
    low: float
    high: float
    sample_max: float
    extrapolating: bool

    @property
    def width(self):
        """``high - low``, seconds."""
        return self.high - self.low


def predict_at_scale(values, n, *, boot=200, rng=None):
    """Measure at a few workers, predict the slowest of n, with an honest range.

    Parameters
    ----------
    values : array_like
        Measured step times of single workers, seconds (all ranks pooled).
    n : int
        Workers to predict for, >= 1.
    boot : int
        Bootstrap resamples, >= 10.

    Returns
    -------
    ScalePrediction

    Examples
    --------
    48 steps of 8 ranks, predicted at 4096: the range is wide, as it should be.

    >>> x = np.random.default_rng(0).normal(1.0, 0.05, 384)
    >>> pred = predict_at_scale(x, 4096, rng=1)
    >>> pred.extrapolating, round(pred.empirical, 3) == round(pred.sample_max, 3)
    (True, True)
    >>> bool(pred.low < pred.normal < pred.high)
    True
    """
    x = _sample(values)
    n = whole("n", n)
    boot = whole("boot", boot, 10)
    check_memory(8 * boot * x.size, f"{boot} bootstrap resamples of {x.size} step times")
    rng = as_rng(rng)
    resamples = np.sort(rng.choice(x, size=(boot, x.size), replace=True), axis=1)
    normals = np.array([_normal_max(r, n) for r in resamples])
    tails = np.array([_exp_tail_max(r, n) for r in resamples])
    low = float(min(np.quantile(normals, 0.05), np.quantile(tails, 0.05)))
    high = float(max(np.quantile(normals, 0.95), np.quantile(tails, 0.95)))
    return ScalePrediction(int(x.size), n, empirical_expected_max(x, n), _normal_max(x, n), _exp_tail_max(x, n),
                           low, high, float(x[-1]), n > x.size)


def empirical_growth(values, ns, size=1000, rng=None):
    """E[slowest of n] against n when each worker resamples your step times.

    ``exact`` is :func:`empirical_expected_max`; ``monte_carlo`` draws each
    maximum directly (the largest of n draws is the value at rank
    ``ceil(m U^(1/n))``, U uniform), so memory does not grow with n. The
    Gumbel and ``sqrt(2 ln n)`` lines use a normal with your sample's mean
    and standard deviation: they extrapolate past your largest value, where
    resampling cannot go.

    Parameters
    ----------
    values : array_like
        Measured step times, seconds (at least 2, not all equal).
    ns : array_like of int
        Worker counts, each >= 1.
    size : int
        Sampled maxima per n, >= 2.

    Returns
    -------
    MaxGrowth
        Exact and Monte Carlo E[max] per n, with the normal lines beside them.

    Examples
    --------
    >>> g = empirical_growth([1.0, 2.0], [1, 2], size=4000, rng=0)
    >>> g.exact.tolist(), g.mean
    ([1.5, 1.75], 1.5)
    >>> bool(np.all(abs(g.monte_carlo - g.exact) < 4 * g.monte_carlo_se))
    True
    """
    x = _sample(values)
    ns = np.atleast_1d(whole("ns", np.asarray(ns)))
    size = whole("size", size, low=2)
    check_memory(16 * size * ns.size, f"drawing size={size} maxima for {ns.size} worker counts")
    mean, std = float(x.mean()), float(x.std(ddof=1))
    require(std > 0, "values", f"{x.size} equal values", "step times that are not all equal")
    u = as_rng(rng).random((ns.size, size))
    idx = np.ceil(x.size * u ** (1.0 / ns[:, None].astype(float))).astype(int).clip(1, x.size) - 1
    draws = x[idx]
    fit = stats.norm(mean, std)
    gumbel = np.where(ns == 1, mean, np.asarray(gumbel_max_approx(fit, np.maximum(ns, 2)), dtype=float))
    return MaxGrowth(ns, np.atleast_1d(empirical_expected_max(x, ns)), draws.mean(axis=1),
                     draws.std(axis=1, ddof=1) / np.sqrt(size), gumbel,
                     mean + std * np.asarray(sqrt_2_ln_n(ns), dtype=float), mean, std, size)
