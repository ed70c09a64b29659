"""Detector-threshold charts (``12_detector_thresholds.ipynb``): how often healthy ranks are flagged.

- :func:`report_scores_chart`: one report's relative scores, binned, with the
  thresholds marked.
- :func:`alarms_vs_n_chart`: expected false alarms per day against the number
  of ranks, one line per threshold (exact), with simulated points.
- :func:`alarms_vs_threshold_chart`: expected false alarms per day against the
  threshold at one n, with the budget and the highest threshold that meets it.
- :func:`alarm_rows`, :func:`threshold_rows`: the rows those two draw, computed
  with :mod:`straggle_edu.math.detector`.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import in_range, positive, whole
from ..i18n import _
from ..math.detector import alarms_per_day, p_false_alarm
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = [
    "report_scores_chart",
    "alarms_vs_n_chart",
    "alarms_vs_threshold_chart",
    "alarm_rows",
    "threshold_rows",
    "simulated_rows",
    "ALARM_FLOOR",
]

# Expected false alarms per day below this are drawn at the chart's floor.
ALARM_FLOOR = 1e-3
_CEILING = 86_400


def alarm_rows(ns, thresholds, window, dist, interval):
    """Rows ``{n, threshold, per_day}``: expected false alarms per day, exact.

    Examples
    --------
    >>> from scipy import stats
    >>> alarm_rows([2], [0.5], 1, stats.expon(), 86_400)
    [{'n': 2, 'threshold': '0.5', 'per_day': 0.6666666666666667}]
    """
    interval = positive("interval", interval)
    ts, ns = np.atleast_1d(thresholds), np.atleast_1d(whole("ns", ns))
    per_day = {int(n): alarms_per_day(p_false_alarm(n, ts, window, dist), interval) for n in ns}
    return [{"n": int(n), "threshold": f"{t:g}", "per_day": float(per_day[int(n)][i])}
            for i, t in enumerate(ts) for n in ns]


def threshold_rows(n, window, dist, interval, thresholds=None):
    """Rows ``{threshold, per_day}`` at one n, over a grid of thresholds (0.5 to 0.95 by default).

    Examples
    --------
    >>> from scipy import stats
    >>> threshold_rows(2, 1, stats.expon(), 86_400, [0.5])
    [{'threshold': 0.5, 'per_day': 0.6666666666666667}]
    """
    grid = np.linspace(0.5, 0.95, 46) if thresholds is None else np.atleast_1d(thresholds)
    interval = positive("interval", interval)
    per_day = alarms_per_day(p_false_alarm(n, grid, window, dist), interval)
    return [{"threshold": float(t), "per_day": float(v)} for t, v in zip(grid, per_day)]


def simulated_rows(sim, interval):
    """Rows ``{n, threshold, per_day, lo, hi}`` from a simulation: the share of
    reports with an alarm, +- 2 standard errors, as false alarms per day.

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.detector import simulate_reports
    >>> simulated_rows(simulate_reports(2, 1, stats.expon(), 100, [0.5], rng=0), 86_400)[0]["n"]
    2
    """
    p, se = sim.p_false_alarm()
    day = alarms_per_day(1.0, interval)
    return [{"n": sim.n, "threshold": f"{t:g}", "per_day": float(day * q), "lo": float(day * max(q - 2 * e, 0.0)),
             "hi": float(day * min(q + 2 * e, 1.0))} for t, q, e in zip(sim.thresholds, p, se)]


def _per_day_axis():
    return alt.Y("per_day:Q", title=_("false alarms per day (expected)"),
                 scale=alt.Scale(type="log", domain=[ALARM_FLOOR, _CEILING], clamp=True))


def report_scores_chart(scores, thresholds=(0.7, 0.75), bins=40):
    """Histogram of one report's relative scores, thresholds as red rules.

    Parameters
    ----------
    scores : array_like
        Relative scores of the ranks in one report, in (0, 1].
    thresholds : sequence of float
        Thresholds to mark.
    bins : int
        Number of bins between the lowest threshold (or score) and 1.

    Returns
    -------
    altair.LayerChart
        The histogram of scores and one rule per threshold.

    Examples
    --------
    >>> report_scores_chart([1.0, 0.9, 0.8], bins=4).to_dict()["layer"][0]["mark"]["type"]
    'bar'
    """
    scores = in_range("scores", np.atleast_1d(scores), 0, 1, low_open=True)
    thresholds = np.atleast_1d(in_range("thresholds", thresholds, 0, 1, low_open=True))
    lo = float(min(scores.min(), thresholds.min())) - 0.01
    counts, edges = np.histogram(scores, bins=whole("bins", bins, low=2, high=500), range=(lo, 1.0))
    rows = [{"lo": float(a), "hi": float(b), "ranks": int(c), "base": 0} for a, b, c in zip(edges[:-1], edges[1:], counts)]
    x = alt.X("lo:Q", title=_("relative score (fastest median / this rank's median)"), scale=alt.Scale(domain=[lo, 1.0]))
    y = alt.Y("ranks:Q", title=_("ranks (symlog scale)"), scale=alt.Scale(type="symlog", domainMin=0))
    tips = [alt.Tooltip("lo:Q", title=_("from")), alt.Tooltip("hi:Q", title=_("to")), alt.Tooltip("ranks:Q", title=_("ranks"))]
    bars = alt.Chart(alt.Data(values=rows)).mark_bar(color="steelblue").encode(x=x, x2="hi:Q", y=y, y2="base:Q", tooltip=tips)
    marks = alt.Chart(alt.Data(values=[{"lo": float(t), "label": f"{t:g}", "row": i} for i, t in enumerate(thresholds)]))
    rules = marks.mark_rule(color="firebrick", strokeDash=[5, 3]).encode(x="lo:Q")
    text = marks.mark_text(align="left", baseline="top", dx=4, color="firebrick").encode(
        x="lo:Q", y=alt.Y("row:Q", axis=None, scale=alt.Scale(domain=[0, 12], reverse=True)), text="label:N")
    return alt.layer(bars, rules, text).resolve_scale(y="independent").properties(width=460, height=260)


def alarms_vs_n_chart(rows, sim_rows=(), budget=1.0):
    """Expected false alarms per day against n (log-log), one line per threshold.

    Parameters
    ----------
    rows : list of dict
        ``{n, threshold, per_day}`` from :func:`alarm_rows`.
    sim_rows : list of dict
        ``{n, threshold, per_day, lo, hi}``: simulated estimates with an interval.
    budget : float
        False alarms per day to mark with a dashed rule.

    Returns
    -------
    altair.LayerChart
        One line per threshold, the budget rule, and simulated estimates with their intervals.

    Examples
    --------
    >>> from scipy import stats
    >>> alarms_vs_n_chart(alarm_rows([2, 4], [0.5], 1, stats.expon(), 300)).to_dict()["layer"][0]["mark"]["type"]
    'line'
    """
    x = alt.X("n:Q", title=_("ranks n"), scale=alt.Scale(type="log"))
    color = alt.Color("threshold:N", title=_("threshold"))
    tips = [alt.Tooltip("n:Q", title="n"), alt.Tooltip("threshold:N", title=_("threshold")),
            alt.Tooltip("per_day:Q", title=_("false alarms per day"), format=".3g")]
    lines = alt.Chart(alt.Data(values=list(rows))).mark_line(strokeWidth=2.5).encode(x=x, y=_per_day_axis(), color=color, tooltip=tips)
    level = alt.Chart(alt.Data(values=[{"per_day": positive("budget", budget)}])).mark_rule(
        color="gray", strokeDash=[5, 3]).encode(y="per_day:Q")
    layers = [lines, level]
    if sim_rows:
        sim = alt.Chart(alt.Data(values=list(sim_rows)))
        layers += [sim.mark_rule().encode(x=x, y=_per_day_axis(), y2="hi:Q", color=color),
                   sim.mark_point(filled=True, size=60, shape="diamond").encode(x=x, y=_per_day_axis(), color=color)]
    return alt.layer(*layers).properties(width=460, height=300)


def alarms_vs_threshold_chart(rows, budget=1.0, pick=None):
    """Expected false alarms per day against the threshold, at one n.

    Parameters
    ----------
    rows : list of dict
        ``{threshold, per_day}`` from :func:`threshold_rows`.
    budget : float
        Alarms per day allowed: a dashed rule.
    pick : float, optional
        The highest threshold within budget, marked with a point and label.

    Returns
    -------
    altair.LayerChart
        The alarms curve, the budget rule and the picked threshold.

    Examples
    --------
    >>> from scipy import stats
    >>> c = alarms_vs_threshold_chart(threshold_rows(2, 1, stats.expon(), 300, [0.5, 0.6]), pick=0.55)
    >>> len(c.to_dict()["layer"])
    4
    """
    x = alt.X("threshold:Q", title=_("threshold"), scale=alt.Scale(zero=False))
    tips = [alt.Tooltip("threshold:Q", title=_("threshold")), alt.Tooltip("per_day:Q", title=_("false alarms per day"), format=".3g")]
    line = alt.Chart(alt.Data(values=list(rows))).mark_line(strokeWidth=2.5, color="black").encode(x=x, y=_per_day_axis(), tooltip=tips)
    level = alt.Chart(alt.Data(values=[{"per_day": positive("budget", budget)}])).mark_rule(
        color="gray", strokeDash=[5, 3]).encode(y="per_day:Q")
    layers = [line, level]
    if pick is not None:
        spot = alt.Chart(alt.Data(values=[{"threshold": float(pick), "per_day": float(budget),
                                           "label": _("highest within budget: {threshold}").format(threshold=f"{pick:.3f}")}]))
        layers += [spot.mark_point(filled=True, size=90, color="firebrick").encode(x=x, y="per_day:Q"),
                   spot.mark_text(align="right", dx=-8, dy=-10, color="firebrick").encode(
                       x=x, y="per_day:Q", text="label:N")]
    return alt.layer(*layers).properties(width=460, height=300)
