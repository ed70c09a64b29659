"""Expected-maximum explorers: the slowest of n, a slow card, and scaling.

- :func:`expected_max_explorer`: the sandbox. Any shape and jitter; E[max]
  against n four ways. The workers slider moves a param (no re-render); the
  shape, jitter, sample size and seed redraw the curves (sampling, on release).
  Paste your own step times, or give a per-rank CSV's path, and it uses
  their empirical distribution instead of the model.
- :func:`max_histogram_explorer`: one worker's histogram above the slowest
  of n's. The workers slider drives a param over pre-binned histograms, so
  it moves with no kernel work; hover a bin to light up its counterpart.
- :func:`slow_card_explorer`: one persistently slow card among jittery
  peers: the job's slowdown and the GPU-hours the others waste.
- :func:`speedup_explorer`: throughput = 1/E[step], so doubling the GPUs
  does not halve the time. Closed form: both sliders drive params.
- :func:`step_draw_explorer`: "draw one step" and "play": n workers draw
  their times, the slowest lights up red and drops into a histogram of
  maxima that builds up step by step. The steps are drawn once (seeded);
  the buttons move the "steps drawn" slider, which drives the chart's param
  ``k``, so on the static site the slider alone replays the draws.
"""

from __future__ import annotations


import time

import ipywidgets as widgets
import numpy as np

from .._validate import in_range, require, whole
from ..charts.expected_max import expected_max_chart, max_vs_one_chart, slow_card_chart, speedup_chart, step_draws_chart
from ..i18n import N_, _, fill, format_count, format_int
from ..math.order_stats import expected_max, gumbel_max_approx, sqrt_2_ln_n
from ..models.cluster import Cluster, expected_step_time, scaling_efficiency
from ..models.empirical import empirical_growth
from ..models.max_growth import STEP_TIME_SHAPES, log_grid, max_growth, max_histograms, normal_max_sigmas, step_time_dist
from ..models.samplers import sample_max
from ..models.step_draws import draw_steps
from ..models.step_time import StepTime
from ..models.waste import slow_card, slow_card_curves
from ._base import Explorer
from ._controls import STYLE, choices, float_slider, int_slider, n_slider
from ._patch import patch_rows, replace_spec
from .independence import step_times_from

__all__ = ["expected_max_explorer", "max_histogram_explorer", "slow_card_explorer", "speedup_explorer",
           "step_draw_explorer", "DRAW_WORKERS"]

POWERS_OF_TWO = tuple(2**k for k in range(15))  # 1 .. 16,384 workers
#: The worker counts the "draw one step" explorer offers.
DRAW_WORKERS = (8, 64, 512, 4096)
N_("normal"), N_("log-normal"), N_("exponential"), N_("pareto")  # the step-time shapes, shown translated


def _shape(value):
    require(value in STEP_TIME_SHAPES, "shape", value, "one of " + ", ".join(map(repr, STEP_TIME_SHAPES)))
    return widgets.Dropdown(options=choices(STEP_TIME_SHAPES), value=value, description=_("step time"), style=STYLE)


def _jitter(value):
    return float_slider("jitter", value, 0.01, 0.5, 0.01, _("jitter (σ / mean)"), ".0%", continuous=False)


def _your_times():
    return {"text": widgets.Textarea(value="", description=_("your step times (s)"), placeholder="1.02, 0.98, 1.10 ...",
                                     style=STYLE, continuous_update=False),
            "csv": widgets.Text(value="", description=_("or per-rank CSV"), placeholder=_("path/to/ranks.csv"),
                                style=STYLE, continuous_update=False)}


def _values(controls):
    """The pasted or CSV step times, or None when both boxes are empty (the model is used)."""
    if not (controls["text"].value.strip() or controls["csv"].value.strip()):
        return None
    return step_times_from(controls["text"].value, controls["csv"].value)


def _error(err):
    return f"<span style='color:#b00'>{err}</span>"


