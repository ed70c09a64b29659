"""Checked claims for the notebooks' prose: one name, :func:`claim`, for two kinds.

- A number: every number a notebook's text quotes is computed in a cell and
  checked there with ``claim(label, value, expected)``, which prints a line
  with ✓ for the reader: "✓ label = value (quoted: expected)", the figure as
  the prose quotes it. When the reference is itself computed (a second
  method, a simulation, a file another tool wrote), the check is
  ``claim(label, value, against=reference)`` and the line says so:
  "✓ label = value (against: reference)". A statement checked as true or
  false (``expected`` a bool) reads "✓ label: yes" or "✓ label: no".
- A statement of the article (the fact-check notebook):
  ``claim(number, text, figures=..., readings=..., verdict=..., precise=...)``
  checks the stated verdict against the computed readings and returns a
  :class:`~straggle_edu.notebook.factcheck.ClaimCheck` card.

Either raises ``AssertionError`` when the library disagrees, so that a wrong
library fails the notebook run.

A number measured on real processes (a step's wall time, a share of time
spent waiting) is checked with :func:`timing` instead: the same ✓ line when
it holds, and when a busy machine pushes it off, a ⚠ note that says so rather
than a traceback. ``tests/test_lab_timings.py`` holds those figures strictly,
running the notebooks alone in the slow tier.

A ✓ is a promise that the number was checked against something independent
(a closed form, a simulation, a published table). Two other marks say what a
number is when it is not that:

- :func:`cite` shows a figure quoted from a source ("cited: ..."), with the
  source and, where known, the section or figure. Nothing is checked.
- :func:`calibrated` shows a model's output next to the published figure the
  model was fitted to by hand ("≈ ... calibrated to ..."): agreement there is
  by construction, so it wears no ✓, but a drift still fails the run.
- :func:`demo_figure` shows a figure of a synthetic demo (the demo fleet of
  notebook 13, drawn from distributions calibrated to the study): "demo:
  ... (quoted: ...)". It checks the figure against the prose, so a drift
  fails the run, but it is no measurement, so it wears no ✓.

``unit=`` shows a value in the prose's unit: ``"%"`` (0.425 as 42.5%),
``"x"`` (1.6 as 1.6x), or any other suffix (``"ms"``, ``"s"``, ``"days"``,
``"GPU-hours"``); ``"$"`` is a prefix.

Languages: a notebook passes English text, which is the key of the
translation (see :mod:`straggle_edu.i18n`); these helpers translate it when
they show it. A label that needs numbers in it is a template with named
placeholders plus ``values=`` (``claim("layers on stage {stage}", ...,
values={"stage": 2})``): translated first, then formatted, so that the
catalog holds one message, not one per number. In Chinese, a number below
10,000 has no thousands separator (4096), counts of 10,000 and more read as
prose with the exact figure beside them, "98.3万卡时（983,040）", dollars as
"19.66万美元（196,608 美元）" and a multiple as "1.6 倍"; the figure the prose
quotes is shown as the prose writes it, "（文中：98.3万卡时）". The ✗ of an
``AssertionError`` stays English.
"""

from __future__ import annotations

import math

from .._validate import require
from ..i18n import N_, _
from ._shown import _as_quoted, _fmt, _show, _t
from .factcheck import _check_verdict, _text

__all__ = ["claim", "timing", "cite", "calibrated", "demo_figure", "reveal", "say"]

_UNSET = object()


def _source(source, where):
    require(isinstance(source, str) and source.strip() != "", "source", source, "the work the figure comes from")
    return f"{_t(source)}, {_t(where)}" if where else _t(source)


def say(template, **values):
    """Print a sentence from a notebook's code cell, in the reader's language.

    ``template`` is the English text with named placeholders (the catalog's
    key); it is translated, then formatted with ``values``. Use it instead of
    ``print(f"...")`` so that a Chinese run shows Chinese.

    Examples
    --------
    >>> say("the model: a {body:.0f} ms body, and one request in {one_in:.0f} slow", body=50.2, one_in=100)
    the model: a 50 ms body, and one request in 100 slow
    """
    print(_text(template, values))


