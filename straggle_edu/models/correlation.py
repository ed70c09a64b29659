"""Correlated slowness: when workers are not slow independently.

Notebooks 02 and 03 assume each worker is slow on its own. Real slowness
is often shared: the workers on one host share its CPU, memory bus and NIC,
the hosts under one switch share its links, and garbage-collection pauses
can fire on every worker at once. This module relaxes independence in two
ways, each with a closed form (or an exact one-dimensional integral), each
tested against a simulation.

- **Slow events** (a pause, a stall), for the tail probability of 02:
  each worker is slow with probability ``p``, as before, but a share
  ``shared`` of that comes from events that hit a whole group of ``group``
  workers at once (a host: 8; a switch: 256; a synchronized GC: all n).
  :func:`p_any_slow_shared` gives ``P(some worker slow)``, which falls from
  ``1 - (1 - p)^n`` (independent) towards ``1 - (1 - p)^(n / group)``
  (fully shared): shared events hit many workers at once, so fewer steps
  are touched. :func:`sample_slow_shared` draws the same model.
- **Jitter with a shared factor**, for E[max] of 03: worker i's jitter is
  ``Z_i = sqrt(rho) H + sqrt(1 - rho) E_i`` in standard deviations, with
  ``H`` shared by its group and ``E_i`` its own, all standard normal, so
  each worker's marginal is unchanged and two workers of one group have
  correlation ``rho``. :func:`expected_max_correlated` gives E[max of n] in
  σ: ``sqrt(1 - rho) e_n`` when the whole job shares the factor (``e_n``
  the independent value), and an exact integral for groups.
  :func:`sample_correlated_max` draws it.

Both keep each worker's own distribution fixed: only the joint behaviour
changes. Correlation *lowers* the tail probability and E[max] at a fixed
marginal, because workers that are slow together waste a step together.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from .._validate import as_rng, check_memory, in_range, probability, whole
from ..math.order_stats import expected_max
from .samplers import sample_max

__all__ = [
    "p_any_slow_shared",
    "sample_slow_shared",
    "expected_max_correlated",
    "sample_correlated_max",
    "same_slowest_twice",
]


def _groups(n, group):
    """``(n, group, full groups, workers left over)`` for n workers in groups of ``group`` (all when None)."""
    n = whole("n", n)
    group = n if group is None else whole("group", group, 1, n)
    return n, group, n // group, n % group


def p_any_slow_shared(p, n, shared=0.0, group=None):
    """P(some worker is slow) when part of the slowness is shared by groups.

    Each worker is slow with probability ``p``. A group event, with
    probability ``q = shared * p``, makes all ``group`` workers of one group
    slow at once; otherwise each worker is slow on its own with probability
    ``p0 = (p - q) / (1 - q)``, so the per-worker rate stays ``p``. Then

        P(group of g clean) = (1 - q) (1 - p0)^g
        P(some slow) = 1 - prod over groups of P(group clean)

    (a last, smaller group takes the workers left over).

    Parameters
    ----------
    p : float
        Per-worker probability of a slow step, in [0, 1].
    n : int
        Workers, >= 1.
    shared : float
        Share of each worker's slowness that comes from group events, in [0, 1].
        0 is the independent model; 1 means a worker is slow only with its group.
    group : int, optional
        Workers per group (a host: 8), 1..n. Default n: one event for the
        whole job, such as a synchronized garbage-collection pause.

    Returns
    -------
    float

    Examples
    --------
    Independent, it is 02's ``1 - (1 - p)^n``; fully shared by the whole job,
    it is just p:

    >>> round(p_any_slow_shared(0.01, 100), 4), round(p_any_slow_shared(0.01, 100, shared=1.0), 4)
    (0.634, 0.01)

    Hosts of 8 that are slow together: 100 workers behave like 13 groups.

    >>> round(p_any_slow_shared(0.01, 100, shared=1.0, group=8), 4)
    0.1225
    """
    p = probability("p", p)
    shared = probability("shared", shared)
    n, group, full, rest = _groups(n, group)
    q = shared * p
    if q >= 1.0:
        return 1.0
    p0 = (p - q) / (1.0 - q)
    log_clean_one = np.log1p(-p0) if p0 < 1.0 else -np.inf
    log_group = lambda g: np.log1p(-q) + g * log_clean_one
    log_clean = full * log_group(group) + (log_group(rest) if rest else 0.0)
    return float(-np.expm1(log_clean))


def sample_slow_shared(p, n, shared=0.0, group=None, size=1000, rng=None):
    """Draw which workers are slow, step by step, under the shared-event model.

    Parameters
    ----------
    p, n, shared, group
        As in :func:`p_any_slow_shared`.
    size : int
        Steps to draw, >= 1.

    Returns
    -------
    numpy.ndarray of bool, shape (size, n)
        True where a worker is slow on a step.

    Examples
    --------
    >>> slow = sample_slow_shared(0.01, 100, shared=0.5, group=8, size=20_000, rng=0)
    >>> round(float(slow.mean()), 3), round(float(slow.any(axis=1).mean()), 2)
    (0.01, 0.43)
    """
    p = probability("p", p)
    shared = probability("shared", shared)
    n, group, full, rest = _groups(n, group)
    size = whole("size", size)
    check_memory(2 * size * n, f"{size} steps of {n} workers")
    rng = as_rng(rng)
    q = shared * p
    p0 = (p - q) / (1.0 - q) if q < 1.0 else 0.0
    hosts = full + (1 if rest else 0)
    event = rng.random((size, hosts)) < q
    own = rng.random((size, n)) < p0
    return own | np.repeat(event, group, axis=1)[:, :n]


_NODES, _WEIGHTS = special.roots_hermitenorm(160)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _log_group_cdf(t, rho, g):
    """log P(max of a group of g <= t), in σ, given the shared factor's law."""
    if g == 0:
        return np.zeros_like(t)
    inner = special.ndtr((t[:, None] - np.sqrt(rho) * _NODES[None, :]) / np.sqrt(1.0 - rho))
    return np.log(np.maximum((inner**g) @ _WEIGHTS, 1e-300))