def expected_max_explorer(shape="normal", jitter=0.1, n=4096, size=2000, seed=0):
    """The sandbox: E[slowest of n] against n, exact, Monte Carlo, Gumbel and sqrt(2 ln n).

    One worker's step time has mean 1 s, standard deviation ``jitter`` s and
    the chosen shape (:func:`~straggle_edu.models.max_growth.step_time_dist`).
    Step times pasted in ``text`` (or read from the per-rank CSV at ``csv``,
    all ranks and steps pooled) replace the model with their empirical
    distribution (:func:`~straggle_edu.models.empirical.empirical_growth`);
    emptying both boxes brings the model back. A bad entry is reported in the
    readout and leaves the chart as it was.

    Parameters
    ----------
    shape : {"normal", "log-normal", "exponential", "pareto"}
    jitter : float
        Standard deviation over mean, in [0.01, 0.5].
    n : int
        Workers to read out, a power of two from 1 to 16,384.
    size : int
        Monte Carlo maxima per n, in [100, 10,000].
    seed : int
        Seed of the Monte Carlo draws, in [0, 10**6].

    Returns
    -------
    Explorer
        Controls ``shape``, ``jitter``, ``n``, ``size``, ``seed``, ``text``,
        ``csv``; chart ``growth``; ``readout``; ``growth`` (the current
        :class:`~straggle_edu.models.max_growth.MaxGrowth`) and ``dist()``.

    Examples
    --------
    >>> ex = expected_max_explorer(size=200).set(n=256)
    >>> ex.charts["growth"].params.n_mark
    256.0
    >>> ex = ex.set(shape="exponential")
    >>> round(float(ex.growth.exact[-1]), 3)  # 0.9 + 0.1 * H_16384
    1.928
    >>> ex.controls["text"].value = "1.0 1.0 1.2 1.6"
    >>> round(float(ex.growth.exact[-1]), 3)  # resampling never passes the largest value
    1.6
    >>> ex.controls["text"].value = "1.0, 1.1s"
    >>> "item 2" in ex.readout.value
    True
    """
    controls = {
        "shape": _shape(shape),
        "jitter": _jitter(jitter),
        "n": n_slider(n, POWERS_OF_TWO),
        "size": int_slider("size", size, 100, 10_000, _("Monte Carlo draws per n"), step=100, continuous=False),
        "seed": widgets.BoundedIntText(value=whole("seed", seed, low=0, high=10**6), min=0, max=10**6,
                                       description=_("seed"), style=STYLE, layout=widgets.Layout(width="150px")),
        **_your_times(),
    }
    c = controls
    ns = log_grid(POWERS_OF_TWO[-1], 29)
    dist = lambda: step_time_dist(c["shape"].value, 1.0, c["jitter"].value)

    def growth(values=None):
        if values is not None:
            return empirical_growth(values, ns, c["size"].value, rng=c["seed"].value)
        return max_growth(dist(), ns, c["size"].value, rng=c["seed"].value)

    ex = Explorer(controls, {"growth": expected_max_chart(first := growth(), in_sigmas=False, n_mark=n)}, extra=[widgets.HTML()])
    ex.readout, ex.growth, ex.dist = ex.extra[0], first, dist
    ex.link("n", "growth", "n_mark")

    def readout(change=None):
        if ex.values is not None:
            return your_readout(ex.values, c["n"].value)
        d, m = dist(), c["n"].value
        exact = expected_max(d, m)
        mc = sample_max(d, m, c["size"].value, rng=c["seed"].value).mean()
        gumbel = float(d.mean()) if m == 1 else gumbel_max_approx(d, m)
        z = (exact - 1.0) / c["jitter"].value
        ex.readout.value = fill(_("slowest of {n}: exact <b>{exact:.4f} s</b> (mean + <b>{z:.2f} σ</b>) · Monte Carlo "
                                  "{mc:.4f} s · Gumbel {gumbel:.4f} s · mean + σ√(2 ln n) {bound:.4f} s"),
            n=format_int(m), exact=exact, z=z, mc=mc, gumbel=gumbel, bound=1.0 + c["jitter"].value * sqrt_2_ln_n(m))

    def your_readout(values, m):
        g = ex.growth
        i = int(np.argmin(np.abs(g.n - m)))
        ex.readout.value = fill(_("your {count} step times, slowest of {n}: resampled <b>{exact:.4f} s</b> · Monte Carlo "
                                  "{mc:.4f} s · normal fit: Gumbel {gumbel:.4f} s · your largest <b>{largest:.4f} s</b>: "
                                  "resampling never goes past it, the fitted lines do"),
            count=format_count(values.size), n=format_int(g.n[i]), exact=g.exact[i], mc=g.monte_carlo[i],
            gumbel=g.gumbel[i], largest=values.max())

    def redraw(change=None):
        try:
            values = _values(c)
            new = growth(values)
        except (ValueError, OSError) as err:
            ex.readout.value = _error(err)
            return
        ex.values, ex.growth = values, new
        replace_spec(ex.charts["growth"], expected_max_chart(ex.growth, in_sigmas=False, n_mark=c["n"].value))
        readout()

    ex.values = None
    ex.on_change(redraw, "shape", "jitter", "size", "seed", "text", "csv", now=False)
    return ex.on_change(readout, "n")


