"""The map's one live demo: a workers slider, the job's step time and the average worker's.

:func:`start_here_explorer` computes, once, the exact expected step time of
a synchronous job (the expected slowest of n workers, :func:`expected_max`)
for n = 1, 2, 4, ... 4096, and the average worker's. The slider only moves a
chart param, so it is instant.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validate import require, whole
from ..charts.start_here import job_vs_average_chart
from ..i18n import _, format_int, format_number
from ..math.order_stats import check_dist, expected_max
from ..models.step_time import StepTime
from ._base import Explorer
from ._controls import n_slider

__all__ = ["start_here_explorer", "START_HERE_STEP_TIME"]

# A worker whose step takes 1 s, give or take 5%, and which pauses for half a
# second on 1 step in 100 (a garbage-collection pause, a noisy neighbour).
START_HERE_STEP_TIME = StepTime(1.0, jitter=0.05, pause_prob=0.01, pause=0.5)


def start_here_explorer(step_time=None, max_workers=4096, n=4096):
    """Slide the number of workers; watch the job fall behind the average worker.

    Parameters
    ----------
    step_time : distribution, optional
        One worker's step time (seconds); :data:`START_HERE_STEP_TIME` if omitted.
    max_workers : int
        The largest count on the slider, a power of two in 2..2**20.
    n : int
        Starting count, a power of two <= max_workers.

    Returns
    -------
    Explorer
        Control ``n`` (a selection slider over the powers of two);
        chart ``steps``; ``readout``; ``ns``, ``job`` and ``average``: the numbers drawn.

    Examples
    --------
    >>> ex = start_here_explorer(max_workers=64, n=64)
    >>> ex.controls["n"].value = 8
    >>> ex.charts["steps"].params.n, ex.readout.value
    (8.0, 'job <b>1.104</b> s · average worker <b>1.005</b> s · 8 workers do the work of <b>7.3</b>')
    """
    dist = check_dist(START_HERE_STEP_TIME if step_time is None else step_time, "step_time")
    max_workers = whole("max_workers", max_workers, low=2, high=2**20)
    require(max_workers & (max_workers - 1) == 0, "max_workers", max_workers, "a power of two")
    n = whole("n", n, high=max_workers)
    require(n & (n - 1) == 0, "n", n, "a power of two")
    ns = 2 ** np.arange(int(np.log2(max_workers)) + 1)
    job, average = expected_max(dist, ns), float(dist.mean())
    slider = n_slider(n, [int(m) for m in ns], label=_("workers"), layout=widgets.Layout(width="420px"))
    readout = widgets.HTML()
    ex = Explorer({"n": slider}, {"steps": job_vs_average_chart(ns, job, average, n=n)}, extra=[readout])
    ex.link("n", "steps", "n")
    ex.readout, ex.ns, ex.job, ex.average = readout, ns, job, average

    def update(change=None):
        m = slider.value
        t = float(job[list(ns).index(m)])
        readout.value = _("job <b>{job:.3f}</b> s · average worker <b>{average:.3f}</b> s · "
                          "{n} workers do the work of <b>{equivalent}</b>").format(
            job=t, average=average, n=format_int(m), equivalent=format_number(m * average / t, f".{1 if m < 100 else 0}f"))

    return ex.on_change(update)
