"""Every tail-probability exercise accepts one right answer (computed here from the formula) and rejects a wrong one."""

import math

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.tail import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": 1 - 0.999**1000,
    "q2": math.ceil(math.log(0.5) / math.log(1 - 0.002)),
    "q3": 1 - (1 - 0.001) ** (1 / 1024),
    "q4": 100 * 0.5 ** (1 / 1000),
    "q5": 1e-5,  # 1 - (1 - 1e-5)**2048 = 2.0% < 10%; 1e-4 gives 18.5%
}
WRONG = {"q1": 1.0, "q2": 250, "q3": 0.001, "q4": 99.0, "q5": 1e-4}


def test_tail_probability_right_answers_match_hand_values():
    assert round(RIGHT["q1"], 3) == 0.632 and RIGHT["q2"] == 347
    assert round(RIGHT["q4"], 2) == 99.93
    assert 1 - (1 - RIGHT["q5"]) ** 2048 < 0.10 < 1 - (1 - 10 * RIGHT["q5"]) ** 2048


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_tail_probability_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_tail_probability_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_tail_probability_exercise_blank_and_hint(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    out = capsys.readouterr().out
    assert "Not attempted" in out and "Hint: " in out
