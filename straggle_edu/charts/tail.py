"""Tail-probability charts: how likely some worker is slow, and what that asks of each.

All three are closed form and driven by named params through ``calculate``
transforms, so a slider moves them in place and a static page can bind the
params to HTML inputs:

- :func:`tail_probability_chart`: P(at least one of n slow) = 1 - (1 - p)^n
  against n, for several p; params ``p``, ``n`` and ``target`` (the level,
  such as a coin flip, whose crossing is marked).
- :func:`tail_budget_chart`: the per-worker tail that keeps the job clean on
  a share of its steps, against n; params ``n`` and ``target``.
- :func:`tail_percentile_chart`: one worker's step-time density over the
  job's (the slowest of n): the job's typical step lies beyond the worker's
  p99. Param ``n``; hover either panel to read both CDFs at that time.
"""

from __future__ import annotations

import functools

import altair as alt
import numpy as np

from .._validate import in_range, probability, require, whole
from ..math.tail import p_any_slow
from ..i18n import _
from ._data import quoted, vega_text
from ._linked import share_selection

__all__ = ["tail_probability_chart", "tail_budget_chart", "tail_percentile_chart", "log_grid"]


def log_grid(n_max, points=160):
    """Whole numbers from 1 to ``n_max``, about evenly spaced on a log scale.

    Examples
    --------
    >>> log_grid(100, 10)
    [1, 2, 3, 5, 8, 13, 22, 36, 60, 100]
    """
    n_max = whole("n_max", n_max, high=10**9)
    points = whole("points", points, low=2, high=5000)
    return np.unique(np.round(np.geomspace(1, n_max, points)).astype(np.int64)).tolist()


def _pct(p):
    return f"p = {p:.4g}" if p < 1e-4 else f"p = {100 * p:.4g}%"


