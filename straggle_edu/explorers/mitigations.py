"""Mitigation explorers: every knob of notebook 07's sandbox.

- :func:`packing_explorer`: long-tailed sequences dealt to workers in order,
  by greedy LPT and by Karmarkar-Karp; the step is the most loaded worker.
- :func:`partition_explorer`: layers split evenly over pipeline stages
  against the linear-partition optimum, with the output layer's extra work on
  the last stage; the 1F1B step from the pipeline simulator.
- :func:`backup_explorer`: backup workers. The tail knobs (jitter, pauses)
  and N recompute the order statistics on release; the communication per
  worker and the price drive chart params, so they move the curves in place.
- :func:`hedging_explorer`: hedged requests; delay, fan-out and the slow
  mode's probability are chart params (closed form in the browser).
- :func:`sgd_explorer`: sync, drop and async SGD against the wall clock.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validate import in_range, whole
from ..charts.mitigations import (
    backup_datasets,
    backup_margin_chart,
    backup_step_chart,
    hedging_chart,
    hedging_tradeoff_chart,
    hedging_tradeoff_datasets,
    packing_chart,
    packing_datasets,
    sgd_datasets,
    sgd_loss_chart,
    stage_partition_chart,
    stage_partition_datasets,
)
import math

from ..i18n import N_, _, fill, format_int, get_language
from ..models.backup import backup_workers
from ..models.balance import pack_sequences, partition_for_step, partition_layers, split_layers_evenly
from ..models.causes import sequence_cost, sequence_lengths, stage_imbalance
from ..models.hedging import HedgedLatency, RequestLatency, fanout_quantile, hedging_tradeoff, tail_at_scale_latency
from ..models.sgd import compare_sgd, make_problem
from ..models.step_time import StepTime
from ._base import Explorer
from ._controls import STYLE, float_slider, int_slider, log_slider
from ._patch import patch_rows

__all__ = ["backup_explorer", "hedging_explorer", "packing_explorer", "partition_explorer", "sgd_explorer"]


def _int(name, value, lo, hi, label):
    return int_slider(name, value, lo, hi, label, continuous=False)


def _float(name, value, lo, hi, step, label, fmt=".2f", continuous=False):
    return float_slider(name, value, lo, hi, step, label, fmt, continuous=continuous)


# ---------------------------------------------------------------- packing ---


def packing_explorer(workers=16, per_worker=32, sigma=1.0, seed=0):
    """Sequences of long-tailed lengths, dealt to workers three ways.

    Lengths come from :func:`~straggle_edu.models.causes.sequence_lengths`
    (log-normal, median 1,024 tokens) and cost
    :func:`~straggle_edu.models.causes.sequence_cost` seconds each.

    Parameters
    ----------
    workers : int
        Starting number of data-parallel workers, 2..32.
    per_worker : int
        Starting sequences per worker, 2..64.
    sigma : float
        Starting spread of log(length), 0..2.
    seed : int
        Starting seed of the batch, 0..999.

    Returns
    -------
    Explorer
        Controls ``workers``, ``per_worker``, ``sigma``, ``seed``; chart
        ``packing``; ``readout``; ``packings()`` returns the three packings.

    Examples
    --------
    >>> ex = packing_explorer()
    >>> [p.method for p in ex.packings()]
    ['in_order', 'lpt', 'karmarkar_karp']
    >>> ex.controls["workers"].value = 8
    >>> ex.packings()[0].workers
    8
    """
    controls = {
        "workers": _int("workers", workers, 2, 32, _("workers")),
        "per_worker": _int("per_worker", per_worker, 2, 64, _("sequences per worker")),
        "sigma": _float("sigma", sigma, 0.0, 2.0, 0.1, _("length spread σ"), ".1f"),
        "seed": _int("seed", seed, 0, 999, _("batch (seed)")),
    }
    c = controls
    state = {}

    def packings():
        return state["packings"]

    def compute():
        W, k = c["workers"].value, c["per_worker"].value
        costs = sequence_cost(sequence_lengths(W * k, sigma=c["sigma"].value, rng=c["seed"].value))
        state["packings"] = [pack_sequences(costs, W, m) for m in ("in_order", "lpt", "karmarkar_karp")]

    compute()
    readout = widgets.HTML()
    ex = Explorer(controls, {"packing": packing_chart(*packings())}, extra=[readout])
    ex.readout, ex.packings = readout, packings

    def update(change=None):
        compute()
        before, lpt, kk = packings()
        patch_rows(ex.charts["packing"], packing_datasets(before, lpt, kk))
        readout.value = _("step (the most loaded worker): in order <b>{before:.3f} s</b> · LPT <b>{lpt:.3f} s</b> · "
                          "Karmarkar-Karp <b>{kk:.3f} s</b> · perfect balance {mean:.3f} s").format(
            before=before.makespan, lpt=lpt.makespan, kk=kk.makespan, mean=before.mean_load)

    return ex.on_change(update)


#: The most (splits x stages x microbatches) the readout searches on a slider move (a few tens of ms).
_SEARCH_WORK = 500_000


def _shortest_step(L, P, M, extra):
    """The readout's last part: the split with the shortest 1F1B step, when the search is small."""
    if math.comb(L - 1, P - 1) * P * M > _SEARCH_WORK:
        return _(" · shortest-step search: too many splits")
    fast = partition_for_step(np.ones(L), P, M, last_stage_extra=extra)
    t = stage_imbalance(L, P, M, output_layers=extra, layers_per_stage=fast.layers_per_stage)
    split = "/".join(str(int(k)) for k in fast.layers_per_stage)
    return _(" · shortest step <b>{step:.1f}</b> ({slowdown:.3f}×) with {split}").format(
        step=t.step_time, slowdown=t.slowdown, split=split)