def max_histogram_explorer(shape="normal", jitter=0.1, n=256, size=20_000, seed=0):
    """One worker's step time above the slowest of n's, on one time axis.

    Histograms for n = 1, 2, 4, ..., 4096 are drawn and binned once; the
    workers slider picks one through the chart's ``n`` param, so the
    histogram slides right and narrows with no kernel work.

    Parameters
    ----------
    shape : {"normal", "log-normal", "exponential", "pareto"}
    jitter : float
        Standard deviation over mean (the mean is 1 s), in [0.01, 0.5].
    n : int
        Starting workers, a power of two from 1 to 4096.
    size : int
        Maxima drawn per n, in [1000, 100,000].
    seed : int
        Seed of the draws, >= 0.

    Returns
    -------
    Explorer
        Controls ``n``, ``shape``, ``jitter``; chart ``pair``; ``readout``;
        ``hist`` (the current :class:`~straggle_edu.models.max_growth.MaxHistograms`).

    Examples
    --------
    >>> max_histogram_explorer(size=2000).set(n=4096).charts["pair"].params.n
    4096.0
    """
    size = whole("size", size, low=1000, high=100_000)
    seed = whole("seed", seed, low=0)
    ns = POWERS_OF_TWO[:13]
    controls = {"n": n_slider(n, ns), "shape": _shape(shape), "jitter": _jitter(jitter)}
    c = controls
    dist = lambda: step_time_dist(c["shape"].value, 1.0, c["jitter"].value)
    hist = lambda: max_histograms(dist(), ns, size=size, bins=60, rng=seed)
    ex = Explorer(controls, {"pair": max_vs_one_chart(first := hist(), n=n)}, extra=[widgets.HTML()])
    ex.readout, ex.hist, ex.dist = ex.extra[0], first, dist
    ex.link("n", "pair", "n")

    def readout(change=None):
        h, m = ex.hist, c["n"].value
        i = ns.index(m)
        ex.readout.value = fill(_("slowest of {n}: mean <b>{mean:.3f} s</b> (exact E[max] {exact:.3f} s) · spread σ "
                                  "<b>{std:.3f} s</b>, {share:.0%} of one worker's"),
            n=format_int(m), mean=h.mean[i], exact=expected_max(dist(), m), std=h.std[i], share=h.std[i] / h.std[0])

    def redraw(change=None):
        ex.hist = hist()
        replace_spec(ex.charts["pair"], max_vs_one_chart(ex.hist, n=c["n"].value))
        readout()

    ex.on_change(redraw, "shape", "jitter", now=False)
    return ex.on_change(readout, "n")


