"""Training-step explorers: the pipeline Gantt chart, and DP scaling against n.

- :func:`pipeline_explorer`: a DP x PP grid running 1F1B (or GPipe, or
  interleaved 1F1B). Slow one worker, one stage, one replica or one
  microbatch's op, and watch the delay travel through the pipeline and stop
  at the DP barrier, or vanish into slack. Simulated on every change
  (milliseconds), redrawn on release.
- :func:`dp_scaling_explorer`: throughput and scaling efficiency of data
  parallelism against n, for the jitter, pauses and all-reduce you choose.
  The curve is recomputed on release (about a millisecond); the marker
  ``n`` is a chart param and moves in place.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..charts.training_step import (
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
from ..models.cluster import AllReduce
from ..models.pipeline import pipeline_step_times, simulate_pipeline
from ..models.step_time import StepTime
from ..models.training_step import data_parallel_scaling
from ._base import Explorer
from ._controls import worker_counts
from ._patch import patch_rows, replace_spec, set_color_scale

__all__ = ["SLOW_TARGETS", "SCHEDULE_CHOICES", "pipeline_explorer", "dp_scaling_explorer", "slow_mask"]

_STYLE = {"description_width": "initial"}
_ROW = widgets.Layout(width="300px")

#: What the reader can slow down in :func:`pipeline_explorer`.
SLOW_TARGETS = ("nothing", "one worker", "one stage", "one replica", "one microbatch's op")
#: Schedules offered, and the (schedule, chunks) each one means.
SCHEDULE_CHOICES = {"1F1B": ("1f1b", 1), "GPipe": ("gpipe", 1), "interleaved 1F1B (2 chunks)": ("1f1b", 2)}
FORWARD, BACKWARD = 1.0, 2.0  # seconds per stage and microbatch, easy to check by hand


def slow_mask(shape, target, *, dp=0, stage=0, microbatch=0):
    """Which (dp, stage, microbatch) cells a target slows, as a boolean array.

    Parameters
    ----------
    shape : tuple
        (dp, stages, microbatches).
    target : str
        One of ``SLOW_TARGETS``.
    dp, stage, microbatch : int
        The chosen replica, stage and microbatch (clipped into range).

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> int(slow_mask((2, 4, 8), "one stage", stage=3).sum())   # 2 replicas x 8 microbatches
    16
    >>> int(slow_mask((2, 4, 8), "one microbatch's op", dp=1, stage=3, microbatch=9).sum())
    1
    """
    if target not in SLOW_TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, SLOW_TARGETS))}, got {target!r}")
    D, P, M = shape
    d, s, m = min(max(dp, 0), D - 1), min(max(stage, 0), P - 1), min(max(microbatch, 0), M - 1)
    mask = np.zeros(shape, bool)
    if target == "one worker":
        mask[d, s] = True
    elif target == "one stage":
        mask[:, s] = True
    elif target == "one replica":
        mask[d] = True
    elif target == "one microbatch's op":
        mask[d, s, m] = True
    return mask


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
    int_slider = lambda v, lo, hi, label: widgets.IntSlider(value=min(max(int(v), lo), hi), min=lo, max=hi, description=label,
                                                            style=_STYLE, continuous_update=False, layout=_ROW)
    c = {
        "dp": int_slider(dp, 1, 4, "DP replicas"),
        "stages": int_slider(stages, 1, 8, "PP stages"),
        "microbatches": int_slider(microbatches, 1, 16, "microbatches"),
        "schedule": widgets.Dropdown(options=list(SCHEDULE_CHOICES), value="1F1B", description="schedule", style=_STYLE),
        "target": widgets.Dropdown(options=list(SLOW_TARGETS), value=target if target in SLOW_TARGETS else "nothing",
                                   description="slow down", style=_STYLE),
        "slow_dp": int_slider(slow_dp, 0, 3, "replica"),
        "slow_stage": int_slider(slow_stage, 0, 7, "stage"),
        "slow_microbatch": int_slider(slow_microbatch, 0, 15, "microbatch"),
        "op": widgets.Dropdown(options=["forward", "backward", "both"], value=op if op in ("forward", "backward", "both") else "backward",
                               description="op", style=_STYLE),
        "factor": widgets.FloatSlider(value=min(max(float(factor), 1.0), 6.0), min=1.0, max=6.0, step=0.25, description="x slower",
                                      style=_STYLE, continuous_update=False, layout=_ROW),
        "p2p": widgets.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05, description="p2p (s)", style=_STYLE,
                                   continuous_update=False, layout=_ROW),
        "allreduce": widgets.FloatSlider(value=1.0, min=0.0, max=4.0, step=0.25, description="all-reduce (s)", style=_STYLE,
                                         continuous_update=False, layout=_ROW),
        "color": widgets.ToggleButtons(options=["microbatch", "op"], value="microbatch", description="colour by", style=_STYLE),
    }

    def grid():
        return c["dp"].value, c["stages"].value, c["microbatches"].value

    def schedule():
        sched, chunks = SCHEDULE_CHOICES[c["schedule"].value]
        D, P, M = grid()
        return (sched, chunks) if M % P == 0 else (sched, 1)

    def durations(scale=None):
        shape = grid()
        mask = slow_mask(shape, c["target"].value, dp=c["slow_dp"].value, stage=c["slow_stage"].value,
                         microbatch=c["slow_microbatch"].value)
        k = c["factor"].value if scale is None else scale
        fwd = np.where(mask & (c["op"].value != "backward"), FORWARD * k, FORWARD)
        bwd = np.where(mask & (c["op"].value != "forward"), BACKWARD * k, BACKWARD)
        return fwd, bwd, mask

    def run(fwd=None, bwd=None):
        if fwd is None:
            fwd, bwd, _ = durations()
        sched, chunks = schedule()
        D, P, M = grid()
        return simulate_pipeline(P, M, fwd, bwd, dp=D, p2p=c["p2p"].value, allreduce=c["allreduce"].value,
                                 optimizer=0.5, schedule=sched, chunks=chunks)

    def slowed_rows(r, mask):
        ops = r.ops
        compute = np.isin(ops["kind"], ["F", "B"])
        which = {"forward": ["F"], "backward": ["B"], "both": ["F", "B"]}[c["op"].value]
        rows = compute & np.isin(ops["kind"], which)
        rows[compute] &= mask[ops["dp"][compute], ops["stage"][compute], ops["microbatch"][compute]]
        return rows

    def response():
        """Step-time increase as the chosen cells slow from 1x to 6x, in one batched call."""
        factors = np.linspace(1.0, 6.0, 11)
        pairs = [durations(k) for k in factors]
        sched, chunks = schedule()
        D, P, M = grid()
        times = pipeline_step_times(P, M, np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]), dp=D,
                                    p2p=c["p2p"].value, allreduce=c["allreduce"].value, optimizer=0.5,
                                    schedule=sched, chunks=chunks)
        base_f, base_b, mask = pairs[0]
        added = np.array([float((p[0] - base_f).sum() + (p[1] - base_b).sum()) for p in pairs])
        return added, times - times[0]

    def response_x(added):
        return added if added[-1] > 0 else np.linspace(0, 1, len(added))

    def label():
        return c["target"].value if c["target"].value != "nothing" else "nothing (pick a target)"

    def view():
        fwd, bwd, mask = durations()
        r = run(fwd, bwd)
        gantt = pipeline_gantt_chart(r, color=c["color"].value, slowed=slowed_rows(r, mask),
                                     width=min(760, 180 + 40 * grid()[2]))
        added, increase = response()
        return r, gantt, delay_response_chart(response_x(added), increase, label=label())

    r0, gantt, resp = view()
    readout = widgets.HTML()
    ex = Explorer(c, {"gantt": gantt, "response": resp}, extra=[readout])
    ex.readout, ex.run = readout, run

    def describe(r):
        fwd, bwd, _ = durations(1.0)
        base = run(fwd, bwd).step_time
        sched, chunks = schedule()
        note = ""
        if SCHEDULE_CHOICES[c["schedule"].value][1] > 1 and chunks == 1:
            note = " · interleaving needs microbatches to be a multiple of stages: showing 1F1B"
        fwd, bwd, mask = durations()
        added = float((fwd - FORWARD).sum() + (bwd - BACKWARD).sum())
        grew = r.step_time - base
        text = f"step <b>{r.step_time:.4g} s</b> (unslowed {base:.4g} s)"
        if added > 0:
            text += (f" · work added {added:.4g} s, step longer by <b>{grew:.4g} s</b>, "
                     f"absorbed by slack {max(added - grew, 0):.4g} s")
        text += f" · devices busy {r.utilization:.0%}{note}"
        readout.value = text

    templates = {}  # one spec per colour mode: other layouts are edits of it

    def refresh(_=None):
        D, P, M = grid()
        for name, hi in (("slow_dp", D - 1), ("slow_stage", P - 1), ("slow_microbatch", M - 1)):
            if c[name].value > hi:
                c[name].value = hi
            c[name].max = max(hi, 0) if hi > 0 else 1
            c[name].disabled = hi == 0
        mode = c["color"].value
        fwd, bwd, mask = durations()
        r = run(fwd, bwd)
        if mode not in templates:  # first time in this colour mode: draw it once with Altair
            _, g, resp = view()
            replace_spec(ex.charts["gantt"], g)
            replace_spec(ex.charts["response"], resp)
            templates[mode] = ex.charts["gantt"].spec
        rows = gantt_rows(r, mode, slowed_rows(r, mask))
        width, height = gantt_size(r, min(760, 180 + 40 * M))
        spec = set_color_scale(templates[mode], 0, *gantt_colors(rows, mode))
        patch_rows(ex.charts["gantt"], {None: rows}, base=spec, width=width, height=height,
                   title=f"step time {r.step_time:.4g} s")
        added, increase = response()
        patch_rows(ex.charts["response"], {None: delay_response_rows(response_x(added), increase)},
                   title=f"delaying {label()}")
        describe(r)

    for ctrl in c.values():
        ctrl.observe(refresh, "value")
    refresh()
    return ex


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
    >>> ex = dp_scaling_explorer()
    >>> ex.controls["n"].value = 4096
    >>> ex.charts["scaling"].params.n_mark
    4096.0
    >>> round(float(ex.scaling().efficiency[-1]), 3)   # at n = 100,000 the ring's latency adds 1 s
    0.375
    """
    clamp = lambda v, lo, hi: min(max(float(v), lo), hi)
    fs = lambda v, lo, hi, step, label, fmt=".2f": widgets.FloatSlider(
        value=clamp(v, lo, hi), min=lo, max=hi, step=step, description=label, readout_format=fmt, style=_STYLE,
        continuous_update=False, layout=_ROW)
    c = {
        "jitter": fs(jitter, 0.0, 0.2, 0.005, "jitter", ".3f"),
        "pause_prob": fs(pause_prob, 0.0, 0.1, 0.001, "pause prob.", ".3f"),
        "pause": fs(pause, 0.0, 2.0, 0.05, "pause (s)"),
        "gradient_gb": fs(gradient_gb, 0.0, 20.0, 0.5, "gradients (GB)", ".1f"),
        "bandwidth_gbs": fs(bandwidth_gbs, 10.0, 400.0, 10.0, "bandwidth (GB/s)", ".0f"),
        "measure": widgets.ToggleButtons(options=["efficiency", "speedup"], value="efficiency", description="show",
                                         style=_STYLE),
        # Stops at round counts and powers of two: a log slider would miss 1,024 and 4,096.
        "n": widgets.SelectionSlider(options=[(f"{m:,}", m) for m in worker_counts([round(clamp(n, 1, 1e5))])],
                                     value=round(clamp(n, 1, 1e5)), description="workers n", style=_STYLE, layout=_ROW),
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
        scen = {"your setting": s, "no jitter, no pauses": scaling(quiet=True)}
        return s, dp_scaling_chart(scen, measure=c["measure"].value, n=c["n"].value), dp_breakdown_chart(s, decades)

    s0, chart, bars = charts()
    readout = widgets.HTML()
    ex = Explorer(c, {"scaling": chart, "breakdown": bars}, extra=[readout])
    ex.readout, ex.scaling = readout, scaling
    ex.link("n", "scaling", "n_mark")

    def describe(_=None):
        k = max(1, round(c["n"].value))
        one = data_parallel_scaling(k, StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value,
                                                pause=c["pause"].value),
                                    sync=AllReduce(c["gradient_gb"].value * 1e9, c["bandwidth_gbs"].value * 1e9, 5e-6))
        readout.value = (f"n = {k:,}: step <b>{one.step_time[0]:.3f} s</b> = compute {one.compute:.3f} + wait for the "
                         f"slowest {one.wait[0]:.3f} + all-reduce {one.sync[0]:.3f} · speed-up {one.speedup[0]:,.0f}x · "
                         f"efficiency <b>{one.efficiency[0]:.1%}</b>")

    templates = {c["measure"].value: ex.charts["scaling"].spec}  # one spec per measure

    def rebuild(_=None):
        measure = c["measure"].value
        if measure not in templates:  # same params: the n slider stays linked
            replace_spec(ex.charts["scaling"], charts()[1])
            templates[measure] = ex.charts["scaling"].spec
        update(base=templates[measure])

    def update(_=None, base=None):
        s = scaling()
        scen = {"your setting": s, "no jitter, no pauses": scaling(quiet=True)}
        patch_rows(ex.charts["scaling"], {1: dp_scaling_rows(scen, c["measure"].value)}, base=base)
        patch_rows(ex.charts["breakdown"], {None: dp_breakdown_rows(s, decades)})
        describe()

    for name in ("jitter", "pause_prob", "pause", "gradient_gb", "bandwidth_gbs"):
        c[name].observe(update, "value")
    c["measure"].observe(rebuild, "value")
    c["n"].observe(describe, "value")
    describe()
    return ex
