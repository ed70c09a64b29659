"""Exercises of 07_mitigations: each checker accepts an independently computed answer and rejects a wrong one."""

import math

from scipy import stats

from straggle_edu.exercises import ____
from straggle_edu.exercises.mitigations import q1, q2, q3, q4, q5, q6

from _exercise_checks import assert_right, assert_wrong


def test_q1_lpt_by_hand():
    # 7 | 6 | 5; 4 -> 5 (9); 4 -> 6 (10); 3 -> 7 (10); 3 -> 9 (12).
    assert q1.is_correct(12.0) and not q1.is_correct(11.0)  # 11 is the optimum, not what LPT gets


def test_q2_cheap_backups_at_200():
    # The model of inception_50_setup at N = 200: compute E[200th of 200 + b] by simulation-free
    # integration of the order statistic's survival function, then the normalized speedup.
    from straggle_edu.models.step_time import StepTime

    dist = StepTime(1.1, jitter=0.02, pause_prob=0.03, pause=0.55)
    t = []
    grid = [0.8 + i * 0.004 for i in range(int((3.0 - 0.8) / 0.004))]
    F = [float(dist.cdf(x)) for x in grid]
    for b in range(17):
        m = 200 + b
        # P(200th of m > x) = P(Binomial(m, F(x)) < 200)
        t.append(0.8 + sum(stats.binom.cdf(199, m, f) for f in F) * 0.004 + 0.1 + 0.012 * m)
    norm = [t[0] / tb * 200 / (200 + 0.3 * b) for b, tb in enumerate(t)]
    best = max(range(17), key=lambda b: norm[b])
    assert q2.is_correct(best) and not q2.is_correct(4)  # 4: the answer at N = 50


def test_q3_hedge_rate_from_the_lognormals():
    body = 1 - stats.lognorm(0.574, scale=0.003).cdf(0.007)
    slow = 1 - stats.lognorm(1.0, scale=0.0665).cdf(0.007)
    want = (1 - 0.00206) * body + 0.00206 * slow
    assert q3.is_correct(want) and not q3.is_correct(0.188)  # 0.188 is the 5 ms figure


def test_q4_throughput_ratio_by_simulation():
    from straggle_edu.models.step_time import StepTime

    rng = __import__("numpy").random.default_rng(0)
    x = StepTime(1.0, jitter=0.02, pause_prob=0.01, pause=0.5).rvs((40_000, 100), random_state=rng)
    x.sort(axis=1)
    want = (98 / x[:, 97].mean()) / (100 / x[:, 99].mean())
    assert math.isclose(want, q4.expected(), rel_tol=2e-3)
    assert q4.is_correct(round(q4.expected(), 4)) and not q4.is_correct(0.98)


def test_placeholder_is_not_attempted(capsys):
    q1.check(____)
    assert not q1.is_correct(____)
    assert "Not attempted" in capsys.readouterr().out


def test_q5_pick_the_split_by_brute_force(capsys):
    # Every split of 24 layers into 4 non-empty stages, each timed through 1F1B.
    import itertools

    import numpy as np

    from straggle_edu.models.causes import stage_imbalance

    def step(split):
        return stage_imbalance(24, 4, 4, output_layers=3.0, layers_per_stage=split).step_time

    splits = [np.diff([0, *c, 24]).tolist() for c in itertools.combinations(range(1, 24), 3)]
    best = min(splits, key=step)
    assert_right(q5, best, capsys)
    assert_right(q5, tuple(best), capsys)
    assert_wrong(q5, [6, 7, 7, 4], capsys)  # the smallest bottleneck, a longer step
    assert_wrong(q5, [24, 0, 0, 0], capsys)
    assert_wrong(q5, "9/6/6/3", capsys)


def test_q6_choose_b_by_integration(capsys):
    # E[N-th of N + b] by integrating P(N-th of m > x) = P(Binomial(m, F(x)) < N), then the normalized speedup.
    from straggle_edu.models.step_time import StepTime

    dist = StepTime(1.0, jitter=0.02, pause_prob=0.02, pause=0.8)
    dx, grid = 0.002, [0.8 + i * 0.002 for i in range(int((2.2 - 0.8) / 0.002))]
    F = [float(dist.cdf(x)) for x in grid]
    t = [0.8 + sum(stats.binom.cdf(99, 100 + b, f) for f in F) * dx + 0.1 + 0.005 * (100 + b) for b in range(13)]
    norm = [t[0] / tb * 100 / (100 + 0.5 * b) for b, tb in enumerate(t)]
    best = max(range(13), key=lambda b: norm[b])
    assert_right(q6, best, capsys)
    assert_wrong(q6, 12, capsys)
