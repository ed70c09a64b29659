"""Charts for the expected maximum: how the slowest of n grows with n.

- :func:`expected_max_chart`: E[max] against n, exact against Monte Carlo,
  the Gumbel approximation and sqrt(2 ln n); one panel per step-time shape.
- :func:`max_histograms_chart`: histograms of the maximum for several n,
  stacked on one time axis; hovering a bin lights up the same bin in every row.
- :func:`max_vs_one_chart`: one worker's histogram above the slowest of n's,
  with n a Vega-Lite param (``n``), so a slider moves it with no re-render.
- :func:`speedup_chart`: throughput = 1/E[step], so doubling the GPUs does not
  halve the time; the jitter is a param (``jitter``) driving a calculate
  transform, so it stays interactive without a kernel.
- :func:`slow_card_chart`: the job's slowdown from one persistently slow card,
  against n, for several jitters.
- :func:`step_draws_chart`: one drawn step's n worker times with its slowest
  marked, above the histogram of the maxima of the steps drawn so far; the
  param ``k`` (steps drawn) picks both, so a slider or a button moves them
  with no re-render, and the static site binds it to a slider.

Every chart takes data already aggregated with numpy (see
:mod:`straggle_edu.models.max_growth` and :mod:`straggle_edu.models.waste`).
"""

from __future__ import annotations

import altair as alt
import numpy as np

from ..i18n import N_, _, format_count
from ._data import inline_rows, quoted, vega_text
from ._linked import share_selection

__all__ = [
    "METHOD_LABELS",
    "expected_max_chart",
    "max_histograms_chart",
    "max_vs_one_chart",
    "speedup_chart",
    "slow_card_chart",
    "step_draws_chart",
]

# English legend entries (msgids); the charts translate them when they are built.
METHOD_LABELS = {
    "exact": N_("exact E[max]"),
    "monte_carlo": N_("Monte Carlo (±2 SE)"),
    "gumbel": N_("Gumbel approximation"),
    "sqrt_2_ln_n": N_("√(2 ln n) (normal, leading term)"),
}
_DASH = [[1, 0], [1, 0], [6, 3], [2, 2]]
_COLOR = ["#1f4e79", "#d62728", "#ff7f0e", "#7f7f7f"]
# Step-time shapes (straggle_edu.models.max_growth.STEP_TIME_SHAPES) that notebook 03 passes
# as panel names; others are shown as given.
_SHAPES = (N_("normal"), N_("log-normal"), N_("exponential"), N_("pareto"))
_N_AXIS = alt.Scale(type="log", base=2)


def _highlight(selection, on, off):
    """Colour ``on`` where ``selection`` holds, ``off`` elsewhere (as ``alt.condition``,
    without the shorthand parsing that makes a chart slow to build)."""
    return alt.ColorValue(off, condition={"param": selection.name, "value": on, "empty": False})


def _growth_rows(growth, in_sigmas):
    items = growth.items() if isinstance(growth, dict) else [("", growth)]
    rows = [r for shape, g in items for r in g.records(_shape(shape), in_sigmas=in_sigmas)]
    for r in rows:
        r["method"] = _(METHOD_LABELS[r["method"]])
    return rows


def _shape(name):
    return _(name) if name in _SHAPES else name


def _bin_tips(unit):
    """Tooltips of a histogram bin of step times: its edges and its share for one worker and for the slowest."""
    return [alt.Tooltip("start:Q", format=".3f", title=_("from ({unit})").format(unit=unit)),
            alt.Tooltip("end:Q", format=".3f", title=_("to ({unit})").format(unit=unit)),
            alt.Tooltip("share_one:Q", format=".2%", title=_("share, one worker")),
            alt.Tooltip("share:Q", format=".2%", title=_("share, slowest of n"))]


