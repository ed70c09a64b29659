"""Verdicts for the article's claims, computed and checked.

A claim is judged by the readings a careful reader could give it. Each
reading is a yes/no statement computed with the library:

- it holds under every reading: **right**;
- it holds under some readings but not others: **right but loose** (the
  precise statement says which reading is true);
- it holds under none: **wrong**.

:func:`straggle_edu.notebook.claim`, given ``readings=`` and ``verdict=``,
takes the verdict the author of the fact-check states and the computed
readings, and raises ``AssertionError`` when they disagree, so a wrong
library, or a wrong verdict, fails the notebook run (the private
``_check_verdict`` here does the work). The result renders as a card in a notebook (HTML) and
as plain text elsewhere.

A reading computed only from figures quoted from a source (the study's
constants, a paper's abstract) is not checked against anything independent,
so the card does not mark it ✓ or ✗: it reads "cited, holds: ..." or
"cited, fails: ..." (``cited=True``, or the names of those readings). A
figure may carry its unit, ``(value, unit)``, shown as :func:`claim`'s lines
show it ("$196,608"; in Chinese "19.66万美元（196,608 美元）").

The card speaks the reader's language: the notebook's English texts (the
claim, the figures' and readings' labels, the precise statement) are the
catalog's keys, translated when the card is shown; ``values=`` fills the
named placeholders of ``precise`` after translation, with
:func:`straggle_edu.i18n.fill` (a grouped field, ``{usd:,.0f}``, follows the
Chinese rule for numbers: no separator below 10,000, 万 from it up). In
Chinese the card quotes the claim in 「」, a quote inside it in 『』, and a
precise statement's `code` shows as code.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field

from .._validate import require, whole
from ..i18n import N_, _, fill, format_count_exact, get_language
from ._shown import _show, _t

__all__ = ["VERDICTS", "ClaimCheck", "VerdictTable", "verdict_from_readings", "verdict_table"]

VERDICTS = (N_("right"), N_("right but loose"), N_("wrong"))
_COLORS = {"right": "#2f7d32", "right but loose": "#b26a00", "wrong": "#c62828"}


def verdict_from_readings(readings):
    """The verdict the readings support: all hold, some hold, or none.

    Examples
    --------
    >>> verdict_from_readings({"job time": False, "GPU-hours": True})
    'right but loose'
    >>> verdict_from_readings({"as written": True})
    'right'
    """
    require(isinstance(readings, dict) and len(readings) >= 1, "readings", readings,
            "a dict of {reading: bool} with at least one entry")
    values = [bool(v) for v in readings.values()]
    if all(values):
        return "right"
    return "right but loose" if any(values) else "wrong"


def _text(template, values=None):
    """``template`` translated, then filled with ``values`` (strings among them translated too).

    Examples
    --------
    >>> _text("layers on stage {stage}", {"stage": 2})
    'layers on stage 2'
    >>> _text("E[max] rises with n")
    'E[max] rises with n'
    """
    if not values:
        return _t(template)
    return fill(_t(template), **{k: _t(v) if isinstance(v, str) else v for k, v in values.items()})


def _fmt(x):
    if isinstance(x, tuple) and len(x) == 2:  # (value, unit): a share to 4 figures, others as claim's lines show them
        value, unit = x
        if unit == "%" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return f"{100 * value:,.4g}%"
        return _show(value, unit)
    if isinstance(x, bool):
        return _("yes") if x else _("no")
    # Chinese writes a number below 10,000 with no separator (4096); from 10,000 up 98.3万（983,040）
    group = get_language() != "zh" or abs(x) >= 1e4 if isinstance(x, (int, float)) else True
    if isinstance(x, int):
        text = f"{x:,}" if group else f"{x}"
    elif isinstance(x, float):
        if x == 0 or not math.isfinite(x):
            return f"{x}"
        if abs(x) >= 1e4 or (abs(x) >= 1e3 and x == round(x)):
            text = f"{x:,.0f}" if group else f"{x:.0f}"
        elif abs(x) >= 1e-3:
            return f"{x:,.4g}" if group else f"{x:.4g}"
        else:
            return f"{x:.3g}"
    else:
        return _t(x) if isinstance(x, str) else str(x)
    return format_count_exact(x, text)


_CODE = re.compile(r"`([^`\n]+)`")


def _html_code(escaped):
    """An escaped text's `code` spans as <code> (a precise statement names a scheme: `drop`)."""
    return _CODE.sub(r"<code>\1</code>", escaped)