def slow_card_explorer(n=4096, jitter=0.01, slow_factor=1.05, days=10.0):
    """One card ``slow_factor`` times slower among n - 1 jittery peers.

    Healthy workers take ``StepTime(1.0, jitter)``; the card takes the same
    times ``slow_factor``. The chart shows the job's slowdown against n for
    the current jitter; the readout gives the GPU-hours the other n - 1
    workers waste waiting on the card over ``days`` days.

    Parameters
    ----------
    n : int
        Workers, a power of two from 2 to 16,384.
    jitter : float
        The peers' jitter, in [0, 0.1].
    slow_factor : float
        In [1, 1.5].
    days : float
        Length of the run in days, in [1, 90].

    Returns
    -------
    Explorer
        Controls ``n``, ``jitter``, ``slow_factor``, ``days``; chart
        ``slowdown`` (jitter and slow factor swap its rows in place, so read
        its ``.spec``); ``readout``; ``card()`` returns the current
        :class:`~straggle_edu.models.waste.SlowCard`.

    Examples
    --------
    >>> ex = slow_card_explorer(jitter=0.0)
    >>> round(ex.card().job_slowdown, 6)
    0.05
    >>> ex.controls["jitter"].value = 0.05
    >>> ex.card().job_slowdown < 0.001
    True
    """
    ns = POWERS_OF_TWO[1:]
    controls = {
        "n": n_slider(n, ns),
        "jitter": float_slider("jitter", jitter, 0.0, 0.1, 0.0025, _("peers' jitter"), ".2%", continuous=False),
        "slow_factor": float_slider("slow_factor", slow_factor, 1.0, 1.5, 0.01, _("slow card ×"), continuous=False),
        "days": float_slider("days", days, 1.0, 90.0, 1.0, _("run (days)"), ".0f"),
    }
    c = controls
    card = lambda: slow_card(c["n"].value, StepTime(1.0, jitter=c["jitter"].value), c["slow_factor"].value)
    curve = lambda: slow_card_curves(ns, [c["jitter"].value], slow_factor=c["slow_factor"].value)
    chart = slow_card_chart(curve(), slow_factor=slow_factor, n_mark=c["n"].value)
    ex = Explorer(controls, {"slowdown": chart}, extra=[widgets.HTML()])
    ex.readout, ex.card = ex.extra[0], card
    ex.link("n", "slowdown", "n_mark")

    def readout(change=None):
        k, d = card(), c["days"].value
        ex.readout.value = fill(_(
            "job slowdown <b>{slowdown:.2%}</b> (the card alone: {alone:.0%}) · the other {others} GPUs wait "
            "<b>{wasted} GPU-hours</b> on it in {days:.0f} days, <b>{amplification:,.1f}×</b> the card's own shortfall "
            "· in all they idle {idle:.1%} of each step"),
            slowdown=k.job_slowdown, alone=k.slow_factor - 1, others=format_int(k.n - 1),
            wasted=format_count(round(k.gpu_hours_wasted(d))), days=d, amplification=k.amplification,
            idle=k.peer_wait / ((k.n - 1) * k.step_with))

    def redraw(change=None):
        # Same marks, new numbers: the curve (layer 0) and the card's own slowdown (layer 1).
        patch_rows(ex.charts["slowdown"], {0: curve(), 1: [{"y": c["slow_factor"].value - 1.0}]})
        readout()

    ex.on_change(redraw, "jitter", "slow_factor", now=False)
    return ex.on_change(readout, "n", "days")


def speedup_explorer(jitter=0.05, n=1024):
    """Scaling efficiency (speed-up / n) of n workers with normal jitter.

    Closed form: E[step] = 1 + jitter * e_n seconds for a 1 s base, with e_n
    = E[max of n standard normals] (computed once), so both sliders drive the
    chart's params (``jitter``, ``n_mark``). The readout computes the same
    numbers with the cluster model.

    Parameters
    ----------
    jitter : float
        In [0, 0.2].
    n : int
        A power of two from 1 to 8192.

    Returns
    -------
    Explorer
        Controls ``jitter``, ``n``; chart ``speedup``; ``readout``.

    Examples
    --------
    >>> speedup_explorer().set(jitter=0.1).charts["speedup"].params.jitter
    0.1
    """
    ns = np.array(POWERS_OF_TWO[:14])
    sigmas = normal_max_sigmas(np.r_[ns, 2 * ns])
    controls = {
        "jitter": float_slider("jitter", jitter, 0.0, 0.2, 0.005, _("jitter"), ".1%"),
        "n": n_slider(n, tuple(ns.tolist())),
    }
    c = controls
    ex = Explorer(controls, {"speedup": speedup_chart(ns, sigmas, jitter=jitter, n_mark=n)}, extra=[widgets.HTML()])
    ex.readout = ex.extra[0]
    ex.link("jitter", "speedup", "jitter")
    ex.link("n", "speedup", "n_mark")

    def readout(change=None):
        m, t = c["n"].value, StepTime(1.0, jitter=c["jitter"].value)
        eff = scaling_efficiency(Cluster.uniform(m, t))
        ratio = expected_step_time(Cluster.uniform(2 * m, t)) / (2 * expected_step_time(Cluster.uniform(m, t)))
        ex.readout.value = fill(_("{n} workers: speed-up <b>{speedup:,.0f}</b>, not {n} (efficiency {eff:.1%}) · "
                                  "doubling to {doubled}: time × <b>{ratio:.3f}</b>, not × 0.5"),
                                n=format_int(m), speedup=m * eff, eff=eff, doubled=format_int(2 * m), ratio=ratio)

    return ex.on_change(readout)


