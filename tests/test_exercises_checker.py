"""What every checker accepts and rejects (issue 26 §6): 3 significant figures, percents for fractions, synonyms in
both languages, a near miss 1% off rejected, and a wrong answer that never shows the expected value."""

import pytest

from straggle_edu.exercises import Exercise
from straggle_edu.exercises import backup_for_real, barrier_lab, cost, debug_job, fleet, restaurant, tail, training_step
from test_exercise_values import _every_exercise

# The reader's table of right answers that the checkers rejected (reviews/reader-en-2026-12-05.md, M5), with the
# percent forms and the words of the same review: each is accepted now.
READERS_RIGHT_ANSWERS = [
    (tail.q3, 9.77e-7), (tail.q3, 9.771e-7), (tail.q3, 0.001 / 1024),  # "target / n"
    (fleet.q4, 0.1333), (fleet.q4, 0.133), (fleet.q2, 0.101),
    (restaurant.q3, 0.281), (restaurant.q3, 28.125), (restaurant.q3, "28.1%"),
    (cost.q2, 23.5), (cost.q3, 6.1), (cost.q3, "6.1%"),
    (training_step.q3, 0.4667), (training_step.q3, 0.467),
    (debug_job.q4, 1.14), (barrier_lab.q3, 1.78), (tail.q1, 63.2), (tail.q1, "63.2%"),
    (barrier_lab.q5, "keep running"), (barrier_lab.q5, "keep"), (barrier_lab.q5, "继续跑"),
    (cost.q5, "更换"), (cost.q5, "替换"), (cost.q5, "Replace"),
    (backup_for_real.q2, 0.201),
]


@pytest.mark.parametrize("q, answer", READERS_RIGHT_ANSWERS, ids=lambda x: getattr(x, "name", repr(x)))
def test_a_right_answer_the_reader_tried_is_accepted(q, answer):
    assert q.is_correct(answer), f"{q.name} rejects {answer!r} (expected {q.expected()!r})"


@pytest.mark.parametrize("q, answer", [(cost.q5, "继续跑"), (barrier_lab.q5, "替换"), (restaurant.q3, 28.4),
                                       (tail.q1, "63.9%"), (cost.q2, 23.4)],
                         ids=lambda x: getattr(x, "name", repr(x)))
def test_a_wrong_answer_in_either_language_is_rejected(q, answer):
    assert not q.is_correct(answer)


def _numeric_exercises():
    for name, q in _every_exercise():
        want = q.expected()
        if isinstance(want, (int, float)) and not isinstance(want, bool) and q.compare is None and want != 0:
            yield name, q, float(want)


@pytest.mark.parametrize("name, q, want", list(_numeric_exercises()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_numeric_exercise_takes_three_figures_and_rejects_a_near_miss(name, q, want):
    assert q.is_correct(float(f"{want:.{max(q.digits, 3)}g}")), f"{name} rejects its answer to {q.digits} figures"
    for off in (1.01, 0.99):
        assert not q.is_correct(want * off), f"{name} accepts {want * off:g}, {abs(off - 1):.0%} off {want:g}"


def test_a_wrong_answer_never_shows_the_expected_value(capsys):
    q = Exercise("q9", expected=lambda: 14.25, hint="The table waits.", solution="max(times)  # 14.25")
    q.check(10.5)
    out = capsys.readouterr().out
    assert "not yet" in out and "14.2" not in out
    q.solution()
    assert "14.25" in capsys.readouterr().out


def test_a_percent_is_taken_only_for_a_fraction_and_says_so(capsys):
    share = Exercise("q1", expected=lambda: 0.28125, fraction=True)
    count = Exercise("q2", expected=lambda: 0.28125)
    share.check(28.1)
    assert "percent" in capsys.readouterr().out
    assert share.is_correct("28.1 %") and count.is_correct("28.1%") and not count.is_correct(28.1)


def test_digits_asks_for_more_figures_near_a_bound():
    near_100 = Exercise("q4", expected=lambda: 99.9307, digits=4)
    assert near_100.is_correct(99.93) and not near_100.is_correct(99.9) and not near_100.is_correct(99.94)
