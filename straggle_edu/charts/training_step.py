"""Training-step charts: the 1F1B Gantt chart, and DP scaling against n.

- :func:`pipeline_gantt_chart`: every worker (dp rank x stage) on a row, its
  forwards and backwards as bars coloured by microbatch (or by op), the wait
  at the DP barrier, the gradient all-reduce and the optimizer; the critical
  path outlined in black, and the ops the reader slowed marked in red.
- :func:`delay_response_chart`: how much longer the step gets as one op (or
  a set of ops) is slowed more and more: flat while the slack absorbs it.
- :func:`dp_scaling_chart`: speed-up or scaling efficiency against n, one
  line per scenario, with the perfect line for reference.
- :func:`dp_breakdown_chart`: each step split into compute, waiting for the
  slowest, and sync, at a few n.
- :func:`barrier_overhead_chart`: what the barriers inside a step cost,
  against how many there are (the sum of maxima against the maximum of sums).
- :func:`grid_chart`: a DP x PP x TP grid of ranks, coloured by where each
  one waits for a single slow TP rank.

Rows go in as plain ``{"values": rows}`` dicts rather than ``alt.Data``: the
Vega-Lite spec is the same, but Altair wraps every row of an ``alt.Data`` in
schema objects and validates it, which costs about 0.3 s per 1,000 rows, far
over an explorer's callback budget.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import require
from ..i18n import N_, _
from ..models.barriers import GRID_ROLES
from ..models.pipeline import PipelineRun
from ..models.training_step import DataParallelScaling

__all__ = [
    "PIPELINE_COLORS",
    "GRID_COLORS",
    "barrier_overhead_chart",
    "grid_chart",
    "delay_response_chart",
    "delay_response_rows",
    "dp_breakdown_chart",
    "dp_breakdown_rows",
    "dp_scaling_chart",
    "dp_scaling_rows",
    "gantt_colors",
    "gantt_rows",
    "gantt_size",
    "pipeline_gantt_chart",
]

#: Colours of the non-compute parts of a step, shared by every pipeline picture
#: (keys are English msgids; the charts draw them translated).
PIPELINE_COLORS = {N_("wait"): "#e8e8e8", N_("all-reduce"): "#7f7f7f", N_("optimizer"): "#3b3b3b"}
_MB_PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b", "#9d755d",
               "#ff9da6", "#bab0ac"]
_OP_COLORS = {N_("forward"): "#9ecae9", N_("backward"): "#4c78a8"}
#: One colour per role of :data:`~straggle_edu.models.barriers.GRID_ROLES`, in its order.
GRID_COLORS = ["#d62728", "#ff9896", "#fdae6b", "#c6dbef"]
_PARTS = {N_("compute"): "#4c78a8", N_("wait"): "#e45756", N_("sync"): "#7f7f7f"}
# The grid's roles (straggle_edu.models.barriers.GRID_ROLES), for the catalog.
_ROLES = (N_("the slow rank"), N_("its TP group: every collective"), N_("its pipeline: the stage"),
          N_("other replicas: the DP all-reduce"))
# Scenario names that notebook 05 and the training-step explorer pass in; others are shown as given.
_SCENARIOS = (N_("no jitter"), N_("5% jitter"), N_("5% jitter, 1% pauses"), N_("your setting"), N_("no jitter, no pauses"))


def _known(name, known):
    """``name`` translated if it is one of ``known``, else as given (a reader's own label)."""
    return _(name) if name in known else name


def gantt_rows(run, color="microbatch", slowed=None):
    """The rows :func:`pipeline_gantt_chart` draws: one per compute op,
    all-reduce and optimizer, plus each worker's wait at the DP barrier.

    An explorer that only changes durations can swap these rows into the
    chart's spec instead of rebuilding it.

    Examples
    --------
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> rows = gantt_rows(simulate_pipeline(2, 2, forward=1.0, backward=2.0))
    >>> len(rows), rows[0]["worker"], rows[0]["label"], rows[0]["end"]
    (12, 'dp 0 · stage 0', 'mb 0', 1.0)
    >>> sorted({r["label"] for r in rows})
    ['all-reduce', 'mb 0', 'mb 1', 'optimizer']
    """
    require(isinstance(run, PipelineRun), "run", run, "a PipelineRun from simulate_pipeline()")
    require(color in ("microbatch", "op"), "color", color, "'microbatch' or 'op'")
    ops = run.ops
    keep = np.isin(ops["kind"], ["F", "B", "allreduce", "optimizer"])
    mark = np.zeros(len(ops), bool) if slowed is None else np.asarray(slowed, bool)
    require(mark.shape == (len(ops),), "slowed", mark, f"a boolean mask over run.ops ({len(ops)} rows)")
    names = {"F": "forward", "B": "backward", "allreduce": "all-reduce", "optimizer": "optimizer"}
    rows = []
    for i in np.flatnonzero(keep):
        r = ops[i]
        kind = names[str(r["kind"])]
        compute = kind in ("forward", "backward")
        label = (_("mb {i}").format(i=r["microbatch"]) if color == "microbatch" else _(kind)) if compute else _(kind)
        rows.append({"worker": _("dp {dp} · stage {stage}").format(dp=r["dp"], stage=r["stage"]),
                     "order": int(r["dp"] * run.stages + r["stage"]), "op": kind, "op_name": _(kind), "label": label,
                     "microbatch": int(r["microbatch"]), "chunk": int(r["chunk"]),
                     "start": float(r["start"]), "end": float(r["end"]), "slack": float(r["slack"]),
                     "critical": bool(r["critical"]), "slowed": bool(mark[i]), "fade": 0.55 if kind == "forward" else 1.0})
    last = {}
    for r in rows:
        if r["op"] in ("forward", "backward"):
            last[r["order"]] = max(last.get(r["order"], 0.0), r["end"])
    for r in [r for r in rows if r["op"] == "all-reduce" and r["start"] > last.get(r["order"], r["start"])]:
        rows.append(dict(r, op="wait", op_name=_("wait"), label=_("wait"), start=last[r["order"]], end=r["start"], critical=False,
                         slowed=False, fade=1.0, microbatch=-1))
    return rows


def gantt_colors(rows, color="microbatch"):
    """The colour scale of :func:`pipeline_gantt_chart`: ``(domain, range)``.

    Microbatches (or forward/backward) in order, then the wait, the
    all-reduce and the optimizer.

    Examples
    --------
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> rows = gantt_rows(simulate_pipeline(2, 2, forward=1.0, backward=2.0), color="op")
    >>> gantt_colors(rows, color="op")[0]
    ['forward', 'backward', 'wait', 'all-reduce', 'optimizer']
    """
    require(color in ("microbatch", "op"), "color", color, "'microbatch' or 'op'")
    compute = sorted({r["label"] for r in rows if r["op"] in ("forward", "backward")}, key=lambda s: (len(s), s))
    if color == "microbatch":
        palette = [_MB_PALETTE[i % len(_MB_PALETTE)] for i in range(len(compute))]
    else:
        compute = [_(k) for k in _OP_COLORS if _(k) in compute]
        palette = [_OP_COLORS[k] for k in _OP_COLORS if _(k) in compute]
    return compute + [_(k) for k in PIPELINE_COLORS], palette + list(PIPELINE_COLORS.values())


def gantt_size(run, width=640):
    """``(width, height)`` in pixels of :func:`pipeline_gantt_chart` for ``run``.

    Examples
    --------
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> gantt_size(simulate_pipeline(2, 2, forward=1.0, backward=2.0, dp=2))   # 22 px per worker row
    (640, 88)
    """
    return int(width), 22 * run.dp * run.stages


def pipeline_gantt_chart(run, *, color="microbatch", slowed=None, width=640):
    """A Gantt chart of one training step: workers x time.

    Parameters
    ----------
    run : PipelineRun
        From :func:`~straggle_edu.models.pipeline.simulate_pipeline`
        (at most a few thousand ops).
    color : {"microbatch", "op"}
        Colour forwards and backwards by microbatch (forwards lighter), or
        by op.
    slowed : array of bool, optional
        Mask over ``run.ops`` of the ops the reader slowed; they get a red
        marker.
    width : int
        Pixels.

    Returns
    -------
    altair.LayerChart
        One row per worker, a bar per op (the critical path outlined), idle time left blank.

    Examples
    --------
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> spec = pipeline_gantt_chart(simulate_pipeline(2, 2, forward=1.0, backward=2.0)).to_dict()
    >>> spec["title"]   # (2 microbatches + 1 bubble) x 3 s
    'step time 9 s'
    >>> [layer["mark"]["type"] for layer in spec["layer"]]
    ['bar', 'bar', 'point']
    """
    require(isinstance(run, PipelineRun), "run", run, "a PipelineRun from simulate_pipeline()")
    require(len(run.ops) <= 5000, "run", f"{len(run.ops)} ops", "a step of at most 5000 ops to draw")
    rows = gantt_rows(run, color, slowed)
    domain, palette = gantt_colors(rows, color)
    scale = alt.Scale(domain=domain, range=palette)
    y = alt.Y("worker:N", sort=alt.EncodingSortField("order", order="ascending"), title=None)
    base = alt.Chart().encode(x=alt.X("start:Q", title=_("time in the step (s)")), x2="end:Q", y=y)
    bars = base.mark_bar(height={"band": 0.8}).encode(
        color=alt.Color("label:N", scale=scale, title=None, sort=domain),
        opacity=alt.Opacity("fade:Q", scale=None),
        tooltip=[alt.Tooltip("worker:N", title=_("worker")), alt.Tooltip("op_name:N", title=_("op")),
                 alt.Tooltip("microbatch:Q", title=_("microbatch")), alt.Tooltip("chunk:Q", title=_("chunk")),
                 alt.Tooltip("start:Q", format=".4g", title=_("start (s)")), alt.Tooltip("end:Q", format=".4g", title=_("end (s)")),
                 alt.Tooltip("slack:Q", format=".3g", title=_("slack (s)"))],
    )
    critical = base.transform_filter("datum.critical").mark_bar(
        height={"band": 0.8}, fillOpacity=0, stroke="black", strokeWidth=2)
    marks = base.transform_filter("datum.slowed").transform_calculate(mid="(datum.start + datum.end) / 2").mark_point(
        shape="triangle-down", filled=True, color="#d62728", size=80, yOffset=-9, opacity=1).encode(x="mid:Q")
    width, height = gantt_size(run, width)
    chart = alt.layer(bars, critical, marks, data={"values": rows})
    return chart.properties(width=width, height=height, title=_("step time {t} s").format(t=f"{run.step_time:.4g}"))


def delay_response_rows(extra, step_increase):
    """Rows ``{"extra", "increase"}`` of :func:`delay_response_chart`.

    Examples
    --------
    >>> delay_response_rows([0.0, 1.0, 2.0], [0.0, 0.0, 0.5])
    [{'extra': 0.0, 'increase': 0.0}, {'extra': 1.0, 'increase': 0.0}, {'extra': 2.0, 'increase': 0.5}]
    """
    x = np.asarray(extra, dtype=float).ravel()
    y = np.asarray(step_increase, dtype=float).ravel()
    require(x.size == y.size and x.size >= 2, "step_increase", y, f"{x.size} values, one per delay")
    return [{"extra": float(a), "increase": float(b)} for a, b in zip(x, y)]


def delay_response_chart(extra, step_increase, *, slack=None, label=N_("the slowed op")):
    """Step-time increase against the delay added to one op (or a set of ops).

    Parameters
    ----------
    extra : array of float
        Seconds added (the x axis).
    step_increase : array of float
        How much longer the step got, seconds (same length).
    slack : float, optional
        The op's slack in the unslowed step; drawn as a dashed rule, where
        the curve leaves zero for a single op.
    label : str
        What was slowed, for the title.

    Returns
    -------
    altair.LayerChart
        The step-time increase against the delay, the diagonal, and the slack as a dashed rule.

    Examples
    --------
    >>> spec = delay_response_chart([0.0, 1.0, 2.0], [0.0, 0.0, 0.5], slack=1.5).to_dict()
    >>> spec["title"], len(spec["layer"])   # diagonal, curve, and the slack rule
    ('delaying the slowed op', 3)
    """
    rows = delay_response_rows(extra, step_increase)
    base = alt.Chart({"values": rows}).encode(x=alt.X("extra:Q", title=_("delay added (s)")))
    line = base.mark_line(point=True).encode(y=alt.Y("increase:Q", title=_("step gets longer by (s)")))
    diag = base.mark_line(strokeDash=[2, 2], color="#bbbbbb").encode(y="extra:Q")
    chart = diag + line
    if slack is not None:
        rule = alt.Chart({"values": [{"slack": float(slack)}]}).mark_rule(strokeDash=[6, 3], color="#e45756")
        chart = chart + rule.encode(x="slack:Q", tooltip=[alt.Tooltip("slack:Q", format=".3g", title=_("slack (s)"))])
    return chart.properties(width=360, height=220, title=_("delaying {what}").format(what=_known(label, (N_("the slowed op"),))))


def dp_scaling_rows(scenarios, measure="efficiency"):
    """Rows ``{"n", "scenario", "value"}`` of :func:`dp_scaling_chart`'s curves.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> from straggle_edu.models.training_step import data_parallel_scaling
    >>> s = data_parallel_scaling([1, 8], StepTime(1.0, jitter=0.05))
    >>> [round(r["value"], 3) for r in dp_scaling_rows({"5% jitter": s})]   # 1 / (1 + 0.05 * 1.424)
    [1.0, 0.934]
    """
    require(measure in ("efficiency", "speedup"), "measure", measure, "'efficiency' or 'speedup'")
    rows = []
    for label, s in dict(scenarios).items():
        require(isinstance(s, DataParallelScaling), f"scenario {label!r}", s, "a DataParallelScaling")
        values = s.efficiency if measure == "efficiency" else s.speedup
        rows += [{"n": int(k), "scenario": _known(str(label), _SCENARIOS), "value": float(v)} for k, v in zip(s.n, values)]
    return rows


def dp_scaling_chart(scenarios, *, measure="efficiency", n=None):
    """Speed-up or scaling efficiency of data-parallel training against n.

    Parameters
    ----------
    scenarios : dict of {label: DataParallelScaling}
        One curve each, from :func:`~straggle_edu.models.training_step.data_parallel_scaling`.
    measure : {"efficiency", "speedup"}
        Efficiency (speed-up / n) or speed-up; a dashed line shows perfect scaling.
    n : float, optional
        Starting value of the param ``n_mark``: a vertical rule a slider can move.

    Returns
    -------
    altair.LayerChart
        The scaling curve, the dashed perfect line and the n rule.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> from straggle_edu.models.training_step import data_parallel_scaling
    >>> s = data_parallel_scaling([1, 8, 64], StepTime(1.0, jitter=0.05))
    >>> spec = dp_scaling_chart({"5% jitter": s}, n=8).to_dict()
    >>> spec["params"]
    [{'name': 'n_mark', 'value': 8.0}]
    >>> len(spec["layer"])   # perfect scaling, the curves, the rule
    3
    """
    rows = dp_scaling_rows(scenarios, measure)
    ns = sorted({r["n"] for r in rows})
    perfect = [{"n": k, "value": 1.0 if measure == "efficiency" else float(k)} for k in ns]
    x = alt.X("n:Q", scale=alt.Scale(type="log"), title=_("workers n"))
    title = _("scaling efficiency") if measure == "efficiency" else _("speed-up over one worker")
    yscale = alt.Scale(domain=[0, 1.02]) if measure == "efficiency" else alt.Scale(type="log")
    ideal = alt.Chart({"values": perfect}).mark_line(strokeDash=[4, 4], color="#999999").encode(x=x, y="value:Q")
    lines = alt.Chart({"values": rows}).mark_line().encode(
        x=x, y=alt.Y("value:Q", title=title, scale=yscale), color=alt.Color("scenario:N", title=None),
        tooltip=[alt.Tooltip("scenario:N", title=_("scenario")), alt.Tooltip("n:Q", title="n"),
                 alt.Tooltip("value:Q", format=".3f", title=title)])
    mark = alt.param(name="n_mark", value=float(n if n is not None else ns[-1]))
    rule = alt.Chart({"values": [{}]}).mark_rule(color="#e45756").encode(x=alt.X("n_mark:Q", scale=alt.Scale(type="log")))
    rule = rule.transform_calculate(n_mark="n_mark").add_params(mark)
    return (ideal + lines + rule).properties(width=420, height=260)


def dp_breakdown_rows(scaling, ns=None):
    """Rows ``{"n", "part", "seconds", "order"}`` of :func:`dp_breakdown_chart`.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> from straggle_edu.models.training_step import data_parallel_scaling
    >>> s = data_parallel_scaling([1, 8], StepTime(1.0, jitter=0.05))
    >>> [(r["part"], round(r["seconds"], 3)) for r in dp_breakdown_rows(s, ns=[8])]
    [('compute', 1.0), ('wait', 0.071), ('sync', 0.0)]
    """
    require(isinstance(scaling, DataParallelScaling), "scaling", scaling, "a DataParallelScaling")
    rows = scaling.rows()
    if ns is not None:
        keep = {int(k) for k in ns}
        rows = [r for r in rows if r["n"] in keep]
    require(0 < len(rows) <= 90, "ns", ns, "between 1 and 30 worker counts present in scaling.n")
    order = {part: i for i, part in enumerate(_PARTS)}
    return [dict(r, part=_(r["part"]), order=order[r["part"]]) for r in rows]


def dp_breakdown_chart(scaling, ns=None):
    """Each DP step split into compute, waiting for the slowest, and sync.

    Parameters
    ----------
    scaling : DataParallelScaling
    ns : sequence of int, optional
        Which n to show (default: all, at most 30).

    Returns
    -------
    altair.Chart
        A stacked bar per n: compute, waiting and sync.

    Examples
    --------
    >>> from straggle_edu.models.step_time import StepTime
    >>> from straggle_edu.models.training_step import data_parallel_scaling
    >>> spec = dp_breakdown_chart(data_parallel_scaling([1, 8], StepTime(1.0, jitter=0.05))).to_dict()
    >>> spec["mark"]["type"], spec["encoding"]["color"]["scale"]["domain"]
    ('bar', ['compute', 'wait', 'sync'])
    """
    rows = dp_breakdown_rows(scaling, ns)
    return alt.Chart({"values": rows}).mark_bar().encode(
        x=alt.X("n:O", title=_("workers n")),
        y=alt.Y("seconds:Q", title=_("expected step (s)")),
        color=alt.Color("part:N", scale=alt.Scale(domain=[_(k) for k in _PARTS], range=list(_PARTS.values())), title=None),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("n:O", title="n"), alt.Tooltip("part:N", title=_("part")),
                 alt.Tooltip("seconds:Q", format=".4g", title=_("expected step (s)"))],
    ).properties(width=360, height=240)


