"""Every restaurant exercise accepts one right answer (worked out by hand here) and rejects a wrong one."""

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.restaurant import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": 20.0,  # the slow dish
    "q2": 11 * (20 - 8),
    "q3": (0.6 + 0.5 + 0.7) / (4 * 1.6),
    "q4": (1.2 + 1.3) / ((1.0 + 1.2) / 2 + (1.3 + 1.0) / 2),
    "q5": 4,  # tables of 4: (12 x 10 + 4 x 20) / 16 = 12.5 min; of 8: (8 x 10 + 8 x 20) / 16 = 15
}
WRONG = {"q1": (11 * 8 + 20) / 12, "q2": 12.0, "q3": 0.6 / 1.6, "q4": 1.0, "q5": 8}


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_restaurant_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_restaurant_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=lambda q: q.name)
def test_restaurant_exercise_blank_hint_and_solution(q, capsys, monkeypatch):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    out = capsys.readouterr().out
    assert "Not attempted" in out and out.count("Hint: ") == 1
    monkeypatch.setenv("STRAGGLE_EDU_STUDENT", "1")
    q.solution()
    out = capsys.readouterr().out
    assert "instructor" in out and q.solution_text not in out
