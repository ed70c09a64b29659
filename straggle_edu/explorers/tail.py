"""Tail-probability explorers: the forward question, the budget, and the percentiles.

- :func:`tail_explorer`: p and n on log sliders, and the level to mark
  (a coin flip by default). Closed form: the controls drive chart params.
- :func:`budget_explorer`: n and the share of steps allowed to be slow; the
  per-worker tail that keeps the job that clean.
- :func:`percentile_explorer`: one worker's step time against the job's. The
  workers slider drives a param; the step-time knobs (jitter, pauses) rebuild
  the densities (closed form, updated on release).
"""

from __future__ import annotations

import math

import ipywidgets as widgets

from ..charts.tail import tail_budget_chart, tail_percentile_chart, tail_probability_chart
from ..i18n import _, fill, format_int
from ..math.tail import p_any_slow, per_worker_budget, workers_until
from ..models.step_time import StepTime
from ._base import Explorer
from ._controls import N_MAX, float_slider, log_slider, n_slider

__all__ = ["tail_explorer", "budget_explorer", "percentile_explorer"]


def _workers(value):
    return max(1, round(value))


def _n(value):
    return n_slider(value, layout=widgets.Layout(width="360px"))


def tail_explorer(p=0.01, n=100, target=0.5):
    """P(at least one of n workers is slow), with p and n on log sliders.

    Parameters
    ----------
    p : float
        Starting per-worker probability of a slow step, in [1e-5, 0.5].
    n : float
        Starting number of workers, in [1, 100,000].
    target : float
        Starting level to mark, in [0.05, 0.95].

    Returns
    -------
    Explorer
        Controls ``p``, ``n``, ``target``; chart ``tail``; ``readout``.

    Examples
    --------
    >>> ex = tail_explorer().set(n=4096)
    >>> ex.charts["tail"].params.n
    4096.0
    >>> ex.readout.value
    'P(at least one slow) = <b>100.0%</b> at n = 4,096 · 50% at <b>69</b> workers'
    """
    controls = {
        "p": log_slider("p", p, -5, -0.30103, _("p per worker"), limits=(1e-5, 0.5)),
        "n": _n(n),
        "target": float_slider("target", target, 0.05, 0.95, 0.05, _("mark level"), ".0%"),
    }
    chart = tail_probability_chart(p, controls["n"].value, target, n_max=N_MAX)
    readout = widgets.HTML()
    ex = Explorer(controls, {"tail": chart}, extra=[readout])
    ex.readout = readout
    for name in controls:
        ex.link(name, "tail", name)

    def update(change=None):
        c = ex.controls
        p_, m, level = c["p"].value, _workers(c["n"].value), c["target"].value
        readout.value = fill(_("P(at least one slow) = <b>{p_any:.1%}</b> at n = {n} · {level:.0%} at <b>{until}</b> "
                               "workers"), p_any=p_any_slow(p_, m), n=format_int(m), level=level,
                                            until=format_int(workers_until(p_, level)))

    return ex.on_change(update)


def budget_explorer(n=4096, target=0.01):
    """The largest per-worker tail that keeps an n-worker job clean.

    Parameters
    ----------
    n : float
        Starting number of workers, in [1, 100,000].
    target : float
        Starting share of steps allowed to be slow, in [1e-4, 0.5].

    Returns
    -------
    Explorer
        Controls ``n``, ``target``; chart ``budget``; ``readout``.

    Examples
    --------
    >>> ex = budget_explorer()
    >>> ex.readout.value
    'n = 4,096, slow on at most 1% of steps: each worker at most <b>2.454e-06</b> (1 step in <b>407,549</b>)'
    """
    controls = {
        "n": _n(n),
        "target": log_slider("target", target, -4, -0.30103, _("slow steps allowed"), limits=(1e-4, 0.5)),
    }
    readout = widgets.HTML()
    ex = Explorer(controls, {"budget": tail_budget_chart(controls["n"].value, target, n_max=N_MAX)}, extra=[readout])
    ex.readout = readout
    for name in controls:
        ex.link(name, "budget", name)

    def update(change=None):
        m, level = _workers(ex.controls["n"].value), ex.controls["target"].value
        b = per_worker_budget(m, level)
        readout.value = fill(_("n = {n}, slow on at most {percent:.3g}% of steps: each worker at most "
                               "<b>{budget:.4g}</b> (1 step in <b>{one_in:,.0f}</b>)"),
                             n=format_int(m), percent=100 * level, budget=b, one_in=1 / b)

    return ex.on_change(update)


def percentile_explorer(n=100, jitter=0.05, pause_prob=0.005, pause=0.5):
    """One worker's step time against the job's, for a worker with jitter and pauses.

    Step times come from :class:`~straggle_edu.StepTime` with a 1 s base. Every
    control drives a chart param (the chart computes the densities itself),
    so nothing is recomputed in Python but the readout.

    Parameters
    ----------
    n : float
        Starting number of workers, in [1, 100,000].
    jitter : float
        In [0.02, 0.2].
    pause_prob : float
        Probability of a pause in a step, in [0, 0.2].
    pause : float
        Seconds, in [0, 2].

    Returns
    -------
    Explorer
        Controls ``n``, ``jitter``, ``pause_prob``, ``pause``; chart ``percentiles``;
        ``readout``; ``step_time()`` returns the current :class:`StepTime`.

    Examples
    --------
    >>> ex = percentile_explorer()
    >>> ex.controls["n"].value = 4096
    >>> ex.readout.value
    "worker p99 <b>1.129</b> s · the job's median step = the worker's <b>p99.983</b>"
    """
    controls = {
        "n": _n(n),
        "jitter": float_slider("jitter", jitter, 0.02, 0.2, 0.01, _("jitter")),
        "pause_prob": float_slider("pause_prob", pause_prob, 0.0, 0.2, 0.005, _("pause prob."), ".3f"),
        "pause": float_slider("pause", pause, 0.0, 2.0, 0.1, _("pause (s)"), ".1f"),
    }
    c = controls

    def step_time():
        return StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value, pause=c["pause"].value)

    readout = widgets.HTML()
    ex = Explorer(controls, {"percentiles": tail_percentile_chart(step_time(), controls["n"].value)}, extra=[readout])
    ex.readout, ex.step_time = readout, step_time
    for name in controls:
        ex.link(name, "percentiles", name)

    def update(change=None):
        level = 1 - per_worker_budget(_workers(c["n"].value), 0.5)
        digits = max(2, math.ceil(-math.log10(1 - level)) - 1) if level < 1 else 6
        readout.value = _("worker p99 <b>{p99:.3f}</b> s · the job's median step = the worker's <b>p{level}</b>").format(
            p99=step_time().ppf(0.99), level=f"{100 * level:.{digits}f}")

    return ex.on_change(update)