def partition_explorer(layers=32, stages=4, output_layers=2.3, microbatches=8):
    """Layers split evenly over pipeline stages, against the optimal split.

    Every layer costs 1 unit per microbatch; the last stage also runs the
    output layer (``output_layers`` layers' worth, see
    :func:`~straggle_edu.models.causes.output_layer_cost`). The readout times
    both splits through the 1F1B simulator
    (:func:`~straggle_edu.models.causes.stage_imbalance`), and, where the
    search is small enough, the split with the shortest step
    (:func:`~straggle_edu.models.balance.partition_for_step`): the smallest
    bottleneck is not always the shortest step.

    Parameters
    ----------
    layers : int
        Starting number of layers, 4..96.
    stages : int
        Starting number of stages, 2..16 (at most ``layers``).
    output_layers : float
        Starting extra work on the last stage, in layers, 0..8.
    microbatches : int
        Starting microbatches per step, 1..64.

    Returns
    -------
    Explorer
        Controls ``layers``, ``stages``, ``output_layers``, ``microbatches``;
        chart ``stages``; ``readout``.

    Examples
    --------
    >>> ex = partition_explorer()
    >>> "1F1B step" in ex.readout.value
    True
    """
    controls = {
        "layers": _int("layers", layers, 4, 96, _("layers")),
        "stages": _int("stages", stages, 2, 16, _("stages")),
        "output_layers": _float("output_layers", output_layers, 0.0, 8.0, 0.1, _("output layer (layers)"), ".1f"),
        "microbatches": _int("microbatches", microbatches, 1, 64, _("microbatches")),
    }
    c = controls

    def splits():
        L, P = c["layers"].value, min(c["stages"].value, c["layers"].value)
        extra = c["output_layers"].value
        return (split_layers_evenly(np.ones(L), P, last_stage_extra=extra),
                partition_layers(np.ones(L), P, last_stage_extra=extra))

    readout = widgets.HTML()
    ex = Explorer(controls, {"stages": stage_partition_chart(*splits(), unit="layers")}, extra=[readout])
    ex.readout, ex.splits = readout, splits

    def update(change=None):
        even, best = splits()
        patch_rows(ex.charts["stages"], stage_partition_datasets(even, best, unit="layers"))
        L, P, M, extra = c["layers"].value, even.stages, c["microbatches"].value, c["output_layers"].value
        t_even = stage_imbalance(L, P, M, output_layers=extra)
        t_best = stage_imbalance(L, P, M, output_layers=extra, layers_per_stage=best.layers_per_stage)
        readout.value = _("1F1B step: even split <b>{even:.1f}</b> layer-times ({even_slowdown:.3f}× the ideal) · "
                          "DP split <b>{best:.1f}</b> ({best_slowdown:.3f}×)").format(
            even=t_even.step_time, even_slowdown=t_even.slowdown, best=t_best.step_time,
            best_slowdown=t_best.slowdown) + _shortest_step(L, P, M, extra)

    return ex.on_change(update)


