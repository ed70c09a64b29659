"""Exercises of 04_cost_accounting: one right and one wrong answer per checker,
the right ones computed here independently of the library."""

import pytest
from scipy import integrate, optimize, stats

from straggle_edu.exercises import ____
from straggle_edu.exercises.cost import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong


def _normal_max(n):
    f = lambda x: n * x * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1)
    return integrate.quad(f, -10, 10, limit=200, points=[0, 3])[0]


E1024, E4096 = _normal_max(1024), _normal_max(4096)
RIGHT = {
    "q1": 1024 * 30 * 24 * 0.05 * 3.0,
    "q2": 20 / 0.85,
    "q3": 0.02 * E1024 / (1 + 0.02 * E1024),
    "q4": optimize.brentq(lambda j: j * E4096 / (1 + j * E4096) - 0.05, 1e-6, 0.2),
    "q5": "replace" if 120 * 1.04 > 1 + 3 + 120 else "keep running",  # 124.8 h against 124 h
}
WRONG = {"q1": 1024 * 30 * 0.05 * 3.0, "q2": 20 * 1.15, "q3": 0.02, "q4": 0.05, "q5": "keep running"}



@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=["q1", "q2", "q3", "q4", "q5"])
def test_checker_accepts_the_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=["q1", "q2", "q3", "q4", "q5"])
def test_checker_rejects_a_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4, q5], ids=["q1", "q2", "q3", "q4", "q5"])
def test_placeholder_is_not_attempted_and_hints_exist(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    assert "Not attempted" in capsys.readouterr().out
    q.hint()
    assert len(capsys.readouterr().out) > 20


def test_exact_dollars_expected():
    assert q1.is_correct(110_592) and not q1.is_correct(110_000)
