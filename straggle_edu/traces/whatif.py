"""What-if analysis of op-level traces: ideal durations, slowdown, attribution.

Definitions (Lin et al., OSDI 2025; the symbols of the CLI's JSON)
------------------------------------------------------------------
Ideal durations
    A compute op (``forward-compute``, ``backward-compute``, and the local
    ``optimizer`` and ``gc``) takes the mean duration of its group: the same
    optype, step and microbatch (microbatch for forward and backward only),
    across all DP ranks and stages. Every other op (sends, receives and
    collectives, ``layernorm-grads-all-reduce`` included) takes the median
    transfer time of its optype over the whole trace, with the wait for
    peers removed: transfer = end - latest arrival among the participants.
    A combined send+recv is one op with its own median; a send/recv without
    a peer is its own group.
Slowdown
    S = mean_step T(recorded) / mean_step T(ideal), where T is the replayed
    step time (:mod:`~straggle_edu.traces.replay`) with the recorded or the
    ideal durations. Replaying the numerator too keeps launch gaps out of S.
    waste = 1 - 1/S. Per step: T(recorded)[step] / T(ideal)[step].
Attribution
    S_X = mean T(every op ideal except the ops of X, which keep their recorded
    durations) / mean T(ideal), for X one optype (a combined send+recv
    belongs to both of its optypes), one DP rank, or one stage. A worker
    (d, s) gets min(S_dp=d, S_stage=s), as in the artifact's heatmap.
M_S
    The share of the slowdown removed by giving the last stage's ops their
    ideal durations: (T_orig - T_fixed) / (T_orig - T_ideal), mean step times.
M_W
    The same, fixing the ceil(3%) of workers with the largest worker
    slowdown (at least one), as in the artifact (Eq. 5 of the paper).
    Both are ratios, not probabilities: fixing something can remove more
    than the whole slowdown (M_S = 1.22 on the artifact's last-stage case).
    None when S = 1 (nothing to share).
Replay error
    mean over steps of |T(recorded durations) - recorded step time| /
    recorded step time, where the recorded step time is the last end minus
    the first start of the step's ops.

Speed: all DP ranks, steps and variants replay together (see
:func:`~straggle_edu.traces.replay.replay`). The ideal durations are the
same on every DP rank, so the "one DP rank keeps its durations" variants
need only two DP columns (that rank, and any other): DP + 2 + PP + optypes
replays cost about as much as a handful.
"""

from __future__ import annotations

import math

import numpy as np

from .optrace import OPTYPES
from .replay import MEAN_KIND, build_model, replay
from .result import Analysis

__all__ = ["analyze_ops", "ideal_work", "optype_groups", "worker_timeline", "IDEALS", "PP_COMM", "MW_FRACTION",
           "AUTO_WORKERS"]

MW_FRACTION = 0.03  # M_W fixes the ceil(3%) slowest workers, as in the artifact
AUTO_WORKERS = 1024  # "auto" attribution reports by_dp_rank / by_worker up to this many workers


IDEALS = ("artifact", "per-step")  # how ideal durations are set; see the module docstring


