"""Exercises of 11_backup_workers_for_real: one right answer (computed here by
hand) and one wrong answer each."""

import pytest

from straggle_edu.exercises import ____
from scipy import stats

from straggle_edu.exercises.backup_for_real import q1, q2, q3, q4


@pytest.mark.parametrize(
    "q, right, wrong",
    [
        (q1, 6 / 100, 6 / 94),  # b/(N+b), not b/N
        (q2, sorted([20, 21, 19, 80, 22, 20, 18, 80, 21, 23])[7], 80.0),  # the 8th, not the max
        (q3, 0.0, 0.8),  # the long batches are the late ones; 8/10 would be a random drop
        (q4, 5, 6),  # the bill (16 + b)(1 + 4 P(Bin(16 + b, 0.1) > b)): 22.21 at b = 5, 22.39 at b = 6
    ],
)
def test_backup_for_real_exercises(q, right, wrong, capsys):
    q.check(right)
    assert q.is_correct(right)
    q.check(wrong)
    assert not q.is_correct(wrong)
    q.check(____)
    assert not q.is_correct(____)
    out = capsys.readouterr().out
    assert "correct" in out and "expected" in out and "Not attempted" in out
    q.hint()
    q.solution()
    assert "Hint:" in capsys.readouterr().out


def test_backup_for_real_q4_bill_by_hand():
    # b = 0: a step is slow unless all 16 processes are on time
    assert abs(16 * (1 + 4 * (1 - 0.9**16)) - 68.14) < 0.01
    bills = {b: (16 + b) * (1 + 4 * stats.binom(16 + b, 0.1).sf(b)) for b in range(9)}
    assert min(bills, key=bills.get) == 5 and bills[5] < bills[6] < bills[4]
