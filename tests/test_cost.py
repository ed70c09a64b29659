"""Cost accounting: the article's example to the dollar, and bad input."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu import StragglerCost, cost_of_stragglers, lost_fraction_from_slowdown


def test_cost_of_stragglers_article_example_exactly():
    bill = cost_of_stragglers(4096, 10, 0.10, 2.0)
    assert isinstance(bill, StragglerCost)
    assert bill.gpu_hours == 983_040
    assert bill.gpu_hours_lost == 98_304
    assert bill.usd_lost == 196_608
    assert bill.days_delay == 1.0
    assert cost_of_stragglers(4096, 10, 0.10, 5.0).usd_lost == 491_520


def test_cost_of_stragglers_fields_are_floats_and_frozen():
    bill = cost_of_stragglers(4096, 10, 0.10, 2.0)
    assert all(type(getattr(bill, f.name)) is float for f in dataclasses.fields(bill))
    with pytest.raises(dataclasses.FrozenInstanceError):
        bill.usd_lost = 0.0


def test_cost_of_stragglers_both_framings_of_delay():
    bill = cost_of_stragglers(4096, 10, 0.10, 2.0)
    assert bill.days_without_stragglers == pytest.approx(9.0)
    assert bill.days_stretched == pytest.approx(10 / 0.9)


def test_cost_of_stragglers_zero_loss_costs_nothing():
    bill = cost_of_stragglers(8, 3, 0.0, 4.0)
    assert (bill.gpu_hours, bill.gpu_hours_lost, bill.usd_lost, bill.days_delay) == (576.0, 0.0, 0.0, 0.0)


@given(
    gpus=st.floats(0, 1e6), days=st.floats(0, 1e3), lost=st.floats(0, 0.999), price=st.floats(0, 100)
)
def test_cost_of_stragglers_identities(gpus, days, lost, price):
    bill = cost_of_stragglers(gpus, days, lost, price)
    assert bill.gpu_hours == pytest.approx(gpus * days * 24)
    assert bill.gpu_hours_lost == pytest.approx(bill.gpu_hours * lost)
    assert bill.usd_lost == pytest.approx(bill.gpu_hours_lost * price)
    assert bill.days_delay == pytest.approx(days * lost)
    assert bill.usd_lost >= 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(gpus=-1), r"^gpus must be >= 0, got -1"),
        (dict(days=-0.5), r"^days must be >= 0, got -0.5"),
        (dict(lost_fraction=1.0), r"^lost_fraction must be in \[0, 1\), got 1.0"),
        (dict(lost_fraction=-0.1), r"^lost_fraction must be in \[0, 1\)"),
        (dict(usd_per_gpu_hour=float("nan")), r"^usd_per_gpu_hour must be >= 0 \(not NaN\), got nan"),
        (dict(gpus=float("inf")), r"^gpus must be >= 0, got inf"),
    ],
)
def test_cost_of_stragglers_bad_input_raises(kwargs, message):
    args = dict(gpus=4096, days=10, lost_fraction=0.1, usd_per_gpu_hour=2.0) | kwargs
    with pytest.raises(ValueError, match=message):
        cost_of_stragglers(**args)


def test_lost_fraction_from_slowdown():
    assert lost_fraction_from_slowdown(1.0) == 0.0
    assert lost_fraction_from_slowdown(1.6) == 0.375
    with pytest.raises(ValueError, match=r"^slowdown must be >= 1, got 0.5"):
        lost_fraction_from_slowdown(0.5)