def ideal_work(model, ideal="artifact"):
    """The ideal work of every cell, shape (N, S, D), in seconds.

    Parameters
    ----------
    model : DependencyModel
    ideal : {"artifact", "per-step"}
        ``"artifact"`` (default, as the artifact's ``wia.py``): a compute op
        takes the mean of its optype over the whole trace, every other op the
        median transfer time of its optype. ``"per-step"``: a compute op takes
        the mean of its optype, step and microbatch; every other op the median
        of its node label (a combined send+recv is a type of its own).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import op_trace_from_columns
    >>> from straggle_edu.traces.replay import build_model
    >>> t = op_trace_from_columns({"dp_rank": [0, 1], "stage": [0, 0], "step": [0, 0],
    ...                            "optype": ["forward-compute"] * 2, "start_ts": [0.0, 0.0],
    ...                            "duration": [1.0, 3.0], "seq_id": [0, 0], "mb_id": [0, 0]})
    >>> ideal_work(build_model(t)).ravel().tolist()   # the group mean, straggler included
    [2.0, 2.0]
    """
    if ideal not in IDEALS:
        raise ValueError(f"ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
    out = np.empty(model.shape)
    mean_nodes = _mean_nodes(model)
    if ideal == "artifact":
        _optype_means(model, mean_nodes, out)
        _optype_medians(model, mean_nodes, out)
    else:
        _group_means(model, mean_nodes, out)
        _label_medians(model, mean_nodes, out)
    return out


def _mean_nodes(model):
    """The nodes whose ideal is a mean: single compute ops (forward, backward, optimizer, gc)."""
    return [n for n in range(model.n_nodes) if len(model.node_codes[n]) == 1 and model.node_codes[n][0] in MEAN_KIND]


def _optype_means(model, mean_nodes, out):
    """Artifact: each compute optype's mean over every step, stage, DP rank and microbatch."""
    for code in {model.node_codes[n][0] for n in mean_nodes}:
        nodes = [n for n in mean_nodes if model.node_codes[n][0] == code]
        out[nodes] = float(np.mean(model.work[nodes]))


def _optype_medians(model, mean_nodes, out):
    """Artifact: each other optype's median transfer; a combined send+recv takes the larger."""
    skip = set(mean_nodes)
    by_code = {}
    for n in range(model.n_nodes):
        if n not in skip:
            for c in model.node_codes[n]:
                by_code.setdefault(c, []).append(n)
    median = {c: float(np.median(model.work[nodes])) for c, nodes in by_code.items()}
    for n in range(model.n_nodes):
        if n not in skip:
            out[n] = max(median[c] for c in model.node_codes[n])


def _group_means(model, mean_nodes, out):
    """Per step: the mean over (optype, step, microbatch) across DP ranks and stages."""
    if not mean_nodes:
        return
    S, D = model.shape[1:]
    idx = np.array(mean_nodes)
    codes = np.array([model.node_codes[n][0] for n in mean_nodes])
    mb = model.node_mb[idx].copy()
    mb[~np.isin(codes, (OPTYPES.index("forward-compute"), OPTYPES.index("backward-compute")))] = -1
    mb_max = int(mb.max()) + 2
    step_idx = np.broadcast_to(np.arange(S)[None, :, None], mb.shape)
    flat = ((codes[:, None, None] * S + step_idx) * mb_max + (mb + 1)).reshape(-1)
    size = int(flat.max()) + 1
    total = np.bincount(flat, weights=model.work[idx].reshape(-1), minlength=size)
    count = np.bincount(flat, minlength=size)
    out[idx] = (total / np.maximum(count, 1))[flat].reshape(len(idx), S, D)


def _label_medians(model, mean_nodes, out):
    """Per step: the median transfer of each node label over the trace."""
    labels = {}
    skip = set(mean_nodes)
    for n in range(model.n_nodes):
        if n not in skip:
            labels.setdefault(model.node_label[n], []).append(n)
    for nodes in labels.values():
        out[nodes] = float(np.median(model.work[nodes]))


PP_COMM = {"forward-pp-comm": ("forward-send", "forward-recv"),
           "backward-pp-comm": ("backward-send", "backward-recv")}  # the artifact's names for send/recv


def optype_groups(model, ideal="artifact"):
    """The suspects of ``by_optype``: ``[(name, node mask)]``, in OPTYPES order.

    With ``ideal="artifact"`` sends and receives are grouped as the artifact
    names them (``forward-pp-comm``, ``backward-pp-comm``); with
    ``"per-step"`` every optype is its own suspect. A combined send+recv node
    belongs to every group of its optypes.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.replay import build_model
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=1))
    >>> [name for name, _ in optype_groups(m)][:4]
    ['forward-compute', 'backward-compute', 'forward-pp-comm', 'backward-pp-comm']
    """
    present = sorted({c for codes in model.node_codes for c in codes})
    names = [OPTYPES[c] for c in present]
    if ideal == "artifact":
        for group, members in PP_COMM.items():
            names = [group if n in members else n for n in names]
    groups = []
    for name in dict.fromkeys(names):
        codes = {OPTYPES.index(o) for o in PP_COMM.get(name, (name,))}
        groups.append((name, np.array([bool(codes & set(c)) for c in model.node_codes])))
    return groups


def _ratio(num, den):
    return float(np.mean(num) / np.mean(den))


def _share(t_orig, t_fixed, t_ideal):
    excess = float(np.mean(t_orig) - np.mean(t_ideal))
    if excess <= 1e-12 * float(np.mean(t_ideal)):
        return None
    return float((np.mean(t_orig) - np.mean(t_fixed)) / excess)


class _Ticker:
    """A tqdm progress bar over the phases of the analysis, or nothing."""

    def __init__(self, show, total=5):
        self.bar = None
        if show:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc="what-if analysis", unit="phase", leave=False)
            except ImportError:  # pragma: no cover
                self.bar = None

    def tick(self):
        if self.bar is not None:
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _variant_masks(model, groups):
    """Which nodes keep their recorded work, per variant: recorded, ideal, stages, groups, M_S."""
    N, P = model.n_nodes, model.pp_size
    keep = np.zeros((3 + P + len(groups), N), dtype=bool)
    keep[0] = True
    for s in range(P):
        keep[2 + s] = model.node_stage == s
    for j, (_, mask) in enumerate(groups):
        keep[2 + P + j] = mask
    keep[-1] = model.node_stage != P - 1  # M_S: last stage at ideal, the rest recorded
    return keep


