"""Steps of n workers, drawn one after another: what a "draw one step" button shows.

A synchronous step draws n worker times and keeps the largest. Drawing steps
one by one, and piling each step's slowest into a histogram, shows the
distribution of the maximum form (notebook 03): it sits well to the right of
one worker's mean, and it is narrow.

:func:`draw_steps` draws a seeded sequence of steps at once and keeps, per
step, its n worker times binned on shared edges (so a chart can show any
step without the n raw times) and its slowest worker. A button that "draws
the next step" shows the next one of the sequence: the same seed gives the
same steps, in the notebook, in the tests and on the static site.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_memory, whole
from ..math.order_stats import check_dist

__all__ = ["StepDraws", "draw_steps"]

# Steps drawn per block: keeps the temporary (block, n) array small for any n.
_BLOCK = 32


@dataclass(frozen=True)
class StepDraws:
    """A sequence of steps of n workers: each step's worker times, binned, and its slowest.

    Attributes
    ----------
    n : int
        Workers per step.
    edges : numpy.ndarray
        ``bins + 1`` shared bin edges, in seconds; every drawn time lies inside.
    counts : numpy.ndarray
        ``(steps, bins)`` integers: how many of the step's n workers fall in each bin.
    slowest : numpy.ndarray
        ``(steps,)``: the step's slowest worker time, in seconds.
    slowest_worker : numpy.ndarray
        ``(steps,)``: which worker (0 .. n - 1) was slowest.
    mean : float
        One worker's mean step time, in seconds (from the distribution).

    Examples
    --------
    >>> from scipy import stats
    >>> d = draw_steps(stats.norm(1.0, 0.1), n=64, steps=5, bins=20, rng=0)
    >>> d.counts.shape, d.counts.sum(axis=1).tolist()
    ((5, 20), [64, 64, 64, 64, 64])
    >>> bool((d.slowest > d.mean).all())
    True
    """

    n: int
    edges: np.ndarray
    counts: np.ndarray
    slowest: np.ndarray
    slowest_worker: np.ndarray
    mean: float

    @property
    def steps(self):
        return int(self.slowest.size)

    def bin_of(self, t):
        """The bin index (0 .. bins - 1) of each time in ``t``."""
        return np.clip(np.searchsorted(self.edges, t, side="right") - 1, 0, self.counts.shape[1] - 1)

    def so_far(self, k):
        """The maxima of the first ``k`` steps (1 <= k <= steps)."""
        k = whole("k", k, low=1, high=self.steps)
        return self.slowest[:k]


def draw_steps(dist, n, steps, *, bins=40, rng=None):
    """Draw ``steps`` steps of ``n`` workers; bin each step's times and keep its slowest.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        One worker's step time, in seconds (drawn with its ``rvs``).
    n : int
        Workers per step, 1 .. 65,536.
    steps : int
        Steps to draw, 1 .. 5,000.
    bins : int
        Shared bins for the worker times and the maxima, 5 .. 200.
    rng : numpy.random.Generator, int or None

    Returns
    -------
    StepDraws

    Examples
    --------
    >>> from scipy import stats
    >>> d = draw_steps(stats.norm(1.0, 0.1), n=4096, steps=200, rng=0)
    >>> round(float(d.slowest.mean()), 2), round(float(d.slowest.std() / 0.1), 1)   # 3.63 σ out, a third as wide
    (1.36, 0.3)
    >>> draw_steps(stats.norm(), n=0, steps=1)
    Traceback (most recent call last):
    ...
    ValueError: n must be a whole number in 1..65536, got 0
    """
    dist = check_dist(dist)
    n = whole("n", n, low=1, high=65_536)
    steps = whole("steps", steps, low=1, high=5_000)
    bins = whole("bins", bins, low=5, high=200)
    check_memory(min(steps, _BLOCK) * n * 24 + steps * bins * 8, f"drawing {steps} steps of n={n} workers")
    rng = as_rng(rng)
    blocks = [np.asarray(dist.rvs(size=(min(_BLOCK, steps - s), n), random_state=rng), dtype=float)
              for s in range(0, steps, _BLOCK)]
    lo = min(float(b.min()) for b in blocks)
    hi = max(float(b.max()) for b in blocks)
    pad = 0.02 * (hi - lo) if hi > lo else 0.5
    edges = np.linspace(lo - pad, hi + pad, bins + 1)
    counts = np.vstack([np.stack([np.histogram(row, edges)[0] for row in b]) for b in blocks])
    slowest = np.concatenate([b.max(axis=1) for b in blocks])
    worker = np.concatenate([b.argmax(axis=1) for b in blocks])
    return StepDraws(n, edges, counts, slowest, worker, float(dist.mean()))
