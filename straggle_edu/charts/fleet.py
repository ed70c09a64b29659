"""Fleet charts (``13_the_fleet.ipynb`` and the fleet's HTML report): every job of a cluster at once.

They take the fleet's figures (``DIR/fleet.json``, as
:func:`straggle_edu.fleet.figures.fleet_figures` returns them) or its rows as
plain data, and never import the fleet room.

- :func:`slowdown_cdf_chart`: the CDF of the jobs' slowdown S, with the
  study's line at S = 1.1.
- :func:`waste_cdf_chart`: the CDF of the jobs' waste 1 - 1/S, with the
  same line (waste 9.1%) and the study's per-job quantiles beside it.
- :func:`lost_by_culprit_chart`: GPU-hours lost by the kind of top culprit
  (compute or communication) and by where it sits (the last stage, one DP
  rank, one worker, spread).
- :func:`lost_curve_chart`: where the GPU-hours lost sit: the share of all
  lost held by the jobs that lost most, against the share of the jobs (and
  the same with the jobs taken by their waste).
- :func:`worst_jobs_chart`: the jobs that lost the most, with the
  ``straggle-edu analyze`` line to open each in the tooltip; each job
  labelled by the shortest tail of its id that tells it apart (:func:`short_labels`).
- :func:`remedy_chart`: GPU-hours each remedy recovers, against all lost
  (:func:`straggle_edu.fleet.remedies.remedy_gains`).
- :func:`cdf_rows`, :func:`study_waste_rows`, :func:`culprit_rows`: the rows
  those draw.

Each chart is a plain Vega-Lite dict first (``*_spec``, for the same
arguments): the fleet's HTML report embeds those, and so needs neither
Altair nor the rest of this package; each ``*_chart`` is its spec as an
Altair chart, for a notebook (:func:`~straggle_edu.charts._data.altair_chart`).
"""

from __future__ import annotations

import re

from .._validate import require, whole
from ..i18n import N_, _
from ..models.osdi2025 import STUDY
from ._vega import count_axis_spec

__all__ = [
    "SLOWED",
    "CULPRIT_CLASSES",
    "CULPRIT_WHERE",
    "cdf_rows",
    "study_waste_rows",
    "culprit_rows",
    "slowdown_cdf_chart",
    "waste_cdf_chart",
    "lost_by_culprit_chart",
    "worst_jobs_chart",
    "remedy_chart",
    "line_rows",
    "lost_curve_chart",
    "lost_curve_rows",
    "short_labels",
    "slowdown_cdf_spec",
    "waste_cdf_spec",
    "lost_by_culprit_spec",
    "worst_jobs_spec",
    "lost_curve_spec",
    "remedy_spec",
]

#: The study's line: a job is slowed when S >= 1.1 (waste 1 - 1/1.1 = 9.1%).
SLOWED = 1.1
#: The kinds of top culprit, as the fleet's rows name them, and their labels.
CULPRIT_CLASSES = {"compute": N_("compute"), "communication": N_("communication")}
#: Where the top culprit sits, as the fleet's rows name it, and its label.
CULPRIT_WHERE = {"last-stage": N_("the last stage"), "single-dp-rank": N_("one DP rank"),
                 "single-worker": N_("one worker"), "spread": N_("spread over many workers")}
_NO_ATTRIBUTION = N_("no attribution")  # the key of the jobs without one ("unattributed" in fleet.json)
_MAX_POINTS = 400
_RED, _GREY, _BLUE = "#e45756", "#888888", "#4c78a8"


def _q(field, **props):
    """A quantitative field of an encoding (``props``: its title, axis, scale, format...)."""
    return {"field": field, "type": "quantitative", **props}


def _n(field, **props):
    """A nominal field of an encoding."""
    return {"field": field, "type": "nominal", **props}


def _chart(spec):
    """``spec`` as an Altair chart (Altair is loaded here, on the first chart a notebook draws)."""
    from ._data import altair_chart

    return altair_chart(spec)