def reveal(label, value, *, unit=None, digits=3, values=None):
    """Show a computed value, unchecked: the answer to a guess, when the learner runs its cell.

    A "Guess first" prompt names the cell to run; that cell computes the
    answer with no literal in its source and shows it with ``reveal``. The
    figures the prose then quotes are checked by ``claim`` in a hidden
    check cell below the reveal (see ``docs/teaching.md``, "Guess first").

    Parameters
    ----------
    label : str
        What the value is, as the prose names it (the same text as the
        ``claim`` that checks it, so the catalog holds it once).
    value : float, int or bool
        The value as the library computes it.
    unit : str, optional
        The prose's unit (see the module docstring).
    digits : int
        Significant figures shown for a value that is not a whole number.
    values : dict, optional
        Values for the named placeholders of ``label``.

    Examples
    --------
    >>> reveal("P(some worker slow), p = 1%, n = 100", 0.63397, unit="%")
    → P(some worker slow), p = 1%, n = 100: 63.4%
    >>> reveal("E[step] of 4096 workers", 1.60823, unit="s")
    → E[step] of 4096 workers: 1.61 s
    >>> reveal("the bill", 196_608, unit="$"), reveal("a 5th backup makes the step slower", True)
    → the bill: $196,608
    → a 5th backup makes the step slower: yes
    (None, None)
    """
    require(isinstance(digits, int) and not isinstance(digits, bool) and 1 <= digits <= 15, "digits", digits,
            "a whole number from 1 to 15")
    label = _text(label, values)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        print((_("→ {label}: yes") if value else _("→ {label}: no")).format(label=label))
        return
    if isinstance(value, str):
        print(_("→ {label}: {value}").format(label=label, value=_t(value)))
        return
    x = float(value)
    if math.isfinite(x) and not x.is_integer():
        x = float(f"{x:.{digits}g}")
    elif math.isfinite(x) and abs(x) < 2**53:
        x = int(x)
    print(_("→ {label}: {value}").format(label=label, value=_show(x, unit)))


def cite(label, figure, source, *, where=None, unit=None, values=None):
    """Show a figure quoted from a source, marked as cited (nothing is checked).

    Parameters
    ----------
    label : str
        What the figure is, as the prose names it.
    figure : float or str
        The figure as the source gives it.
    source : str
        The work it comes from, such as ``"OSDI 2025 straggler study"``.
    where : str, optional
        The section, table or figure of the source.
    unit : str, optional
        The prose's unit (see the module docstring).
    values : dict, optional
        Values for the named placeholders of ``label`` (see the module docstring).

    Examples
    --------
    >>> cite("jobs that straggle", 0.425, "OSDI 2025 straggler study", where="§4", unit="%")
    cited: jobs that straggle = 42.5% (OSDI 2025 straggler study, §4)
    >>> cite("DistBelief, machines", "thousands", "Dean et al., NIPS 2012", where="abstract")
    cited: DistBelief, machines = thousands (Dean et al., NIPS 2012, abstract)
    """
    print(_("cited: {label} = {figure} ({source})").format(label=_text(label, values), figure=_show(figure, unit),
                                                            source=_source(source, where)))


def calibrated(label, value, target, source, *, where=None, unit=None, rel_tol=0.05, abs_tol=0.0, values=None):
    """Show a hand-calibrated model's output next to the figure it was fitted to.

    The agreement is by construction, so the line says "calibrated to" and
    wears no ✓; a drift beyond the tolerance still raises, so a changed
    model fails the run.

    Parameters
    ----------
    label : str
        What the number is.
    value : float
        The model's output.
    target : float
        The published figure the model was calibrated to.
    source : str
        Where the target comes from.
    where : str, optional
        The section, table or figure of the source.
    unit : str, optional
        The prose's unit (see the module docstring).
    rel_tol, abs_tol : float
        How close the calibration holds, as in ``math.isclose``.
    values : dict, optional
        Values for the named placeholders of ``label``.

    Examples
    --------
    >>> calibrated("p99.9 with hedging", 74.2, 74, "The Tail at Scale", where="Table 2", unit="ms")
    ≈ p99.9 with hedging = 74.2 ms, calibrated to 74 ms (The Tail at Scale, Table 2)
    >>> calibrated("a 5th backup makes the step slower", True, True, "Abadi et al., OSDI 2016", where="figure 8c")
    ≈ a 5th backup makes the step slower: yes, calibrated to Abadi et al., OSDI 2016, figure 8c
    >>> calibrated("p99.9 with hedging", 90, 74, "The Tail at Scale")
    Traceback (most recent call last):
    ...
    AssertionError: ✗ p99.9 with hedging: the model gives 90, but it was calibrated to 74 (The Tail at Scale)
    """
    held = (bool(value) is target) if isinstance(target, bool) else math.isclose(float(value), float(target), rel_tol=rel_tol,
                                                                                   abs_tol=abs_tol)
    if not held:
        english = f"{source}, {where}" if where else source
        raise AssertionError(f"✗ {_english(label, values)}: the model gives {_fmt(value, unit)}, but it was calibrated to "
                             f"{_fmt(target, unit)} ({english})")
    if isinstance(target, bool):  # a shape the model was fitted to reproduce: say it holds, not "True ... True"
        line = _("≈ {label}: yes, calibrated to {source}") if target else _("≈ {label}: no, calibrated to {source}")
        print(line.format(label=_text(label, values), source=_source(source, where)))
        return
    print(_("≈ {label} = {value}, calibrated to {target} ({source})").format(
        label=_text(label, values), value=_show(value, unit), target=_show(target, unit), source=_source(source, where)))


