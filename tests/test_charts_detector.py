"""Detector charts: valid specs whose rows agree with the math layer."""

import numpy as np
import pytest
from _chartdata import layer_rows
from scipy import stats

from straggle_edu.charts.detector import (
    alarm_rows,
    alarms_vs_n_chart,
    alarms_vs_threshold_chart,
    report_scores_chart,
    simulated_rows,
    threshold_rows,
)
from straggle_edu.math.detector import lognormal_timing, p_false_alarm
from straggle_edu.models.detector import simulate_reports


def test_alarm_rows_are_reports_a_day_times_p():
    dist = lognormal_timing(0.2)
    rows = alarm_rows([8, 64], [0.7, 0.75], 9, dist, 300)
    assert [(r["n"], r["threshold"]) for r in rows] == [(8, "0.7"), (64, "0.7"), (8, "0.75"), (64, "0.75")]
    for r in rows:
        assert r["per_day"] == pytest.approx(288 * p_false_alarm(r["n"], float(r["threshold"]), 9, dist), rel=1e-12)


def test_threshold_rows_two_exponentials():
    rows = threshold_rows(2, 1, stats.expon(), 86_400, [0.25, 0.5])
    np.testing.assert_allclose([r["per_day"] for r in rows], [0.4, 2 / 3])


def test_report_scores_chart_counts_every_rank():
    scores = np.linspace(0.6, 1.0, 101)
    spec = report_scores_chart(scores, thresholds=(0.7, 0.75), bins=20).to_dict()
    assert sum(r["ranks"] for r in layer_rows(spec, 0)) == 101
    assert [r["lo"] for r in layer_rows(spec, 1)] == [0.7, 0.75]


def test_report_scores_chart_rejects_score_above_one():
    with pytest.raises(ValueError, match=r"scores must be in \(0, 1\]"):
        report_scores_chart([0.9, 1.2])


def test_alarms_vs_n_chart_with_simulated_points():
    dist = lognormal_timing(0.3)
    sim = simulate_reports(16, 5, dist, 200, thresholds=[0.7], rng=0)
    sim_rows = simulated_rows(sim, 300)
    assert sim_rows[0]["lo"] <= sim_rows[0]["per_day"] <= sim_rows[0]["hi"]
    spec = alarms_vs_n_chart(alarm_rows([4, 16], [0.7], 5, dist, 300), sim_rows).to_dict()
    assert len(spec["layer"]) == 4
    assert layer_rows(spec, 3)[0]["per_day"] == pytest.approx(288 * float(sim.p_false_alarm()[0][0]))


def test_alarms_vs_threshold_chart_marks_pick():
    spec = alarms_vs_threshold_chart(threshold_rows(2, 1, stats.expon(), 300, [0.5, 0.6]), budget=2.0, pick=0.55).to_dict()
    assert layer_rows(spec, 2)[0] == {"threshold": 0.55, "per_day": 2.0, "label": "highest within budget: 0.550"}
