"""How the notebook helpers show a value: in the prose's unit, in the reader's language.

:func:`_show` is what a ✓, ≈, cited or demo line and a fact-check card show
(``983,040 GPU-hours``; in Chinese ``98.3万卡时（983,040）``, 4096 without a
separator, dollars as ``19.66万美元（196,608 美元）``); :func:`_as_quoted` is
the figure as the prose quotes it (``（文中：98.3万卡时）``); :func:`_fmt` is
the English form the ✗ of an ``AssertionError`` shows. Both
:mod:`~straggle_edu.notebook.claims` and
:mod:`~straggle_edu.notebook.factcheck` use them, so they live below both.
"""

from __future__ import annotations

import math

from ..i18n import WAN, _, format_count, format_count_exact, format_money, get_language

__all__: list = []


def _t(text):
    """``text`` translated, when it is a non-empty string (``_("")`` would give the catalog's header)."""
    return _(text) if isinstance(text, str) and text else text


def _fmt(x, unit=None, group=True):
    if isinstance(x, str):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if unit == "%":
        return f"{_fmt(100 * x, group=group)}%"
    if unit == "$":
        return f"${_fmt(x, group=group)}"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = f"{x:,.6g}" if group else f"{x:.6g}"
    else:
        text = f"{x:.4g}"
    if unit == "x":
        return f"{text}x"
    return f"{text} {unit}" if unit else text


def _show(x, unit=None):
    """:func:`_fmt` in the current language: text and units translated; in Chinese, 98.3万（983,040）.

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); _show(983_040, "GPU-hours"), _show(196_608, "$"), _show(0.634, "%"), _show(1.6, "x")
    ('98.3万卡时（983,040）', '19.66万美元（196,608 美元）', '63.4%', '1.6 倍')
    >>> _show(4096, "GPU-hours"), _show(1171.2, "x"), _show(2048, "$")
    ('4096 卡时', '1171.2 倍', '2048 美元')
    >>> set_language("en"); _show(983_040, "GPU-hours")
    '983,040 GPU-hours'
    """
    if isinstance(x, str):
        return _t(x)
    number = not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)
    if get_language() != "zh" or not number:
        return _fmt(x, unit if unit in (None, "%", "$", "x") else _t(unit))
    if unit == "%":
        return _fmt(x, unit, group=abs(100 * x) >= WAN)
    if unit == "$":
        return f"{format_money(x)}（{_fmt(x)} 美元）" if abs(x) >= WAN else f"{_fmt(x, group=False)} 美元"
    exact, shown_unit = _fmt(x, group=abs(x) >= WAN), "倍" if unit == "x" else _t(unit) if unit else ""
    if abs(x) < WAN:
        return f"{exact} {shown_unit}" if shown_unit else exact
    if not shown_unit:
        return format_count_exact(x, exact)
    # the unit goes with the short form, the exact figure after it: 98.3万卡时（983,040）
    join = "" if "\u2e80" <= shown_unit[0] <= "\u9fff" else " "
    return f"{format_count(x)}{join}{shown_unit}（{exact}）"


def _as_quoted(x, unit=None):
    """The figure as the prose quotes it: :func:`_show`, but in Chinese from 10,000 up the short form alone.

    The prose writes 40.8万, so "（文中：40.8万）" and not a second exact
    figure in parentheses inside the first (the zh review's S2).

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); _as_quoted(407_549), _as_quoted(983_040, "GPU-hours"), _as_quoted(196_608, "$")
    ('40.8万', '98.3万卡时', '19.66万美元')
    >>> _as_quoted(4096, "GPU-hours"), _as_quoted(0.634, "%")
    ('4096 卡时', '63.4%')
    >>> set_language("en"); _as_quoted(407_549)
    '407,549'
    """
    number = not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)
    if get_language() != "zh" or not number or unit == "%" or abs(x) < WAN:
        return _show(x, unit)
    if unit == "$":
        return format_money(x)
    shown_unit = "倍" if unit == "x" else _t(unit) if unit else ""
    join = " " if shown_unit and not "\u2e80" <= shown_unit[0] <= "\u9fff" else ""
    return f"{format_count(x)}{join}{shown_unit}"
