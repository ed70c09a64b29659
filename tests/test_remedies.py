"""The remedy table and the restart-against-keep-running arithmetic (models/remedies.py)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.models.remedies import REMEDIES, remedy_for, replaced_slowdown, restart_or_keep
from straggle_edu.traces import analyze_rank_times
from straggle_edu.traces.synthetic import CAUSES


def test_remedy_for_every_injected_cause_has_a_row():
    for cause in CAUSES:
        if cause != "none":
            assert remedy_for(cause).remedy


def test_remedy_for_the_issue_s_four_answers():
    # issue 15, point 5: worker -> cordon or replace, last stage -> repartition, GC -> planned GC, comm -> placement
    assert remedy_for("slow-worker").remedy.startswith("Cordon or replace")
    assert remedy_for("last-stage").remedy.startswith("Repartition")
    assert remedy_for("gc-pauses").remedy.startswith("Planned GC")
    assert remedy_for("slow-link").remedy.startswith("Placement")


def test_remedy_for_rejects_an_unknown_cause():
    with pytest.raises(ValueError, match="cause must be one of 'slow-worker'.*got 'cosmic rays'"):
        remedy_for("cosmic rays")


def test_remedies_table_has_one_markdown_row_per_remedy():
    text = REMEDIES._repr_markdown_()
    lines = text.splitlines()
    assert len(lines) == 2 + len(REMEDIES.rows)
    assert all(line.count("|") == 4 for line in lines)  # no stray pipe inside a cell
    assert "[06b](06b_diagnose_and_act.ipynb)" in text


def test_restart_or_keep_ten_days_become_eleven():
    # by hand: 240 h x 1.1 = 264 h against 0.5 + 1 + 240 = 241.5 h; break-even 1.5 / 0.1 = 15 h
    c = restart_or_keep(240, 1.1, restart=0.5, lost=1.0, gpus=128)
    assert c.keep_hours == pytest.approx(264.0)
    assert c.restart_hours == pytest.approx(241.5)
    assert c.saved_gpu_hours == pytest.approx(22.5 * 128)
    assert c.break_even_hours == pytest.approx(15.0)
    assert c.choice == "replace"


def test_restart_or_keep_a_healthy_job_keeps_running():
    c = restart_or_keep(100, 1.0, restart=0.5)
    assert c.choice == "keep running" and math.isinf(c.break_even_hours) and c.saved_hours == pytest.approx(-0.5)


@given(remaining=st.floats(0.01, 1e4), speedup=st.floats(1.0, 5.0), restart=st.floats(0, 10), lost=st.floats(0, 10))
def test_restart_or_keep_replaces_exactly_beyond_break_even(remaining, speedup, restart, lost):
    c = restart_or_keep(remaining, speedup, restart=restart, lost=lost)
    assert (c.choice == "replace") == (c.saved_hours > 0)
    if c.choice == "replace":
        assert remaining >= c.break_even_hours * (1 - 1e-9)
    elif speedup > 1 and restart + lost > 0:
        assert remaining <= c.break_even_hours * (1 + 1e-9)


@pytest.mark.parametrize("bad", [dict(remaining=0), dict(speedup=0.9), dict(restart=-1), dict(gpus=0)])
def test_restart_or_keep_rejects_bad_input(bad):
    args = dict(remaining=10, speedup=1.2, restart=1, gpus=8) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        restart_or_keep(**args)


def test_replaced_slowdown_one_2x_rank_among_4_is_2_where_what_if_says_1_6():
    assert replaced_slowdown([[2.0, 1.0, 1.0, 1.0]]) == pytest.approx(2.0)
    assert analyze_rank_times([[2.0, 1.0, 1.0, 1.0]]).slowdown == pytest.approx(1.6)


@given(n=st.integers(2, 64), k=st.floats(1.0, 8.0))
def test_replaced_slowdown_beats_rebalancing_for_one_slow_rank(n, k):
    # closed forms: replacing gives k; rebalancing the work (the what-if ideal) gives k / ((n - 1 + k) / n)
    times = [[k] + [1.0] * (n - 1)]
    assert replaced_slowdown(times) == pytest.approx(k)
    assert analyze_rank_times(times).slowdown == pytest.approx(k * n / (n - 1 + k))
    assert replaced_slowdown(times) >= analyze_rank_times(times).slowdown * (1 - 1e-12)


def test_replaced_slowdown_two_slow_ranks_replacing_one_gains_nothing():
    assert replaced_slowdown([[2.0, 2.0, 1.0, 1.0]], worker=0) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [[1.0, 2.0], [[1.0]], [[1.0, -1.0]], [[1.0, float("nan")]]])
def test_replaced_slowdown_rejects_bad_tables(bad):
    with pytest.raises(ValueError, match="rank_times must be"):
        replaced_slowdown(bad)


def test_replaced_slowdown_rejects_a_rank_out_of_range():
    with pytest.raises(ValueError, match="worker must be a whole number"):
        replaced_slowdown([[1.0, 2.0]], worker=2)