def _replay_variants(model, ideal, keep):
    """Replay every variant of ``keep`` at once: step times, shape (V, S)."""
    orig = model.work
    S, D = model.shape[1:]

    def work(n):
        out = np.empty((len(keep), S, D))
        k = keep[:, n]
        out[k] = orig[n]
        out[~k] = ideal[n]
        return out

    return replay(model, work)


def _stage_optype_scores(model, T, groups):
    """S, per-step S, S_stage, S_optype and M_S from the variant replays."""
    P = model.pp_size
    t_orig, t_ideal = T[0], T[1]
    if (t_ideal <= 0).any():
        s = int(np.flatnonzero(t_ideal <= 0)[0])
        raise ValueError(f"{model.source}: step {model.steps[s]} replays to 0 s with ideal durations")
    return {
        "slowdown": _ratio(t_orig, t_ideal),
        "per_step": t_orig / t_ideal,
        "by_stage": {s: _ratio(T[2 + s], t_ideal) for s in range(P)},
        "stage_step": T[2:2 + P] / t_ideal,
        "by_optype": {name: _ratio(T[2 + P + j], t_ideal) for j, (name, _) in enumerate(groups)},
        "optype_step": T[2 + P:2 + P + len(groups)] / t_ideal,
        "m_s": _share(t_orig, T[-1], t_ideal) if P > 1 else None,
    }


def _worker_scores(by_dp, by_stage, dp_step, stage_step):
    """A worker (d, s) scores min(S_dp=d, S_stage=s), overall and per step (workers x steps)."""
    D, P = len(by_dp), len(by_stage)
    workers = [(d, s) for d in range(D) for s in range(P)]
    by_worker = {(d, s): min(by_dp[d], by_stage[s]) for d, s in workers}
    worker_step = np.minimum(dp_step[:, None, :], stage_step[None, :, :]).reshape(D * P, -1)
    return workers, by_worker, worker_step


def _m_w(model, ideal, by_worker, t_orig, t_ideal):
    """M_W: the share of the slowdown removed by fixing the ceil(3%) top workers."""
    D, P = model.dp_size, model.pp_size
    k = max(1, math.ceil(MW_FRACTION * D * P))
    ranked = sorted(by_worker, key=lambda w: (-by_worker[w], w[1] * D + w[0]))[:k]
    fix = np.zeros((P, D), dtype=bool)
    for d, s in ranked:
        fix[s, d] = True

    def work(n):
        out = model.work[n].copy()
        cols = fix[model.node_stage[n]]
        out[:, cols] = ideal[n][:, cols]
        return out[None]

    t_mw = replay(model, work)[0]
    return _share(t_orig, t_mw, t_ideal), tuple(ranked)


def _notes(model, trace, report_workers):
    notes = list(model.notes)
    if trace.skipped:
        notes.append("skipped ops of unknown type: " + ", ".join(f"{n} x{c}" for n, c in trace.skipped))
    if not report_workers:
        D, P = model.dp_size, model.pp_size
        notes.append(f"by_dp_rank and by_worker are left out for {D * P} workers (more than {AUTO_WORKERS}); "
                     f"use --attribution full to include them")
    return tuple(notes)


