"""False alarms of a relative-score straggler detector, exactly.

nvidia-resiliency-ext's straggler detector (``attribution/straggler``)
reports every ``report_time_interval`` seconds. For each timed section, each
rank's summary is the median of the timings it recorded since the last
report (``torch.median``: the lower median, the k-th smallest of m with
k = (m + 1) // 2), and the rank's *relative score* is::

    score_i = min over ranks j of median_j  /  median_i        (at most 1)

``Report.identify_stragglers`` flags every rank whose score is below a
threshold (0.75 by default; NeMo's and Megatron-Bridge's callbacks pass 0.7).
The timings are cleared after each report, so reports are independent.

The timing-noise model: n healthy ranks, each of whose m timings in a window
is an independent draw from the same distribution ``dist`` (seconds; the
scores are ratios, so only its shape matters). A healthy rank is flagged
when its median exceeds the smallest median by more than 1/threshold.

- :func:`p_false_alarm`: P(a report flags at least one healthy rank), from
  the order statistics of the window median (exact up to quadrature).
- :func:`p_rank_flagged`: P(one given healthy rank is flagged in a report).
- :func:`alarms_per_day`: expected false-alarm reports per day.
- :func:`lowest_score_quantile`: quantiles of the lowest healthy score.
- :func:`threshold_for_alarms`: the highest threshold that keeps expected
  false alarms at or below a budget per day.
- :func:`p_false_alarm_normal`: a normal approximation, for checking.
- :func:`lognormal_timing`: the default noise model: lognormal, mean 1 s,
  with a given coefficient of variation.

How the integral is done
------------------------
Let M be one rank's window median, with CDF F_M(x) = I_F(x)(k, m - k + 1)
(regularized incomplete beta of the timing CDF F). A report is clean when
every median lies within a factor r = 1/threshold of the smallest one::

    P(clean) = E[ (P(M <= r X | M > X))**(n - 1) ],  X = the smallest of n medians.

With v uniform on (0, 1), the smallest of n medians sits at Beta level
s = 1 - (1 - v)**(1/n), so the expectation is an integral over v, done with
the order-statistics module's tanh-sinh rule, and P(alarm) = 1 - P(clean) is
summed as ``-expm1((n - 1) log1p(-h))`` so that tiny probabilities keep
their digits.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import as_output, in_range, positive, require, whole
from .order_stats import _1MS, _S, _W, _u_from_s, check_dist, quantile

__all__ = [
    "median_rank",
    "lognormal_timing",
    "p_false_alarm",
    "p_rank_flagged",
    "alarms_per_day",
    "lowest_score_quantile",
    "threshold_for_alarms",
    "p_false_alarm_normal",
    "SECONDS_PER_DAY",
]

SECONDS_PER_DAY = 86_400.0


def median_rank(window):
    """The order-statistic index k of the median of ``window`` timings.

    ``torch.median`` (which the detector's section summaries use) returns the
    lower of the two middle values when the count is even.

    Examples
    --------
    >>> median_rank(5), median_rank(6), median_rank(1)
    (3, 3, 1)
    """
    window = whole("window", window)
    return (window + 1) // 2


def lognormal_timing(cv):
    """A lognormal timing distribution with mean 1 s and coefficient of variation ``cv``.

    Parameters
    ----------
    cv : float
        Standard deviation over mean of one timing, in (0, 10].

    Returns
    -------
    scipy.stats frozen distribution
        ``lognorm(s=sigma, scale=exp(-sigma**2 / 2))`` with sigma**2 = log(1 + cv**2).

    Examples
    --------
    >>> d = lognormal_timing(0.2)
    >>> round(float(d.mean()), 12), round(float(d.std()), 12)
    (1.0, 0.2)
    """
    cv = in_range("cv", cv, 0, 10, low_open=True)
    sigma = math.sqrt(math.log1p(cv * cv))
    from scipy import stats  # loaded on use: scipy.stats costs about a second of import

    return stats.lognorm(sigma, scale=math.exp(-0.5 * sigma * sigma))


def _check(n, threshold, window, dist):
    n = whole("n", n)
    threshold = in_range("threshold", threshold, 0, 1, low_open=True, high_open=True)
    window = whole("window", window)
    dist = check_dist(dist)
    low = float(dist.ppf(0.0))
    require(low >= 0.0, "dist", f"a distribution reaching {low:g}", "a distribution of positive timings (ppf(0) >= 0)")
    return n, threshold, window, dist


def _median_sf(dist, k, window, x):
    """P(median of ``window`` draws > x) = I_{1 - F(x)}(window - k + 1, k)."""
    from scipy import special  # loaded on use, as scipy.stats is: every CLI call imports this module

    return special.betainc(window - k + 1, k, dist.sf(x))


def _median_cdf(dist, k, window, x):
    """P(median of ``window`` draws <= x) = I_{F(x)}(k, window - k + 1)."""
    from scipy import special

    return special.betainc(k, window - k + 1, dist.cdf(x))


def _median_quantile(dist, k, window, s, oms):
    """The median's quantile at level s (oms = 1 - s), through the uniform order statistic."""
    u, w = _u_from_s(k, window, s, oms)
    return quantile(dist, u, w)


def _alarm_curve(n, window, dist):
    """P(alarm) as a function of ratio = 1/threshold (vectorised), for n ranks.

    The nodes (where the smallest of n medians sits) depend only on n, the
    window and dist; the returned function evaluates only the tail there,
    so many thresholds, or a root finder, cost little more than one.
    """
    if n == 1:
        return lambda ratio: np.zeros(np.shape(ratio))
    k = median_rank(window)
    with np.errstate(divide="ignore"):
        log_1mv = np.where(_1MS < 0.5, np.log(_1MS), np.log1p(-_S))
    keep = _W > 0
    oms = np.exp(log_1mv[keep] / n)  # 1 - s: the smallest median's Beta level
    s = -np.expm1(log_1mv[keep] / n)
    x = _median_quantile(dist, k, window, s, oms)
    weights = _W[keep]

    def curve(ratio):
        r = np.asarray(ratio, dtype=float)[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.clip(_median_sf(dist, k, window, r * x) / oms, 0.0, 1.0)
            alarm = np.where(h >= 1.0, 1.0, -np.expm1((n - 1) * np.log1p(-h)))
        alarm = np.where(np.isfinite(alarm), alarm, 0.0)
        return np.clip(np.sum(alarm * weights, axis=-1), 0.0, 1.0)

    return curve


def p_false_alarm(n, threshold, window, dist):
    """P(one report flags at least one of n healthy ranks).

    A rank is flagged when its relative score, the smallest window median
    over its own, is below ``threshold``; so a report raises a false alarm
    when the largest of n medians exceeds the smallest by more than a factor
    1/threshold.

    Parameters
    ----------
    n : int
        Number of ranks, >= 1.
    threshold : float or array_like
        Relative-score threshold, in (0, 1) (0.75: ``identify_stragglers``'
        default; 0.7: the NeMo and Megatron-Bridge callbacks'). An array
        gives one probability per threshold, at little more than one's cost.
    window : int
        Timings per rank in one report window, >= 1.
    dist : frozen scipy.stats distribution
        One timing of a healthy rank, in seconds; positive.

    Returns
    -------
    float or numpy.ndarray
        Probability per report. Small probabilities keep their relative
        precision; near 1, the precision is absolute (about 1e-8).

    Examples
    --------
    Two ranks, one Exp(1) timing each: P(X2 > X1 / t) + P(X1 > X2 / t) = 2t / (1 + t).

    >>> from scipy import stats
    >>> round(p_false_alarm(2, 0.5, 1, stats.expon()), 10)  # 2 * 0.5 / 1.5
    0.6666666667
    >>> round(p_false_alarm(4096, 0.7, 30, lognormal_timing(0.2)), 3)
    0.088
    """
    n, threshold, window, dist = _check(n, threshold, window, dist)
    return as_output(_alarm_curve(n, window, dist)(1.0 / np.asarray(threshold)), threshold)


def p_rank_flagged(n, threshold, window, dist):
    """P(one given healthy rank is flagged in a report), among n ranks.

    The rank is flagged when its median exceeds the smallest of the other
    n - 1 medians by more than 1/threshold. n times this is the expected
    number of healthy ranks flagged per report.

    Parameters are those of :func:`p_false_alarm`.

    Examples
    --------
    With two ranks, each is flagged half the time an alarm is raised:

    >>> from scipy import stats
    >>> round(p_rank_flagged(2, 0.5, 1, stats.expon()), 10)  # t / (1 + t)
    0.3333333333
    """
    n, threshold, window, dist = _check(n, threshold, window, dist)
    if n == 1:
        return 0.0
    k = median_rank(window)
    x = _median_quantile(dist, k, window, _S, _1MS)  # this rank's median, at level s
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.clip(_median_cdf(dist, k, window, threshold * x), 0.0, 1.0)
        flagged = np.where(c >= 1.0, 1.0, -np.expm1((n - 1) * np.log1p(-c)))
    keep = (_W > 0) & np.isfinite(flagged)
    return float(np.clip(np.sum(flagged[keep] * _W[keep]), 0.0, 1.0))


def alarms_per_day(p_report, interval):
    """Expected false-alarm reports per day: (86,400 s / interval) x p_report.

    Parameters
    ----------
    p_report : float or array_like
        P(a report flags a healthy rank), in [0, 1].
    interval : float
        Seconds between reports (``report_time_interval``), > 0.

    Examples
    --------
    >>> alarms_per_day(1 / 288, 300)
    1.0
    """
    p_report = in_range("p_report", p_report, 0, 1)
    interval = positive("interval", interval)
    return p_report * (SECONDS_PER_DAY / interval)


def lowest_score_quantile(n, window, dist, q):
    """The q-quantile of the lowest relative score among n healthy ranks in one report.

    P(lowest score < threshold) is :func:`p_false_alarm`, so this inverts it
    (root finding on log P): the threshold that a share q of reports cross.

    Parameters
    ----------
    n, window, dist
        As in :func:`p_false_alarm`; n >= 2.
    q : float
        Probability level, in (0, 1).

    Returns
    -------
    float
        A relative score in (0, 1).

    Examples
    --------
    Two ranks with one Exp(1) timing each: P(lowest < t) = 2t / (1 + t), so
    the median lowest score is 1/3.

    >>> from scipy import stats
    >>> round(lowest_score_quantile(2, 1, stats.expon(), 0.5), 8)
    0.33333333
    """
    n, _, window, dist = _check(n, 0.5, window, dist)
    require(n >= 2, "n", n, "a whole number >= 2 (one rank always scores 1)")
    q = in_range("q", q, 0, 1, low_open=True, high_open=True)
    curve = _alarm_curve(n, window, dist)
    gap = lambda t: math.log(max(float(curve(1.0 / t)), 1e-300)) - math.log(q)
    lo, hi = 1e-6, 1.0 - 1e-12
    require(gap(lo) < 0.0 < gap(hi), "q", q, "a level the lowest score reaches between 1e-6 and 1")
    from scipy import optimize

    return float(optimize.brentq(gap, lo, hi, xtol=1e-12))


def threshold_for_alarms(n, window, dist, interval, per_day=1.0):
    """The highest threshold whose expected false alarms stay at ``per_day`` or fewer.

    Expected false alarms per day are (86,400 / interval) x P(alarm per
    report), and P(alarm) grows with the threshold; so the answer is the
    (per_day x interval / 86,400)-quantile of the lowest healthy score
    (:func:`lowest_score_quantile`).

    Parameters
    ----------
    n, window, dist
        As in :func:`p_false_alarm`.
    interval : float
        Seconds between reports, > 0.
    per_day : float
        Budget of expected false-alarm reports per day, > 0.

    Returns
    -------
    float
        The threshold, in (0, 1]; 1.0 when even a threshold of 1 meets the
        budget (n = 1, or a budget of one alarm per report or more).

    Examples
    --------
    >>> t = threshold_for_alarms(4096, 30, lognormal_timing(0.2), 300)
    >>> round(t, 4)
    0.6724
    >>> round(alarms_per_day(p_false_alarm(4096, t, 30, lognormal_timing(0.2)), 300), 6)
    1.0
    """
    interval = positive("interval", interval)
    per_day = positive("per_day", per_day)
    n, _, window, dist = _check(n, 0.5, window, dist)
    target = per_day * interval / SECONDS_PER_DAY
    if n == 1 or target >= 1.0:
        return 1.0
    return lowest_score_quantile(n, window, dist, target)


def p_false_alarm_normal(n, threshold, window, cv):
    """P(false alarm per report), approximated: normal log-medians and the range of n normals.

    For lognormal timings with coefficient of variation ``cv``, the log of a
    window median is close to normal with standard deviation
    sqrt(pi / 2) * sigma / sqrt(window) (the large-window variance of a
    sample median), sigma**2 = log(1 + cv**2). A report raises an alarm when
    the range of n such values exceeds log(1/threshold); the range of n
    standard normals is scipy's studentized range with infinite degrees of
    freedom. An independent approximation to check :func:`p_false_alarm`
    against; good for windows of about 15 timings and more.

    Examples
    --------
    >>> round(p_false_alarm_normal(4096, 0.7, 30, 0.2), 2), round(p_false_alarm(4096, 0.7, 30, lognormal_timing(0.2)), 2)
    (0.09, 0.09)
    """
    n = whole("n", n, low=2)
    threshold = in_range("threshold", threshold, 0, 1, low_open=True, high_open=True)
    window = whole("window", window)
    cv = in_range("cv", cv, 0, 10, low_open=True)
    sd = math.sqrt(math.pi / 2 * math.log1p(cv * cv) / window)
    from scipy import stats

    return float(stats.studentized_range(n, np.inf).sf(math.log(1.0 / threshold) / sd))
