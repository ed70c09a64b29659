"""Training-step explorers: the pipeline Gantt chart, and DP scaling against n.

- :func:`pipeline_explorer`: a DP x PP grid running 1F1B (or GPipe, or
  interleaved 1F1B). Slow one worker, one stage, one replica or one
  microbatch's op, and watch the delay travel through the pipeline and stop
  at the DP barrier, or vanish into slack. Simulated on every change
  (milliseconds), redrawn on release. The slowing and the slack are models
  (:mod:`straggle_edu.models.training_step`); this module only wires them.
- :func:`dp_scaling_explorer`: throughput and scaling efficiency of data
  parallelism against n, for the jitter, pauses and all-reduce you choose.
  The curve is recomputed on release (about a millisecond); the marker
  ``n`` is a chart param and moves in place.
- :func:`barriers_explorer`: the barriers inside a step. Sliders for the
  barriers per step, the jitter per segment and the ranks that meet; the
  closed form (:func:`~straggle_edu.models.barriers.barrier_overhead`) redraws
  the curve, and the marker moves in place.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..charts.training_step import (
    barrier_overhead_chart,
    delay_response_chart,
    delay_response_rows,
    dp_breakdown_chart,
    dp_breakdown_rows,
    dp_scaling_chart,
    dp_scaling_rows,
    gantt_colors,
    gantt_rows,
    gantt_size,
    pipeline_gantt_chart,
)
from ..i18n import N_, _, fill, format_int
from ..models.barriers import barrier_overhead, barrier_overhead_rows
from ..models.cluster import AllReduce
from ..models.pipeline import simulate_pipeline
from ..models.step_time import StepTime
from ..models.training_step import (
    SLOW_OPS,
    SLOW_TARGETS,
    data_parallel_scaling,
    delay_response,
    interleaved_chunks,
    slow_mask,
    slowed_durations,
    slowed_ops,
)
from ._base import Explorer
from ._controls import ROW, STYLE, choices, dropdown, float_slider, int_slider, n_slider
from ._patch import patch_rows, replace_spec, set_color_scale

__all__ = ["SLOW_TARGETS", "SCHEDULE_CHOICES", "pipeline_explorer", "dp_scaling_explorer", "barriers_explorer",
           "slow_mask"]

#: Schedules offered, and the (schedule, chunks) each one means.
SCHEDULE_CHOICES = {"1F1B": ("1f1b", 1), "GPipe": ("gpipe", 1), N_("interleaved 1F1B (2 chunks)"): ("1f1b", 2)}
# The menus' option names (the values stay these English keys).
N_("nothing"), N_("one worker"), N_("one stage"), N_("one replica"), N_("one microbatch's op")
N_("forward"), N_("backward"), N_("both"), N_("microbatch"), N_("op"), N_("efficiency"), N_("speedup")
#: The scaling chart's two curves.
YOUR_SETTING, QUIET = N_("your setting"), N_("no jitter, no pauses")
FORWARD, BACKWARD = 1.0, 2.0  # seconds per stage and microbatch, easy to check by hand
_OPTIMIZER = 0.5  # seconds


def _pipeline_controls(dp, stages, microbatches, target, factor, slow_dp, slow_stage, slow_microbatch, op):
    islider = lambda name, v, lo, hi, label: int_slider(name, v, lo, hi, label, continuous=False, layout=ROW)
    fslider = lambda name, v, lo, hi, step, label: float_slider(name, v, lo, hi, step, label, continuous=False,
                                                                layout=ROW)
    return {
        "dp": islider("dp", dp, 1, 4, _("DP replicas")),
        "stages": islider("stages", stages, 1, 8, _("PP stages")),
        "microbatches": islider("microbatches", microbatches, 1, 16, _("microbatches")),
        "schedule": dropdown("schedule", "1F1B", choices(SCHEDULE_CHOICES), _("schedule")),
        "target": dropdown("target", target, choices(SLOW_TARGETS), _("slow down")),
        "slow_dp": islider("slow_dp", slow_dp, 0, 3, _("replica")),
        "slow_stage": islider("slow_stage", slow_stage, 0, 7, _("stage")),
        "slow_microbatch": islider("slow_microbatch", slow_microbatch, 0, 15, _("microbatch")),
        "op": dropdown("op", op, choices(SLOW_OPS), _("op")),
        "factor": fslider("factor", factor, 1.0, 6.0, 0.25, _("x slower")),
        "p2p": fslider("p2p", 0.0, 0.0, 1.0, 0.05, _("p2p (s)")),
        "allreduce": fslider("allreduce", 1.0, 0.0, 4.0, 0.25, _("all-reduce (s)")),
        "color": widgets.ToggleButtons(options=choices(["microbatch", "op"]), value="microbatch",
                                       description=_("colour by"), style=STYLE),
    }


class _Pipeline:
    """The pipeline explorer's model calls, read from its controls."""

    def __init__(self, controls):
        self.c = controls

    def grid(self):
        return self.c["dp"].value, self.c["stages"].value, self.c["microbatches"].value

    def schedule(self):
        sched, chunks = SCHEDULE_CHOICES[self.c["schedule"].value]
        return sched, interleaved_chunks(*self.grid()[1:], chunks)

    def options(self):
        sched, chunks = self.schedule()
        return dict(p2p=self.c["p2p"].value, allreduce=self.c["allreduce"].value, optimizer=_OPTIMIZER,
                    schedule=sched, chunks=chunks)

    def mask(self):
        c = self.c
        return slow_mask(self.grid(), c["target"].value, dp=c["slow_dp"].value, stage=c["slow_stage"].value,
                         microbatch=c["slow_microbatch"].value)

    def run(self, factor=None):
        k = self.c["factor"].value if factor is None else factor
        fwd, bwd = slowed_durations(self.mask(), k, self.c["op"].value, forward=FORWARD, backward=BACKWARD)
        D, P, M = self.grid()
        return simulate_pipeline(P, M, fwd, bwd, dp=D, **self.options())

    def slowed(self, r):
        return slowed_ops(r.ops, self.mask(), self.c["op"].value)

    def response(self):
        return delay_response(self.mask(), self.c["op"].value, forward=FORWARD, backward=BACKWARD, **self.options())

    def label(self):
        target = self.c["target"].value
        return _(target) if target != "nothing" else _("nothing (pick a target)")

    def response_rows(self):
        r = self.response()
        x = r.added if r.added[-1] > 0 else np.linspace(0, 1, len(r.added))
        return x, r.increase

    def describe(self, r):
        base = self.run(1.0).step_time
        note = ""
        if SCHEDULE_CHOICES[self.c["schedule"].value][1] > 1 and self.schedule()[1] == 1:
            note = _(" · interleaving needs microbatches to be a multiple of stages: showing 1F1B")
        added, grew = float(self.added_work()), r.step_time - base
        text = _("step <b>{step:.4g} s</b> (unslowed {base:.4g} s)").format(step=r.step_time, base=base)
        if added > 0:
            text += _(" · work added {added:.4g} s, step longer by <b>{grew:.4g} s</b>, absorbed by slack "
                      "{absorbed:.4g} s").format(added=added, grew=grew, absorbed=max(added - grew, 0))
        return text + _(" · devices busy {busy:.0%}").format(busy=r.utilization) + note

    def added_work(self):
        fwd, bwd = slowed_durations(self.mask(), self.c["factor"].value, self.c["op"].value, forward=FORWARD,
                                    backward=BACKWARD)
        return (fwd - FORWARD).sum() + (bwd - BACKWARD).sum()

    def follow_grid(self):
        """Keep the chosen replica, stage and microbatch inside the grid."""
        D, P, M = self.grid()
        for name, hi in (("slow_dp", D - 1), ("slow_stage", P - 1), ("slow_microbatch", M - 1)):
            if self.c[name].value > hi:
                self.c[name].value = hi
            self.c[name].max = max(hi, 1)
            self.c[name].disabled = hi == 0


