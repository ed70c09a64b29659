"""Restaurant explorers: one table of dishes, then n workers at a barrier.

- :func:`restaurant_explorer`: sliders for the number of dishes, the dish
  time, the slow dish, fixed or random times and their spread. All of them
  drive the chart's params, so the chart moves in place (closed form). A
  button draws new random dishes; the readout shows the model's numbers.
- :func:`barrier_explorer`: the same picture with GPUs. Workers, steps,
  jitter and pauses; each change draws new step times (sampling, so the
  sliders update when released).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validate import whole
from ..charts.restaurant import barrier_chart, barrier_datasets, restaurant_chart, restaurant_datasets
from ..i18n import _
from ..models.restaurant import MAX_DISHES, dish_noise, dish_times, run_with_barrier, serve_table, worker_times
from ..models.step_time import StepTime
from ._base import Explorer
from ._controls import STYLE, float_slider, int_slider
from ._patch import patch_rows

__all__ = ["restaurant_explorer", "barrier_explorer"]


def restaurant_explorer(dishes=8, dish=10.0, slow=14.0, random=False, spread=0.2, seed=0, max_dishes=16):
    """One table: the dishes' timeline, with the average and the maximum.

    Parameters
    ----------
    dishes : int
        Starting number of dishes, 1..max_dishes.
    dish, slow : float
        Starting cooking times of an ordinary dish and of the slow dish (minutes), in [1, 60].
    random : bool
        Start with random dish times instead of fixed ones.
    spread : float
        Starting coefficient of variation of random dish times, in [0, 1].
    seed : int
        Seed of the first random draw; the button draws the next ones.
    max_dishes : int
        The most dishes the slider allows, 2..64.

    Returns
    -------
    Explorer
        Controls ``dishes``, ``dish``, ``slow``, ``times``, ``spread``,
        ``redraw``; chart ``table``; ``readout`` (an HTML widget).

    Examples
    --------
    >>> ex = restaurant_explorer()
    >>> ex.controls["slow"].value = 20
    >>> ex.charts["table"].params.slow_time, ex.readout.value
    (20.0, 'average <b>11.2</b> min · table served at <b>20.0</b> min · idle <b>44%</b>')
    """
    max_dishes = whole("max_dishes", max_dishes, low=2, high=MAX_DISHES)
    seeds = np.random.SeedSequence(whole("seed", seed, low=0))
    noise = dish_noise(max_dishes, rng=np.random.default_rng(seeds.spawn(1)[0]))
    controls = {
        "dishes": int_slider("dishes", dishes, 1, max_dishes, _("dishes")),
        "dish": float_slider("dish", dish, 1.0, 60.0, 0.5, _("dish (min)"), ".1f"),
        "slow": float_slider("slow", slow, 1.0, 60.0, 0.5, _("slow dish (min)"), ".1f"),
        "times": widgets.ToggleButtons(options=[(_("fixed"), False), (_("random"), True)], value=bool(random),
                                       description=_("dish times"), style={**STYLE, "button_width": "80px"}),
        "spread": float_slider("spread", spread, 0.0, 1.0, 0.05, _("spread")),
        "redraw": widgets.Button(description=_("new random draw"), icon="refresh", layout=widgets.Layout(width="auto")),
    }
    chart = restaurant_chart(noise, controls["dishes"].value, controls["dish"].value, controls["slow"].value,
                             controls["spread"].value, bool(random), max_dishes)
    readout = widgets.HTML()
    ex = Explorer(controls, {"table": chart}, extra=[readout])
    ex.readout, ex.noise = readout, noise
    for control, param in [("dishes", "dishes"), ("dish", "dish_time"), ("slow", "slow_time"),
                           ("times", "random_times"), ("spread", "spread")]:
        ex.link(control, "table", param)

    def table():
        c = ex.controls
        spread = c["spread"].value if c["times"].value else 0.0
        return serve_table(dish_times(c["dishes"].value, c["dish"].value, c["slow"].value, spread, ex.noise))

    def update(change=None):
        t = table()
        readout.value = _("average <b>{average:.1f}</b> min · table served at <b>{served:.1f}</b> min · idle "
                          "<b>{idle:.0%}</b>").format(average=t.average, served=t.served_at, idle=t.idle_fraction)

    def redraw(change=None):
        ex.noise = dish_noise(max_dishes, rng=np.random.default_rng(seeds.spawn(1)[0]))
        if not ex.controls["times"].value:
            ex.controls["times"].value = True  # a new draw only shows with random times
        patch_rows(ex.charts["table"], restaurant_datasets(ex.noise))  # same look, new dishes: no rebuild
        update()

    controls["redraw"].on_click(redraw)
    ex.table, ex.redraw = table, redraw
    return ex.on_change(update)


def barrier_explorer(n=8, steps=6, jitter=0.05, pause_prob=0.02, pause=0.5, seed=0):
    """n workers over several steps, a barrier after each: who waits, and how long.

    Step times come from :class:`~straggle_edu.StepTime` with a 1 s base:
    ``jitter`` is its coefficient of variation, and each step a worker pauses
    for ``pause`` seconds with probability ``pause_prob``.

    Parameters
    ----------
    n : int
        Starting number of workers, 1..32.
    steps : int
        Starting number of steps, 1..20.
    jitter : float
        In [0, 0.2].
    pause_prob : float
        In [0, 0.2].
    pause : float
        Seconds, in [0, 2].
    seed : int
        Seed of the draws, 0..999.

    Returns
    -------
    Explorer
        Controls ``n``, ``steps``, ``jitter``, ``pause_prob``, ``pause``, ``seed``;
        chart ``timeline``; ``readout``; ``run()`` returns the current
        :class:`~straggle_edu.models.restaurant.BarrierRun`.

    Examples
    --------
    >>> ex = barrier_explorer(n=4, steps=3, pause_prob=0.0)
    >>> ex.controls["n"].value = 16
    >>> ex.run().n
    16
    """
    controls = {
        "n": int_slider("n", n, 1, 32, _("workers"), continuous=False),
        "steps": int_slider("steps", steps, 1, 20, _("steps"), continuous=False),
        "jitter": float_slider("jitter", jitter, 0.0, 0.2, 0.01, _("jitter"), continuous=False),
        "pause_prob": float_slider("pause_prob", pause_prob, 0.0, 0.2, 0.005, _("pause prob."), ".3f", continuous=False),
        "pause": float_slider("pause", pause, 0.0, 2.0, 0.1, _("pause (s)"), ".1f", continuous=False),
        "seed": int_slider("seed", seed, 0, 999, _("seed"), continuous=False),
    }
    c = controls

    def run():
        dist = StepTime(1.0, jitter=c["jitter"].value, pause_prob=c["pause_prob"].value, pause=c["pause"].value)
        return run_with_barrier(worker_times(dist, c["n"].value, c["steps"].value, rng=c["seed"].value))

    first = run()
    readout = widgets.HTML()
    ex = Explorer(controls, {"timeline": barrier_chart(first)}, extra=[readout])
    ex.readout, ex.run = readout, run

    def show_numbers(r):
        readout.value = _("job <b>{job:.2f}</b> s · average worker's pace <b>{average:.2f}</b> s · slower by "
                          "<b>{slower:.1%}</b> · idle <b>{idle:.1%}</b>").format(
            job=r.job_time, average=r.average_time, slower=r.slowdown - 1, idle=r.idle_fraction)

    def update(change=None):
        r = run()
        patch_rows(ex.charts["timeline"], barrier_datasets(r))  # same look, new data: no rebuild
        show_numbers(r)

    ex.on_change(update, now=False)
    show_numbers(first)
    return ex