def expected_max_chart(growth, *, in_sigmas=True, n_mark=None, width=320, height=220):
    """E[max of n] against n, four ways.

    Parameters
    ----------
    growth : MaxGrowth or dict of {shape name: MaxGrowth}
        From :func:`straggle_edu.models.max_growth.max_growth`; a dict gives
        one panel per shape, each with its own y axis.
    in_sigmas : bool
        Plot σ above the mean (True) or seconds (False).
    n_mark : int, optional
        Draw a rule at this n, driven by the param ``n_mark`` (single panel only).

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.max_growth import max_growth
    >>> from straggle_edu.charts._data import rows_of
    >>> spec = expected_max_chart(max_growth(stats.norm(), [1, 10], size=50, rng=0)).to_dict()
    >>> len(rows_of(spec, spec["data"]))
    8
    """
    y_title = _("slowest worker, σ above the mean") if in_sigmas else _("E[step] (s)")
    labels, monte_carlo = [_(v) for v in METHOD_LABELS.values()], quoted(_(METHOD_LABELS["monte_carlo"]))
    base = alt.Chart().encode(
        x=alt.X("n:Q", scale=_N_AXIS, title=_("workers n")),
        color=alt.Color("method:N", scale=alt.Scale(domain=labels, range=_COLOR), title=None,
                        legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip("n:Q", title="n"), alt.Tooltip("method:N", title=_("method")),
                 alt.Tooltip("value:Q", title=y_title, format=".3f")],
    )
    lines = base.transform_filter(f"datum.method != {monte_carlo}").mark_line().encode(
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(zero=False)),
        strokeDash=alt.StrokeDash("method:N", scale=alt.Scale(domain=labels, range=_DASH), legend=None)
    )
    mc = base.transform_filter(f"datum.method == {monte_carlo}")
    layers = [lines, mc.mark_rule().encode(y=alt.Y("low:Q"), y2=alt.Y2("high:Q")),
              mc.mark_point(filled=True, size=25).encode(y=alt.Y("value:Q"))]
    data = inline_rows(_growth_rows(growth, in_sigmas))
    if isinstance(growth, dict):
        chart = alt.layer(*layers, data=data).properties(width=width, height=height)
        facet = alt.Facet("shape:N", title=None, sort=[_shape(s) for s in growth])
        return chart.facet(facet=facet, columns=2).resolve_scale(y="independent")
    if n_mark is not None:
        mark = alt.param(name="n_mark", value=int(n_mark))
        rule = alt.Chart(alt.Data(values=[{}])).transform_calculate(n="n_mark").mark_rule(color="black", strokeDash=[3, 3])
        layers.append(rule.encode(x=alt.X("n:Q")).add_params(mark))
    return alt.layer(*layers, data=data).properties(width=width, height=height)


def max_histograms_chart(hist, *, unit="s", width=420, row_height=55):
    """Histograms of the slowest of n, one row per n, on a shared time axis.

    Hovering a bin lights up the same bin in every row, and its tooltip gives
    that bin's share for one worker and for the slowest of n.

    Parameters
    ----------
    hist : MaxHistograms
        From :func:`straggle_edu.models.max_growth.max_histograms` (put n = 1 first).

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.max_growth import max_histograms
    >>> h = max_histograms(stats.norm(), [1, 100], size=500, bins=10, rng=0)
    >>> from straggle_edu.charts._data import rows_of
    >>> spec = max_histograms_chart(h).to_dict()
    >>> len(rows_of(spec, spec["data"])), spec["facet"]["row"]["field"]
    (20, 'n')
    """
    hover = alt.selection_point(name="bin_hover", fields=["bin"], on="pointerover", clear="pointerout", empty=False)
    bars = alt.Chart().mark_bar(stroke="white", strokeWidth=0.3).encode(
        x=alt.X("start:Q", title=_("step time of the slowest worker ({unit})").format(unit=unit),
                scale=alt.Scale(domain=[float(hist.edges[0]), float(hist.edges[-1])], nice=False)),
        x2=alt.X2("end:Q"),
        y=alt.Y("share:Q", title=None, axis=alt.Axis(format="%", tickCount=2)),
        y2=alt.Y2Datum(0),
        color=_highlight(hover, "#d62728", "#1f4e79"),
        tooltip=[alt.Tooltip("n:Q", title=_("workers")), *_bin_tips(unit)],
    ).add_params(hover).properties(width=width, height=row_height)
    row = alt.Row("n:O", title=_("workers n"), sort="ascending", header=alt.Header(labelAngle=0))
    return bars.facet(row=row, data=inline_rows(hist.records())).resolve_scale(y="independent")


