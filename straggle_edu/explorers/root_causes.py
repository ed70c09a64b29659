"""Root-cause explorers: one interactive model per cause, and the debugging checklist.

- :func:`sequence_imbalance_explorer`: long-tailed sequence lengths handed
  to n data-parallel workers, whole or packed into a token budget.
- :func:`stage_imbalance_explorer`: layers per pipeline stage plus the last
  stage's output layer; move layers off the last stage and watch the step.
- :func:`gc_explorer`: random against planned (synchronized) garbage
  collection, against n.
- :func:`debug_checklist_explorer`: a small DP x PP job with a hidden (or
  chosen) cause; tick each debugging question to reveal the what-if answer.

Every model recomputes on release (``continuous_update=False``); each
callback is a few milliseconds of numpy plus one chart.
"""

from __future__ import annotations

import html
import math

import ipywidgets as widgets
import numpy as np

from ..charts.root_causes import (
    attribution_chart,
    attribution_rows,
    gc_chart,
    gc_rows,
    heatmap_rows,
    per_step_chart,
    per_step_rows,
    sequence_lengths_chart,
    sequence_lengths_rows,
    stage_costs_chart,
    stage_costs_rows,
    worker_heatmap_chart,
    worker_load_chart,
    worker_load_rows,
)
from ..models.causes import (
    CAUSES,
    gc_expected_step_time,
    gc_step_times,
    output_layer_cost,
    sequence_imbalance,
    sequence_lengths,
    stage_imbalance,
    straggler_scenario,
)
from .._validate import whole
from ..i18n import N_, _, format_int
from ..traces.diagnose import OP_QUESTIONS, STRAGGLING, diagnose_job
from ._base import Explorer
from ._controls import ROW, STYLE, choices, dropdown, float_slider, int_slider, log_slider
from ._patch import patch_rows

__all__ = [
    "MYSTERY",
    "debug_checklist_explorer",
    "gc_explorer",
    "sequence_imbalance_explorer",
    "stage_imbalance_explorer",
]

#: The checklist's "guess the cause" choice.
MYSTERY = N_("mystery job")
N_("none"), N_("slow worker"), N_("last stage"), N_("sequence length"), N_("random GC"), N_("slow link")  # the causes
N_("whole sequences"), N_("packed")  # the batching toggle
_HIDDEN_SIZES = (1024, 2048, 4096, 5120, 8192)
_VOCABULARIES = (32000, 50257, 128256, 131072, 151936, 256000)


def _fs(name, v, lo, hi, step, label, fmt=".2f"):
    return float_slider(name, v, lo, hi, step, label, fmt, continuous=False, layout=ROW)


def _is(name, v, lo, hi, label):
    return int_slider(name, v, lo, hi, label, continuous=False, layout=ROW)


def _log2(name, v, lo_exp, hi_exp, label, step=1.0):
    return log_slider(name, v, lo_exp, hi_exp, label, ".0f", base=2, step=step, continuous=False, layout=ROW)


#: Sequences the sequence explorer draws per redraw, at most (about 2**18).
_SEQUENCE_DRAWS = 2**18


