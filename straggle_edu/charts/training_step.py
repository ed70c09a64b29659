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
- :func:`grid_barriers_chart`: a drawing of the grid, one row per worker
  (replica x stage) with its TP ranks across, and one step's barriers
  marked: the TP collectives of each row, the pipeline's sends between
  rows, the DP all-reduce between replicas; :func:`grid_step_chart` sets it
  beside the step's Gantt chart, row for row.

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
from ..models.barriers import BARRIER_KINDS, GRID_ROLES, StepBarriers
from ..models.pipeline import PipelineRun
from ..models.training_step import DataParallelScaling
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = [
    "PIPELINE_COLORS",
    "GRID_COLORS",
    "barrier_overhead_chart",
    "grid_chart",
    "BARRIER_COLORS",
    "grid_barriers_rows",
    "grid_barriers_chart",
    "grid_step_chart",
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
#: One colour per kind of :data:`~straggle_edu.models.barriers.BARRIER_KINDS`: the DP all-reduce is the Gantt's grey.
BARRIER_COLORS = ["#f58518", "#54a24b", "#7f7f7f"]
# The barrier kinds (straggle_edu.models.barriers.BARRIER_KINDS), and their legend entries, for the catalog.
_KINDS = (N_("TP collective"), N_("PP send/recv"), N_("DP all-reduce"))
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


def _segments(kind, per_step, what, lines):
    return [{"kind": kind, "per_step": per_step, "what": what, "x": x, "x2": x2, "y": y, "y2": y2}
            for x, x2, y, y2 in lines]


def grid_barriers_rows(grid):
    """``(ranks, segments)``: what :func:`grid_barriers_chart` draws, in grid units (one row per worker).

    A worker is a replica's stage (the rows of :func:`pipeline_gantt_chart`,
    row ``dp * pp + stage``); its TP ranks sit at x = 0 .. tp - 1. Each
    segment is a line of one barrier kind: the outline of a TP group's box,
    the link between a TP rank and its twin on the next stage, or the bracket
    joining a stage's workers across the replicas.

    Examples
    --------
    >>> from straggle_edu.models.barriers import step_barriers
    >>> ranks, lines = grid_barriers_rows(step_barriers(2, 4, 4))
    >>> len(ranks), ranks[5]["worker"], ranks[5]["tp"]
    (32, 'dp 0 · stage 1', 1)
    >>> from collections import Counter
    >>> Counter(r["kind"] for r in lines)   # 8 boxes of 4 sides; 24 links; 4 brackets of 1 + 2 lines
    Counter({'TP collective': 32, 'PP send/recv': 24, 'DP all-reduce': 12})
    """
    require(isinstance(grid, StepBarriers), "grid", grid, "a StepBarriers from step_barriers()")
    D, P, T = grid.dp, grid.pp, grid.tp
    worker = lambda d, s: _("dp {dp} · stage {stage}").format(dp=d, stage=s)
    ranks = [{"row": d * P + s, "tp": t, "worker": worker(d, s)} for d in range(D) for s in range(P) for t in range(T)]
    kinds = [_(k) for k in BARRIER_KINDS]
    lines = []
    left, right = -0.45, T - 0.55
    if grid.tp_per_step:
        for row in range(D * P):
            box = [(left, right, row - 0.4, row - 0.4), (left, right, row + 0.4, row + 0.4),
                   (left, left, row - 0.4, row + 0.4), (right, right, row - 0.4, row + 0.4)]
            lines += _segments(kinds[0], grid.tp_per_step, worker(row // P, row % P), box)
    for d in range(D):
        for s in range(P - 1):
            links = [(t, t, d * P + s + 0.28, d * P + s + 0.72) for t in range(T)]
            lines += _segments(kinds[1], grid.pp_per_step, f"{worker(d, s)} → {worker(d, s + 1)}", links)
    for s in range(P if grid.dp_per_step else 0):
        x = right + 0.35 * (s + 1)
        rows = [d * P + s for d in range(D)]
        bracket = [(x, x, rows[0], rows[-1])] + [(right, x, r, r) for r in rows]
        lines += _segments(kinds[2], grid.dp_per_step, _("stage {stage}, every replica").format(stage=s), bracket)
    return ranks, lines


def grid_barriers_chart(grid, *, row_height=40):
    """A drawing of a DP x PP x TP grid with one step's barriers marked.

    One row per worker (a replica's stage), its TP ranks as squares across;
    the TP collectives outline each row, the pipeline's sends link the rows
    of a replica, and the DP all-reduce brackets each stage's rows across
    the replicas. The legend says how many of each kind one step holds.

    Parameters
    ----------
    grid : StepBarriers
        From :func:`~straggle_edu.models.barriers.step_barriers`.
    row_height : int
        Pixels per row (:func:`grid_step_chart` matches the Gantt chart's rows).

    Returns
    -------
    altair.LayerChart
        The ranks, and a line per barrier segment coloured by kind.

    Examples
    --------
    >>> from straggle_edu.models.barriers import step_barriers
    >>> spec = grid_barriers_chart(step_barriers(2, 4, 4)).to_dict()
    >>> spec["layer"][1]["encoding"]["color"]["scale"]["domain"]
    ['TP collective · 256 a step', 'PP send/recv · 16 a step', 'DP all-reduce · 1 a step']
    """
    ranks, lines = grid_barriers_rows(grid)
    rows = grid.dp * grid.pp
    counts = (grid.tp_per_step, grid.pp_per_step, grid.dp_per_step)
    legend = {_(k): _("{kind} · {n} a step").format(kind=_(k), n=n) for k, n in zip(BARRIER_KINDS, counts)}
    lines = [dict(r, legend=legend[r["kind"]]) for r in lines]
    x = alt.X("x:Q", axis=None, scale=alt.Scale(domain=[-0.6, grid.tp - 0.3 + 0.35 * grid.pp]))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(domain=[-0.5, rows - 0.5], reverse=True))
    squares = alt.Chart({"values": ranks}).transform_calculate(
        x="datum.tp - 0.3", x2="datum.tp + 0.3", y="datum.row - 0.28", y2="datum.row + 0.28").mark_rect(
        color="#4c78a8").encode(x=x, x2="x2:Q", y=y, y2="y2:Q", tooltip=[
            alt.Tooltip("worker:N", title=_("worker")), alt.Tooltip("tp:O", title=_("TP rank"))])
    color = alt.Color("legend:N", title=_("one step's barriers"), sort=list(legend.values()),
                      scale=alt.Scale(domain=list(legend.values()), range=BARRIER_COLORS),
                      legend=alt.Legend(orient="bottom", direction="vertical"))
    links = alt.Chart({"values": lines}).mark_rule(strokeWidth=2.5).encode(
        x=x, x2="x2:Q", y=y, y2="y2:Q", color=color,
        tooltip=[alt.Tooltip("kind:N", title=_("barrier")), alt.Tooltip("what:N", title=_("between")),
                 alt.Tooltip("per_step:Q", title=_("times a step"))])
    width = int(34 * (grid.tp + 0.35 * grid.pp + 0.3))
    return alt.layer(squares, links, view=alt.ViewBackground(stroke=None)).properties(
        width=width, height=row_height * rows, title=_("{dp} × {pp} × {tp} GPUs").format(dp=grid.dp, pp=grid.pp, tp=grid.tp))


def grid_step_chart(grid, run, *, row_height=40, width=520):
    """The grid drawing of :func:`grid_barriers_chart` beside the step's Gantt chart, row for row.

    Parameters
    ----------
    grid : StepBarriers
        The grid; its replicas and stages must be ``run``'s.
    run : PipelineRun
        The step, from :func:`~straggle_edu.models.pipeline.simulate_pipeline`.
    row_height, width : int
        Pixels per worker row, and the Gantt chart's width.

    Returns
    -------
    altair.HConcatChart

    Examples
    --------
    >>> from straggle_edu.models.barriers import step_barriers
    >>> from straggle_edu.models.pipeline import simulate_pipeline
    >>> run = simulate_pipeline(4, 8, forward=1.0, backward=2.0, dp=2, allreduce=1.0, optimizer=0.5)
    >>> spec = grid_step_chart(step_barriers(2, 4, 4), run).to_dict()
    >>> [view.get("height") for view in spec["hconcat"]]
    [320, 320]
    """
    require(isinstance(grid, StepBarriers), "grid", grid, "a StepBarriers from step_barriers()")
    require(isinstance(run, PipelineRun), "run", run, "a PipelineRun from simulate_pipeline()")
    require((grid.dp, grid.pp) == (run.dp, run.stages), "grid", f"{grid.dp} x {grid.pp}",
            f"the run's replicas x stages, {run.dp} x {run.stages}")
    gantt = pipeline_gantt_chart(run, width=width).properties(height=row_height * run.dp * run.stages)
    drawing = grid_barriers_chart(grid, row_height=row_height)
    return alt.hconcat(drawing, gantt, spacing=8).resolve_scale(color="independent")
