"""The map's exercises: a right answer computed here by another route, and a wrong one."""

import numpy as np
import pytest
from scipy import integrate, stats

from straggle_edu.exercises.start_here import q1, q2
from straggle_edu.explorers.start_here import START_HERE_STEP_TIME


def _expected_max_by_quadrature(n):
    """E[max] = ∫ t d(F(t)**n) for the 1 s ± 5% worker that pauses 0.5 s on 1% of steps."""
    def cdf(t):
        return 0.99 * stats.norm.cdf(t, 1.0, 0.05) + 0.01 * stats.norm.cdf(t, 1.5, 0.05)

    def pdf(t):
        return 0.99 * stats.norm.pdf(t, 1.0, 0.05) + 0.01 * stats.norm.pdf(t, 1.5, 0.05)

    value, _ = integrate.quad(lambda t: t * n * cdf(t) ** (n - 1) * pdf(t), 0.5, 2.2, points=[1.0, 1.5], limit=200)
    return value


def test_start_here_worker_is_the_notebooks():
    assert START_HERE_STEP_TIME.mean() == pytest.approx(1.005)


def test_start_here_q1_right_and_wrong(capsys):
    q1.check(_expected_max_by_quadrature(256))
    assert q1.is_correct(_expected_max_by_quadrature(256))
    q1.check(1.005)
    assert not q1.is_correct(1.005)
    out = capsys.readouterr().out
    assert "✓" in out and "✗" in out


def test_start_here_q2_right_and_wrong(capsys):
    q2.check(1024 * 1.005 / _expected_max_by_quadrature(1024))
    assert q2.is_correct(1024 * 1.005 / _expected_max_by_quadrature(1024))
    q2.check(1024)
    assert not q2.is_correct(1024)
    out = capsys.readouterr().out
    assert "✓" in out and "✗" in out


def test_start_here_answers_are_plausible():
    assert 1.4 < _expected_max_by_quadrature(256) < 1.6
    assert np.isfinite(_expected_max_by_quadrature(1024))


def test_start_here_q3_choose_the_size(capsys):
    # By quadrature: each GPU delivers 1.005 / E[max of n]; 64 keeps >= 75% and 128 does not.
    efficiency = {n: 1.005 / _expected_max_by_quadrature(n) for n in (64, 128)}
    assert efficiency[64] >= 0.75 > efficiency[128]
    from _exercise_checks import assert_right, assert_wrong
    from straggle_edu.exercises.start_here import q3

    assert_right(q3, 64, capsys)
    assert_wrong(q3, 128, capsys)
