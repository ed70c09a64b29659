"""Read the rows a chart spec draws, wherever Altair put them.

Charts pass their rows as plain ``{"values": rows}`` dicts; Altair then moves
them to top-level named ``datasets``. ``layer_rows(spec, i)`` finds layer i's
rows (or the chart's, for a single view) either way.
"""


def layer_rows(spec, layer=None):
    """Rows of ``spec`` (a ``to_dict()``), of layer ``layer`` if given."""
    views = [spec] if layer is None else [spec["layer"][layer], spec]
    if layer is None and "layer" in spec and "data" not in spec:
        views = [spec["layer"][0]]
    for view in views:
        data = view.get("data")
        if data is None:
            continue
        if "values" in data:
            return data["values"]
        if "name" in data:
            return spec["datasets"][data["name"]]
    raise AssertionError("no data found in the spec")
