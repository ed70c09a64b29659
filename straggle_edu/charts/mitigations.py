"""Mitigation charts, in the article's order: balance, backups, hedging, relaxed sync.

- :func:`packing_chart`: per-worker load of one or more packings of the same
  sequences (in order, LPT, Karmarkar-Karp), with the mean and the makespan.
- :func:`stage_partition_chart`: per-stage cost of one or more layer
  partitions, the extra work of the first and last stages in its own colour.
- :func:`backup_step_chart`: step time and normalized speedup against the
  number of backups b. Closed form in the browser: params ``sync_per_worker``
  (seconds) and ``price`` move the curves and the best-b markers in place.
- :func:`backup_margin_chart`: where backup workers stop paying: the compute
  each added backup saves, against what it costs (its communication and its
  price). Same params.
- :func:`backup_tails_chart`: normalized speedup against b for several tail
  shapes.
- :func:`hedging_chart`: P(slowest of k requests > t), plain and hedged after
  a delay. Closed form in the browser (log-normal mixture): params
  ``delay_ms`` and ``fanout``.
- :func:`hedging_tradeoff_chart`: fan-out tail latency and extra requests
  against the hedging delay; param ``delay_ms`` marks one.
- :func:`sgd_loss_chart`: excess loss against wall-clock time, for sync,
  drop and async runs.
"""

from __future__ import annotations


import altair as alt
import numpy as np

from .._validate import in_range, nonnegative, require, whole
from ..i18n import N_, _
from ..models.backup import BackupPlan
from ..models.balance import Packing, StagePartition
from ..models.hedging import HedgingTradeoff, RequestLatency
from ..models.sgd import SGDComparison
from ._data import quoted, vega_text

__all__ = [
    "backup_datasets",
    "hedging_tradeoff_datasets",
    "packing_datasets",
    "sgd_datasets",
    "stage_partition_datasets",
    "backup_margin_chart",
    "backup_step_chart",
    "backup_tails_chart",
    "hedging_chart",
    "hedging_tradeoff_chart",
    "packing_chart",
    "sgd_loss_chart",
    "stage_partition_chart",
]

# Panel titles and legend entries are English msgids here; the charts translate them when built.
METHOD_LABELS = {"in_order": N_("in order"), "lpt": N_("greedy LPT"), "karmarkar_karp": N_("Karmarkar-Karp"),
                 "best": N_("optimal"), "even": N_("even split"), "optimal": N_("linear-partition DP"),
                 "step": N_("shortest 1F1B step")}
MODE_COLORS = alt.Scale(domain=[N_("sync"), N_("drop"), N_("async")], range=["#4c78a8", "#f58518", "#54a24b"])
VERDICT_COLORS = alt.Scale(
    domain=[N_("saves GPU-time"), N_("faster, costs more"), N_("slower")], range=["#54a24b", "#eeca3b", "#e45756"]
)
# Tail names that notebook 07b passes to backup_tails_chart; others are shown as given.
_TAILS = (N_("rare stalls: 3% of steps, +0.55 s"), N_("frequent stalls: 30% of steps, +0.1 s"), N_("Gaussian jitter, σ = 5%"),
          N_("normal"), N_("long tail"))


def _translated(scale):
    """A copy of a scale whose domain (English msgids) is in the current language."""
    return alt.Scale(domain=[_(d) for d in scale.domain], range=scale.range)


def _method(p):
    """A packing's or partition's panel title in the current language."""
    return _(METHOD_LABELS[p.method]) if p.method in METHOD_LABELS else p.method


def _method_panels(items, panel, datasets, *, width, height):
    """One ``panel(i, item)`` per item, titled by its method, side by side on a shared y axis; the chart carries
    ``datasets`` (the named rows the panels draw), so that an explorer can swap them."""
    chart = alt.hconcat(*(panel(i, p).properties(width=width, height=height, title=_method(p))
                          for i, p in enumerate(items))).resolve_scale(y="shared")
    chart.datasets = datasets
    return chart


def _panel_datasets(items, kind, name, rows, unit, names):
    """Check ``items`` (one or more ``kind``), then name panel i's two row lists ``{names[0]}_{i}`` and ``{names[1]}_{i}``."""
    require(len(items) >= 1 and all(isinstance(x, kind) for x in items), name, items,
            f"one or more {kind.__name__} objects")
    out = {}
    for i, p in enumerate(items):
        out[f"{names[0]}_{i}"], out[f"{names[1]}_{i}"] = rows(p, unit)
    return out


# ---------------------------------------------------------------- balance ---


