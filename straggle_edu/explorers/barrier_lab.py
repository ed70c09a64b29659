"""The live barrier lab as a widget: settings, a Run button, a progress bar,
then the measured Gantt chart and the measured-vs-predicted comparison.

Each run starts real worker processes (see :mod:`straggle_edu.instruments.barrier_lab`),
so nothing runs until :meth:`run` is called or the Run button is clicked.
The notebook's stop button interrupts a run cleanly: the workers are stopped,
the steps done so far are drawn, and the trace is marked ``# incomplete``.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

import ipywidgets as widgets
import numpy as np

from .._validate import in_range, require
from ..instruments.barrier_lab import WORK_KINDS, LabSettings, max_workers, run_barrier_lab
from ..charts.barrier_lab import lab_gantt_chart, lab_prediction_chart
from ..i18n import N_, _
from ._base import Explorer
from ._controls import STYLE, choices, float_slider, int_slider

__all__ = ["barrier_lab_explorer", "LAB_MAX_WORKERS"]

LAB_MAX_WORKERS = 16
_NONE = -1
N_("sleep"), N_("compute"), N_("fixed")  # the work kinds, shown translated


def _int(name, value, lo, hi, label, step=1):
    return int_slider(name, value, lo, hi, label, step=step, continuous=False)


def _float(name, value, lo, hi, step, label, fmt):
    return float_slider(name, value, lo, hi, step, label, fmt, continuous=False)


def _rank_options(workers):
    return [(_("none"), _NONE)] + [(str(r), r) for r in range(workers)]


def _lab_controls(start):
    """The lab's controls, starting at the (checked) settings ``start``."""
    step_ms = round(1e3 * in_range("step_seconds", start.step_seconds, 0.005, 0.2))
    pause_ms = round(1e3 * in_range("pause_seconds", start.pause_seconds, 0.0, 0.2))
    controls = {
        "workers": _int("workers", start.workers, 1, min(LAB_MAX_WORKERS, max_workers(start.work)), _("workers")),
        "steps": _int("steps", start.steps, 2, 100, _("steps")),
        "step_ms": _int("step_ms", step_ms, 5, 200, _("step (ms)"), step=5),
        "jitter": _float("jitter", start.jitter, 0.0, 0.3, 0.01, _("jitter"), ".2f"),
        "pause_prob": _float("pause_prob", start.pause_prob, 0.0, 0.3, 0.01, _("pause prob."), ".2f"),
        "pause_ms": _int("pause_ms", pause_ms, 0, 200, _("pause (ms)"), step=5),
        "slow_rank": widgets.Dropdown(options=_rank_options(start.workers),
                                      value=_NONE if start.slow_rank is None else start.slow_rank,
                                      description=_("slow worker"), style=STYLE),
        "slow_factor": _float("slow_factor", start.slow_factor, 1.0, 4.0, 0.1, _("slow factor"), ".1f"),
        "work": widgets.ToggleButtons(options=choices(WORK_KINDS), value=start.work, description=_("work"), style=STYLE),
        "seed": _int("seed", start.seed, 0, 999, _("seed")),
        "run_button": widgets.Button(description=_("Run"), button_style="primary", icon="play"),
    }
    for name in ("jitter", "pause_prob", "pause_ms"):
        controls[name].disabled = start.work == "fixed"  # fixed work draws nothing
    return controls


def _prediction_text(p):
    """The prediction's one line (as ``str(p)`` writes it in English), in the current language."""
    return _("measured {measured:.2f} ± {stderr:.2f} ms per step (mean of {steps} steps ± 1 standard error); "
             "predicted {predicted:.2f} ms = E[max] {expected_max:.2f} ms + barrier overhead {overhead:.2f} ms; "
             "error {error:+.1%}").format(
        measured=p.measured * 1e3, stderr=p.stderr * 1e3, steps=p.steps, predicted=p.predicted * 1e3,
        expected_max=p.expected_max * 1e3, overhead=p.overhead * 1e3, error=p.error)


def _settings(c):
    """The run_barrier_lab keyword arguments the controls ``c`` show."""
    rank = c["slow_rank"].value
    drawn = c["work"].value != "fixed"  # fixed work draws nothing: the machine supplies the spread
    return dict(workers=c["workers"].value, steps=c["steps"].value, step_seconds=c["step_ms"].value / 1e3,
                jitter=c["jitter"].value if drawn else 0.0, pause_prob=c["pause_prob"].value if drawn else 0.0,
                pause_seconds=c["pause_ms"].value / 1e3,
                slow_rank=None if rank == _NONE else rank, slow_factor=c["slow_factor"].value,
                work=c["work"].value, seed=c["seed"].value)


