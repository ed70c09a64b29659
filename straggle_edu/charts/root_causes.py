"""Root-cause charts: what production shows, and one picture per cause.

- :func:`study_waste_chart`: the OSDI 2025 study's waste figures (per-job
  median, p90, p99, and the share of all GPU-hours).
- :func:`sequence_lengths_chart`: a long-tailed length distribution, on
  log-spaced bins.
- :func:`worker_load_chart`: one step's per-worker compute time, with the
  balanced ideal and the slowest marked.
- :func:`stage_costs_chart`: work per pipeline stage, layers and extras
  stacked, against the even split.
- :func:`gc_chart`: step times with random against planned GC.
- :func:`attribution_chart`, :func:`worker_heatmap_chart`,
  :func:`per_step_chart`: a :class:`~straggle_edu.traces.diagnose.Diagnosis`
  drawn three ways (what-if slowdown by group, by worker, by step).

Each chart has a ``*_rows`` twin returning the rows it draws, so an explorer
can swap new numbers into a drawn chart without rebuilding it. Rows go in as
plain ``{"values": rows}`` dicts, not ``alt.Data``, which Altair would wrap and
validate row by row.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import require, whole
from ..i18n import N_, _
from ..models.causes import StageImbalance
from ..models.osdi2025 import STUDY
from ..traces.diagnose import STRAGGLING, Diagnosis
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = [
    "attribution_chart",
    "attribution_rows",
    "gc_chart",
    "gc_rows",
    "heatmap_rows",
    "per_step_chart",
    "per_step_rows",
    "sequence_lengths_chart",
    "sequence_lengths_rows",
    "stage_costs_chart",
    "stage_costs_rows",
    "study_waste_chart",
    "worker_heatmap_chart",
    "worker_load_chart",
    "worker_load_rows",
]

_GC = {N_("random GC"): "#e45756", N_("planned GC"): "#54a24b"}
# The attribution facets; op types keep the names the trace gives them.
_GROUPS = (N_("dp rank"), N_("stage"), N_("op type"))


def study_waste_chart():
    """The OSDI 2025 study's waste: per-job median, p90, p99, and overall.

    Returns
    -------
    altair.LayerChart
        The study's percentiles as bars with their values as text.

    Examples
    --------
    >>> from straggle_edu.charts._data import rows_of
    >>> spec = study_waste_chart().to_dict()
    >>> [(r["what"], r["waste"]) for r in rows_of(spec, spec["data"])]
    [('median job', 0.078), ('p90 job', 0.213), ('p99 job', 0.45), ('all GPU-hours', 0.104)]
    >>> spec["title"]
    'OSDI 2025: 3,079 jobs of >= 128 GPUs'
    """
    keys = [("waste_median", _("median job")), ("waste_p90", _("p90 job")), ("waste_p99", _("p99 job")),
            ("gpu_hours_wasted", _("all GPU-hours"))]
    rows = [{"what": label, "waste": float(STUDY[k]), "order": i} for i, (k, label) in enumerate(keys)]
    base = alt.Chart({"values": rows}).encode(
        y=alt.Y("what:N", sort=alt.EncodingSortField("order"), title=None),
        x=alt.X("waste:Q", axis=alt.Axis(format="%"), title=_("resources wasted by stragglers")))
    bars = base.mark_bar(color="#e45756")
    text = base.mark_text(align="left", dx=4).encode(text=alt.Text("waste:Q", format=".1%"))
    return (bars + text).properties(width=360, height=140, title=_("OSDI 2025: 3,079 jobs of >= 128 GPUs"))


def sequence_lengths_rows(lengths, bins=40):
    """(histogram rows, quantile rows) of :func:`sequence_lengths_chart`.

    Examples
    --------
    >>> rows, marks = sequence_lengths_rows([1, 10, 100, 1000], bins=5)
    >>> [r["share"] for r in rows]   # five log-spaced bins, a quarter of the lengths in four of them
    [0.25, 0.25, 0.0, 0.25, 0.25]
    >>> marks[0]
    {'q': 'median', 'tokens': 55.0}
    """
    x = np.asarray(lengths, dtype=float).ravel()
    require(x.size > 0 and np.isfinite(x).all() and (x >= 1).all(), "lengths", x, "tokens >= 1")
    bins = whole("bins", bins, low=5, high=200)
    edges = np.geomspace(x.min(), x.max() * 1.0001 + 1, bins + 1)
    counts, __ = np.histogram(x, edges)
    rows = [{"lo": float(a), "hi": float(b), "share": float(c / x.size)} for a, b, c in zip(edges, edges[1:], counts)]
    marks = [{"q": q, "tokens": float(np.quantile(x, p))} for q, p in ((_("median"), 0.5), ("p99", 0.99))]
    return rows, marks


def sequence_lengths_chart(lengths, bins=40):
    """Histogram of sequence lengths on log-spaced bins (tokens).

    Parameters
    ----------
    lengths : array of int
        Tokens per sequence, >= 1.
    bins : int
        Number of bins, 5..200.

    Returns
    -------
    altair.LayerChart
        The histogram, with dashed rules at the marked lengths.

    Examples
    --------
    >>> from straggle_edu.models.causes import sequence_lengths
    >>> spec = sequence_lengths_chart(sequence_lengths(1000, rng=0)).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]   # histogram, median and p99 rules
    ['rect', 'rule']
    """
    rows, marks = sequence_lengths_rows(lengths, bins)
    scale = alt.Scale(type="log")
    bars = alt.Chart({"values": rows}).mark_rect(color="#4c78a8").encode(
        x=alt.X("lo:Q", scale=scale, title=_("sequence length (tokens)")), x2="hi:Q",
        y=alt.Y("share:Q", title=_("share of sequences")), y2=alt.datum(0))
    rules = alt.Chart({"values": marks}).mark_rule(strokeDash=[4, 3], color="#e45756").encode(
        x=alt.X("tokens:Q", scale=scale), tooltip=[alt.Tooltip("q:N", title=_("quantile")),
                                                   alt.Tooltip("tokens:Q", format=",.0f", title=_("tokens"))])
    return (bars + rules).properties(width=380, height=200)


def worker_load_rows(worker_times):
    """(bar rows, rule rows) of :func:`worker_load_chart`.

    Examples
    --------
    >>> bars, lines = worker_load_rows([1.0, 1.2, 0.8])
    >>> [r["worker"] for r in bars if r["slowest"]]
    [1]
    >>> lines   # the step waits 0.2 s longer than a balanced one
    [{'what': 'balanced (mean)', 'time': 1.0}, {'what': 'step (slowest)', 'time': 1.2}]
    """
    t = np.asarray(worker_times, dtype=float).ravel()
    require(0 < t.size <= 1024 and np.isfinite(t).all(), "worker_times", t, "1 to 1024 finite seconds")
    slowest = int(np.argmax(t))
    rows = [{"worker": i, "time": float(v), "slowest": i == slowest} for i, v in enumerate(t)]
    lines = [{"what": _("balanced (mean)"), "time": float(t.mean())}, {"what": _("step (slowest)"), "time": float(t.max())}]
    return rows, lines


def worker_load_chart(worker_times, *, label=N_("compute time (s)")):
    """One step's per-worker time: the step waits for the tallest bar.

    Parameters
    ----------
    worker_times : array of float
        Seconds per worker (at most 1024 workers).
    label : str
        Y-axis title.

    Returns
    -------
    altair.LayerChart
        One bar per worker (the slowest in red), and rules at the reference times.

    Examples
    --------
    >>> spec = worker_load_chart([1.0, 1.2, 0.8]).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]], spec["resolve"]
    (['bar', 'rule'], {'scale': {'color': 'independent'}})
    """
    rows, lines = worker_load_rows(worker_times)
    bars = alt.Chart({"values": rows}).mark_bar().encode(
        x=alt.X("worker:O", axis=alt.Axis(labels=len(rows) <= 32), title=_("worker")), y=alt.Y("time:Q", title=_(label)),
        color=alt.condition("datum.slowest", alt.value("#e45756"), alt.value("#4c78a8")),
        tooltip=[alt.Tooltip("worker:O", title=_("worker")), alt.Tooltip("time:Q", format=".4g", title=_(label))])
    rules = alt.Chart({"values": lines}).mark_rule(strokeDash=[4, 3]).encode(
        y="time:Q", color=alt.Color("what:N", scale=alt.Scale(range=["#54a24b", "#e45756"]), title=None))
    return (bars + rules).properties(width=420, height=200).resolve_scale(color="independent")


def stage_costs_rows(result):
    """(bar rows, balanced-line rows) of :func:`stage_costs_chart`.

    Examples
    --------
    >>> from straggle_edu.models.causes import stage_imbalance
    >>> bars, ideal = stage_costs_rows(stage_imbalance(32, 4, 8, output_layers=2.3))
    >>> [(r["stage"], r["part"], round(r["seconds"], 1)) for r in bars if r["stage"] == 3]
    [(3, 'layers', 8.0), (3, 'embedding / output layer', 2.3)]
    >>> ideal   # (4 * 8 + 2.3) / 4
    [{'ideal': 8.575}]
    """
    require(isinstance(result, StageImbalance), "result", result, "a StageImbalance from stage_imbalance()")
    layers = result.layers_per_stage * result.layer_time
    rows = [{"stage": s, "part": _("layers"), "seconds": float(v), "layers": int(n)} for s, (v, n) in
            enumerate(zip(layers, result.layers_per_stage))]
    rows += [{"stage": s, "part": _("embedding / output layer"), "seconds": float(v), "layers": int(n)}
             for s, (v, n) in enumerate(zip(result.extra_costs, result.layers_per_stage)) if v > 0]
    return rows, [{"ideal": float(result.stage_costs.mean())}]


def stage_costs_chart(result):
    """Work per pipeline stage (layers plus extras) against the even split.

    Parameters
    ----------
    result : StageImbalance

    Returns
    -------
    altair.LayerChart
        Stacked bars per stage and a rule at the even split.

    Examples
    --------
    >>> from straggle_edu.models.causes import stage_imbalance
    >>> stage_costs_chart(stage_imbalance(32, 4, 8, output_layers=2.3)).to_dict()["title"]   # the 1F1B step's
    'slowdown 1.128x'
    """
    rows, mean = stage_costs_rows(result)
    bars = alt.Chart({"values": rows}).mark_bar().encode(
        x=alt.X("stage:O", title=_("pipeline stage")), y=alt.Y("sum(seconds):Q", title=_("seconds per microbatch")),
        color=alt.Color("part:N", scale=alt.Scale(domain=[_("layers"), _("embedding / output layer")], range=["#4c78a8", "#f58518"]),
                        title=None),
        tooltip=[alt.Tooltip("stage:O", title=_("pipeline stage")), alt.Tooltip("part:N", title=_("part")),
                 alt.Tooltip("layers:Q", title=_("layers")), alt.Tooltip("seconds:Q", format=".3g", title=_("seconds per microbatch"))])
    rule = alt.Chart({"values": mean}).mark_rule(strokeDash=[4, 3], color="#54a24b").encode(
        y="ideal:Q", tooltip=[alt.Tooltip("ideal:Q", format=".3g", title=_("balanced"))])
    return (bars + rule).properties(width=300, height=220, title=_("slowdown {factor}x").format(factor=f"{result.slowdown:.3f}"))


def gc_rows(random_steps, planned_steps, *, max_points=400):
    """(step rows, mean rows) of :func:`gc_chart`.

    Examples
    --------
    >>> rows, means = gc_rows([1.0, 1.5, 1.0], [1.1, 1.1, 1.1])
    >>> len(rows), means
    (6, [{'mode': 'random GC', 'mean': 1.1666666666666667}, {'mode': 'planned GC', 'mean': 1.1}])
    """
    max_points = whole("max_points", max_points, low=10, high=2000)
    rows, means = [], []
    for name, x in (("random GC", random_steps), ("planned GC", planned_steps)):
        label = _(name)
        x = np.asarray(x, dtype=float).ravel()
        require(x.size > 0 and np.isfinite(x).all(), name, x, "finite step times")
        rows += [{"step": i, "time": float(v), "mode": label} for i, v in enumerate(x[:max_points])]
        means.append({"mode": label, "mean": float(x.mean())})
    return rows, means


def gc_chart(random_steps, planned_steps, *, max_points=400):
    """Step times under random against planned (synchronized) GC.

    Parameters
    ----------
    random_steps, planned_steps : array of float
        Step times in seconds (only the first ``max_points`` are drawn; the
        dashed means use them all).
    max_points : int
        How many steps to draw, 10..2000.

    Returns
    -------
    altair.LayerChart
        The two step-time series, random and planned, over steps, with reference rules.

    Examples
    --------
    >>> spec = gc_chart([1.0, 1.5, 1.0], [1.1, 1.1, 1.1]).to_dict()
    >>> [layer["mark"]["type"] for layer in spec["layer"]]   # step times, and a rule at each mean
    ['line', 'rule']
    """
    rows, means = gc_rows(random_steps, planned_steps, max_points=max_points)
    color = alt.Color("mode:N", scale=alt.Scale(domain=[_(k) for k in _GC], range=list(_GC.values())), title=None)
    points = alt.Chart({"values": rows}).mark_line(point=True, strokeWidth=1).encode(
        x=alt.X("step:Q", title=_("step")), y=alt.Y("time:Q", title=_("step time (s)"), scale=alt.Scale(zero=False)), color=color)
    rules = alt.Chart({"values": means}).mark_rule(strokeDash=[6, 3], strokeWidth=2).encode(
        y="mean:Q", color=color, tooltip=[alt.Tooltip("mode:N", title=_("GC")), alt.Tooltip("mean:Q", format=".4g", title=_("mean (s)"))])
    return (points + rules).properties(width=460, height=200)


def _check_dx(dx):
    require(isinstance(dx, Diagnosis), "diagnosis", dx, "a Diagnosis from diagnose_job()")


def attribution_rows(diagnosis):
    """Rows ``{"group", "id", "S"}`` of :func:`attribution_chart`.

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> rows = attribution_rows(diagnose(straggler_scenario("slow worker", rng=0)))
    >>> [(r["id"], round(r["S"], 2)) for r in rows if r["group"] == "dp rank"]   # dp rank 1 is slow
    [('0', 1.0), ('1', 1.16), ('2', 1.0), ('3', 1.0)]
    """
    _check_dx(diagnosis)
    d = diagnosis
    dp, stage, op = (_(g) for g in _GROUPS)
    rows = [{"group": dp, "id": str(i), "S": float(v)} for i, v in enumerate(d.by_dp)]
    rows += [{"group": stage, "id": str(i), "S": float(v)} for i, v in enumerate(d.by_stage)]
    rows += [{"group": op, "id": k, "S": float(v)} for k, v in d.by_op.items()]
    return rows


def heatmap_rows(diagnosis):
    """Rows ``{"dp", "stage", "S"}`` of :func:`worker_heatmap_chart`.

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> rows = heatmap_rows(diagnose(straggler_scenario("slow worker", rng=0)))
    >>> len(rows), max(rows, key=lambda r: r["S"])["dp"], max(rows, key=lambda r: r["S"])["stage"]
    (16, 1, 0)
    """
    _check_dx(diagnosis)
    w = diagnosis.by_worker
    return [{"dp": d, "stage": s, "S": float(w[d, s])} for d in range(w.shape[0]) for s in range(w.shape[1])]


def per_step_rows(diagnosis):
    """Rows ``{"step", "S"}`` of :func:`per_step_chart`'s line.

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> rows = per_step_rows(diagnose(straggler_scenario("slow worker", rng=0)))
    >>> len(rows), round(min(r["S"] for r in rows), 2) > 1.1   # persistent: every step is slow
    (20, True)
    """
    _check_dx(diagnosis)
    return [{"step": i, "S": float(v)} for i, v in enumerate(diagnosis.per_step)]


def attribution_chart(diagnosis):
    """What-if slowdown S_X of each DP rank, stage and op type (red from the straggling line S = 1.10).

    Parameters
    ----------
    diagnosis : Diagnosis

    Returns
    -------
    altair.FacetChart
        One bar panel per group (dp rank, stage, op type).

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> spec = attribution_chart(diagnose(straggler_scenario("slow worker", rng=0))).to_dict()
    >>> spec["facet"]["column"]["sort"]
    ['dp rank', 'stage', 'op type']
    """
    rows = attribution_rows(diagnosis)
    base = alt.Chart({"values": rows}).mark_bar(color="#4c78a8").encode(
        x=alt.X("id:N", title=None, sort=None),
        y=alt.Y("S:Q", title="S_X", scale=alt.Scale(zero=False)),
        color=alt.condition(f"datum.S >= {STRAGGLING}", alt.value("#e45756"), alt.value("#4c78a8")),
        tooltip=[alt.Tooltip("group:N", title=_("group")), alt.Tooltip("id:N", title="X"), alt.Tooltip("S:Q", format=".3f", title="S_X")],
    ).properties(width=150, height=160)
    column = alt.Column("group:N", sort=[_(g) for g in _GROUPS], title=None)
    return base.facet(column=column).resolve_scale(x="independent")


def worker_heatmap_chart(diagnosis):
    """S of each worker (dp rank x stage), ``min(S_dp, S_stage)``.

    Parameters
    ----------
    diagnosis : Diagnosis

    Returns
    -------
    altair.Chart
        A dp rank x stage grid of cells coloured by S.

    Examples
    --------
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> spec = worker_heatmap_chart(diagnose(straggler_scenario("slow worker", rng=0))).to_dict()
    >>> spec["mark"]["type"], spec["encoding"]["color"]["field"]
    ('rect', 'S')
    """
    rows = heatmap_rows(diagnosis)
    return alt.Chart({"values": rows}).mark_rect().encode(
        x=alt.X("stage:O", title=_("stage")), y=alt.Y("dp:O", title=_("dp rank")),
        color=alt.Color("S:Q", scale=alt.Scale(scheme="reds", domainMin=1), title="S"),
        tooltip=[alt.Tooltip("dp:O", title=_("dp rank")), alt.Tooltip("stage:O", title=_("stage")),
                 alt.Tooltip("S:Q", format=".3f", title="S")],
    ).properties(width=160, height=160)


def per_step_chart(diagnosis, threshold=STRAGGLING):
    """S of each step: flat and high (persistent) or spiky (transient).

    Parameters
    ----------
    diagnosis : Diagnosis
    threshold : float
        A step at or above it counts as straggling (dashed line).

    Returns
    -------
    altair.LayerChart
        S per step and the dashed straggling line.

    Examples
    --------
    >>> from straggle_edu.charts._data import rows_of
    >>> from straggle_edu.models.causes import straggler_scenario
    >>> from straggle_edu.traces.diagnose import diagnose_job as diagnose
    >>> spec = per_step_chart(diagnose(straggler_scenario("slow worker", rng=0)), threshold=1.05).to_dict()
    >>> rows_of(spec, spec["layer"][1]["data"])   # the dashed threshold line
    [{'t': 1.05}]
    """
    rows = per_step_rows(diagnosis)
    line = alt.Chart({"values": rows}).mark_line(point=True).encode(
        x=alt.X("step:Q", title=_("step")), y=alt.Y("S:Q", title=_("step slowdown S"), scale=alt.Scale(zero=False)),
        tooltip=[alt.Tooltip("step:Q", title=_("step")), alt.Tooltip("S:Q", format=".3f", title="S")])
    rule = alt.Chart({"values": [{"t": float(threshold)}]}).mark_rule(strokeDash=[4, 3], color="#e45756").encode(y="t:Q")
    return (line + rule).properties(width=300, height=160)
