"""Swap the rows a chart draws without rebuilding it.

Rebuilding an Altair chart and serializing it costs tens of milliseconds,
almost all of it in Altair's schema wrapping and validation, not in the data.
When only the numbers change (same marks, same encodings, same params), an
explorer can instead edit the JupyterChart's Vega-Lite ``spec`` in place:
replace the dataset a view reads, and top-level properties such as the title.
That is a few dictionary copies, well inside a closed-form callback budget.

The JupyterChart's ``.chart`` keeps the chart it was built with; its
``.spec`` is what the browser draws, so tests read ``.spec``. Param links are
untouched, because the chart is not replaced.
"""

from __future__ import annotations

import itertools

__all__ = ["patch_rows", "replace_spec", "set_color_scale", "keep_params"]

_counter = itertools.count()


def patch_rows(jchart, updates, base=None, **props):
    """Give views of ``jchart`` new rows, and set top-level ``props``.

    Parameters
    ----------
    jchart : altair.JupyterChart
    updates : dict
        ``{view: rows}``; ``view`` is None for the chart's own (top-level)
        data, or the index of a layer.
    base : dict, optional
        A spec to start from instead of the chart's current one (a layout
        template kept by the explorer); it is not modified.
    **props
        Top-level spec properties to set, such as ``title`` or ``height``.

    Examples
    --------
    >>> import altair as alt
    >>> chart = alt.Chart({"values": [{"x": 1}]}).mark_point().encode(x="x:Q")
    >>> jchart = alt.JupyterChart(chart)
    >>> patch_rows(jchart, {None: [{"x": 2}, {"x": 3}]}, title="two points")
    >>> [jchart.spec["datasets"][jchart.spec["data"]["name"]], jchart.spec["title"]]
    [[{'x': 2}, {'x': 3}], 'two points']
    """
    spec = dict(jchart.spec if base is None else base)
    datasets = dict(spec.get("datasets", {}))
    if "layer" in spec:
        spec["layer"] = list(spec["layer"])
    for view, rows in updates.items():
        name = f"patched-{next(_counter)}"
        datasets[name] = list(rows)
        if view is None:
            spec["data"] = {"name": name}
        else:
            layer = dict(spec["layer"][view])
            layer["data"] = {"name": name}
            spec["layer"][view] = layer
    used = {spec.get("data", {}).get("name")} | {
        layer.get("data", {}).get("name") for layer in spec.get("layer", []) if isinstance(layer.get("data"), dict)
    }
    spec["datasets"] = {k: v for k, v in datasets.items() if k in used}
    spec.update(props)
    jchart.spec = keep_params(jchart, spec)


def keep_params(jchart, spec):
    """``spec`` with each value param set to its current value in ``jchart``.

    The browser re-embeds a new spec and then reads every param's value back
    from it; without this, a slider's param would snap back to the value the
    chart was built with while the slider stays where the reader left it.

    Examples
    --------
    >>> import altair as alt
    >>> chart = alt.Chart({"values": [{"x": 1}]}).mark_point().encode(x="x:Q").add_params(alt.param(name="k", value=1))
    >>> jchart = alt.JupyterChart(chart)
    >>> jchart.params.k = 5   # the reader moved the slider
    >>> keep_params(jchart, {"params": [{"name": "k", "value": 1}]})
    {'params': [{'name': 'k', 'value': 5.0}]}
    """
    current = set(jchart.params.trait_names())
    params = spec.get("params")
    if params:
        spec = dict(spec)
        spec["params"] = [
            dict(p, value=getattr(jchart.params, p["name"])) if "value" in p and p.get("name") in current else p
            for p in params
        ]
    return spec


def set_color_scale(spec, layer, domain, range_):
    """A copy of ``spec`` whose layer ``layer`` colours by ``domain`` -> ``range_``
    (the legend in that order); the rest of the spec is shared, not copied.

    Examples
    --------
    >>> import altair as alt
    >>> c = alt.Chart({"values": [{"x": 1, "c": "a"}]}).mark_point().encode(x="x:Q", color="c:N")
    >>> spec = (c + c).to_dict()
    >>> new = set_color_scale(spec, 0, ["a", "b"], ["red", "blue"])
    >>> new["layer"][0]["encoding"]["color"]["scale"], "scale" in spec["layer"][0]["encoding"]["color"]
    ({'domain': ['a', 'b'], 'range': ['red', 'blue']}, False)
    """
    spec = dict(spec)
    spec["layer"] = list(spec["layer"])
    view = dict(spec["layer"][layer])
    encoding = dict(view["encoding"])
    encoding["color"] = dict(encoding["color"], scale={"domain": list(domain), "range": list(range_)}, sort=list(domain))
    view["encoding"] = encoding
    spec["layer"][layer] = view
    return spec


def replace_spec(jchart, chart):
    """Draw a new layout of the same chart (same params) without Altair's validation.

    Sets the JupyterChart's ``spec`` to ``chart.to_dict(validate=False)``:
    the param objects and the links to them stay as they are, and the
    schema validation, about half of a rebuild's cost, is skipped. The
    chart functions are validated by their tests (``to_dict()``).

    Examples
    --------
    >>> import altair as alt
    >>> k = alt.param(name="k", value=1)
    >>> jchart = alt.JupyterChart(alt.Chart({"values": [{"x": 1}]}).mark_point().encode(x="x:Q").add_params(k))
    >>> jchart.params.k = 5
    >>> replace_spec(jchart, alt.Chart({"values": [{"x": 1}]}).mark_bar().encode(x="x:Q").add_params(k))
    >>> jchart.spec["mark"], jchart.spec["params"]   # a new mark; the slider's value is kept
    ({'type': 'bar'}, [{'name': 'k', 'value': 5.0}])
    """
    jchart.spec = keep_params(jchart, chart.to_dict(validate=False))
