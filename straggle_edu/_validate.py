"""Input checks shared by every layer.

Every rejection in the package goes through :func:`require`, so that all
messages read alike::

    n must be a whole number >= 1, got 0

The other helpers are thin wrappers that name the valid range once.
This module imports only numpy.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

__all__ = [
    "require",
    "scalar",
    "one_of",
    "instance",
    "described",
    "whole",
    "probability",
    "nonnegative",
    "positive",
    "in_range",
    "finite",
    "as_rng",
    "as_output",
    "check_fields",
    "check_memory",
    "memory_budget",
    "set_memory_budget",
]

_DEFAULT_BUDGET = 512 * 2**20
_budget = int(os.environ.get("STRAGGLE_EDU_MEMORY_MIB", 512)) * 2**20


def _show(value):
    """A short, readable rendering of an offending value."""
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is not None and arr.ndim > 0:
        return f"{arr.tolist()[:5]}{'...' if arr.size > 5 else ''} (an array)"
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


class described(str):
    """Text that a message shows as it is, unquoted, in place of a value.

    Examples
    --------
    >>> require(False, "dist", described("a discrete distribution"), "a continuous distribution")
    Traceback (most recent call last):
    ...
    ValueError: dist must be a continuous distribution, got a discrete distribution
    """

    def __repr__(self):
        return str(self)


def require(ok, name, value, valid, fix=None):
    """Raise ``ValueError("<name> must be <valid>, got <value>")`` unless ok.

    ``fix``, when given, follows after a semicolon: what to do instead.

    Examples
    --------
    >>> require(False, "n", 0, "a whole number >= 1")
    Traceback (most recent call last):
    ...
    ValueError: n must be a whole number >= 1, got 0
    >>> require(False, "out", "/no/such/x.csv", "a file in a folder that exists", fix="create the folder first")
    Traceback (most recent call last):
    ...
    ValueError: out must be a file in a folder that exists, got '/no/such/x.csv'; create the folder first
    """
    if not ok:
        raise ValueError(f"{name} must be {valid}, got {_show(value)}" + (f"; {fix}" if fix else ""))


def scalar(name, value, valid="a single number"):
    """Check a single value, not an array; return it unchanged.

    Examples
    --------
    >>> scalar("base", 1.5)
    1.5
    >>> scalar("base", [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: base must be a single number, got [1.0, 2.0] (an array)
    """
    require(np.ndim(value) == 0, name, value, valid)
    return value


def one_of(name, value, options):
    """Check that value is one of the options (a sequence); return it.

    Examples
    --------
    >>> one_of("phase", "compute", ("compute", "wait"))
    'compute'
    >>> one_of("phase", "sleep", ("compute", "wait"))
    Traceback (most recent call last):
    ...
    ValueError: phase must be one of 'compute', 'wait', got 'sleep'
    """
    options = tuple(options)
    try:
        ok = value in options
    except (TypeError, ValueError):  # an unhashable value or an array is not an option
        ok = False
    require(ok, name, value, "one of " + ", ".join(map(repr, options)))
    return value


def instance(name, value, kind, valid=None):
    """Check ``isinstance(value, kind)``; the message names the type it got.

    Examples
    --------
    >>> instance("cluster", "c", dict, "a Cluster")
    Traceback (most recent call last):
    ...
    ValueError: cluster must be a Cluster, got str
    """
    valid = valid or f"a {kind.__name__}"
    require(isinstance(value, kind), name, described(type(value).__name__), valid)
    return value


def _numeric(name, value, valid):
    """Return value as a float64 array, or raise a readable error."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        require(False, name, value, valid)
    if isinstance(value, (list, tuple, np.ndarray)) and np.asarray(value).dtype.kind in "USb":
        require(False, name, value, valid)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        require(False, name, value, valid)
    require(arr.dtype.kind == "f", name, value, valid)
    bad = np.isnan(arr)
    if bad.any():
        require(False, name, arr[bad].flat[0] if arr.ndim else value, valid + " (not NaN)")
    return arr


def _first_bad(arr, ok):
    return arr if arr.ndim == 0 else arr[~ok].flat[0]


def whole(name, value, low=1, high=None):
    """Check a whole number (or array of them) >= low (and <= high).

    Returns an int for scalar input and an int64 array otherwise.

    Examples
    --------
    >>> whole("n", 4096), whole("n", [1.0, 2.0])
    (4096, array([1, 2]))
    >>> whole("n", 2.5)
    Traceback (most recent call last):
    ...
    ValueError: n must be a whole number >= 1, got 2.5
    """
    valid = f"a whole number >= {low}" if high is None else f"a whole number in {low}..{high}"
    arr = _numeric(name, value, valid)
    ok = np.isfinite(arr) & (arr == np.round(arr)) & (arr >= low)
    if high is not None:
        ok &= arr <= high
    if not ok.all():
        bad = _first_bad(arr, ok) if arr.ndim else value
        if arr.ndim and np.isfinite(bad) and bad == np.round(bad):
            bad = int(bad)  # an array of counts: show 0, not 0.0
        require(False, name, bad, valid)
    if arr.ndim == 0:
        return int(arr)
    return arr.astype(np.int64)


def in_range(name, value, low=-math.inf, high=math.inf, *, low_open=False, high_open=False):
    """Check a real number (or array) inside an interval; return float or array.

    Examples
    --------
    >>> in_range("lost_fraction", 0.1, 0, 1, high_open=True)
    0.1
    >>> in_range("lost_fraction", 1.0, 0, 1, high_open=True)
    Traceback (most recent call last):
    ...
    ValueError: lost_fraction must be in [0, 1), got 1.0
    """
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    fmt = lambda x: "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:g}"
    if low == -math.inf and high == math.inf:
        valid = "a real number"
    elif high == math.inf:
        valid = f"{'>' if low_open else '>='} {fmt(low)}"
    elif low == -math.inf:
        valid = f"{'<' if high_open else '<='} {fmt(high)}"
    else:
        valid = f"in {lo}{fmt(low)}, {fmt(high)}{hi}"
    arr = _numeric(name, value, valid)
    ok = (arr > low) if low_open else (arr >= low)
    ok &= (arr < high) if high_open else (arr <= high)
    if high == math.inf and not high_open:
        ok &= arr < math.inf  # infinity is never a useful input
    if not ok.all():
        require(False, name, _first_bad(arr, ok) if arr.ndim else value, valid)
    return float(arr) if arr.ndim == 0 else arr


def probability(name, value):
    """Check a probability in [0, 1].

    Examples
    --------
    >>> probability("p", 0.01)
    0.01
    >>> probability("p", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: p must be in [0, 1], got 1.5
    """
    return in_range(name, value, 0.0, 1.0)


def nonnegative(name, value):
    """Check a finite number >= 0 (times, prices, counts of GPUs).

    Examples
    --------
    >>> nonnegative("price", 2)
    2.0
    >>> nonnegative("price", -1)
    Traceback (most recent call last):
    ...
    ValueError: price must be >= 0, got -1
    """
    return in_range(name, value, 0.0)


def positive(name, value):
    """Check a finite number > 0.

    Examples
    --------
    >>> positive("days", 0)
    Traceback (most recent call last):
    ...
    ValueError: days must be > 0, got 0
    """
    return in_range(name, value, 0.0, low_open=True)


def finite(name, value):
    """Check a finite real number.

    Examples
    --------
    >>> finite("t", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: t must be a real number (not NaN), got nan
    """
    arr = in_range(name, value)
    return arr


def as_rng(rng):
    """Turn a Generator, an int seed or None into a ``numpy.random.Generator``.

    Examples
    --------
    >>> int(as_rng(7).integers(10)) == int(as_rng(7).integers(10))
    True
    """
    if isinstance(rng, (bool, np.bool_)) or (
        rng is not None
        and not isinstance(rng, (numbers.Integral, np.random.Generator, np.random.SeedSequence))
    ):
        require(False, "rng", rng, "a numpy.random.Generator, an int seed or None")
    if isinstance(rng, numbers.Integral) and rng < 0:
        require(False, "rng", rng, "a seed >= 0")
    return np.random.default_rng(rng)


def check_fields(obj, **checks):
    """Check a frozen dataclass's fields in place, one check per field.

    ``checks[name](name, value)`` is called with each field's value, in the
    order given, and its result replaces the field: a ``__post_init__`` in
    one table instead of a line of ``object.__setattr__`` per field.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Job:
    ...     n: int
    ...     p: float
    ...     def __post_init__(self):
    ...         check_fields(self, n=whole, p=probability)
    >>> Job(4.0, 0.5)
    Job(n=4, p=0.5)
    >>> Job(4, 2)
    Traceback (most recent call last):
    ...
    ValueError: p must be in [0, 1], got 2
    """
    for name, check in checks.items():
        object.__setattr__(obj, name, check(name, getattr(obj, name)))


def as_output(result, *inputs):
    """Return a Python float when every input is a scalar, else an array.

    Examples
    --------
    >>> as_output(np.array(2.5), 1.0), as_output([1, 2], [1, 2])
    (2.5, array([1., 2.]))
    """
    if all(np.ndim(x) == 0 for x in inputs):
        return float(np.asarray(result).reshape(()))
    return np.asarray(result, dtype=float)


def memory_budget():
    """The current memory budget in bytes (512 MiB unless changed).

    Examples
    --------
    >>> old = set_memory_budget(2**30)
    >>> memory_budget()
    1073741824
    >>> _ = set_memory_budget(old)
    """
    return _budget


def set_memory_budget(nbytes):
    """Change the memory budget; return the previous one (in bytes).

    The environment variable ``STRAGGLE_EDU_MEMORY_MIB`` sets the starting
    value.

    Examples
    --------
    >>> old = set_memory_budget(2**30)
    >>> set_memory_budget(old) == 2**30
    True
    """
    global _budget
    nbytes = whole("nbytes", nbytes, low=1)
    old, _budget = _budget, nbytes
    return old


def check_memory(nbytes, what):
    """Refuse up front a request that would need more than the budget.

    Examples
    --------
    >>> check_memory(8 * 10**12, "sampling 10**12 step times")
    Traceback (most recent call last):
    ...
    ValueError: sampling 10**12 step times needs about 7629395 MiB, more than the memory budget of 512 MiB;
    ask for less, or raise the budget with straggle_edu.set_memory_budget(nbytes)
    """
    if nbytes > _budget:
        raise ValueError(
            f"{what} needs about {math.ceil(nbytes / 2**20)} MiB, more than the memory "
            f"budget of {_budget // 2**20} MiB; ask for less, or raise the budget with "
            f"straggle_edu.set_memory_budget(nbytes)"
        )