# ----------------------------------------------------------------- backup ---


def backup_explorer(n=50, jitter=0.02, pause_prob=0.03, pause=0.55, sync=0.1, sync_per_worker=0.012, price=1.0,
                    max_backups=10):
    """Backup workers: where they stop paying.

    One worker's compute time is ``StepTime(1.1, jitter, pause_prob, pause)``;
    the defaults are :func:`~straggle_edu.models.backup.inception_50_setup`.

    Parameters
    ----------
    n : int
        Starting gradients needed per step, 4..512.
    jitter : float
        In [0.005, 0.2].
    pause_prob : float
        In [0, 0.2].
    pause : float
        Seconds, in [0, 3].
    sync : float
        Fixed communication per step, seconds, in [0, 2].
    sync_per_worker : float
        Seconds each participating worker adds, in [0, 0.1] (a chart param).
    price : float
        A backup's cost relative to a worker, in [0, 2] (a chart param).
    max_backups : int
        Backups shown, 2..16.

    Returns
    -------
    Explorer
        Controls ``n``, ``jitter``, ``pause_prob``, ``pause``,
        ``sync_per_worker``, ``price``; charts ``step`` and ``margin``;
        ``readout``; ``plan()`` returns the current BackupPlan.

    Examples
    --------
    >>> ex = backup_explorer()
    >>> ex.plan().best_step, ex.plan().best_normalized
    (4, 3)
    >>> ex.controls["price"].value = 0.0
    >>> ex.charts["margin"].params.price
    0.0
    """
    controls = {
        "n": _int("n", n, 4, 512, _("N (gradients needed)")),
        "jitter": _float("jitter", jitter, 0.005, 0.2, 0.005, _("jitter"), ".3f"),
        "pause_prob": _float("pause_prob", pause_prob, 0.0, 0.2, 0.005, _("pause prob."), ".3f"),
        "pause": _float("pause", pause, 0.0, 3.0, 0.05, _("pause (s)")),
        "sync_per_worker": _float("sync_per_worker", sync_per_worker, 0.0, 0.1, 0.001, _("sync per worker (s)"), ".3f",
                                  continuous=True),
        "price": _float("price", price, 0.0, 2.0, 0.05, _("price of a backup"), continuous=True),
    }
    c = controls
    sync = in_range("sync", sync, 0, 2)
    max_backups = whole("max_backups", max_backups, 2, 16)
    state = {}

    def compute():
        dist = StepTime(1.1, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value, pause=c["pause"].value)
        state["plan"] = backup_workers(dist, c["n"].value, max_backups, sync=sync,
                                       sync_per_worker=c["sync_per_worker"].value, price=c["price"].value)

    def plan():
        # The costs move in the browser; the plan follows them for free.
        return state["plan"].with_costs(c["sync_per_worker"].value, c["price"].value)

    compute()
    readout = widgets.HTML()
    ex = Explorer(controls, {"step": backup_step_chart(state["plan"]), "margin": backup_margin_chart(state["plan"])},
                  extra=[readout])
    ex.readout, ex.plan = readout, plan
    for chart in ("step", "margin"):
        ex.link("sync_per_worker", chart, "sync_per_worker")
        ex.link("price", chart, "price")

    def rebuild(change=None):
        compute()
        data = backup_datasets(state["plan"])
        patch_rows(ex.charts["step"], {"backup_plan": data["backup_plan"]})
        patch_rows(ex.charts["margin"], {"backup_margin": data["backup_margin"]})
        update()

    def update(change=None):
        p = plan()
        readout.value = _("shortest step with <b>b = {best_step}</b> · least GPU-time with <b>b = {best_normalized}</b> "
                          "(normalized speedup {speedup:.3f}) · a backup pays while it saves more than its "
                          "communication plus its price").format(
            best_step=p.best_step, best_normalized=p.best_normalized, speedup=p.normalized_speedup.max())

    ex.on_change(rebuild, "n", "jitter", "pause_prob", "pause", now=False)
    return ex.on_change(update, "sync_per_worker", "price")


