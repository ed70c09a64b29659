"""One worker's step time: base compute, jitter, and rare pauses.

A worker's step takes ``base * slowdown * (1 + jitter * Z)`` seconds, Z a
standard normal, plus ``pause`` seconds with probability ``pause_prob`` (a
garbage-collection pause, a page fault storm, a noisy neighbour). So the
step time is a mixture of two normals with the same spread::

    mu    = base * slowdown                 (seconds)
    sigma = jitter * mu                     (jitter is the coefficient of variation)
    T ~ (1 - pause_prob) * N(mu, sigma**2) + pause_prob * N(mu + pause, sigma**2)

:class:`StepTime` is a frozen dataclass with the interface of a frozen
``scipy.stats`` distribution (``cdf``, ``sf``, ``pdf``, ``ppf``, ``isf``,
``logcdf``, ``logsf``, ``mean``, ``std``, ``var``, ``median``, ``support``,
``rvs``), so it works as ``dist`` everywhere in the library:
``expected_max(StepTime(1.0), 4096)``.

Design decisions
----------------
Accuracy in the far tail
    ``cdf``/``sf`` are sums of ``ndtr`` terms, never ``1 - cdf``; ``logcdf``
    and ``logsf`` use ``log1p`` of the small side. ``ppf``/``isf`` of a
    mixture have no closed form: they solve ``logsf(t) = log(w)`` by Newton's
    method safeguarded by a bracket that brackets the root by construction,
    so ``isf(1e-250)`` is as accurate as ``isf(0.3)``. Without pauses they
    are the normal's closed form.
Sampling the slowest worker
    :meth:`StepTime.sample_max` draws the maximum of n workers in closed form
    (a Binomial count of paused workers, then the maximum of each normal
    part), so ``sample_max`` and ``sample_step_times`` need no root finding.
Negative times
    The normal jitter gives a negative step time with probability
    ``Phi(-1/jitter)`` per component: 1.3e-23 at jitter 0.1, 2.9e-7 at jitter
    0.2. The model keeps that mass (truncating at zero would break the exact
    closed forms for a negligible gain) and warns once it exceeds 1e-6
    (jitter above about 0.21), naming the probability.
No jitter (``jitter=0``)
    The step time is then discrete: ``mu`` with probability
    ``1 - pause_prob`` and ``mu + pause`` otherwise. Every method is exact
    for it (``cdf`` is a step, ``ppf`` is piecewise constant, ``pdf`` is 0 off
    the atoms and ``inf`` on them). :meth:`StepTime.quantile_breaks` tells
    :func:`~straggle_edu.math.order_stats.expected_max` where the quantile
    function jumps, so the integral is split there and stays exact: E[max of
    n] = base + pause * p_any_slow(pause_prob, n) to machine precision.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._validate import as_rng, check_fields, check_memory, in_range, nonnegative, positive, probability, scalar, whole

__all__ = ["StepTime"]

_NEG_MASS_WARN = 1e-6
_LOG_EPS = -745.0  # below this log-probability, exp() is zero


def _log_ndtr_upper(z):
    """log(1 - Phi(z)), accurate for large z."""
    from scipy import special  # loaded on use: `import straggle_edu` leaves scipy out

    return special.log_ndtr(-z)


def _logaddexp_weighted(logw_a, la, logw_b, lb):
    """log(e**(logw_a + la) + e**(logw_b + lb)), with -inf weights allowed."""
    with np.errstate(invalid="ignore"):
        return np.logaddexp(logw_a + la, logw_b + lb)


@dataclass(frozen=True)
class StepTime:
    """One worker's step-time distribution, in seconds.

    ``base * slowdown * (1 + jitter * Z)`` plus ``pause`` seconds with
    probability ``pause_prob``; Z is a standard normal.

    Parameters
    ----------
    base : float
        Typical compute time of a step, in seconds, > 0.
    jitter : float
        Coefficient of variation of the compute time, in [0, 1]. 0 means no
        jitter (then the step time is discrete; see the module notes).
    pause_prob : float
        Probability that a step also hits a pause, in [0, 1].
    pause : float
        Length of that pause, in seconds, >= 0.
    slowdown : float
        Multiplier on the compute time (1.2 = 20% slower), > 0. The pause is
        not scaled.

    Examples
    --------
    >>> t = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
    >>> t.mean()
    1.005
    >>> round(t.cdf(1.0), 4)
    0.495
    >>> round(t.isf(0.001), 4)  # one step in a thousand is slower than this
    1.5641
    >>> StepTime(2.0, jitter=0.0).ppf([0.1, 0.9])
    array([2., 2.])
    """

    base: float
    jitter: float = 0.05
    pause_prob: float = 0.0
    pause: float = 0.0
    slowdown: float = 1.0

    def __post_init__(self):
        unit = lambda name, value: in_range(name, value, 0.0, 1.0)
        check_fields(self, base=positive, jitter=unit, pause_prob=probability, pause=nonnegative, slowdown=positive)
        for name in ("base", "jitter", "pause_prob", "pause", "slowdown"):
            scalar(name, getattr(self, name))
        neg = self.negative_mass()
        if neg > _NEG_MASS_WARN:
            warnings.warn(
                f"StepTime with jitter={self.jitter:g} gives a negative step time with "
                f"probability {neg:.2g}; the normal jitter model is meant for jitter below about 0.2",
                stacklevel=3,
            )

    # ------------------------------------------------------------------ shape
    @property
    def mu(self):
        """Mean compute time without pauses, in seconds: ``base * slowdown``."""
        return self.base * self.slowdown

    @property
    def sigma(self):
        """Standard deviation of the compute time, in seconds: ``jitter * mu``."""
        return self.jitter * self.mu

    @property
    def degenerate(self):
        """True when there is no jitter, so the step time takes at most two values."""
        return self.sigma == 0.0

    def components(self):
        """The mixture as ``[(weight, mean, sd), ...]``, zero-weight parts dropped.

        Examples
        --------
        >>> StepTime(1.0, jitter=0.1, pause_prob=0.25, pause=2.0).components()
        [(0.75, 1.0, 0.1), (0.25, 3.0, 0.1)]
        """
        q, L = self.pause_prob, self.pause
        if L == 0.0 or q == 0.0:
            return [(1.0, self.mu, self.sigma)]
        if q == 1.0:
            return [(1.0, self.mu + L, self.sigma)]
        return [(1.0 - q, self.mu, self.sigma), (q, self.mu + L, self.sigma)]

    def quantile_breaks(self):
        """``((u, 1 - u), ...)``: probabilities at which the quantile function
        jumps (no jitter) or climbs steeply across the gap before a pause
        (with jitter). Both members are given so that neither loses digits.

        :func:`~straggle_edu.math.order_stats.expected_max` splits its integral
        at these points, which keeps it exact for a discrete step time.

        Examples
        --------
        >>> StepTime(1.0, pause_prob=0.01, pause=0.5).quantile_breaks()
        ((0.99, 0.01),)
        """
        comps = self.components()
        return ((comps[0][0], comps[1][0]),) if len(comps) == 2 else ()

    def negative_mass(self):
        """Probability of a negative step time (an artefact of normal jitter)."""
        from scipy import special

        if self.degenerate:
            return 0.0
        return float(sum(w * special.ndtr(-m / s) for w, m, s in self.components()))

    # ------------------------------------------------------------ moments
    def mean(self):
        """Expected step time in seconds: ``mu + pause_prob * pause``."""
        return float(self.mu + self.pause_prob * self.pause)

    def var(self):
        """Variance in seconds squared: ``sigma**2 + q (1 - q) pause**2``."""
        q = self.pause_prob
        return float(self.sigma**2 + q * (1.0 - q) * self.pause**2)

    def std(self):
        """Standard deviation in seconds."""
        return math.sqrt(self.var())

    def median(self):
        """Median step time in seconds."""
        return self.ppf(0.5)

    def support(self):
        """(lowest, highest) possible step time, in seconds.

        The real line with jitter; the one or two atoms without.

        Examples
        --------
        >>> StepTime(1.0, jitter=0.0, pause_prob=0.1, pause=0.5).support()
        (1.0, 1.5)
        """
        if not self.degenerate:
            return (-math.inf, math.inf)
        means = [m for _, m, _ in self.components()]
        return (float(min(means)), float(max(means)))

    # --------------------------------------------------------- distribution
    def _atoms(self, t, upper):
        """Sum of atom weights at or below t (upper=False) or above t (upper=True)."""
        out = np.zeros(np.shape(t))
        for w, m, _ in self.components():
            out = out + w * ((t < m) if upper else (t >= m))
        return out

    def _at(self, t, tail, upper):
        """``tail(x, upper)`` at the checked times t: scalar in, float out."""
        return _out(tail(np.asarray(in_range("t", t), dtype=float), upper=upper), t)

    def cdf(self, t):
        """P(step time <= t). Vectorised; scalar in, float out."""
        return self._at(t, self._tail, upper=False)

    def sf(self, t):
        """P(step time > t), computed directly so the far tail keeps its digits."""
        return self._at(t, self._tail, upper=True)

    def _tail(self, x, upper):
        """P(step time > x) (upper=True) or P(step time <= x), component by component."""
        from scipy import special

        if self.degenerate:
            return self._atoms(x, upper=upper)
        sign = 1.0 if upper else -1.0
        return sum(w * special.ndtr(sign * (m - x) / s) for w, m, s in self.components())

    def logcdf(self, t):
        """log P(step time <= t), accurate both when it is tiny and near 0."""
        return self._at(t, self._log_tail, upper=False)

    def logsf(self, t):
        """log P(step time > t), accurate both when it is tiny and near 0."""
        return self._at(t, self._log_tail, upper=True)

    def _log_tail(self, x, upper):
        from scipy import special

        if self.degenerate:
            with np.errstate(divide="ignore"):
                return np.log(self._atoms(x, upper=upper))
        sign = 1.0 if upper else -1.0
        # log of the small side directly, and log1p(-other side) when it is near 1.
        logs = None
        other = np.zeros(np.shape(x))
        for w, m, s in self.components():
            z = sign * (m - x) / s
            term = math.log(w) + special.log_ndtr(z)
            logs = term if logs is None else np.logaddexp(logs, term)
            other = other + w * special.ndtr(-z)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(other < 0.5, np.log1p(-np.minimum(other, 0.5)), logs)

    def pdf(self, t):
        """Probability density in 1/seconds; 0 off the atoms and inf on them
        when there is no jitter."""
        x = np.asarray(in_range("t", t), dtype=float)
        if self.degenerate:
            on = np.zeros(np.shape(x), dtype=bool)
            for w, m, _ in self.components():
                on |= x == m
            out = np.where(on, np.inf, 0.0)
        else:
            out = sum(w * np.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
                      for w, m, s in self.components())
        return _out(out, t)

    def logpdf(self, t):
        """log of :meth:`pdf`."""
        with np.errstate(divide="ignore"):
            return _out(np.log(np.asarray(self.pdf(t), dtype=float)), t)

    def ppf(self, u):
        """Quantile function: the step time t with P(T <= t) = u, in seconds.

        Examples
        --------
        >>> round(StepTime(1.0, jitter=0.1).ppf(0.975), 4)
        1.196
        """
        return self._quantile(np.asarray(probability("u", u), dtype=float), self._lower_quantile, self._upper_quantile)

    def isf(self, w):
        """Inverse survival function: the step time t with P(T > t) = w, in seconds.

        Accurate for tiny w (the far tail that the slowest of many workers sees).

        Examples
        --------
        >>> t = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)
        >>> round(t.isf(1e-200), 4)
        3.0026
        """
        return self._quantile(np.asarray(probability("w", w), dtype=float), self._upper_quantile, self._lower_quantile)

    def _quantile(self, q, near, far):
        """``near(q)`` where q <= 0.5, else ``far(1 - q)``: each quantile from the tail where it is small, so that
        1 - q loses no digits (:meth:`ppf` with the lower tail near, :meth:`isf` with the upper); scalar in, float out.
        """
        if self.degenerate:  # compare q itself with the atoms' weights, no 1 - q
            return _out(near(q), q)
        out = np.empty(q.shape)
        small = q <= 0.5
        out[small] = near(q[small])
        out[~small] = far(1.0 - q[~small])
        return _out(out, q)

    def _upper_quantile(self, w):
        """isf(w) for an array w in [0, 1]."""
        comps = self.components()
        if self.degenerate:
            # isf(w) = ppf(1 - w): the top atom when w < its weight.
            out = np.full(w.shape, comps[0][1])
            if len(comps) == 2:
                out = np.where(w < comps[1][0], comps[1][1], out)
            return out
        return _mixture_isf(w, [(wt, m) for wt, m, _ in comps], self.sigma)

    def _lower_quantile(self, u):
        """ppf(u) for an array u in [0, 1]."""
        comps = self.components()
        if self.degenerate:
            out = np.full(u.shape, comps[-1][1])
            if len(comps) == 2:
                out = np.where(u <= comps[0][0], comps[0][1], out)
            return out
        # ppf of T is -isf of -T, a mixture with negated means.
        return -_mixture_isf(u, [(wt, -m) for wt, m, _ in comps], self.sigma)

    def rvs(self, size=None, random_state=None):
        """Draw step times, in seconds.

        Parameters
        ----------
        size : int, tuple of int or None
            None returns one float.
        random_state : numpy.random.Generator, int or None

        Examples
        --------
        >>> StepTime(1.0, jitter=0.0).rvs(3, random_state=0)
        array([1., 1., 1.])
        """
        rng = as_rng(random_state)
        shape = () if size is None else tuple(
            whole("size", s, low=0) for s in np.atleast_1d(np.asarray(size, dtype=object))
        )
        count = math.prod(shape)
        check_memory(count * 24, f"drawing size={size} step times")
        x = np.full(shape, self.mu)
        if self.sigma > 0:
            x = x + self.sigma * rng.standard_normal(shape)
        if self.pause_prob > 0 and self.pause > 0:
            x = x + self.pause * (rng.random(shape) < self.pause_prob)
        return float(x) if size is None else x

    def sample_max(self, n, size, random_state=None):
        """Draw ``size`` maxima of n independent step times, in seconds.

        Exact and closed form, with no root finding: the number of paused
        workers is K ~ Binomial(n, pause_prob), and the slowest of m workers
        from one normal component is ``mean + sd * isf_N(1 - V**(1/m))``, V
        uniform. The maximum is the larger of the paused and unpaused maxima.
        :func:`~straggle_edu.models.samplers.sample_max` uses this method
        when a distribution has it.

        Examples
        --------
        >>> x = StepTime(1.0, jitter=0.0, pause_prob=0.01, pause=0.5).sample_max(100, 5, 0)
        >>> sorted(set(x.tolist())) <= [1.0, 1.5]
        True
        """
        from scipy import special

        n = whole("n", n)
        size = whole("size", size, low=0)
        check_memory(size * 40, f"drawing size={size} maxima")
        rng = as_rng(random_state)
        comps = self.components()
        if len(comps) == 1:
            counts = [np.full(size, n, dtype=np.int64)]
        else:
            paused = rng.binomial(n, comps[1][0], size)
            counts = [n - paused, paused]
        out = np.full(size, -np.inf)
        for (_, mean, sd), m in zip(comps, counts):
            some = m > 0
            if sd == 0.0:
                top = np.where(some, mean, -np.inf)
            else:
                log_v = -rng.standard_exponential(size)
                with np.errstate(divide="ignore", invalid="ignore"):
                    w = -np.expm1(log_v / m)  # P(one worker > the max's level)
                    top = np.where(some, mean - sd * special.ndtri(w), -np.inf)
            np.maximum(out, top, out=out)
        return out

    def with_slowdown(self, factor):
        """A copy whose compute time is ``factor`` times longer (pauses unchanged).

        Examples
        --------
        >>> StepTime(1.0).with_slowdown(1.2).mean()
        1.2
        """
        factor = positive("factor", factor)
        return dataclasses.replace(self, slowdown=self.slowdown * factor)


def _out(result, like):
    if np.ndim(like) == 0:
        return float(np.asarray(result).reshape(()))
    return np.asarray(result, dtype=float)


_CHUNK = 2**16


def _mixture_isf(w, comps, sigma):
    """isf of a normal mixture, in chunks so that the solver's temporaries
    stay small whatever the size of w."""
    w = np.asarray(w, dtype=float)
    if w.size <= _CHUNK:
        return _mixture_isf_chunk(w, comps, sigma)
    flat = w.ravel()
    out = np.empty(flat.shape)
    for start in range(0, flat.size, _CHUNK):
        out[start:start + _CHUNK] = _mixture_isf_chunk(flat[start:start + _CHUNK], comps, sigma)
    return out.reshape(w.shape)


def _mixture_isf_chunk(w, comps, sigma):
    """Solve sum_c wt_c * Phi((m_c - t) / sigma) = w for an array w.

    ``comps`` is [(weight, mean), ...] with a common sigma > 0. Newton's method
    on log sf(t) - log w, safeguarded by the bracket [lo, hi]:

    - hi = max_c m_c + sigma * isf_N(w): every component's sf is <= w there;
    - lo = max over components with weight > w of m_c + sigma * isf_N(w / wt_c)
      (and min_c m_c + sigma * isf_N(w)): the mixture's sf is >= w there.
    """
    from scipy import special

    w = np.asarray(w, dtype=float)
    out = np.empty(w.shape)
    out[w == 0.0] = np.inf
    out[w == 1.0] = -np.inf
    inner = (w > 0.0) & (w < 1.0)
    if len(comps) == 1:
        out[inner] = comps[0][1] - sigma * special.ndtri(w[inner])
        return out
    ww = w[inner]
    if ww.size == 0:
        return out
    zw = -special.ndtri(ww)  # isf of the standard normal
    means = [m for _, m in comps]
    hi = max(means) + sigma * zw
    lo = min(means) + sigma * zw
    for wt, m in comps:
        with np.errstate(divide="ignore", over="ignore"):
            ratio = np.minimum(ww / wt, 1.0)
            cand = m - sigma * special.ndtri(ratio)
        lo = np.maximum(lo, np.where(ratio < 1.0, cand, -np.inf))
    lo = np.minimum(lo, hi)
    logw = np.log(ww)
    logwts = [math.log(wt) for wt, _ in comps]

    def log_sf_and_step(t):
        ls = None
        lp = None
        for lwt, m in zip(logwts, means):
            z = (t - m) / sigma
            a = lwt + special.log_ndtr(-z)
            b = lwt - 0.5 * z * z
            ls = a if ls is None else np.logaddexp(ls, a)
            lp = b if lp is None else np.logaddexp(lp, b)
        lp = lp - math.log(sigma * math.sqrt(2.0 * math.pi))
        return ls, lp

    t = lo.copy()
    # log sf carries an absolute rounding error of a few ulps of |log w|.
    g_tol = 8e-16 * np.maximum(1.0, np.abs(logw))
    active = np.ones(t.shape, dtype=bool)
    for _ in range(200):
        idx = np.nonzero(active)[0]
        if idx.size == 0:
            break
        tt, l_, h_ = t[idx], lo[idx], hi[idx]
        ls, lp = log_sf_and_step(tt)
        g = ls - logw[idx]  # decreasing in t; root where 0
        l_ = np.where(g > 0, tt, l_)
        h_ = np.where(g < 0, tt, h_)
        # Newton step on g: g' = -pdf/sf, so t_new = t + g * sf / pdf.
        with np.errstate(over="ignore", invalid="ignore"):
            newton = tt + g * np.exp(np.minimum(ls - lp, 700.0))
        inside = (newton >= l_) & (newton <= h_) & np.isfinite(newton)
        converged = np.abs(g) <= g_tol[idx]
        nxt = np.where(inside, newton, np.where(converged, tt, 0.5 * (l_ + h_)))
        scale = np.maximum(np.abs(nxt), sigma)
        done = converged | (np.abs(nxt - tt) <= 2e-16 * scale) | (h_ - l_ <= 4e-16 * scale)
        t[idx], lo[idx], hi[idx] = nxt, l_, h_
        active[idx[done]] = False
    out[inner] = t
    return out
