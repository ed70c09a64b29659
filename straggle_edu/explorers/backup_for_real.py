"""The real SGD experiment as a widget (notebook 11's sandbox): pick a scheme,
workers, backups and a kind of slowness, press Run, watch the progress bar,
then see the loss curve on both x-axes beside the 07 model's prediction.

Each run starts real processes (:mod:`straggle_edu.instruments.sgd`), so
nothing runs until :meth:`run` is called or the Run button is clicked.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from ..charts.backup_for_real import sgd_curves_chart
from ..i18n import N_, _
from ..instruments.sgd import SCHEMES, SLOWS, SGDSettings, curve_rows, make_plan, predicted_step_time, run_sgd
from ._base import Explorer
from ._controls import choices

__all__ = ["real_sgd_explorer", "prediction_rows"]

_STYLE = {"description_width": "initial"}

# The menus' option names (the values stay these English keys).
N_("sync"), N_("backup"), N_("drop"), N_("local"), N_("balanced")
N_("none"), N_("transient"), N_("persistent"), N_("data")


def prediction_rows(result):
    """The run's losses at the wall times the 07 model predicts (``kind="predicted"``).

    The model's step is E[k-th of n] of the planned gradient times
    (:func:`~straggle_edu.instruments.sgd.predicted_step_time`).
    """
    s = result.settings
    step = predicted_step_time(make_plan(s))
    if s.scheme not in ("sync", "backup", "drop"):
        return []
    label = _("{scheme} (07 model)").format(scheme=_(s.scheme))
    return [{**r, "wall_s": r["step"] * step, "kind": "predicted"} for r in curve_rows(result, label)]


def real_sgd_explorer(scheme="backup", workers=4, backups=1, slow="transient", steps=60, base_step=0.01):
    """Run the SGD experiment from widgets.

    Returns
    -------
    Explorer
        Controls ``scheme``, ``workers``, ``backups``, ``slow``, ``steps``,
        ``run_button``; chart ``curves``; ``progress`` and ``readout``.
        ``run()`` runs with the current settings and returns the
        :class:`~straggle_edu.instruments.sgd.SGDResult` (None after an error).

    Examples
    --------
    >>> ex = real_sgd_explorer()
    >>> ex.controls["scheme"].value = "sync"
    >>> ex.controls["backups"].disabled
    True
    """
    SGDSettings(scheme=scheme, workers=workers, backups=backups, slow=slow, steps=steps, base_step=base_step)
    slider = lambda v, lo, hi, label: widgets.IntSlider(value=v, min=lo, max=hi, description=label,
                                                        style=_STYLE, continuous_update=False)
    c = {
        "scheme": widgets.Dropdown(options=choices(SCHEMES), value=scheme, description=_("scheme"), style=_STYLE),
        "workers": slider(workers, 1, 8, _("workers N")),
        "backups": slider(backups, 0, 3, _("backups / drops b")),
        "slow": widgets.Dropdown(options=choices(SLOWS), value=slow, description=_("slowness"), style=_STYLE),
        "steps": widgets.IntSlider(value=steps, min=20, max=200, step=20, description=_("steps"), style=_STYLE,
                                   continuous_update=False),
        "run_button": widgets.Button(description=_("Run"), button_style="primary", icon="play"),
    }
    empty = [{"scheme": scheme, "wall_s": 0.0, "gradients_applied": 0, "loss": 1.6}]
    progress = widgets.IntProgress(value=0, min=0, max=steps, description=_("steps"), style=_STYLE)
    readout = widgets.HTML(_("Press <b>Run</b> to start the processes."))
    ex = Explorer(c, {"curves": sgd_curves_chart(empty)}, extra=[progress, readout])
    ex.progress, ex.readout, ex.result = progress, readout, None

    def follow_scheme(change=None):
        uses_b = c["scheme"].value in ("backup", "drop")
        c["backups"].disabled = not uses_b
        c["backups"].max = max(0, c["workers"].value - 1) if uses_b else 3

    c["scheme"].observe(follow_scheme, names="value")
    c["workers"].observe(follow_scheme, names="value")
    follow_scheme()

    def run():
        sch = c["scheme"].value
        kw = dict(scheme=sch, workers=c["workers"].value, slow=c["slow"].value, base_step=base_step,
                  backups=c["backups"].value if sch in ("backup", "drop") else 0,
                  steps=c["steps"].value)
        progress.max, progress.value, progress.bar_style = kw["steps"], 0, ""
        c["run_button"].disabled = True
        readout.value = _("running...")
        try:
            result = run_sgd(progress=lambda done, total: setattr(progress, "value", done), **kw)
        except (ValueError, RuntimeError, TimeoutError) as exc:
            progress.bar_style, readout.value = "danger", _("<b>Error:</b> {error}").format(error=html.escape(str(exc)))
            return None
        finally:
            c["run_button"].disabled = False
        progress.bar_style, ex.result = "success", result
        ex.charts["curves"].chart = sgd_curves_chart(curve_rows(result) + prediction_rows(result))
        d = result.to_dict()
        readout.value = _("wall <b>{wall_s:.2f} s</b>, test loss <b>{final_loss:.3f}</b>, "
                          "accuracy on long samples <b>{accuracy_long:.2f}</b>; gradients applied "
                          "{gradients_applied}, discarded {gradients_discarded} "
                          "({gradient_s_discarded:.2f} of {gradient_s_computed:.2f} gradient-seconds)").format(**d)
        return result

    c["run_button"].on_click(lambda button: run())
    ex.run = run
    return ex
