"""Debug a job: the what-if heatmap of a trace, and a drill-down into one worker's ops.

:func:`debug_job_explorer` shows every worker (DP rank x stage) against every
step, coloured by its slowdown. Click a worker in the heatmap (or pick it in
the menu) and a step, and the chart below draws that worker's ops in that
step: as recorded, and as replayed with ideal durations, with the ops that
ran long in red. The readout answers the article's debugging questions for
the whole job.

With no trace it shows a generated example; the ``example`` menu switches
between the injected causes of :data:`straggle_edu.traces.synthetic.CAUSES`.
Every callback runs the analysis of a small trace (milliseconds) or a
single-step replay.
"""

from __future__ import annotations

import functools
import html
import re

import ipywidgets as widgets
import numpy as np

from ..charts.debug_job import trace_attribution_chart, trace_heatmap_chart, worker_ops_chart
from ..i18n import N_, _
from ..traces import Analysis, analyze
from ..traces.diagnose import diagnose, worker_label
from ..traces.synthetic import CAUSES, example_trace
from ..traces.whatif import worker_timeline
from ._base import Explorer
from ._controls import STYLE, choices

__all__ = ["debug_job_explorer", "EXAMPLE_CAUSES"]

#: The generated examples the explorer offers (every injected cause, and none).
EXAMPLE_CAUSES = tuple(CAUSES)
N_("none"), N_("slow-worker"), N_("last-stage"), N_("seq-imbalance"), N_("gc-pauses"), N_("slow-link")

# The questions diagnose() answers (traces.diagnose.QUESTIONS), shown translated; the answers stay as
# diagnose() writes them.
N_("Is the job straggling?"), N_("Which worker?"), N_("Which collective?"), N_("Compute or communication?")
N_("Which parallel group?"), N_("Which pipeline stage?"), N_("Which microbatch?"), N_("Persistent or one-off?")
N_("Same worker every step?"), N_("A few bad machines?")


def _numbers(label):
    """The whole numbers in a worker's label, in order: (dp, stage) or (rank,), whatever the language.

    Examples
    --------
    >>> _numbers("dp 3 · stage 1"), _numbers("dp 3 · 第 1 级"), _numbers("rank 12")
    ((3, 1), (3, 1), (12,))
    """
    return tuple(int(k) for k in re.findall(r"\d+", str(label)))


def _first_worker(analysis):
    """The culprit worker (or rank); without worker attribution, the worker slowest on average."""
    if analysis.by_worker is not None or analysis.by_rank is not None:
        return analysis.culprit()
    return analysis.workers[int(np.argmax(np.asarray(analysis.worker_step_slowdown).mean(axis=1)))]


def _worst_step(analysis, worker):
    i = list(analysis.workers).index(worker)
    return int(analysis.steps[int(np.argmax(analysis.worker_step_slowdown[i]))])


@functools.lru_cache(maxsize=len(CAUSES))
def _example_analysis(cause):
    """The analysis of a generated example (deterministic, so computed once per cause)."""
    return analyze(example_trace(cause))


def _readout(analysis):
    def item(question, answer):
        question = _(question)
        sep = "" if question.endswith(("？", "：")) else " "  # no space after full-width punctuation
        return f"<li><b>{html.escape(question)}</b>{sep}{html.escape(answer)}</li>"

    return f"<ul style='margin:0'>{''.join(item(q, a) for q, a in diagnose(analysis))}</ul>"


def debug_job_explorer(source=None, *, example="slow-worker"):
    """The heatmap of a trace's what-if analysis, with a drill-down into a worker's ops.

    Parameters
    ----------
    source : path, trace or Analysis, optional
        What to analyse. None: the generated example named by ``example``.
    example : str
        One of :data:`EXAMPLE_CAUSES`, used when ``source`` is None.

    Returns
    -------
    Explorer
        Controls ``example`` (only without ``source``), ``worker``, ``step``;
        charts ``heatmap`` (its click selection is named ``worker``) and
        ``ops`` (op-level traces) or ``ranks`` (per-rank traces); the
        :class:`~straggle_edu.traces.Analysis` shown is ``explorer.analysis``.

    Examples
    --------
    >>> ex = debug_job_explorer(example="slow-worker")
    >>> ex.analysis.culprit("by_dp_rank"), ex.controls["worker"].value   # (dp rank, stage)
    (1, (1, 1))
    >>> ex.controls["example"].value = "last-stage"
    >>> ex.analysis.culprit("by_stage"), ex.charts["ops"].spec["title"]
    (1, 'dp 3 · stage 1, step 2: recorded and ideal')
    """
    if source is None and example not in CAUSES:
        raise ValueError(f"example must be one of {', '.join(map(repr, CAUSES))}, got {example!r}")
    state = {}

    def load(src):
        a = src if isinstance(src, Analysis) else analyze(src)
        state["analysis"] = a
        return a

    a = load(_example_analysis(example) if source is None else source)
    controls = {}
    if source is None:
        controls["example"] = widgets.Dropdown(options=choices(EXAMPLE_CAUSES), value=example, description=_("example"),
                                               style=STYLE)
    first = _first_worker(a)
    controls["worker"] = widgets.Dropdown(options=[(worker_label(w, short=True), w) for w in a.workers], value=first,
                                          description=_("worker"), style=STYLE)
    controls["step"] = widgets.Dropdown(options=[int(s) for s in a.steps], value=_worst_step(a, first),
                                        description=_("step"), style=STYLE)
    op_level = a.format == "op-level"

    def detail_chart():
        an = state["analysis"]
        w, step = controls["worker"].value, controls["step"].value
        if op_level:
            ops = worker_timeline(an, w[0], w[1], step)
            title = _("{worker}, step {step}: recorded and ideal").format(worker=worker_label(w, short=True), step=step)
            return worker_ops_chart(ops, title=title)
        return trace_attribution_chart(an, "by_rank")

    charts = {"heatmap": trace_heatmap_chart(a), ("ops" if op_level else "ranks"): detail_chart()}
    readout = widgets.HTML(_readout(a))
    explorer = Explorer(controls, charts, extra=[readout])
    explorer.analysis = a
    detail = "ops" if op_level else "ranks"
    busy = {"on": False}

    def redraw_detail(*args):
        if busy["on"]:
            return
        explorer.charts[detail].chart = detail_chart()

    def on_pick(change):
        points = getattr(change["new"], "value", None) or []
        if not points:
            return
        label = points[0].get("worker")  # the heatmap's label, in the language the chart was built in
        for text, w in controls["worker"].options:
            if label == text or _numbers(label) == (w if isinstance(w, tuple) else (w,)):
                controls["worker"].value = w
                break

    def bind_selection():
        explorer.charts["heatmap"].selections.observe(on_pick, names=["worker"])

    def on_example(change):
        an = load(_example_analysis(change["new"]))
        explorer.analysis = an
        w = _first_worker(an)
        busy["on"] = True
        try:
            controls["worker"].options = [(worker_label(x, short=True), x) for x in an.workers]
            controls["worker"].value = w
            controls["step"].options = [int(s) for s in an.steps]
            controls["step"].value = _worst_step(an, w)
        finally:
            busy["on"] = False
        explorer.charts["heatmap"].chart = trace_heatmap_chart(an)
        bind_selection()
        redraw_detail()
        readout.value = _readout(an)

    bind_selection()
    if "example" in controls:
        explorer.on_change(on_example, "example", now=False)
    return explorer.on_change(redraw_detail, "worker", "step", now=False)
