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

import altair as alt

__all__ = ["inline_rows", "rows_of"]


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