def tail_probability_chart(p=0.01, n=100, target=0.5, ps=(0.001, 0.01, 0.1), n_max=100_000):
    """P(at least one of n workers is slow) against n, on a log axis.

    Thin lines are the fixed ``ps`` (computed with :func:`~straggle_edu.p_any_slow`);
    the thick line follows the param ``p``. A point marks the param ``n``, and
    a dashed line the param ``target``, with the number of workers at which the
    thick line crosses it.

    Parameters
    ----------
    p : float
        Starting per-worker probability of a slow step, in [0, 1].
    n : float
        Starting number of workers, in [1, n_max].
    target : float
        Starting job-level probability to mark (0.5: a coin flip), in [0, 1).
    ps : sequence of float
        Per-worker probabilities drawn as fixed reference curves.
    n_max : int
        Right end of the n axis, 2..10**9.

    Returns
    -------
    altair.LayerChart
        The curve for the chosen p, the reference curves, the target rule and its crossing.

    Examples
    --------
    >>> spec = tail_probability_chart(n_max=1000).to_dict()
    >>> sorted(p["name"] for p in spec["params"])
    ['curve_pick', 'n', 'p', 'target']
    >>> [round(r["P"], 3) for r in spec["datasets"]["tail_fixed"] if r["n"] == 100]
    [0.095, 0.634, 1.0]
    """
    n_max = whole("n_max", n_max, low=2, high=10**9)
    ps = np.atleast_1d(probability("ps", ps))
    ns = log_grid(n_max)
    ref = [{"n": m, "curve": _pct(q), "P": float(v)} for q in ps for m, v in zip(ns, p_any_slow(q, ns))]
    params = [
        alt.param(name="p", value=probability("p", p)),
        alt.param(name="n", value=in_range("n", n, 1, n_max)),
        alt.param(name="target", value=in_range("target", target, 0, 1, high_open=True)),
    ]
    x = alt.X("n:Q", scale=alt.Scale(type="log", domain=[1, n_max]), title=_("workers n"))
    y = alt.Y("P:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"), title=_("P(at least one worker slow)"))
    pick = alt.selection_point(name="curve_pick", fields=["curve"], bind="legend")
    fixed = alt.Chart(alt.Data(name="tail_fixed")).mark_line(strokeWidth=1.5).encode(
        x=x, y=y, color=alt.Color("curve:N", title=_("fixed p"), sort=None),
        opacity=alt.condition(pick, alt.value(0.7), alt.value(0.1)),
    ).add_params(pick, *params)
    live = alt.Chart(alt.Data(name="tail_grid")).transform_calculate(
        P="1 - pow(1 - p, datum.n)"
    ).mark_line(color="black", strokeWidth=3).encode(
        x=x, y=y, tooltip=[alt.Tooltip("n:Q", title="n"), alt.Tooltip("P:Q", format=".2%", title=_("P(at least one worker slow)"))])
    one = alt.Chart(alt.Data(values=[{}])).transform_calculate(
        n="max(1, round(n))", P="1 - pow(1 - p, max(1, round(n)))",
        label=vega_text(_("{share} at n = {n}"), share="format(1 - pow(1 - p, max(1, round(n))), '.1%')",
                        n="format(max(1, round(n)), ',')"),
    )
    here = one.mark_point(filled=True, size=90, color="black").encode(x=x, y=y) + one.mark_text(
        align="right", dx=-8, dy=-10, fontWeight="bold"
    ).encode(x=x, y=y, text="label:N")
    cross = alt.Chart(alt.Data(values=[{}])).transform_calculate(
        n="max(1, ceil(log(1 - target) / log(1 - p)))", P="target"
    ).transform_filter(f"isFinite(datum.n) && datum.n <= {n_max}").transform_calculate(
        label=vega_text(_("{share} at {n} workers"), share="format(target, '.0%')", n="format(datum.n, ',')")
    )
    level = alt.Chart(alt.Data(values=[{}])).transform_calculate(P="target").mark_rule(strokeDash=[5, 3], color="gray").encode(y=y)
    crossing = cross.mark_point(shape="diamond", size=90, color="gray", filled=True).encode(x=x, y=y) + cross.mark_text(
        align="left", dx=8, dy=12, color="dimgray"
    ).encode(x=x, y=y, text="label:N")
    chart = alt.layer(fixed, live, level, crossing, here).properties(width=460, height=300)
    chart.datasets = {"tail_fixed": ref, "tail_grid": [{"n": m} for m in ns]}
    return chart


def tail_budget_chart(n=4096, target=0.01, n_max=100_000):
    """The largest per-worker tail that keeps the job clean, against n.

    A job with n workers has a slow step with probability at most ``target``
    when each worker's probability is at most ``1 - (1 - target)**(1/n)``
    (:func:`~straggle_edu.per_worker_budget`), about ``target / n``.

    Parameters
    ----------
    n : float
        Starting value of the param ``n``, in [1, n_max].
    target : float
        Starting value of the param ``target``: the share of steps allowed to
        be slow, in (0, 1).
    n_max : int
        Right end of the n axis, 2..10**9.

    Returns
    -------
    altair.LayerChart
        The budget curve against n, and the chosen n marked with its label.

    Examples
    --------
    >>> spec = tail_budget_chart(n=1000, target=0.01).to_dict()
    >>> spec["params"]
    [{'name': 'n', 'value': 1000.0}, {'name': 'target', 'value': 0.01}]
    >>> spec["layer"][0]["transform"][0]["calculate"]
    '1 - pow(1 - target, 1 / datum.n)'
    """
    n_max = whole("n_max", n_max, low=2, high=10**9)
    params = [
        alt.param(name="n", value=in_range("n", n, 1, n_max)),
        alt.param(name="target", value=in_range("target", target, 0, 1, low_open=True, high_open=True)),
    ]
    x = alt.X("n:Q", scale=alt.Scale(type="log", domain=[1, n_max]), title=_("workers n"))
    y = alt.Y("budget:Q", scale=alt.Scale(type="log"), axis=alt.Axis(format="~e"), title=_("per-worker P(slow step), at most"))
    curve = alt.Chart(alt.Data(name="budget_grid")).transform_calculate(
        budget="1 - pow(1 - target, 1 / datum.n)"
    ).mark_line(strokeWidth=3).encode(x=x, y=y, tooltip=[
        alt.Tooltip("n:Q", title="n"), alt.Tooltip("budget:Q", format=".3~e", title=_("per-worker P(slow step), at most"))]
    ).add_params(*params)
    one = alt.Chart(alt.Data(values=[{}])).transform_calculate(
        n="max(1, round(n))", budget="1 - pow(1 - target, 1 / max(1, round(n)))"
    ).transform_calculate(
        label=vega_text(_("n = {n}: at most 1 slow step in {steps} per worker"), n="format(datum.n, ',')",
                        steps="format(1 / datum.budget, ',.0f')")
    )
    here = one.mark_point(filled=True, size=90, color="black").encode(x=x, y=y)
    text = one.mark_text(align="right", dx=-8, dy=-12, fontWeight="bold").encode(x=x, y=y, text="label:N")
    chart = alt.layer(curve, here, text).properties(width=460, height=300)
    chart.datasets = {"budget_grid": [{"n": m} for m in log_grid(n_max)]}
    return chart


