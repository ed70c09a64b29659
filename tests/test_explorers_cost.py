"""Cost explorers: set a control's value, check what changed."""

import math
import warnings

import ipywidgets as widgets
import pytest

from straggle_edu.charts._data import rows_of
from straggle_edu.explorers.cost import PAUSE_CHOICES, cost_explorer, lost_fraction_explorer
from straggle_edu.math.cost import cost_of_stragglers
from straggle_edu.math.delay import planned_delay
from straggle_edu.models.cluster import Cluster
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.waste import lost_fraction


def _sweep(ex):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for control in ex.controls.values():
            start = control.value
            if isinstance(control, widgets.SelectionSlider):
                ends = [control.options[0][1], control.options[-1][1]]
            elif isinstance(control, (widgets.Text, widgets.Textarea)):
                ends = ["1.0 1.2 0.9", "oops"]  # good and bad text, then back to empty
            else:
                ends = [control.min, control.max]
            for value in ends:
                control.value = value
            control.value = start


def test_cost_explorer_defaults_are_the_article_example():
    ex = cost_explorer()
    assert "<b>98,304</b> GPU-hours lost of 983,040" in ex.readout.value
    assert "<b>$196,608</b>" in ex.readout.value
    assert f"ends <b>{planned_delay(10, 0.1):.2f}</b> days late" in ex.readout.value


@pytest.mark.parametrize("name, value", [("gpus", 1024), ("days", 30.0), ("lost_fraction", 0.05), ("usd_per_gpu_hour", 3.0)])
def test_cost_explorer_each_control_drives_every_chart_that_uses_it(name, value):
    ex = cost_explorer()
    ex.controls[name].value = value
    users = {"gpus": ["bill", "dollars"], "usd_per_gpu_hour": ["bill", "dollars"]}.get(name, ["bill", "dollars", "framings", "milestones"])
    for chart in users:
        assert getattr(ex.charts[chart].params, name) == value
    c = ex.controls
    bill = cost_of_stragglers(c["gpus"].value, c["days"].value, c["lost_fraction"].value, c["usd_per_gpu_hour"].value)
    assert ex.bill() == bill and f"<b>${bill.usd_lost:,.0f}</b>" in ex.readout.value


def test_cost_explorer_links_are_recorded_for_the_static_site():
    ex = cost_explorer()
    assert ("lost_fraction", "milestones", "lost_fraction", None) in ex.links
    assert len(ex.links) == 4 + 4 + 2 + 2


def test_cost_explorer_every_control_range_is_safe():
    _sweep(cost_explorer())


def test_lost_fraction_explorer_feeds_the_bill():
    ex = lost_fraction_explorer()
    f = lost_fraction(Cluster.uniform(4096, StepTime(1.0, jitter=0.03)))
    assert ex.lost() == f and math.isclose(ex.charts["bill"].params.lost_fraction, f, rel_tol=1e-10)
    bill = cost_of_stragglers(4096, 10.0, f, 2.0)
    assert (f"4,096 GPUs with 3.00% jitter lose <b>{f:.2%}</b> of their time" in ex.readout.value
            and f"<b>{bill.gpu_hours_lost:,.0f} GPU-hours</b>, <b>${bill.usd_lost:,.0f}</b> at $2 per GPU-hour"
            in ex.readout.value)
    ex.controls["jitter"].value = 0.0
    assert ex.charts["bill"].params.lost_fraction == 0.0
    assert "lose <b>0.00%</b>" in ex.readout.value


def _sentence(jchart):
    """The text the chart draws with its params where the reader left them (vl-convert, tags stripped)."""
    import html
    import json
    import re

    import vl_convert

    from straggle_edu.explorers._patch import keep_params

    svg = vl_convert.vegalite_to_svg(json.dumps(keep_params(jchart, jchart.spec)))
    return " ".join(html.unescape(t) for t in re.findall(r">([^<>]+)<", svg))


