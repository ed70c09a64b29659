"""Vega-Lite settings that need no Altair: what a chart written as a plain dict (the fleet's HTML report) shares with
the Altair charts (:mod:`~straggle_edu.charts._data` puts them in their theme and its axes): the fonts, and the
numbers in the reader's language."""

from __future__ import annotations

from ..i18n import FONT, get_language

__all__ = ["FONT_CONFIG", "ZH_NUMBER_LOCALE", "theme_config", "vega_numbers", "count_axis_spec"]

# The fonts of every text a chart draws, in both languages: a Latin face
# first, then the system's CJK faces (see straggle_edu.i18n.FONT).
FONT_CONFIG = {
    "font": FONT,
    "title": {"font": FONT, "subtitleFont": FONT},
    "axis": {"labelFont": FONT, "titleFont": FONT},
    "legend": {"labelFont": FONT, "titleFont": FONT},
    "header": {"labelFont": FONT, "titleFont": FONT},
    "text": {"font": FONT},
}

# d3's number locale in Chinese: no thousands separator (a tooltip's ',.0f' writes 4096), dollars after the number.
ZH_NUMBER_LOCALE = {"decimal": ".", "thousands": "", "grouping": [3], "currency": ["", " 美元"]}


def theme_config():
    """The theme's config in the current language: the fonts, and in Chinese d3's number locale without separators.

    The theme is read when a chart is serialized, so a chart built after
    ``set_language("zh")`` carries the Chinese locale.

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); theme_config()["locale"]["number"]["thousands"]
    ''
    >>> set_language("en"); "locale" in theme_config()
    False
    """
    if get_language() != "zh":
        return FONT_CONFIG
    return {**FONT_CONFIG, "locale": {"number": ZH_NUMBER_LOCALE}}


def _format_calls(expr):
    """``[(start, end, argument, spec)]`` for each ``format(argument, 'spec')`` call of a Vega expression."""
    calls, i = [], 0
    while (i := expr.find("format(", i)) >= 0:
        if i and (expr[i - 1].isalnum() or expr[i - 1] == "_"):  # timeFormat(, utcFormat(
            i += 7
            continue
        depth, j, comma, quote = 1, i + 7, None, None
        while j < len(expr) and depth:
            ch = expr[j]
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            else:
                depth += {"(": 1, ")": -1}.get(ch, 0)
                comma = j if ch == "," and depth == 1 else comma
            j += 1
        spec = expr[comma + 1:j - 1].strip() if comma else ""
        if comma and len(spec) >= 2 and spec[0] == spec[-1] and spec[0] in "'\"":
            calls.append((i, j, expr[i + 7:comma].strip(), spec[1:-1]))
        i = j
    return calls


def vega_numbers(expr):
    """A Vega expression whose grouped numbers (``format(x, ',.0f')``) follow the reader's language.

    English keeps the expression. Chinese writes such a number with no
    separator below 10,000 and in 万 from 10,000 up (three significant
    figures; a whole count, spec ``','``, exactly), and dollars
    (``'$' + format(x, ',.0f')``) as 19.66万美元 or 2048 美元: the rule the
    notebooks' prose, readouts and ✓ lines follow (README, 中文版).

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); vega_numbers("format(datum.n, ',') + ' GPUs'")
    "(abs(datum.n) >= 10000 ? format((datum.n) / 10000, '.12~r') + '万' : format(datum.n, 'd')) + ' GPUs'"
    >>> vega_numbers("'$' + format(gpus * 24, ',.0f')")
    "(abs(gpus * 24) >= 10000 ? format((gpus * 24) / 10000, '.4~r') + '万美元' : format(gpus * 24, '.0f') + ' 美元')"
    >>> set_language("en"); vega_numbers("format(datum.n, ',')")
    "format(datum.n, ',')"
    """
    if get_language() != "zh":
        return expr
    out, last = [], 0
    for start, end, arg, spec in _format_calls(expr):
        if not spec.startswith(","):
            continue
        money = expr[:start].rstrip().endswith("+") and expr[:start].rstrip()[:-1].rstrip().endswith(("'$'", '"$"'))
        if money:
            head = expr[:start].rstrip()[:-1].rstrip()
            out.append(expr[last:len(head) - 3])
        else:
            out.append(expr[last:start])
        below = spec[1:] or "d"
        digits, unit, small = (".4~r", "万美元", f"format({arg}, '{below}') + ' 美元'") if money else (
            ".12~r" if spec == "," else ".3~r", "万", f"format({arg}, '{below}')")
        out.append(f"(abs({arg}) >= 10000 ? format(({arg}) / 10000, '{digits}') + '{unit}' : {small})")
        last = end
    out.append(expr[last:])
    return "".join(out)


def count_axis_spec(fmt=",.0f", money=False):
    """The axis (a Vega-Lite dict) for counts (GPU-hours, dollars): ``format`` in English; in Chinese labels in 万
    (no k, M, $).

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); count_axis_spec("~s")["labelExpr"]
    "(abs(datum.value) >= 10000 ? format((datum.value) / 10000, '.3~r') + '万' : format(datum.value, '.0f'))"
    >>> set_language("en"); count_axis_spec("$,.0f")
    {'format': '$,.0f'}
    """
    if get_language() != "zh":
        return {"format": fmt}
    return {"labelExpr": vega_numbers(("'$' + " if money else "") + "format(datum.value, ',.0f')")}
