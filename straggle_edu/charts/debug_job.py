"""Charts of a what-if analysis of a real (or generated) trace.

- :func:`trace_heatmap_chart`: every worker (DP rank x stage, or rank) against
  every step, coloured by its attributed slowdown. Click a row: the panel
  below draws that worker's per-step slowdown against the job's, so a
  persistent straggler (a flat high line) and a one-off (a spike) look
  different. The selection is a named param (``worker``), so an explorer
  can drill into the clicked worker's ops.
- :func:`trace_attribution_chart`: S_X for every optype, stage, DP rank or
  rank, largest first, against the job's S.
- :func:`worker_ops_chart`: one worker's ops in one step: the recorded
  timeline above, the replay with ideal durations below; the ops that ran
  long stand out in red.
- :func:`collective_tell_chart`: each DP rank's (or stage's) mean recorded
  time in one collective; the straggler's bar is the shortest.
- :func:`arrival_chart`: a profiler trace's collectives in order, each rank's
  arrival after the first; the last to arrive is on top, and every other
  rank waits the distance up to it.
- :func:`cause_gallery_chart`: the fingerprints of the injected causes: S,
  M_W, M_S and the share of slowed steps, one row per cause.
"""

from __future__ import annotations

import functools

import altair as alt
import numpy as np

from .._validate import require
from ..i18n import N_, _, fill, get_language
from ..traces.diagnose import worker_label
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = ["trace_heatmap_chart", "trace_attribution_chart", "worker_ops_chart", "cause_gallery_chart",
           "collective_tell_chart", "arrival_chart",
           "TRACE_MAX_ROWS"]

TRACE_MAX_ROWS = 5000
# Data go in as plain {"values": rows} dicts: alt.Data wraps every row in a
# schema object, which doubles the time to build and serialise a chart, and
# the explorer rebuilds these on every click. The spec is the same.
_SCALE = alt.Scale(scheme="reds", domainMin=1.0)


# Titles of the attributions (Analysis.by_*), and the injected causes of
# straggle_edu.traces.synthetic.CAUSES; optype names stay as the trace writes them.
_BY_TITLES = {"by_optype": N_("by optype"), "by_stage": N_("by stage"), "by_dp_rank": N_("by dp rank"),
              "by_worker": N_("by worker"), "by_rank": N_("by rank")}
# (a cause's msgid is its preset key; the Chinese names the cause and keeps the key).
_CAUSES = (N_("none"), N_("slow-worker"), N_("last-stage"), N_("seq-imbalance"), N_("gc-pauses"), N_("slow-link"))


def _check_analysis(analysis):
    require(hasattr(analysis, "worker_step_slowdown") and hasattr(analysis, "per_step"), "analysis",
            type(analysis).__name__, "an Analysis from straggle_edu.traces.analyze()")


