"""Exercises of 10_live_barrier_lab: one right answer (computed here,
independently of the library) and one wrong answer each."""

import pytest
from scipy import integrate, stats

from straggle_edu.exercises import ____
from straggle_edu.exercises.barrier_lab import q1, q2, q3, q4, q5
from _exercise_checks import assert_right, assert_wrong


def _emax_normal(n, mu, sigma):
    """E[max of n N(mu, sigma^2)] by direct integration of t * n f F^(n-1)."""
    f = lambda t: t * n * stats.norm.pdf(t, mu, sigma) * stats.norm.cdf(t, mu, sigma) ** (n - 1)
    return integrate.quad(f, mu - 12 * sigma, mu + 12 * sigma)[0]


@pytest.mark.parametrize(
    "q, right, wrong",
    [
        (q1, 130.0, 81.25),  # the slow worker's 2 x 65 ms, not the average
        (q2, 65.0, 0.0),
        (q3, 2 / ((2 + 7 * 1) / 8), 1.6),  # one 2x worker among 8; 1.6 is among 4
        (q4, _emax_normal(8, 50.0, 5.0), 50.0),
    ],
)
def test_live_barrier_lab_exercises(q, right, wrong, capsys):
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


def test_live_barrier_lab_q5_replace_or_keep(capsys):
    # Independently: the rank-3 step is its own 1.5 x 50 ms = 75 ms (seven 5%-jitter 50 ms workers exceed it
    # with negligible probability); the healthy step is E[max of 8 N(50, 2.5)] ms. Keep: 2000 x 75 ms = 150 s.
    keep = 2000 * 0.075
    replace = 60 + 2000 * _emax_normal(8, 0.05, 0.0025)
    assert keep < replace  # 150 s < about 167 s
    assert_right(q5, "keep", capsys)
    assert_right(q5, " Keep ", capsys)
    assert_wrong(q5, "replace", capsys)
