"""Exercises of 11_backup_workers_for_real: one right answer (computed here by
hand) and one wrong answer each."""

import pytest

from straggle_edu.exercises import ____
from scipy import stats

from straggle_edu.exercises.backup_for_real import q1, q2, q3, q4


@pytest.mark.parametrize(
    "q, right, wrong",
    [
        (q1, 3, 4),  # 3/67 = 4.5% <= 5% < 4/68 = 5.9%
        (q2, 62 / 309, 2 / 12),  # the late two did 31 ms each of 22*3 + 23 + 24 + 25*2 + 26 + 27 + 31 + 2*31; not b/(N+b)
        (q3, 0.5, 0.0),  # one backup drops one of the two long batches; b = 2 drops both
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
    assert "correct" in out and "not yet" in out and "Not attempted" in out
    q.hint()
    q.solution()
    assert "Hint:" in capsys.readouterr().out


def test_backup_for_real_q3_by_hand_each_step_drops_exactly_one_long_batch():
    from straggle_edu.instruments.sgd import SGDSettings, make_plan

    plan = make_plan(SGDSettings(scheme="backup", workers=8, backups=1, slow="data"))
    long = plan.data.long[plan.idx].all(axis=2)
    assert (long.sum(axis=1) == 2).all() and ((long & ~plan.counted).sum(axis=1) == 1).all()


def test_backup_for_real_q4_bill_by_hand():
    # b = 0: a step is slow unless all 16 processes are on time
    assert abs(16 * (1 + 4 * (1 - 0.9**16)) - 68.14) < 0.01
    bills = {b: (16 + b) * (1 + 4 * stats.binom(16 + b, 0.1).sf(b)) for b in range(9)}
    assert min(bills, key=bills.get) == 5 and bills[5] < bills[6] < bills[4]
