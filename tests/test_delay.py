"""math.delay: the two framings of the calendar delay, and what it pushes back."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.math.cost import cost_of_stragglers
from straggle_edu.math.delay import DOWNSTREAM, milestones, planned_delay, runs_per_year, stretched_days


def test_stretched_days_article_example():
    assert math.isclose(stretched_days(10, 0.10), 100 / 9)
    assert math.isclose(planned_delay(10, 0.10), 10 / 9)
    assert stretched_days(7, 0.0) == 7.0 and planned_delay(7, 0.0) == 0.0


def test_stretched_days_agrees_with_the_bill():
    bill = cost_of_stragglers(4096, 10, 0.25, 2.0)
    assert math.isclose(stretched_days(10, 0.25), bill.days_stretched)


@given(days=st.floats(0.1, 1000.0), f=st.floats(1e-6, 0.99))
def test_planned_delay_exceeds_the_held_framing(days, f):
    assert planned_delay(days, f) > days * f
    assert math.isclose(stretched_days(days, f) - days, planned_delay(days, f), rel_tol=1e-9, abs_tol=1e-9)


def test_stretched_days_vectorised():
    np.testing.assert_allclose(stretched_days([10, 20], [0.5, 0.0]), [20.0, 20.0])


def test_runs_per_year():
    assert runs_per_year(10) == 36.5
    assert math.isclose(runs_per_year(10, 0.10), 32.85)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: stretched_days(10, 1.0), r"lost_fraction must be in \[0, 1\), got 1.0"),
        (lambda: planned_delay(-1, 0.1), "days must be >= 0, got -1"),
        (lambda: runs_per_year(0), "days must be > 0, got 0"),
        (lambda: milestones(10, 0.1, [("x", 1.0)]), "each stage must be a"),
        (lambda: milestones(10, 0.1, [("x", -1.0, 2.0)]), "start of 'x' must be >= 0, got -1.0"),
    ],
)
def test_delay_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_milestones_all_shift_by_the_planned_delay():
    ms = milestones(10, 0.10)
    assert [m.stage for m in ms] == ["training run"] + [s for s, _, _ in DOWNSTREAM]
    for m in ms[1:]:
        assert math.isclose(m.shift, 10 / 9)
        assert math.isclose(m.end - m.start, m.planned_end - m.planned_start)
    run = ms[0]
    assert (run.planned_start, run.planned_end, run.start) == (0.0, 10.0, 0.0)
    assert math.isclose(run.end, 100 / 9)
    deploy = [m for m in ms if m.stage == "deployment"][0]
    assert (deploy.planned_start, deploy.planned_end) == (16.0, 17.0)