def barrier_overhead_chart(rows, *, barriers=None):
    """Expected overhead of a step against the barriers inside it (barriers on a log scale).

    Parameters
    ----------
    rows : list of dict
        ``{"barriers", "overhead"}``, from
        :func:`~straggle_edu.models.barriers.barrier_overhead_rows`.
    barriers : int, optional
        Where to put the marker (param ``barriers_mark``); default the last row.

    Returns
    -------
    altair.LayerChart
        The overhead curve against the number of barriers, and a rule a slider moves.

    Examples
    --------
    >>> from straggle_edu.models.barriers import barrier_overhead_rows
    >>> spec = barrier_overhead_chart(barrier_overhead_rows(8, 0.05, 8), barriers=8).to_dict()
    >>> spec["params"][0]["name"], spec["layer"][0]["encoding"]["y"]["axis"]["format"]
    ('barriers_mark', '.1%')
    """
    require(len(rows) >= 1, "rows", rows, "at least one {barriers, overhead} row")
    x = alt.X("barriers:Q", scale=alt.Scale(type="log", base=2), title=_("barriers per step"))
    y = alt.Y("overhead:Q", axis=alt.Axis(format=".1%"), title=_("expected overhead"))
    line = alt.Chart({"values": rows}).mark_line(point=True).encode(
        x=x, y=y, tooltip=[alt.Tooltip("barriers:Q", title=_("barriers per step")),
                           alt.Tooltip("overhead:Q", format=".2%", title=_("expected overhead"))])
    mark = alt.param(name="barriers_mark", value=int(barriers if barriers is not None else rows[-1]["barriers"]))
    rule = alt.Chart({"values": [{}]}).mark_rule(color="#e45756").encode(
        x=alt.X("barriers_mark:Q", scale=alt.Scale(type="log", base=2)))
    rule = rule.transform_calculate(barriers_mark="barriers_mark").add_params(mark)
    return (line + rule).properties(width=380, height=240)


