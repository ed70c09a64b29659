"""Hedged and tied requests: how serving systems cut the tail.

Dean and Barroso, "The Tail at Scale" (CACM 56(2), 2013): a request that has
not come back after a short delay d is sent again to another replica, and
whichever answer arrives first is used. In a Google benchmark that read
1,000 keys spread over 100 BigTable servers, hedging after 10 ms cut the
99.9th-percentile latency of fetching all 1,000 values from 1,800 ms to
74 ms, for just 2% more requests.

Why it works: a request is rarely slow, and when it is, it is usually the
server's fault (a queue, a compaction, a GC pause), not the request's. The
hedge is an independent second draw. A hedged request is late past t >= d
only if both copies are::

    P(hedged > t) = S(t)                  for t < d
                  = S(t) * S(t - d)       for t >= d

and only the fraction S(d) of requests ever sends a hedge. A fan-out of k
requests waits for all of them, so its q-quantile is the single-request
quantile at q**(1/k): at k = 1,000 and q = 0.999, the one-in-a-million tail
of a single request. That is the straggler problem again, and hedging
squares the tail exactly where it matters.

- :class:`RequestLatency`: one request's latency, a fast log-normal body with
  a rare slow mode; :func:`tail_at_scale_latency` is the one calibrated to
  the paper's figures.
- :class:`HedgedLatency`: the same request, hedged after ``delay`` seconds.
- :func:`fanout_quantile`: the q-quantile of the slowest of k requests.
- :func:`hedging_tradeoff`: tail latency against extra load, over delays.
- :func:`sample_tied_requests`: tied requests (enqueue on two servers, the
  first to start cancels the other), by Monte Carlo.

All four distributions have the library's dist interface (``cdf``, ``sf``,
``ppf``, ``isf``, ``mean``, ``rvs``), so ``expected_max`` works on them too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, special

from .._validate import as_rng, check_fields, check_memory, in_range, nonnegative, probability, require, whole
from ..math.order_stats import check_dist

__all__ = [
    "HedgedLatency",
    "RequestLatency",
    "TiedRequests",
    "fanout_quantile",
    "hedging_tradeoff",
    "sample_tied_requests",
    "tail_at_scale_latency",
]

_T_LO, _T_HI = 1e-9, 1e6  # seconds: the search range for quantiles
_BISECT = 64


def _bisect_log_t(fn, target, increasing):
    """Solve fn(t) = target for t in [1e-9, 1e6] s by bisection on log t.

    fn is monotone in t (increasing or decreasing), vectorised; target an array.
    """
    target = np.asarray(target, dtype=float)
    lo = np.full(target.shape, math.log(_T_LO))
    hi = np.full(target.shape, math.log(_T_HI))
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        v = fn(np.exp(mid))
        below = v < target if increasing else v > target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.exp(0.5 * (lo + hi))


class _Dist:
    """Quantiles, mean and sampling from ``sf``, shared by the latency models."""

    def cdf(self, t):
        return 1.0 - self.sf(t)

    def ppf(self, u):
        """Quantile function (seconds) at probability u."""
        u = np.asarray(probability("u", u), dtype=float)
        out = _bisect_log_t(self.cdf, u, increasing=True)
        out = np.where(u <= 0, 0.0, np.where(u >= 1, np.inf, out))
        return float(out) if out.ndim == 0 else out

    def isf(self, w):
        """Inverse survival function: the t with P(latency > t) = w."""
        w = np.asarray(probability("w", w), dtype=float)
        out = _bisect_log_t(self.sf, w, increasing=False)
        out = np.where(w >= 1, 0.0, np.where(w <= 0, np.inf, out))
        return float(out) if out.ndim == 0 else out

    def median(self):
        return self.ppf(0.5)


@dataclass(frozen=True)
class RequestLatency(_Dist):
    """One request's latency, in seconds: a log-normal body and a rare slow mode.

    With probability ``1 - slow_prob`` the latency is log-normal with median
    ``body_median`` and log-spread ``body_spread`` (the sigma of its log); with probability ``slow_prob`` it is
    log-normal with median ``slow_median`` and log-spread ``slow_spread`` (a
    queue behind a compaction, a GC pause, a busy disk).

    Examples
    --------
    >>> r = RequestLatency(body_median=0.002, body_spread=0.5, slow_prob=0.001, slow_median=0.2, slow_spread=0.5)
    >>> round(r.median() * 1000, 3)  # milliseconds
    2.001
    >>> round(float(r.sf(0.05)), 6)  # P(latency > 50 ms): almost all of it slow mode
    0.000997
    """

    body_median: float = 0.002
    body_spread: float = 0.5
    slow_prob: float = 0.001
    slow_median: float = 0.2
    slow_spread: float = 0.5

    def __post_init__(self):
        median = lambda name, value: in_range(name, value, 1e-6, 1e3)
        spread = lambda name, value: in_range(name, value, 0.01, 3.0)
        check_fields(self, body_median=median, body_spread=spread, slow_prob=probability, slow_median=median, slow_spread=spread)

    def sf(self, t):
        """P(latency > t), t in seconds; computed from both tails, never 1 - cdf."""
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore"):
            lt = np.log(np.maximum(t, 1e-300))
        fast = special.ndtr(-(lt - math.log(self.body_median)) / self.body_spread)
        slow = special.ndtr(-(lt - math.log(self.slow_median)) / self.slow_spread)
        out = (1.0 - self.slow_prob) * fast + self.slow_prob * slow
        out = np.where(t <= 0, 1.0, out)
        return float(out) if out.ndim == 0 else out

    def cdf(self, t):
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore"):
            lt = np.log(np.maximum(t, 1e-300))
        fast = special.ndtr((lt - math.log(self.body_median)) / self.body_spread)
        slow = special.ndtr((lt - math.log(self.slow_median)) / self.slow_spread)
        out = (1.0 - self.slow_prob) * fast + self.slow_prob * slow
        out = np.where(t <= 0, 0.0, out)
        return float(out) if out.ndim == 0 else out

    def mean(self):
        """Mean latency, in seconds (closed form for log-normals)."""
        fast = self.body_median * math.exp(self.body_spread**2 / 2)
        slow = self.slow_median * math.exp(self.slow_spread**2 / 2)
        return (1.0 - self.slow_prob) * fast + self.slow_prob * slow

    def support(self):
        return (0.0, math.inf)

    def rvs(self, size=None, random_state=None):
        """Draw latencies (seconds): pick the mode, then its log-normal."""
        rng = as_rng(random_state)
        n = 1 if size is None else int(np.prod(size))
        check_memory(32 * n, f"drawing {n} latencies")
        slow = rng.random(n) < self.slow_prob
        z = rng.standard_normal(n)
        out = np.where(
            slow,
            self.slow_median * np.exp(self.slow_spread * z),
            self.body_median * np.exp(self.body_spread * z),
        )
        return float(out[0]) if size is None else out.reshape(size)


def tail_at_scale_latency():
    """A request latency calibrated to the figures of "The Tail at Scale".

    Dean and Barroso (CACM 2013) fetch 1,000 keys from 100 servers. With this
    model: 2% of requests take over 10 ms (so hedging after 10 ms sends 2%
    more requests), and the 99.9th percentile of the slowest of 1,000 is
    1,800 ms without hedging and 74 ms with it. The body is a log-normal
    with a 3 ms median; one request in about 500 lands in a slow mode, a
    log-normal with a 67 ms median and a long tail. Fitted to those three
    figures (the paper gives no distribution), so it reproduces their shape,
    not Google's measurements.

    Calibrated to: the 2% of extra requests, and the p99.9 of 1,800 ms
    plain and 74 ms hedged. They hold by construction, so a notebook shows
    them with ``calibrated(...)`` ("calibrated to ..."), never as an
    independent ✓ (``07b_backup_workers_and_hedging.ipynb``, §2, and the appendix
    ``A2_more_on_the_step.ipynb``). What the
    model predicts beyond them (the 5 ms and 50 ms delays, tied requests)
    is its own, not the paper's.

    Examples
    --------
    >>> lat = tail_at_scale_latency()
    >>> round(float(lat.sf(0.010)), 3)
    0.02
    >>> round(fanout_quantile(lat, 0.999, 1000), 2)  # seconds
    1.8
    >>> round(fanout_quantile(HedgedLatency(lat, 0.010), 0.999, 1000), 3)
    0.074
    """
    return RequestLatency(**TAIL_AT_SCALE)


TAIL_AT_SCALE = {
    "body_median": 0.003,
    "body_spread": 0.574,
    "slow_prob": 0.00206,
    "slow_median": 0.0665,
    "slow_spread": 1.0,
}


def _hedged_sf(base, t, delay):
    """P(min(L1, delay + L2) > t), vectorised over t and delay."""
    s = np.asarray(base.sf(t), dtype=float)
    late = t >= delay
    s2 = np.asarray(base.sf(np.where(late, t - delay, 0.0)), dtype=float)
    return np.where(late, s * s2, s)


@dataclass(frozen=True)
class HedgedLatency(_Dist):
    """A request hedged after ``delay`` seconds: latency min(L1, delay + L2).

    L1 and L2 are independent draws from ``base`` (another replica). Only
    the fraction ``extra_load`` = P(L1 > delay) of requests sends a hedge.

    Parameters
    ----------
    base : RequestLatency or any dist with ``sf``
        One request's latency, in seconds.
    delay : float
        Seconds to wait before sending the hedge, >= 0 (0 sends two copies
        of every request at once).

    Examples
    --------
    >>> lat = RequestLatency(body_median=0.002, body_spread=0.5, slow_prob=0.01, slow_median=0.2, slow_spread=0.3)
    >>> h = HedgedLatency(lat, 0.01)
    >>> round(h.extra_load, 4)  # P(first copy still out at 10 ms)
    0.0106
    >>> round(float(lat.isf(0.001)) * 1000), round(float(h.isf(0.001)) * 1000)  # p99.9, ms
    (294, 14)
    """

    base: object
    delay: float

    def __post_init__(self):
        require(callable(getattr(self.base, "sf", None)), "base", self.base, "a latency distribution with an sf method")
        object.__setattr__(self, "delay", nonnegative("delay", self.delay))

    @property
    def extra_load(self):
        """Fraction of requests that send a hedge: P(latency > delay)."""
        return float(self.base.sf(self.delay))

    def sf(self, t):
        out = _hedged_sf(self.base, np.asarray(t, dtype=float), self.delay)
        return float(out) if out.ndim == 0 else out

    def mean(self):
        """Mean latency, seconds: the integral of the survival function."""
        d = self.delay
        f = lambda t: float(self.sf(t))
        a = integrate.quad(f, 0.0, d, limit=200)[0] if d > 0 else 0.0
        b = integrate.quad(f, d, math.inf, limit=200)[0]
        return a + b

    def support(self):
        return (0.0, math.inf)

    def rvs(self, size=None, random_state=None):
        """Draw hedged latencies (seconds): min(L1, delay + L2)."""
        rng = as_rng(random_state)
        first = np.asarray(self.base.rvs(size=size, random_state=rng), dtype=float)
        second = np.asarray(self.base.rvs(size=size, random_state=rng), dtype=float)
        out = np.minimum(first, self.delay + second)
        return float(out) if size is None else out


def fanout_quantile(dist, q, fanout):
    """The q-quantile of the slowest of ``fanout`` independent requests.

    ``max`` of k has CDF F(t)**k, so its q-quantile is the single-request
    quantile at q**(1/k), found through ``isf(1 - q**(1/k))`` so that tiny
    tails keep their precision.

    Parameters
    ----------
    dist : dist with ``isf``
        One request's latency, seconds.
    q : float
        Probability in (0, 1): 0.999 for the p99.9.
    fanout : int
        Number of requests the answer waits for, >= 1.

    Returns
    -------
    float
        The quantile of the slowest request, seconds.

    Examples
    --------
    >>> from scipy import stats
    >>> round(fanout_quantile(stats.expon(), 0.5, 1), 6)  # ln 2
    0.693147
    >>> round(fanout_quantile(stats.expon(), 0.99, 100), 3)  # -ln(1 - 0.99**0.01)
    9.21
    """
    require(callable(getattr(dist, "isf", None)), "dist", dist, "a distribution with an isf method")
    q = in_range("q", q, 0.0, 1.0, low_open=True, high_open=True)
    fanout = whole("fanout", fanout)
    w = -math.expm1(math.log(q) / fanout)
    return float(np.asarray(dist.isf(w)))


@dataclass(frozen=True)
class HedgingTradeoff:
    """Tail latency against extra load, one row per hedging delay.

    Attributes
    ----------
    delays : numpy.ndarray
        Hedging delays, seconds.
    extra_load : numpy.ndarray
        Fraction of extra requests sent at each delay.
    tail : numpy.ndarray
        The q-quantile of the fan-out latency at each delay, seconds.
    unhedged : float
        The same quantile without hedging.
    q, fanout : float, int
    """

    delays: np.ndarray
    extra_load: np.ndarray
    tail: np.ndarray
    unhedged: float
    q: float
    fanout: int

    def records(self):
        """One dict per delay, times in milliseconds, for charts."""
        return [
            {"delay_ms": 1e3 * d, "extra_pct": 100 * e, "tail_ms": 1e3 * t}
            for d, e, t in zip(self.delays.tolist(), self.extra_load.tolist(), self.tail.tolist())
        ]


def hedging_tradeoff(dist, delays, q=0.999, fanout=1):
    """Tail latency and extra load for every hedging delay in ``delays``.

    Parameters
    ----------
    dist : RequestLatency or dist with ``sf``/``isf``
        One request's latency, seconds.
    delays : array_like
        Hedging delays, seconds, >= 0.
    q : float
        Quantile of the fan-out latency, in (0, 1).
    fanout : int
        Requests per answer, >= 1.

    Returns
    -------
    HedgingTradeoff

    Examples
    --------
    >>> tr = hedging_tradeoff(tail_at_scale_latency(), [0.005, 0.010, 0.050], q=0.999, fanout=1000)
    >>> (tr.extra_load * 100).round(1), (tr.tail * 1000).round()
    (array([18.8,  2. ,  0.1]), array([71., 74., 95.]))
    """
    delays = nonnegative("delays", delays)
    delays = np.atleast_1d(np.asarray(delays, dtype=float))
    require(delays.ndim == 1 and 1 <= delays.size <= 2000, "delays", delays, "1 to 2000 delays")
    q = in_range("q", q, 0.0, 1.0, low_open=True, high_open=True)
    fanout = whole("fanout", fanout)
    require(callable(getattr(dist, "sf", None)), "dist", dist, "a latency distribution with an sf method")
    w = -math.expm1(math.log(q) / fanout)
    # All delays at once: bisect P(hedged > t) = w for every delay together.
    tail = _bisect_log_t(lambda t: _hedged_sf(dist, t, delays), np.full(delays.shape, w), increasing=False)
    return HedgingTradeoff(
        delays=delays,
        extra_load=np.asarray(dist.sf(delays), dtype=float),
        tail=tail,
        unhedged=fanout_quantile(dist, q, fanout),
        q=q,
        fanout=fanout,
    )


@dataclass(frozen=True)
class TiedRequests:
    """Monte Carlo latencies of plain and tied requests.

    Attributes
    ----------
    plain, tied : numpy.ndarray
        Latencies in seconds: one server (queue wait + service) against two
        tied servers (the shorter wait + service).
    both_ran : float
        Fraction of tied requests that both servers executed, because the
        second started before the first's cancellation arrived: the extra work.

    Examples
    --------
    >>> from scipy import stats
    >>> r = sample_tied_requests(stats.expon(scale=0.02), stats.uniform(0.001, 0.002), 10_000, rng=0)
    >>> [round(x * 1000, 1) for x in r.quantile(0.5)]   # median ms: plain, tied
    [15.9, 9.2]
    >>> round(r.both_ran, 2)
    0.05
    """

    plain: np.ndarray
    tied: np.ndarray
    both_ran: float

    def quantile(self, q):
        """(plain, tied) q-quantiles, seconds."""
        q = probability("q", q)
        return float(np.quantile(self.plain, q)), float(np.quantile(self.tied, q))


def sample_tied_requests(wait, service, size, rng=None, cancel_delay=0.001):
    """Tied requests: enqueue on two servers; the first to start cancels the other.

    The request's latency is ``min(W1, W2) + service``: the shorter of two
    independent queue waits. Both servers run it only when the second starts
    within ``cancel_delay`` of the first, so the extra work is
    P(|W1 - W2| < cancel_delay), usually tiny, unlike hedging, which pays for
    every hedge it sends.

    Parameters
    ----------
    wait : dist with ``ppf``/``isf``
        Queueing delay at one server, seconds.
    service : dist with ``ppf``/``isf``
        Service time, seconds.
    size : int
        Number of requests to simulate, >= 1.
    cancel_delay : float
        Seconds for the cancellation to reach the other server, >= 0.

    Returns
    -------
    TiedRequests

    Examples
    --------
    >>> from scipy import stats
    >>> r = sample_tied_requests(stats.expon(scale=0.02), stats.uniform(0.001, 0.002), 50_000, rng=0)
    >>> [round(x * 1000, 1) for x in r.quantile(0.99)], round(r.both_ran, 3)
    ([95.0, 47.8], 0.048)
    """
    wait = check_dist(wait, "wait")
    service = check_dist(service, "service")
    size = whole("size", size)
    check_memory(48 * size, f"simulating {size} tied requests")
    cancel_delay = nonnegative("cancel_delay", cancel_delay)
    rng = as_rng(rng)

    def draw(dist, k):
        u = rng.random(k)
        return np.asarray(dist.ppf(u), dtype=float)

    w1, w2, s = draw(wait, size), draw(wait, size), draw(service, size)
    return TiedRequests(
        plain=w1 + s,
        tied=np.minimum(w1, w2) + s,
        both_ran=float(np.mean(np.abs(w1 - w2) < cancel_delay)),
    )