def _heatmap_rows(analysis, max_rows):
    values = np.asarray(analysis.worker_step_slowdown)
    workers = list(analysis.workers)
    steps = [int(s) for s in analysis.steps]
    keep = np.arange(len(workers))
    if len(workers) * max(len(steps), 1) > max_rows:
        # the workers that matter most: the largest mean attributed slowdown
        k = max(1, max_rows // max(len(steps), 1))
        keep = np.sort(np.argsort(-values.mean(axis=1), kind="stable")[:k])
    job = [float(v) for v in analysis.per_step.values()]
    rows = []
    for rank, i in enumerate(keep):
        for j, step in enumerate(steps):
            rows.append({"worker": worker_label(workers[i], short=True), "order": rank, "step": step,
                         "S": float(values[i, j]), "job": job[j]})
    return rows, len(keep) < len(workers)


def trace_heatmap_chart(analysis, *, width=520, max_rows=TRACE_MAX_ROWS):
    """Workers x steps, coloured by each worker's slowdown; click a worker for its line.

    Parameters
    ----------
    analysis : Analysis
        From :func:`straggle_edu.traces.analyze`.
    width : int
        Pixels.
    max_rows : int
        At most this many cells; larger jobs keep their slowest workers.

    Returns
    -------
    altair.VConcatChart
        With a point selection named ``worker`` (fields ``worker``).

    Examples
    --------
    >>> from straggle_edu.charts._data import rows_of
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.whatif import analyze_ops
    >>> a = analyze_ops(synthetic_trace(dp=2, pp=1, microbatches=2, steps=2, slow_worker=(1, 0, 3.0)))
    >>> spec = trace_heatmap_chart(a).to_dict()
    >>> spec["params"][0]["name"]   # the clicked worker, for an explorer to drill into
    'worker'
    >>> [(r["worker"], r["step"], round(r["S"], 2)) for r in rows_of(spec, spec["data"])]
    [('dp 0 · stage 0', 0, 1.0), ('dp 0 · stage 0', 1, 1.0), ('dp 1 · stage 0', 0, 1.46), ('dp 1 · stage 0', 1, 1.46)]
    """
    _check_analysis(analysis)
    rows, trimmed = _heatmap_rows(analysis, max_rows)
    n_workers = len({r["worker"] for r in rows})
    chart = _heatmap_skeleton(int(width), min(16 * n_workers, 640), bool(trimmed), get_language()).copy(deep=False)
    chart.data = {"values": rows}
    return chart


@functools.lru_cache(maxsize=16)
def _heatmap_skeleton(width, height, trimmed, lang):
    """The heatmap without its data (building the encodings costs more than the data), in language ``lang``."""
    pick = alt.selection_point(name="worker", fields=["worker"], on="click", clear="dblclick", empty=False)
    base = alt.Chart()
    y = alt.Y("worker:N", sort=alt.EncodingSortField("order", order="ascending"), title=None)
    heat = base.mark_rect().encode(
        x=alt.X("step:O", title=_("step")), y=y,
        color=alt.Color("S:Q", scale=_SCALE, title=_("slowdown")),
        stroke=alt.condition(pick, alt.value("black"), alt.value(None)),
        tooltip=[alt.Tooltip("worker:N", title=_("worker")), alt.Tooltip("step:O", title=_("step")),
                 alt.Tooltip("S:Q", format=".3f", title="S"), alt.Tooltip("job:Q", format=".3f", title=_("job S"))],
    ).add_params(pick).properties(width=width, height=height,
                                   title=_("worker slowdown per step (slowest workers)") if trimmed else _("worker slowdown per step"))
    job = base.transform_filter("datum.order == 0").mark_line(color="#7f7f7f", strokeDash=[4, 3]).encode(
        x="step:O", y=alt.Y("job:Q", title=_("slowdown"), scale=alt.Scale(zero=False)))
    mine = base.transform_filter(pick).mark_line(point=True, color="#d62728").encode(
        x="step:O", y="S:Q", tooltip=[alt.Tooltip("worker:N", title=_("worker")), alt.Tooltip("step:O", title=_("step")),
                                      alt.Tooltip("S:Q", format=".3f", title="S")])
    return alt.vconcat(heat, (job + mine).properties(width=width, height=120,
                                                        title=_("the clicked worker (red) and the job (grey)")))


def trace_attribution_chart(analysis, by="by_optype", *, top=20, width=360):
    """S_X of each optype / stage / DP rank / rank, largest first; the job's S as a line.

    Parameters
    ----------
    analysis : Analysis
    by : {"by_optype", "by_stage", "by_dp_rank", "by_worker", "by_rank"}
    top : int
        Bars shown (the largest S_X).

    Returns
    -------
    altair.LayerChart
        Bars of S_X per group and a rule at the job's S.

    Examples
    --------
    GC pauses (0.1 s, in each worker's step with probability 0.04) show up
    by optype: ``gc`` comes first, and ``top`` keeps the three largest.

    >>> from straggle_edu.charts._data import rows_of
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.whatif import analyze_ops
    >>> a = analyze_ops(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, gc_pauses=(0.04, 0.1), rng=0))
    >>> spec = trace_attribution_chart(a, "by_optype", top=3).to_dict()
    >>> rows = rows_of(spec, spec["layer"][0]["data"])
    >>> spec["title"], len(rows), (rows[0]["x"], round(rows[0]["S"], 2))
    ('by optype', 3, ('gc', 1.26))
    """
    _check_analysis(analysis)
    table = getattr(analysis, by, None) if isinstance(by, str) else None
    require(table is not None, "by", by, "an attribution this analysis has (by_optype, by_stage, ...)")
    items = analysis.ranking(by)[:top]
    rows = [{"x": worker_label(k, short=True) if isinstance(k, tuple) else str(k), "S": float(v), "order": i}
            for i, (k, v) in enumerate(items)]
    lo = min([1.0, float(analysis.slowdown)] + [r["S"] for r in rows])
    hi = max([1.0, float(analysis.slowdown)] + [r["S"] for r in rows])
    pad = 0.05 * max(hi - lo, 0.02)
    scale = alt.Scale(domain=[lo - pad, hi + pad], clamp=True)  # S_X sit near 1: start the bars there
    bars = alt.Chart({"values": rows}).mark_bar(color="#4c78a8").encode(
        x=alt.X("S:Q", title=_("S_X: slowdown with only X at its recorded durations"), scale=scale),
        y=alt.Y("x:N", sort=alt.EncodingSortField("order", order="ascending"), title=None),
        tooltip=[alt.Tooltip("x:N", title="X"), alt.Tooltip("S:Q", format=".4f", title="S_X")])
    job = alt.Chart({"values": [{"S": float(analysis.slowdown)}]}).mark_rule(color="#d62728", strokeDash=[4, 3]).encode(
        x="S:Q", tooltip=[alt.Tooltip("S:Q", format=".4f", title=_("job S"))])
    title = _(_BY_TITLES[by]) if by in _BY_TITLES else by.replace("_", " ")
    return (bars + job).properties(width=width, height=18 * len(rows) + 10, title=title)


_OP_KINDS = (N_("compute"), N_("send/recv"), N_("collective"), N_("local op"), N_("ran long"))
_OP_RANGE = ["#4c78a8", "#9ecae9", "#7f7f7f", "#bab0ac", "#d62728"]


def _op_kind(op):
    if op.startswith(("forward-compute", "backward-compute")):
        return "compute"
    if "send" in op or "recv" in op:
        return "send/recv"
    if op.startswith(("optimizer", "gc", "layernorm")) and "clip" not in op:
        return "local op"  # no communication (optimizer, GC, layernorm); not 11's "local" SGD scheme
    return "collective"


def worker_ops_chart(ops, *, title="", long_factor=1.2, width=620):
    """One worker's ops in one step: recorded (top) and replayed with ideal durations (bottom).

    Parameters
    ----------
    ops : list of dict
        From :func:`straggle_edu.traces.whatif.worker_timeline`.
    title : str
    long_factor : float
        An op whose work is this many times its ideal is drawn red.

    Returns
    -------
    altair.Chart
        Two rows of op bars on one time axis: as recorded, and as replayed.

    Examples
    --------
    >>> from straggle_edu.charts._data import rows_of
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.whatif import analyze_ops, worker_timeline
    >>> a = analyze_ops(synthetic_trace(dp=2, pp=1, microbatches=2, steps=2, slow_worker=(1, 0, 3.0)))
    >>> spec = worker_ops_chart(worker_timeline(a, 1, 0, 0), title="dp 1, step 0").to_dict()
    >>> rows = rows_of(spec, spec["data"])
    >>> sorted({r["lane"] for r in rows}), len(rows)   # each of the 10 ops, recorded and replayed
    (['ideal replay', 'recorded'], 20)
    """
    require(isinstance(ops, (list, tuple)) and len(ops) <= TRACE_MAX_ROWS // 2, "ops", f"{type(ops).__name__}",
            "a list of at most 2500 ops from worker_timeline()")
    rows = []
    for r in ops:
        kind = _("ran long") if r["excess"] >= long_factor else _(_op_kind(r["op"]))
        common = {"op": r["op"], "kind": kind, "microbatch": r["microbatch"], "excess": float(r["excess"]),
                  "work": float(r["work"]), "ideal": float(r["ideal_work"])}
        rows.append(dict(common, lane=_("recorded"), start=r["recorded_start"],
                         end=r["recorded_start"] + r["recorded_duration"]))
        rows.append(dict(common, lane=_("ideal replay"), start=r["ideal_start"], end=r["ideal_end"]))
    chart = _ops_skeleton(int(width), get_language()).copy(deep=False)
    chart.data = {"values": rows}
    chart.title = title
    return chart


@functools.lru_cache(maxsize=8)
def _ops_skeleton(width, lang):
    """The ops chart without its data, in language ``lang`` (the cache keys on it)."""
    return alt.Chart().mark_bar(height={"band": 0.7}).encode(
        x=alt.X("start:Q", title=_("seconds from the start of the step")), x2="end:Q",
        y=alt.Y("lane:N", sort=[_("recorded"), _("ideal replay")], title=None),
        color=alt.Color("kind:N", scale=alt.Scale(domain=[_(k) for k in _OP_KINDS], range=_OP_RANGE), title=None),
        tooltip=[alt.Tooltip("op:N", title=_("op")), alt.Tooltip("microbatch:Q", title=_("microbatch")),
                 alt.Tooltip("work:Q", format=".4g", title=_("work (s)")),
                 alt.Tooltip("ideal:Q", format=".4g", title=_("ideal (s)")), alt.Tooltip("excess:Q", format=".2f", title=_("excess")),
                 alt.Tooltip("start:Q", format=".4g", title=_("start (s)")), alt.Tooltip("end:Q", format=".4g", title=_("end (s)"))],
    ).properties(width=width, height=90)


_GALLERY = (("S", "S"), ("m_w", "M_W"), ("m_s", "M_S"), ("persistent", N_("slowed steps")))


def cause_gallery_chart(rows, *, width=360):
    """A table-like chart of each cause's S, M_W, M_S and share of slowed steps.

    Parameters
    ----------
    rows : list of dict
        From :func:`straggle_edu.traces.synthetic.cause_gallery`.

    Returns
    -------
    altair.LayerChart
        One row per cause, one column per figure, with the values as text.

    Examples
    --------
    >>> from straggle_edu.charts._data import rows_of
    >>> from straggle_edu.traces.synthetic import cause_gallery
    >>> spec = cause_gallery_chart(cause_gallery(steps=2)).to_dict()
    >>> [(c["metric"], c["text"]) for c in rows_of(spec, spec["data"]) if c["cause"] == "slow-worker"]
    [('S', '1.57'), ('M_W', '1.04'), ('M_S', '1.03'), ('slowed steps', '1.00')]
    """
    require(isinstance(rows, (list, tuple)) and 0 < len(rows) <= 100, "rows", type(rows).__name__,
            "a list of cause rows from cause_gallery()")
    cells = []
    for i, r in enumerate(rows):
        cause = _(r["cause"]) if r["cause"] in _CAUSES else r["cause"]
        for key, label in _GALLERY:
            v = r.get(key)
            cells.append({"cause": cause, "order": i, "metric": _(label), "value": None if v is None else float(v),
                          "text": "n/a" if v is None else f"{v:.2f}", "optype": str(r.get("optype", ""))})
    base = alt.Chart({"values": cells}).encode(
        x=alt.X("metric:N", sort=[_(lab) for __, lab in _GALLERY], title=None, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("cause:N", sort=alt.EncodingSortField("order", order="ascending"), title=None))
    rect = base.mark_rect().encode(
        color=alt.Color("value:Q", scale=alt.Scale(scheme="oranges", domain=[0, 1.6], clamp=True), legend=None),
        tooltip=[alt.Tooltip("cause:N", title=_("cause")), alt.Tooltip("metric:N", title=_("metric")),
                 alt.Tooltip("text:N", title=_("value")), alt.Tooltip("optype:N", title=_("top optype"))])
    text = base.mark_text(fontSize=12).encode(text="text:N")
    return (rect + text).properties(width=width, height=24 * len(rows))


# What collective_tell_chart's bars are per, and the ops it names (notebook 09), for the catalog.
_TELL_BY = (N_("DP rank"), N_("stage"))
_TELL_OPS = (N_("collective"), N_("gradient clipping"))
# The statistic of each rank's times: the axis title and the tooltip.
_TELL_STATS = {"mean": (N_("mean recorded {optype} (ms), waits included"), N_("mean (ms)")),
               "median": (N_("median recorded {optype} (ms), waits included"), N_("median (ms)"))}


def collective_tell_chart(tell, *, culprit=None, by=N_("DP rank"), optype="collective", stat="mean", width=360):
    """Bars of the mean (or median) recorded time in one collective per DP rank (or stage), in milliseconds.

    ``tell`` is :func:`~straggle_edu.traces.diagnose.collective_tell`'s dict,
    ``stat`` the statistic it took (``"mean"`` or ``"median"``);
    ``culprit`` (an id) is drawn in red: the straggler waits least.

    Examples
    --------
    >>> collective_tell_chart({0: 0.063, 1: 0.054}, culprit=1).to_dict()["mark"]["type"]
    'bar'
    """
    require(len(tell) > 0, "tell", tell, "a non-empty dict of id -> seconds")
    require(stat in _TELL_STATS, "stat", stat, "'mean' or 'median'")
    by, optype = (_(by) if by in _TELL_BY else by), (_(optype) if optype in _TELL_OPS else optype)
    axis, tip = _TELL_STATS[stat]
    rows = [{"id": f"{by} {k}", "ms": 1000 * v, "culprit": k == culprit} for k, v in sorted(tell.items())]
    return alt.Chart({"values": rows}).mark_bar().encode(
        y=alt.Y("id:N", title=None, sort=None),
        x=alt.X("ms:Q", title=fill(_(axis), optype=optype)),
        color=alt.Color("culprit:N", scale=alt.Scale(domain=[False, True], range=["#bbbbbb", "#d62728"]),
                        legend=None),
        tooltip=[alt.Tooltip("id:N", title=by),
                 alt.Tooltip("ms:Q", format=".1f", title=_(tip))],
    ).properties(width=width)


def arrival_chart(analysis, *, width=420, max_rows=TRACE_MAX_ROWS):
    """Each rank's arrival at each collective of a profiler trace, after the first rank's, in milliseconds.

    A rank arrives at a collective when it issues it (host) or when its compute before it ends (GPU). The last to
    arrive sets when the collective can run; every other rank waits from its own arrival until then, the distance
    up to the top line. A long trace keeps its first ``max_rows // ranks`` collectives, and the title says so.

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace, analyze_profiler
    >>> spec = arrival_chart(analyze_profiler(_demo_trace([[1.0, 1.5]] * 3))).to_dict()   # rank 1 0.5 s late
    >>> [(r["n"], r["rank"], r["ms"], r["wait"]) for r in spec["datasets"][spec["data"]["name"]]][:2]
    [(1, 'rank 0', 0.0, 500.0), (1, 'rank 1', 500.0, 0.0)]
    """
    c = getattr(analysis, "details", None) and analysis.details.get("collectives")
    require(getattr(analysis, "format", None) == "torch-profiler" and bool(c), "analysis", type(analysis).__name__,
            "an Analysis of a profiler trace with collectives (straggle_edu.traces.analyze)")
    ranks, n = list(c["ranks"]), len(c["step"])
    keep = min(n, max(1, int(max_rows) // len(ranks)))
    rows = [{"n": i + 1, "rank": worker_label(r, short=True), "step": int(c["step"][i]),
             "ms": round(1e3 * float(c["arrival_s"][i, j]), 3), "wait": round(1e3 * float(c["wait_s"][i, j]), 3)}
            for i in range(keep) for j, r in enumerate(ranks)]
    title = _("each rank's arrival at each collective") if keep == n else \
        _("each rank's arrival at the first {n} collectives").format(n=keep)
    return alt.Chart({"values": rows}).mark_line(point=True).encode(
        x=alt.X("n:Q", title=_("collective, in order"), axis=alt.Axis(tickMinStep=1, tickCount=5)),
        y=alt.Y("ms:Q", title=_("arrival after the first rank (ms)")),
        color=alt.Color("rank:N", title=None, sort=[worker_label(r, short=True) for r in ranks]),
        tooltip=[alt.Tooltip("rank:N", title=_("rank")), alt.Tooltip("step:Q", title=_("step")),
                 alt.Tooltip("ms:Q", format=".1f", title=_("arrival (ms)")),
                 alt.Tooltip("wait:Q", format=".1f", title=_("wait (ms)"))],
    ).properties(width=width, title=title)
