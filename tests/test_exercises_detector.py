"""Every detector exercise accepts one right answer (computed here independently) and rejects a wrong one."""

import math

import pytest
from scipy import integrate, optimize, special, stats

from straggle_edu.exercises import ____
from straggle_edu.exercises.detector import q1, q2, q3
from _exercise_checks import assert_right, assert_wrong


def _lognormal(cv):
    sigma = math.sqrt(math.log(1 + cv**2))
    return stats.lognorm(sigma, scale=math.exp(-sigma**2 / 2))


def _p_alarm(n, t, window, dist):
    """1 - n * int f_M(x) (F_M(x / t) - F_M(x))**(n - 1) dx, the lower median of the window (quad)."""
    k = (window + 1) // 2
    b = window - k + 1
    cdf = lambda x: special.betainc(k, b, dist.cdf(x))
    pdf = lambda x: stats.beta(k, b).pdf(dist.cdf(x)) * dist.pdf(x)
    clean = integrate.quad(lambda x: n * pdf(x) * (cdf(x / t) - cdf(x)) ** (n - 1), dist.ppf(1e-12), dist.isf(1e-12),
                           points=[dist.median()], limit=400, epsabs=1e-13)[0]
    return 1 - clean


def _q1_right():
    # the CV at which 288 reports a day carry one false alarm on average, at threshold 0.75
    return optimize.brentq(lambda cv: 288 * _p_alarm(1024, 0.75, 30, _lognormal(cv)) - 1, 0.1, 0.2, xtol=1e-5)


def _q3_right():
    # 300 s of 5 s steps, every third one timed: 20 timings per report; one a week is 1/7 a day
    dist = _lognormal(0.15)
    return optimize.brentq(lambda t: 288 * _p_alarm(1024, t, 20, dist) - 1 / 7, 0.6, 0.9, xtol=1e-6)


RIGHT = {"q1": _q1_right, "q2": lambda: math.exp(288 * math.log1p(-1 / 288)), "q3": _q3_right}
WRONG = {"q1": 0.2, "q2": 0.0, "q3": 0.812}  # q1: the notebook's CV; q3: the window of 60 (every step timed)
QS = [q1, q2, q3]


def test_detector_right_answers_match_hand_values():
    assert round(RIGHT["q2"](), 3) == 0.367


@pytest.mark.parametrize("answer", [math.exp(-1), 0.368, 0.367, "36.7%"])
def test_detector_q2_accepts_its_answer_to_three_significant_figures(answer, capsys):
    # the solution points at exp(-1); the question asks for 3 significant figures
    assert_right(q2, answer, capsys)


@pytest.mark.parametrize("answer", [0.36, 0.37, 0.38, 1 / 288])
def test_detector_q2_rejects_a_neighbour_at_three_significant_figures(answer, capsys):
    assert_wrong(q2, answer, capsys)


@pytest.mark.parametrize("q", QS, ids=lambda q: q.name)
def test_detector_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name](), capsys)


@pytest.mark.parametrize("q", QS, ids=lambda q: q.name)
def test_detector_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", QS, ids=lambda q: q.name)
def test_detector_exercise_not_attempted(q, capsys):
    q.check(____)
    assert "Not attempted" in capsys.readouterr().out
