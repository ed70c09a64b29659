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

from ._vega import FONT_CONFIG, count_axis_spec, theme_config, vega_numbers

__all__ = ["inline_rows", "rows_of", "quoted", "vega_text", "vega_numbers", "count_axis", "FONT_CONFIG",
           "use_font_theme", "altair_chart"]


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


def count_axis(fmt=",.0f", money=False):
    """``alt.Axis`` for counts (GPU-hours, dollars): ``format`` in English; in Chinese labels in 万 (no k, M, $)
    (:func:`~straggle_edu.charts._vega.count_axis_spec`).

    Examples
    --------
    >>> count_axis("$,.0f").to_dict()
    {'format': '$,.0f'}
    """
    return alt.Axis(**count_axis_spec(fmt, money))


THEME = "straggle_edu"


def use_font_theme():
    """Register the Altair theme ``"straggle_edu"`` (the :data:`FONT_CONFIG` fonts) and enable it.

    A theme reaches every chart's top-level ``config`` when it is serialized,
    so charts stay composable (``a | b``; a chart with its own ``config`` could
    not be concatenated). A theme the reader enabled themselves is kept.

    Examples
    --------
    >>> use_font_theme()
    >>> alt.Chart(alt.Data(values=[{"x": 1}])).mark_text().encode(text="x:Q").to_dict()["config"]["font"] == FONT_CONFIG["font"]
    True
    """
    if THEME not in alt.theme.names():
        alt.theme.register(THEME, enable=False)(lambda: alt.theme.ThemeConfig(config=theme_config()))
    if alt.theme.active in ("default", THEME):
        alt.theme.enable(THEME)


# Every chart names the font list (straggle_edu.i18n.FONT), through an Altair theme: registered as the first chart
# module loads this one (each does, directly or through a module it imports), before any chart is drawn.
use_font_theme()

_COMPOSED = {"layer": alt.LayerChart, "hconcat": alt.HConcatChart, "vconcat": alt.VConcatChart,
             "concat": alt.ConcatChart, "facet": alt.FacetChart, "repeat": alt.RepeatChart}


def altair_chart(spec):
    """The Altair chart of a Vega-Lite ``spec`` (a dict, as the ``*_spec`` functions build it; it is validated when
    the chart is drawn or turned back into a dict).

    Examples
    --------
    >>> unit = {"data": {"values": [{"x": 1}]}, "mark": {"type": "point"}, "encoding": {"x": {"field": "x", "type": "quantitative"}}}
    >>> type(altair_chart(unit)).__name__, type(altair_chart({"layer": [unit, unit]})).__name__
    ('Chart', 'LayerChart')
    >>> altair_chart(unit).to_dict()["config"]["font"] == FONT_CONFIG["font"]
    True
    """
    kind = next((k for k in _COMPOSED if k in spec), None)
    return (_COMPOSED[kind] if kind else alt.Chart).from_dict(spec, validate=False)