def _sequence_steps(workers, median, sigma, sequences=None, token_budget=None):
    """Steps the sequence explorer simulates: the model's default 200 while
    steps x workers x documents per worker stays within ``_SEQUENCE_DRAWS``
    (so the defaults, whole or packed, are the notebook's setup), fewer
    beyond that (at least 2), so a redraw stays fast and within memory.
    Documents per packed worker are estimated as the model does."""
    if token_budget is None:
        docs = sequences
    else:
        mean_len = min(median * math.exp(sigma**2 / 2), 32768)
        docs = min(token_budget, math.ceil(2 * token_budget / mean_len) + 8)
    return max(2, min(200, _SEQUENCE_DRAWS // (workers * docs)))


def sequence_imbalance_explorer(workers=64, median=1024, sigma=1.0, packed=False, sequences=8, token_budget=8192,
                                attention=1.0, seed=0):
    """Long-tailed sequences on n data-parallel workers: who gets the long ones?

    Parameters
    ----------
    workers : int
        n, in [2, 1024].
    median : float
        Median sequence length, tokens, in [64, 8192].
    sigma : float
        Spread of log(length), in [0, 2].
    packed : bool
        Pack sequences into ``token_budget`` tokens per worker instead of
        giving each worker ``sequences`` whole ones.
    sequences : int
        Whole sequences per worker, in [1, 64].
    token_budget : int
        Tokens per worker when packed, in [1024, 65536].
    attention : float
        Weight of the attention (quadratic) term relative to the default
        cost model, in [0, 4].
    seed : int
        Seed of the draw.

    Returns
    -------
    Explorer
        Controls ``workers``, ``median``, ``sigma``, ``batching``,
        ``sequences``, ``token_budget``, ``attention``, ``seed``; charts
        ``load`` (one step's workers) and ``lengths``; ``readout``;
        ``result()`` returns the :class:`~straggle_edu.models.causes.SequenceImbalance`.

    Notes
    -----
    The model is :func:`~straggle_edu.models.causes.sequence_imbalance` with
    its default 200 steps, so the defaults reproduce the figures of
    ``06_root_causes.ipynb`` (S = 3.69, 2.64x the mean tokens; packed into
    8,192 tokens, S = 1.19). Large setups (many workers, many documents per
    worker) simulate fewer steps, at least 2, to stay fast and within memory.

    Examples
    --------
    >>> ex = sequence_imbalance_explorer(workers=64, seed=0)
    >>> round(ex.result().slowdown, 2), round(ex.result().token_spread, 2)
    (3.69, 2.64)
    >>> ex.controls["batching"].value = "packed"
    >>> ex.result().token_spread
    1.0
    """
    c = {
        "workers": _log2("workers", workers, 1, 10, _("workers n")),
        "median": _log2("median", median, 6, 13, _("median length"), step=0.5),
        "sigma": _fs("sigma", sigma, 0.0, 2.0, 0.05, _("length spread (sigma)")),
        "batching": widgets.ToggleButtons(options=choices(["whole sequences", "packed"]),
                                          value="packed" if packed else "whole sequences", style=STYLE),
        "sequences": _is("sequences", sequences, 1, 64, _("sequences / worker")),
        "token_budget": _log2("token_budget", token_budget, 10, 16, _("tokens / worker")),
        "attention": _fs("attention", attention, 0.0, 4.0, 0.25, _("attention weight")),
        "seed": _is("seed", seed, 0, 99, _("seed")),
    }

    def result():
        packed_ = c["batching"].value == "packed"
        n, budget = int(c["workers"].value), int(c["token_budget"].value) if packed_ else None
        steps = _sequence_steps(n, c["median"].value, c["sigma"].value, c["sequences"].value, budget)
        return sequence_imbalance(
            n, sequences=c["sequences"].value, token_budget=budget, steps=steps,
            median=c["median"].value, sigma=c["sigma"].value, attention=4e-9 * c["attention"].value,
            rng=c["seed"].value)

    def lengths():
        return sequence_lengths(5000, median=c["median"].value, sigma=c["sigma"].value, rng=c["seed"].value)

    r = result()
    readout = widgets.HTML()
    ex = Explorer(c, {"load": worker_load_chart(r.worker_times[0]), "lengths": sequence_lengths_chart(lengths())},
                  extra=[readout])
    ex.readout, ex.result = readout, result
    labelled = {"few": r.worker_times.shape[1] <= 32}

    def refresh(change=None):
        r = result()
        few = r.worker_times.shape[1] <= 32
        if few != labelled["few"]:  # axis labels on or off: a new layout
            ex.charts["load"].chart = worker_load_chart(r.worker_times[0])
            labelled["few"] = few
        else:
            bars, lines = worker_load_rows(r.worker_times[0])
            patch_rows(ex.charts["load"], {0: bars, 1: lines})
        hist, marks = sequence_lengths_rows(lengths())
        patch_rows(ex.charts["lengths"], {0: hist, 1: marks})
        c["sequences"].disabled = c["batching"].value == "packed"
        c["token_budget"].disabled = c["batching"].value != "packed"
        waste = round(r.waste, 2) + 0.0  # + 0.0 turns a rounded -0.0 into 0.0: never "waste -0%"
        readout.value = _("slowdown S = <b>{slowdown:.2f}x</b> (waste {waste:.0%}) · busiest worker has "
                          "{spread:.2f}x the mean tokens · attention is {attention:.0%} of the work").format(
            slowdown=r.slowdown, waste=waste, spread=r.token_spread, attention=r.attention_share)

    return ex.on_change(refresh)


def stage_imbalance_explorer(layers=32, stages=4, microbatches=8, hidden=4096, vocab=131072, seq_len=4096, moved=0):
    """Layers per pipeline stage, plus the last stage's output layer.

    Parameters
    ----------
    layers : int
        Transformer layers, in [4, 96].
    stages : int
        Pipeline stages, in [2, 16] (and at most ``layers``).
    microbatches : int
        In [1, 64].
    hidden, vocab, seq_len : int
        Model shape; the output layer is worth ``vocab / (12 hidden + 2
        seq_len)`` layers (:func:`~straggle_edu.models.causes.output_layer_cost`).
    moved : int
        Layers moved off the last stage onto the first ones (one each,
        round-robin), in [0, layers per stage - 1].

    Returns
    -------
    Explorer
        Controls ``layers``, ``stages``, ``microbatches``, ``hidden``,
        ``vocab``, ``moved``; chart ``stages``; ``readout``; ``result()``.

    Examples
    --------
    >>> ex = stage_imbalance_explorer()
    >>> round(ex.result().slowdown, 3)
    1.128
    >>> ex.controls["moved"].value = 2
    >>> ex.result().layers_per_stage.tolist(), round(ex.result().slowdown, 3)
    ([9, 9, 8, 6], 1.014)
    """
    c = {
        "layers": _is("layers", layers, 4, 96, _("layers")),
        "stages": _is("stages", stages, 2, 16, _("stages")),
        "microbatches": _is("microbatches", microbatches, 1, 64, _("microbatches")),
        "hidden": dropdown("hidden", hidden, list(_HIDDEN_SIZES), _("hidden size")),
        "vocab": dropdown("vocab", vocab, [(format_int(v), v) for v in _VOCABULARIES], _("vocabulary")),
        "moved": _is("moved", moved, 0, 7, _("layers moved off the last stage")),
    }
    seq = whole("seq_len", seq_len)

    def split():
        L, P = c["layers"].value, min(c["stages"].value, c["layers"].value)
        counts = np.full(P, L // P) + (np.arange(P) < L % P)
        k = min(c["moved"].value, int(counts[-1]) - 1)
        for i in range(k):
            counts[-1] -= 1
            counts[i % (P - 1)] += 1
        return counts

    def result():
        counts = split()
        return stage_imbalance(c["layers"].value, len(counts), c["microbatches"].value,
                               output_layers=output_layer_cost(c["hidden"].value, c["vocab"].value, seq),
                               layers_per_stage=counts)

    readout = widgets.HTML()
    ex = Explorer(c, {"stages": stage_costs_chart(result())}, extra=[readout])
    ex.readout, ex.result = readout, result

    def refresh(change=None):
        P = min(c["stages"].value, c["layers"].value)
        c["moved"].max = max(1, c["layers"].value // P - 1)
        r = result()
        bars, rule = stage_costs_rows(r)
        patch_rows(ex.charts["stages"], {0: bars, 1: rule}, title=_("slowdown {slowdown:.3f}x").format(slowdown=r.slowdown))
        out = output_layer_cost(c["hidden"].value, c["vocab"].value, seq)
        readout.value = _("output layer = <b>{out:.2f} layers</b> of work · layers per stage {counts} · step "
                          "{step:.4g} vs balanced {ideal:.4g} (layer-times) · slowdown <b>{slowdown:.3f}x</b>").format(
            out=out, counts=r.layers_per_stage.tolist(), step=r.step_time, ideal=r.ideal_step_time, slowdown=r.slowdown)

    return ex.on_change(refresh)


def gc_explorer(workers=64, pause=0.3, interval=10, jitter=0.02, seed=0):
    """Random against planned (synchronized) garbage collection.

    Step compute is 1 s. Random: each worker collects on its own, with
    probability 1/interval per step. Planned: all collect on the same step,
    once every ``interval`` steps.

    Parameters
    ----------
    workers : int
        n, in [1, 4096].
    pause : float
        Seconds per collection, in [0, 2].
    interval : float
        Steps between a worker's collections, in [1, 100].
    jitter : float
        Compute jitter, in [0, 0.1].
    seed : int

    Returns
    -------
    Explorer
        Controls ``workers``, ``pause``, ``interval``, ``jitter``, ``seed``;
        chart ``steps``; ``readout``; ``gain()`` the planned GC's throughput
        gain (closed form, no jitter).

    Examples
    --------
    >>> ex = gc_explorer()
    >>> round(ex.gain(), 3)       # (1 + 0.3 * (1 - 0.9**64)) / (1 + 0.3 / 10) - 1
    0.262
    >>> ex.controls["workers"].value = 1
    >>> round(ex.gain(), 3)
    0.0
    """
    c = {
        "workers": _log2("workers", workers, 0, 12, _("workers n")),
        "pause": _fs("pause", pause, 0.0, 2.0, 0.05, _("GC pause (s)")),
        "interval": _fs("interval", interval, 1.0, 100.0, 1.0, _("steps between GCs"), ".0f"),
        "jitter": _fs("jitter", jitter, 0.0, 0.1, 0.005, _("jitter"), ".3f"),
        "seed": _is("seed", seed, 0, 99, _("seed")),
    }

    def args():
        return dict(base=1.0, pause=c["pause"].value, interval=c["interval"].value)

    def gain():
        n = int(c["workers"].value)
        return gc_expected_step_time(n, **args()) / gc_expected_step_time(n, planned=True, **args()) - 1.0

    def steps():
        n = int(c["workers"].value)
        rnd = gc_step_times(n, 200, jitter=c["jitter"].value, rng=c["seed"].value, **args())
        pln = gc_step_times(n, 200, planned=True, jitter=c["jitter"].value, rng=c["seed"].value, **args())
        return rnd, pln

    readout = widgets.HTML()
    ex = Explorer(c, {"steps": gc_chart(*steps(), max_points=100)}, extra=[readout])
    ex.readout, ex.gain = readout, gain

    def refresh(change=None):
        rows, means = gc_rows(*steps(), max_points=100)
        patch_rows(ex.charts["steps"], {0: rows, 1: means})
        n = int(c["workers"].value)
        r, p = gc_expected_step_time(n, **args()), gc_expected_step_time(n, planned=True, **args())
        readout.value = _("E[step]: random GC <b>{random:.3f} s</b>, planned GC <b>{planned:.3f} s</b> · planned GC "
                          "gives <b>{gain:+.1%}</b> throughput (no jitter; the chart adds it)").format(
            random=r, planned=p, gain=gain())

    return ex.on_change(refresh)


def debug_checklist_explorer(cause=MYSTERY, seed=0, severity=1.0):
    """The article's debugging questions, as a checklist on a small DP x PP job.

    The job (4 replicas x 4 stages x 8 microbatches, 20 steps) carries one
    cause; pick it, or leave the "mystery job" to have one drawn from the
    seed. Tick a question to reveal the what-if answer; look at the charts
    first and guess.

    Parameters
    ----------
    cause : str
        ``MYSTERY`` or one of ``CAUSES``.
    seed : int
        In [0, 99].
    severity : float
        In [0, 3].

    Returns
    -------
    Explorer
        Controls ``cause``, ``seed``, ``severity``; charts ``attribution``,
        ``workers`` and ``steps``; ``checks`` (one checkbox per question,
        plus ``"cause"``) and ``answers`` (``HTML`` per question);
        ``diagnosis()`` and ``scenario()``.

    Examples
    --------
    >>> ex = debug_checklist_explorer(cause="slow link", seed=0)
    >>> ex.answers["Compute or communication?"].value
    ''
    >>> ex.checks["Compute or communication?"].value = True
    >>> ex.answers["Compute or communication?"].value.split(":")[0]
    '<b>communication'
    """
    options = [MYSTERY, *CAUSES]
    c = {
        "cause": dropdown("cause", cause, choices(options), _("job")),
        "seed": _is("seed", seed, 0, 99, _("seed")),
        "severity": _fs("severity", severity, 0.0, 3.0, 0.25, _("severity")),
    }

    def scenario():
        chosen = c["cause"].value
        if chosen == MYSTERY:
            pick = np.random.default_rng(10_000 + c["seed"].value).integers(1, len(CAUSES))
            chosen = CAUSES[int(pick)]
        return straggler_scenario(chosen, severity=c["severity"].value, rng=c["seed"].value)

    state = {}

    def diagnosis():
        return state["dx"]

    def evidence(q, dx, sc):
        a = f"<b>{html.escape(dx.answers[q])}</b>"
        if q in ("Which worker?", "Which parallel group?"):
            d, s = np.unravel_index(int(np.argmax(dx.by_worker)), dx.by_worker.shape)
            return _("{answer} (largest S_worker {s_worker:.3f} at dp {dp}, stage {stage})").format(
                answer=a, s_worker=dx.by_worker[d, s], dp=d, stage=s)
        if q == "Which pipeline stage?":
            return f"{a} (S_stage {np.array2string(dx.by_stage, precision=3)})"
        if q in ("Which collective?", "Compute or communication?"):
            top = sorted(dx.by_op.items(), key=lambda kv: -kv[1])[:3]
            return a + " (" + ", ".join(f"S_{html.escape(k)} {v:.3f}" for k, v in top) + ")"
        if q == "Persistent or one-off?":
            return _("{answer} ({share:.0%} of steps at S >= {line:.2f})").format(
                answer=a, share=float(np.mean(dx.per_step >= STRAGGLING)), line=STRAGGLING)
        return a

    checks = {q: widgets.Checkbox(value=False, description=_(q), indent=False, layout=widgets.Layout(width="230px"))
              for q in OP_QUESTIONS}
    checks["cause"] = widgets.Checkbox(value=False, description=_("Reveal the cause"), indent=False,
                                       layout=widgets.Layout(width="230px"))
    answers = {q: widgets.HTML() for q in checks}
    rows = [widgets.HBox([checks[q], answers[q]]) for q in checks]
    summary = widgets.HTML()

    def compute():
        sc = scenario()
        state["sc"], state["dx"] = sc, diagnose_job(sc)

    compute()
    dx = state["dx"]
    ex = Explorer(c, {"attribution": attribution_chart(dx), "workers": worker_heatmap_chart(dx),
                      "steps": per_step_chart(dx)}, extra=[summary, widgets.VBox(rows)])
    ex.checks, ex.answers, ex.diagnosis, ex.scenario = checks, answers, diagnosis, lambda: state["sc"]

    def reveal(change=None):
        dx, sc = state["dx"], state["sc"]
        for q in OP_QUESTIONS:
            answers[q].value = evidence(q, dx, sc) if checks[q].value else ""
        answers["cause"].value = f"<b>{html.escape(_(sc.cause))}</b> {html.escape(str(sc.truth))}" if checks["cause"].value else ""

    def refresh(change=None):
        compute()
        dx = state["dx"]
        patch_rows(ex.charts["attribution"], {None: attribution_rows(dx)})
        patch_rows(ex.charts["workers"], {None: heatmap_rows(dx)})
        patch_rows(ex.charts["steps"], {0: per_step_rows(dx)})
        summary.value = _("job slowdown S = <b>{slowdown:.3f}x</b> (waste {waste:.1%}); tick a question to check your "
                          "answer").format(slowdown=dx.slowdown, waste=dx.waste)
        reveal()

    for box in checks.values():
        box.observe(reveal, "value")
    return ex.on_change(refresh)