def test_lost_fraction_explorer_writes_the_bill_as_a_sentence_that_follows_n():
    from straggle_edu.explorers._base import site_link

    ex = lost_fraction_explorer()
    ex.controls["n"].value = 1024
    f = lost_fraction(Cluster.uniform(1024, StepTime(1.0, jitter=0.03)))
    bill = cost_of_stragglers(1024, 10.0, f, 2.0)
    text = _sentence(ex.charts["bill"])
    assert f"1,024 GPUs for 10 days lose {f:.1%} of their time waiting:" in text, text
    assert f"{bill.gpu_hours_lost:,.0f} GPU-hours, ${bill.usd_lost:,.0f} at $2 per GPU-hour." in text, text
    # The static site replays n through a table of the lost fraction at each stop of the slider.
    link = next(entry for entry in ex.links if entry[2] == "lost_fraction")
    lookup = site_link(ex.controls["n"], ex.charts["bill"], "lost_fraction", link[3])["lookup"]
    assert lookup[list(ex.controls["n"]._options_values).index(1024)] == pytest.approx(f)


def test_lost_fraction_explorer_pauses_add_a_reference_curve():
    ex = lost_fraction_explorer(jitter=0.03, pause=0.1)
    ex.controls["pause_prob"].value = 1e-3
    f = lost_fraction(Cluster.uniform(4096, StepTime(1.0, jitter=0.03, pause_prob=1e-3, pause=0.1)))
    assert math.isclose(ex.charts["bill"].params.lost_fraction, f)
    spec = ex.charts["curve"].spec  # rows are swapped into the spec in place
    rows = rows_of(spec, spec["layer"][0]["data"])
    assert {r["scenario"] for r in rows} == {"this cluster", "same jitter, no pauses"}
    at = [r["lost"] for r in rows if r["n"] == 4096 and r["scenario"] == "this cluster"]
    assert math.isclose(at[0], f, rel_tol=1e-9)
    ex.controls["n"].value = 256
    assert ex.charts["curve"].params.n_mark == 256 and ex.charts["bill"].params.gpus == 256
    ex.controls["pause"].value = 0.5
    assert [p["value"] for p in ex.charts["curve"].spec["params"]] == [256]


def test_lost_fraction_explorer_sync_dilutes_the_waiting():
    ex = lost_fraction_explorer()
    before = ex.lost()
    ex.controls["sync"].value = 0.5
    assert ex.lost() < before
    assert math.isclose(ex.lost(), lost_fraction(Cluster.uniform(4096, StepTime(1.0, jitter=0.03), sync=0.5)))


def test_lost_fraction_explorer_every_control_range_is_safe():
    ex = lost_fraction_explorer(pause_prob=PAUSE_CHOICES[-1][1], pause=2.0)
    _sweep(ex)
    assert 0.0 <= ex.lost() < 1.0


def test_lost_fraction_explorer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="pause_prob must be one of 0, 1e-05"):
        lost_fraction_explorer(pause_prob=0.3)
    with pytest.raises(ValueError, match=r"sync must be in \[0, 0.5\], got 1.0"):
        lost_fraction_explorer(sync=1.0)


def test_lost_fraction_explorer_uses_pasted_step_times_then_the_model_again():
    ex = lost_fraction_explorer()
    model = ex.charts["bill"].params.lost_fraction
    ex.controls["text"].value = "1.0 1.0 1.2 1.6"
    ex.controls["n"].value = 2
    # Resampling 4 values: E[max of 2] = (1.0 * 4 + 1.2 * 5 + 1.6 * 7) / 16 = 1.325 s; the mean is 1.2 s.
    assert ex.charts["bill"].params.lost_fraction == pytest.approx((1.325 - 1.2) / 1.325)
    assert "resampling your 4 step times" in ex.readout.value
    assert {r["scenario"] for r in ex.rows()} == {"your step times"}
    ex.controls["text"].value = ""
    ex.controls["n"].value = 4096
    assert ex.charts["bill"].params.lost_fraction == pytest.approx(model)


def test_lost_fraction_explorer_reads_a_rank_csv_and_reports_errors(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("step,rank,duration_s\n0,0,1.0\n0,1,1.1\n1,0,0.9\n1,1,1.2\n")
    ex = lost_fraction_explorer()
    ex.controls["csv"].value = str(path)
    ex.controls["n"].value = 16384  # resampling never passes the largest value, 1.2 s
    assert ex.charts["bill"].params.lost_fraction == pytest.approx((1.2 - 1.05) / 1.2, rel=1e-6)
    ex.controls["csv"].value = str(tmp_path / "missing.csv")
    assert "no such file" in ex.readout.value
    ex.controls["csv"].value = ""
    ex.controls["text"].value = "1.0, 1.1s"
    assert "item 2" in ex.readout.value
