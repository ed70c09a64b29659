"""Exercises of 08_fact_check: each checker accepts an independently computed answer and rejects a wrong one."""

import math

from straggle_edu.exercises import ____
from straggle_edu.exercises.fact_check import best_k, q1, q2, q3
from straggle_edu.models import StepTime
from straggle_edu.models.backup import wait_for_fastest


def test_q1_bill_by_hand():
    assert q1.is_correct(2048 * 30 * 24 * 0.08 * 3) and not q1.is_correct(2048 * 30 * 24 * 3)


def test_q2_two_normal_workers():
    want = 2 / (1 + 0.1 / math.sqrt(math.pi))  # E[max of 2 normals] = mu + sigma / sqrt(pi)
    assert q2.is_correct(want) and not q2.is_correct(2.0)


def test_q3_design_k_beats_its_neighbours_and_the_article():
    tail = StepTime(1.0, jitter=0.02, pause_prob=0.003, pause=1.0)
    k = best_k(tail, 100)
    ratio = {j: wait_for_fastest(tail, 100, j).throughput_ratio for j in (94, k - 1, k, k + 1)}
    assert ratio[k] > ratio[k - 1] and ratio[k] > ratio[k + 1] and ratio[k] > ratio[94]
    assert q3.is_correct(k) and not q3.is_correct(94)


def test_best_k_without_a_tail_waits_for_everyone():
    assert best_k(StepTime(1.0, jitter=0.0), 10) == 10


def test_placeholder_is_not_attempted(capsys):
    q2.check(____)
    assert not q2.is_correct(____)
    assert "Not attempted" in capsys.readouterr().out