def cdf_rows(cdf, max_points=_MAX_POINTS):
    """The ``[[value, share], ...]`` of a fleet CDF as rows ``{value, share}``, at most ``max_points`` of them.

    A longer CDF keeps evenly spaced points and its last one, so that a
    fleet of a million jobs draws as fast as one of a hundred.

    Examples
    --------
    >>> cdf_rows([[1.0, 0.5], [1.2, 1.0]])
    [{'value': 1.0, 'share': 0.5}, {'value': 1.2, 'share': 1.0}]
    >>> len(cdf_rows([[i, i / 999] for i in range(1000)], max_points=10))
    10
    """
    whole("max_points", max_points, low=2)
    pairs = [(float(v), float(s)) for v, s in cdf]
    require(len(pairs) > 0, "cdf", cdf, "a list of [value, share] pairs")
    if len(pairs) > max_points:
        step = (len(pairs) - 1) / (max_points - 1)
        pairs = [pairs[round(i * step)] for i in range(max_points)]
    return [{"value": v, "share": s} for v, s in pairs]


def line_rows(line, slowdown):
    """``(rule rows, label rows)`` of the line at S = ``slowdown``, drawn at ``line`` on the axis (a sandbox patches them in).

    Examples
    --------
    >>> line_rows(1.1, 1.1)[1]
    [{'value': 1.1, 'label': 'S = 1.1'}]
    """
    rule = [{"value": line, "label": _("S = {S}: slowed by {pct}").format(S=f"{slowdown:g}", pct=f"{100 * (slowdown - 1):.0f}%")}]
    return rule, [{"value": line, "label": _("S = {S}").format(S=f"{slowdown:g}")}]


def _cdf_layers(rows, line, x_title, fmt, slowdown=None):
    rule_rows, text_rows = line_rows(line, line if slowdown is None else slowdown)
    share = _("share of jobs at or below")
    curve = {"data": {"values": rows}, "mark": {"type": "line", "interpolate": "step-after", "color": _BLUE},
             "encoding": {"x": _q("value", title=x_title, axis={"format": fmt}, scale={"zero": False}),
                          "y": _q("share", title=share, axis={"format": "%"}, scale={"domain": [0, 1]}),
                          "tooltip": [_q("value", title=x_title, format=fmt.replace("~", "")),
                                      _q("share", title=share, format=".1%")]}}
    rule = {"data": {"values": rule_rows}, "mark": {"type": "rule", "color": _RED, "strokeDash": [4, 3]},
            "encoding": {"x": _q("value"), "tooltip": _n("label", title=_("line"))}}
    text = {"data": {"values": text_rows},
            "mark": {"type": "text", "color": _RED, "align": "left", "dx": 4, "dy": -6, "baseline": "bottom"},
            "encoding": {"x": _q("value"), "y": {"value": 0}, "text": _n("label")}}
    return [curve, rule, text]


def slowdown_cdf_chart(figures, line=SLOWED, share=None):
    """The CDF of the fleet's slowdown S, with the line at S = 1.1 (or ``line``).

    Parameters
    ----------
    figures : dict
        The fleet's figures; reads ``slowdown_cdf`` and ``share_slowed_10pct``.
    line : float
        Where the line stands (a sandbox moves it).
    share : float, optional
        The share of jobs at S >= ``line``, for the subtitle (by default the
        figures' share at 1.1; give it when the line moves).

    Returns
    -------
    altair.LayerChart
        A step curve of the share of jobs at or below each S, the 1.1 line
        and its label.

    Examples
    --------
    >>> spec = slowdown_cdf_chart({"slowdown_cdf": [[1.0, 0.5], [1.3, 1.0]], "share_slowed_10pct": 0.5}).to_dict()
    >>> spec["title"]["text"], spec["title"]["subtitle"]
    ('Slowdown S of every job', '50% of the jobs at S >= 1.1')
    """
    return _chart(slowdown_cdf_spec(figures, line, share))


def slowdown_cdf_spec(figures, line=SLOWED, share=None):
    """:func:`slowdown_cdf_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> [layer["mark"]["type"] for layer in slowdown_cdf_spec({"slowdown_cdf": [[1.0, 1.0]], "share_slowed_10pct": 0.0})["layer"]]
    ['line', 'rule', 'text']
    """
    share = figures["share_slowed_10pct"] if share is None else share
    subtitle = _("{share} of the jobs at S >= {line}").format(share=f"{100 * float(share):.0f}%", line=f"{line:g}")
    return {"layer": _cdf_layers(cdf_rows(figures["slowdown_cdf"]), line, _("slowdown S"), ".2f"), "width": 360,
            "height": 220, "title": {"text": _("Slowdown S of every job"), "subtitle": subtitle}}