def grid_chart(rows):
    """Every rank of a DP x PP x TP grid, coloured by where it waits for one slow TP rank.

    One panel per DP replica; stages down, TP ranks across. Each cell says
    how many seconds longer that rank waits per step than without the slow rank.

    Parameters
    ----------
    rows : list of dict
        From :func:`~straggle_edu.models.barriers.grid_waits`.

    Returns
    -------
    altair.FacetChart
        One panel per PP stage, a cell per DP x TP rank.

    Examples
    --------
    >>> from straggle_edu.models.barriers import grid_waits
    >>> spec = grid_chart(grid_waits(2, 2, 2, slow=(1, 0, 1), factor=2.0, microbatches=2)).to_dict()
    >>> spec["facet"]["column"]["field"], spec["spec"]["layer"][0]["mark"]["type"]
    ('replica', 'rect')
    """
    require(len(rows) >= 1, "rows", rows, "at least one rank")
    data = [dict(r, replica=_("DP replica {dp}").format(dp=r["dp"]), label=f"{r['added']:+.1f} s",
                 role=_known(r["role"], _ROLES)) for r in rows]
    color = alt.Color("role:N", scale=alt.Scale(domain=[_(role) for role in GRID_ROLES], range=GRID_COLORS), title=_("waits at"),
                      legend=alt.Legend(orient="bottom", columns=2))
    base = alt.Chart().encode(x=alt.X("tp:O", title=_("TP rank")), y=alt.Y("stage:O", title=_("PP stage")))
    tips = [alt.Tooltip("dp:O", title="DP"), alt.Tooltip("stage:O", title=_("PP stage")), alt.Tooltip("tp:O", title=_("TP rank")),
            alt.Tooltip("role:N", title=_("waits at")), alt.Tooltip("tp_wait:Q", format=".1f", title=_("TP wait (s)")),
            alt.Tooltip("pipeline_wait:Q", format=".1f", title=_("pipeline wait (s)")),
            alt.Tooltip("dp_wait:Q", format=".1f", title=_("DP wait (s)"))]
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(color=color, tooltip=tips)
    text = base.mark_text(fontSize=11).encode(text="label:N")
    layered = alt.layer(cells, text, data={"values": data}).properties(width=150, height=150)
    return layered.facet(column=alt.Column("replica:N", title=None))
