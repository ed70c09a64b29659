"""models.waste: the lost fraction from the model, and one persistently slow card."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from straggle_edu.math.tail import p_any_slow
from straggle_edu.models.cluster import Cluster, expected_step_time, sample_step_times, scaling_efficiency
from straggle_edu.models.max_growth import normal_max_sigmas
from straggle_edu.models.step_time import StepTime
from straggle_edu.models.waste import (
    jitter_for_lost_fraction,
    lost_fraction,
    lost_fraction_curves,
    slow_card,
    slow_card_curves,
)


def test_lost_fraction_one_worker_or_no_variability_is_zero():
    assert lost_fraction(Cluster.uniform(1, StepTime(1.0, jitter=0.1))) == 0.0
    assert lost_fraction(Cluster.uniform(4096, StepTime(1.0, jitter=0.0))) == 0.0


@pytest.mark.parametrize("n, jitter", [(2, 0.05), (100, 0.02), (4096, 0.03)])
def test_lost_fraction_normal_jitter_closed_form(n, jitter):
    e = normal_max_sigmas([n])[0]
    assert math.isclose(lost_fraction(Cluster.uniform(n, StepTime(1.0, jitter=jitter))), jitter * e / (1 + jitter * e), rel_tol=1e-10)


def test_lost_fraction_pauses_without_jitter_closed_form():
    # E[slowest] = 1 + L * P(some worker pauses); mean = 1 + q L.
    n, q, L = 4096, 0.001, 0.1
    P = p_any_slow(q, n)
    want = L * (P - q) / (1 + L * P)
    assert math.isclose(lost_fraction(Cluster.uniform(n, StepTime(1.0, jitter=0.0, pause_prob=q, pause=L))), want, rel_tol=1e-10)


def test_lost_fraction_slow_card_without_jitter_by_hand():
    # 7 of 8 workers wait 0.5 s of a 1.5 s step; the slow one never waits.
    assert math.isclose(lost_fraction(Cluster.with_slow(8, StepTime(1.0, jitter=0.0), 1, 1.5)), 7 * 0.5 / 8 / 1.5)


def test_lost_fraction_counts_sync_as_neither_work_nor_waiting():
    c = Cluster.uniform(4096, StepTime(1.0, jitter=0.03), sync=0.2)
    e = normal_max_sigmas([4096])[0]
    assert math.isclose(lost_fraction(c), 0.03 * e / (1 + 0.03 * e + 0.2), rel_tol=1e-10)


@settings(max_examples=25)
@given(n=st.integers(1, 10**5), jitter=st.floats(0.0, 0.2), q=st.sampled_from([0.0, 1e-4, 1e-2]),
       pause=st.floats(0.0, 1.0), sync=st.floats(0.0, 0.5), slow=st.floats(1.0, 1.5))
def test_lost_fraction_is_one_minus_scaling_efficiency(n, jitter, q, pause, sync, slow):
    c = Cluster.with_slow(n, StepTime(1.0, jitter=jitter, pause_prob=q, pause=pause), min(1, n - 1), slow, sync=sync)
    f = lost_fraction(c)
    assert 0.0 <= f < 1.0
    assert math.isclose(f + c.sync_time / expected_step_time(c), 1.0 - scaling_efficiency(c), abs_tol=1e-12)


def test_lost_fraction_agrees_with_monte_carlo():
    c = Cluster.uniform(4096, StepTime(1.0, jitter=0.03, pause_prob=0.001, pause=0.1))
    x = sample_step_times(c, 200_000, rng=1)
    mc = (x.mean() - c.mean_worker_time) / x.mean()
    se = x.std() / math.sqrt(x.size) / x.mean()
    assert abs(mc - lost_fraction(c)) < 4 * se


@pytest.mark.parametrize(
    "step_time",
    [StepTime(1.0, jitter=0.03), StepTime(1.0, jitter=0.03, pause_prob=0.001, pause=0.1),
     StepTime(1.0, jitter=0.002, pause_prob=0.01, pause=0.5), StepTime(1.0, jitter=0.2, pause_prob=0.05, pause=2.0),
     StepTime(1.0, jitter=0.0, pause_prob=0.001, pause=0.3), StepTime(2.0, jitter=0.0005, pause_prob=1e-5, pause=0.05)],
)
def test_lost_fraction_curves_match_the_exact_value(step_time):
    ns = [1, 2, 3, 64, 1000, 4096, 16384]
    rows = lost_fraction_curves(ns, {"s": step_time}, sync=0.05)
    exact = [lost_fraction(Cluster.uniform(n, step_time, sync=0.05)) for n in ns]
    np.testing.assert_allclose([r["lost"] for r in rows], exact, rtol=1e-9, atol=1e-14)
    assert [r["n"] for r in rows] == ns and {r["scenario"] for r in rows} == {"s"}


def test_lost_fraction_curves_rejects_bad_input():
    with pytest.raises(ValueError, match="scenario 'x' must be a StepTime, got norm_frozen|scenario 'x' must be a StepTime"):
        lost_fraction_curves([2], {"x": stats.norm()})
    with pytest.raises(ValueError, match="ns must be a whole number >= 1, got 0"):
        lost_fraction_curves([0], {"x": StepTime(1.0)})


def test_jitter_for_lost_fraction_closed_form_and_round_trip():
    e = normal_max_sigmas([4096])[0]
    j = jitter_for_lost_fraction(4096, 0.10)
    assert math.isclose(j, 0.10 / (0.9 * e), rel_tol=1e-9)
    j2 = jitter_for_lost_fraction(1024, 0.08, pause_prob=1e-4, pause=0.2, sync=0.1)
    c = Cluster.uniform(1024, StepTime(1.0, jitter=j2, pause_prob=1e-4, pause=0.2), sync=0.1)
    assert math.isclose(lost_fraction(c), 0.08, rel_tol=1e-9)


def test_jitter_for_lost_fraction_refuses_unreachable_targets():
    with pytest.raises(ValueError, match="target must be above 0.09, the share these pauses lose"):
        jitter_for_lost_fraction(4096, 0.05, pause_prob=0.01, pause=0.1)
    with pytest.raises(ValueError, match="target must be at most"):
        jitter_for_lost_fraction(4, 0.5)
    with pytest.raises(ValueError, match="n must be a whole number >= 2, got 1"):
        jitter_for_lost_fraction(1, 0.1)


def test_slow_card_without_jitter_costs_n_minus_1_times_its_shortfall():
    card = slow_card(4096, StepTime(1.0, jitter=0.0), 1.05)
    assert math.isclose(card.job_slowdown, 0.05, rel_tol=1e-12)
    assert math.isclose(card.own_shortfall, 0.05)
    assert math.isclose(card.peer_wait_caused, 4095 * 0.05, rel_tol=1e-12)
    assert math.isclose(card.amplification, 4095, rel_tol=1e-12)
    # 10 days: 4095 GPUs wait 0.05 of every 1.05 s.
    assert math.isclose(card.gpu_hours_wasted(10), 4095 * 240 * 0.05 / 1.05, rel_tol=1e-12)


def test_slow_card_two_workers_closed_form():
    # E[max of two normals] = m1 Phi(a) + m2 Phi(-a) + theta phi(a), theta = sqrt(s1^2 + s2^2), a = (m1 - m2)/theta.
    m1, s1, m2, s2 = 1.05, 0.0525, 1.0, 0.05
    th = math.hypot(s1, s2)
    a = (m1 - m2) / th
    with_ = m1 * stats.norm.cdf(a) + m2 * stats.norm.cdf(-a) + th * stats.norm.pdf(a)
    without = 1.0 + 0.05 / math.sqrt(math.pi)
    card = slow_card(2, StepTime(1.0, jitter=0.05), 1.05)
    assert math.isclose(card.step_with, with_, rel_tol=1e-10)
    assert math.isclose(card.step_without, without, rel_tol=1e-10)


def test_slow_card_one_worker_is_just_slower():
    card = slow_card(1, StepTime(1.0, jitter=0.05), 1.2)
    assert math.isclose(card.job_slowdown, 0.2) and card.peer_wait == 0 and card.peer_wait_caused == 0


def test_slow_card_jitter_hides_the_card():
    slowdowns = [slow_card(4096, StepTime(1.0, jitter=j), 1.05).job_slowdown for j in (0.0, 0.005, 0.01, 0.02, 0.05)]
    assert np.all(np.diff(slowdowns) < 0)
    assert slowdowns[-1] < 0.001


@settings(max_examples=25)
@given(n=st.integers(2, 10**5), jitter=st.floats(0.0, 0.1), slow=st.floats(1.0, 1.5))
def test_slow_card_slowdown_is_between_zero_and_the_card_s_own(n, jitter, slow):
    card = slow_card(n, StepTime(1.0, jitter=jitter), slow)
    assert 0.0 <= card.job_slowdown <= (slow - 1.0) + 1e-12
    assert card.peer_wait >= card.peer_wait_caused - 1e-9


def test_slow_card_agrees_with_monte_carlo():
    t = StepTime(1.0, jitter=0.01)
    card = slow_card(4096, t, 1.05)
    x = sample_step_times(Cluster.with_slow(4096, t, 1, 1.05), 100_000, rng=4)
    assert abs(x.mean() - card.step_with) < 4 * x.std() / math.sqrt(x.size)


def test_slow_card_rejects_bad_input():
    with pytest.raises(ValueError, match=r"slow_factor must be >= 1, got 0.9"):
        slow_card(8, StepTime(1.0), 0.9)
    with pytest.raises(ValueError, match="step_time must be a StepTime"):
        slow_card(8, stats.norm(), 1.1)
    with pytest.raises(ValueError, match="days must be >= 0, got -1"):
        slow_card(8).gpu_hours_wasted(-1)


def test_slow_card_curves_rows():
    rows = slow_card_curves([2, 64], [0.0, 0.02], slow_factor=1.1)
    assert [(r["n"], r["jitter"]) for r in rows] == [(2, 0.0), (64, 0.0), (2, 0.02), (64, 0.02)]
    assert math.isclose(rows[0]["job_slowdown"], 0.1)
    assert math.isclose(rows[3]["job_slowdown"], slow_card(64, StepTime(1.0, jitter=0.02), 1.1).job_slowdown)
    with pytest.raises(ValueError, match=r"jitters must be in \[0, 0.2\], got 0.5"):
        slow_card_curves([2], [0.5])


@pytest.mark.parametrize("jitter, factor", [(0.001, 1.05), (0.01, 1.05), (0.05, 1.5), (0.2, 1.01), (0.0, 1.2), (0.03, 1.0)])
def test_slow_card_curves_match_the_exact_slow_card(jitter, factor):
    ns = [1, 2, 3, 100, 4096, 16384]
    rows = slow_card_curves(ns, [jitter], slow_factor=factor)
    for row, n in zip(rows, ns):
        card = slow_card(n, StepTime(1.0, jitter=jitter), factor)
        assert math.isclose(row["job_slowdown"], card.job_slowdown, rel_tol=1e-8, abs_tol=1e-12)
        assert math.isclose(row["peer_wait_caused"], card.peer_wait_caused, rel_tol=1e-8, abs_tol=1e-9)


def test_lost_fraction_curves_carry_the_expected_slowest():
    t = StepTime(1.0, jitter=0.03, pause_prob=1e-3, pause=0.1)
    rows = lost_fraction_curves([1, 4096], {"s": t})
    assert rows[0]["slowest"] == t.mean()
    assert math.isclose(rows[1]["slowest"], expected_step_time(Cluster.uniform(4096, t)), rel_tol=1e-12)


@pytest.mark.parametrize("n, jitter", [(4096, 0.0138), (4096, 0.01), (8, 0.03)])
def test_slow_card_leads_matches_simulation(n, jitter):
    # A proportion from 20,000 seeded steps: 4 standard errors <= 4 * 0.5 / sqrt(20,000) = 0.014.
    from straggle_edu.models.samplers import sample_max
    from straggle_edu.models.waste import slow_card_leads

    card = 1.05 * (1 + jitter * np.random.default_rng(0).standard_normal(20_000))
    peers = 1 + jitter * sample_max(stats.norm(), n - 1, 20_000, rng=1)
    assert abs((card > peers).mean() - slow_card_leads(n, jitter)) < 0.014


def test_slow_card_crossover_is_where_the_card_leads_half_the_steps():
    from straggle_edu.models.waste import slow_card_crossover, slow_card_leads

    j = slow_card_crossover(4096)
    assert slow_card_leads(4096, j) == pytest.approx(0.5, abs=1e-6)
    assert slow_card_leads(4096, 0.01) > 0.5 > slow_card_leads(4096, 0.05)
    assert slow_card_crossover(8) > j   # fewer peers: the card hides only behind more jitter


def test_slow_card_crossover_refuses_one_worker():
    from straggle_edu.models.waste import slow_card_crossover

    with pytest.raises(ValueError, match="n must be a whole number >= 2, got 1"):
        slow_card_crossover(1)