def tail_percentile_chart(step_time, n=100, levels=(0.5, 0.95, 0.99), points=1000, unit="s"):
    """One worker's step time against the job's: the job samples the tail.

    Top: the density of one worker's step time, with its percentiles marked.
    Bottom: the density of the job's step time, the slowest of n
    (``n F^(n-1) f``), with the same percentiles and the job's median. Hover
    either panel to read, at that time, the share of worker steps and of job
    steps that are faster.

    Everything is computed in the chart from four params: ``n``, ``jitter``,
    ``pause_prob`` and ``pause``, the knobs of a
    :class:`~straggle_edu.models.step_time.StepTime` (a mixture of two
    normals, whose CDF and density Vega evaluates with ``cumulativeNormal``
    and ``densityNormal``). The grid follows the params, and the percentiles
    are read off it, so they are exact to within one grid step. The grid is
    a Vega ``sequence``, so the spec carries no data rows at all.

    Parameters
    ----------
    step_time : StepTime
        The worker's starting step time, in seconds; its ``base * slowdown``
        stays fixed, the other knobs are params. Its jitter must be > 0.
    n : float
        Starting value of the param ``n`` (workers), >= 1.
    levels : sequence of float
        Worker percentiles to mark, each in (0, 1).
    points : int
        Grid points, 50..2000.
    unit : str
        Unit of the times, for the axis title.

    Returns
    -------
    altair.VConcatChart
        The job's distribution above one worker's, sharing the time axis.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> spec = tail_percentile_chart(StepTime(0.1, jitter=0.05), n=100).to_dict()
    >>> [p["name"] for p in spec["params"]]
    ['n', 'jitter', 'pause_prob', 'pause', 't_hover']
    >>> len(spec["vconcat"])
    2
    """
    from ..models.step_time import StepTime

    require(isinstance(step_time, StepTime), "step_time", step_time, "a StepTime")
    require(step_time.jitter > 0, "step_time", step_time, "a StepTime with jitter > 0 (the density needs a spread)")
    n, points = in_range("n", n, 1), whole("points", points, low=50, high=2000)
    levels, mu = np.atleast_1d(in_range("levels", levels, 0, 1, low_open=True, high_open=True)), float(step_time.base * step_time.slowdown)
    params = [alt.param(name="n", value=n), alt.param(name="jitter", value=float(step_time.jitter)),
              alt.param(name="pause_prob", value=float(step_time.pause_prob)), alt.param(name="pause", value=float(step_time.pause))]
    hover = alt.selection_point(name="t_hover", nearest=True, on="pointerover", fields=["t"], empty=False)
    x = alt.X("t:Q", scale=alt.Scale(nice=False, zero=False), title=_("step time ({unit})").format(unit=unit))
    job = "max(1, round(n))"
    mix = "(1 - pause_prob) * {f}(datum.t, {mu}, {mu} * jitter) + pause_prob * {f}(datum.t, {mu} + pause, {mu} * jitter)"
    grid = alt.Chart(alt.sequence(0, points, as_="i")).transform_calculate(
        t=f"{mu} * (1 - 4.5 * jitter) + datum.i * ({mu} * 11 * jitter + pause) / {points - 1}"
    ).transform_calculate(F=mix.format(f="cumulativeNormal", mu=mu), f=mix.format(f="densityNormal", mu=mu))
    names = [f"p{100 * q:g}" for q in levels]
    marks = grid.transform_calculate(**{k: f"datum.F >= {float(q)!r} ? datum.t : null" for k, q in zip(names, levels)}).transform_aggregate(
        **{k: f"min({k})" for k in names}).transform_fold(names, as_=["label", "t"]).transform_window(
        rank="row_number()").transform_calculate(y="-2 - 11 * (datum.rank - 1)")
    rules = [marks.mark_rule(strokeDash=[4, 3], color="gray").encode(x=x),
             marks.transform_calculate(text=f"datum.label + ' ' + format(datum.t, '.3f') + ' ' + {quoted(unit)}").mark_text(
                 align="left", dx=3, baseline="bottom", color="dimgray").encode(x=x, y=alt.Y("y:Q", scale=None), text="text:N")]
    panel = functools.partial(_density_panel, grid, x, rules, hover)

    median = grid.transform_calculate(share=f"pow(datum.F, {job})").transform_filter("datum.share >= 0.5").transform_aggregate(
        t="min(t)").transform_calculate(level=f"pow(0.5, 1 / {job})").transform_calculate(
        label=vega_text(_("job median {t} {unit} = worker p{level}"), t="format(datum.t, '.3f')", unit=quoted(unit),
                        level="format(100 * datum.level, '.' + max(2, ceil(-log(1 - datum.level) / LN10) - 1) + 'f')"))
    top = panel("worker_0", "datum.f", "datum.F", _("one worker"), _("{share} of worker steps are faster"), "#4c78a8").add_params(*params)
    bottom = panel("job_1", f"{job} * pow(datum.F, {job} - 1) * datum.f", f"pow(datum.F, {job})", _("the job (slowest of n)"),
                   _("{share} of job steps are faster"),
                   "#e45756", median.mark_rule(color="#e45756", strokeWidth=2).encode(x=x),
                   median.mark_text(align="left", dx=4, y=30, color="#e45756", fontWeight="bold").encode(x=x, text="label:N"))
    chart = alt.vconcat(top, bottom)
    return share_selection(chart, hover, ["worker_0", "job_1"])


def _density_panel(grid, x, rules, hover, name, density, share, title, faster, color, *extra):
    """One panel of :func:`tail_percentile_chart`: a density, the percentile rules, and a hover readout."""
    base = grid.transform_calculate(d=density, share=share)
    area = base.mark_area(opacity=0.6, color=color).encode(x=x, y=alt.Y("d:Q", title=title, axis=alt.Axis(labels=False, ticks=False)))
    pts = base.mark_point(opacity=0).encode(x=x, y="d:Q").properties(name=name)
    cursor = base.mark_rule(color="black").encode(x=x).transform_filter(hover)
    text = base.mark_text(align="left", dx=5, y=12, fontWeight="bold").encode(x=x, text=alt.Text("label:N")).transform_filter(
        hover).transform_calculate(label=vega_text(faster, share="format(datum.share, '.1%')"))
    return alt.layer(area, pts, *rules, cursor, text, *extra).properties(width=460, height=130)
