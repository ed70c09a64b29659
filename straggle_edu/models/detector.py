"""A straggler detector's reports, simulated from raw timings.

What nvidia-resiliency-ext's detector does each report, done on random
timings: every rank records ``window`` timings of a section, takes their
median (``torch.median``, the lower median), and gets the relative score
min over ranks of the medians / its own median. The math layer
(:mod:`straggle_edu.math.detector`) computes the same probabilities exactly;
this module is the independent check.

- :func:`sample_window_medians`: medians of raw timing draws, reports x ranks.
- :func:`relative_scores`: the detector's relative scores from those medians.
- :func:`simulate_reports`: seeded reports of healthy ranks, summarised as a
  :class:`DetectorSimulation` (lowest score per report, flags per threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_memory, in_range, require, whole
from ..math.detector import median_rank
from ..math.order_stats import check_dist

__all__ = ["sample_window_medians", "relative_scores", "simulate_reports", "DetectorSimulation"]

_CHUNK = 2**21  # timings drawn at a time (16 MiB of float64)
_MAX_TIMINGS = 2 * 10**8


def sample_window_medians(n, window, dist, reports, rng=None):
    """Each rank's median of ``window`` raw timings, for ``reports`` report windows.

    Parameters
    ----------
    n : int
        Number of ranks, >= 1.
    window : int
        Timings per rank per report, >= 1.
    dist : frozen scipy.stats distribution
        One timing, in seconds.
    reports : int
        Number of report windows, >= 1.

    Returns
    -------
    numpy.ndarray
        Shape (reports, n), seconds: the lower median of each rank's window.

    Examples
    --------
    >>> from scipy import stats
    >>> sample_window_medians(3, 5, stats.expon(), 2, rng=0).shape
    (2, 3)
    """
    n, window, reports = whole("n", n), whole("window", window), whole("reports", reports)
    dist, rng = check_dist(dist), as_rng(rng)
    total = n * window * reports
    require(total <= _MAX_TIMINGS, "n x window x reports", total, f"at most {_MAX_TIMINGS:,} timings")
    check_memory(n * reports * 8 + min(total, _CHUNK) * 16, f"simulating {total:,} timings")
    k = median_rank(window)
    rows = max(1, _CHUNK // window)
    medians = np.empty(n * reports)
    for start in range(0, n * reports, rows):
        stop = min(start + rows, n * reports)
        x = np.asarray(dist.rvs(size=(stop - start, window), random_state=rng), dtype=float)
        medians[start:stop] = np.partition(x, k - 1, axis=1)[:, k - 1]
    return medians.reshape(reports, n)


def relative_scores(medians):
    """The detector's relative scores: the smallest median in a report over each rank's.

    Parameters
    ----------
    medians : array_like
        Shape (..., n): one report's window medians per rank, seconds (> 0).

    Returns
    -------
    numpy.ndarray
        Same shape, in (0, 1]; the fastest rank scores 1.

    Examples
    --------
    >>> relative_scores([1.0, 2.0, 1.25]).tolist()
    [1.0, 0.5, 0.8]
    """
    medians = in_range("medians", medians, 0, low_open=True)
    medians = np.atleast_1d(medians)
    return medians.min(axis=-1, keepdims=True) / medians


@dataclass(frozen=True)
class DetectorSimulation:
    """Simulated reports of n healthy ranks.

    Attributes
    ----------
    lowest : numpy.ndarray
        The lowest relative score in each report, shape (reports,).
    flagged : numpy.ndarray
        Ranks below each threshold in each report, shape (reports, thresholds).
    thresholds : tuple of float
    n, window : int
    """

    lowest: np.ndarray
    flagged: np.ndarray
    thresholds: tuple
    n: int
    window: int

    @property
    def reports(self):
        """Number of simulated reports."""
        return int(self.lowest.size)

    def p_false_alarm(self):
        """Share of reports that flag some rank, one per threshold, and its standard error."""
        p = (self.flagged > 0).mean(axis=0)
        return p, np.sqrt(p * (1 - p) / self.reports)

    def z_scores(self, p_exact):
        """(simulated share - exact P) / its standard error under the exact P, one per threshold.

        Within about +-3 when the exact P is right; 0 where both are 0 or 1.
        """
        p_exact = np.atleast_1d(in_range("p_exact", p_exact, 0, 1))
        p_sim, _ = self.p_false_alarm()
        se = np.sqrt(p_exact * (1 - p_exact) / self.reports)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, (p_sim - p_exact) / se, np.where(p_sim == p_exact, 0.0, np.inf))
        return z

    def lowest_quantile(self, q):
        """The q-quantile of the lowest score per report (``numpy.quantile``)."""
        return float(np.quantile(self.lowest, in_range("q", q, 0, 1)))


def simulate_reports(n, window, dist, reports, thresholds=(0.7, 0.75), rng=None):
    """Seeded reports of n healthy ranks, as the detector scores them.

    Parameters
    ----------
    n, window, dist, reports, rng
        As in :func:`sample_window_medians`.
    thresholds : sequence of float
        Relative-score thresholds to count flags against, each in (0, 1).

    Returns
    -------
    DetectorSimulation

    Examples
    --------
    >>> from scipy import stats
    >>> sim = simulate_reports(2, 1, stats.expon(), 20_000, thresholds=[0.5], rng=0)
    >>> p, se = sim.p_false_alarm()
    >>> abs(float(p[0]) - 2 / 3) < 3 * float(se[0])  # exact: 2t / (1 + t)
    True
    """
    thresholds = tuple(float(t) for t in np.atleast_1d(in_range("thresholds", thresholds, 0, 1, low_open=True,
                                                                        high_open=True)))
    medians = sample_window_medians(n, window, dist, reports, rng)
    lowest = medians.min(axis=1) / medians.max(axis=1)
    scores = relative_scores(medians)
    flagged = np.stack([(scores < t).sum(axis=1) for t in thresholds], axis=1)
    return DetectorSimulation(lowest, flagged, thresholds, int(medians.shape[1]), whole("window", window))
