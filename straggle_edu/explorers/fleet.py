"""The fleet sandbox (``13_the_fleet.ipynb``): move the line, fix the stages or the hosts, watch the fleet.

- :func:`fleet_explorer`: a fleet drawn from the demo's stated distributions
  (:func:`straggle_edu.fleet.demo.draw_jobs`, no trace analysed), or the rows
  of a fleet run; controls for the "slowed" line and for the share of the
  last stage's and the slow hosts' excess that rebalancing and replacing
  remove (:func:`straggle_edu.fleet.remedies.apply_remedies`); the CDF of S
  and a readout with the share of jobs and GPU-hours above the line and the
  GPU-hours wasted.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..charts.fleet import cdf_rows, line_rows, slowdown_cdf_chart
from ..i18n import _, fill, format_count
from ._base import Explorer
from ._controls import float_slider
from ._patch import patch_rows

__all__ = ["fleet_explorer", "fleet_readout"]


def _pct(x):
    return "–" if x is None else f"{100 * x:.1f}%"


def _lost(rows):
    return sum(r["gpu_hours_lost"] for r in rows if r.get("gpu_hours_lost") is not None)


def fleet_readout(rows, threshold=1.1, before=None):
    """One line: the share of the jobs at S >= ``threshold`` (and of the GPU-hours, in those jobs), the GPU-hours wasted,
    and, given the rows ``before`` the remedies, the GPU-hours they got back.

    Examples
    --------
    >>> rows = [{"slowdown": 1.25, "gpus": 8, "hours": 10.0, "gpu_hours_lost": 16.0},
    ...         {"slowdown": 1.0, "gpus": 8, "hours": 10.0, "gpu_hours_lost": 0.0}]
    >>> for part in fleet_readout(rows, before=[{"gpu_hours_lost": 20.0}]).split(" · "):
    ...     print(part)
    S ≥ 1.10: <b>50.0%</b> of the jobs, 50.0% of the GPU-hours
    GPU-hours wasted: <b>10.0%</b> of 160
    got back: <b>4</b> GPU-hours, 20.0% of the 20 lost
    """
    from ..fleet.remedies import records, slowed_shares

    rows = records(rows)
    jobs, hours = slowed_shares(rows, threshold)
    total = sum(r["gpus"] * r["hours"] for r in rows if r.get("gpus") is not None and r.get("hours") is not None)
    lost = _lost(rows)
    text = fill(_("S ≥ {threshold}: <b>{jobs}</b> of the jobs, {hours} of the GPU-hours · GPU-hours wasted: "
                  "<b>{wasted}</b> of {total}"), threshold=f"{threshold:.2f}", jobs=_pct(jobs), hours=_pct(hours),
                wasted=_pct(lost / total if total > 0 else None), total=format_count(round(total)))
    if before is not None:
        was = _lost(records(before))
        text += " · " + fill(_("got back: <b>{got}</b> GPU-hours, {share} of the {lost} lost"),
                             got=format_count(round(was - lost)), share=_pct((was - lost) / was if was > 0 else None),
                             lost=format_count(round(was)))
    return text


def fleet_explorer(rows=None, *, jobs=200, seed=0, threshold=1.1, rebalance=0.0, replace=0.0):
    """Sandbox: a fleet's slowdowns, the line that says "slowed", and two remedies.

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame, optional
        A fleet's rows (``DIR/jobs.parquet``); by default ``jobs`` jobs drawn
        from the demo's stated distributions with ``seed``, each with its
        drawn S and its cause's culprit (:func:`straggle_edu.fleet.demo.drawn_rows`).
    jobs, seed : int
        The drawn fleet, when ``rows`` is not given.
    threshold : float
        Starting line: a job is slowed at S >= this, in [1.02, 2].
    rebalance, replace : float
        Starting share, in [0, 1], of what the last stage (rebalancing) and a
        slow host (replacing) explain that the remedy removes.

    Returns
    -------
    Explorer
        Controls ``threshold``, ``rebalance``, ``replace``; chart ``cdf``; ``readout``.

    Examples
    --------
    >>> ex = fleet_explorer(jobs=200, seed=0)
    >>> ex.readout.value.split(" · ")[0]
    'S ≥ 1.10: <b>42.5%</b> of the jobs, 41.9% of the GPU-hours'
    >>> ex.controls["rebalance"].value = 1.0
    >>> ex.readout.value.split(" · ")[2]
    'got back: <b>48,949</b> GPU-hours, 28.9% of the 169,188 lost'
    """
    from ..fleet.demo import draw_jobs, drawn_rows
    from ..fleet.figures import fleet_figures
    from ..fleet.remedies import apply_remedies, records

    base = drawn_rows(draw_jobs(jobs, seed)) if rows is None else records(rows)
    c = {
        "threshold": float_slider("threshold", threshold, 1.02, 2.0, 0.01, _("slowed at S ≥"), continuous=False),
        "rebalance": float_slider("rebalance", rebalance, 0.0, 1.0, 0.05, _("rebalance stages"), ".0%", continuous=False),
        "replace": float_slider("replace", replace, 0.0, 1.0, 0.05, _("replace slow hosts"), ".0%", continuous=False),
    }

    def state():
        after = apply_remedies(base, rebalance=c["rebalance"].value, replace=c["replace"].value)
        return after, fleet_figures(after)

    after, figures = state()
    readout = widgets.HTML()
    ex = Explorer(c, {"cdf": slowdown_cdf_chart(figures, line=c["threshold"].value)}, extra=[readout])
    ex.readout = readout

    def update(change=None):
        after, figures = state()
        t = c["threshold"].value
        rule, label = line_rows(t, t)
        share = sum(r["slowdown"] >= t for r in after if r.get("slowdown") is not None) / max(figures["analysed"], 1)
        subtitle = _("{share} of the jobs at S >= {line}").format(share=f"{100 * share:.0f}%", line=f"{t:g}")
        patch_rows(ex.charts["cdf"], {0: cdf_rows(figures["slowdown_cdf"]), 1: rule, 2: label},
                   title={"text": _("Slowdown S of every job"), "subtitle": subtitle})
        readout.value = fleet_readout(after, t, before=base)

    return ex.on_change(update)