def max_vs_one_chart(hist, *, n=None, unit="s", width=460, height=120):
    """One worker's histogram above the slowest of n's, on one time axis.

    The param ``n`` picks which histogram of ``hist`` the lower panel shows
    (a slider linked to it moves the histogram with no re-render). Hovering a
    bin in either panel lights up its counterpart in the other.

    Parameters
    ----------
    hist : MaxHistograms
        Its first row is the upper panel (usually n = 1).
    n : int, optional
        Initial n; one of ``hist.n`` (default: the largest).

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.max_growth import max_histograms
    >>> h = max_histograms(stats.norm(), [1, 64, 4096], size=500, bins=10, rng=0)
    >>> spec = max_vs_one_chart(h, n=64).to_dict()
    >>> [p["value"] for p in spec["params"] if p["name"] == "n"]
    [64]
    """
    n = int(hist.n[-1] if n is None else n)
    param = alt.param(name="n", value=n)
    hover = alt.selection_point(name="bin_pair", fields=["bin"], on="pointerover", clear="pointerout", empty=False)
    x = alt.X("start:Q", title=_("step time ({unit})").format(unit=unit),
              scale=alt.Scale(domain=[float(hist.edges[0]), float(hist.edges[-1])], nice=False))
    tips = _bin_tips(unit)
    base = alt.Chart(inline_rows(hist.records())).properties(width=width, height=height)
    bar = lambda c: c.mark_bar(stroke="white", strokeWidth=0.3).encode(x=x, x2=alt.X2("end:Q"), y2=alt.Y2Datum(0), tooltip=tips)
    one = bar(base.transform_filter(f"datum.n == {int(hist.n[0])}")).encode(
        y=alt.Y("share:Q", title=_("one worker"), axis=alt.Axis(format="%")), color=_highlight(hover, "#d62728", "#9e9e9e")
    ).properties(name="maxpair_0")
    slow = base.transform_filter("datum.n == n")
    label = slow.transform_filter("datum.bin == 0").transform_calculate(
        text=vega_text(_("slowest of {n}: mean {mean}, σ {std}"), n="datum.n", mean="format(datum.mean, '.3f')",
                       std="format(datum.std, '.3f')"))
    bars = bar(slow).encode(y=alt.Y("share:Q", title=_("slowest of n"), axis=alt.Axis(format="%")),
                            color=_highlight(hover, "#d62728", "#1f4e79"))
    lower = alt.layer(bars.properties(name="maxpair_1"),
                      slow.transform_filter("datum.bin == 0").mark_rule(color="black").encode(x=alt.X("mean:Q")),
                      label.mark_text(align="left", baseline="top", dx=4, dy=4).encode(
                          x=alt.XValue(0), y=alt.YValue(0), text=alt.Text("text:N")))
    chart = share_selection(alt.vconcat(one, lower).resolve_scale(x="shared"), hover, ["maxpair_0", "maxpair_1"])
    chart.params = [*chart.params, param.param]
    return chart


def speedup_chart(ns, sigmas, *, jitter=0.05, n_mark=4096, width=420, height=240):
    """Scaling efficiency of n synchronous workers (speed-up / n), closed form.

    A worker's step is ``base * (1 + jitter * Z)``, so the job's expected step
    is ``base * (1 + jitter * e_n)`` with ``e_n`` = E[max of n standard
    normals]. Throughput = 1/E[step] gives a speed-up of
    ``n / (1 + jitter * e_n)``, and doubling n multiplies the time for a fixed
    amount of work by ``(1 + jitter * e_2n) / (2 (1 + jitter * e_n))``, never
    by 1/2. The params ``jitter`` and ``n_mark`` drive a calculate transform,
    so both move with no kernel.

    Parameters
    ----------
    ns : array_like of int
        Worker counts (powers of two read best).
    sigmas : array_like of float
        ``normal_max_sigmas(ns)`` followed by ``normal_max_sigmas(2 * ns)``
        (length ``2 * len(ns)``), for the doubling readout.
    jitter : float
        Initial jitter (coefficient of variation).
    n_mark : int
        Initial n for the doubling readout; one of ``ns``.

    Examples
    --------
    >>> from straggle_edu.models.max_growth import normal_max_sigmas
    >>> ns = np.array([1, 2, 4])
    >>> spec = speedup_chart(ns, normal_max_sigmas(np.r_[ns, 2 * ns]), n_mark=2).to_dict()
    >>> sorted(p["name"] for p in spec["params"])
    ['jitter', 'n_mark']
    """
    ns = np.asarray(ns, dtype=int)
    e = np.asarray(sigmas, dtype=float)
    rows = [{"n": int(n), "e": float(e[i]), "e2": float(e[i + len(ns)])} for i, n in enumerate(ns)]
    jit, mark = alt.param(name="jitter", value=float(jitter)), alt.param(name="n_mark", value=int(n_mark))
    base = alt.Chart(alt.Data(values=rows)).transform_calculate(
        efficiency="1 / (1 + jitter * datum.e)", speedup="datum.n / (1 + jitter * datum.e)",
        ratio="(1 + jitter * datum.e2) / (2 * (1 + jitter * datum.e))")
    x = alt.X("n:Q", title=_("workers n"), scale=alt.Scale(type="log", base=2))
    y = alt.Y("efficiency:Q", title=_("throughput, share of n × one worker"), axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]))
    ideal = alt.Chart(alt.Data(values=[{"y": 1.0}])).mark_rule(color="#7f7f7f", strokeDash=[4, 3]).encode(y=alt.Y("y:Q"))
    tips = [alt.Tooltip("n:Q", title="n"), alt.Tooltip("speedup:Q", format=",.0f", title=_("speed-up")),
            alt.Tooltip("efficiency:Q", format=".1%", title=_("efficiency"))]
    actual = base.mark_line(color="#1f4e79", point=True).encode(x=x, y=y, tooltip=tips)
    at = base.transform_filter("datum.n == n_mark")
    text = at.transform_calculate(
        text=vega_text(_("{n} → {n2} workers: time × {ratio} (ideal × 0.500)"), n="datum.n", n2="2 * datum.n",
                       ratio="format(datum.ratio, '.3f')"))
    readout = text.mark_text(align="left", baseline="bottom", dx=6, dy=-6, fontSize=13).encode(
        x=alt.XValue(0), y=alt.YValue(height), text=alt.Text("text:N"))
    point = at.mark_point(size=90, color="#d62728", filled=True).encode(x=x, y=alt.Y("efficiency:Q"))
    return alt.layer(ideal, actual, point, readout).add_params(jit, mark).properties(width=width, height=height)


