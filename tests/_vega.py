"""Run a chart's Vega-Lite spec for real (vl-convert, no browser) and read what it draws.

The closed-form charts compute their numbers in the browser, in Vega
expressions. Rendering them with vl-convert and reading the text marks lets a
test compare those numbers with the Python library's.
"""

import html
import json
import re

import vl_convert as vlc


def drawn_texts(chart):
    """Every text the chart draws (axis labels, titles, mark labels), in order."""
    svg = vlc.vegalite_to_svg(json.dumps(chart.to_dict()))
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def with_params(chart, **values):
    """A copy of ``chart`` whose named params start at ``values``."""
    spec = chart.to_dict()
    found = set()
    for param in spec.get("params", []):
        if param["name"] in values:
            param["value"] = values[param["name"]]
            found.add(param["name"])
    missing = set(values) - found
    if missing:
        raise KeyError(f"no such params: {sorted(missing)}")
    return _Spec(spec)


class _Spec:
    def __init__(self, spec):
        self.spec = spec

    def to_dict(self):
        return self.spec