def pipeline_explorer(dp=2, stages=4, microbatches=8, target="one microbatch's op", factor=3.0,
                      slow_dp=1, slow_stage=2, slow_microbatch=3, op="backward"):
    """Slow one thing in a DP x PP step and watch the delay propagate.

    Forward takes 1 s and backward 2 s per stage and microbatch, so every
    number can be checked by hand: with nothing slowed and free
    communication the step is (M + P - 1) * 3 s plus the all-reduce and the
    optimizer.

    Parameters
    ----------
    dp, stages, microbatches : int
        Starting grid: 1..4 replicas, 1..8 stages, 1..16 microbatches.
    target : str
        What to slow, one of ``SLOW_TARGETS``.
    factor : float
        How many times slower, 1..6.
    slow_dp, slow_stage, slow_microbatch : int
        Which replica, stage and microbatch.
    op : {"forward", "backward", "both"}
        Which op of the chosen cells.

    Returns
    -------
    Explorer
        Controls ``dp``, ``stages``, ``microbatches``, ``schedule``,
        ``target``, ``slow_dp``, ``slow_stage``, ``slow_microbatch``, ``op``,
        ``factor``, ``p2p``, ``allreduce``, ``color``; charts ``gantt`` and
        ``response``; ``readout``; ``run()`` returns the current
        :class:`~straggle_edu.models.pipeline.PipelineRun`.

    Examples
    --------
    >>> ex = pipeline_explorer(dp=1, stages=2, microbatches=2, target="nothing")
    >>> ex.run().step_time    # (2 + 2 - 1) * 3 + all-reduce 1 + optimizer 0.5
    10.5
    >>> ex.controls["target"].value = "one stage"
    >>> ex.controls["slow_stage"].value = 1
    >>> ex.run().step_time > 10.5
    True
    """
    c = _pipeline_controls(dp, stages, microbatches, target, factor, slow_dp, slow_stage, slow_microbatch, op)
    model = _Pipeline(c)
    width = lambda: min(760, 180 + 40 * model.grid()[2])
    r0 = model.run()
    charts = {"gantt": pipeline_gantt_chart(r0, color="microbatch", slowed=model.slowed(r0), width=width()),
              "response": delay_response_chart(*model.response_rows(), label=model.label())}
    readout = widgets.HTML()
    ex = Explorer(c, charts, extra=[readout])
    ex.readout, ex.run = readout, model.run
    templates = {}  # one spec per colour mode: other layouts are edits of it

    def redraw_template(mode, r):
        """First time in this colour mode: draw it once with Altair."""
        replace_spec(ex.charts["gantt"], pipeline_gantt_chart(r, color=mode, slowed=model.slowed(r), width=width()))
        templates[mode] = ex.charts["gantt"].spec

    def refresh(change=None):
        model.follow_grid()
        mode, r = c["color"].value, model.run()
        if mode not in templates:
            redraw_template(mode, r)
        rows = gantt_rows(r, mode, model.slowed(r))
        w, h = gantt_size(r, width())
        spec = set_color_scale(templates[mode], 0, *gantt_colors(rows, mode))
        patch_rows(ex.charts["gantt"], {None: rows}, base=spec, width=w, height=h,
                   title=_("step time {step:.4g} s").format(step=r.step_time))
        patch_rows(ex.charts["response"], {None: delay_response_rows(*model.response_rows())},
                   title=_("delaying {target}").format(target=model.label()))
        readout.value = model.describe(r)

    return ex.on_change(refresh)


