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
    """Give views or named datasets of ``jchart`` new rows, and set top-level ``props``.

    This is the explorers' one way to swap a drawn chart's data: it always
    keeps each param at the value the reader left it (:func:`keep_params`).

    Parameters
    ----------
    jchart : altair.JupyterChart
    updates : dict
        ``{key: rows}``; ``key`` is None for the chart's own (top-level)
        data, the index of a layer, or the name of a dataset the spec
        already has (``chart.datasets``: the ``*_datasets`` functions of
        :mod:`straggle_edu.charts`), which keeps its name.
    base : dict, optional
        A spec to start from instead of the chart's current one (a layout
        template kept by the explorer); it is not modified.
    **props
        Top-level spec properties to set, such as ``title`` or ``height``.

    Examples
    --------
    >>> import altair as alt
    >>> from straggle_edu.notebook.display import chart_widget
    >>> k = alt.param(name="k", value=1)
    >>> jchart = chart_widget(alt.Chart(alt.Data(values=[{"x": 0}])).mark_point().encode(x="x:Q").add_params(k))
    >>> jchart.params.k = 5                      # the reader moved a slider
    >>> patch_rows(jchart, {None: [{"x": 1}, {"x": 2}]}, title="two points")
    >>> spec = jchart.spec
    >>> spec["datasets"][spec["data"]["name"]], spec["title"], spec["params"][0]["value"]
    ([{'x': 1}, {'x': 2}], 'two points', 5.0)
    """
    spec = dict(jchart.spec if base is None else base)
    datasets = dict(spec.get("datasets", {}))
    if "layer" in spec:
        spec["layer"] = list(spec["layer"])
    named = {key: list(rows) for key, rows in updates.items() if isinstance(key, str)}
    for key in named:
        if key not in datasets:
            raise KeyError(f"the chart has no dataset named {key!r}; it has {sorted(datasets)}")
    for view, rows in updates.items():
        if isinstance(view, str):
            continue
        name = f"patched-{next(_counter)}"
        datasets[name] = list(rows)
        if view is None:
            spec["data"] = {"name": name}
        else:
            layer = dict(spec["layer"][view])
            layer["data"] = {"name": name}
            spec["layer"][view] = layer
    used = set(named) | _used_datasets(spec)
    spec["datasets"] = {k: named.get(k, v) for k, v in datasets.items() if k in used}
    spec.update(props)
    jchart.spec = keep_params(jchart, spec)


def _used_datasets(spec):
    """Names of the datasets anything in the spec refers to (views at any depth, lookups)."""
    used, stack = set(), [v for k, v in spec.items() if k != "datasets"]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("name"), str):
                used.add(item["name"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return used


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
            dict(p, value=_like(p["value"], getattr(jchart.params, p["name"])))
            if "value" in p and p.get("name") in current else p
            for p in params
        ]
    return spec


def _like(old, new):
    """``new`` as a bool when the spec's value was one (the params widget keeps a
    toggle's True as 1.0)."""
    return bool(new) if isinstance(old, bool) and isinstance(new, (int, float)) else new


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