# ---------------------------------------------------------------- hedging ---


def hedging_explorer(delay_ms=10.0, fanout=1000, slow_prob=None):
    """Hedged requests: the fan-out tail against the delay before the hedge.

    The request latency is :func:`~straggle_edu.models.hedging.tail_at_scale_latency`
    with the slow mode's probability free.

    Parameters
    ----------
    delay_ms : float
        Starting hedging delay in ms, 0.1..1000.
    fanout : int
        Starting requests per answer, 1..10,000.
    slow_prob : float, optional
        Starting probability of the slow mode, 0..0.05 (default: the calibrated one).

    Returns
    -------
    Explorer
        Controls ``delay_ms``, ``fanout``, ``slow_prob``; charts ``ccdf`` and
        ``tradeoff``; ``readout``.

    Examples
    --------
    >>> ex = hedging_explorer()
    >>> ex.readout.value
    'p99.9 of 1,000 requests: <b>1,801 ms</b> plain, <b>74 ms</b> hedged after 10 ms, for <b>2.0%</b> more requests'
    """
    base = tail_at_scale_latency()
    slow_prob = base.slow_prob if slow_prob is None else in_range("slow_prob", slow_prob, 0, 0.05)
    controls = {
        "delay_ms": log_slider("delay_ms", delay_ms, -1, 3, _("hedge after (ms)"), ".3g"),
        # the readout groups thousands in English; Chinese writes no separator below 10,000
        "fanout": log_slider("fanout", whole("fanout", fanout, 1, 10_000), 0, 4, _("requests per answer"),
                             ",.0f" if get_language() != "zh" else ".0f",
                             continuous=False),
        "slow_prob": _float("slow_prob", slow_prob, 0.0, 0.05, 0.0005, _("slow-mode prob."), ".4f", continuous=True),
    }
    c = controls

    def k():
        return max(1, round(c["fanout"].value))

    def latency():
        return RequestLatency(base.body_median, base.body_spread, c["slow_prob"].value, base.slow_median,
                              base.slow_spread)

    delays = np.geomspace(1e-4, 1.0, 60)
    readout = widgets.HTML()
    ex = Explorer(controls, {
        "ccdf": hedging_chart(latency(), delay_ms=c["delay_ms"].value, fanout=k()),
        "tradeoff": hedging_tradeoff_chart(hedging_tradeoff(latency(), delays, 0.999, k()),
                                           delay_ms=c["delay_ms"].value),
    }, extra=[readout])
    ex.readout, ex.latency = readout, latency
    ex.link("delay_ms", "ccdf", "delay_ms")
    ex.link("fanout", "ccdf", "fanout", lambda v: float(max(1, round(v))))
    ex.link("slow_prob", "ccdf", "slow_prob")
    ex.link("delay_ms", "tradeoff", "delay_ms")

    def rebuild(change=None):
        tr = hedging_tradeoff(latency(), delays, 0.999, k())
        patch_rows(ex.charts["tradeoff"], hedging_tradeoff_datasets(tr))
        update()

    def update(change=None):
        lat, d, m = latency(), c["delay_ms"].value, k()
        hedged = HedgedLatency(lat, d / 1000)
        readout.value = fill(_("p99.9 of {n} requests: <b>{plain:,.0f} ms</b> plain, <b>{hedged:,.0f} ms</b> hedged "
                               "after {delay:.3g} ms, for <b>{extra:.1f}%</b> more requests"),
            n=format_int(m), plain=1e3 * fanout_quantile(lat, 0.999, m), hedged=1e3 * fanout_quantile(hedged, 0.999, m),
            delay=d, extra=100 * hedged.extra_load)

    ex.on_change(rebuild, "fanout", "slow_prob", now=False)
    return ex.on_change(update, "delay_ms")