@dataclass(frozen=True)
class ClaimCheck:
    """One checked claim: what it says, what the library computes, the verdict.

    Attributes
    ----------
    number : int
        The claim's number in the fact-check.
    claim : str
        The claim, as the article puts it (short).
    figures : dict
        ``{label: computed value}``.
    readings : dict
        ``{reading: holds?}``, computed.
    verdict : str
        One of :data:`VERDICTS`, as stated and as the readings support.
    precise : str
        The precise statement (English; a template when ``values`` is given).
    values : dict
        Values for the named placeholders of ``precise``.
    cited : tuple
        The readings computed only from cited figures (marked "cited", not ✓).

    Examples
    --------
    >>> from straggle_edu.notebook import claim
    >>> c = claim(2, "over 60% at 100 cards", figures={"P": 0.634},
    ...                 readings={"P > 0.6": 0.634 > 0.6}, verdict="right", precise="")
    >>> c.number, c.verdict, c.figures, c.readings
    (2, 'right', {'P': 0.634}, {'P > 0.6': True})
    """

    number: int
    claim: str
    figures: dict = field(default_factory=dict)
    readings: dict = field(default_factory=dict)
    verdict: str = "right"
    precise: str = ""
    values: dict = field(default_factory=dict)
    cited: tuple = ()

    def _mark(self, reading, ok):
        """A reading's line: ✓/✗ when computed, "cited, holds/fails:" when read from cited figures only."""
        if reading in self.cited:
            return (_("cited, holds: {reading}") if ok else _("cited, fails: {reading}")).format(reading=_t(reading))
        return f"{'✓' if ok else '✗'} {_t(reading)}"

    @property
    def precise_text(self):
        """The precise statement in the reader's language, its placeholders filled."""
        return _text(self.precise, self.values)

    def __str__(self):
        lines = [_("Claim {number}: {claim}").format(number=self.number, claim=_t(self.claim))]
        lines += [f"  {_t(k)} = {_fmt(v)}" for k, v in self.figures.items()]
        lines += [f"  {self._mark(k, ok)}" for k, ok in self.readings.items()]
        lines += ["  " + _("Verdict: {verdict}").format(verdict=_(self.verdict).upper()),
                  "  " + _("Precisely: {precise}").format(precise=self.precise_text)]
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        e = html.escape
        color = _COLORS[self.verdict]
        figures = "".join(f"<tr><td>{e(_t(k))}</td><td style='text-align:right'><b>{e(_fmt(v))}</b></td></tr>"
                          for k, v in self.figures.items())
        readings = "".join(f"<li>{e(self._mark(k, ok))}</li>" for k, ok in self.readings.items())
        title, colon = e(_("Claim {number}")).format(number=self.number), e(_(": "))
        claim = _t(self.claim)
        if get_language() == "zh":  # 「…」 around it, so a quote inside it takes 『』
            claim = claim.replace("「", "『").replace("」", "』")
        quoted = _("“{claim}”").format(claim=claim)  # zh: 「…」
        return (
            # The claims quote dollars: keep JupyterLab's MathJax from typesetting "$2 ... $5".
            f"<div class='tex2jax_ignore mathjax_ignore' style='border-left:6px solid {color};padding:6px 12px;margin:4px 0'>"
            f"<div><b>{title}</b>{colon}{e(quoted)}</div>"
            f"<table style='margin:4px 0'>{figures}</table>"
            f"<ul style='margin:2px 0 4px 0;list-style:none;padding-left:0'>{readings}</ul>"
            f"<div><span style='background:{color};color:white;padding:1px 8px;border-radius:3px'>"
            f"{e(_(self.verdict).upper())}</span> {_html_code(e(self.precise_text))}</div></div>"
        )


