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


def all_rows(spec):
    """Every row ``spec`` (a ``to_dict()``) holds: its named datasets and every inline ``data.values``.

    Inline values may be a list or JSON text (as the site's bound specs keep them).
    """
    import json

    out = [row for values in spec.get("datasets", {}).values() for row in values]

    def walk(node):
        if isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict) and "values" in data:
                values = data["values"]
                out.extend(json.loads(values) if isinstance(values, str) else values)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return [row for row in out if isinstance(row, dict)]
