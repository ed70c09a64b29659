"""Where a synchronous job's GPU time goes: working, or waiting at the barrier.

Every step, each worker computes, then waits at the barrier for the slowest,
then synchronizes. A worker whose step took ``T_i`` waits ``max - T_i``, so
across the cluster the share of GPU time spent waiting is::

    lost_fraction = (E[slowest] - mean worker time) / E[step]

with ``E[step] = E[slowest] + sync``. With free synchronization it equals
``1 - scaling_efficiency`` (:func:`~straggle_edu.models.cluster.scaling_efficiency`);
in general ``1 - scaling_efficiency = lost_fraction + sync / E[step]``. It is the
``lost_fraction`` that :func:`straggle_edu.cost_of_stragglers` turns into
GPU-hours and dollars: this module says where the article's "10%" comes from.

- :func:`lost_fraction`, :func:`lost_fraction_curves`: the share lost, from
  the model (n, jitter, pauses, sync).
- :func:`jitter_for_lost_fraction`: the inverse question, how much jitter
  loses a given share.
- :func:`slow_card`, :func:`slow_card_curves`: one persistently slow card
  among jittery peers, and what it costs the other n - 1 workers.
- :func:`slow_card_leads`, :func:`slow_card_crossover`: how often the slow
  card is the slowest worker, and the jitter above which it usually is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .._validate import in_range, instance, nonnegative, require, whole
from .cluster import Cluster, expected_slowest, expected_step_time
from .step_time import StepTime

__all__ = [
    "lost_fraction",
    "lost_fraction_curves",
    "jitter_for_lost_fraction",
    "SlowCard",
    "slow_card",
    "slow_card_curves",
    "slow_card_leads",
    "slow_card_crossover",
]

HOURS_PER_DAY = 24.0
_MAX_JITTER = 0.2  # beyond this the normal jitter model gives negative step times


def _cluster(cluster):
    return instance("cluster", cluster, Cluster)


def lost_fraction(cluster):
    """Share of the cluster's GPU time spent waiting at the barrier.

    ``(E[slowest] - mean worker time) / E[step]``, in [0, 1): the fraction
    of GPU-hours a job pays for while its workers wait for the slowest one.

    Parameters
    ----------
    cluster : Cluster

    Returns
    -------
    float

    Examples
    --------
    4096 workers with 3% jitter lose about a tenth of their time:

    >>> round(lost_fraction(Cluster.uniform(4096, StepTime(1.0, jitter=0.03))), 4)
    0.0981
    >>> lost_fraction(Cluster.uniform(1, StepTime(1.0, jitter=0.05)))
    0.0
    >>> lost_fraction(Cluster.with_slow(8, StepTime(1.0, jitter=0.0), 1, 1.5))  # 7 of 8 wait 0.5 s of 1.5 s
    0.2916666666666667
    """
    cluster = _cluster(cluster)
    slowest = expected_slowest(cluster)
    step = slowest + cluster.sync_time
    return float(min(max((slowest - cluster.mean_worker_time) / step, 0.0), 1.0))


def _slowest_curve(step_time, ns, extra=None, per_sigma=24, max_points=200_000):
    """E[slowest of n] for every n in ``ns`` (all >= 1) at once, plus one
    ``extra`` worker (a StepTime) when given.

    The trapezoid rule on one shared grid: E = a + integral from a to b of
    (1 - G(t)) dt, G(t) = F(t)**n (times the extra worker's CDF), with
    G(a) <= 1e-13 and 1 - G(b) ~ 1e-18. The integrand is flat at both ends,
    so the rule converges faster than any power of the step; 24 points per
    sigma give about 1e-13 relative error (tests compare with the exact
    :func:`expected_slowest`). About a millisecond for a whole curve, where
    one exact call per n takes several. Every distribution must have jitter.
    """
    dists = [step_time] if extra is None else [step_time, extra]
    a = min(float(d.ppf(1e-13)) for d in dists)
    b = max(float(d.isf(1e-18 / (ns.max() + 1))) for d in dists)
    sigma = min(d.sigma for d in dists)
    m = int(min(max((b - a) / sigma * per_sigma, 2000), max_points))
    t = np.linspace(a, b, m)
    log_g = ns[:, None] * np.asarray(step_time.logcdf(t), dtype=float)[None, :]
    if extra is not None:
        log_g = log_g + np.asarray(extra.logcdf(t), dtype=float)[None, :]
    f = -np.expm1(log_g)
    return a + (t[1] - t[0]) * (f.sum(axis=1) - 0.5 * (f[:, 0] + f[:, -1]))


def lost_fraction_curves(ns, scenarios, *, sync=0.0):
    """Rows ``{"n", "scenario", "lost", "slowest"}`` of :func:`lost_fraction`
    (and E[slowest] in seconds) against n, for uniform clusters of each
    scenario's step time.

    Computes a whole curve in about a millisecond (one shared grid for all
    n), so an explorer can redraw it on every slider move.

    Parameters
    ----------
    ns : array_like of int
        Worker counts, at most 1000 of them.
    scenarios : dict of {label: StepTime}
        One worker's step time per scenario.
    sync : float
        Synchronization seconds per step, >= 0.

    Examples
    --------
    >>> rows = lost_fraction_curves([1, 4096], {"3% jitter": StepTime(1.0, jitter=0.03)})
    >>> [round(r["lost"], 4) for r in rows]
    [0.0, 0.0981]
    """
    ns = whole("ns", np.atleast_1d(np.asarray(ns)))
    require(ns.ndim == 1 and ns.size <= 1000, "ns", ns, "a list of at most 1000 worker counts")
    sync = nonnegative("sync", sync)
    rows = []
    for label, step_time in dict(scenarios).items():
        if not isinstance(step_time, StepTime):
            require(False, f"scenario {label!r}", type(step_time).__name__, "a StepTime")
        mean = float(step_time.mean())
        slowest = np.full(ns.shape, mean)
        many = ns >= 2
        if many.any() and step_time.degenerate:
            slowest[many] = [expected_slowest(Cluster.uniform(int(n), step_time)) for n in ns[many]]
        elif many.any():
            slowest[many] = _slowest_curve(step_time, ns[many])
        lost = np.clip((slowest - mean) / (slowest + sync), 0.0, 1.0)
        rows += [{"n": int(n), "scenario": str(label), "lost": float(v), "slowest": float(e)} for n, v, e in zip(ns, lost, slowest)]
    return rows


def jitter_for_lost_fraction(n, target, *, base=1.0, pause_prob=0.0, pause=0.0, sync=0.0):
    """The jitter at which n workers lose ``target`` of their time waiting.

    Solves ``lost_fraction(Cluster.uniform(n, StepTime(base, jitter, pause_prob, pause), sync)) = target``
    for the jitter, in [0, 0.2] (beyond 0.2 the normal jitter model stops
    describing a step time).

    Parameters
    ----------
    n : int
        Workers, >= 2.
    target : float
        Lost fraction, in (0, 1).
    base, pause_prob, pause, sync
        As in :class:`StepTime` and :class:`Cluster`.

    Returns
    -------
    float
        The jitter (coefficient of variation).

    Examples
    --------
    With no pauses this is ``target (base + sync) / (base e_n (1 - target))``,
    e_n = E[max of n standard normals] = 3.6261 at n = 4096:

    >>> round(jitter_for_lost_fraction(4096, 0.10), 5)
    0.03064
    """
    n = whole("n", n, low=2)
    target = in_range("target", target, 0.0, 1.0, low_open=True, high_open=True)
    make = lambda j: Cluster.uniform(n, StepTime(base, jitter=j, pause_prob=pause_prob, pause=pause), sync=sync)
    gap = lambda j: lost_fraction(make(j)) - target
    at_zero, at_max = gap(0.0), gap(_MAX_JITTER)
    require(at_zero < 0, "target", target, f"above {target + at_zero:.4g}, the share these pauses lose with no jitter at all")
    require(at_max >= 0, "target", target, f"at most {target + at_max:.4g}, the share lost at jitter {_MAX_JITTER}")
    return float(optimize.brentq(gap, 0.0, _MAX_JITTER, xtol=1e-12, rtol=1e-12))


@dataclass(frozen=True)
class SlowCard:
    """One persistently slow card among n - 1 jittery peers.

    Attributes
    ----------
    n : int
        Workers, the slow card included.
    step_time : StepTime
        A healthy worker's step time.
    slow_factor : float
        The slow card's compute-time multiplier (1.05 = 5% slower).
    sync : float
        Synchronization seconds per step.
    step_without, step_with : float
        E[step] in seconds with n healthy workers, and with one card slow.

    Examples
    --------
    >>> card = slow_card(4096, StepTime(1.0, jitter=0.0), 1.05)
    >>> round(card.own_shortfall, 6), round(card.peer_wait, 2)   # 0.05 s itself; 4,095 peers wait 0.05 s each
    (0.05, 204.75)
    """

    n: int
    step_time: StepTime
    slow_factor: float
    sync: float
    step_without: float
    step_with: float

    @property
    def job_slowdown(self):
        """How much slower the job runs because of the card: ``step_with / step_without - 1``.

        ``slow_factor - 1`` with no jitter; less once the peers' own jitter
        already stretches the step."""
        return self.step_with / self.step_without - 1.0

    @property
    def own_shortfall(self):
        """Extra compute the slow card itself needs per step, in seconds."""
        return self.step_time.mu * (self.slow_factor - 1.0)

    @property
    def peer_wait(self):
        """GPU-seconds per step the other n - 1 workers spend waiting at the
        barrier, for any reason: ``(n - 1) (E[slowest] - their mean)``."""
        slowest = self.step_with - self.sync
        return (self.n - 1) * (slowest - float(self.step_time.mean()))

    @property
    def peer_wait_caused(self):
        """GPU-seconds per step the other n - 1 workers wait because of the
        slow card: ``(n - 1) (step_with - step_without)``."""
        return (self.n - 1) * (self.step_with - self.step_without)

    @property
    def amplification(self):
        """``peer_wait_caused / own_shortfall``: how many times the card's own
        shortfall the rest of the cluster pays (n - 1 with no jitter)."""
        return self.peer_wait_caused / self.own_shortfall if self.own_shortfall > 0 else 0.0

    def gpu_hours_wasted(self, days):
        """GPU-hours the other n - 1 workers spend waiting on the slow card
        during a run that lasts ``days`` days (with the card in it).

        ``(n - 1) * days * 24 * (step_with - step_without) / step_with``."""
        days = nonnegative("days", days)
        return (self.n - 1) * days * HOURS_PER_DAY * (self.step_with - self.step_without) / self.step_with


def slow_card(n, step_time=None, slow_factor=1.05, *, sync=0.0):
    """What one persistently slow card costs a synchronous job of n workers.

    Parameters
    ----------
    n : int
        Workers, the slow card included, >= 1.
    step_time : StepTime, optional
        A healthy worker's step time (default ``StepTime(1.0, jitter=0.05)``).
    slow_factor : float
        The card's compute-time multiplier, >= 1.
    sync : float
        Synchronization seconds per step, >= 0.

    Returns
    -------
    SlowCard
        The step with and without the card, and what it costs the job and its peers.

    Examples
    --------
    With no jitter, the whole job runs 5% slower and 4095 cards each wait
    0.05 s a step, 4095 times the card's own shortfall:

    >>> card = slow_card(4096, StepTime(1.0, jitter=0.0), 1.05)
    >>> round(card.job_slowdown, 12), round(card.peer_wait_caused, 9), round(card.amplification, 6)
    (0.05, 204.75, 4095.0)

    With 5% jitter the peers' own spikes hide most of it:

    >>> round(slow_card(4096, StepTime(1.0, jitter=0.05), 1.05).job_slowdown, 5)
    0.00012
    """
    n = whole("n", n)
    step_time = StepTime(1.0, jitter=0.05) if step_time is None else step_time
    if not isinstance(step_time, StepTime):
        require(False, "step_time", type(step_time).__name__, "a StepTime")
    slow_factor = in_range("slow_factor", slow_factor, 1.0)
    sync = nonnegative("sync", sync)
    without = expected_step_time(Cluster.uniform(n, step_time, sync=sync))
    with_ = expected_step_time(Cluster.with_slow(n, step_time, 1, slow_factor, sync=sync))
    return SlowCard(n, step_time, slow_factor, sync, without, max(with_, without))


def slow_card_curves(ns, jitters, *, base=1.0, slow_factor=1.05):
    """Rows ``{"n", "jitter", "job_slowdown", "peer_wait_caused"}`` of
    :func:`slow_card` for every n and jitter.

    Each jitter's curve is integrated on one shared grid for all n (see
    :func:`lost_fraction_curves`), a millisecond or so, so an explorer can
    redraw it on every slider move; tests compare it with :func:`slow_card`.

    Examples
    --------
    >>> rows = slow_card_curves([2, 4096], [0.0, 0.05])
    >>> [(r["n"], r["jitter"], round(r["job_slowdown"], 4)) for r in rows]
    [(2, 0.0, 0.05), (4096, 0.0, 0.05), (2, 0.05, 0.0314), (4096, 0.05, 0.0001)]
    """
    ns = whole("ns", np.atleast_1d(np.asarray(ns)))
    require(ns.ndim == 1 and ns.size <= 1000, "ns", ns, "a list of at most 1000 worker counts")
    jitters = np.atleast_1d(in_range("jitters", jitters, 0.0, _MAX_JITTER))
    require(jitters.size <= 100, "jitters", jitters, "at most 100 jitters")
    slow_factor = in_range("slow_factor", slow_factor, 1.0)
    rows = []
    for j in jitters.tolist():
        t = StepTime(base, jitter=j)
        if t.degenerate:  # every step takes base, or base * slow_factor
            without, with_ = np.full(ns.shape, t.mu), np.full(ns.shape, t.mu * slow_factor)
        else:
            without = np.where(ns == 1, t.mu, _slowest_curve(t, ns))
            with_ = np.where(ns == 1, t.mu * slow_factor, _slowest_curve(t, ns - 1, extra=t.with_slowdown(slow_factor)))
        with_ = np.maximum(with_, without)
        for n, w0, w1 in zip(ns.tolist(), without.tolist(), with_.tolist()):
            rows.append({"n": n, "jitter": j, "job_slowdown": w1 / w0 - 1.0, "peer_wait_caused": (n - 1) * (w1 - w0)})
    return rows


_Z, _W = np.polynomial.hermite_e.hermegauss(200)
_W = _W / _W.sum()


def slow_card_leads(n, jitter, slow_factor=1.05):
    """P(the slow card is the slowest of n), with normal jitter.

    The card takes ``f (1 + j Z_0)``, each of the n - 1 peers ``1 + j Z_i``:
    ``P = E[Phi(((f - 1) + f j Z_0) / j)^(n - 1)]`` over ``Z_0``.

    Parameters
    ----------
    n : int
        Workers, the card included, >= 1.
    jitter : float
        The peers' jitter j (σ / mean), >= 0.
    slow_factor : float
        The card's multiplier f, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> slow_card_leads(4096, 0.0), round(slow_card_leads(4096, 0.01), 3), round(slow_card_leads(4096, 0.05), 3)
    (1.0, 0.894, 0.008)
    """
    n = whole("n", n)
    jitter = in_range("jitter", jitter, 0.0, _MAX_JITTER)
    f = in_range("slow_factor", slow_factor, 1.0)
    if n == 1 or (jitter == 0.0 and f > 1.0):
        return 1.0
    if jitter == 0.0:
        return 1.0 / n
    z = ((f - 1.0) + f * jitter * _Z) / jitter
    return float(np.exp((n - 1) * stats.norm.logcdf(z)) @ _W)


def slow_card_crossover(n, slow_factor=1.05, share=0.5):
    """The peers' jitter at which the slow card is the slowest on ``share`` of steps.

    Below it the card usually sets the pace; above it the peers' own
    spikes usually do, and "the slow card is often not the slowest" holds.

    Parameters
    ----------
    n : int
        Workers, >= 2.
    slow_factor : float
        The card's multiplier, > 1.
    share : float
        The share of steps the card leads, in (1/n, 1).

    Returns
    -------
    float
        Jitter (σ / mean).

    Examples
    --------
    >>> round(slow_card_crossover(4096), 4)
    0.0138
    """
    n = whole("n", n, 2)
    f = in_range("slow_factor", slow_factor, 1.0, low_open=True)
    share = in_range("share", share, 1.0 / n, 1.0, low_open=True, high_open=True)
    gap = lambda j: slow_card_leads(n, j, f) - share
    require(gap(_MAX_JITTER) < 0, "slow_factor", slow_factor,
            f"small enough that the card leads on under {share:g} of steps at jitter {_MAX_JITTER}")
    return float(optimize.brentq(gap, 1e-6, _MAX_JITTER, xtol=1e-10))
