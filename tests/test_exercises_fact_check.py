"""Exercises of 08_fact_check: each checker accepts an independently computed answer and rejects a wrong one."""

import math

from straggle_edu.exercises import ____
from straggle_edu.exercises.fact_check import q1, q2, q3, q4


def test_q1_tail_probability_by_hand():
    assert q1.is_correct(1 - 0.999**1000) and not q1.is_correct(0.1)


def test_q2_bill_by_hand():
    assert q2.is_correct(2048 * 30 * 24 * 0.08 * 3) and not q2.is_correct(2048 * 30 * 24 * 3)


def test_q3_two_normal_workers():
    want = 2 / (1 + 0.1 / math.sqrt(math.pi))  # E[max of 2 normals] = mu + sigma / sqrt(pi)
    assert q3.is_correct(want) and not q3.is_correct(2.0)


def test_q4_is_false():
    assert q4.is_correct(False) and not q4.is_correct(True)


def test_placeholder_is_not_attempted(capsys):
    q2.check(____)
    assert not q2.is_correct(____)
    assert "Not attempted" in capsys.readouterr().out
