"""Every fleet exercise accepts one right answer (worked out independently here) and rejects a wrong one."""

import math

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.fleet import exercise_fleet, q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong


def rebalance_by_hand():
    rows = exercise_fleet()
    lost = sum(r["gpu_hours_lost"] for r in rows)
    got = sum(r["gpu_hours_lost"] * min((r["top_stage_s"] - 1) / (r["slowdown"] - 1), 1.0)
              for r in rows if r["culprit_where"] == "last-stage")
    return got / lost


def wasteful_by_hand():
    rows = exercise_fleet()
    return sum(1 - 1 / r["slowdown"] > 0.2 for r in rows) / len(rows)


# worked out when a test asks (q3 and q4 analyse the exercise fleet, not at collection)
RIGHT = {
    "q1": lambda: 1024 * 48 * 0.2,                                   # 1 - 1/1.25 = 0.2
    "q2": lambda: (1280 + 10240) / (1280 + 102400 + 10240),           # the big job is the one barely slowed
    "q3": rebalance_by_hand,
    "q4": wasteful_by_hand,
    "q5": lambda: math.ceil(1.96**2 * 0.425 * 0.575 / 0.02**2),
}
WRONG = {"q1": 1024 * 48 * 0.25, "q2": 2 / 3, "q3": 0.393, "q4": 0.213, "q5": 425}
ALL = [q1, q2, q3, q4, q5]


def test_exercise_fleet_is_the_stated_demo_fleet():
    rows = exercise_fleet()
    assert len(rows) == 60 and all(r["error"] is None for r in rows)
    assert {r["culprit_where"] for r in rows} >= {"last-stage", "spread"}


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_fleet_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name](), capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_fleet_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_fleet_exercise_blank_hint_and_solution(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "Not attempted" in out and "Hint: " in out and "Solution: " in out
