"""Exercises of 03b: one right answer (computed here by hand) and one wrong answer per checker."""

import math

import pytest
from scipy import stats

from straggle_edu.exercises.independence import q1, q2, q3, q4
from straggle_edu.math.order_stats import expected_max
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": 1 - (1 - 1 / 200) ** 64,
    "q2": 0.6 * expected_max(stats.norm(), 2048),
    "q3": 1.0 * (2 / 4) ** 3 + 1.2 * ((3 / 4) ** 3 - (2 / 4) ** 3) + 1.6 * (1 - (3 / 4) ** 3),
    "q4": "independent",
}
WRONG = {"q1": 1 - (1 - 1 / 200) ** 512, "q2": expected_max(stats.norm(), 2048), "q3": 1.6, "q4": "host"}


def test_independence_right_answers_match_hand_values():
    assert round(RIGHT["q3"], 5) == 1.40625 and math.isclose(RIGHT["q1"], 0.274, abs_tol=5e-4)


@pytest.mark.parametrize("q", [q1, q2, q3, q4], ids=lambda q: q.name)
def test_independence_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4], ids=lambda q: q.name)
def test_independence_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)
