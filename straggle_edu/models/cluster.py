"""A cluster of workers meeting at a barrier every step.

A cluster is a set of groups of identical workers (say 4094 healthy GPUs and
2 running 20% slower). Every step, each worker computes, then all of them
synchronize; the step ends when the slowest worker is done and the
synchronization is over::

    step = max over all workers of their step time + sync

- :class:`Group`, :class:`Cluster` (with :meth:`Cluster.uniform` and
  :meth:`Cluster.with_slow`): the model.
- :class:`AllReduce`, :func:`ring_allreduce_time`: synchronization as an
  alpha-beta ring all-reduce, ``2(n-1)/n * nbytes/bandwidth + 2(n-1) * latency``.
- :func:`expected_step_time`, :func:`throughput`, :func:`scaling_efficiency`:
  exact, by numerical integration.
- :func:`sample_step_times`: Monte Carlo, at O(groups x size) cost.

How the expectation is computed
-------------------------------
The slowest of all workers has CDF G(t) = prod_g F_g(t)**n_g, so
E[max] = t_lo + integral from t_lo to t_hi of (1 - G(t)) dt, where G(t_lo) <=
1e-20 and 1 - G(t_hi) <= 1e-20. The integrand is computed as
``-expm1(sum_g n_g * log F_g(t))`` with an accurate log-CDF, so n_g = 10**7
or 10**12 loses nothing. An adaptive Gauss-Kronrod (7/15) rule integrates it,
vectorised over all panels at once, starting from panels split at every
place the integrand can turn: each component's mean, where each group's
maximum typically lands, and the atoms of a step time with no jitter (there
the integrand is piecewise constant and the rule is exact).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._validate import as_output, as_rng, check_fields, check_memory, in_range, instance, nonnegative, positive, require, scalar, whole
from ..math.order_stats import check_dist
from .samplers import sample_max
from .step_time import StepTime

__all__ = [
    "Group",
    "Cluster",
    "AllReduce",
    "ring_allreduce_time",
    "expected_step_time",
    "expected_slowest",
    "throughput",
    "scaling_efficiency",
    "sample_step_times",
]


# ------------------------------------------------------------------ sync
def ring_allreduce_time(n, nbytes, bandwidth, latency=0.0):
    """Time of a ring all-reduce of ``nbytes`` across n workers, in seconds.

    The alpha-beta model: each of the 2(n-1) ring steps moves nbytes/n bytes
    and pays the latency once::

        2 (n - 1) / n * nbytes / bandwidth + 2 (n - 1) * latency

    Parameters
    ----------
    n : int or array_like
        Number of workers, >= 1 (one worker needs no all-reduce: 0 s).
    nbytes : float or array_like
        Bytes reduced per worker (the gradient size), >= 0.
    bandwidth : float or array_like
        Link bandwidth in bytes per second, > 0.
    latency : float or array_like
        Per-message latency in seconds, >= 0.

    Returns
    -------
    float or numpy.ndarray
        Seconds, broadcast over the array inputs.

    Examples
    --------
    1 GB of gradients over 100 GB/s links, 5 microseconds per hop, 8 GPUs:

    >>> round(ring_allreduce_time(8, 1e9, 100e9, 5e-6), 6)
    0.01757
    >>> ring_allreduce_time([1, 2], 1e9, 1e9)
    array([0., 1.])
    """
    n = whole("n", n)
    nbytes = nonnegative("nbytes", nbytes)
    bandwidth = positive("bandwidth", bandwidth)
    latency = nonnegative("latency", latency)
    nn = np.asarray(n, dtype=float)
    out = 2.0 * (nn - 1.0) / nn * np.asarray(nbytes) / np.asarray(bandwidth) + 2.0 * (nn - 1.0) * latency
    return as_output(out, n, nbytes, bandwidth, latency)


@dataclass(frozen=True)
class AllReduce:
    """Synchronization by a ring all-reduce (alpha-beta model).

    ``nbytes`` (per worker per step), ``bandwidth`` and ``latency`` as in
    :func:`ring_allreduce_time`, each a single number.

    Examples
    --------
    >>> round(AllReduce(1e9, 100e9, 5e-6).time(8), 6)
    0.01757
    """

    nbytes: float
    bandwidth: float
    latency: float = 0.0

    def __post_init__(self):
        at_least_0 = lambda name, value: _scalar(nonnegative(name, value), name)
        above_0 = lambda name, value: _scalar(positive(name, value), name)
        check_fields(self, nbytes=at_least_0, bandwidth=above_0, latency=at_least_0)

    def time(self, n):
        """Seconds for n workers (see :func:`ring_allreduce_time`)."""
        return ring_allreduce_time(n, self.nbytes, self.bandwidth, self.latency)


def _scalar(value, name):
    return float(scalar(name, value))


# ----------------------------------------------------------------- model
@dataclass(frozen=True)
class Group:
    """``count`` identical workers sharing one step-time distribution.

    Parameters
    ----------
    count : int
        Number of workers in the group, >= 1.
    step_time : StepTime or frozen scipy.stats distribution
        One worker's step time, in seconds.

    Examples
    --------
    >>> Group(4096, StepTime(1.0)).count
    4096
    """

    count: int
    step_time: object

    def __post_init__(self):
        count = whole("count", self.count)
        scalar("count", self.count, "a single whole number >= 1")
        object.__setattr__(self, "count", count)
        check_dist(self.step_time, "step_time")


@dataclass(frozen=True)
class Cluster:
    """Groups of identical workers meeting at a barrier, then synchronizing.

    Parameters
    ----------
    groups : sequence of Group
        At least one group.
    sync : float or AllReduce
        Synchronization after the barrier: seconds (>= 0), or an
        :class:`AllReduce` whose time depends on the cluster's size.

    Examples
    --------
    >>> c = Cluster.with_slow(4096, StepTime(1.0), slow_count=2, slow_factor=1.2)
    >>> c.n, [g.count for g in c.groups]
    (4096, [4094, 2])
    >>> round(c.mean_worker_time, 6)
    1.000098
    """

    groups: tuple
    sync: object = 0.0

    def __post_init__(self):
        groups = self.groups
        if isinstance(groups, Group):
            groups = (groups,)
        try:
            groups = tuple(groups)
        except TypeError:
            require(False, "groups", groups, "a sequence of Group")
        require(len(groups) >= 1, "groups", groups, "a non-empty sequence of Group")
        for g in groups:
            instance("groups", g, Group, "a sequence of Group objects only")
        object.__setattr__(self, "groups", groups)
        if not isinstance(self.sync, AllReduce):
            if isinstance(self.sync, (str, bytes)) or not isinstance(self.sync, (numbers.Real, np.ndarray)):
                require(False, "sync", self.sync, "seconds >= 0 or an AllReduce")
            object.__setattr__(self, "sync", _scalar(nonnegative("sync", self.sync), "sync"))

    @classmethod
    def uniform(cls, n, step_time, sync=0.0):
        """n identical workers.

        Examples
        --------
        >>> Cluster.uniform(8, StepTime(1.0), sync=0.1).sync_time
        0.1
        """
        return cls((Group(n, step_time),), sync)

    @classmethod
    def with_slow(cls, n, step_time, slow_count, slow_factor, sync=0.0):
        """n workers, ``slow_count`` of them persistently ``slow_factor`` times slower.

        Parameters
        ----------
        n : int
            Total number of workers, >= 1.
        step_time : StepTime
            A healthy worker's step time.
        slow_count : int
            How many workers are slow, 0..n.
        slow_factor : float
            Their compute-time multiplier, >= 1 (1.2 = 20% slower).
        sync : float or AllReduce

        Examples
        --------
        >>> c = Cluster.with_slow(100, StepTime(1.0, jitter=0.0), 1, 1.5)
        >>> round(expected_step_time(c), 12)
        1.5
        """
        n = whole("n", n)
        slow_count = whole("slow_count", slow_count, low=0, high=n)
        slow_factor = in_range("slow_factor", slow_factor, 1.0)
        if not isinstance(step_time, StepTime):
            require(False, "step_time", type(step_time).__name__, "a StepTime (its slowdown is scaled)")
        groups = []
        if n - slow_count > 0:
            groups.append(Group(n - slow_count, step_time))
        if slow_count > 0:
            groups.append(Group(slow_count, step_time.with_slowdown(slow_factor)))
        return cls(tuple(groups), sync)

    @property
    def n(self):
        """Total number of workers."""
        return int(sum(g.count for g in self.groups))

    @property
    def sync_time(self):
        """Synchronization time per step, in seconds."""
        if isinstance(self.sync, AllReduce):
            return self.sync.time(self.n)
        return float(self.sync)

    @property
    def mean_worker_time(self):
        """Mean step time of a worker, averaged over all workers, in seconds
        (synchronization not included)."""
        return float(sum(g.count * float(g.step_time.mean()) for g in self.groups) / self.n)


def _check_cluster(cluster):
    return instance("cluster", cluster, Cluster)


# ------------------------------------------------------ exact expectation
_EPS_LOG = math.log(1e-20)

# Gauss-Kronrod 7/15 nodes and weights on [-1, 1].
_XK = np.array([
    0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
    0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
    0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
    0.207784955007898467600689403773245, 0.0,
])
_WK = np.array([
    0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
    0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
    0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
    0.204432940075298892414161999234649, 0.209482141084727828012999174891714,
])
_WG = np.array([
    0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
    0.381830050505118944950369775488975, 0.417959183673469387755102040816327,
])
_X15 = np.concatenate([-_XK[:-1], _XK[::-1]])
_W15 = np.concatenate([_WK[:-1], _WK[::-1]])
_W7 = np.zeros(15)
_W7[[1, 3, 5]] = _WG[:3]
_W7[[13, 11, 9]] = _WG[:3]
_W7[7] = _WG[3]
_REL_TOL = 1e-13
_MAX_PANELS = 20_000


def _log_cdf(dist, t):
    """log F(t), accurate where F is close to 1."""
    if isinstance(dist, StepTime):
        return dist._log_tail(t, upper=False)
    sf = np.asarray(dist.sf(t), dtype=float)
    with np.errstate(divide="ignore"):
        lc = np.asarray(dist.logcdf(t), dtype=float)
        return np.where(sf < 0.5, np.log1p(-np.minimum(sf, 0.5)), lc)


def _quantile(dist, u, w):
    """Q at probability u = 1 - w, from the side that keeps the digits."""
    return float(dist.isf(w)) if w < 0.5 else float(dist.ppf(u))


def _max_quantile(dist, n, log_p):
    """t with F(t)**n = exp(log_p): a quantile of the slowest of n."""
    return _quantile(dist, math.exp(log_p / n), -math.expm1(log_p / n))


def _breakpoints(groups):
    """Places where the integrand 1 - G(t) can turn sharply.

    A panel of the adaptive rule only sees a feature that its nodes land on,
    so every narrow feature gets its own panel: quantiles of each group's
    maximum and, for a StepTime, each mixture component's centre, +-8 sd
    around it, and +-4 sd around where that component's maximum lands.
    """
    from scipy import special  # loaded on use: `import straggle_edu` leaves scipy out

    pts = []
    for g in groups:
        d, n = g.step_time, g.count
        for p in (1e-6, 0.01, 0.5, 0.99):
            pts.append(_max_quantile(d, n, math.log(p)))
        if isinstance(d, StepTime):
            for weight, mean, sd in d.components():
                pts.append(mean)
                if sd > 0:
                    top = -float(special.ndtri(min(0.5, 1.0 / (n * weight))))
                    pts.extend(mean + sd * z for z in (-8.0, 8.0, top - 4.0, top, top + 4.0))
    return pts


def _expected_max_groups(groups):
    """E[max over every worker of every group], in seconds."""
    if len(groups) == 1 and groups[0].count == 1:
        return float(groups[0].step_time.mean())
    t_lo = max(_max_quantile(g.step_time, g.count, _EPS_LOG) for g in groups)
    share = math.exp(_EPS_LOG) / len(groups)
    t_hi = max(_quantile(g.step_time, 1.0 - share / g.count, share / g.count) for g in groups)
    if not t_hi > t_lo:
        return float(t_lo)
    pts = sorted({t_lo, t_hi, *(p for p in _breakpoints(groups) if t_lo < p < t_hi)})
    edges = np.array(pts)
    # Four panels per interval to start with, so that no feature hides between nodes.
    a = (edges[:-1, None] + (edges[1:] - edges[:-1])[:, None] * np.arange(4) / 4).ravel()
    b = np.append(a[1:], edges[-1])
    keep = b > a
    a, b = a[keep], b[keep]
    tol_density = _REL_TOL
    total = 0.0
    for _ in range(200):
        if a.size == 0:
            break
        mid, half = 0.5 * (a + b), 0.5 * (b - a)
        t = mid[:, None] + half[:, None] * _X15
        log_g = sum(g.count * _log_cdf(g.step_time, t) for g in groups)
        f = -np.expm1(log_g)
        kron = half * (f @ _W15)
        gauss = half * (f @ _W7)
        err = np.abs(kron - gauss)
        done = (err <= tol_density * (b - a)) | (half <= 1e-15 * np.maximum(np.abs(mid), 1.0))
        if a.size > _MAX_PANELS:
            done[:] = True
        total += float(kron[done].sum())
        a, b, mid = a[~done], b[~done], mid[~done]
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
    require(math.isfinite(total), "cluster", "a cluster whose step time overflows", "a cluster with a finite expected step time")
    return float(t_lo + total)


def expected_slowest(cluster):
    """Expected time of the slowest worker of the cluster, in seconds
    (without synchronization): E[max over all workers].

    Exact by numerical integration (see the module notes), for groups of up
    to 10**7 workers and beyond, in milliseconds.

    Examples
    --------
    >>> round(expected_slowest(Cluster.uniform(4096, StepTime(10.0, jitter=0.05))), 3)
    11.813
    """
    cluster = _check_cluster(cluster)
    return _expected_max_groups(cluster.groups)


def expected_step_time(cluster):
    """Expected step time of ``cluster`` (a :class:`Cluster`) in seconds:
    E[max over all workers] + sync.

    Examples
    --------
    4096 workers at 1 s with 5% jitter, 1% chance of a 0.5 s pause:

    >>> t = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
    >>> round(expected_step_time(Cluster.uniform(4096, t)), 4)
    1.6082
    >>> round(expected_step_time(Cluster.uniform(1, t, sync=0.2)), 4)
    1.205
    """
    cluster = _check_cluster(cluster)
    return _expected_max_groups(cluster.groups) + cluster.sync_time


def throughput(cluster):
    """Steps per second: ``1 / expected_step_time(cluster)``.

    Examples
    --------
    >>> round(throughput(Cluster.uniform(10, StepTime(0.5, jitter=0.0))), 6)
    2.0
    """
    return 1.0 / expected_step_time(cluster)


def scaling_efficiency(cluster):
    """Scaling efficiency: the speed-up over one worker, divided by n.

    The one meaning the whole project uses (docs/glossary.md#scaling-efficiency).
    One worker alone takes the mean worker time per step and needs no
    synchronization; n workers do n times its work in one expected step::

        efficiency = throughput(n) / (n * throughput(1))
                   = cluster.mean_worker_time / expected_step_time(cluster)

    It lies in (0, 1]; 1 means perfect scaling. It counts both losses: the
    wait for the slowest worker and the synchronization. The share lost to
    waiting alone is :func:`~straggle_edu.models.waste.lost_fraction`,
    ``1 - efficiency - sync / E[step]``.

    Examples
    --------
    >>> c = Cluster.uniform(4096, StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5))
    >>> round(scaling_efficiency(c), 3)
    0.625
    >>> scaling_efficiency(Cluster.uniform(100, StepTime(1.0, jitter=0.0)))
    1.0
    >>> scaling_efficiency(Cluster.uniform(100, StepTime(1.0, jitter=0.0), sync=0.25))   # 1 / 1.25
    0.8
    """
    cluster = _check_cluster(cluster)
    step = _expected_max_groups(cluster.groups) + cluster.sync_time
    return min(1.0, cluster.mean_worker_time / step)


# --------------------------------------------------------------- sampling
def sample_step_times(cluster, size, rng=None):
    """Draw ``size`` step times of the cluster, in seconds.

    Each group's slowest worker is drawn directly with
    :func:`~straggle_edu.models.samplers.sample_max`, so the cost is
    O(groups x size) whatever the number of workers.

    Parameters
    ----------
    cluster : Cluster
    size : int
        Number of steps to draw, >= 0.

    Returns
    -------
    numpy.ndarray
        ``size`` step times (max over all workers + sync).

    Examples
    --------
    >>> c = Cluster.uniform(4096, StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5))
    >>> x = sample_step_times(c, 10_000, rng=0)
    >>> x.shape, round(float(x.mean()), 2)
    ((10000,), 1.61)
    """
    cluster = _check_cluster(cluster)
    size = whole("size", size, low=0)
    check_memory(size * 16, f"drawing size={size} step times")
    rng = as_rng(rng)
    out = np.full(size, -np.inf)
    for g in cluster.groups:
        np.maximum(out, sample_max(g.step_time, g.count, size, rng), out=out)
    return out + cluster.sync_time
