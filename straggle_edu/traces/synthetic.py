"""Synthetic op-level traces with injected causes and known answers.

:func:`synthetic_trace` simulates a Megatron-style job, DP x PP with the 1F1B
schedule of :func:`straggle_edu.models.pipeline.schedule_1f1b` and M
microbatches per step, and records it in the artifact schema of
:mod:`~straggle_edu.traces.optrace`. Every DP rank runs the same program,
the one :mod:`straggle_edu.models.job_trace` describes (its ops, streams and
waits) and simulates.

Causes (each one a keyword argument; combine freely)
----------------------------------------------------
``slow_worker=(dp_rank, stage, factor)``
    one worker's forwards and backwards take ``factor`` times as long.
``last_stage=factor``
    the last stage's compute takes ``factor`` times as long (loss and
    embedding layers on top of an equal share of transformer layers).
``seq_imbalance=sigma``
    each DP rank's microbatch m carries a lognormal multiple (log-sd sigma,
    mean 1) of the mean tokens, so its forward and backward scale with it on
    every stage. An array of shape (steps, dp, microbatches) gives the
    multiples directly.
``gc_pauses=(probability, seconds)``
    each worker's ``gc`` op pauses for ``seconds`` with ``probability`` per
    step. An array of shape (steps, dp, pp) gives the pause seconds directly.
``slow_link=(dp_rank, stage, factor)``
    the link between ``stage`` and ``stage + 1`` of one DP rank transfers
    ``factor`` times slower, both ways.

:data:`CAUSES` names a preset per cause, with the culprit the analysis should
name; :func:`example_trace` builds one.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._validate import as_rng, check_memory, in_range, nonnegative, positive, probability, require, whole
from ..models.job_trace import program, record, wavefront, wire
from .optrace import OPTYPES, op_trace_from_columns, write_trace

__all__ = ["synthetic_trace", "example_trace", "example_trace_path", "trace_or_example", "cause_gallery", "CAUSES"]

C = {name: i for i, name in enumerate(OPTYPES)}

CAUSES = {
    "none": {"kwargs": {}, "culprit": None},
    "slow-worker": {"kwargs": {"slow_worker": (1, 1, 2.0)}, "culprit": ("by_worker", (1, 1))},
    "last-stage": {"kwargs": {"last_stage": 1.5}, "culprit": ("by_stage", 1)},
    "seq-imbalance": {"kwargs": {"seq_imbalance": 0.5}, "culprit": ("by_optype", "backward-compute")},
    "gc-pauses": {"kwargs": {"gc_pauses": (0.04, 0.1)}, "culprit": ("by_optype", "gc")},
    "slow-link": {"kwargs": {"slow_link": (2, 0, 40.0)}, "culprit": ("by_dp_rank", 2)},
}


def synthetic_trace(dp=4, pp=2, microbatches=4, steps=5, *, forward=0.010, backward=0.020, p2p=0.0005,
                    params_gather=0.002, reduce_scatter=0.004, layernorm=0.0003, embedding=0.0005, clip=0.0008,
                    optimizer=0.003, gc=0.0005, slow_worker=None, last_stage=1.0, seq_imbalance=0.0, gc_pauses=None,
                    slow_link=None, jitter=0.0, gaps=0.0, step_gap=0.001, rng=None):
    """Simulate a DP x PP 1F1B job and record it as an op-level trace.

    Parameters
    ----------
    dp, pp, microbatches, steps : int
        DP ranks D, pipeline stages P, microbatches M per step, steps.
    forward, backward : float
        One stage's forward / backward of one microbatch, seconds.
    p2p, params_gather, reduce_scatter, layernorm, embedding, clip, optimizer, gc : float
        Transfer or op times, seconds (``clip`` is the gradient-norm all-reduce).
    slow_worker, last_stage, seq_imbalance, gc_pauses, slow_link
        Injected causes; see the module docstring.
    jitter : float
        Coefficient of variation of every op time (normal, clipped at 10%).
    gaps : float
        Each op starts up to ``gaps`` seconds (uniform) after it could: the
        launch delays the replay drops.
    step_gap : float
        Seconds between the end of one step and the start of the next.

    Returns
    -------
    OpTrace

    Examples
    --------
    One 2x worker among four (DP 4, one stage) gives S = 2 / 1.25 = 1.6 on the
    compute; the all-reduce and the optimizer dilute it a little:

    >>> from straggle_edu.traces import analyze
    >>> t = synthetic_trace(dp=4, pp=1, microbatches=4, steps=2, slow_worker=(1, 0, 2.0))
    >>> a = analyze(t)
    >>> a.culprit("by_dp_rank"), round(a.slowdown, 2)
    (1, 1.56)
    """
    D = whole("dp", dp)
    P = whole("pp", pp)
    M = whole("microbatches", microbatches)
    S = whole("steps", steps)
    times = {}
    for name, v in (("forward", forward), ("backward", backward)):
        times[name] = positive(name, v)
    for name, v in (("p2p", p2p), ("params_gather", params_gather), ("reduce_scatter", reduce_scatter),
                    ("layernorm", layernorm), ("embedding", embedding), ("clip", clip),
                    ("optimizer", optimizer), ("gc", gc)):
        times[name] = nonnegative(name, v)
    jitter = in_range("jitter", jitter, 0.0, 1.0)
    gaps = nonnegative("gaps", gaps)
    step_gap = nonnegative("step_gap", step_gap)
    last_stage = positive("last_stage", last_stage)
    rng = as_rng(rng)
    ops_per_step = D * P * (6 * M + 10)
    check_memory(ops_per_step * S * 8 * 14, f"a synthetic trace of {ops_per_step * S} ops")

    inj = _injections(D, P, S, M, rng, slow_worker=slow_worker, last_stage=last_stage, slow_link=slow_link,
                      gc_pauses=gc_pauses, seq_imbalance=seq_imbalance)
    programs = [program(s, P, M, D) for s in range(P)]
    ops = _op_works(programs, times, inj, jitter, rng, S, D)
    wire(ops, programs, D)
    start, end = wavefront(ops, S, D, gaps, rng)
    return _record(ops, start, end, S, D, P, step_gap)


def _worker_arg(name, value, D, high_stage):
    """A ``(dp_rank, stage, factor)`` argument, checked."""
    require(isinstance(value, (tuple, list)) and len(value) == 3, name, value, "a tuple (dp_rank, stage, factor)")
    d = whole(f"{name}[0] (dp_rank)", value[0], low=0, high=D - 1)
    s_ = whole(f"{name}[1] (stage)", value[1], low=0, high=high_stage)
    f = positive(f"{name}[2] (factor)", value[2])
    return d, s_, f


def _injections(D, P, S, M, rng, *, slow_worker, last_stage, slow_link, gc_pauses, seq_imbalance):
    """The injected causes as factors: per worker, per stage, per link, GC seconds, token multipliers."""
    worker_factor = np.ones((D, P))
    if slow_worker is not None:
        d, s_, f = _worker_arg("slow_worker", slow_worker, D, P - 1)
        worker_factor[d, s_] = f
    stage_factor = np.ones(P)
    stage_factor[P - 1] *= last_stage
    link_factor = np.ones((D, max(P - 1, 1)))
    if slow_link is not None:
        require(P > 1, "slow_link", slow_link, "None for a single stage (there is no link)")
        d, s_, f = _worker_arg("slow_link", slow_link, D, P - 2)
        link_factor[d, s_] = f
    # per (step, dp, stage): extra gc seconds
    if gc_pauses is None:
        pauses = np.zeros((S, D, P))
    elif isinstance(gc_pauses, (tuple, list)) and len(gc_pauses) == 2 and np.ndim(gc_pauses[0]) == 0:
        pause_p = probability("gc_pauses[0] (probability)", gc_pauses[0])
        pause_t = nonnegative("gc_pauses[1] (seconds)", gc_pauses[1])
        pauses = pause_t * (rng.random((S, D, P)) < pause_p)
    else:
        pauses = np.asarray(nonnegative("gc_pauses", gc_pauses), dtype=float)
        require(pauses.shape == (S, D, P), "gc_pauses", gc_pauses,
                f"a tuple (probability, seconds) or an array of pause seconds of shape (steps, dp, pp) = {(S, D, P)}")

    # per (step, dp, microbatch): token multiplier
    if np.ndim(seq_imbalance) == 0:
        sigma = nonnegative("seq_imbalance", seq_imbalance)
        tokens = rng.lognormal(-0.5 * sigma**2, sigma, size=(S, D, M)) if sigma > 0 else np.ones((S, D, M))
    else:
        tokens = np.asarray(positive("seq_imbalance", seq_imbalance), dtype=float)
        require(tokens.shape == (S, D, M), "seq_imbalance", seq_imbalance,
                f"a lognormal sigma >= 0 or an array of token multipliers of shape (steps, dp, microbatches) = {(S, D, M)}")

    return {"worker": worker_factor, "stage": stage_factor, "link": link_factor, "pauses": pauses, "tokens": tokens}


def _noisy(rng, jitter, shape):
    """Multiplicative jitter around 1 (at least 0.1)."""
    if jitter == 0:
        return np.ones(shape)
    return np.clip(1.0 + jitter * rng.standard_normal(shape), 0.1, None)


def _op_works(programs, times, inj, jitter, rng, S, D):
    """Every op of every stage's program with its work, shape (S, D), in seconds."""
    stage_factor, worker_factor, link_factor = inj["stage"], inj["worker"], inj["link"]
    pauses, tokens = inj["pauses"], inj["tokens"]

    def noisy(shape):
        return _noisy(rng, jitter, shape)

    # durations per op: (S, D)
    ops = []  # (stage, stream, index, kind, codes, mb, tags, work)
    for s, (main, side) in enumerate(programs):
        for stream, prog in (("main", main), ("side", side)):
            for i, (kind, codes, mb, tags) in enumerate(prog):
                c0 = codes[0]
                if kind == "compute":
                    base = times["forward"] if c0 == C["forward-compute"] else times["backward"]
                    w = base * stage_factor[s] * worker_factor[None, :, s] * tokens[:, :, mb] * noisy((S, D))
                elif kind == "p2p":
                    parts = []
                    for tag in tags:
                        link = tag[2] if tag[0] == "F" else tag[2] - 1  # the link below the sender / above
                        parts.append(times["p2p"] * link_factor[None, :, link] * noisy((S, D)))
                    w = np.maximum.reduce(parts)
                elif c0 == C["gc"]:
                    w = times["gc"] * noisy((S, D)) + pauses[:, :, s]
                elif c0 == C["layernorm-grads-all-reduce"]:
                    w = times["layernorm"] * noisy((S, D))
                elif c0 == C["optimizer"]:
                    w = times["optimizer"] * noisy((S, D))
                elif c0 == C["embedding-grads-all-reduce"]:
                    w = np.broadcast_to(times["embedding"] * noisy((S, D)), (S, D))
                elif c0 == C["optimizer-clip-main-grad"]:
                    w = np.broadcast_to(times["clip"] * noisy((S, 1)), (S, D))
                elif c0 == C["params-all-gather"]:
                    w = np.broadcast_to(times["params_gather"] * noisy((S, 1)), (S, D))
                else:
                    w = np.broadcast_to(times["reduce_scatter"] * noisy((S, 1)), (S, D))
                ops.append({"stage": s, "stream": stream, "i": i, "kind": kind, "codes": codes, "mb": mb,
                            "tags": tags, "work": np.array(w, dtype=float)})
    # the embedding all-reduce is one transfer for both stages of a DP rank
    emb = [o for o in ops if o["kind"] == "emb"]
    if len(emb) == 2:
        emb[1]["work"] = emb[0]["work"]
    return ops