def _check_verdict(number, claim, *, figures, readings, verdict, precise, values=None, cited=False):
    """Check a claim's stated verdict against its computed readings.

    Called as :func:`straggle_edu.notebook.claim` (the same arguments), the
    one name for every checked statement.

    Parameters
    ----------
    number : int
        The claim's number, >= 1.
    claim : str
        The claim as the article puts it (short).
    figures : dict
        ``{label: value}``: the numbers computed with the library.
    readings : dict
        ``{reading: bool}``: does the claim hold under each reading, computed
        from the figures.
    verdict : {"right", "right but loose", "wrong"}
        The verdict the fact-check states.
    precise : str
        The precise statement (a template when ``values`` is given).
    values : dict, optional
        Values for the named placeholders of ``precise``, filled in after translation.
    cited : bool or collection of str
        True when every reading is computed only from cited figures, or the
        names of the readings that are: the card marks them "cited", not ✓.

    Returns
    -------
    ClaimCheck

    Raises
    ------
    AssertionError
        When the readings support another verdict than the one stated.

    Examples
    --------
    >>> c = _check_verdict(2, "over 60% at 100 cards", figures={"P": 0.634},
    ...                    readings={"P > 0.6": 0.634 > 0.6}, verdict="right",
    ...                    precise="1 - 0.99^100 = 63.4%")
    >>> print(c)
    Claim 2: over 60% at 100 cards
      P = 0.634
      ✓ P > 0.6
      Verdict: RIGHT
      Precisely: 1 - 0.99^100 = 63.4%
    >>> print(_check_verdict(9, "over 40% of jobs", figures={"jobs slowed": (0.425, "%")},
    ...                      readings={"over 40%": 0.425 > 0.40}, verdict="right", precise="42.5%", cited=True))
    Claim 9: over 40% of jobs
      jobs slowed = 42.5%
      cited, holds: over 40%
      Verdict: RIGHT
      Precisely: 42.5%
    >>> _check_verdict(2, "over 70%", figures={"P": 0.634}, readings={"P > 0.7": False},
    ...                verdict="right", precise="")
    Traceback (most recent call last):
    ...
    AssertionError: ✗ claim 2: stated verdict 'right', but the computed readings say 'wrong' (✗ P > 0.7)
    """
    number = whole("number", number)
    require(isinstance(claim, str) and claim.strip(), "claim", claim, "a non-empty string")
    require(isinstance(figures, dict), "figures", figures, "a dict of {label: value}")
    require(verdict in VERDICTS, "verdict", verdict, "'right', 'right but loose' or 'wrong'")
    require(isinstance(precise, str), "precise", precise, "a string")
    require(values is None or isinstance(values, dict), "values", values, "a dict of {placeholder: value}")
    computed = verdict_from_readings(readings)
    readings = {str(k): bool(v) for k, v in readings.items()}
    if cited is True:
        cited = tuple(readings)
    elif cited is False or cited is None:
        cited = ()
    else:
        require(not isinstance(cited, str) and all(str(k) in readings for k in cited), "cited", cited,
                "True, False, or names of the readings")
        cited = tuple(str(k) for k in cited)
    if computed != verdict:
        detail = "; ".join(f"{'✓' if ok else '✗'} {k}" for k, ok in readings.items())
        raise AssertionError(
            f"✗ claim {number}: stated verdict {verdict!r}, but the computed readings say {computed!r} ({detail})"
        )
    return ClaimCheck(number=number, claim=claim, figures=dict(figures), readings=readings, verdict=verdict,
                      precise=precise, values=dict(values or {}), cited=cited)


@dataclass(frozen=True)
class VerdictTable:
    """All the checked claims in one table, with the count of each verdict.

    Examples
    --------
    >>> from straggle_edu.notebook import claim
    >>> a = claim(1, "a", figures={}, readings={"r": True}, verdict="right", precise="")
    >>> b = claim(2, "b", figures={}, readings={"r": True, "s": False}, verdict="right but loose", precise="")
    >>> print(verdict_table([a, b]))
      1  right            a
      2  right but loose  b
    1 right, 1 right but loose, 0 wrong
    """

    checks: tuple

    @property
    def counts(self):
        """``{verdict: number of claims}`` for every verdict."""
        return {v: sum(c.verdict == v for c in self.checks) for v in VERDICTS}

    def __str__(self):
        width = max(16, *(_width(_(v)) + 1 for v in VERDICTS))
        lines = [f"{c.number:>3}  {_pad(_(c.verdict), width)} {_t(c.claim)}" for c in self.checks]
        lines.append(_(", ").join(_("{count} {verdict}").format(count=n, verdict=_(v)) for v, n in self.counts.items()))
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        e = html.escape
        rows = "".join(
            f"<tr><td style='text-align:right'>{c.number}</td><td>{e(_t(c.claim))}</td>"
            f"<td><span style='background:{_COLORS[c.verdict]};color:white;padding:1px 6px;border-radius:3px'>"
            f"{e(_(c.verdict))}</span></td></tr>"
            for c in self.checks
        )
        total = e(_(", ")).join(e(_("{count} {verdict}")).format(count=f"<b>{n}</b>", verdict=e(_(v)))
                                for v, n in self.counts.items())
        claim, verdict = e(_("claim")), e(_("verdict"))
        return (
            f"<div class='tex2jax_ignore mathjax_ignore'><table><tr><th>#</th><th>{claim}</th><th>{verdict}</th></tr>"
            f"{rows}</table><p>{total}</p></div>"
        )


def _width(text):
    """Columns ``text`` takes in a terminal: two for a CJK character."""
    return sum(2 if ord(ch) >= 0x1100 else 1 for ch in text)


def _pad(text, width):
    return text + " " * max(0, width - _width(text))


def verdict_table(checks):
    """A table of checked claims, sorted by number.

    Examples
    --------
    >>> from straggle_edu.notebook import claim
    >>> a = claim(1, "a", readings={"r": True}, verdict="right")
    >>> b = claim(2, "b", readings={"r": True, "s": False}, verdict="right but loose")
    >>> verdict_table([b, a]).counts
    {'right': 1, 'right but loose': 1, 'wrong': 0}
    """
    checks = list(checks)
    require(len(checks) >= 1 and all(isinstance(c, ClaimCheck) for c in checks), "checks", checks,
            "one or more ClaimCheck results of claim(number, text, readings=..., verdict=...)")
    return VerdictTable(tuple(sorted(checks, key=lambda c: c.number)))
