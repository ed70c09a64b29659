"""Explorers for notebook 03b: correlated slowness, and your own step times.

- :func:`independence_explorer`: how a shared host, switch or GC event
  (share of slowness shared, group size) and a shared jitter factor (rho)
  change P(some worker slow) and E[slowest].
- :func:`scale_up_explorer`: paste step times measured on a few workers (or
  give a per-rank CSV's path) and predict the slowest of n, with the range
  the data can honestly support.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..charts.independence import independence_chart, scale_prediction_chart
from ..i18n import _, fill, format_count, format_int
from ..math.tail import p_any_slow
from ..models.correlation import expected_max_correlated, p_any_slow_shared
from ..models.empirical import parse_step_times, predict_at_scale
from ..traces.perrank import read_rank_csv
from ._base import Explorer
from ._controls import float_slider, int_slider, log_slider, n_slider

__all__ = ["independence_explorer", "independence_rows", "scale_up_explorer", "step_times_from"]

_NS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]


def independence_rows(p, shared, group, rho):
    """Chart rows: P(some slow) and E[max] in σ, independent and correlated, for n = 1 ... 16,384.

    Examples
    --------
    >>> rows = independence_rows(0.01, 1.0, 8, 0.0)
    >>> [round(r["p_any"], 4) for r in rows if r["n"] == 8]
    [0.0773, 0.01]
    """
    rows = []
    for n in _NS:
        g = min(group, n)
        rows.append({"n": n, "model": "independent", "p_any": p_any_slow(p, n),
                     "max_sigma": expected_max_correlated(n)})
        rows.append({"n": n, "model": "correlated", "p_any": p_any_slow_shared(p, n, shared, g),
                     "max_sigma": expected_max_correlated(n, rho, g)})
    return rows


def independence_explorer(p=0.01, shared=0.5, group=8, rho=0.3, n=4096):
    """Relax independence: shared slow events and a shared jitter factor.

    Parameters
    ----------
    p : float
        Per-worker probability of a slow step, in [1e-4, 0.1].
    shared : float
        Share of each worker's slowness from group events, in [0, 1].
    group : int
        Workers per group (8 = a host), 1..4096.
    rho : float
        Jitter correlation inside a group, in [0, 0.95].
    n : int
        Workers the readout reports, 1..16,384.

    Returns
    -------
    Explorer
        Controls ``p``, ``shared``, ``group``, ``rho``, ``n``; chart ``independence``; ``readout``.

    Examples
    --------
    >>> ex = independence_explorer()
    >>> ex.controls["shared"].value = 0.0
    >>> ex.controls["rho"].value = 0.0
    >>> "<b>100.0%</b>" in ex.readout.value and "3.63 σ" in ex.readout.value
    True
    """
    controls = {
        "p": log_slider("p", p, -4, -1, _("P(worker slow)"), fmt=".2"),
        "shared": float_slider("shared", shared, 0.0, 1.0, 0.05, _("shared share"), continuous=False),
        "group": int_slider("group", group, 1, 4096, _("group size"), continuous=False),
        "rho": float_slider("rho", rho, 0.0, 0.95, 0.05, _("jitter ρ"), continuous=False),
        "n": n_slider(n, options=_NS),
    }
    readout = widgets.HTML()
    ex = Explorer(controls, {"independence": independence_chart(independence_rows(p, shared, group, rho))}, [readout])
    ex.readout = readout

    def update(change=None):
        c = {k: v.value for k, v in controls.items()}
        g = min(c["group"], c["n"])
        ex.charts["independence"].chart = independence_chart(independence_rows(c["p"], c["shared"], c["group"], c["rho"]))
        readout.value = fill(_("n = {n}: P(some slow) <b>{p_any:.1%}</b> (independent {p_ind:.1%}) · E[slowest] "
                               "<b>{e_max:.2f} σ</b> (independent {e_ind:.2f} σ)"),
            n=format_int(c["n"]), p_any=p_any_slow_shared(c["p"], c["n"], c["shared"], g), p_ind=p_any_slow(c["p"], c["n"]),
            e_max=expected_max_correlated(c["n"], c["rho"], g), e_ind=expected_max_correlated(c["n"]))

    return ex.on_change(update)


def step_times_from(text="", csv_path=""):
    """Step times from pasted text, or from a per-rank CSV (all ranks and steps pooled).

    Examples
    --------
    >>> step_times_from("1.0 1.2").tolist()
    [1.0, 1.2]
    >>> step_times_from("")
    Traceback (most recent call last):
    ...
    ValueError: step_times must be pasted numbers or a per-rank CSV path, got ''
    """
    if csv_path.strip():
        return np.asarray(read_rank_csv(csv_path.strip()).compute, dtype=float).ravel()
    if not text.strip():
        raise ValueError("step_times must be pasted numbers or a per-rank CSV path, got ''")
    return parse_step_times(text)


def scale_up_explorer(text="", n=4096, csv_path="", seed=0):
    """Measure at a few workers, predict the slowest of n, with an honest range.

    Parameters
    ----------
    text : str
        Pasted step times, seconds (commas, spaces or new lines).
    n : int
        Workers to predict for, 1..16,384.
    csv_path : str
        A per-rank CSV (``step,rank,duration_s``); used instead of ``text`` when given.
    seed : int
        Bootstrap seed.

    Returns
    -------
    Explorer
        Controls ``text``, ``csv``, ``n``; chart ``prediction``; ``readout`` (errors show there).

    Examples
    --------
    >>> ex = scale_up_explorer(" ".join(str(1 + 0.01 * (i % 7)) for i in range(64)), n=8)
    >>> ex.controls["text"].value = "1.0, oops"
    >>> "item 2" in ex.readout.value
    True
    """
    controls = {
        "text": widgets.Textarea(value=text, description=_("step times (s)"), continuous_update=False),
        "csv": widgets.Text(value=csv_path, description=_("or CSV path"), continuous_update=False),
        "n": n_slider(n, options=_NS, continuous=False),
    }
    readout = widgets.HTML()
    ex = Explorer(controls, {"prediction": scale_prediction_chart(predict_at_scale([1.0, 1.0], 2, boot=10))},
                  [readout])
    ex.readout = readout

    def update(change=None):
        try:
            values = step_times_from(controls["text"].value, controls["csv"].value)
            pred = predict_at_scale(values, controls["n"].value, rng=seed)
        except (ValueError, OSError) as err:
            readout.value = f"<span style='color:#b00'>{err}</span>"
            return
        ex.charts["prediction"].chart = scale_prediction_chart(pred)
        note = fill(_(" · n is beyond your {m} measurements: the sample cannot show the 1-in-{n} tail, "
                      "so the range is set by the tail model, not by data"),
            m=format_count(pred.m), n=format_int(pred.n)) if pred.extrapolating else ""
        readout.value = fill(_("slowest of {n}: resampled <b>{empirical:.4f} s</b> · range <b>{low:.4f}–{high:.4f} s</b> "
                               "· your largest {largest:.4f} s"),
            n=format_int(pred.n), empirical=pred.empirical, low=pred.low, high=pred.high, largest=pred.sample_max) + note

    return ex.on_change(update)