def _record(ops, start, end, S, D, P, step_gap):
    """The simulated timeline as a checked OpTrace."""
    cols, meta = record(ops, start, end, S, D, P, step_gap)
    return op_trace_from_columns(cols, meta=meta, meta_source="synthetic")


def example_trace(cause="slow-worker", *, dp=4, pp=2, microbatches=4, steps=8, jitter=0.02, rng=0, **kwargs):
    """A small trace with one injected cause from :data:`CAUSES`.

    Examples
    --------
    >>> from straggle_edu.traces import analyze
    >>> analyze(example_trace("last-stage")).culprit("by_stage")
    1
    """
    require(cause in CAUSES, "cause", cause, f"one of {', '.join(map(repr, CAUSES))}")
    args = dict(CAUSES[cause]["kwargs"])
    args.update(kwargs)
    return synthetic_trace(dp=dp, pp=pp, microbatches=microbatches, steps=steps, jitter=jitter, rng=rng, **args)


def example_trace_path(cause="slow-worker", folder=None):
    """Write :func:`example_trace` as ``trace-<cause>.csv`` (plus its meta file); return the path.

    ``folder`` defaults to a fresh temporary folder.

    Examples
    --------
    >>> p = example_trace_path("last-stage")
    >>> p.name, sorted(f.name for f in p.parent.iterdir())
    ('trace-last-stage.csv', ['meta-last-stage.yaml', 'trace-last-stage.csv'])
    """
    import tempfile

    require(cause in CAUSES, "cause", cause, f"one of {', '.join(map(repr, CAUSES))}")
    folder = Path(tempfile.mkdtemp(prefix="straggle-edu-")) if folder is None else Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be a folder that exists, got {os.fspath(folder)!r}")
    return write_trace(example_trace(cause), folder / f"trace-{cause}.csv")