def barrier_lab_explorer(workers=4, steps=20, step_seconds=0.04, jitter=None, pause_prob=0.0, pause_seconds=0.0,
                         slow_rank=1, slow_factor=2.0, work="sleep", seed=0, out=None):
    """Run the live barrier lab from widgets and see what the processes did.

    Parameters
    ----------
    workers, steps, step_seconds, jitter, pause_prob, pause_seconds, slow_rank, slow_factor, work, seed
        Starting settings (see :class:`~straggle_edu.instruments.barrier_lab.LabSettings`);
        ``slow_rank=None`` for no slow worker. The controls allow 1..16
        workers (1..cores with ``work="compute"``), 2..100 steps, steps of
        5..200 ms, pauses of up to 200 ms, jitter and pause probability up to 0.3
        and slow factors of 1..4; a starting value outside them raises ``ValueError``.
        With ``work="fixed"`` the jitter and pause controls are greyed out and
        not used: every worker does the same work, and the run measures the
        spread (``jitter=None`` starts at 0.05 for drawn work, 0 for fixed).
    out : str, os.PathLike or None
        The trace CSV each run writes; None for a file in a new temporary folder.

    Returns
    -------
    Explorer
        Controls ``workers``, ``steps``, ``step_ms``, ``jitter``,
        ``pause_prob``, ``pause_ms``, ``slow_rank`` (-1 for none),
        ``slow_factor``, ``work``, ``seed``, ``run_button``; charts ``gantt``
        and ``prediction``; ``progress`` (an ``IntProgress``) and ``readout``.
        ``run()`` runs the lab with the current settings and returns the
        :class:`~straggle_edu.instruments.barrier_lab.LabResult` (None after an error,
        which the readout shows); ``result`` and ``prediction`` keep the last
        run's; ``out`` is the trace's path.

    Examples
    --------
    >>> ex = barrier_lab_explorer(workers=2, steps=2, step_seconds=0.01)
    >>> ex.controls["workers"].value = 3
    >>> [label for label, _ in ex.controls["slow_rank"].options]
    ['none', '0', '1', '2']
    """
    start = LabSettings(workers=workers, steps=steps, step_seconds=step_seconds, jitter=jitter,
                        pause_prob=pause_prob, pause_seconds=pause_seconds, slow_rank=slow_rank,
                        slow_factor=slow_factor, work=work, seed=seed)
    require(start.workers <= LAB_MAX_WORKERS, "workers", workers, f"a whole number in 1..{LAB_MAX_WORKERS} here")
    require(start.steps <= 100, "steps", steps, "a whole number in 2..100 here")
    out = Path(tempfile.mkdtemp(prefix="straggle-edu-lab-")) / "barrier_lab.csv" if out is None else Path(out)
    controls = _lab_controls(start)
    c = controls
    zeros = np.zeros((1, start.workers))
    charts = {"gantt": lab_gantt_chart(zeros, zeros), "prediction": lab_prediction_chart(0.0, 0.0, 0.0, 0.0)}
    progress = widgets.IntProgress(value=0, min=0, max=start.steps, description=_("steps"), style=STYLE)
    readout = widgets.HTML(_("Press <b>Run</b> to start the workers."))
    ex = Explorer(controls, charts, extra=[progress, readout])
    ex.progress, ex.readout, ex.out = progress, readout, out
    ex.result = ex.prediction = None

    def follow_workers(change):
        rank = c["slow_rank"].value
        c["slow_rank"].options = _rank_options(change["new"])
        c["slow_rank"].value = rank if rank < change["new"] else _NONE

    def follow_work(change):
        c["workers"].max = min(LAB_MAX_WORKERS, max_workers(change["new"]))  # clamps the value too
        for name in ("jitter", "pause_prob", "pause_ms"):
            c[name].disabled = change["new"] == "fixed"

    ex.on_change(follow_workers, "workers", now=False)
    ex.on_change(follow_work, "work", now=False)

    def tick(done, total):
        progress.value = done

    def draw(result, note=""):
        ex.result = result
        if result.steps_done >= 1:
            ex.charts["gantt"].chart = lab_gantt_chart(result.busy, result.wait, result.start)
        if result.steps_done >= 2:
            p = ex.prediction = result.prediction()
            ex.charts["prediction"].chart = lab_prediction_chart(p.measured, p.stderr, p.expected_max, p.overhead)
            readout.value = note + _("{prediction}<br>slowest worker: rank <b>{rank}</b>; per-rank slowdown "
                                     "<b>{slowdown:.3f}</b>; trace: <code>{trace}</code>").format(
                prediction=html.escape(_prediction_text(p)), rank=result.slowest_rank, slowdown=result.slowdown(),
                trace=html.escape(str(out)))

    def run():
        kwargs = _settings(c)
        progress.max, progress.value, progress.bar_style = kwargs["steps"], 0, ""
        c["run_button"].disabled = True
        readout.value = _("running...")
        try:
            result = run_barrier_lab(out=out, progress=tick, **kwargs)
        except KeyboardInterrupt as exc:
            progress.bar_style = "warning"
            partial = getattr(exc, "lab_result", None)
            readout.value = _("Interrupted: the workers were stopped and the trace marked incomplete.")
            if partial is not None:
                draw(partial, _("<b>Interrupted</b> (partial run): "))
            raise
        except (ValueError, RuntimeError, TimeoutError) as exc:
            progress.bar_style = "danger"
            readout.value = _("<b>Error:</b> {error}").format(error=html.escape(str(exc)))
            return None
        finally:
            c["run_button"].disabled = False
        progress.bar_style = "success"
        draw(result)
        return result

    def on_click(button):
        try:
            run()
        except KeyboardInterrupt:  # the stop button: already cleaned up and shown
            pass

    c["run_button"].on_click(on_click)
    ex.run = run
    return ex