def study_waste_rows():
    """The study's per-job waste quantiles as CDF points (cited, from :mod:`straggle_edu.models.osdi2025`).

    Examples
    --------
    >>> [(r["value"], r["share"]) for r in study_waste_rows()]
    [(0.078, 0.5), (0.0909, 0.575), (0.213, 0.9), (0.45, 0.99)]
    """
    slowed = float(STUDY["jobs_slowed_10pct"])
    points = [(float(STUDY["waste_median"]), 0.5, _("median job")),
              (round(1 - 1 / SLOWED, 4), round(1 - slowed, 6), _("jobs slowed by 10% or more")),
              (float(STUDY["waste_p90"]), 0.9, _("p90 job")), (float(STUDY["waste_p99"]), 0.99, _("p99 job"))]
    return [{"value": v, "share": s, "what": w, "source": _("OSDI 2025 study (cited)")} for v, s, w in points]


def waste_cdf_chart(figures, study=True):
    """The CDF of the fleet's waste 1 - 1/S, with the 1.1 line and, by default, the study's quantiles.

    Parameters
    ----------
    figures : dict
        The fleet's figures; reads ``waste_cdf``.
    study : bool
        Mark the OSDI 2025 study's per-job waste quantiles (median, p90, p99,
        and the share slowed by 10%) as points, cited.

    Returns
    -------
    altair.LayerChart
        The fleet's step curve, the 1.1 line at waste 9.1%, and the study's points.

    Examples
    --------
    >>> spec = waste_cdf_chart({"waste_cdf": [[0.05, 0.5], [0.2, 1.0]]}).to_dict()
    >>> len(spec["layer"]), spec["title"]["text"]
    (4, 'Waste 1 - 1/S of every job')
    """
    return _chart(waste_cdf_spec(figures, study))


def waste_cdf_spec(figures, study=True):
    """:func:`waste_cdf_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> len(waste_cdf_spec({"waste_cdf": [[0.1, 1.0]]}, study=False)["layer"])
    3
    """
    layers = _cdf_layers(cdf_rows(figures["waste_cdf"]), 1 - 1 / SLOWED, _("waste 1 - 1/S"), ".0%", slowdown=SLOWED)
    if study:
        layers.append({"data": {"values": study_waste_rows()}, "mark": {"type": "point", "size": 90, "filled": True, "color": _RED},
                       "encoding": {"x": _q("value"), "y": _q("share"),
                                    "shape": _n("source", title=None, scale={"range": ["diamond"]}, legend={"orient": "bottom-right"}),
                                    "tooltip": [_n("what", title=_("study figure")), _q("value", title=_("waste"), format=".1%"),
                                                _q("share", title=_("share of jobs at or below"), format=".1%")]}})
    return {"layer": layers, "width": 360, "height": 220,
            "title": {"text": _("Waste 1 - 1/S of every job"), "subtitle": _("the diamonds: the OSDI 2025 study's jobs")}}


def culprit_rows(figures):
    """``(by kind, by where)``: rows ``{key, label, gpu_hours, share}`` of GPU-hours lost, labels translated.

    Examples
    --------
    >>> by_class, by_where = culprit_rows({"gpu_hours_lost": 100.0, "gpu_hours_lost_by_class": {"compute": 80.0,
    ...     "communication": 20.0}, "gpu_hours_lost_by_where": {"last-stage": 60.0, "spread": 40.0}})
    >>> [(r["label"], r["share"]) for r in by_class]
    [('compute', 0.8), ('communication', 0.2)]
    """
    total = float(figures.get("gpu_hours_lost") or 0.0)

    def rows(table, labels):
        order = {k: i for i, k in enumerate(labels)}
        items = sorted((table or {}).items(), key=lambda kv: order.get(kv[0], len(order)))
        return [{"key": str(k), "label": _label(k, labels), "gpu_hours": float(v),
                 "share": float(v) / total if total > 0 else 0.0} for k, v in items]

    return (rows(figures.get("gpu_hours_lost_by_class"), CULPRIT_CLASSES),
            rows(figures.get("gpu_hours_lost_by_where"), CULPRIT_WHERE))


def _label(key, labels):
    if key in labels:
        return _(labels[key])
    return _(_NO_ATTRIBUTION) if key in (None, "none", "null", "", "unattributed") else str(key)


