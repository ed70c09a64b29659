"""Cost explorers: the bill, and where its lost fraction comes from.

- :func:`cost_explorer`: GPUs, days, lost fraction and price drive the
  receipt, the dollars curve, the two delay framings and the shifted
  milestones. Closed form: every control drives chart params, so nothing is
  recomputed in Python but the readout, and the static site keeps it live.
- :func:`lost_fraction_explorer`: workers, jitter, pauses and sync give the
  model's lost fraction (:func:`straggle_edu.models.waste.lost_fraction`),
  which flows into the bill, written as a sentence whose numbers follow the
  sliders. Paste your own step times, or give a per-rank CSV's path, and the
  lost fraction comes from their empirical distribution.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validate import require, whole
from ..charts.cost import bill_chart, bill_sentence_chart, delay_framings_chart, lost_dollars_chart, lost_fraction_chart, milestones_chart
from ..i18n import N_, _, fill, format_count, format_int, format_money
from ..math.cost import cost_of_stragglers
from ..math.delay import planned_delay
from ..models.cluster import Cluster
from ..models.empirical import empirical_expected_max
from ..models.step_time import StepTime
from ..models.waste import lost_fraction, lost_fraction_curves
from ._base import Explorer
from ._controls import STYLE, float_slider, n_slider
from ._patch import patch_rows
from .expected_max import POWERS_OF_TWO, _error, _values, _your_times

__all__ = ["cost_explorer", "lost_fraction_explorer", "PAUSE_CHOICES"]

#: The curve's label when the lost fraction comes from the reader's own step times.
YOURS = N_("your step times")
#: The model's curves (English keys; the chart shows them translated).
THIS_CLUSTER, NO_PAUSES = N_("this cluster"), N_("same jitter, no pauses")

#: The pause slider's stops: (label, probability); the labels are msgids, shown translated.
PAUSE_CHOICES = ((N_("never"), 0.0), (N_("1 in 100,000"), 1e-5), (N_("1 in 10,000"), 1e-4), (N_("1 in 1,000"), 1e-3),
                 (N_("1 in 100"), 1e-2), (N_("1 in 20"), 0.05))


def _shown(rows):
    """The curve's rows as the chart shows them: scenario names in the current language."""
    return [{**r, "scenario": _(r["scenario"])} for r in rows]


def cost_explorer(gpus=4096, days=10.0, lost_fraction=0.10, usd_per_gpu_hour=2.0):
    """The bill for a job's stragglers, with every input free.

    Parameters
    ----------
    gpus : int
        GPUs, in [1, 1,000,000].
    days : float
        Days the job runs (or is planned to), in [1, 120].
    lost_fraction : float
        Share of the time lost to stragglers, in [0, 0.5].
    usd_per_gpu_hour : float
        Price of a GPU-hour in dollars, in [0.25, 12].

    Returns
    -------
    Explorer
        Controls ``gpus``, ``days``, ``lost_fraction``, ``usd_per_gpu_hour``
        (each drives the param of the same name in every chart); charts
        ``bill``, ``dollars``, ``framings``, ``milestones``; ``readout``;
        ``bill()`` returns the current :class:`~straggle_edu.StragglerCost`.

    Examples
    --------
    >>> ex = cost_explorer()
    >>> ex.controls["usd_per_gpu_hour"].value = 5.0
    >>> ex.charts["bill"].params.usd_per_gpu_hour, ex.bill().usd_lost
    (5.0, 491520.0)
    """
    controls = {
        "gpus": widgets.BoundedIntText(value=whole("gpus", gpus, high=10**6), min=1, max=10**6, description=_("GPUs"),
                                       style=STYLE, layout=widgets.Layout(width="170px")),
        "days": float_slider("days", days, 1.0, 120.0, 0.5, _("days"), ".1f"),
        "lost_fraction": float_slider("lost_fraction", lost_fraction, 0.0, 0.5, 0.005, _("lost fraction"), ".1%"),
        "usd_per_gpu_hour": float_slider("usd_per_gpu_hour", usd_per_gpu_hour, 0.25, 12.0, 0.25, _("$ per GPU-hour")),
    }
    c = controls
    charts = {
        "bill": bill_chart(gpus, days, lost_fraction, usd_per_gpu_hour),
        "dollars": lost_dollars_chart(gpus, days, lost_fraction, usd_per_gpu_hour),
        "framings": delay_framings_chart(days, lost_fraction),
        "milestones": milestones_chart(days, lost_fraction),
    }
    ex = Explorer(controls, charts, extra=[widgets.HTML()])
    ex.readout = ex.extra[0]
    ex.bill = lambda: cost_of_stragglers(c["gpus"].value, c["days"].value, c["lost_fraction"].value, c["usd_per_gpu_hour"].value)
    for chart, params in [("bill", controls), ("dollars", controls), ("framings", ("days", "lost_fraction")),
                          ("milestones", ("days", "lost_fraction"))]:
        for name in params:
            ex.link(name, chart, name)

    def readout(change=None):
        b = ex.bill()
        ex.readout.value = fill(_("<b>{lost}</b> GPU-hours lost of {total} · <b>{usd}</b> · a run that held {days:g} days "
                                  "waited {delay:.2f} of them · a run planned at {days:g} days ends <b>{late:.2f}</b> days "
                                  "late"), lost=format_count(round(b.gpu_hours_lost)), total=format_count(round(b.gpu_hours)),
                                            usd=format_money(round(b.usd_lost)), days=b.days, delay=b.days_delay,
                                            late=planned_delay(b.days, b.lost_fraction))

    return ex.on_change(readout)


