"""Backup workers and relaxed synchronization on real SGD, with real processes.

Real worker processes compute real float64 gradients of a softmax
regression (:mod:`straggle_edu.models.softmax`) on generated data whose
samples have lengths. A worker's gradient time is proportional to its
batch's total length (a sleep: results hold on two busy cores), times its
slowdown, plus its stalls. Who gets which batch, who is slow when, and so
which gradients count, is a plan drawn from the seeds
(:mod:`straggle_edu.models.sgd_schedule`): the processes execute it, the
parent measures it. So a run is reproducible given ``seed`` (data, model,
initial weights) and ``timing_seed`` (who is slow when).

Schemes (``N`` = ``workers``, ``b`` = ``backups``):

``sync``      N processes, every step waits for all N gradients.
``backup``    N + b processes, every step uses the first N (by the plan;
              ties broken by rank); the late b are cancelled and discarded.
``drop``      N processes, every step uses the first N - b; learning rate
              x (N - b)/N with ``drop_lr="scale"``.
``local``     each process takes H = ``period`` local steps on its own
              copy, then the models are averaged (one round = H steps).
``balanced``  each step's N x batch samples are split in proportion to each
              process's speed measured in the previous step.

The backends: :mod:`~straggle_edu.instruments.sgd_procs` (multiprocessing,
shared memory; the default) and :mod:`~straggle_edu.instruments.sgd_torch`
(``torch.distributed`` under ``torchrun``).

Entry points: :func:`run_sgd` (returns an :class:`SGDResult`),
``straggle-edu sgd`` (:func:`configure`, :func:`run`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import fields

import numpy as np

from .._validate import require
from ..i18n import _
from ..models import sgd_schedule as plan_
from ..models.softmax import loss
from .sgd_plan import (BACKENDS, CSV_HEADER, DEFAULT_BATCH, DEFAULT_LR, SCHEMES, SLOWS, SGDPlan, SGDResult,
                       SGDSettings, make_plan, reference_target, write_csv)

__all__ = [
    "SGDSettings",
    "SGDPlan",
    "SGDResult",
    "make_plan",
    "run_sgd",
    "order_agreement",
    "replay",
    "predicted_step_time",
    "curve_rows",
    "planned_curve",
    "reference_target",
    "write_csv",
    "SCHEMES",
    "SLOWS",
    "BACKENDS",
    "CSV_HEADER",
    "configure",
    "run",
]

def order_agreement(result, gap=0.005):
    """Check the measured arrival order against the plan.

    For every step and every pair of gradients that both arrived and whose
    planned times differ by more than ``gap`` seconds, the one planned
    earlier must have arrived earlier. Returns ``(pairs checked, pairs out
    of order)``.
    """
    pairs = bad = 0
    for f, d in zip(result.finish, result.planned):
        ok = np.isfinite(f)
        f, d = f[ok], d[ok]
        far = np.abs(d[:, None] - d[None, :]) > gap
        earlier = d[:, None] < d[None, :]
        sel = far & earlier
        pairs += int(sel.sum())
        bad += int((sel & (f[:, None] >= f[None, :])).sum())
    return pairs, bad


def run_sgd(progress=None, out=None, timeout=None, **settings):
    """Run the experiment; returns an :class:`SGDResult`.

    Keyword arguments are :class:`SGDSettings` fields; ``progress(done,
    total)`` is called after each step, ``out`` writes the per-process CSV.

    Examples
    --------
    >>> r = run_sgd(scheme="backup", workers=2, backups=1, steps=4, base_step=0.01, slow="none")
    >>> r.gradients_applied, r.counted.sum(axis=1).tolist(), r.complete
    (8, [2, 2, 2, 2], True)
    """
    s = SGDSettings(**settings)
    require(s.backend == "multiprocessing", "backend", s.backend,
            "'multiprocessing' here; the torch backend runs under torchrun "
            "(torchrun --nproc-per-node P -m straggle_edu.instruments.sgd_torch)")
    from .sgd_procs import run_processes

    return run_processes(s, progress=progress, out=out, timeout=timeout)


# ------------------------------------------------------------------------ CLI
_FLAGS = {
    "scheme": "--scheme", "workers": "--workers", "backups": "--backups", "slow": "--slow", "p": "--p",
    "stall": "--stall", "factor": "--factor", "long_share": "--long-share", "long_factor": "--long-factor",
    "steps": "--steps", "period": "--period", "lr": "--lr", "batch": "--batch", "drop_lr": "--drop-lr",
    "base_step": "--base-step", "seed": "--seed", "timing_seed": "--timing-seed", "backend": "--backend",
    "target_loss": "--target-loss", "out": "--out", "timeout": "--timeout",
}


def configure(parser):
    """Add the ``straggle-edu sgd`` arguments to an argparse parser."""
    add = parser.add_argument
    add("--scheme", default="sync", help=f"{', '.join(SCHEMES)} (default sync)")
    add("--workers", type=int, default=8, help="gradients per step the batch is made of, 1..64 (default 8)")
    add("--backups", type=int, default=0, help="spares for backup, drops for drop, 0..N-1 (default 0)")
    add("--slow", default="transient", help=f"{', '.join(SLOWS)} (default transient)")
    add("--p", type=float, default=0.1, help="transient stall probability per process and step (default 0.1)")
    add("--stall", type=float, default=4.0, help="transient stall length, in base steps (default 4)")
    add("--factor", type=float, default=3.0, help="persistent slowdown f of process 0 (default 3)")
    add("--long-share", type=float, default=0.2, help="fraction of long samples, (0, 0.5] (default 0.2)")
    add("--long-factor", type=float, default=4.0, help="how many times longer a long sample is (default 4)")
    add("--steps", type=int, default=200, help="optimizer updates (local: one round = H steps) (default 200)")
    add("--period", type=int, default=4, help="local steps H per averaging round (default 4)")
    add("--lr", type=float, default=DEFAULT_LR, help=f"learning rate (default {DEFAULT_LR})")
    add("--batch", type=int, default=DEFAULT_BATCH, help=f"samples per worker per step (default {DEFAULT_BATCH})")
    add("--drop-lr", default="scale", help="for drop: keep, or scale (lr x (N-b)/N) (default scale)")
    add("--base-step", type=float, default=0.02, help="base step time, seconds (default 0.02)")
    add("--seed", type=int, default=0, help="data, model and initial weights (default 0)")
    add("--timing-seed", type=int, default=0, help="only who is slow when (default 0)")
    add("--backend", default="multiprocessing", help="multiprocessing (default) or torch (under torchrun)")
    add("--target-loss", type=float, default=None, help="loss to time (default: sync's after 80%% of its steps)")
    add("--timeout", type=float, default=None, help="stop after this many seconds")
    add("--out", default=None, help="write the per-process CSV here")
    add("--json", action="store_true", help="print the result object as JSON")


def _settings_from(args):
    keys = [f.name for f in fields(SGDSettings)]
    kwargs = {k: getattr(args, k) for k in keys}
    try:
        return SGDSettings(**kwargs)
    except ValueError as exc:
        raise _flag_error(exc) from None


def _flag_error(exc):
    text = str(exc)
    name = text.split(" ", 1)[0]
    if name in _FLAGS:
        return ValueError(_FLAGS[name] + text[len(name):])
    return exc


def _text_progress(done, total):
    sys.stderr.write("\r" + _("step {done}/{total}").format(done=done, total=total) + ("\n" if done == total else ""))
    sys.stderr.flush()


def run(args):
    """Run ``straggle-edu sgd``; return the exit code."""
    import signal

    from ._procs import sigterm_as

    s = _settings_from(args)
    if s.backend == "torch":
        raise ValueError("--backend torch runs under torchrun: torchrun --nproc-per-node P -m "
                         "straggle_edu.instruments.sgd_torch [the same flags]")
    if args.out is not None:
        from .rank_csv import check_out_path

        try:
            check_out_path(args.out)
        except ValueError as exc:
            raise _flag_error(exc) from None
    progress = _text_progress if (not args.json and sys.stderr.isatty()) else None
    with sigterm_as(signal.default_int_handler):
        try:
            result = run_sgd(progress=progress, out=args.out, timeout=args.timeout,
                             **{f.name: getattr(s, f.name) for f in fields(SGDSettings)})
        except (TimeoutError, RuntimeError) as exc:
            print(f"straggle-edu sgd: error: {exc}", file=sys.stderr)
            return 1
    print_result(result, as_json=args.json)
    return 0


def print_result(result, as_json=False):
    """Print the result object (JSON) or a short summary."""
    d = result.to_dict()
    if as_json:
        print(json.dumps(d, indent=1))
        return
    ttt = d["time_to_target_s"]
    print(_("{scheme}: {processes} processes, {steps} steps, slowness {slow}").format(**d))
    print(_("wall {wall_s:.2f} s; test loss {final_loss:.4f}, accuracy {final_accuracy:.3f}, "
            "on long samples {accuracy_long:.3f}").format(**d))
    # Say where the target comes from: the reader's --target-loss, or sync's loss after 80% of its steps.
    target = (_("target loss {target_loss:.4f} (yours)") if result.settings.target_loss is not None else
              _("target loss {target_loss:.4f} (sync's loss at 80% of its steps)")).format(**d)
    if ttt is None:
        print(_("{target} never reached").format(target=target))
    else:
        print(_("{target} reached after {seconds:.2f} s").format(target=target, seconds=ttt))
    print(_("gradients applied {gradients_applied}, discarded {gradients_discarded}; worker-seconds reserved "
            "{worker_s_reserved:.2f}, gradient-seconds computed {gradient_s_computed:.2f}, discarded "
            "{gradient_s_discarded:.2f}").format(**d))
    print(_("weights sha256 {weights_sha256}").format(**d))


def replay(plan):
    """The weights a run of this plan produces, computed without processes.

    Exact for ``sync``, ``backup``, ``drop`` and ``local`` (the same float
    operations in the same order as the processes do them); ``balanced``
    splits by measured speed, so its replay is sync's (the same samples,
    summed in another order). Returns ``(W, losses)``: the final weights and
    the test loss after each update.

    Examples
    --------
    >>> W, losses = replay(make_plan(SGDSettings(scheme="drop", workers=4, backups=1, steps=3)))
    >>> W.shape, len(losses)
    ((9, 5), 3)
    """
    from ..models.softmax import gradient_sum

    s, d = plan.settings, plan.data
    W, losses = plan.W0.copy(), []
    grad = lambda W, b: gradient_sum(W, d.X[b], d.y[b])
    if s.scheme == "local":
        for rnd in range(s.steps // s.period):
            models = []
            for r in range(s.workers):
                w = W.copy()
                for h in range(s.period):
                    b = plan.idx[rnd * s.period + h, r]
                    w = plan_.sgd_update(w, [grad(w, b)], len(b), s.lr)
                models.append(w)
            W = (sum(models[1:]) + models[0] if len(models) > 1 else models[0].copy()) / s.workers
            losses.append(loss(W, d.X_test, d.y_test))
        return W, np.asarray(losses)
    counted = plan.counted if s.scheme != "balanced" else np.ones_like(plan.counted)
    for t in range(s.steps):
        ranks = np.flatnonzero(counted[t])
        W = plan_.sgd_update(W, [grad(W, plan.idx[t, r]) for r in ranks], len(ranks) * s.batch, s.step_lr)
        losses.append(loss(W, d.X_test, d.y_test))
    return W, np.asarray(losses)


def predicted_step_time(plan):
    """The 07 model's prediction of a step: E[k-th of n] of the planned gradient times.

    The mitigations notebook's backup model (:mod:`straggle_edu.models.backup`)
    predicts a backup step as the expected N-th fastest of N + b draws from one
    worker's step-time distribution. Here that distribution is the plan's
    own durations (a histogram, as a continuous distribution), so the
    prediction uses no measured time. Seconds.

    Examples
    --------
    >>> p = make_plan(SGDSettings(scheme="backup", workers=4, backups=2, steps=50, slow="none"))
    >>> bool(predicted_step_time(p) < p.planned.max(axis=1).mean())
    True
    """
    from scipy import stats

    from ..math.order_stats import expected_order_stat

    s = plan.settings
    d = plan.planned.ravel()
    dist = stats.rv_histogram(np.histogram(d, bins=min(200, max(10, d.size // 10))))
    return float(expected_order_stat(dist, s.counted, s.processes))


def curve_rows(result, label=None):
    """A run's curve as chart rows: ``{scheme, step, wall_s, gradients_applied, loss}``."""
    label = label or result.settings.scheme
    return [{"scheme": label, **point} for point in result.curve]


