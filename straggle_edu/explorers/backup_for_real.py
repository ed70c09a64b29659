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
from ..instruments.sgd import SCHEMES, SLOWS, SGDSettings, curve_rows, make_plan, predicted_step_time, run_sgd
from ._base import Explorer

__all__ = ["real_sgd_explorer", "prediction_rows"]

_STYLE = {"description_width": "initial"}


def prediction_rows(result):
    """The run's losses at the wall times the 07 model predicts (``kind="predicted"``).

    The model's step is E[k-th of n] of the planned gradient times
    (:func:`~straggle_edu.instruments.sgd.predicted_step_time`).
    """
    s = result.settings
    step = predicted_step_time(make_plan(s))
    return [{**r, "wall_s": r["step"] * step, "kind": "predicted"}
            for r in curve_rows(result, f"{s.scheme} (07 model)")] if s.scheme in ("sync", "backup", "drop") else []


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
        "scheme": widgets.Dropdown(options=list(SCHEMES), value=scheme, description="scheme", style=_STYLE),
        "workers": slider(workers, 1, 8, "workers N"),
        "backups": slider(backups, 0, 3, "backups / drops b"),
        "slow": widgets.Dropdown(options=list(SLOWS), value=slow, description="slowness", style=_STYLE),
        "steps": widgets.IntSlider(value=steps, min=20, max=200, step=20, description="steps", style=_STYLE,
                                   continuous_update=False),
        "run_button": widgets.Button(description="Run", button_style="primary", icon="play"),
    }
    empty = [{"scheme": scheme, "wall_s": 0.0, "gradients_applied": 0, "loss": 1.6}]
    progress = widgets.IntProgress(value=0, min=0, max=steps, description="steps", style=_STYLE)
    readout = widgets.HTML("Press <b>Run</b> to start the processes.")
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
        readout.value = "running..."
        try:
            result = run_sgd(progress=lambda done, total: setattr(progress, "value", done), **kw)
        except (ValueError, RuntimeError, TimeoutError) as exc:
            progress.bar_style, readout.value = "danger", f"<b>Error:</b> {html.escape(str(exc))}"
            return None
        finally:
            c["run_button"].disabled = False
        progress.bar_style, ex.result = "success", result
        ex.charts["curves"].chart = sgd_curves_chart(curve_rows(result) + prediction_rows(result))
        d = result.to_dict()
        readout.value = (f"wall <b>{d['wall_s']:.2f} s</b>, test loss <b>{d['final_loss']:.3f}</b>, "
                         f"accuracy on long samples <b>{d['accuracy_long']:.2f}</b>; gradients applied "
                         f"{d['gradients_applied']}, discarded {d['gradients_discarded']} "
                         f"({d['gradient_s_discarded']:.2f} of {d['gradient_s_computed']:.2f} gradient-seconds)")
        return result

    c["run_button"].on_click(lambda _: run())
    ex.run = run
    return ex
