"""Restaurant charts: a table of dishes, and n workers meeting at a barrier.

- :func:`restaurant_chart`: a timeline (Gantt) of one table's dishes, with
  the waiting shaded and lines for the average and the maximum. Closed form:
  named params (``dishes``, ``dish_time``, ``slow_time``, ``random_times``,
  ``spread``) drive a ``calculate`` transform, so a slider moves it in place,
  with no re-render, and a static page can bind them to HTML inputs.
  The formula is :func:`straggle_edu.models.restaurant.dish_times`'s.
- :func:`barrier_chart`: the same picture for GPUs: n workers, several steps,
  a barrier after each. Hover a worker to light up its bars in both panels.
  Its data are named datasets (:func:`barrier_datasets`), so a new run can
  be swapped into the chart without building it again.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import require, whole
from ..models.restaurant import MAX_DISHES, BarrierRun, dish_noise
from ..i18n import N_, _
from ._data import quoted, vega_text
from ._linked import share_selection

__all__ = ["restaurant_chart", "restaurant_datasets", "barrier_chart", "barrier_datasets", "RESTAURANT_COLORS"]

# Cooking, the slow dish and waiting, the same in every restaurant picture
# (English msgids: the charts translate the domain when they are built).
RESTAURANT_COLORS = alt.Scale(
    domain=[N_("cooking"), N_("slow dish"), N_("waiting")], range=["#4c78a8", "#e45756", "#d9d9d9"]
)
_BARRIER_COLORS = alt.Scale(
    domain=[N_("compute"), N_("slowest"), N_("waiting")], range=["#4c78a8", "#e45756", "#d9d9d9"]
)


def _translated(scale):
    """A copy of a colour scale whose domain (English msgids) is in the current language."""
    return alt.Scale(domain=[_(d) for d in scale.domain], range=scale.range)


def restaurant_chart(noise=None, dishes=8, dish=10.0, slow=14.0, spread=0.2, random=False, max_dishes=16):
    """One table's dishes on a timeline: the table is served at the maximum.

    Parameters
    ----------
    noise : array_like, optional
        ``max_dishes`` standard-normal draws for random dish times
        (:func:`~straggle_edu.models.restaurant.dish_noise`); seed 0 if omitted.
    dishes, dish, slow, spread : see :func:`~straggle_edu.models.restaurant.dish_times`
        Starting values of the params ``dishes``, ``dish_time``, ``slow_time``
        and ``spread`` (minutes, and a coefficient of variation).
    random : bool
        Starting value of the param ``random_times``: False for fixed times,
        True for random ones with the given spread.
    max_dishes : int
        The most dishes the ``dishes`` param may show, 1..64.

    Returns
    -------
    altair.LayerChart
        The dishes as bars, and the moment the table is served.

    Examples
    --------
    >>> spec = restaurant_chart(dishes=8, dish=10.0, slow=14.0).to_dict()
    >>> {p["name"]: p["value"] for p in spec["params"] if "value" in p}
    {'dishes': 8, 'dish_time': 10.0, 'slow_time': 14.0, 'spread': 0.2, 'random_times': False}
    >>> len(spec["datasets"]["restaurant_dishes"])
    16
    """
    max_dishes = whole("max_dishes", max_dishes, high=MAX_DISHES)
    dishes = whole("dishes", dishes, high=max_dishes)
    z = dish_noise(max_dishes, rng=0) if noise is None else np.asarray(noise, dtype=float).ravel()
    require(z.size >= max_dishes and np.isfinite(z).all(), "noise", noise, f"{max_dishes} finite draws")
    params = [
        alt.param(name="dishes", value=dishes),
        alt.param(name="dish_time", value=float(dish)),
        alt.param(name="slow_time", value=float(slow)),
        alt.param(name="spread", value=float(spread)),
        alt.param(name="random_times", value=bool(random)),
    ]
    slow_dish, cooking = quoted(_("slow dish")), quoted(_("cooking"))
    base = alt.Chart(alt.Data(name="restaurant_dishes")).transform_filter("datum.i <= dishes").transform_calculate(
        s="random_times ? sqrt(log(1 + spread * spread)) : 0",
        kind=f"datum.i == dishes ? {slow_dish} : {cooking}",
    ).transform_calculate(
        t="(datum.i == dishes ? slow_time : dish_time) * exp(datum.s * datum.z - datum.s * datum.s / 2)"
    ).transform_joinaggregate(average="mean(t)", served="max(t)").transform_calculate(waiting=quoted(_("waiting")))
    hover = alt.selection_point(name="dish_hover", on="pointerover", fields=["i"], empty=False)
    y = alt.Y("i:O", title=None, axis=alt.Axis(labelExpr=vega_text(_("dish {i}"), i="datum.value")), scale=alt.Scale(paddingInner=0.2))
    fade = alt.condition(hover, alt.value(1.0), alt.value(0.85))
    colors = _translated(RESTAURANT_COLORS)
    tip = [alt.Tooltip("i:O", title=_("dish")), alt.Tooltip("t:Q", title=_("cooks (min)"), format=".1f")]
    cook = base.mark_bar().encode(
        x=alt.X("zero:Q", title=_("minutes"), axis=alt.Axis(tickMinStep=2)), x2="t:Q", y=y,
        color=alt.Color("kind:N", scale=colors, title=None, legend=alt.Legend(orient="bottom")),
        opacity=fade, tooltip=tip, strokeWidth=alt.condition(hover, alt.value(2), alt.value(0)), stroke=alt.value("black"),
    ).transform_calculate(zero="0").add_params(hover, *params)
    wait = base.transform_calculate(w="datum.served - datum.t").mark_bar().encode(
        x="t:Q", x2="served:Q", y=y, color=alt.Color("waiting:N", scale=colors, title=None),
        tooltip=[alt.Tooltip("i:O", title=_("dish")), alt.Tooltip("w:Q", title=_("sits ready (min)"), format=".1f")],
    )
    lines = base.transform_aggregate(average="mean(t)", served="max(t)").transform_fold(["average", "served"], as_=["line", "x"])
    rules = lines.mark_rule(strokeWidth=2).encode(
        x="x:Q", strokeDash=alt.StrokeDash("line:N", scale=alt.Scale(domain=["average", "served"], range=[[5, 3], [1, 0]]), legend=None),
    )
    minutes = "format(datum.x, '.1f')"
    average = vega_text(_("average {minutes} min"), minutes=minutes)
    served = vega_text(_("table served at {minutes} min"), minutes=minutes)
    text = lines.transform_calculate(
        label=f"datum.line == 'average' ? {average} : {served}",
        y="datum.line == 'average' ? -22 : -8",
    ).mark_text(align="left", dx=-3, fontWeight="bold").encode(x="x:Q", y=alt.Y("y:Q", scale=None), text="label:N")
    chart = alt.layer(cook, wait, rules, text).properties(width=460, height=alt.Step(18))
    chart.datasets = restaurant_datasets(z[:max_dishes])
    return chart


def restaurant_datasets(noise):
    """The named dataset :func:`restaurant_chart` draws: one row per dish with its noise draw.

    Swap it into a copy of a restaurant chart to re-cook the dishes with new
    draws, without building the chart again.

    Examples
    --------
    >>> restaurant_datasets([0.5, -1.0])
    {'restaurant_dishes': [{'i': 1, 'z': 0.5}, {'i': 2, 'z': -1.0}]}
    """
    z = np.asarray(noise, dtype=float).ravel()
    require(z.size >= 1 and np.isfinite(z).all(), "noise", noise, "finite standard-normal draws")
    return {"restaurant_dishes": [{"i": i + 1, "z": float(v)} for i, v in enumerate(z)]}


def barrier_datasets(run):
    """The named datasets :func:`barrier_chart` draws, for one run.

    A chart's look does not depend on the run, only its data does, so an
    explorer can draw a new run by swapping these into a copy of the chart it
    already has (``chart.copy(deep=False)``, then ``.datasets = ...``), which is
    much cheaper than building the chart again.

    Parameters
    ----------
    run : BarrierRun
        At most 2,000 worker-steps.

    Returns
    -------
    dict
        ``{"barrier_timeline": [...], "barrier_rules": [...], "barrier_waits": [...]}``,
        lists of plain dicts (seconds).

    Examples
    --------
    >>> from straggle_edu.models.restaurant import run_with_barrier
    >>> data = barrier_datasets(run_with_barrier([[1.0, 1.5]]))
    >>> data["barrier_timeline"][2]
    {'step': 1, 'worker': 1, 'start': 0.0, 'end': 1.5, 'phase': 'slowest'}
    >>> data["barrier_waits"]
    [{'worker': 0, 'waiting': 0.5}, {'worker': 1, 'waiting': 0.0}]
    """
    require(isinstance(run, BarrierRun), "run", run, "a BarrierRun from run_with_barrier")
    require(run.steps * run.n <= 2000, "run", f"{run.steps} steps x {run.n} workers", "at most 2,000 worker-steps")
    compute, slowest_phase, waiting = _("compute"), _("slowest"), _("waiting")
    rows = []
    for s in range(run.steps):
        start, end, slowest = float(run.starts[s]), float(run.ends[s]), int(run.slowest[s])
        for w in range(run.n):
            done = start + float(run.times[s, w])
            phase = slowest_phase if w == slowest else compute
            rows.append({"step": s + 1, "worker": w, "start": start, "end": done, "phase": phase})
            rows.append({"step": s + 1, "worker": w, "start": done, "end": end, "phase": waiting})
    marks = [{"x": float(e), "line": _("barrier")} for e in run.ends]
    marks.append({"x": run.average_time, "line": _("average worker's pace")})
    waits = [{"worker": w, "waiting": float(v)} for w, v in enumerate(run.waiting.sum(axis=0))]
    return {"barrier_timeline": rows, "barrier_rules": marks, "barrier_waits": waits}


def barrier_chart(run, unit="s"):
    """n workers over several steps, each step ending at a barrier.

    The left panel is the timeline: compute in blue (the step's slowest worker
    in red), waiting in grey, a line at each barrier, and a dashed line where
    the job would end at the average worker's pace. The right panel is each
    worker's total waiting. Hover a worker to highlight it in both.

    Parameters
    ----------
    run : BarrierRun
        From :func:`~straggle_edu.models.restaurant.run_with_barrier`;
        at most 2,000 worker-steps.
    unit : str
        The unit of the times, for the axis title.

    Returns
    -------
    altair.HConcatChart
        Its data are the named datasets of :func:`barrier_datasets`.

    Examples
    --------
    >>> from straggle_edu.models.restaurant import run_with_barrier
    >>> spec = barrier_chart(run_with_barrier([[1.0, 1.5], [2.0, 1.0]])).to_dict()
    >>> spec["datasets"]["barrier_waits"]
    [{'worker': 0, 'waiting': 0.5}, {'worker': 1, 'waiting': 1.0}]
    >>> spec["params"][0]["views"]
    ['timeline_0', 'per_worker']
    """
    datasets = barrier_datasets(run)
    hover = alt.selection_point(name="worker_hover", on="pointerover", fields=["worker"], empty=False)
    fade = alt.condition(hover, alt.value(1.0), alt.value(0.75))
    y = alt.Y("worker:O", title=_("worker"), axis=alt.Axis(labelOverlap=True), scale=alt.Scale(paddingInner=0.15))
    worker = alt.Tooltip("worker:O", title=_("worker"))
    tip = [worker, alt.Tooltip("step:O", title=_("step")), alt.Tooltip("phase:N", title=_("phase")),
           alt.Tooltip("start:Q", format=".3f", title=_("start ({unit})").format(unit=unit)),
           alt.Tooltip("end:Q", format=".3f", title=_("end ({unit})").format(unit=unit))]
    timeline = alt.Chart(alt.Data(name="barrier_timeline")).mark_bar().encode(
        x=alt.X("start:Q", title=_("time ({unit})").format(unit=unit)), x2="end:Q", y=y, opacity=fade, tooltip=tip,
        color=alt.Color("phase:N", scale=_translated(_BARRIER_COLORS), title=None),
    ).properties(name="timeline_0")
    rules = alt.Chart(alt.Data(name="barrier_rules")).mark_rule().encode(
        x="x:Q", strokeDash=alt.StrokeDash(
            "line:N", title=None, scale=alt.Scale(domain=[_("barrier"), _("average worker's pace")], range=[[1, 0], [5, 3]])
        ),
    )
    per_worker = alt.Chart(alt.Data(name="barrier_waits")).mark_bar(color="#9d9d9d").encode(
        x=alt.X("waiting:Q", title=_("waiting ({unit})").format(unit=unit)), y=y, opacity=fade,
        tooltip=[worker, alt.Tooltip("waiting:Q", format=".3f", title=_("waiting ({unit})").format(unit=unit))],
    ).properties(name="per_worker", width=120)
    both = alt.hconcat((timeline + rules).properties(width=440, height=300), per_worker.properties(height=300))
    both.datasets = datasets
    return share_selection(both, hover, ["timeline_0", "per_worker"])