def _bars(rows, title, color):
    """Bars of GPU-hours lost per row, each with its share of all lost written beside it."""
    lost = _("GPU-hours lost")
    encoding = {"y": _n("label", sort=None, title=None), "x": _q("gpu_hours", title=lost, axis=count_axis_spec("~s")),
                "tooltip": [_n("label", title=title), _q("gpu_hours", title=lost, format=",.0f"),
                            _q("share", title=_("share of all lost"), format=".1%")]}
    return {"data": {"values": rows},
            "layer": [{"mark": {"type": "bar", "color": color}, "encoding": encoding},
                      {"mark": {"type": "text", "align": "left", "dx": 4}, "encoding": {**encoding, "text": _q("share", format=".0%")}}],
            "width": 240, "height": 25 * max(len(rows), 2), "title": title}


def lost_by_culprit_chart(figures):
    """GPU-hours lost by the kind of top culprit and by where it sits, side by side.

    Parameters
    ----------
    figures : dict
        The fleet's figures; reads ``gpu_hours_lost``, ``gpu_hours_lost_by_class``
        and ``gpu_hours_lost_by_where``.

    Returns
    -------
    altair.HConcatChart
        Two bar charts with each bar's share of all GPU-hours lost.

    Examples
    --------
    >>> spec = lost_by_culprit_chart({"gpu_hours_lost": 10.0, "gpu_hours_lost_by_class": {"compute": 10.0},
    ...                               "gpu_hours_lost_by_where": {"single-worker": 10.0}}).to_dict()
    >>> [c["title"] for c in spec["hconcat"]]
    ['compute or communication', 'where the culprit sits']
    """
    return _chart(lost_by_culprit_spec(figures))


def lost_by_culprit_spec(figures):
    """:func:`lost_by_culprit_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> [c["title"] for c in lost_by_culprit_spec({"gpu_hours_lost": 0.0})["hconcat"]]
    ['compute or communication', 'where the culprit sits']
    """
    by_class, by_where = culprit_rows(figures)
    return {"hconcat": [_bars(by_class, _("compute or communication"), _BLUE),
                        _bars(by_where, _("where the culprit sits"), _RED)],
            "title": _("GPU-hours lost, by each job's top culprit")}


def short_labels(ids, limit=30):
    """Short labels that tell the ``ids`` apart: the fewest last path parts that do, then at most ``limit`` characters.

    A fleet walked from a folder names its jobs by their paths, which share
    a long prefix; a chart's axis would cut every one to the same "…/demo/jobs/trace-j…".

    Examples
    --------
    >>> short_labels(["/data/run1/demo/jobs/trace-job-0001.parquet", "/data/run1/demo/jobs/trace-job-0002.parquet"])
    ['trace-job-0001.parquet', 'trace-job-0002.parquet']
    >>> short_labels(["a/x/trace.csv", "b/x/trace.csv"]), short_labels(["job-0007"])
    (['a/x/trace.csv', 'b/x/trace.csv'], ['job-0007'])
    >>> short_labels(["runs/" + "n" * 40 + "/t.csv", "runs/" + "m" * 40 + "/t.csv"], limit=12)
    ['…nnnnn/t.csv', '…mmmmm/t.csv']
    """
    names = [str(i) for i in ids]
    parts = [re.split(r"[\\/]", name) for name in names]
    distinct = len(set(names))
    for k in range(1, max((len(p) for p in parts), default=1) + 1):
        labels = ["/".join(p[-k:]) for p in parts]
        if len(set(labels)) == distinct:
            break
    labels = [text if len(text) <= limit else "…" + text[-(limit - 1):] for text in labels]
    if len(set(labels)) < distinct:  # cut to the same tail: number them, the way the chart ranks them
        labels = [f"{i + 1}. {text}" for i, text in enumerate(labels)]
    return labels