def slow_card_chart(rows, *, slow_factor=1.05, n_mark=None, width=420, height=240):
    """The job's slowdown caused by one persistently slow card, against n.

    Parameters
    ----------
    rows : list of dict
        ``{"n", "jitter", "job_slowdown"}`` per point, from
        :func:`straggle_edu.models.waste.slow_card_curves`; one line per jitter.
    slow_factor : float
        The slow card's factor, drawn as a reference rule at ``slow_factor - 1``
        (the slowdown with no jitter).
    n_mark : int, optional
        Draw a rule at this n, driven by the param ``n_mark``.

    Examples
    --------
    >>> rows = [{"n": n, "jitter": j, "job_slowdown": 0.05 / (1 + 10 * j * n)} for n in (1, 2) for j in (0.0, 0.02)]
    >>> spec = slow_card_chart(rows, n_mark=2).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]], spec["params"][0]["name"]
    (['line', 'rule', 'rule'], 'n_mark')
    """
    x = alt.X("n:Q", title=_("workers n"), scale=alt.Scale(type="log", base=2))
    lines = alt.Chart(inline_rows(rows)).mark_line(point=True).encode(
        x=x, y=alt.Y("job_slowdown:Q", title=_("job slowdown from the slow card"), axis=alt.Axis(format="%")),
        color=alt.Color("jitter:O", title=_("peers' jitter"), scale=alt.Scale(scheme="tableau10"), legend=alt.Legend(format=".1%")),
        tooltip=[alt.Tooltip("n:Q", title="n"), alt.Tooltip("jitter:Q", format=".1%", title=_("peers' jitter")),
                 alt.Tooltip("job_slowdown:Q", format=".2%", title=_("job slowdown"))],
    )
    own = alt.Chart(alt.Data(values=[{"y": float(slow_factor) - 1.0}])).mark_rule(color="black", strokeDash=[4, 3]).encode(y=alt.Y("y:Q"))
    layers = [lines, own]
    if n_mark is None:
        return alt.layer(*layers).properties(width=width, height=height)
    rule = alt.Chart(alt.Data(values=[{}])).transform_calculate(n="n_mark").mark_rule(color="#d62728").encode(x=x)
    return alt.layer(*layers, rule).add_params(alt.param(name="n_mark", value=int(n_mark))).properties(width=width, height=height)


