"""Cost charts: valid specs, and the numbers the browser computes equal the library's."""

import re

import numpy as np
import pytest
from _vega import drawn_texts, with_params

from straggle_edu.charts._data import rows_of
from straggle_edu.charts.cost import (
    bill_chart,
    delay_framings_chart,
    lost_dollars_chart,
    lost_fraction_chart,
    milestones_chart,
)
from straggle_edu.math.cost import cost_of_stragglers
from straggle_edu.math.delay import milestones, planned_delay


def _params(chart):
    return {p["name"]: p.get("value") for p in chart.to_dict()["params"]}


def test_bill_chart_draws_the_article_example():
    texts = drawn_texts(bill_chart(4096, 10, 0.10, 2.0))
    assert texts[-6:] == ["983,040", "98,304", "$196,608", "1.00", "9.00", "11.11"]


def test_bill_chart_at_five_dollars():
    assert "$491,520" in drawn_texts(with_params(bill_chart(), usd_per_gpu_hour=5.0))


@pytest.mark.parametrize(
    "gpus, days, f, price",
    [(1, 1.0, 0.0, 0.25), (1024, 30.0, 0.05, 3.0), (16384, 90.0, 0.33, 7.5), (512, 2.5, 0.5, 12.0)],
)
def test_bill_chart_matches_cost_of_stragglers(gpus, days, f, price):
    bill = cost_of_stragglers(gpus, days, f, price)
    texts = drawn_texts(with_params(bill_chart(), gpus=gpus, days=days, lost_fraction=f, usd_per_gpu_hour=price))
    want = [f"{bill.gpu_hours:,.0f}", f"{bill.gpu_hours_lost:,.0f}", f"${bill.usd_lost:,.0f}",
            f"{bill.days_delay:.2f}", f"{bill.days_without_stragglers:.2f}", f"{bill.days_stretched:.2f}"]
    assert texts[-6:] == want


def test_bill_chart_params_carry_the_library_names():
    assert _params(bill_chart(8, 2.0, 0.2, 3.0)) == {"gpus": 8, "days": 2.0, "lost_fraction": 0.2, "usd_per_gpu_hour": 3.0}


@pytest.mark.parametrize("gpus, days, f, price", [(4096, 10.0, 0.10, 2.0), (100, 3.0, 0.27, 4.0)])
def test_lost_dollars_chart_marks_the_current_bill(gpus, days, f, price):
    chart = with_params(lost_dollars_chart(max_lost=0.3), gpus=gpus, days=days, lost_fraction=f, usd_per_gpu_hour=price)
    assert f"${cost_of_stragglers(gpus, days, f, price).usd_lost:,.0f}" in drawn_texts(chart)
    grid = lost_dollars_chart(max_lost=0.3).to_dict()["layer"][0]["data"]["values"]
    assert grid[0] == {"f": 0.0} and grid[-1] == {"f": 0.3} and len(grid) == 61


@pytest.mark.parametrize("days, f", [(10.0, 0.10), (30.0, 0.4), (1.0, 0.0)])
def test_delay_framings_chart_readout_matches_the_library(days, f):
    texts = drawn_texts(with_params(delay_framings_chart(), days=days, lost_fraction=f))
    assert f"held: {days * f:.2f} d, planned: {planned_delay(days, f):.2f} d" in texts


@pytest.mark.parametrize("days, f", [(10.0, 0.10), (45.0, 0.3)])
def test_milestones_chart_shifts_every_stage_by_the_planned_delay(days, f):
    texts = drawn_texts(with_params(milestones_chart(), days=days, lost_fraction=f))
    shifts = [t for t in texts if re.fullmatch(r"\+[\d.]+ d", t)]
    assert shifts == [f"+{planned_delay(days, f):.2f} d"] * len(milestones(days, f))


def test_milestones_chart_custom_stages():
    spec = milestones_chart(stages=[("eval", 0.0, 1.0)]).to_dict()
    assert [r["stage"] for r in spec["data"]["values"]] == ["training run", "eval"]


def test_lost_fraction_chart_spec():
    rows = [{"n": int(n), "scenario": s, "lost": 0.01 * np.log2(n)} for n in (1, 2, 4) for s in ("a", "b")]
    spec = lost_fraction_chart(rows, n_mark=2).to_dict()
    assert _params(lost_fraction_chart(rows, n_mark=2)) == {"n_mark": 2}
    assert len(rows_of(spec, spec["layer"][0]["data"])) == 6
    assert spec["layer"][0]["encoding"]["y"]["axis"]["format"] == "%"