def lost_fraction_explorer(n=4096, jitter=0.03, pause_prob=0.0, pause=0.1, sync=0.0, *, days=10.0, usd_per_gpu_hour=2.0):
    """Where the lost fraction comes from: workers, jitter, pauses and sync.

    Each worker's step is :class:`~straggle_edu.StepTime` with a 1 s base;
    the model's :func:`~straggle_edu.models.waste.lost_fraction` feeds the
    bill of n GPUs over ``days`` days at ``usd_per_gpu_hour``.

    Parameters
    ----------
    n : int
        Workers (and GPUs), a power of two from 1 to 16,384.
    jitter : float
        In [0, 0.2].
    pause_prob : float
        One of the values of :data:`PAUSE_CHOICES` (0, 1e-5, ..., 0.05).
    pause : float
        Pause length in seconds, in [0, 2].
    sync : float
        Synchronization seconds per step, in [0, 0.5].
    days, usd_per_gpu_hour : float
        The bill's run length and price.

    Step times pasted in ``text`` (or read from the per-rank CSV at ``csv``)
    replace the model: each worker resamples them, E[slowest] is
    :func:`~straggle_edu.models.empirical.empirical_expected_max`, and the
    curve is labelled "your step times". Emptying both boxes brings the
    model back; a bad entry is reported in the readout.

    Returns
    -------
    Explorer
        Controls ``n``, ``jitter``, ``pause_prob``, ``pause``, ``sync``, ``text``, ``csv``; charts
        ``curve`` (its rows are swapped in place, so read its ``.spec``) and ``bill`` (the bill as a sentence,
        :func:`~straggle_edu.charts.cost.bill_sentence_chart`; ``n`` drives its ``gpus`` and, through the
        curve, its ``lost_fraction``, so it follows n on the static site too); ``readout`` (the same bill
        as a sentence, with the model's numbers); ``cluster()``, ``lost()`` (exact,
        :func:`~straggle_edu.models.waste.lost_fraction`) and ``rows()`` (the
        curve, which the readout and the bill use).

    Examples
    --------
    >>> ex = lost_fraction_explorer()
    >>> round(ex.lost(), 4), round(ex.charts["bill"].params.lost_fraction, 4)
    (0.0981, 0.0981)
    >>> ex.controls["pause_prob"].value = 1e-3
    >>> round(ex.charts["bill"].params.lost_fraction, 4)
    0.1163
    >>> ex.controls["n"].value = 1
    >>> ex.lost(), ex.charts["bill"].params.gpus
    (0.0, 1.0)
    >>> ex.controls["text"].value = "1.0 1.0 1.2 1.6"
    >>> ex.controls["n"].value = 2        # E[max of 2] = 1.325 s against a 1.2 s mean
    >>> round(ex.charts["bill"].params.lost_fraction, 4)
    0.0943
    """
    stops = [v for __, v in PAUSE_CHOICES]
    require(pause_prob in stops, "pause_prob", pause_prob, "one of " + ", ".join(f"{v:g}" for v in stops))
    controls = {
        "n": n_slider(n, POWERS_OF_TWO),
        "jitter": float_slider("jitter", jitter, 0.0, 0.2, 0.0025, _("jitter"), ".2%"),
        "pause_prob": widgets.SelectionSlider(options=[(_(label), v) for label, v in PAUSE_CHOICES], value=pause_prob,
                                              description=_("pause, per step"), style=STYLE),
        "pause": float_slider("pause", pause, 0.0, 2.0, 0.05, _("pause (s)")),
        "sync": float_slider("sync", sync, 0.0, 0.5, 0.01, _("sync (s)")),
        **_your_times(),
    }
    c = controls
    step_time = lambda: StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value, pause=c["pause"].value)
    cluster = lambda: Cluster.uniform(c["n"].value, step_time(), sync=c["sync"].value)

    def curve():
        """The lost fraction against n for the current knobs (one shared-grid
        integral per scenario, so the readout can look n up in it)."""
        state["values"] = values = _values(c)
        if values is not None:
            slowest = empirical_expected_max(values, np.asarray(POWERS_OF_TWO))
            state["rows"] = [{"n": int(n), "scenario": YOURS, "lost": float((e - values.mean()) / (e + c["sync"].value)),
                              "slowest": float(e)} for n, e in zip(POWERS_OF_TWO, slowest)]
            return state["rows"]
        t = step_time()
        scenarios = {THIS_CLUSTER: t}
        if t.pause_prob > 0 and t.pause > 0:
            scenarios[NO_PAUSES] = StepTime(1.0, jitter=t.jitter)
        state["rows"] = lost_fraction_curves(POWERS_OF_TWO, scenarios, sync=c["sync"].value)
        return state["rows"]

    def current():
        return next(r for r in state["rows"] if r["n"] == c["n"].value and r["scenario"] in (THIS_CLUSTER, YOURS))

    def lost_at(m):
        return next(r["lost"] for r in state["rows"] if r["n"] == m and r["scenario"] in (THIS_CLUSTER, YOURS))

    state = {}
    charts = {"curve": lost_fraction_chart(_shown(curve()), n_mark=n),
              "bill": bill_sentence_chart(n, days, current()["lost"], usd_per_gpu_hour)}
    ex = Explorer(controls, charts, extra=[widgets.HTML()])
    ex.readout, ex.cluster, ex.rows = ex.extra[0], cluster, lambda: state["rows"]
    ex.lost = lambda: lost_fraction(cluster())
    ex.link("n", "curve", "n_mark")
    ex.link("n", "bill", "gpus")
    ex.link("n", "bill", "lost_fraction", lost_at)

    def readout(change=None):
        row, sync, m = current(), c["sync"].value, c["n"].value
        values = state["values"]
        ex.charts["bill"].params.lost_fraction = row["lost"]
        bill = cost_of_stragglers(m, days, row["lost"], usd_per_gpu_hour)
        money = dict(hours=format_count(round(bill.gpu_hours_lost)), usd=format_money(round(bill.usd_lost)),
                     days=f"{days:g}", price=format_money(usd_per_gpu_hour), lost=f"{row['lost']:.2%}", n=format_int(m),
                     slowest=f"{row['slowest']:.4f}", step=f"{row['slowest'] + sync:.4f}")
        if values is None:
            ex.readout.value = fill(_("{n} GPUs with {jitter} jitter lose <b>{lost}</b> of their time at the barrier "
                                      "(E[slowest] {slowest} s, mean worker {mean} s, E[step] {step} s): over {days} days "
                                      "that is <b>{hours} GPU-hours</b>, <b>{usd}</b> at {price} per GPU-hour."),
                jitter=f"{c['jitter'].value:.2%}", mean=f"{step_time().mean():.4f}", **money)
        else:
            ex.readout.value = fill(_("{n} GPUs resampling your {count} step times lose <b>{lost}</b> of their time at "
                                      "the barrier (E[slowest] {slowest} s, your mean {mean} s, E[step] {step} s): over "
                                      "{days} days that is <b>{hours} GPU-hours</b>, <b>{usd}</b> at {price} per GPU-hour."),
                count=format_count(values.size), mean=f"{values.mean():.4f}", **money)

    def redraw(change=None):
        try:
            rows = curve()
        except (ValueError, OSError) as err:
            ex.readout.value = _error(err)
            return
        patch_rows(ex.charts["curve"], {0: _shown(rows)})  # same marks, new numbers
        readout()

    ex.on_change(redraw, "jitter", "pause_prob", "pause", "sync", "text", "csv", now=False)
    return ex.on_change(readout, "n")
