"""Checked claims for the notebooks' prose: one name, :func:`claim`, for two kinds.

- A number: every number a notebook's text quotes is computed in a cell and
  checked there with ``claim(label, value, expected)``, which prints a line
  with ✓ for the reader.
- A statement of the article (the fact-check notebook):
  ``claim(number, text, figures=..., readings=..., verdict=..., precise=...)``
  checks the stated verdict against the computed readings and returns a
  :class:`~straggle_edu.notebook.factcheck.ClaimCheck` card.

Either raises ``AssertionError`` when the library disagrees, so that a wrong
library fails the notebook run.
"""

from __future__ import annotations

import math

from .._validate import require
from .factcheck import _check_verdict

__all__ = ["claim"]

_UNSET = object()


def _fmt(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return f"{x:,.6g}"
    return f"{x:.4g}"


def claim(label, value, expected=_UNSET, *, rel_tol=1e-9, abs_tol=0.0, figures=None, readings=None, verdict=None,
          precise=""):
    """Check a number the prose quotes, or a claim of the article with its verdict.

    ``claim(label, value, expected)`` checks a number;
    ``claim(number, text, readings=..., verdict=..., figures=..., precise=...)``
    (``readings`` and ``verdict`` given) checks a fact-check claim.

    Parameters
    ----------
    label : str, or int for a fact-check claim
        What the number is, as the prose names it; or the claim's number, >= 1.
    value : float or bool, or str for a fact-check claim
        The number as the library computes it; or the claim as the article
        puts it (short).
    expected : float or bool
        The figure the prose quotes (rounded as quoted; set the tolerance to
        match the rounding). Not given for a fact-check claim.
    rel_tol, abs_tol : float
        Tolerances, as in ``math.isclose``.
    figures : dict, optional
        Fact-check claim: ``{label: value}``, the numbers computed with the library.
    readings : dict
        Fact-check claim: ``{reading: bool}``, does the claim hold under each
        reading, computed from the figures.
    verdict : {"right", "right but loose", "wrong"}
        Fact-check claim: the verdict the fact-check states.
    precise : str
        Fact-check claim: the precise statement.

    Returns
    -------
    None for a number, so a cell shows only the ✓ line; a
    :class:`~straggle_edu.notebook.factcheck.ClaimCheck` (a card) for a
    fact-check claim.

    Raises
    ------
    AssertionError
        When the value is not the quoted figure, or the readings support
        another verdict than the one stated.

    Examples
    --------
    >>> claim("P(any of 100 slow)", 0.63397, 0.634, abs_tol=5e-4)
    ✓ P(any of 100 slow) = 0.63397 (quoted: 0.634)
    >>> print(claim(2, "over 60% at 100 cards", figures={"P": 0.634}, readings={"P > 0.6": 0.634 > 0.6},
    ...             verdict="right", precise="1 - 0.99^100 = 63.4%"))
    Claim 2: over 60% at 100 cards
      P = 0.634
      ✓ P > 0.6
      Verdict: RIGHT
      Precisely: 1 - 0.99^100 = 63.4%
    """
    if readings is not None or verdict is not None:
        require(expected is _UNSET, "expected", expected, "left out for a fact-check claim (give readings and verdict)")
        return _check_verdict(label, value, figures={} if figures is None else figures, readings=readings,
                              verdict=verdict, precise=precise)
    require(expected is not _UNSET, "expected", "missing", "the figure the prose quotes (or readings= and verdict=)")
    if isinstance(expected, bool):
        ok = bool(value) is expected
    else:
        ok = math.isclose(float(value), float(expected), rel_tol=rel_tol, abs_tol=abs_tol)
    if not ok:
        raise AssertionError(f"✗ {label}: computed {_fmt(value)}, but the text says {_fmt(expected)}")
    print(f"✓ {label} = {_fmt(value)} (quoted: {_fmt(expected)})")