def expected_max_correlated(n, rho=0.0, group=None):
    """E[max of n] standard-normal jitters whose groups share a factor, in σ.

    Worker i's jitter is ``sqrt(rho) H_g + sqrt(1 - rho) E_i``: ``H_g``
    shared by its group, ``E_i`` its own. When the whole job is one group
    the shared part moves every worker together and drops out of the
    maximum: ``E[max] = sqrt(1 - rho) e_n``. For smaller groups
    ``P(max <= t) = prod over groups of E_H[Phi((t - sqrt(rho) H) / sqrt(1 - rho))^g]``,
    integrated exactly (Gauss-Hermite over H, a fine grid over t).

    Parameters
    ----------
    n : int
        Workers, >= 1.
    rho : float
        Correlation of two workers in one group, in [0, 1].
    group : int, optional
        Workers per group, 1..n (default n: the whole job shares the factor).

    Returns
    -------
    float
        E[max] in standard deviations above the mean.

    Examples
    --------
    >>> round(expected_max_correlated(4096), 2)                  # independent: 03's 3.63
    3.63
    >>> round(expected_max_correlated(4096, rho=0.5), 2)         # sqrt(0.5) * 3.63
    2.57
    >>> round(expected_max_correlated(4096, rho=1.0, group=8), 2)  # 512 hosts move as one each
    3.04
    """
    n, group, full, rest = _groups(n, group)
    rho = in_range("rho", rho, 0.0, 1.0)
    if n == 1:
        return 0.0
    e_n = expected_max(stats.norm(), n)
    if group == n or rho == 0.0:
        return float(np.sqrt(1.0 - rho) * e_n)
    if rho == 1.0:
        return float(expected_max(stats.norm(), full + (1 if rest else 0)))
    t = np.linspace(-6.0, 9.0, 1501)
    log_cdf = full * _log_group_cdf(t, rho, group) + _log_group_cdf(t, rho, rest)
    cdf = np.exp(log_cdf)
    below, above = t < 0, t >= 0
    return float(np.trapezoid(1.0 - cdf[above], t[above]) - np.trapezoid(cdf[below], t[below]))


def sample_correlated_max(n, rho=0.0, group=None, size=1000, rng=None):
    """Draw the slowest of n correlated standard-normal jitters, in σ.

    Each group's maximum is its shared factor plus the maximum of its own
    parts, drawn directly (:func:`~straggle_edu.models.samplers.sample_max`),
    so the cost does not grow with the group's size.

    Parameters
    ----------
    n, rho, group
        As in :func:`expected_max_correlated`.
    size, rng
        As in :func:`sample_slow_shared`.

    Returns
    -------
    numpy.ndarray, shape (size,)

    Examples
    --------
    >>> x = sample_correlated_max(4096, rho=0.5, size=20_000, rng=0)
    >>> round(float(x.mean()), 1)
    2.6
    """
    n, group, full, rest = _groups(n, group)
    rho = in_range("rho", rho, 0.0, 1.0)
    size = whole("size", size)
    check_memory(16 * size * (full + 1), f"{size} steps of {full + 1} groups")
    rng = as_rng(rng)
    norm = stats.norm()
    own = sample_max(norm, group, size * full, rng=rng).reshape(size, full)
    shared = rng.standard_normal((size, full))
    group_max = np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * own
    if rest:
        last = np.sqrt(rho) * rng.standard_normal(size) + np.sqrt(1.0 - rho) * sample_max(norm, rest, size, rng=rng)
        group_max = np.column_stack([group_max, last])
    return group_max.max(axis=1)


def same_slowest_twice(n, steps=2):
    """P(one worker is the slowest on ``steps`` steps in a row), if steps are independent.

    Under the independent model each step's slowest worker is a fresh
    draw, equally likely to be any of the n, so the same worker leads
    ``steps`` steps in a row with probability ``(1 / n)^(steps - 1)``. A
    slow worker that leads step after step (a *persistent* straggler) is
    therefore evidence against independence over time.

    Parameters
    ----------
    n : int
        Workers, >= 1.
    steps : int
        Consecutive steps, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> same_slowest_twice(4096), same_slowest_twice(8, steps=3)
    (0.000244140625, 0.015625)
    """
    n = whole("n", n)
    steps = whole("steps", steps)
    return float((1.0 / n) ** (steps - 1))
