"""Exercises of 03_expected_maximum: one right and one wrong answer per checker,
the right ones computed here independently of the library."""

import math

import pytest
from scipy import integrate, stats

from straggle_edu.exercises import ____
from straggle_edu.exercises.expected_max import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong


def _normal_max(n):
    """E[max of n standard normals] by direct quadrature of n x phi(x) Phi(x)^(n-1)."""
    f = lambda x: n * x * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1)
    return integrate.quad(f, -10, 10, limit=200, points=[0, 3])[0]


RIGHT = {
    "q1": _normal_max(1000),
    "q2": 0.9 + 0.1 * sum(1 / k for k in range(1, 65)),
    "q3": 4095 * 7 * 24 * 0.1 / 1.1,
    "q4": (1 + 0.10 * _normal_max(2048)) / (2 * (1 + 0.10 * _normal_max(1024))),
    "q5": 0.10 / _normal_max(4096),
}
WRONG = {"q1": math.sqrt(2 * math.log(1000)), "q2": 1.0, "q3": 7 * 24 * 0.1, "q4": 0.5,
         "q5": 0.10 / math.sqrt(2 * math.log(4096))}


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


def test_rounded_answers_pass():
    assert q1.is_correct(3.24) and q4.is_correct(0.507) and q5.is_correct(0.0276)
    assert not q1.is_correct(3.3)