def analyze_ops(trace, *, attribution="auto", progress=False, ideal="artifact"):
    """What-if analysis of an :class:`~straggle_edu.traces.OpTrace`.

    Parameters
    ----------
    trace : OpTrace
    attribution : {"auto", "full", "basic"}
        Whether ``by_dp_rank`` and ``by_worker`` are reported (they are always
        computed, for M_W): ``"full"`` always, ``"basic"`` never, ``"auto"``
        up to :data:`AUTO_WORKERS` workers.
    progress : bool
        Show a progress bar (tqdm) over the replays.
    ideal : {"artifact", "per-step"}
        How ideal durations are set, see :func:`ideal_work` (default: as the
        artifact's ``wia.py``, so S matches its ``blocking_slowdown``).

    Returns
    -------
    Analysis

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> a = analyze_ops(synthetic_trace(dp=4, pp=2, microbatches=4, steps=2, last_stage=1.5))
    >>> a.culprit("by_stage"), a.m_s > 1
    (1, True)
    """
    bar = _Ticker(progress)
    model = build_model(trace)
    bar.tick()
    ideal_arr = ideal_work(model, ideal)
    groups = optype_groups(model, ideal)
    T = _replay_variants(model, ideal_arr, _variant_masks(model, groups))
    bar.tick()
    sc = _stage_optype_scores(model, T, groups)
    dp_step = _dp_variants(model, model.work, ideal_arr)
    bar.tick()
    t_orig, t_ideal = T[0], T[1]
    by_dp = {d: float(np.mean(dp_step[d] * t_ideal) / np.mean(t_ideal)) for d in range(model.dp_size)}
    workers, by_worker, worker_step = _worker_scores(by_dp, sc["by_stage"], dp_step, sc["stage_step"])
    m_w, fixed = _m_w(model, ideal_arr, by_worker, t_orig, t_ideal)
    bar.tick()
    report = attribution == "full" or (attribution == "auto" and len(workers) <= AUTO_WORKERS)
    details = {"model": model, "ideal": ideal_arr, "ideal_method": ideal, "optypes": tuple(sc["by_optype"]),
               "stage_step": sc["stage_step"], "dp_step": dp_step, "optype_step": sc["optype_step"],
               "mw_workers": len(fixed), "mw_fixed": fixed, "microbatch": _microbatch_stats(model, ideal_arr),
               "layout": trace.layout, "trace": trace}
    bar.tick()
    bar.close()
    return Analysis(
        format="op-level", source=str(trace.source), slowdown=sc["slowdown"], waste=1.0 - 1.0 / sc["slowdown"],
        per_step={int(s): float(v) for s, v in zip(model.steps, sc["per_step"])},
        replay_error=float(np.mean(np.abs(t_orig - model.recorded_step) / model.recorded_step)),
        steps=model.steps, step_time=t_orig, ideal_step_time=t_ideal, recorded_step_time=model.recorded_step,
        workers=tuple(workers), worker_step_slowdown=worker_step, by_optype=sc["by_optype"],
        by_dp_rank=by_dp if report else None, by_stage=sc["by_stage"], by_worker=by_worker if report else None,
        m_w=m_w, m_s=sc["m_s"], notes=_notes(model, trace, report), details=details,
    )


