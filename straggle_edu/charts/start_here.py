"""The map's one chart: the job's step time against the average worker's.

:func:`job_vs_average_chart` draws, against the number of workers, the
expected step time of a synchronous job (the expected slowest of n workers)
and the average worker's step time. The param ``n`` picks a point; the chart
labels both times there and the speed-up the job really gets. The curve is
computed in Python (exact order statistics); the param only selects from it,
so a slider moves the chart in place, and a static page can bind it.
"""

from __future__ import annotations

import altair as alt
import numpy as np

from .._validate import in_range, nonnegative, positive, require
from ..i18n import _
from ._data import quoted, vega_text

__all__ = ["job_vs_average_chart"]


def job_vs_average_chart(ns, job, average, n=None, unit="s"):
    """Expected step time of the job (slowest of n) and of the average worker.

    Parameters
    ----------
    ns : array_like of int
        Worker counts, increasing, >= 1 (at most 5,000 of them).
    job : array_like of float
        Expected step time of the job at each count (seconds), E[max of n].
    average : float
        The average worker's step time (seconds), E[T].
    n : float, optional
        Starting value of the param ``n``; the chart marks the count in
        ``ns`` nearest to it on a log scale. Defaults to the largest count.
    unit : str
        Unit of the times, for the axis title.

    Returns
    -------
    altair.LayerChart
        Two curves against n, the job's and the average worker's.

    Examples
    --------
    >>> spec = job_vs_average_chart([1, 10, 100], [1.0, 1.5, 1.9], 1.0, n=10).to_dict()
    >>> spec["params"]
    [{'name': 'n', 'value': 10.0}]
    >>> [round(r["speedup"], 1) for r in spec["data"]["values"]]
    [1.0, 6.7, 52.6]
    """
    ns = np.asarray(ns, dtype=float)
    job = nonnegative("job", np.asarray(job, dtype=float))
    require(ns.ndim == 1 and 1 <= ns.size <= 5000, "ns", ns, "a 1-D array of 1 to 5,000 worker counts")
    require(job.shape == ns.shape, "job", job, f"one time per worker count ({ns.size})")
    ns = in_range("ns", ns, 1)
    require(bool(np.all(np.diff(ns) > 0)), "ns", ns, "increasing")
    average = positive("average", average)
    n = float(ns[-1]) if n is None else in_range("n", n, 1)
    rows = [{"n": float(a), "job": float(b), "average": average, "speedup": float(a * average / b) if b > 0 else float(a)}
            for a, b in zip(ns, job)]
    x = alt.X("n:Q", scale=alt.Scale(type="log", domain=[float(ns[0]), float(ns[-1])], nice=False), title=_("workers n"))
    y = alt.Y("time:Q", title=_("step time ({unit})").format(unit=unit), scale=alt.Scale(zero=False))
    job_label, average_label = _("the job (slowest worker)"), _("the average worker")
    color = alt.Color("who:N", scale=alt.Scale(domain=[job_label, average_label], range=["#e45756", "#4c78a8"]),
                      title=None, legend=alt.Legend(orient="bottom"))
    base = alt.Chart(alt.Data(values=rows)).transform_fold(["job", "average"], as_=["key", "time"]).transform_calculate(
        who=f"datum.key == 'job' ? {quoted(job_label)} : {quoted(average_label)}"
    )
    lines = base.mark_line(strokeWidth=3).encode(x=x, y=y, color=color).add_params(alt.param(name="n", value=n))
    picked = base.transform_calculate(gap="abs(log(datum.n) - log(max(1, n)))").transform_joinaggregate(
        best="min(gap)").transform_filter("datum.gap == datum.best")
    dots = picked.mark_point(filled=True, size=100).encode(x=x, y=y, color=color)
    labels = picked.transform_calculate(label="format(datum.time, '.3f') + ' ' + " + quoted(unit)).mark_text(
        align="right", dx=-10, dy=-8, fontWeight="bold").encode(x=x, y=y, text="label:N", color=color)
    rule = picked.transform_filter("datum.key == 'job'").mark_rule(color="gray", strokeDash=[4, 3]).encode(x=x)
    note = picked.transform_filter("datum.key == 'job'").transform_calculate(
        label=vega_text(_("{n} workers do the work of {speedup}"), n="format(datum.n, ',')", speedup="format(datum.speedup, ',.0f')")
    ).mark_text(align="left", x=8, y=12, fontSize=14, fontWeight="bold").encode(text="label:N")
    return alt.layer(lines, rule, dots, labels, note).properties(width=460, height=280)
