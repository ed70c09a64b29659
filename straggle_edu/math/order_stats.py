"""Expected maxima and order statistics of n independent step times.

A synchronous step waits for the slowest of n workers, so its expected
length is E[max], the expectation of the n-th order statistic.

- :func:`expected_max`, :func:`expected_order_stat`: exact, by numerical
  integration, for n up to 10**7 and beyond, in well under a millisecond.
- :func:`gumbel_max_approx`, :func:`sqrt_2_ln_n`: the extreme-value
  approximations that notebooks compare with the exact curve.

``dist`` is any continuous frozen ``scipy.stats`` distribution
(``scipy.stats.norm(10, 0.5)``) or one of the library's step-time models:
any object with ``ppf``, ``isf`` and ``mean`` methods.

How the integral is done
------------------------
With Q the quantile function, E[k-th of n] = ∫ Q(u) B(u) du, where B is the
Beta(k, n-k+1) density. Substituting s for the Beta CDF of u gives
E = ∫₀¹ Q(u(s)) ds, whose integrand is monotone and has at worst mild
singularities at both ends. A tanh-sinh (double-exponential) rule integrates
that to near machine precision with a few hundred points, and the points
near s = 1 are carried as 1 - s so that the far tail keeps its precision.

A distribution whose quantile function jumps (a step time with no jitter,
which takes only two values) declares the jumps with a
``quantile_breaks()`` method returning ``((u, 1 - u), ...)`` pairs. The
integral is then split at those points and each piece is smooth or constant,
so the answer stays exact: E[max] of a point mass is the point.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import described, require, whole

__all__ = [
    "expected_max",
    "expected_order_stat",
    "mean_max_quantile",
    "gumbel_max_approx",
    "sqrt_2_ln_n",
    "check_dist",
]

EULER_GAMMA = 0.5772156649015329

# Tanh-sinh nodes on the real line, y = pi * sinh(t), t in [-T, T] step H.
# s = expit(y); 1 - s = expit(-y); ds = s (1 - s) pi cosh(t) dt.
_H = 1.0 / 32.0
_T = math.asinh(600.0 / math.pi)
_t = np.arange(-math.floor(_T / _H), math.floor(_T / _H) + 1) * _H
_y = math.pi * np.sinh(_t)
# log s and log (1 - s), as scipy.special.log_expit computes them (bit for bit), without importing scipy:
# every CLI call imports this layer.
_LOG_S = -np.logaddexp(0.0, -_y)
_LOG_1MS = -np.logaddexp(0.0, _y)
_S = np.exp(_LOG_S)
_1MS = np.exp(_LOG_1MS)
_W = _H * math.pi * np.cosh(_t) * np.exp(_LOG_S + _LOG_1MS)


def check_dist(dist, name="dist"):
    """Check that ``dist`` is a continuous distribution the library can use.

    Accepts a frozen continuous ``scipy.stats`` distribution or any object with
    ``ppf``, ``isf`` and ``mean`` methods, and a finite mean.

    Examples
    --------
    >>> from scipy import stats
    >>> check_dist(stats.poisson(3))
    Traceback (most recent call last):
    ...
    ValueError: dist must be a continuous distribution (a frozen scipy.stats distribution or a step-time model),
    got a discrete scipy.stats distribution
    """
    valid = "a continuous distribution (a frozen scipy.stats distribution or a step-time model)"
    inner = getattr(dist, "dist", None)
    if inner is not None:  # only a frozen scipy.stats distribution can be discrete (scipy.stats loads in about 1 s)
        from scipy import stats

        require(not isinstance(inner, stats.rv_discrete), name, described("a discrete scipy.stats distribution"), valid)
    ok = all(callable(getattr(dist, m, None)) for m in ("ppf", "isf", "mean"))
    require(ok, name, described(type(dist).__name__), valid)
    try:
        mean, error = float(dist.mean()), None
    except Exception as exc:  # e.g. an unfrozen scipy distribution missing its shape
        mean, error = math.nan, exc
    require(error is None, name, described(f"{type(dist).__name__} ({error})"), f"{valid} whose mean can be computed",
            fix="freeze a scipy distribution with all its parameters, e.g. stats.gamma(2)")
    require(math.isfinite(mean), name, described(f"one with mean {mean}"), "a distribution with a finite mean",
            fix="the expected maximum of such a distribution is infinite")
    return dist


def _quantile_functions(dist):
    """(ppf, isf) for dist; for scipy's own distributions, skip the per-call
    argument checks, which cost more than the quantiles themselves."""
    inner = getattr(dist, "dist", None)
    if inner is not None and hasattr(inner, "_parse_args") and hasattr(inner, "_isf"):
        try:
            shapes, loc, scale = inner._parse_args(*dist.args, **dist.kwds)
            shapes = tuple(np.asarray(a, dtype=float) for a in shapes)
            if all(a.ndim == 0 for a in shapes) and np.ndim(loc) == 0 and np.ndim(scale) == 0:
                return (
                    lambda u: inner._ppf(u, *shapes) * scale + loc,
                    lambda w: inner._isf(w, *shapes) * scale + loc,
                )
        except Exception:  # pragma: no cover - fall back to the public API
            pass
    return dist.ppf, dist.isf


def quantile(dist, u, w):
    """Q(u) for arrays u and w = 1 - u, using ``isf(w)`` in the upper half so
    that the far tail keeps full precision."""
    ppf, isf = _quantile_functions(dist)
    out = np.empty_like(u)
    lower = u <= 0.5
    if lower.any():
        out[lower] = ppf(u[lower])
    upper = ~lower
    if upper.any():
        out[upper] = isf(w[upper])
    return out


def _integrate(q, weights):
    """Sum the tanh-sinh rule, skipping nodes whose weight underflowed."""
    keep = weights > 0
    vals = q[keep] * weights[keep]
    require(np.isfinite(vals).all(), "dist", "a distribution whose tail overflows", "a distribution with a finite, well-behaved mean")
    return float(vals.sum())


def _u_from_s(k, n, s, oms):
    """(u, 1 - u) of the k-th of n uniforms at Beta-CDF level s (oms = 1 - s)."""
    if k == n:
        # u = s**(1/n); 1 - u = -expm1(log(s)/n).
        with np.errstate(divide="ignore"):
            log_s = np.where(s < 0.5, np.log(s), np.log1p(-oms))
        return np.exp(log_s / n), -np.expm1(log_s / n)
    if k == 1:
        # 1 - u = (1 - s)**(1/n).
        with np.errstate(divide="ignore"):
            log_oms = np.where(oms < 0.5, np.log(oms), np.log1p(-s))
        return -np.expm1(log_oms / n), np.exp(log_oms / n)
    a, b = k, n - k + 1
    # Each inverse is accurate only from its own small side: when s is tiny
    # and the Beta concentrated, 1 - s rounds to 1 and betaincinv(b, a, 1)
    # is 1, not the true 1 - u. Take the other member as a complement
    # unless the direct inverse agrees with it (then it carries more digits).
    u_s = _betaincinv(a, b, s)
    w_o = _betaincinv(b, a, oms)
    from_s = s <= 0.5
    u_c, w_c = 1.0 - w_o, 1.0 - u_s
    with np.errstate(invalid="ignore", divide="ignore"):
        w_ok = np.abs(w_o - w_c) <= 1e-6 * np.abs(w_c)
        u_ok = np.abs(u_s - u_c) <= 1e-6 * np.abs(u_c)
    u = np.where(from_s | u_ok, u_s, u_c)
    w = np.where(~from_s | w_ok, w_o, w_c)
    return u, w


def _betaincinv(a, b, s):
    """Inverse of the regularized incomplete beta function, robust for tiny s.

    scipy's ``betaincinv`` returns NaN for some small ``a`` when s is below
    about 1e-100 (for example a=5, b=3, s=1e-170). There u is tiny and the
    leading term I_u(a, b) = u**a / (a B(a, b)) (1 + O(b u)) is exact to
    double precision, so it is solved directly.
    """
    from scipy import special  # loaded on use

    u = special.betaincinv(a, b, s)
    bad = np.isnan(u)
    if bad.any():
        with np.errstate(divide="ignore"):
            log_u = (np.log(s[bad]) + math.log(a) + special.betaln(a, b)) / a
        u[bad] = np.exp(log_u)
    return u


def _s_from_u(k, n, u, w):
    """(s, 1 - s): the Beta(k, n-k+1) CDF at u, and its complement (w = 1 - u)."""
    if k == n:
        log_u = math.log1p(-w) if w < 0.5 else math.log(u)
        return math.exp(n * log_u), -math.expm1(n * log_u)
    if k == 1:
        log_w = math.log(w) if w < 0.5 else math.log1p(-u)
        return -math.expm1(n * log_w), math.exp(n * log_w)
    from scipy import special

    a, b = k, n - k + 1
    return float(special.betainc(a, b, u)), float(special.betainc(b, a, w))


def _breaks(dist):
    """Quantile jumps that dist declares, as sorted (u, 1 - u) pairs in (0, 1)."""
    method = getattr(dist, "quantile_breaks", None)
    if not callable(method):
        return []
    pairs = sorted((float(u), float(w)) for u, w in method())
    return [(u, w) for u, w in pairs if 0.0 < u < 1.0]


def _order_stat(dist, k, n):
    if n == 1:
        return float(dist.mean())
    breaks = _breaks(dist)
    if not breaks:
        s, oms = _S, _1MS
        u, w = _u_from_s(k, n, s, oms)
        return _integrate(quantile(dist, u, w), _W)
    # Split the s-integral where the quantile function jumps, so that each
    # piece integrates a smooth (or constant) function. Nodes are clamped to
    # their own side of each jump so that rounding never puts one across it.
    edges = [(0.0, 1.0, 0.0, 1.0)]  # (s, 1 - s, u, 1 - u)
    edges += [(*_s_from_u(k, n, u, w), u, w) for u, w in breaks]
    edges.append((1.0, 0.0, 1.0, 0.0))
    total = 0.0
    for (sa, oa, ua, wa), (sb, ob, ub, wb) in zip(edges[:-1], edges[1:]):
        width = oa - ob if sa >= 0.5 else sb - sa
        if not width > 0.0:
            continue
        low = _S <= 0.5
        # A piece can be narrower than 1e-100: keep s and 1 - s off zero, where a
        # quantile is infinite (such nodes carry weights below 1e-300 anyway).
        tiny = np.finfo(float).tiny
        s = np.maximum(np.where(low, sa + width * _S, sb - width * _1MS), tiny)
        oms = np.maximum(np.where(low, oa - width * _S, ob + width * _1MS), tiny)
        u, w = _u_from_s(k, n, s, oms)
        if ua > 0.0:  # above a jump: strictly past it
            u = np.maximum(u, np.nextafter(ua, 1.0))
            w = np.minimum(w, np.nextafter(wa, 0.0))
        if ub < 1.0:  # below a jump: at most at it
            u = np.minimum(u, ub)
            w = np.maximum(w, wb)
        total += _integrate(quantile(dist, u, w), width * _W)
    return total


def expected_order_stat(dist, k, n):
    """Expected k-th smallest of n independent draws from ``dist``.

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        The step-time distribution of one worker, in seconds.
    k : int
        Order-statistic index, 1 <= k <= n (k = n is the maximum).
    n : int or array_like of int
        Number of workers, >= 1.

    Returns
    -------
    float or numpy.ndarray
        Seconds (the units of ``dist``).

    Examples
    --------
    For Exp(1), E[k-th of n] = H_n - H_(n-k):

    >>> from scipy import stats
    >>> round(expected_order_stat(stats.expon(), 2, 3), 10)  # 1/3 + 1/2
    0.8333333333
    >>> round(expected_order_stat(stats.norm(), 5, 10), 5)  # Harter (1961)
    -0.12267
    """
    dist = check_dist(dist)
    n = whole("n", n)
    if np.ndim(n) == 0 and np.ndim(k) == 0:
        k = whole("k", k, low=1, high=n)
        return _order_stat(dist, k, n)
    k = whole("k", k)
    ks, ns = np.broadcast_arrays(k, n)
    bad = ks > ns
    if bad.any():
        require(False, "k", ks[bad].flat[0], "a whole number in 1..n")
    return np.array([_order_stat(dist, int(a), int(b)) for a, b in zip(ks.flat, ns.flat)]).reshape(ks.shape)


def expected_max(dist, n):
    """Expected slowest of n independent workers: E[max of n draws from dist].

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        The step-time distribution of one worker, in seconds.
    n : int or array_like of int
        Number of workers, >= 1.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> from scipy import stats
    >>> round(expected_max(stats.norm(), 2), 7)  # 1/sqrt(pi)
    0.5641896
    >>> round(expected_max(stats.norm(), 100), 5)  # Harter (1961)
    2.50759
    >>> round(expected_max(stats.expon(), 4), 10)  # H_4 = 1 + 1/2 + 1/3 + 1/4
    2.0833333333
    >>> expected_max(stats.norm(10, 0.5), [1, 100, 4096]).round(3)
    array([10.   , 11.254, 11.813])
    """
    dist = check_dist(dist)
    n = whole("n", n)
    if np.ndim(n) == 0:
        return _order_stat(dist, n, n)
    return np.array([_order_stat(dist, int(m), int(m)) for m in n.flat]).reshape(n.shape)


def mean_max_quantile(dist, n, steps, q=0.99):
    """The q-quantile of the mean, over ``steps`` independent steps, of the slowest of n workers.

    A job of n equal workers still runs at the pace of its slowest, step by
    step; averaged over the steps, noise alone lifts the step time above the
    mean by E[max], and rarely by much more. With one step the quantile is
    exact, Q(q^(1/n)). With more, the mean of the steps' maxima is taken as
    normal (central limit), with the exact mean :func:`expected_max` and the
    exact variance of one maximum (the same integral, of Q squared).

    Parameters
    ----------
    dist : frozen scipy.stats distribution or step-time model
        One worker's step time (seconds), without breaks in its quantile function.
    n, steps : int
        Workers (>= 1) and steps (>= 1).
    q : float
        The quantile, in (0, 1).

    Examples
    --------
    >>> from scipy import stats
    >>> round(mean_max_quantile(stats.norm(), 2, 1), 4)   # Q(0.99 ** (1/2)) of the standard normal
    2.575
    >>> round(mean_max_quantile(stats.norm(), 1, 4), 4)   # one worker: z(0.99) / sqrt(4)
    1.1632
    >>> round(mean_max_quantile(stats.norm(), 2, 10_000), 3)   # many steps: E[max of 2] = 1/sqrt(pi)
    0.58
    """
    from scipy import special

    dist = check_dist(dist)
    n = whole("n", n, low=1)
    steps = whole("steps", steps, low=1)
    require(isinstance(q, (int, float)) and 0.0 < q < 1.0, "q", q, "a probability strictly between 0 and 1")
    require(not _breaks(dist), "dist", dist, "a distribution whose quantile function has no jumps")
    if steps == 1:
        log_q = math.log(q) / n
        return float(quantile(dist, np.array([math.exp(log_q)]), np.array([-math.expm1(log_q)]))[0])
    mean = _order_stat(dist, n, n)
    u, w = _u_from_s(n, n, _S, _1MS)
    second = _integrate(quantile(dist, u, w) ** 2, _W)
    sd = math.sqrt(max(second - mean * mean, 0.0))
    return mean + float(special.ndtri(q)) * sd / math.sqrt(steps)


def sqrt_2_ln_n(n):
    """The leading extreme-value term for the standard normal: sqrt(2 ln n).

    E[max of n standard normals] / sqrt(2 ln n) -> 1 as n grows, slowly.

    Examples
    --------
    >>> round(sqrt_2_ln_n(100), 4)
    3.0349
    >>> sqrt_2_ln_n([1, 4096]).round(3)
    array([0.   , 4.079])
    """
    n = whole("n", n)
    out = np.sqrt(2.0 * np.log(np.asarray(n, dtype=float)))
    return float(out) if np.ndim(n) == 0 else out


def gumbel_max_approx(dist, n):
    """Gumbel (extreme-value) approximation to E[max of n]: b_n + gamma * a_n.

    b_n = Q(1 - 1/n) is the level one worker in n exceeds, a_n = 1/(n f(b_n))
    is the Gumbel scale, and gamma = 0.5772... is Euler's constant. It tracks
    the exact curve closely for light tails and large n.

    ``dist`` needs a ``pdf`` method as well as ``isf``.

    Examples
    --------
    >>> from scipy import stats
    >>> round(gumbel_max_approx(stats.norm(), 100), 3)
    2.543
    >>> round(gumbel_max_approx(stats.expon(), 1000), 4)  # ln(1000) + gamma
    7.485
    """
    dist = check_dist(dist)
    require(callable(getattr(dist, "pdf", None)), "dist", dist, "a distribution with a pdf")
    n = whole("n", n)
    nn = np.asarray(n, dtype=float)
    b = np.asarray(dist.isf(1.0 / nn), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = 1.0 / (nn * np.asarray(dist.pdf(b), dtype=float))
        out = np.where(nn == 1, float(dist.mean()), b + EULER_GAMMA * a)
    return float(out) if np.ndim(n) == 0 else out
