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

from .._validate import in_range
from ..charts.tail import tail_budget_chart, tail_percentile_chart, tail_probability_chart
from ..math.tail import p_any_slow, per_worker_budget, workers_until
from ..models.step_time import StepTime
from ._base import Explorer

__all__ = ["tail_explorer", "budget_explorer", "percentile_explorer", "worker_counts"]

_STYLE = {"description_width": "initial"}
N_MAX = 100_000


def _log_slider(value, lo_exp, hi_exp, label, fmt, continuous=True):
    return widgets.FloatLogSlider(value=value, base=10, min=lo_exp, max=hi_exp, step=0.01, description=label,
                                  readout_format=fmt, style=_STYLE, continuous_update=continuous)


def _workers(value):
    return max(1, round(value))


def worker_counts(extra=()):
    """The worker counts the n sliders stop at: about 10 per decade from 1 to 100,000.

    Round numbers (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9 per decade), the
    powers of two (GPU clusters come in them), the coin-flip counts 69 and
    693, and any ``extra`` counts. A log slider would step in exponents and
    miss 4096 (10**3.61 is 4,074).

    Examples
    --------
    >>> counts = worker_counts()
    >>> counts[:12], 4096 in counts, counts[-1]
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15], True, 100000)
    """
    decade = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)
    counts = {int(round(m * 10**k)) for k in range(5) for m in decade}
    counts |= {2**j for j in range(17)} | {69, 693, N_MAX} | {_workers(v) for v in extra}
    return sorted(c for c in counts if 1 <= c <= N_MAX)


def _n_slider(value):
    n = _workers(in_range("n", value, 1, N_MAX))
    return widgets.SelectionSlider(options=[(f"{m:,}", m) for m in worker_counts([n])], value=n,
                                   description="workers n", style=_STYLE, layout=widgets.Layout(width="360px"))


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
    >>> ex = tail_explorer()
    >>> ex.controls["n"].value = 4096
    >>> ex.charts["tail"].params.n
    4096.0
    >>> ex.readout.value
    'P(at least one slow) = <b>100.0%</b> at n = 4,096 · 50% at <b>69</b> workers'
    """
    controls = {
        "p": _log_slider(in_range("p", p, 1e-5, 0.5), -5, -0.30103, "p per worker", ".2"),
        "n": _n_slider(n),
        "target": widgets.FloatSlider(value=in_range("target", target, 0.05, 0.95), min=0.05, max=0.95, step=0.05,
                                      description="mark level", readout_format=".0%", style=_STYLE),
    }
    chart = tail_probability_chart(p, controls["n"].value, target, n_max=N_MAX)
    readout = widgets.HTML()
    ex = Explorer(controls, {"tail": chart}, extra=[readout])
    ex.readout = readout
    for name in controls:
        ex.link(name, "tail", name)

    def update(_=None):
        c = ex.controls
        p_, m, level = c["p"].value, _workers(c["n"].value), c["target"].value
        readout.value = (f"P(at least one slow) = <b>{p_any_slow(p_, m):.1%}</b> at n = {m:,} · "
                         f"{level:.0%} at <b>{workers_until(p_, level):,}</b> workers")

    for control in controls.values():
        control.observe(update, "value")
    update()
    return ex


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
        "n": _n_slider(n),
        "target": _log_slider(in_range("target", target, 1e-4, 0.5), -4, -0.30103, "slow steps allowed", ".2"),
    }
    readout = widgets.HTML()
    ex = Explorer(controls, {"budget": tail_budget_chart(controls["n"].value, target, n_max=N_MAX)}, extra=[readout])
    ex.readout = readout
    for name in controls:
        ex.link(name, "budget", name)

    def update(_=None):
        m, level = _workers(ex.controls["n"].value), ex.controls["target"].value
        b = per_worker_budget(m, level)
        readout.value = (f"n = {m:,}, slow on at most {100 * level:.3g}% of steps: each worker at most "
                         f"<b>{b:.4g}</b> (1 step in <b>{1 / b:,.0f}</b>)")

    for control in controls.values():
        control.observe(update, "value")
    update()
    return ex


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
        "n": _n_slider(n),
        "jitter": widgets.FloatSlider(value=in_range("jitter", jitter, 0.02, 0.2), min=0.02, max=0.2, step=0.01,
                                      description="jitter", style=_STYLE),
        "pause_prob": widgets.FloatSlider(value=in_range("pause_prob", pause_prob, 0, 0.2), min=0, max=0.2, step=0.005,
                                          description="pause prob.", readout_format=".3f", style=_STYLE),
        "pause": widgets.FloatSlider(value=in_range("pause", pause, 0, 2), min=0, max=2, step=0.1, description="pause (s)",
                                     readout_format=".1f", style=_STYLE),
    }
    c = controls

    def step_time():
        return StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value, pause=c["pause"].value)

    readout = widgets.HTML()
    ex = Explorer(controls, {"percentiles": tail_percentile_chart(step_time(), controls["n"].value)}, extra=[readout])
    ex.readout, ex.step_time = readout, step_time
    for name in controls:
        ex.link(name, "percentiles", name)

    def update(_=None):
        level = 1 - per_worker_budget(_workers(c["n"].value), 0.5)
        digits = max(2, math.ceil(-math.log10(1 - level)) - 1) if level < 1 else 6
        readout.value = (f"worker p99 <b>{step_time().ppf(0.99):.3f}</b> s · "
                         f"the job's median step = the worker's <b>p{100 * level:.{digits}f}</b>")

    for control in controls.values():
        control.observe(update, "value")
    update()
    return ex