def _packing_rows(p, unit):
    slowest = int(np.argmax(p.loads))
    bars = [{"worker": w, "load": float(v), "slowest": w == slowest} for w, v in enumerate(p.loads)]
    label = _("makespan {makespan} {unit}, {over}% over the mean").format(
        makespan=f"{p.makespan:.3g}", unit=unit, over=f"{100 * (p.imbalance - 1):.1f}")
    lines = [{"load": p.mean_load, "what": _("mean"), "label": ""}, {"load": p.makespan, "what": _("makespan"), "label": label}]
    return bars, lines


def packing_datasets(*packings, unit="s"):
    """The named datasets of :func:`packing_chart`, for swapping new numbers
    into a drawn chart (an explorer's update).

    Examples
    --------
    >>> from straggle_edu.models.balance import greedy_lpt, split_in_order
    >>> data = packing_datasets(split_in_order([8, 7, 1, 1], 2), greedy_lpt([8, 7, 1, 1], 2))
    >>> [r["load"] for r in data["packing_bars_1"]]   # LPT: 8 + 1 and 7 + 1
    [9.0, 8.0]
    >>> data["packing_lines_0"][1]["label"]
    'makespan 15 s, 76.5% over the mean'
    """
    return _panel_datasets(packings, Packing, "packings", _packing_rows, unit, ("packing_bars", "packing_lines"))


