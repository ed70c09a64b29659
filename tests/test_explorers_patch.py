"""Swapping rows into a live chart keeps the params where the reader left them."""

import altair as alt
import pytest

from straggle_edu.notebook.display import chart_widget
from straggle_edu.explorers._patch import patch_rows, replace_spec


def _chart(rows, n=4):
    n_param = alt.param(name="n", value=n)
    base = alt.Chart(alt.Data(values=rows)).mark_line().encode(x="x:Q", y="y:Q")
    return alt.layer(base, base.mark_point()).add_params(n_param)


def _param(spec, name):
    return next(p for p in spec["params"] if p["name"] == name)


def test_patch_rows_swaps_data_and_keeps_the_current_param_value():
    jchart = chart_widget(_chart([{"x": 0, "y": 0}]))
    jchart.params.n = 64  # the reader moved a slider
    patch_rows(jchart, {0: [{"x": 1, "y": 2}]})
    spec = jchart.spec
    assert _param(spec, "n")["value"] == 64
    name = spec["layer"][0]["data"]["name"]
    assert spec["datasets"][name] == [{"x": 1, "y": 2}]


def test_replace_spec_keeps_the_current_param_value():
    jchart = chart_widget(_chart([{"x": 0, "y": 0}]))
    jchart.params.n = 4096
    replace_spec(jchart, _chart([{"x": 3, "y": 3}], n=4))
    assert _param(jchart.spec, "n")["value"] == 4096


def test_patch_rows_swaps_a_named_dataset_and_keeps_a_toggle_a_bool():
    flag = alt.param(name="flag", value=True)
    chart = alt.Chart(alt.NamedData("points")).mark_point().encode(x="x:Q").add_params(flag)
    chart.datasets = {"points": [{"x": 0}]}
    jchart = chart_widget(chart)
    jchart.params.flag = False  # the reader flipped a toggle
    patch_rows(jchart, {"points": [{"x": 5}]})
    assert jchart.spec["datasets"] == {"points": [{"x": 5}]}
    assert _param(jchart.spec, "flag")["value"] is False


def test_patch_rows_refuses_a_dataset_the_chart_lacks():
    jchart = chart_widget(_chart([{"x": 0, "y": 0}]))
    with pytest.raises(KeyError, match="no dataset named 'nope'"):
        patch_rows(jchart, {"nope": []})