# -------------------------------------------------------------------- sgd ---

N_("sync"), N_("drop"), N_("async")  # the SGD modes, named in the readout


def sgd_explorer(workers=16, backups=2, pause_prob=0.05, pause=1.0, lr_scale=0.5, slow_factor=1.0,
                 heterogeneity=0.0, full_batch=False, wall_time=60.0):
    """Sync, drop and async SGD on a toy problem, at equal wall-clock time.

    Parameters
    ----------
    workers : int
        Starting number of workers, 2..64.
    backups : int
        Starting gradients dropped per drop step, 0..8 (at most workers - 1).
    pause_prob, pause : float
        Each gradient's compute time is ``StepTime(1.0, 0.1, pause_prob, pause)``:
        pause_prob in [0, 0.3], pause in [0, 5] s.
    lr_scale : float
        Learning rate times the problem's smoothness L, in [0.05, 1.95].
    slow_factor : float
        Worker 0 is persistently this much slower, in [1, 3].
    heterogeneity : float
        How different the workers' shards are, in [0, 2].
    full_batch : bool
        Exact shard gradients instead of minibatches of 8 rows.
    wall_time : float
        Seconds of training, 10..200.

    Returns
    -------
    Explorer
        Controls as above; chart ``loss``; ``readout``; ``comparison()``.

    Examples
    --------
    >>> ex = sgd_explorer()
    >>> [s["mode"] for s in ex.comparison().summary()]
    ['sync', 'drop', 'async']
    """
    controls = {
        "workers": _int("workers", workers, 2, 64, _("workers")),
        "backups": _int("backups", backups, 0, 8, _("gradients dropped b")),
        "pause_prob": _float("pause_prob", pause_prob, 0.0, 0.3, 0.01, _("pause prob.")),
        "pause": _float("pause", pause, 0.0, 5.0, 0.1, _("pause (s)"), ".1f"),
        "lr_scale": _float("lr_scale", lr_scale, 0.05, 1.95, 0.05, _("learning rate × L")),
        "slow_factor": _float("slow_factor", slow_factor, 1.0, 3.0, 0.1, _("worker 0 slower ×"), ".1f"),
        "heterogeneity": _float("heterogeneity", heterogeneity, 0.0, 2.0, 0.1, _("shard skew"), ".1f"),
        "full_batch": widgets.Checkbox(value=bool(full_batch), description=_("exact shard gradients"), style=STYLE),
    }
    c = controls
    wall_time = in_range("wall_time", wall_time, 10, 200)
    state = {}

    def compute():
        W = c["workers"].value
        problem = make_problem(W, heterogeneity=c["heterogeneity"].value, condition=4.0, rng=0)
        step = StepTime(1.0, jitter=0.1, pause_prob=c["pause_prob"].value, pause=c["pause"].value)
        state["comparison"] = compare_sgd(
            step, problem, backups=min(c["backups"].value, W - 1), wall_time=wall_time,
            lr=c["lr_scale"].value / problem.smoothness, batch=problem.X.shape[1] if c["full_batch"].value else 8,
            slow_factor=c["slow_factor"].value, rng=1)

    compute()
    readout = widgets.HTML()
    ex = Explorer(controls, {"loss": sgd_loss_chart(state["comparison"])}, extra=[readout])
    ex.readout, ex.comparison = readout, lambda: state["comparison"]

    def update(change=None):
        compute()
        patch_rows(ex.charts["loss"], sgd_datasets(state["comparison"]))
        parts = [_("{mode}: {updates} updates, {dropped} dropped, staleness {staleness:.1f}, loss <b>{loss:.2e}</b>").format(
            mode=_(s["mode"]), updates=s["updates"], dropped=s["gradients_dropped"], staleness=s["mean_staleness"],
            loss=s["final_loss"]) for s in state["comparison"].summary()]
        readout.value = " · ".join(parts)

    return ex.on_change(update)
