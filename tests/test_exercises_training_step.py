"""Every training-step exercise accepts one right answer (worked out by hand here) and rejects a wrong one."""

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.training_step import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": (12 + 6 - 1) * (0.5 + 1.0),
    "q2": 1.0,  # 3 s added, 2 s of slack (the hand-computed 2-stage case)
    "q3": (8 - 1) / (8 + 8 - 1),
    "q4": 1.0 + 2.0 * (1 - 0.999**1000),
    # E[max of 64 standard normals] = 2.3437 (Harter's table): 0.1172 / sqrt(k) + 0.4 / k is
    # 0.054 at k = 16 and 0.033 at k = 32, the first within 5%
    "q5": 32,
}
WRONG = {"q1": 12 * 1.5, "q2": 3.0, "q3": 0.0, "q4": 1.0 + 2.0 * 0.001, "q5": 16}


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_training_step_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_training_step_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_training_step_exercise_blank_hint_and_solution(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "Not attempted" in out and "Hint: " in out and "Solution: " in out