def dp_scaling_explorer(jitter=0.05, pause_prob=0.01, pause=0.5, gradient_gb=1.0, bandwidth_gbs=100.0, n=1024):
    """Throughput and scaling efficiency of data parallelism against n.

    One worker computes for 1 s per step with the chosen jitter and pauses
    (a :class:`~straggle_edu.models.step_time.StepTime`); the gradients
    (``gradient_gb``) are all-reduced in a ring at ``bandwidth_gbs``. The
    grey curve is the same cluster with neither jitter nor pauses: only the
    all-reduce is left.

    Parameters
    ----------
    jitter : float
        In [0, 0.2].
    pause_prob : float
        In [0, 0.1].
    pause : float
        Seconds, in [0, 2].
    gradient_gb : float
        Gigabytes all-reduced per step, in [0, 20].
    bandwidth_gbs : float
        GB/s per link, in [10, 400].
    n : float
        Starting marker position, in [1, 100,000].

    Notes
    -----
    The ring all-reduce pays 2(n - 1) message latencies of 5 microseconds:
    a whole second at n = 100,000, which is why large jobs use
    hierarchical or tree all-reduces.

    Returns
    -------
    Explorer
        Controls ``jitter``, ``pause_prob``, ``pause``, ``gradient_gb``,
        ``bandwidth_gbs``, ``measure``, ``n``; charts ``scaling`` (param
        ``n_mark``) and ``breakdown``; ``readout``; ``scaling()`` returns the
        current :class:`~straggle_edu.models.training_step.DataParallelScaling`.

    Examples
    --------
    >>> ex = dp_scaling_explorer().set(n=4096)
    >>> ex.charts["scaling"].params.n_mark
    4096.0
    >>> round(float(ex.scaling().efficiency[-1]), 3)   # at n = 100,000 the ring's latency adds 1 s
    0.375
    """
    fs = lambda name, v, lo, hi, step, label, fmt=".2f": float_slider(name, v, lo, hi, step, label, fmt,
                                                                      continuous=False, layout=ROW)
    c = {
        "jitter": fs("jitter", jitter, 0.0, 0.2, 0.005, _("jitter"), ".3f"),
        "pause_prob": fs("pause_prob", pause_prob, 0.0, 0.1, 0.001, _("pause prob."), ".3f"),
        "pause": fs("pause", pause, 0.0, 2.0, 0.05, _("pause (s)")),
        "gradient_gb": fs("gradient_gb", gradient_gb, 0.0, 20.0, 0.5, _("gradients (GB)"), ".1f"),
        "bandwidth_gbs": fs("bandwidth_gbs", bandwidth_gbs, 10.0, 400.0, 10.0, _("bandwidth (GB/s)"), ".0f"),
        "measure": widgets.ToggleButtons(options=choices(["efficiency", "speedup"]), value="efficiency",
                                         description=_("show"), style=STYLE),
        # Stops at round counts and powers of two: a log slider would miss 1,024 and 4,096.
        "n": n_slider(n, layout=ROW),
    }
    decades = [1, 10, 100, 1000, 10000, 100000]  # the breakdown's bars
    ns = np.unique(np.concatenate([np.round(np.geomspace(1, 1e5, 60)), decades]).astype(np.int64))

    def scaling(quiet=False):
        t = StepTime(1.0, jitter=0.0 if quiet else c["jitter"].value, pause_prob=0.0 if quiet else c["pause_prob"].value,
                     pause=0.0 if quiet else c["pause"].value)
        sync = AllReduce(c["gradient_gb"].value * 1e9, c["bandwidth_gbs"].value * 1e9, 5e-6)
        return data_parallel_scaling(ns, t, sync=sync)

    def charts():
        s = scaling()
        scen = {_(YOUR_SETTING): s, _(QUIET): scaling(quiet=True)}
        return s, dp_scaling_chart(scen, measure=c["measure"].value, n=c["n"].value), dp_breakdown_chart(s, decades)

    s0, chart, bars = charts()
    readout = widgets.HTML()
    ex = Explorer(c, {"scaling": chart, "breakdown": bars}, extra=[readout])
    ex.readout, ex.scaling = readout, scaling
    ex.link("n", "scaling", "n_mark")

    def describe(change=None):
        k = max(1, round(c["n"].value))
        one = data_parallel_scaling(k, StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value,
                                                pause=c["pause"].value),
                                    sync=AllReduce(c["gradient_gb"].value * 1e9, c["bandwidth_gbs"].value * 1e9, 5e-6))
        readout.value = fill(_("n = {n}: step <b>{step:.3f} s</b> = compute {compute:.3f} + wait for the slowest "
                               "{wait:.3f} + all-reduce {sync:.3f} · speed-up {speedup:,.0f}x · efficiency "
                               "<b>{eff:.1%}</b>"),
            n=format_int(k), step=one.step_time[0], compute=one.compute, wait=one.wait[0], sync=one.sync[0],
            speedup=one.speedup[0], eff=one.efficiency[0])

    templates = {c["measure"].value: ex.charts["scaling"].spec}  # one spec per measure

    def rebuild(change=None):
        measure = c["measure"].value
        if measure not in templates:  # same params: the n slider stays linked
            replace_spec(ex.charts["scaling"], charts()[1])
            templates[measure] = ex.charts["scaling"].spec
        update(base=templates[measure])

    def update(change=None, base=None):
        s = scaling()
        scen = {_(YOUR_SETTING): s, _(QUIET): scaling(quiet=True)}
        patch_rows(ex.charts["scaling"], {1: dp_scaling_rows(scen, c["measure"].value)}, base=base)
        patch_rows(ex.charts["breakdown"], {None: dp_breakdown_rows(s, decades)})
        describe()

    ex.on_change(update, "jitter", "pause_prob", "pause", "gradient_gb", "bandwidth_gbs", now=False)
    ex.on_change(rebuild, "measure", now=False)
    return ex.on_change(describe, "n")