def worst_jobs_chart(figures, top=10):
    """The jobs that lost the most GPU-hours (or, without GPU-hours, the most waste), largest first.

    Parameters
    ----------
    figures : dict
        The fleet's figures; reads ``worst`` (``job_id``, ``slowdown``,
        ``waste``, ``gpu_hours_lost``, ``analyze`` each).
    top : int
        How many jobs to show, 1 to 50.

    Returns
    -------
    altair.LayerChart
        One bar per job, labelled by :func:`short_labels` of the job ids,
        its S written beside it; the tooltip holds the whole job id and the
        ``straggle-edu analyze`` line to open the job.

    Examples
    --------
    >>> worst = [{"job_id": "a", "slowdown": 2.0, "waste": 0.5, "gpu_hours_lost": 100.0, "analyze": "straggle-edu analyze a.csv"}]
    >>> spec = worst_jobs_chart({"worst": worst}).to_dict()
    >>> spec["layer"][0]["encoding"]["x"]["field"], spec["layer"][0]["encoding"]["y"]["field"]
    ('gpu_hours_lost', 'job')
    """
    return _chart(worst_jobs_spec(figures, top))


def worst_jobs_spec(figures, top=10):
    """:func:`worst_jobs_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> worst_jobs_spec({"worst": [{"job_id": "a", "slowdown": 2.0, "waste": 0.5, "gpu_hours_lost": None}]})["title"]
    'The jobs that lost the most'
    """
    top = whole("top", top, low=1, high=50)
    rows = [dict(r) for r in figures["worst"][:top]]
    require(len(rows) > 0, "figures['worst']", figures["worst"], "at least one job")
    by_hours = all(r.get("gpu_hours_lost") is not None for r in rows)
    field, title, fmt = ("gpu_hours_lost", _("GPU-hours lost"), ",.0f") if by_hours else ("waste", _("waste 1 - 1/S"), ".1%")
    for r, short in zip(rows, short_labels([r["job_id"] for r in rows])):
        r["label"] = _("S = {S}").format(S=f"{float(r['slowdown']):.2f}")
        r["job"] = short
    encoding = {"y": _n("job", sort=None, title=_("job"), axis={"labelLimit": 260}), "x": _q(field, title=title),
                "tooltip": [_n("job_id", title=_("job id")), _q("slowdown", title="S", format=".3f"),
                            _q(field, title=title, format=fmt), _n("analyze", title=_("open it with"))]}
    return {"data": {"values": rows},
            "layer": [{"mark": {"type": "bar", "color": _RED}, "encoding": encoding},
                      {"mark": {"type": "text", "align": "left", "dx": 4}, "encoding": {**encoding, "text": _n("label")}}],
            "width": 360, "height": 22 * len(rows) + 10, "title": _("The jobs that lost the most")}


def lost_curve_rows(figures):
    """The rows :func:`lost_curve_chart` draws: ``{jobs, lost, order}``, both orders, labels translated.

    Examples
    --------
    >>> rows = lost_curve_rows({"lost_curve": {"by_lost": [[0, 0], [0.5, 0.9], [1, 1]], "by_waste": [[0, 0], [1, 1]]}})
    >>> [(r["jobs"], r["lost"], r["order"]) for r in rows][:2]
    [(0.0, 0.0, 'jobs that lost most first'), (0.5, 0.9, 'jobs that lost most first')]
    """
    curve = figures.get("lost_curve") or {}
    require(bool(curve.get("by_lost")), "figures['lost_curve']", curve, "the curves of fleet_figures (jobs with GPU-hours)")
    labels = (("by_lost", _("jobs that lost most first")), ("by_waste", _("jobs of the highest waste first")))
    return [{"jobs": float(x), "lost": float(y), "order": label} for key, label in labels for x, y in curve.get(key, [])]


def lost_curve_chart(figures):
    """Where a fleet's GPU-hours lost sit: the cumulative share of all lost, jobs taken largest loss first.

    The second curve takes the jobs by their waste 1 - 1/S instead: the gap
    between the two is the part of the bill that follows a job's size, not
    its slowdown. The dashed diagonal is a fleet where every job lost the same.

    Parameters
    ----------
    figures : dict
        The fleet's figures; reads ``lost_curve`` (:func:`straggle_edu.fleet.figures.fleet_figures`).

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> spec = lost_curve_chart({"lost_curve": {"by_lost": [[0, 0], [0.5, 0.9], [1, 1]],
    ...                                         "by_waste": [[0, 0], [0.5, 0.6], [1, 1]]}}).to_dict()
    >>> spec["title"]["text"], len(spec["layer"])
    ('Where the GPU-hours lost sit', 2)
    """
    return _chart(lost_curve_spec(figures))