def demo_figure(label, value, expected, *, rel_tol=1e-9, abs_tol=0.0, unit=None, values=None):
    """Show a figure of a synthetic demo, checked against the figure the prose quotes, marked ``demo:``, never ✓.

    A synthetic fleet drawn from distributions calibrated to a study
    (:mod:`straggle_edu.fleet.demo`) reproduces the study by construction:
    its figures are worth reading, but they are not measurements of
    anything. The prose quotes them, so they are still checked (a drift
    raises, as :func:`claim` does), and the line says what they are.

    Parameters
    ----------
    label : str
        What the figure is, as the prose names it.
    value : float
        The figure, computed from the demo.
    expected : float
        The figure as the prose quotes it.
    rel_tol, abs_tol : float
        Tolerances, as in ``math.isclose``.
    unit : str, optional
        The prose's unit (see the module docstring).
    values : dict, optional
        Values for the named placeholders of ``label``.

    Examples
    --------
    >>> demo_figure("jobs at S >= 1.1, the demo fleet", 0.42857, 0.429, abs_tol=5e-4, unit="%")
    demo: jobs at S >= 1.1, the demo fleet = 42.857% (quoted: 42.9%)
    >>> demo_figure("jobs at S >= 1.1, the demo fleet", 0.42857, 0.433, abs_tol=5e-4, unit="%")
    Traceback (most recent call last):
    ...
    AssertionError: ✗ demo: jobs at S >= 1.1, the demo fleet: the demo gives 42.857%, but the text says 43.3%
    """
    if not math.isclose(float(value), float(expected), rel_tol=rel_tol, abs_tol=abs_tol):
        raise AssertionError(f"✗ demo: {_english(label, values)}: the demo gives {_fmt(value, unit)}, but the text says "
                             f"{_fmt(expected, unit)}")
    print(_("demo: {label} = {value} (quoted: {expected})").format(
        label=_text(label, values), value=_show(value, unit), expected=_as_quoted(expected, unit)))


def claim(label, value, expected=_UNSET, *, against=_UNSET, rel_tol=1e-9, abs_tol=0.0, unit=None, figures=None,
          readings=None, verdict=None, precise="", values=None, cited=False):
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
        match the rounding), or the truth of a statement (a bool). Not given
        for a fact-check claim, nor with ``against``.
    against : float, optional
        Instead of ``expected``: a reference that is itself computed (another
        method, a simulation, the value another tool wrote). The line shows
        "against:" instead of "quoted:", since the prose does not quote it.
    rel_tol, abs_tol : float
        Tolerances, as in ``math.isclose``.
    unit : str, optional
        Show the value in the prose's unit: ``"%"``, ``"x"``, ``"$"``, or a
        suffix such as ``"ms"`` (see the module docstring).
    figures : dict, optional
        Fact-check claim: ``{label: value}``, the numbers computed with the library.
    readings : dict
        Fact-check claim: ``{reading: bool}``, does the claim hold under each
        reading, computed from the figures.
    verdict : {"right", "right but loose", "wrong"}
        Fact-check claim: the verdict the fact-check states.
    precise : str
        Fact-check claim: the precise statement.
    values : dict, optional
        Values for the named placeholders of ``label`` (a number's label) or
        of ``precise`` (a fact-check claim), filled in after translation:
        ``precise="1 − 0.99¹⁰⁰ = {p:.1%}", values={"p": p}``.
    cited : bool or collection of str
        Fact-check claim: the readings computed only from cited figures
        (True for all): the card marks them "cited, holds/fails", not ✓/✗.

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
    >>> claim("P(any of 100 slow)", 0.63397, 0.634, abs_tol=5e-4, unit="%")
    ✓ P(any of 100 slow) = 63.397% (quoted: 63.4%)
    >>> claim("... by simulation", 0.6352, against=0.63397, abs_tol=0.005)
    ✓ ... by simulation = 0.6352 (against: 0.63397)
    >>> claim("every backup lowers the step", 0.2 > 0.1, True)
    ✓ every backup lowers the step: yes
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
                              verdict=verdict, precise=precise, values=values, cited=cited)
    require(expected is _UNSET or against is _UNSET, "against", against,
            "left out when expected is given (expected: the figure the prose quotes; against: a computed reference)")
    require(expected is not _UNSET or against is not _UNSET, "expected", "missing",
            "the figure the prose quotes, a computed reference as against=, or readings= and verdict=")
    reference = expected if against is _UNSET else against
    if not _holds(value, reference, rel_tol, abs_tol):
        says = "the text says" if against is _UNSET else "the reference gives"
        raise AssertionError(f"✗ {_english(label, values)}: computed {_fmt(value, unit)}, but {says} "
                             f"{_fmt(reference, unit)}")
    print(_line(_text(label, values), value, reference, unit, quoted=against is _UNSET))


