"""Charts of the live barrier lab: what real processes did at a real barrier.

- :func:`lab_gantt_chart`: the measured steps on a timeline, per worker:
  compute (busy) and waiting at the barrier, with a line at each barrier
  release; beside it, each worker's mean busy and waiting time per step.
- :func:`lab_prediction_chart`: the measured mean step time, with its error
  bar, against the library's prediction (E[max] plus the barrier overhead).
- :func:`fixed_work_chart`: the fixed-work mode: the measured distribution of
  a worker's compute time, and the E[max of n] it predicts for larger n,
  with the run's own measured max of k workers beside it.

Both take plain numbers and arrays (seconds), such as a
:class:`~straggle_edu.instruments.barrier_lab.LabResult`'s ``busy``, ``wait`` and
``start``, so a trace read from a file can be drawn the same way.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import nonnegative, require, whole
from ..i18n import N_, _
from ..models.barrier_lab import measured_max_of_k
from ..models.empirical import empirical_expected_max
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = ["lab_gantt_chart", "lab_prediction_chart", "fixed_work_chart", "LAB_COLORS"]

# The two phases of a worker's step; the chart translates the domain when it is built.
LAB_COLORS = alt.Scale(domain=[N_("compute"), N_("wait")], range=["#4c78a8", "#d9d9d9"])
_MAX_ROWS = 5000


def _times(name, x, shape=None):
    arr = np.asarray(x, dtype=float)
    require(arr.ndim == 2 and arr.size > 0, name, f"shape {arr.shape}", "a 2-d array (steps, workers)")
    require(shape is None or arr.shape == shape, name, f"shape {arr.shape}", f"shape {shape}")
    require(bool(np.isfinite(arr).all() and (arr >= 0).all()), name, "a negative or non-finite time", "seconds >= 0")
    return arr


def lab_gantt_chart(busy, wait, start=None, max_steps=20):
    """The measured steps of a barrier-lab run as a Gantt chart.

    Parameters
    ----------
    busy, wait : array_like, shape (steps, workers)
        Each worker's compute time and barrier wait per step, in seconds.
    start : array_like, shape (steps, workers), optional
        When each worker began each step, in seconds from the run's start;
        if omitted, each worker's steps are laid end to end.
    max_steps : int
        Draw at most this many steps (the first ones), 1..500.

    Returns
    -------
    altair.HConcatChart
        Busy and waiting bars of each worker, step by step, with a rule at each barrier release.

    Examples
    --------
    >>> chart = lab_gantt_chart([[0.05, 0.10], [0.05, 0.10]], [[0.05, 0.0], [0.05, 0.0]])
    >>> len(chart.to_dict()["hconcat"])
    2
    """
    busy = _times("busy", busy)
    wait = _times("wait", wait, busy.shape)
    if start is None:
        start = np.vstack([np.zeros((1, busy.shape[1])), np.cumsum(busy + wait, axis=0)[:-1]])
    start = _times("start", start, busy.shape)
    steps = min(whole("max_steps", max_steps, 1, 500), busy.shape[0], _MAX_ROWS // (2 * busy.shape[1]))
    require(steps >= 1, "busy", f"{busy.shape[1]} workers", f"at most {_MAX_ROWS // 2} workers")
    compute, waiting = _("compute"), _("wait")
    rows = []
    for s in range(steps):
        for r in range(busy.shape[1]):
            t0, t1 = 1e3 * start[s, r], 1e3 * (start[s, r] + busy[s, r])
            rows.append({"step": s, "rank": r, "phase": compute, "start": t0, "end": t1, "ms": t1 - t0})
            rows.append({"step": s, "rank": r, "phase": waiting, "start": t1, "end": t1 + 1e3 * wait[s, r], "ms": 1e3 * wait[s, r]})
    releases = [{"t": float(1e3 * (start[s] + busy[s] + wait[s]).max())} for s in range(steps)]
    y = alt.Y("rank:O", title=_("worker (rank)"), scale=alt.Scale(paddingInner=0.15))
    scale = alt.Scale(domain=[_(d) for d in LAB_COLORS.domain], range=LAB_COLORS.range)
    color = alt.Color("phase:N", scale=scale, title=None, legend=alt.Legend(orient="bottom"))
    rank, phase = alt.Tooltip("rank:O", title=_("rank")), alt.Tooltip("phase:N", title=_("phase"))
    tip = [rank, alt.Tooltip("step:Q", title=_("step")), phase, alt.Tooltip("ms:Q", title=_("duration (ms)"), format=".2f")]
    bars = alt.Chart(alt.Data(values=rows)).mark_bar(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start:Q", title=_("time (ms)")), x2="end:Q", y=y, color=color, tooltip=tip
    )
    rules = alt.Chart(alt.Data(values=releases)).mark_rule(color="black", strokeWidth=0.6).encode(x="t:Q")
    means = [{"rank": r, "phase": ph, "ms": float(1e3 * arr[:steps, r].mean())}
             for r in range(busy.shape[1]) for ph, arr in ((compute, busy), (waiting, wait))]
    per_worker = alt.Chart(alt.Data(values=means)).mark_bar().encode(
        x=alt.X("ms:Q", title=_("mean per step (ms)"), stack="zero"), y=y, color=color,
        order=alt.Order("phase:N"), tooltip=[rank, phase, alt.Tooltip("ms:Q", title=_("mean per step (ms)"), format=".2f")],
    ).properties(width=140)
    height = min(400, max(100, 22 * busy.shape[1]))
    return alt.hconcat((bars + rules).properties(width=460, height=height), per_worker.properties(height=height))


def lab_prediction_chart(measured, stderr, expected_max, overhead):
    """Measured mean step time (with a ±1 standard-error bar) against the
    prediction, E[max] plus the measured barrier overhead. All in seconds.

    Examples
    --------
    >>> spec = lab_prediction_chart(0.061, 0.001, 0.060, 0.0004).to_dict()
    >>> sorted(r["what"] for r in spec["layer"][0]["data"]["values"])
    ['E[max] (model)', 'barrier overhead (measured)']
    """
    measured, stderr = nonnegative("measured", measured), nonnegative("stderr", stderr)
    expected_max, overhead = nonnegative("expected_max", expected_max), nonnegative("overhead", overhead)
    predicted_row, measured_row = _("predicted"), _("measured")
    model, barrier = _("E[max] (model)"), _("barrier overhead (measured)")
    parts = [
        {"row": predicted_row, "what": model, "start": 0.0, "end": 1e3 * expected_max},
        {"row": predicted_row, "what": barrier, "start": 1e3 * expected_max,
         "end": 1e3 * (expected_max + overhead)},
    ]
    point = [{"row": measured_row, "ms": 1e3 * measured, "lo": 1e3 * (measured - stderr), "hi": 1e3 * (measured + stderr)}]
    y = alt.Y("row:N", title=None, sort=[predicted_row, measured_row])
    colors = alt.Scale(domain=[model, barrier], range=["#4c78a8", "#9d9d9d"])
    predicted = alt.Chart(alt.Data(values=parts)).mark_bar(height=18).encode(
        x=alt.X("start:Q", title=_("mean step time (ms)")), x2="end:Q", y=y,
        color=alt.Color("what:N", scale=colors, title=None, legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("what:N", title=_("part")), alt.Tooltip("end:Q", title=_("up to (ms)"), format=".2f")],
    )
    base = alt.Chart(alt.Data(values=point)).encode(y=y)
    bar = base.mark_errorbar(ticks=True, color="#e45756").encode(x=alt.X("lo:Q", title=_("mean step time (ms)")), x2="hi:Q")
    dot = base.mark_point(filled=True, size=70, color="#e45756").encode(
        x="ms:Q", tooltip=[alt.Tooltip("ms:Q", title=_("measured (ms)"), format=".2f"),
                           alt.Tooltip("lo:Q", title="- 1 SE", format=".2f"), alt.Tooltip("hi:Q", title="+ 1 SE", format=".2f")]
    )
    return (predicted + bar + dot).properties(width=460, height=80)


def fixed_work_chart(busy, max_n=4096, bins=30):
    """The fixed-work mode's two panels, from a run's measured compute times.

    Left: the distribution of one worker's compute time per step (every
    worker did the same work, so all are pooled). Right: E[max of n] that
    this distribution predicts (:func:`~straggle_edu.models.empirical.empirical_expected_max`)
    for n = 1, 2, 4, ... ``max_n``, with the run's own measured max of k
    workers (:func:`~straggle_edu.models.barrier_lab.measured_max_of_k`)
    as red points for k = 1..W. Past n = the number of samples the line is
    dashed: the data runs out, and the prediction is only a lower bound.

    Parameters
    ----------
    busy : array_like, shape (steps, workers)
        Measured compute times, in seconds.
    max_n : int
        The largest n predicted, 1..1,000,000.
    bins : int
        Histogram bins, 2..200.

    Examples
    --------
    >>> spec = fixed_work_chart([[0.010, 0.011], [0.012, 0.010]], max_n=8).to_dict()
    >>> spec["hconcat"][0]["mark"]["type"], len(spec["hconcat"][1]["layer"])
    ('bar', 2)
    """
    busy = _times("busy", busy)
    max_n, bins = whole("max_n", max_n, 1, 10**6), whole("bins", bins, 2, 200)
    samples = busy.size
    counts, edges = np.histogram(1e3 * busy, bins=bins)
    hist = [{"lo": float(a), "hi": float(b), "steps": int(c)} for a, b, c in zip(edges[:-1], edges[1:], counts)]
    ns = sorted({int(n) for n in np.unique(np.geomspace(1, max_n, 40).round())} | {1, max_n})
    within, past = _("within the data"), _("past the data (a lower bound)")
    line = [{"n": n, "ms": 1e3 * empirical_expected_max([(busy, n)]), "data": within if n <= samples else past} for n in ns]
    dots = [{"n": k, "ms": 1e3 * measured_max_of_k(busy, k)} for k in range(1, busy.shape[1] + 1)]
    left = alt.Chart(alt.Data(values=hist)).mark_bar(color="#4c78a8").encode(
        x=alt.X("lo:Q", bin="binned", title=_("one worker's compute per step (ms)")), x2="hi:Q",
        y=alt.Y("steps:Q", title=_("worker-steps")),
        tooltip=[alt.Tooltip("lo:Q", title=_("from (ms)"), format=".2f"), alt.Tooltip("steps:Q", title=_("worker-steps"))],
    ).properties(width=260, height=200)
    x = alt.X("n:Q", scale=alt.Scale(type="log"), title=_("workers n"))
    n_tip = alt.Tooltip("n:Q", title="n")
    predicted = alt.Chart(alt.Data(values=line)).mark_line(point=True, color="#4c78a8").encode(
        x=x, y=alt.Y("ms:Q", title=_("E[max of n] (ms)"), scale=alt.Scale(zero=False)),
        strokeDash=alt.StrokeDash("data:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=[n_tip, alt.Tooltip("ms:Q", title=_("E[max of n] (ms)"), format=".2f"), alt.Tooltip("data:N", title=_("data"))],
    )
    measured = alt.Chart(alt.Data(values=dots)).mark_point(filled=True, size=80, color="#e45756").encode(
        x=x, y="ms:Q", tooltip=[n_tip, alt.Tooltip("ms:Q", title=_("measured max of n (ms)"), format=".2f")],
    )
    return alt.hconcat(left, (predicted + measured).properties(width=300, height=200))