#: Segments per step in :func:`barriers_explorer`; its barrier counts are the divisors.
SEGMENTS = 128


def barriers_explorer(barriers=1, jitter=0.05, n=8):
    """What the barriers inside a step cost: the sum of maxima against the maximum of sums.

    A step is ``SEGMENTS`` (128) segments of equal mean work, each with its
    own independent normal jitter (coefficient of variation ``jitter``); ``n``
    ranks meet at ``barriers`` evenly spaced collectives. The curve is the
    expected overhead for every barrier count, from
    :func:`~straggle_edu.models.barriers.barrier_overhead`.

    Parameters
    ----------
    barriers : int
        Starting barriers per step: a power of two, 1 to 128.
    jitter : float
        Per segment, in [0, 0.2].
    n : int
        Ranks, a power of two from 2 to 64.

    Returns
    -------
    Explorer
        Controls ``barriers``, ``jitter``, ``n``; chart ``overhead`` (param
        ``barriers_mark``); ``readout``.

    Examples
    --------
    >>> ex = barriers_explorer().set(barriers=128)
    >>> ex.charts["overhead"].params.barriers_mark
    128.0
    >>> "7.12%" in ex.readout.value and "0.63%" in ex.readout.value
    True
    """
    ks = tuple(k for k in range(1, SEGMENTS + 1) if SEGMENTS % k == 0)
    c = {
        "barriers": n_slider(barriers, ks, name="barriers", label=_("barriers / step"), layout=ROW),
        "jitter": float_slider("jitter", jitter, 0.0, 0.2, 0.005, _("jitter / segment"), ".1%", continuous=False,
                               layout=ROW),
        "n": n_slider(n, (2, 4, 8, 16, 32, 64), label=_("ranks n"), continuous=False, layout=ROW),
    }
    rows = lambda: barrier_overhead_rows(c["n"].value, c["jitter"].value, SEGMENTS)
    readout = widgets.HTML()
    ex = Explorer(c, {"overhead": barrier_overhead_chart(rows(), barriers=c["barriers"].value)}, extra=[readout])
    ex.readout = readout
    ex.link("barriers", "overhead", "barriers_mark")

    def describe(change=None):
        k, sigma, m = c["barriers"].value, c["jitter"].value, c["n"].value
        many, one = (barrier_overhead(m, sigma, b, SEGMENTS) for b in (k, 1))
        readout.value = _("{n} ranks, {jitter:.1%} jitter per segment: {k} barrier(s) per step cost <b>{many:.2%}</b> "
                          "(a sum of {k} maxima) · one barrier costs <b>{one:.2%}</b> (the maximum of the sums)").format(
            n=m, jitter=sigma, k=k, many=many, one=one)

    def update(change=None):
        patch_rows(ex.charts["overhead"], {0: rows()})
        describe()

    ex.on_change(update, "jitter", "n", now=False)
    return ex.on_change(describe, "barriers")