def timing(label, value, expected=_UNSET, *, against=_UNSET, rel_tol=1e-9, abs_tol=0.0, unit=None, values=None):
    """Check a number measured on real processes: a ✓ line when it holds, a note when a busy machine moved it.

    Real processes share the machine with every other program, so a measured
    step, a share of time spent waiting or the rank that came last can stray
    from the model on a busy machine even when nothing is wrong. A notebook
    checks such a number with ``timing`` rather than :func:`claim`: the same
    ✓ line when it holds; when it strays, a ⚠ line with the value and the
    range it missed, and why (never a traceback in the middle of a lab).
    ``tests/test_lab_timings.py`` runs the notebooks alone, in the slow tier,
    and fails on a ⚠ line: there the figures are held strictly.

    Parameters are :func:`claim`'s for a number: ``expected`` (the figure the
    prose quotes) or ``against`` (a computed reference), ``rel_tol`` and
    ``abs_tol``, ``unit`` and ``values``.

    Examples
    --------
    >>> timing("measured / predicted mean step time", 1.04, 1.0, abs_tol=0.1)
    ✓ measured / predicted mean step time = 1.04 (quoted: 1)
    >>> timing("measured / predicted mean step time", 1.35, 1.0, abs_tol=0.1)
    ⚠ measured / predicted mean step time = 1.35, outside 1 ± 0.1 on this run.
      Other programs share this machine: when they keep it busy, sleeps end late and processes wake late. ...
    >>> timing("the slowest worker (rank)", 2, 1)
    ⚠ the slowest worker (rank) = 2, not 1 on this run.
      Other programs share this machine: ...
    """
    require(expected is _UNSET or against is _UNSET, "against", against,
            "left out when expected is given (expected: the figure the prose quotes; against: a computed reference)")
    require(expected is not _UNSET or against is not _UNSET, "expected", "missing",
            "the figure the prose quotes, or a computed reference as against=")
    reference = expected if against is _UNSET else against
    if _holds(value, reference, rel_tol, abs_tol):
        print(_line(_text(label, values), value, reference, unit, quoted=against is _UNSET))
        return
    label, shown, ref = _text(label, values), _show(value, unit), _show(reference, unit)
    if isinstance(reference, bool) or (rel_tol <= 1e-9 and abs_tol == 0):
        note = _("⚠ {label} = {value}, not {reference} on this run.").format(label=label, value=shown, reference=ref)
    else:
        spread = _show(abs_tol, unit) if abs_tol >= rel_tol * abs(float(reference)) else f"{rel_tol:.0%}"
        note = _("⚠ {label} = {value}, outside {reference} ± {tolerance} on this run.").format(
            label=label, value=shown, reference=ref, tolerance=spread)
    print(note)
    print("  " + _("Other programs share this machine: when they keep it busy, sleeps end late and processes wake late. "
                   "Run the cell again when it is quieter."))


def _holds(value, reference, rel_tol, abs_tol):
    if isinstance(reference, bool):
        return bool(value) is reference
    return math.isclose(float(value), float(reference), rel_tol=rel_tol, abs_tol=abs_tol)


def _line(label, value, reference, unit, quoted):
    """The ✓ line: a statement's truth, or the value with the figure quoted or the reference it was checked against."""
    if isinstance(reference, bool):
        return (_("✓ {label}: yes") if reference else _("✓ {label}: no")).format(label=label)
    template = _("✓ {label} = {value} (quoted: {expected})") if quoted else _("✓ {label} = {value} (against: {reference})")
    return template.format(label=label, value=_show(value, unit), expected=_as_quoted(reference, unit),
                           reference=_show(reference, unit))


def _english(template, values):
    return template.format(**values) if values else template


# The units the notebooks name, for the catalog (shown through _show).
_UNITS = (N_("GPU-hours"), N_("layers"))