def planned_curve(plan, label=None):
    """A replay's curve on the plan's clock: chart rows ``{scheme, step, wall_s,
    gradients_applied, loss}`` where ``wall_s`` adds up the planned steps (the
    k-th planned arrival; for ``local``, each round's slowest process), with
    no machine overhead. Not for ``balanced`` (its split is measured).

    Examples
    --------
    >>> rows = planned_curve(make_plan(SGDSettings(scheme="backup", workers=2, backups=1, steps=3)))
    >>> [r["gradients_applied"] for r in rows], rows[0]["wall_s"] < rows[-1]["wall_s"]
    ([2, 4, 6], True)
    """
    s = plan.settings
    require(s.scheme != "balanced", "scheme", s.scheme, "not 'balanced' (its split is measured, not planned)")
    __, losses = replay(plan)
    if s.scheme == "local":
        H = s.period
        wall = np.cumsum(plan.planned.reshape(-1, H, s.workers).sum(axis=1).max(axis=1))
        steps, per = H * np.arange(1, len(wall) + 1), s.workers * H
    else:
        wall = np.cumsum(plan_.step_times(plan.planned, s.counted))
        steps, per = np.arange(1, s.steps + 1), s.counted
    label = label or s.scheme
    applied = steps * per // (s.period if s.scheme == "local" else 1)
    return [{"scheme": label, "step": int(t), "wall_s": float(w), "gradients_applied": int(g), "loss": float(l)}
            for t, w, g, l in zip(steps, wall, applied, losses)]
