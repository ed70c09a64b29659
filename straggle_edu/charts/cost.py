"""Charts for the bill: GPU-hours, dollars and calendar days lost to stragglers.

The bill is closed-form arithmetic, so every chart here computes it in the
browser: named Vega-Lite params (``gpus``, ``days``, ``lost_fraction``,
``usd_per_gpu_hour``, the names of :func:`straggle_edu.cost_of_stragglers`)
drive ``calculate`` transforms. A slider linked to a param moves the chart
with no re-render, and the static site binds the same params to HTML inputs,
so these charts stay interactive with no kernel.

- :func:`bill_chart`: the receipt (GPU-hours, dollars, days).
- :func:`bill_sentence_chart`: the same bill as one sentence whose numbers
  follow the params (a sentence that moves, also on the static site).
- :func:`lost_dollars_chart`: dollars lost against the lost fraction.
- :func:`delay_framings_chart`: the two framings of the calendar delay.
- :func:`milestones_chart`: what the delay pushes back.
- :func:`lost_fraction_chart`: where the lost fraction comes from (n, jitter,
  pauses), from numbers computed with :mod:`straggle_edu.models.waste`.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from ..math.delay import DOWNSTREAM
from ..i18n import N_, _, get_language
from ._data import count_axis, inline_rows, quoted, vega_numbers, vega_text

__all__ = [
    "BILL_LINES",
    "bill_chart",
    "bill_sentence_chart",
    "lost_dollars_chart",
    "delay_framings_chart",
    "milestones_chart",
    "lost_fraction_chart",
]

_HOURS = "gpus * days * 24"
# (label, Vega expression for the value): the receipt, line by line.
BILL_LINES = (
    (N_("GPU-hours allocated"), f"format({_HOURS}, ',.0f')"),
    (N_("GPU-hours lost to waiting"), f"format({_HOURS} * lost_fraction, ',.0f')"),
    (N_("dollars lost"), f"'$' + format({_HOURS} * lost_fraction * usd_per_gpu_hour, ',.0f')"),
    (N_("days of the run spent waiting"), "format(days * lost_fraction, '.2f')"),
    (N_("same work, no stragglers (days)"), "format(days * (1 - lost_fraction), '.2f')"),
    (N_("a run planned for that long takes (days)"), "format(days / (1 - lost_fraction), '.2f')"),
)
# Scenario names that notebook 04 and the cost explorer pass in; others are shown as given.
_SCENARIOS = (N_("this cluster"), N_("your step times"), N_("3% jitter"), N_("1% jitter"),
              N_("1% jitter + a 0.1 s pause on 1 step in 1000"))
# Downstream stages (straggle_edu.math.delay.DOWNSTREAM) and the run itself.
_STAGES = (N_("training run"), N_("evaluation"), N_("fine-tunes from the final checkpoint"), N_("deployment"),
           N_("next experiment on the same GPUs"))


def _known(name, known):
    """``name`` translated if it is one of ``known``, else as given (a reader's own label)."""
    return _(name) if name in known else name


def _params(**values):
    """Named variable params, one per keyword, floats except ``gpus``."""
    cast = {"gpus": int}
    return [alt.param(name=k, value=cast.get(k, float)(v)) for k, v in values.items()]


def bill_chart(gpus=4096, days=10.0, lost_fraction=0.10, usd_per_gpu_hour=2.0, *, width=420):
    """The bill as a receipt, computed in the browser from four params.

    Parameters
    ----------
    gpus, days, lost_fraction, usd_per_gpu_hour
        Initial values of the params of the same names (see
        :func:`straggle_edu.cost_of_stragglers` for units).

    Examples
    --------
    >>> spec = bill_chart().to_dict()
    >>> sorted(p["name"] for p in spec["params"])
    ['days', 'gpus', 'lost_fraction', 'usd_per_gpu_hour']
    >>> len(spec["data"]["values"])
    6
    """
    rows = [{"line": i, "label": _(label)} for i, (label, __) in enumerate(BILL_LINES)]
    expr = "''"
    for i, (__, value) in reversed(list(enumerate(BILL_LINES))):
        expr = f"datum.line == {i} ? {vega_numbers(value)} : {expr}"
    base = alt.Chart(alt.Data(values=rows)).transform_calculate(value=expr).encode(
        y=alt.Y("line:O", axis=None), color=alt.ColorValue("black", condition={"test": "datum.line == 2", "value": "#d62728"}))
    labels = base.mark_text(align="right", dx=-8, fontSize=14).encode(x=alt.XValue(width * 0.62), text=alt.Text("label:N"))
    values = base.mark_text(align="left", fontSize=14, fontWeight="bold").encode(x=alt.XValue(width * 0.62), text=alt.Text("value:N"))
    params = _params(gpus=gpus, days=days, lost_fraction=lost_fraction, usd_per_gpu_hour=usd_per_gpu_hour)
    return alt.layer(labels, values).add_params(*params).properties(width=width, height=26 * len(rows))


def _count(expr):
    """A Vega expression writing the count ``expr`` as prose does (:func:`straggle_edu.i18n.format_count`):
    "98,304" in English; "9.8万" from 10,000 up in Chinese."""
    if get_language() == "zh":
        return (f"(({expr}) >= 1e8 ? format(({expr}) / 1e8, '.1~f') + '亿' : ({expr}) >= 1e4 ? "
                f"format(({expr}) / 1e4, '.1~f') + '万' : format(({expr}), '.0f'))")
    return f"format({expr}, ',.0f')"


def _money(expr, digits=0):
    """A Vega expression writing dollars as prose does (:func:`straggle_edu.i18n.format_money`):
    "$196,608"; "19.66万美元" in Chinese."""
    if get_language() == "zh":
        return (f"(({expr}) >= 1e4 ? format(({expr}) / 1e4, '.4~r') + '万美元' : "
                f"format(({expr}), '.{digits}~f') + ' 美元')")
    return f"'$' + format({expr}, ',.{digits}~f')"


def bill_sentence_chart(gpus=4096, days=10.0, lost_fraction=0.10, usd_per_gpu_hour=2.0, *, width=560):
    """The bill as one sentence, written in the browser from four params: its numbers follow the sliders.

    The same params as :func:`bill_chart` (``gpus``, ``days``, ``lost_fraction``,
    ``usd_per_gpu_hour``), so a slider linked to them moves the sentence with
    no kernel, on the static site too. The words come from the catalog.

    Examples
    --------
    >>> spec = bill_sentence_chart().to_dict()
    >>> sorted(p["name"] for p in spec["params"]), spec["mark"]["lineBreak"]
    (['days', 'gpus', 'lost_fraction', 'usd_per_gpu_hour'], '\\n')
    """
    hours = f"{_HOURS} * lost_fraction"
    text = vega_text(_("{gpus} GPUs for {days} days lose {lost} of their time waiting:\n"
                       "{hours} GPU-hours, {usd} at {price} per GPU-hour."),
                     gpus=_count("gpus"), days="format(days, '.3~f')", lost="format(lost_fraction, '.1%')",
                     hours=_count(hours), usd=_money(f"{hours} * usd_per_gpu_hour"), price=_money("usd_per_gpu_hour", 2))
    sentence = alt.Chart(alt.Data(values=[{}])).transform_calculate(text=text).mark_text(
        align="left", baseline="top", fontSize=15, lineBreak="\n", lineHeight=22)
    params = _params(gpus=gpus, days=days, lost_fraction=lost_fraction, usd_per_gpu_hour=usd_per_gpu_hour)
    return sentence.encode(x=alt.XValue(0), y=alt.YValue(0), text=alt.Text("text:N")).add_params(*params).properties(
        width=width, height=48).configure_view(strokeWidth=0)


def lost_dollars_chart(gpus=4096, days=10.0, lost_fraction=0.10, usd_per_gpu_hour=2.0, *, max_lost=0.5, width=420, height=220):
    """Dollars lost against the lost fraction, with the current bill marked.

    Examples
    --------
    >>> spec = lost_dollars_chart(max_lost=0.3).to_dict()
    >>> spec["layer"][0]["data"]["values"][-1]
    {'f': 0.3}
    """
    grid = [{"f": float(f)} for f in np.linspace(0.0, float(max_lost), 61)]
    usd = f"{_HOURS} * datum.f * usd_per_gpu_hour"
    x = alt.X("f:Q", title=_("lost fraction"), axis=alt.Axis(format="%"))
    y = alt.Y("usd:Q", title=_("dollars lost"), axis=count_axis("$,.0f", money=True))
    line = alt.Chart(alt.Data(values=grid)).transform_calculate(usd=usd).mark_line(color="#1f4e79").encode(x=x, y=y)
    now = alt.Chart(alt.Data(values=[{}])).transform_calculate(f="lost_fraction").transform_calculate(usd=usd)
    dot = now.mark_point(filled=True, size=90, color="#d62728").encode(
        x=x, y=y, tooltip=[alt.Tooltip("usd:Q", title=_("dollars lost"), format="$,.0f")])
    text = now.transform_calculate(text=vega_numbers("'$' + format(datum.usd, ',.0f')")).mark_text(align="left", dx=8, dy=-8, fontSize=13)
    text = text.encode(x=x, y=y, text=alt.Text("text:N"))
    params = _params(gpus=gpus, days=days, lost_fraction=lost_fraction, usd_per_gpu_hour=usd_per_gpu_hour)
    return alt.layer(line, dot, text).add_params(*params).properties(width=width, height=height)


def delay_framings_chart(days=10.0, lost_fraction=0.10, *, max_lost=0.5, width=420, height=220):
    """Extra calendar days against the lost fraction, in both framings.

    ``days * f`` (a run that held its GPUs ``days`` days spent this many
    waiting) and ``days * f / (1 - f)`` (a run planned at ``days`` days ends
    this much later); the params ``days`` and ``lost_fraction`` drive both.

    Examples
    --------
    >>> spec = delay_framings_chart().to_dict()
    >>> sorted(p["name"] for p in spec["params"])
    ['days', 'lost_fraction']
    """
    held, planned = _("held for D days: D × f"), _("planned at D days: D × f / (1 − f)")
    calc = {held: "days * datum.f", planned: "days * datum.f / (1 - datum.f)"}
    grid = [{"f": float(f)} for f in np.linspace(0.0, float(max_lost), 51)]
    enc = dict(x=alt.X("f:Q", title=_("lost fraction f"), axis=alt.Axis(format="%")), y=alt.Y("extra:Q", title=_("calendar days lost")),
               color=alt.Color("framing:N", title=None, legend=alt.Legend(orient="top", direction="vertical", labelLimit=400)))
    lines = alt.Chart(alt.Data(values=grid)).transform_calculate(**calc).transform_fold(list(calc), as_=["framing", "extra"])
    lines = lines.mark_line().encode(**enc)
    now = alt.Chart(alt.Data(values=[{}])).transform_calculate(f="lost_fraction").transform_calculate(**calc)
    dots = now.transform_fold(list(calc), as_=["framing", "extra"]).mark_point(filled=True, size=80).encode(
        **enc, tooltip=[alt.Tooltip("framing:N", title=_("framing")), alt.Tooltip("extra:Q", format=".2f", title=_("days"))])
    readout = now.transform_calculate(
        text=vega_text(_("held: {held} d, planned: {planned} d"), held=f"format(datum[{quoted(held)}], '.2f')",
                       planned=f"format(datum[{quoted(planned)}], '.2f')"))
    text = readout.mark_text(align="left", baseline="top", dx=6, dy=6, fontSize=13).encode(
        x=alt.XValue(0), y=alt.YValue(0), text=alt.Text("text:N"))
    return alt.layer(lines, dots, text).add_params(*_params(days=days, lost_fraction=lost_fraction)).properties(width=width, height=height)


def milestones_chart(days=10.0, lost_fraction=0.10, stages=DOWNSTREAM, *, width=460):
    """The run and the work waiting for it: planned (light) and shifted (dark).

    Computes :func:`straggle_edu.math.delay.milestones` in the browser: every
    stage moves by ``days * f / (1 - f)`` days, driven by the params ``days``
    and ``lost_fraction``.

    Parameters
    ----------
    stages : sequence of (name, start, duration)
        Days after the run ends; default :data:`straggle_edu.math.delay.DOWNSTREAM`.

    Examples
    --------
    >>> spec = milestones_chart().to_dict()
    >>> [r["stage"] for r in spec["data"]["values"]][:2]
    ['training run', 'evaluation']
    """
    rows = [{"order": 0, "stage": _("training run"), "start": 0.0, "duration": 0.0, "run": True}]
    rows += [{"order": i + 1, "stage": _known(str(s), _STAGES), "start": float(a), "duration": float(d), "run": False}
             for i, (s, a, d) in enumerate(stages)]
    base = alt.Chart(alt.Data(values=rows)).transform_calculate(
        delay="days * lost_fraction / (1 - lost_fraction)",
        p0="datum.run ? 0 : days + datum.start", p1="datum.run ? days : days + datum.start + datum.duration",
    ).transform_calculate(a0="datum.run ? 0 : datum.p0 + datum.delay", a1="datum.p1 + datum.delay",
                          text=vega_text(_("+{days} d"), days="format(datum.delay, '.2f')"))
    y = alt.Y("stage:N", sort=alt.EncodingSortField("order"), title=None)
    planned = base.mark_bar(color="#c7d3e3", height=16).encode(
        x=alt.X("p0:Q", title=_("days from the start of the run")), x2=alt.X2("p1:Q"), y=y)
    actual = base.mark_bar(color="#1f4e79", height=7).encode(
        x=alt.X("a0:Q"), x2=alt.X2("a1:Q"), y=y,
        tooltip=[alt.Tooltip("stage:N", title=_("what waits")), alt.Tooltip("a1:Q", format=".2f", title=_("ends on day"))])
    text = base.mark_text(align="left", dx=4, color="#d62728").encode(x=alt.X("a1:Q"), y=y, text=alt.Text("text:N"))
    chart = alt.layer(planned, actual, text).add_params(*_params(days=days, lost_fraction=lost_fraction))
    return chart.properties(width=width, height=34 * len(rows))


def lost_fraction_chart(rows, *, n_mark=4096, width=420, height=240):
    """The lost fraction against n, one line per scenario, with n marked.

    Parameters
    ----------
    rows : list of dict
        ``{"n", "scenario", "lost"}`` per point, for instance from
        :func:`straggle_edu.models.waste.lost_fraction_curves`.
    n_mark : int
        Initial value of the param ``n_mark``, drawn as a rule.

    Examples
    --------
    >>> spec = lost_fraction_chart([{"n": 1, "scenario": "a", "lost": 0.0}, {"n": 8, "scenario": "a", "lost": 0.05}]).to_dict()
    >>> [p["name"] for p in spec["params"]]
    ['n_mark']
    """
    x = alt.X("n:Q", title=_("workers n"), scale=alt.Scale(type="log", base=2))
    rows = [{**r, "scenario": _known(r["scenario"], _SCENARIOS)} for r in rows]
    lines = alt.Chart(inline_rows(rows)).mark_line(point=True).encode(
        x=x, y=alt.Y("lost:Q", title=_("lost fraction (time waiting at the barrier)"), axis=alt.Axis(format="%")),
        color=alt.Color("scenario:N", title=None, legend=alt.Legend(orient="top", direction="vertical", labelLimit=400)),
        tooltip=[alt.Tooltip("scenario:N", title=_("scenario")), alt.Tooltip("n:Q", title="n"),
                 alt.Tooltip("lost:Q", title=_("lost fraction"), format=".1%")])
    rule = alt.Chart(alt.Data(values=[{}])).transform_calculate(n="n_mark").mark_rule(color="black", strokeDash=[3, 3]).encode(x=x)
    return alt.layer(lines, rule).add_params(alt.param(name="n_mark", value=int(n_mark))).properties(width=width, height=height)
