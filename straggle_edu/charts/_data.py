"""Chart data as inline JSON text, so that building and redrawing a chart stays cheap.

An explorer that redraws a chart hands ``altair.JupyterChart`` a new chart,
which serializes it with ``to_dict()`` and validates it against the
Vega-Lite schema. With ``alt.Data(values=[...])`` every row is a schema
object: each chart method copies them and validation walks them, so a chart
of 800 rows costs hundreds of milliseconds to build and send.

Vega-Lite also accepts inline data as text with a format
(``{"values": "<json>", "format": {"type": "json"}}``). Then the rows are one
string: copying and validation are constant-time, and the browser (or
vl-convert) parses the JSON once. Types survive, unlike CSV text.
"""

from __future__ import annotations

import json
import re

import altair as alt

from ..i18n import FONT, get_language

__all__ = ["inline_rows", "rows_of", "quoted", "vega_text", "vega_numbers", "count_axis", "FONT_CONFIG",
           "use_font_theme"]


def inline_rows(rows):
    """``alt.InlineData`` holding ``rows`` (a list of dicts) as JSON text.

    Examples
    --------
    >>> spec = alt.Chart(inline_rows([{"n": 1, "value": 0.5}])).mark_point().encode(x="n:Q").to_dict()
    >>> rows_of(spec, spec["data"])
    [{'n': 1, 'value': 0.5}]
    """
    return alt.InlineData(values=json.dumps(list(rows), separators=(",", ":"), allow_nan=False), format=alt.DataFormat(type="json"))


def rows_of(spec, data):
    """The rows a spec's ``data`` entry holds, whether inline, named or JSON text
    (for tests and tools that read a chart's numbers back).

    Examples
    --------
    >>> spec = {"datasets": {"d": [{"n": 2}]}, "data": {"name": "d"}}
    >>> rows_of(spec, spec["data"])
    [{'n': 2}]
    """
    values = spec.get("datasets", {}).get(data["name"]) if "name" in data else data.get("values")
    return json.loads(values) if isinstance(values, str) else values


def quoted(text):
    """``text`` as a Vega expression string literal (for translated words inside an expression).

    Examples
    --------
    >>> quoted("the job's step")
    '"the job\\'s step"'
    """
    return json.dumps(str(text), ensure_ascii=False)


def vega_text(template, **exprs):
    """A Vega expression that writes ``template`` with each ``{name}`` replaced by the expression ``exprs[name]``.

    The template is a translated sentence (``_("{n} workers do the work of {k}")``),
    so the words follow the current language and the numbers stay Vega's.

    Examples
    --------
    >>> vega_text("{n} workers, time × {r}", n="datum.n", r="format(datum.r, '.3f')")
    '(datum.n) + " workers, time × " + (format(datum.r, \\'.3f\\'))'
    >>> vega_text("no numbers")
    '"no numbers"'
    """
    parts = re.split(r"\{(\w+)\}", template)
    pieces = [quoted(p) if i % 2 == 0 else f"({vega_numbers(exprs[p])})" for i, p in enumerate(parts) if i % 2 == 1 or p]
    return " + ".join(pieces) if pieces else '""'


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


def count_axis(fmt=",.0f", money=False):
    """``alt.Axis`` for counts (GPU-hours, dollars): ``format`` in English; in Chinese labels in 万 (no k, M, $).

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("zh"); count_axis("~s").to_dict()["labelExpr"]
    "(abs(datum.value) >= 10000 ? format((datum.value) / 10000, '.3~r') + '万' : format(datum.value, '.0f'))"
    >>> set_language("en"); count_axis("$,.0f").to_dict()
    {'format': '$,.0f'}
    """
    if get_language() != "zh":
        return alt.Axis(format=fmt)
    return alt.Axis(labelExpr=vega_numbers(("'$' + " if money else "") + "format(datum.value, ',.0f')"))


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
THEME = "straggle_edu"


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


def use_font_theme():
    """Register the Altair theme ``"straggle_edu"`` (the :data:`FONT_CONFIG` fonts) and enable it.

    A theme reaches every chart's top-level ``config`` when it is serialized,
    so charts stay composable (``a | b``; a chart with its own ``config`` could
    not be concatenated). A theme the reader enabled themselves is kept.

    Examples
    --------
    >>> use_font_theme()
    >>> alt.Chart(alt.Data(values=[{"x": 1}])).mark_text().encode(text="x:Q").to_dict()["config"]["font"] == FONT
    True
    """
    if THEME not in alt.theme.names():
        alt.theme.register(THEME, enable=False)(lambda: alt.theme.ThemeConfig(config=theme_config()))
    if alt.theme.active in ("default", THEME):
        alt.theme.enable(THEME)