def packing_chart(*packings, unit="s", height=220):
    """Per-worker load of each packing, side by side on a shared axis.

    Each panel is titled by its method. The slowest worker is red; dashed
    lines mark the mean load and the makespan, labelled with the makespan
    and how far it is over the mean.

    Parameters
    ----------
    *packings : Packing
        From :mod:`~straggle_edu.models.balance`, usually of the same costs.
    unit : str
        Unit of the costs, for the axis title.
    height : int
        Panel height in pixels.

    Returns
    -------
    altair.HConcatChart
        One bar panel per packing, sharing the load axis.

    Examples
    --------
    >>> from straggle_edu.models.balance import greedy_lpt, split_in_order
    >>> spec = packing_chart(split_in_order([8, 7, 1, 1], 2), greedy_lpt([8, 7, 1, 1], 2)).to_dict()
    >>> [panel["title"] for panel in spec["hconcat"]]
    ['in order', 'greedy LPT']
    """
    datasets = packing_datasets(*packings, unit=unit)
    y = alt.Y("load:Q", title=_("work per worker ({unit})").format(unit=unit))

    def panel(i, p):
        bars = alt.Chart(alt.Data(name=f"packing_bars_{i}")).mark_bar().encode(
            x=alt.X("worker:O", title=_("worker"), axis=alt.Axis(labels=p.workers <= 32)), y=y,
            color=alt.condition("datum.slowest", alt.value("#e45756"), alt.value("#4c78a8")),
            tooltip=[alt.Tooltip("worker:O", title=_("worker")),
                     alt.Tooltip("load:Q", format=".3f", title=_("load ({unit})").format(unit=unit))])
        lines = alt.Chart(alt.Data(name=f"packing_lines_{i}"))
        rule = lines.mark_rule(strokeDash=[5, 3]).encode(
            y=y, color=alt.Color("what:N", scale=alt.Scale(domain=[_("mean"), _("makespan")], range=["gray", "#e45756"]),
                                 legend=alt.Legend(title=None, orient="bottom")))
        text = lines.mark_text(align="left", x=4, dy=-7, color="#e45756", fontWeight="bold").encode(y=y, text="label:N")
        return alt.layer(bars, rule, text)

    return _method_panels(packings, panel, datasets, width=max(140, 560 // len(packings)), height=height)


def _stage_rows(p, unit):
    rows = []
    for s in range(p.stages):
        lo, hi = int(p.bounds[s]), int(p.bounds[s + 1])
        base = 0.0
        for layer in range(lo, hi):
            c = float(p.costs[layer])
            rows.append({"stage": s, "part": _("layers"), "layer": layer, "lo": base, "hi": base + c})
            base += c
        extra = float(p.stage_costs[s]) - base
        if extra > 1e-12:
            rows.append({"stage": s, "part": _("embedding / output layer"), "layer": -1, "lo": base, "hi": base + extra})
    layers = "/".join(str(int(k)) for k in p.layers_per_stage)
    label = [{"y": p.bottleneck, "label": _("{layers} layers: slowest stage {seconds} {unit}").format(
        layers=layers, seconds=f"{p.bottleneck:.3g}", unit=unit)}]
    return rows, label


def stage_partition_datasets(*partitions, unit="s"):
    """The named datasets of :func:`stage_partition_chart`, for swapping new
    numbers into a drawn chart (an explorer's update).

    Examples
    --------
    >>> from straggle_edu.models.balance import partition_layers, split_layers_evenly
    >>> data = stage_partition_datasets(split_layers_evenly([1] * 8, 4, last_stage_extra=1.5),
    ...                                 partition_layers([1] * 8, 4, last_stage_extra=1.5))
    >>> data["stage_label_0"], data["stage_label_1"]
    ([{'y': 3.5, 'label': '2/2/2/2 layers: slowest stage 3.5 s'}], [{'y': 3.0, 'label': '2/2/3/1 layers: slowest stage 3 s'}])
    """
    return _panel_datasets(partitions, StagePartition, "partitions", _stage_rows, unit, ("stage_bars", "stage_label"))


def stage_partition_chart(*partitions, unit="s", height=220):
    """Per-stage cost of each partition, layers stacked, extras in their own colour.

    Each panel is titled by its method; a label over the red line (the
    slowest stage) gives the layers per stage and the slowest stage's cost.

    Parameters
    ----------
    *partitions : StagePartition
        From :func:`~straggle_edu.models.balance.partition_layers` or
        :func:`~straggle_edu.models.balance.split_layers_evenly`.
    unit : str
        Unit of the costs (seconds per microbatch), for the axis title.
    height : int

    Returns
    -------
    altair.HConcatChart
        One stacked-bar panel per partition, sharing the cost axis.

    Examples
    --------
    >>> from straggle_edu.models.balance import partition_layers, split_layers_evenly
    >>> spec = stage_partition_chart(split_layers_evenly([1] * 8, 4, last_stage_extra=1.5),
    ...                              partition_layers([1] * 8, 4, last_stage_extra=1.5)).to_dict()
    >>> [panel["title"] for panel in spec["hconcat"]]
    ['even split', 'linear-partition DP']
    """
    datasets = stage_partition_datasets(*partitions, unit=unit)
    y = alt.Y("lo:Q", title=_("work per microbatch ({unit})").format(unit=unit))

    def panel(i, p):
        bars = alt.Chart(alt.Data(name=f"stage_bars_{i}")).mark_bar(stroke="white", strokeWidth=1).encode(
            x=alt.X("stage:O", title=_("pipeline stage")), y=y, y2="hi:Q",
            color=alt.Color("part:N", scale=alt.Scale(domain=[_("layers"), _("embedding / output layer")],
                                                      range=["#4c78a8", "#f58518"]),
                            legend=alt.Legend(title=None, orient="bottom")),
            tooltip=[alt.Tooltip("stage:O", title=_("pipeline stage")), alt.Tooltip("layer:Q", title=_("layer")),
                     alt.Tooltip("part:N", title=_("part"))])
        label = alt.Chart(alt.Data(name=f"stage_label_{i}"))
        beat = label.mark_rule(color="#e45756", strokeDash=[5, 3]).encode(y="y:Q") + label.mark_text(
            align="left", x=4, dy=-7, color="#e45756", fontWeight="bold").encode(y="y:Q", text="label:N")
        return alt.layer(bars, beat)

    return _method_panels(partitions, panel, datasets, width=max(160, 520 // len(partitions)), height=height)


# ----------------------------------------------------------------- backup ---


def _backup_rows(plan):
    fixed = plan.sync - plan.sync_per_worker * (plan.n + plan.backups)
    return [{"b": int(b), "n": plan.n, "compute": float(c), "fixed": float(f),
             "compute0": float(plan.compute[0]), "fixed0": float(fixed[0])}
            for b, c, f in zip(plan.backups, plan.compute, fixed)]


def _margin_rows(plan):
    rows = _backup_rows(plan)
    return [dict(r, gain=r["compute"] - nxt["compute"], fixed_next=nxt["fixed"], compute_next=nxt["compute"],
                 added=r["b"] + 1) for r, nxt in zip(rows, rows[1:])]


def backup_datasets(plan):
    """The named datasets of :func:`backup_step_chart` and :func:`backup_margin_chart`.

    An explorer swaps these into a drawn chart's spec when only the numbers
    change (same N range, same params), instead of rebuilding the chart.

    Returns
    -------
    dict
        ``{"backup_plan": rows, "backup_margin": rows}``.

    Examples
    --------
    >>> from straggle_edu.models.backup import backup_workers, inception_50_setup
    >>> data = backup_datasets(backup_workers(**inception_50_setup(), max_backups=8))
    >>> len(data["backup_plan"]), len(data["backup_margin"])   # b = 0..8, and the 8 backups added
    (9, 8)
    >>> round(data["backup_margin"][0]["gain"], 3)   # compute the first backup saves, seconds
    0.175
    """
    require(isinstance(plan, BackupPlan), "plan", plan, "a BackupPlan from backup_workers")
    return {"backup_plan": _backup_rows(plan), "backup_margin": _margin_rows(plan)}


def _backup_params(plan, sync_per_worker, price):
    per = plan.sync_per_worker if sync_per_worker is None else nonnegative("sync_per_worker", sync_per_worker)
    pr = plan.price if price is None else nonnegative("price", price)
    return [alt.param(name="sync_per_worker", value=per), alt.param(name="price", value=pr)]


_STEP = "datum.compute + datum.fixed + sync_per_worker * (datum.n + datum.b)"
_STEP0 = "datum.compute0 + datum.fixed0 + sync_per_worker * datum.n"


def backup_step_chart(plan, *, sync_per_worker=None, price=None, height=200):
    """Step time (top) and normalized speedup (bottom) against the number of backups.

    The step is ``compute(b) + sync``, with ``sync`` = the plan's fixed part
    plus ``sync_per_worker * (N + b)``; the normalized speedup is
    ``t(0)/t(b) * N / (N + price * b)``. Both params are computed in the
    browser, and so are the markers at the best b.

    Parameters
    ----------
    plan : BackupPlan
        From :func:`~straggle_edu.models.backup.backup_workers`.
    sync_per_worker, price : float, optional
        Starting values of the params (default: the plan's).
    height : int
        Height of each panel in pixels.

    Returns
    -------
    altair.VConcatChart
        Step time above, normalized speedup below, sharing the b axis.

    Examples
    --------
    >>> from straggle_edu.models.backup import backup_workers, inception_50_setup
    >>> spec = backup_step_chart(backup_workers(**inception_50_setup(), max_backups=8)).to_dict()
    >>> spec["params"]
    [{'name': 'sync_per_worker', 'value': 0.012}, {'name': 'price', 'value': 1.0}]
    >>> len(spec["vconcat"])   # step time above, normalized speedup below
    2
    """
    require(isinstance(plan, BackupPlan), "plan", plan, "a BackupPlan from backup_workers")
    base = alt.Chart(alt.Data(name="backup_plan")).transform_calculate(
        step=_STEP, compute_only="datum.compute + datum.fixed + sync_per_worker * datum.n",
        normalized=f"({_STEP0}) / ({_STEP}) * datum.n / (datum.n + price * datum.b)")
    x = alt.X("b:Q", title=_("backup workers b"), axis=alt.Axis(tickMinStep=1))
    b_tip = alt.Tooltip("b:Q", title="b")
    step = base.mark_line(point=True, strokeWidth=3).encode(
        x=x, y=alt.Y("step:Q", title=_("step time (s)"), scale=alt.Scale(zero=False)),
        tooltip=[b_tip, alt.Tooltip("step:Q", format=".4f", title=_("step time (s)"))]).add_params(
        *_backup_params(plan, sync_per_worker, price))
    no_comm = base.mark_line(strokeDash=[4, 3], color="gray").encode(x=x, y="compute_only:Q")
    no_comm += base.transform_filter(f"datum.b == {int(plan.backups[-1])}").mark_text(
        align="right", dy=12, color="gray").encode(x=x, y="compute_only:Q", text=alt.value(_("without the extra traffic")))
    best_t = base.transform_window(r="rank()", sort=[alt.SortField("step")]).transform_filter("datum.r == 1")
    best_t = best_t.mark_point(size=160, color="#e45756", filled=True).encode(x=x, y="step:Q") + best_t.mark_text(
        dy=-14, color="#e45756", fontWeight="bold").transform_calculate(
        label=vega_text(_("shortest step: b = {b}"), b="datum.b")).encode(x=x, y="step:Q", text="label:N")
    norm = base.mark_line(point=True, strokeWidth=3, color="#54a24b").encode(
        x=x, y=alt.Y("normalized:Q", title=_("normalized speedup"), scale=alt.Scale(zero=False)),
        tooltip=[b_tip, alt.Tooltip("normalized:Q", format=".4f", title=_("normalized speedup"))])
    one = alt.Chart(alt.Data(values=[{"y": 1.0}])).mark_rule(color="gray", strokeDash=[2, 2]).encode(y="y:Q")
    best_n = base.transform_window(r="rank()", sort=[alt.SortField("normalized", order="descending")]).transform_filter(
        "datum.r == 1").transform_calculate(label=vega_text(_("least GPU-time: b = {b}"), b="datum.b"))
    best_n = best_n.mark_point(size=160, color="#54a24b", filled=True).encode(x=x, y="normalized:Q") + best_n.mark_text(
        dy=-14, color="#2f6b2f", fontWeight="bold").encode(x=x, y="normalized:Q", text="label:N")
    top = alt.layer(step, no_comm, best_t).properties(width=460, height=height)
    chart = alt.vconcat(top, alt.layer(norm, one, best_n).properties(width=460, height=height))
    chart.datasets = {"backup_plan": _backup_rows(plan)}
    return chart


def backup_margin_chart(plan, *, sync_per_worker=None, price=None, height=260):
    """Where backup workers stop paying: what each added backup saves and costs.

    For the (b+1)-th backup: a bar of the compute it saves,
    ``compute(b) - compute(b+1)``, coloured by its verdict; a gray line at the
    communication it adds (below it, the step gets slower), and a black line
    at communication plus its price ``price * t(b+1) / (N + price * b)`` (below
    it, it costs more GPU-time than it saves). Params ``sync_per_worker`` and
    ``price``.

    Parameters
    ----------
    plan : BackupPlan
        With at least one backup.
    sync_per_worker, price : float, optional
        Starting values of the params (default: the plan's).
    height : int

    Returns
    -------
    altair.LayerChart
        The saving and the cost of each added backup, and where they cross.

    Examples
    --------
    >>> from straggle_edu.models.backup import backup_workers, inception_50_setup
    >>> spec = backup_margin_chart(backup_workers(**inception_50_setup(), max_backups=8), price=2.0).to_dict()
    >>> spec["params"]
    [{'name': 'sync_per_worker', 'value': 0.012}, {'name': 'price', 'value': 2.0}]
    """
    require(isinstance(plan, BackupPlan) and plan.backups.size >= 2, "plan", plan,
            "a BackupPlan with max_backups >= 1")
    margin = _margin_rows(plan)
    saves, faster, slower = (quoted(_(v)) for v in VERDICT_COLORS.domain)
    base = alt.Chart(alt.Data(name="backup_margin")).transform_calculate(
        comm="datum.fixed_next - datum.fixed + sync_per_worker",
        price_cost="price * (datum.compute_next + datum.fixed_next + sync_per_worker * (datum.n + datum.b + 1))"
                   " / (datum.n + price * datum.b)").transform_calculate(
        threshold="datum.comm + datum.price_cost",
        verdict=f"datum.gain > datum.comm + datum.price_cost ? {saves} : datum.gain > datum.comm ? {faster} : {slower}")
    x = alt.X("added:O", title=_("the backup added (b + 1)"))
    bars = base.mark_bar().encode(
        x=x, y=alt.Y("gain:Q", title=_("seconds per step")),
        color=alt.Color("verdict:N", scale=_translated(VERDICT_COLORS), title=_("this backup")),
        tooltip=[alt.Tooltip("gain:Q", format=".4f", title=_("compute saved")),
                 alt.Tooltip("comm:Q", format=".4f", title=_("communication added")),
                 alt.Tooltip("price_cost:Q", format=".4f", title=_("price"))]).add_params(
        *_backup_params(plan, sync_per_worker, price))
    comm = base.mark_line(color="gray", strokeDash=[4, 3], point=True).encode(x=x, y="comm:Q")
    cost = base.mark_line(color="black", point=True).encode(x=x, y="threshold:Q")
    last = base.transform_filter(f"datum.added == {int(plan.backups[-1])}")
    labels = last.mark_text(align="right", dy=-8, color="gray").encode(x=x, y="comm:Q", text=alt.value(
        _("communication it adds"))) + last.mark_text(align="right", dy=-8).encode(x=x, y="threshold:Q", text=alt.value(
        _("communication + its price")))
    chart = alt.layer(bars, comm, cost, labels).properties(width=460, height=height)
    chart.datasets = {"backup_margin": margin}
    return chart


def backup_tails_chart(plans, height=260):
    """Normalized speedup against b, one line per tail shape.

    Parameters
    ----------
    plans : dict
        ``{label: BackupPlan}``.
    height : int

    Returns
    -------
    altair.LayerChart
        One speedup line per tail shape, and a rule at 1 (no gain).

    Examples
    --------
    >>> from scipy import stats
    >>> from straggle_edu.models.backup import backup_workers, inception_50_setup
    >>> plans = {"normal": backup_workers(stats.norm(1.0, 0.05), 50, 6),
    ...          "long tail": backup_workers(**inception_50_setup(), max_backups=8)}
    >>> spec = backup_tails_chart(plans).to_dict()
    >>> spec["layer"][1]["encoding"]["color"]["sort"]   # one line per tail, a rule at 1
    ['normal', 'long tail']
    """
    require(isinstance(plans, dict) and plans and all(isinstance(p, BackupPlan) for p in plans.values()),
            "plans", plans, "a dict of {label: BackupPlan}")
    tail = {label: _(label) if label in _TAILS else str(label) for label in plans}
    rows = [{"b": int(b), "normalized": float(v), "tail": tail[label]}
            for label, p in plans.items() for b, v in zip(p.backups, p.normalized_speedup)]
    base = alt.Chart(alt.Data(values=rows))
    lines = base.mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("b:Q", title=_("backup workers b"), axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("normalized:Q", title=_("normalized speedup"), scale=alt.Scale(zero=False)),
        color=alt.Color("tail:N", title=_("one worker's step time"), sort=list(tail.values())),
        tooltip=[alt.Tooltip("tail:N", title=_("one worker's step time")), alt.Tooltip("b:Q", title="b"),
                 alt.Tooltip("normalized:Q", format=".4f", title=_("normalized speedup"))])
    one = alt.Chart(alt.Data(values=[{"y": 1.0}])).mark_rule(color="gray", strokeDash=[2, 2]).encode(y="y:Q")
    return alt.layer(one, lines).properties(width=460, height=height)


# ---------------------------------------------------------------- hedging ---


def _sf_expr(t):
    """Vega expression for P(latency > t) of the RequestLatency in params."""
    return (f"((1 - slow_prob) * (1 - cumulativeLogNormal({t}, log(body_median), body_spread))"
            f" + slow_prob * (1 - cumulativeLogNormal({t}, log(slow_median), slow_spread)))")


def hedging_chart(latency, delay_ms=10.0, fanout=1000, q=0.999, points=600, t_max=5.0):
    """P(the slowest of k requests takes longer than t), plain and hedged.

    A hedged request is late past t only if both copies are:
    ``S(t) S(t - d)`` for t >= d; the slowest of k is late when any is:
    ``1 - (1 - S)^k``. Computed in the browser from params ``delay_ms`` and
    ``fanout``; a dashed line marks 1 - q, where the curves cross the
    q-quantile, whose value (to the grid's 1.5%) is printed.

    Parameters
    ----------
    latency : RequestLatency
        One request's latency (a log-normal body and slow mode).
    delay_ms : float
        Starting hedging delay in milliseconds, >= 0.
    fanout : int
        Starting number of requests per answer, >= 1.
    q : float
        The quantile to mark, in (0, 1).
    points : int
        Grid points, 50..2000.
    t_max : float
        Right end of the time axis, seconds.

    Returns
    -------
    altair.LayerChart
        The plain and the hedged survival curves on a log axis.

    Examples
    --------
    >>> from straggle_edu.models.hedging import tail_at_scale_latency
    >>> spec = hedging_chart(tail_at_scale_latency(), delay_ms=10.0, fanout=1000).to_dict()
    >>> {p["name"]: p["value"] for p in spec["params"]}["delay_ms"]
    10.0
    >>> [p["name"] for p in spec["params"]][-2:]
    ['delay_ms', 'fanout']
    """
    require(isinstance(latency, RequestLatency), "latency", latency, "a RequestLatency")
    q = in_range("q", q, 0, 1, low_open=True, high_open=True)
    points = whole("points", points, 50, 2000)
    t_max = in_range("t_max", t_max, 0.01, 1e3)
    ts = np.geomspace(t_max * 1e-4, t_max, points)
    params = [alt.param(name=k, value=float(getattr(latency, k)))
              for k in ("body_median", "body_spread", "slow_prob", "slow_median", "slow_spread")]
    params += [alt.param(name="delay_ms", value=nonnegative("delay_ms", delay_ms)),
               alt.param(name="fanout", value=float(whole("fanout", fanout)))]
    plain, hedged = quoted(_("plain")), quoted(_("hedged"))
    s_now, s_late = _sf_expr("datum.t"), _sf_expr("max(datum.t - delay_ms / 1000, 1e-12)")
    base = alt.Chart(alt.Data(name="latency_grid")).transform_calculate(
        plain=f"max(1 - pow(1 - {s_now}, fanout), 1e-12)",
        hedged=f"max(1 - pow(1 - (datum.t < delay_ms / 1000 ? {s_now} : {s_now} * {s_late}), fanout), 1e-12)",
    ).transform_fold(["plain", "hedged"], as_=["key", "P"]).transform_calculate(
        ms="datum.t * 1000", request=f"datum.key == 'plain' ? {plain} : {hedged}")
    x = alt.X("ms:Q", scale=alt.Scale(type="log"), title=_("latency t (ms)"))
    y = alt.Y("P:Q", scale=alt.Scale(type="log", domain=[1e-6, 1], clamp=True), title=_("P(slowest of k > t)"))
    color = alt.Color("request:N", scale=alt.Scale(domain=[_("plain"), _("hedged")], range=["#e45756", "#4c78a8"]), title=None)
    lines = base.mark_line(strokeWidth=2.5).encode(x=x, y=y, color=color).add_params(*params)
    level = alt.Chart(alt.Data(values=[{"P": 1 - q}])).mark_rule(strokeDash=[5, 3], color="gray").encode(y=y)
    # Where each curve crosses 1 - q: interpolate log P against log t between grid points.
    cross = base.transform_window(prev_P="lag(P)", prev_ms="lag(ms)", groupby=["request"], sort=[{"field": "t"}])
    cross = cross.transform_filter(f"datum.P <= {1 - q} && datum.prev_P > {1 - q}").transform_calculate(
        ms=f"exp(log(datum.prev_ms) + (log({1 - q}) - log(datum.prev_P)) * log(datum.ms / datum.prev_ms)"
           " / log(datum.P / datum.prev_P))", P=f"{1 - q}")
    cross = cross.transform_calculate(label=vega_text(_("{request} p{q}: {ms} ms"), request="datum.request", q=quoted(f"{100 * q:g}"),
                                                      ms="format(datum.ms, ',.0f')"))
    dots = cross.mark_point(size=80, filled=True).encode(x=x, y=y, color=color)
    text = cross.mark_text(align="left", dx=6, dy=-8, fontWeight="bold").encode(x=x, y=y, color=color, text="label:N")
    chart = alt.layer(lines, level, dots, text).properties(width=460, height=300)
    chart.datasets = {"latency_grid": [{"t": float(t)} for t in ts]}
    return chart


def hedging_tradeoff_datasets(tradeoff):
    """The named datasets of :func:`hedging_tradeoff_chart`, for swapping new
    numbers into a drawn chart (an explorer's update).

    Examples
    --------
    >>> from straggle_edu.models.hedging import hedging_tradeoff, tail_at_scale_latency
    >>> tr = hedging_tradeoff(tail_at_scale_latency(), [0.005, 0.010, 0.050], q=0.999, fanout=1000)
    >>> data = hedging_tradeoff_datasets(tr)
    >>> [(r["delay_ms"], round(r["extra_pct"], 1), round(r["tail_ms"])) for r in data["hedging_tradeoff"]]
    [(5.0, 18.8, 71), (10.0, 2.0, 74), (50.0, 0.1, 95)]
    >>> round(data["hedging_unhedged"][0]["y"])   # the 99.9th percentile of 1,000 without hedging, ms
    1801
    """
    require(isinstance(tradeoff, HedgingTradeoff), "tradeoff", tradeoff, "a HedgingTradeoff")
    span = [1e3 * float(tradeoff.delays.min()), 1e3 * float(tradeoff.delays.max())]
    return {"hedging_tradeoff": tradeoff.records(),
            "hedging_unhedged": [{"y": 1e3 * tradeoff.unhedged, "x": span[0], "label": _("no hedging")}]}


def hedging_tradeoff_chart(tradeoff, delay_ms=10.0, height=180):
    """Fan-out tail latency (top) and extra requests (bottom) against the hedging delay.

    Parameters
    ----------
    tradeoff : HedgingTradeoff
        From :func:`~straggle_edu.models.hedging.hedging_tradeoff`.
    delay_ms : float
        Starting value of the param ``delay_ms``, marked on both panels.
    height : int

    Returns
    -------
    altair.VConcatChart
        Tail latency above, extra requests below, sharing the delay axis.

    Examples
    --------
    >>> from straggle_edu.models.hedging import hedging_tradeoff, tail_at_scale_latency
    >>> tr = hedging_tradeoff(tail_at_scale_latency(), [0.005, 0.010, 0.050], q=0.999, fanout=1000)
    >>> spec = hedging_tradeoff_chart(tr, delay_ms=10.0).to_dict()
    >>> spec["params"], len(spec["vconcat"])
    ([{'name': 'delay_ms', 'value': 10.0}], 2)
    """
    datasets = hedging_tradeoff_datasets(tradeoff)
    span = [1e3 * float(tradeoff.delays.min()), 1e3 * float(tradeoff.delays.max())]
    base = alt.Chart(alt.Data(name="hedging_tradeoff"))
    x = alt.X("delay_ms:Q", title=_("hedge after (ms)"), scale=alt.Scale(type="log", domain=span, nice=False))
    delay_tip = alt.Tooltip("delay_ms:Q", format=".3g", title=_("hedge after (ms)"))
    mark = alt.Chart(alt.Data(values=[{}])).transform_calculate(delay_ms="delay_ms").mark_rule(
        color="black", strokeDash=[4, 3]).encode(x=x)
    top = base.mark_line(strokeWidth=2.5, color="#4c78a8").encode(
        x=x, y=alt.Y("tail_ms:Q", scale=alt.Scale(type="log"), title=_("p{q} of the fan-out (ms)").format(q=f"{100 * tradeoff.q:g}")),
        tooltip=[delay_tip, alt.Tooltip("tail_ms:Q", format=",.1f", title=_("p{q} of the fan-out (ms)").format(q=f"{100 * tradeoff.q:g}"))])
    plain = alt.Chart(alt.Data(name="hedging_unhedged"))
    plain = plain.mark_rule(color="#e45756").encode(y="y:Q") + plain.mark_text(
        align="left", dy=-7, color="#e45756").encode(x="x:Q", y="y:Q", text="label:N")
    top = alt.layer(top, plain, mark).add_params(alt.param(name="delay_ms", value=nonnegative("delay_ms", delay_ms)))
    bottom = base.mark_area(color="#f58518", opacity=0.7).encode(
        x=x, y=alt.Y("extra_pct:Q", title=_("extra requests (%)")),
        tooltip=[delay_tip, alt.Tooltip("extra_pct:Q", format=".2f", title=_("extra requests (%)"))])
    chart = alt.vconcat(top.properties(width=460, height=height),
                        alt.layer(bottom, mark).properties(width=460, height=height * 0.7))
    chart.datasets = datasets
    return chart


# -------------------------------------------------------------------- sgd ---


def sgd_datasets(comparison, points=150):
    """The named dataset of :func:`sgd_loss_chart`, for swapping new runs into
    a drawn chart (an explorer's update). Losses are floored at the smallest
    positive one, for the log scale.

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> from straggle_edu.models.sgd import compare_sgd, make_problem
    >>> c = compare_sgd(StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), make_problem(rng=0), 2, 60.0)
    >>> rows = sgd_datasets(c, points=5)["sgd_runs"]
    >>> [(r["mode"], round(r["loss"], 4)) for r in rows if r["time"] == 60.0]   # excess loss after 60 s
    [('sync', 0.0053), ('drop', 0.001), ('async', 0.0027)]
    """
    require(isinstance(comparison, SGDComparison), "comparison", comparison, "an SGDComparison")
    rows = comparison.records(points=whole("points", points, 2, 1000))
    floor = max(min((r["loss"] for r in rows if r["loss"] > 0), default=1e-12), 1e-12)
    for r in rows:
        r["loss"] = max(r["loss"], floor)
        r["mode"] = _(r["mode"]) if r["mode"] in MODE_COLORS.domain else r["mode"]
    return {"sgd_runs": rows}


def sgd_loss_chart(comparison, points=150, height=280):
    """Excess loss against wall-clock time, one line per run (log scale).

    Parameters
    ----------
    comparison : SGDComparison
        From :func:`~straggle_edu.models.sgd.compare_sgd`.
    points : int
        Time grid points per run, 2..1000.
    height : int

    Returns
    -------
    altair.Chart
        One excess-loss line per run against seconds.

    Examples
    --------
    >>> from straggle_edu.models import StepTime
    >>> from straggle_edu.models.sgd import compare_sgd, make_problem
    >>> c = compare_sgd(StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), make_problem(rng=0), 2, 60.0)
    >>> spec = sgd_loss_chart(c).to_dict()
    >>> spec["mark"]["type"], spec["encoding"]["y"]["scale"], spec["encoding"]["color"]["scale"]["domain"]
    ('line', {'type': 'log'}, ['sync', 'drop', 'async'])
    """
    datasets = sgd_datasets(comparison, points)
    chart = alt.Chart(alt.Data(name="sgd_runs")).mark_line(strokeWidth=2.5, interpolate="step-after").encode(
        x=alt.X("time:Q", title=_("wall-clock time (s)")),
        y=alt.Y("loss:Q", scale=alt.Scale(type="log"), title=_("excess loss")),
        color=alt.Color("mode:N", scale=_translated(MODE_COLORS), title=None),
        tooltip=[alt.Tooltip("mode:N", title=_("mode")), alt.Tooltip("time:Q", format=".1f", title=_("wall-clock time (s)")),
                 alt.Tooltip("loss:Q", format=".3~e", title=_("excess loss"))],
    ).properties(width=460, height=height)
    chart.datasets = datasets
    return chart