def trace_or_example(path=None, *, example="slow-worker"):
    """The trace at ``path`` (see :func:`straggle_edu.traces.read_trace`), or, when
    ``path`` is None, the generated :func:`example_trace` named ``example``.

    Examples
    --------
    >>> trace_or_example(None, example="none")
    OpTrace(ops=1472, dp=4, pp=2, steps=8, source='<memory>')
    """
    if path is None:
        return example_trace(example)
    from . import read_trace

    return read_trace(path)


def cause_gallery(**kwargs):
    """One row per injected cause: its analysis in a few numbers (the fingerprints).

    Keyword arguments go to :func:`example_trace`. Each row has ``cause``,
    ``S``, ``waste``, ``m_w``, ``m_s``, ``persistent`` (share of steps carrying
    at least half the excess; None when S < 1.02), ``optype`` (the top S_X optype), ``worker`` and
    ``culprit`` (what the preset's culprit attribution names).

    Examples
    --------
    >>> rows = cause_gallery(steps=4)
    >>> [(r["cause"], r["culprit"]) for r in rows][1:3]
    [('slow-worker', (1, 1)), ('last-stage', 1)]
    """
    from .diagnose import persistent_share
    from .whatif import analyze_ops

    rows = []
    for cause, spec in CAUSES.items():
        a = analyze_ops(example_trace(cause, **kwargs))
        by, _ = spec["culprit"] or ("by_worker", None)
        rows.append(
            {
                "cause": cause,
                "S": a.slowdown,
                "waste": a.waste,
                "m_w": a.m_w,
                "m_s": a.m_s,
                "persistent": persistent_share(a) if a.slowdown >= 1.02 else None,  # no slowdown, no pattern
                "optype": a.culprit("by_optype"),
                "worker": a.culprit("by_worker"),
                "culprit": a.culprit(by),
            }
        )
    return rows