def step_draws_chart(draws, *, k=1, unit="s", width=460, height=110, bins=120):
    """The k-th drawn step's n worker times, its slowest in red, above the maxima of steps 1..k.

    Parameters
    ----------
    draws : StepDraws
        From :func:`straggle_edu.models.step_draws.draw_steps`.
    k : int
        Initial value of the param ``k``: the steps drawn so far (1 .. ``draws.steps``).
    bins : int
        Bins of the maxima's histogram across the whole time axis (the browser bins them).

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.step_draws import draw_steps
    >>> spec = step_draws_chart(draw_steps(stats.norm(1, 0.1), n=8, steps=3, bins=10, rng=0), k=2).to_dict()
    >>> [p["value"] for p in spec["params"] if p["name"] == "k"]
    [2]
    """
    lo, hi = float(draws.edges[0]), float(draws.edges[-1])
    step = (hi - lo) / draws.counts.shape[1]
    x = alt.X("start:Q", title=_("step time ({unit})").format(unit=unit), scale=alt.Scale(domain=[lo, hi], nice=False),
              axis=alt.Axis(format=".2f"))
    top_bin = draws.bin_of(draws.slowest) + 1  # 1-based, as row_number() counts the bins
    now = alt.Chart(inline_rows([{"s": i + 1, "c": row.tolist(), "m": int(m)} for i, (row, m) in enumerate(zip(draws.counts, top_bin))]))
    bars = now.transform_filter("datum.s == k").transform_flatten(["c"]).transform_window(
        b="row_number()").transform_calculate(start=f"{lo!r} + (datum.b - 1) * {step!r}", end=f"{lo!r} + datum.b * {step!r}")
    whole = alt.Axis(tickMinStep=1)
    workers = bars.mark_bar(stroke="white", strokeWidth=0.3).encode(
        x=x, x2=alt.X2("end:Q"), y=alt.Y("c:Q", title=_("workers"), axis=whole), y2=alt.Y2Datum(0),
        color=alt.ColorValue("#1f4e79", condition={"test": "datum.b == datum.m", "value": "#d62728"}),
        tooltip=[alt.Tooltip("start:Q", format=".3f", title=_("from ({unit})").format(unit=unit)),
                 alt.Tooltip("c:Q", title=_("workers"))])
    maxima = alt.Chart(inline_rows([{"s": i + 1, "t": float(t)} for i, t in enumerate(draws.slowest)]))
    latest = maxima.transform_filter("datum.s == k")
    red = latest.mark_rule(color="#d62728", strokeWidth=2).encode(x=alt.X("t:Q"))
    label = latest.transform_calculate(text=vega_text(_("step {k}: the slowest of {n} took {t} s"), k="datum.s",
                                                      n=quoted(format_count(draws.n)), t="format(datum.t, '.3f')"))
    text = label.mark_text(align="left", baseline="top", dx=4, dy=4, color="#d62728").encode(
        x=alt.XValue(0), y=alt.YValue(0), text=alt.Text("text:N"))
    upper = alt.layer(workers, red, text).properties(width=width, height=height)
    binned = maxima.transform_filter("datum.s <= k").transform_bin(
        ["start", "end"], "t", bin=alt.Bin(extent=[lo, hi], step=(hi - lo) / bins))
    piled = binned.mark_bar(color="#7f7f7f", stroke="white", strokeWidth=0.3).encode(
        x=x, x2=alt.X2("end:Q"), y=alt.Y("count():Q", title=_("steps"), axis=whole),
        tooltip=[alt.Tooltip("count():Q", title=_("steps"))])
    mean = alt.Chart(alt.Data(values=[{"t": draws.mean, "text": _("one worker's mean")}]))
    mean = mean.mark_rule(color="#1f4e79", strokeDash=[4, 3]).encode(x=alt.X("t:Q")) + mean.mark_text(
        align="left", baseline="bottom", dx=4, dy=-4, color="#1f4e79").encode(x=alt.X("t:Q"), y=alt.YValue(height), text=alt.Text("text:N"))
    first = quoted(_("the slowest of step 1"))
    so_far = maxima.transform_filter("datum.s <= k").transform_aggregate(steps="count()").transform_calculate(
        text=f"datum.steps == 1 ? {first} : " + vega_text(_("the slowest of each of {k} steps"), k="datum.steps"))
    title = so_far.mark_text(align="left", baseline="top", dx=4, dy=4).encode(x=alt.XValue(0), y=alt.YValue(0), text=alt.Text("text:N"))
    lower = alt.layer(piled, red, mean, title).properties(width=width, height=height)
    chart = alt.vconcat(upper, lower).resolve_scale(x="shared")
    chart.params = [alt.param(name="k", value=int(k)).param]
    return chart
