"""The detector-threshold sandbox (``12_detector_thresholds.ipynb``).

- :func:`detector_explorer`: ranks, timings per report window, timing noise
  (CV), threshold and report interval; expected false alarms per day against
  the threshold (at this n) and against n (at this threshold), and a readout
  with the highest threshold that keeps false alarms within one a day.
  Exact, from :mod:`straggle_edu.math.detector`; redrawn on release.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..charts.detector import alarm_rows, alarms_vs_n_chart, alarms_vs_threshold_chart, threshold_rows
from ..math.detector import alarms_per_day, lognormal_timing, p_false_alarm, p_rank_flagged, threshold_for_alarms
from ..charts.tail import log_grid
from ..i18n import N_, _, fill, format_count, format_int
from ._base import Explorer
from ._controls import dropdown, float_slider, int_slider, n_slider
from ._patch import patch_rows

__all__ = ["detector_explorer", "detector_readout"]

_INTERVALS = [("30 s", 30), ("60 s", 60), ("120 s", 120), ("300 s", 300), ("600 s", 600), (N_("1 h"), 3600)]
N_MAX = 100_000


def detector_readout(n, window, cv, threshold, interval):
    """One line: alarms per report and per day, flagged ranks, and the threshold for one a day.

    Examples
    --------
    >>> for part in detector_readout(4096, 30, 0.2, 0.7, 300).split(" · "):
    ...     print(part)
    P(false alarm per report) = <b>0.0885</b>
    <b>25.5</b> false alarms a day (expected; 1 in 28,000 ranks flagged per report)
    threshold for ≤ 1 a day: <b>0.672</b>
    """
    dist = lognormal_timing(cv)
    p = p_false_alarm(n, threshold, window, dist)
    q = p_rank_flagged(n, threshold, window, dist)
    if q > 0:
        one_in = float(f"{1 / q:.2g}")
        flagged = fill(_("1 in {ranks} ranks flagged per report"),
            ranks=format_count(one_in) if one_in < 1e12 else f"{one_in:.2g}")
    else:
        flagged = _("no rank flagged, to float precision")
    best = threshold_for_alarms(n, window, dist, interval) if n > 1 else 1.0
    return _("P(false alarm per report) = <b>{p:.3g}</b> · <b>{per_day:.3g}</b> false alarms a day "
             "(expected; {flagged}) · threshold for ≤ 1 a day: <b>{best:.3g}</b>").format(
        p=p, per_day=alarms_per_day(p, interval), flagged=flagged, best=best)


def _controls(n, window, cv, threshold, interval):
    intervals = [(_(label), v) for label, v in _INTERVALS]
    intervals += [] if interval in dict(_INTERVALS).values() else [(f"{interval:g} s", interval)]
    return {
        "n": n_slider(n, label=_("ranks n"), continuous=False, layout=widgets.Layout(width="360px")),
        "window": int_slider("window", window, 1, 1000, _("timings per report"), continuous=False),
        "cv": float_slider("cv", cv, 0.01, 0.5, 0.01, _("timing CV"), continuous=False),
        "threshold": float_slider("threshold", threshold, 0.5, 0.95, 0.01, _("threshold"), continuous=False),
        "interval": dropdown("interval", interval, intervals, _("report every")),
    }


def detector_explorer(n=4096, window=30, cv=0.2, threshold=0.7, interval=300):
    """Sandbox: how often a relative-score detector flags healthy ranks.

    Parameters
    ----------
    n : int
        Starting number of ranks, 1..100,000.
    window : int
        Starting timings per rank per report window, 1..1,000.
    cv : float
        Starting coefficient of variation of one timing (lognormal), in [0.01, 0.5].
    threshold : float
        Starting relative-score threshold, in [0.5, 0.95].
    interval : float
        Starting seconds between reports (300: the NeMo and Megatron-Bridge default).

    Returns
    -------
    Explorer
        Controls ``n``, ``window``, ``cv``, ``threshold``, ``interval``; charts
        ``per_threshold`` and ``per_n``; ``readout``.

    Examples
    --------
    >>> ex = detector_explorer()
    >>> ex.controls["window"].value = 300
    >>> ex.readout.value.split(" · ")[1]
    '<b>2.9e-59</b> false alarms a day (expected; 1 in 4.1e+64 ranks flagged per report)'
    """
    controls = _controls(n, window, cv, threshold, interval)
    c = controls

    def rows():
        args = (c["window"].value, lognormal_timing(c["cv"].value), c["interval"].value)
        m, t = c["n"].value, c["threshold"].value
        pick = threshold_for_alarms(m, *args)
        label = _("highest within budget: {pick:.3f}").format(pick=pick)
        spot = [{"threshold": pick, "per_day": 1.0, "label": label}] if m > 1 else []
        per_n = alarm_rows(log_grid(N_MAX, 24), sorted({0.7, 0.75, t}), *args)
        return threshold_rows(m, *args), spot, per_n, fill(_("at n = {n}"), n=format_int(m))

    per_t, spot, per_n, title = rows()
    charts = {
        "per_threshold": alarms_vs_threshold_chart(per_t, pick=spot[0]["threshold"] if spot else 1.0).properties(
            title=title),
        "per_n": alarms_vs_n_chart(per_n).properties(title=_("against n")),
    }
    readout = widgets.HTML()
    ex = Explorer(controls, charts, extra=[readout])
    ex.readout = readout

    def show_readout():
        readout.value = detector_readout(c["n"].value, c["window"].value, c["cv"].value, c["threshold"].value,
                                         c["interval"].value)

    def update(change=None):
        per_t, spot, per_n, title = rows()
        patch_rows(ex.charts["per_threshold"], {0: per_t, 2: spot, 3: spot}, title=title)
        patch_rows(ex.charts["per_n"], {0: per_n})
        show_readout()

    ex.on_change(update, now=False)
    show_readout()
    return ex