def step_draw_explorer(n=4096, jitter=0.1, steps=300, seed=0, play=50, delay=0.03):
    """Draw steps one by one: n workers' times, the slowest in red, and the maxima piling up.

    One worker's step time is normal with mean 1 s and standard deviation
    ``jitter`` s. ``steps`` steps are drawn once, seeded
    (:func:`~straggle_edu.models.step_draws.draw_steps`); "draw one step"
    shows the next, "play" the next ``play`` ones, ``delay`` seconds apart.
    Both buttons move the "steps drawn" slider, which drives the chart's
    param ``k``; the workers slider draws a new sequence for that n.

    Parameters
    ----------
    n : int
        Workers per step, one of :data:`DRAW_WORKERS`.
    jitter : float
        Standard deviation over mean, in [0.01, 0.5].
    steps : int
        Steps drawn in all, in [10, 1000].
    seed : int
        Seed of the draws, >= 0.
    play : int
        Steps one press of "play" draws, in [1, 1000].
    delay : float
        Seconds between two steps while playing, in [0, 1] (0 in tests).

    Returns
    -------
    Explorer
        Controls ``n``, ``k`` (steps drawn), ``draw`` and ``play`` (buttons);
        chart ``draws``; ``readout``; ``draws`` (the current
        :class:`~straggle_edu.models.step_draws.StepDraws`).

    Examples
    --------
    >>> ex = step_draw_explorer(n=64, steps=100, delay=0)
    >>> ex.controls["draw"].click(); ex.controls["k"].value, ex.charts["draws"].params.k
    (2, 2.0)
    >>> ex.controls["play"].click(); ex.controls["k"].value
    52
    """
    jitter = in_range("jitter", jitter, 0.01, 0.5)
    steps = whole("steps", steps, low=10, high=1000)
    seed, play = whole("seed", seed, low=0), whole("play", play, low=1, high=1000)
    delay = in_range("delay", delay, 0.0, 1.0)
    controls = {
        "n": n_slider(n, DRAW_WORKERS),
        "k": int_slider("k", 1, 1, steps, _("steps drawn")),
        "draw": widgets.Button(description=_("draw one step"), button_style="primary"),
        "play": widgets.Button(description=_("play"), icon="play"),
    }
    c = controls
    dist = step_time_dist("normal", 1.0, jitter)
    draw = lambda: draw_steps(dist, c["n"].value, steps, bins=40, rng=seed)
    ex = Explorer(controls, {"draws": step_draws_chart(first := draw(), k=1)}, extra=[widgets.HTML()])
    ex.readout, ex.draws = ex.extra[0], first
    ex.link("k", "draws", "k")

    def readout(change=None):
        d, k = ex.draws, c["k"].value
        text = _("step {k}: the slowest of {n} workers took <b>{t:.3f} s</b> (one worker's mean: {mean:.3f} s)").format(
            k=k, n=format_count(d.n), t=d.slowest[k - 1], mean=d.mean)
        if k > 1:
            maxima = d.so_far(k)
            text += _(" · the slowest of the {k} steps so far: mean <b>{avg:.3f} s</b>, spread <b>{std:.3f} s</b>, "
                      "{share:.0%} of one worker's").format(k=k, avg=maxima.mean(), std=maxima.std(ddof=1),
                                                             share=maxima.std(ddof=1) / jitter)
        ex.readout.value = text
        c["draw"].disabled = c["play"].disabled = k >= steps

    def redraw(change=None):
        ex.draws = draw()
        replace_spec(ex.charts["draws"], step_draws_chart(ex.draws, k=c["k"].value))
        readout()

    def one(button=None):
        c["k"].value = min(steps, c["k"].value + 1)

    def many(button=None):
        for _step in range(play):
            if c["k"].value >= steps:
                break
            one()
            if delay:
                time.sleep(delay)

    c["draw"].on_click(one)
    c["play"].on_click(many)
    ex.on_change(redraw, "n", now=False)
    return ex.on_change(readout, "k")
