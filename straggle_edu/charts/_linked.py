"""Linked views: one selection that several panels of a concatenated chart share.

Hover a bar in one panel and its counterpart in the other lights up. Vega-Lite
does this with one top-level selection param that lists the views it listens
on. Adding the same selection to each panel also works in Altair 6, but warns
("Automatically deduplicated selection parameter") every time the chart is
serialized, which a notebook would print under the chart.

Inside a concat, Altair renames each named layer to ``<base>_<position>``;
name a layered view ``<base>_<position>`` yourself (``"timeline_0"``) and the
name stays put.
"""

from __future__ import annotations

import altair as alt

__all__ = ["share_selection"]


def share_selection(chart, selection, views):
    """Attach ``selection`` to the concatenated ``chart``, listening on ``views``.

    Parameters
    ----------
    chart : altair.HConcatChart or altair.VConcatChart
    selection : altair.Parameter
        From ``alt.selection_point(name=...)`` or ``alt.selection_interval(name=...)``;
        the panels use it in conditions but do not add it themselves.
    views : list of str
        The names of the views (``.properties(name=...)``) that listen.

    Returns
    -------
    The same chart, for chaining.

    Examples
    --------
    >>> hover = alt.selection_point(name="pick", fields=["x"])
    >>> a = alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q").properties(name="left")
    >>> chart = share_selection(alt.hconcat(a, a.properties(name="right")), hover, ["left", "right"])
    >>> chart.to_dict()["params"][0]["views"]
    ['left', 'right']
    """
    param = alt.TopLevelSelectionParameter(name=selection.name, select=selection.param.select, views=list(views))
    existing = [] if alt.utils.is_undefined(chart.params) else list(chart.params)
    chart.params = [q for q in existing if getattr(q, "name", None) != selection.name] + [param]
    return chart