def _dp_variants(model, orig, ideal):
    """Per-step S_dp for every DP rank, shape (D, S).

    The ideal work of a node is the same on every DP rank, so in the variant
    "DP rank d keeps its recorded work" all other DP ranks are identical:
    two DP columns suffice (d, and one stand-in for the rest). Traces whose
    ideal differs across DP ranks fall back to the full width.
    """
    N, S, D = model.shape
    t_ideal = replay(model, lambda n: ideal[n][None])[0]
    if D == 1:
        t = replay(model, lambda n: orig[n][None])[0]
        return (t / t_ideal)[None]
    uniform = np.ptp(ideal, axis=2).max() <= 1e-12 * max(1.0, float(np.abs(ideal).max()))
    if uniform:
        def work_b(n):
            out = np.empty((D, S, 2))
            out[:, :, 0] = orig[n].T
            out[:, :, 1] = ideal[n][None, :, 0]
            return out

        T = replay(model, work_b)
    else:
        rows = []
        chunk = max(1, int(2**26 // max(1, S * D * 8)))
        for lo in range(0, D, chunk):
            ds = np.arange(lo, min(D, lo + chunk))

            def work_full(n, ds=ds):
                out = np.broadcast_to(ideal[n], (len(ds), S, D)).copy()
                out[np.arange(len(ds)), :, ds] = orig[n][:, ds].T
                return out

            rows.append(replay(model, work_full))
        T = np.concatenate(rows)
    return T / t_ideal[None]


def _microbatch_stats(model, ideal):
    """The longest compute op relative to its group's mean, and the microbatch spread.

    ``cv`` is the coefficient of variation of compute ops *within each
    worker-step*, after dividing out the worker-step's own average speed: a
    slow worker is slow on every microbatch (small ``cv``), while uneven
    sequence lengths make one microbatch long and the next short (large ``cv``).
    """
    fwd_bwd = [n for n in range(model.n_nodes)
               if len(model.node_codes[n]) == 1 and model.node_codes[n][0] in (OPTYPES.index("forward-compute"),
                                                                                OPTYPES.index("backward-compute"))]
    if not fwd_bwd:
        return None
    idx = np.array(fwd_bwd)
    w = model.work[idx]
    m = ideal[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(m > 0, w / m, 1.0)
    j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    n, s, d = idx[j[0]], j[1], j[2]
    stages = model.node_stage[idx]
    resid = []
    for p in np.unique(stages):
        r = ratio[stages == p]  # (ops of the stage, S, D)
        resid.append((r / r.mean(axis=0, keepdims=True) - 1.0).ravel())
    resid = np.concatenate(resid)
    cv = float(np.sqrt(np.mean(resid**2)))
    return {
        "step": int(model.steps[s]),
        "mb": int(model.node_mb[n, s, d]),
        "dp_rank": int(d),
        "stage": int(model.node_stage[n]),
        "optype": OPTYPES[model.node_codes[n][0]],
        "ratio": float(ratio[j]),
        "cv": cv,
    }


def worker_timeline(analysis, dp_rank, stage, step):
    """One worker's ops in one step: recorded, and replayed with ideal durations.

    Returns a list of dicts (one per op, in program order) with ``op``,
    ``microbatch``, ``recorded_start``, ``recorded_duration``, ``work``
    (duration or transfer), ``ideal_work``, ``ideal_start``, ``ideal_end``
    and ``excess`` (work / ideal work), seconds from the step's start.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> a = analyze_ops(synthetic_trace(dp=2, pp=1, microbatches=2, steps=1, slow_worker=(1, 0, 3.0)))
    >>> [(r["op"], round(r["excess"], 2)) for r in worker_timeline(a, 1, 0, 0) if "compute" in r["op"]]
    [('forward-compute', 1.5), ('backward-compute', 1.5), ('forward-compute', 1.5), ('backward-compute', 1.5)]
    """
    model = analysis.details["model"]
    ideal = analysis.details["ideal"]
    steps = list(model.steps)
    if step not in steps:
        raise ValueError(f"step must be one of the trace's steps {steps[0]}..{steps[-1]}, got {step!r}")
    if not (0 <= dp_rank < model.dp_size):
        raise ValueError(f"dp_rank must be in 0..{model.dp_size - 1}, got {dp_rank!r}")
    if not (0 <= stage < model.pp_size):
        raise ValueError(f"stage must be in 0..{model.pp_size - 1}, got {stage!r}")
    s = steps.index(step)
    _, (starts, ends) = replay(model, lambda n: ideal[n][None, s:s + 1], keep_timeline=True)
    rows = []
    for n in np.flatnonzero(model.node_stage == stage):
        st = np.broadcast_to(starts[n], (1, 1, model.dp_size))[0, 0, dp_rank]
        en = np.broadcast_to(ends[n], (1, 1, model.dp_size))[0, 0, dp_rank]
        w = float(model.work[n, s, dp_rank])
        iw = float(ideal[n, s, dp_rank])
        rows.append(
            {
                "op": model.node_label[n],
                "microbatch": int(model.node_mb[n, s, dp_rank]),
                "recorded_start": float(model.start[n, s, dp_rank]),
                "recorded_duration": float(model.duration[n, s, dp_rank]),
                "work": w,
                "ideal_work": iw,
                "ideal_start": float(st),
                "ideal_end": float(en),
                "excess": w / iw if iw > 0 else 1.0,
            }
        )
    rows.sort(key=lambda r: (r["recorded_start"], r["recorded_start"] + r["recorded_duration"]))
    return rows
