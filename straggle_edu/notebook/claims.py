"""Checked numbers for the notebooks' prose.

Every number a notebook's text quotes is computed in a cell and checked there
with :func:`claim`, which prints a line with ✓ for the reader and raises
``AssertionError`` when the library disagrees, so that a wrong library fails
the notebook run.
"""

from __future__ import annotations

import math

__all__ = ["claim"]


def _fmt(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return f"{x:,.6g}"
    return f"{x:.4g}"


def claim(label, value, expected, *, rel_tol=1e-9, abs_tol=0.0):
    """Check that a computed ``value`` matches the ``expected`` figure.

    Parameters
    ----------
    label : str
        What the number is, as the prose names it.
    value : float or bool
        The number as the library computes it.
    expected : float or bool
        The figure the prose quotes (rounded as quoted; set the tolerance to
        match the rounding).
    rel_tol, abs_tol : float
        Tolerances, as in ``math.isclose``.

    Returns
    -------
    None, so a cell shows only the ✓ line.

    Examples
    --------
    >>> claim("P(any of 100 slow)", 0.63397, 0.634, abs_tol=5e-4)
    ✓ P(any of 100 slow) = 0.63397 (quoted: 0.634)
    """
    if isinstance(expected, bool):
        ok = bool(value) is expected
    else:
        ok = math.isclose(float(value), float(expected), rel_tol=rel_tol, abs_tol=abs_tol)
    if not ok:
        raise AssertionError(f"✗ {label}: computed {_fmt(value)}, but the text says {_fmt(expected)}")
    print(f"✓ {label} = {_fmt(value)} (quoted: {_fmt(expected)})")