def lost_curve_spec(figures):
    """:func:`lost_curve_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> [layer["mark"]["type"] for layer in lost_curve_spec({"lost_curve": {"by_lost": [[0, 0], [1, 1]]}})["layer"]]
    ['line', 'line']
    """
    rows = lost_curve_rows(figures)
    share = _("share of the jobs")
    lost = _("share of all GPU-hours lost")
    order = [_("jobs that lost most first"), _("jobs of the highest waste first")]
    curves = {"data": {"values": rows}, "mark": {"type": "line", "interpolate": "linear"},
              "encoding": {"x": _q("jobs", title=share, axis={"format": "%"}, scale={"domain": [0, 1]}),
                           "y": _q("lost", title=lost, axis={"format": "%"}, scale={"domain": [0, 1]}),
                           "color": _n("order", title=None, sort=order, scale={"domain": order, "range": [_RED, _BLUE]},
                                       legend={"orient": "bottom-right"}),
                           "tooltip": [_n("order", title=_("jobs taken")), _q("jobs", title=share, format=".1%"),
                                       _q("lost", title=lost, format=".1%")]}}
    diagonal = {"data": {"values": [{"jobs": 0.0, "lost": 0.0}, {"jobs": 1.0, "lost": 1.0}]},
                "mark": {"type": "line", "color": _GREY, "strokeDash": [4, 3]},
                "encoding": {"x": _q("jobs"), "y": _q("lost")}}
    return {"layer": [diagonal, curves], "width": 360, "height": 240,
            "title": {"text": _("Where the GPU-hours lost sit"), "subtitle": _("dashed: every job losing the same")}}


def remedy_chart(gains):
    """GPU-hours each remedy would recover, against all the fleet lost.

    Parameters
    ----------
    gains : dict
        :func:`straggle_edu.fleet.remedies.remedy_gains`: ``lost`` and, for
        ``replace`` and ``rebalance``, ``jobs``, ``gpu_hours`` and ``share``.

    Returns
    -------
    altair.LayerChart
        Three bars (all lost, replacing slow hosts, rebalancing stages), each
        with its share of all lost and the number of jobs it applies to.

    Examples
    --------
    >>> g = {"lost": 100.0, "replace": {"jobs": 1, "gpu_hours": 5.0, "share": 0.05},
    ...      "rebalance": {"jobs": 4, "gpu_hours": 30.0, "share": 0.3}}
    >>> from straggle_edu.charts._data import rows_of
    >>> spec = remedy_chart(g).to_dict()
    >>> [r["what"] for r in rows_of(spec, spec["data"])]
    ['all GPU-hours lost', 'replace persistently slow hosts', 'rebalance stages']
    """
    return _chart(remedy_spec(gains))


def remedy_spec(gains):
    """:func:`remedy_chart` as a Vega-Lite dict.

    Examples
    --------
    >>> g = {"lost": 1.0, **{k: {"jobs": 0, "gpu_hours": 0.0, "share": 0.0} for k in ("replace", "rebalance")}}
    >>> [layer["mark"]["type"] for layer in remedy_spec(g)["layer"]]
    ['bar', 'text']
    """
    lost = float(gains["lost"])
    rows = [{"what": _("all GPU-hours lost"), "gpu_hours": lost, "share": 1.0, "jobs": None, "color": _GREY}]
    for key, label in (("replace", _("replace persistently slow hosts")), ("rebalance", _("rebalance stages"))):
        g = gains[key]
        rows.append({"what": label, "gpu_hours": float(g["gpu_hours"]), "share": float(g["share"]), "jobs": int(g["jobs"]),
                     "color": _RED if key == "replace" else _BLUE})
    hours = _("GPU-hours")
    encoding = {"y": _n("what", sort=None, title=None), "x": _q("gpu_hours", title=hours, axis=count_axis_spec("~s")),
                "tooltip": [_n("what", title=_("remedy")), _q("gpu_hours", title=hours, format=",.0f"),
                            _q("share", title=_("share of all lost"), format=".1%"), _q("jobs", title=_("jobs it applies to"))]}
    return {"data": {"values": rows},
            "layer": [{"mark": {"type": "bar"}, "encoding": {**encoding, "color": _n("color", scale=None)}},
                      {"mark": {"type": "text", "align": "left", "dx": 4}, "encoding": {**encoding, "text": _q("share", format=".0%")}}],
            "width": 360, "height": 110, "title": _("What each remedy gets back, over the fleet")}
