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
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..i18n import N_
from ._kept import Slab
from .optrace import OPTYPES
from .replay import MEAN_KIND, build_model, replay
from .result import Analysis, Note

__all__ = ["analyze_ops", "analyze_blocks", "ideal_work", "ideal_stats", "merge_stats", "merge_all_stats",
           "finish_stats", "finish_all_stats", "ideal_from_stats", "block_scores", "merge_scores", "block_mw",
           "scores_analysis", "optype_groups", "worker_timeline", "IDEALS", "PP_COMM", "MW_FRACTION", "AUTO_WORKERS",
           "analyze_sync", "mean_ideal", "node_kinds", "kept_work", "median_values"]

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
    return ideal_from_stats(model, ideal, finish_stats(ideal_stats(model, ideal)))


def ideal_stats(model, ideal="artifact", values=True):
    """What the ideal needs from the whole trace, taken from one block of steps.

    Returns ``{"sum": {code: s}, "count": {code: n}, "values": {key: array}}``:
    the work summed and counted per compute optype (``"artifact"`` only; the
    per-step means stay inside their step), and every work value per median
    key (an optype code, or a node label for ``"per-step"``; none with
    ``values=False``). Blocks merge
    with :func:`merge_stats`; :func:`finish_stats` turns them into means and
    medians, identical to those of the whole trace in one block.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.replay import build_model
    >>> st = ideal_stats(build_model(synthetic_trace(dp=2, pp=1, microbatches=2, steps=1)))
    >>> st["count"][OPTYPES.index("forward-compute")]   # 2 microbatches x 2 DP ranks
    4
    """
    mean_nodes = _mean_nodes(model)
    out = {"sum": {}, "count": {}, "values": {}}
    if ideal == "artifact":
        for code in sorted({model.node_codes[n][0] for n in mean_nodes}):
            w = model.work[[n for n in mean_nodes if model.node_codes[n][0] == code]]
            out["sum"][code], out["count"][code] = float(w.sum()), int(w.size)
    if values:
        for key, nodes in _median_keys(model, mean_nodes, ideal).items():
            out["values"][key] = model.work[nodes].ravel()
    return out


def merge_stats(a, b):
    """Two blocks' :func:`ideal_stats` as one (values are concatenated, a first).

    Examples
    --------
    >>> a = {"sum": {0: 1.0}, "count": {0: 1}, "values": {2: np.array([1.0])}}
    >>> m = merge_stats(a, a)
    >>> m["sum"][0], m["count"][0], m["values"][2].tolist()
    (2.0, 2, [1.0, 1.0])
    """
    if a is None:
        return b
    out = {"sum": dict(a["sum"]), "count": dict(a["count"]), "values": dict(a["values"])}
    for k, v in b["sum"].items():
        out["sum"][k] = out["sum"].get(k, 0.0) + v
        out["count"][k] = out["count"].get(k, 0) + b["count"][k]
    for k, v in b["values"].items():
        out["values"][k] = np.concatenate([out["values"][k], v]) if k in out["values"] else v
    return out


def merge_all_stats(parts):
    """Every block's :func:`ideal_stats`, in order, as one: :func:`merge_stats` folded over ``parts``.

    The same dict as ``merge_stats(merge_stats(merge_stats(None, a), b), c)``
    (sums added in the same order, values in the same order), with each key's
    values concatenated once instead of once per block: linear in the number
    of values, where the fold copies them again for every block.

    Examples
    --------
    >>> a = {"sum": {0: 1.0}, "count": {0: 1}, "values": {2: np.array([1.0])}}
    >>> b = {"sum": {0: 2.0}, "count": {0: 3}, "values": {2: np.array([5.0]), 4: np.array([7.0])}}
    >>> m = merge_all_stats([a, b, a])
    >>> m["sum"], m["count"], {k: v.tolist() for k, v in m["values"].items()}
    ({0: 4.0}, {0: 5}, {2: [1.0, 5.0, 1.0], 4: [7.0]})
    """
    parts = [p for p in parts if p is not None]
    if len(parts) < 2:
        return parts[0] if parts else None
    out = {"sum": dict(parts[0]["sum"]), "count": dict(parts[0]["count"])}
    chunks = {k: [v] for k, v in parts[0]["values"].items()}
    for b in parts[1:]:
        for k, v in b["sum"].items():
            out["sum"][k] = out["sum"].get(k, 0.0) + v
            out["count"][k] = out["count"].get(k, 0) + b["count"][k]
        for k, v in b["values"].items():
            chunks.setdefault(k, []).append(v)
    out["values"] = {k: np.concatenate(c) if len(c) > 1 else c[0] for k, c in chunks.items()}
    return out


def finish_stats(stats):
    """``{"mean": {code: s}, "median": {key: s}}`` from merged :func:`ideal_stats`.

    Examples
    --------
    >>> finish_stats({"sum": {0: 3.0}, "count": {0: 2}, "values": {5: np.array([1.0, 9.0, 2.0])}})
    {'mean': {0: 1.5}, 'median': {5: 2.0}}
    """
    return {"mean": {c: stats["sum"][c] / stats["count"][c] for c in stats["sum"]},
            "median": {k: float(np.median(v)) for k, v in stats["values"].items()}}


def finish_all_stats(parts, models=(), ideal="artifact"):
    """:func:`finish_stats` of :func:`merge_all_stats` of ``parts`` (blocks' :func:`ideal_stats`, in step order),
    each key's values concatenated and its median taken one key at a time, in place in that copy: the merged values
    are never in memory all at once, nor copied again for the median (the parts are not changed).

    ``models``: blocks' models (kept work will do) whose values join the parts', taken from their work key by key
    (as :func:`median_values` takes them, without a copy of all of them at once). A median does not depend on the
    order of its values: the result is the same, bit for bit, as with those values among the parts.

    Examples
    --------
    >>> a = {"sum": {0: 1.0}, "count": {0: 1}, "values": {2: np.array([1.0, 8.0])}}
    >>> b = {"sum": {0: 2.0}, "count": {0: 3}, "values": {2: np.array([5.0]), 4: np.array([7.0])}}
    >>> finish_all_stats([a, b]) == finish_stats(merge_all_stats([a, b]))
    True
    >>> a["values"][2].tolist()
    [1.0, 8.0]
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> ms = [build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, rng=i)) for i in (0, 1, 2)]
    >>> parts = [ideal_stats(m) for m in ms]
    >>> finish_all_stats(parts[:1] + [{**p, "values": {}} for p in parts[1:]], ms[1:]) == finish_all_stats(parts)
    True
    """
    parts = [p for p in parts if p is not None]
    chunks = {}
    for p in parts:
        for k, v in p["values"].items():
            chunks.setdefault(k, []).append(v)
    models = list(models)
    local = _median_keys(models[0], _mean_nodes(models[0]), ideal) if models else {}
    median = {}
    for k in dict.fromkeys([*chunks, *local]):
        arrays = chunks.get(k, []) + (_pieces([m.work for m in models], local[k]) if k in local else [])
        median[k] = float(np.median(np.concatenate(arrays), overwrite_input=True))
        del arrays
    merged = merge_all_stats([{**p, "values": {}} for p in parts])
    return {"mean": finish_stats(merged)["mean"] if merged else {}, "median": median}


def ideal_from_stats(model, ideal, finished):
    """The ideal work of one block's cells, shape (N, S, D), from :func:`finish_stats`.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.replay import build_model
    >>> m = build_model(synthetic_trace(dp=2, pp=1, microbatches=2, steps=1))
    >>> bool(np.array_equal(ideal_from_stats(m, "artifact", finish_stats(ideal_stats(m))), ideal_work(m)))
    True
    """
    out = np.empty(model.shape)
    mean_nodes = _mean_nodes(model)
    if ideal == "artifact":
        for code, mean in finished["mean"].items():
            out[[n for n in mean_nodes if model.node_codes[n][0] == code]] = mean
    else:
        _group_means(model, mean_nodes, out)
    median = finished["median"]
    skip = set(mean_nodes)
    for n in range(model.n_nodes):
        if n not in skip:
            keys = model.node_codes[n] if ideal == "artifact" else (model.node_label[n],)
            out[n] = max(median[k] for k in keys)
    return out


def _mean_nodes(model):
    """The nodes whose ideal is a mean: single compute ops (forward, backward, optimizer, gc)."""
    return [n for n in range(model.n_nodes) if len(model.node_codes[n]) == 1 and model.node_codes[n][0] in MEAN_KIND]


def _median_keys(model, mean_nodes, ideal):
    """The nodes of each median key: an optype code (artifact; a combined send+recv is in both of
    its optypes, and takes the larger median) or a node label (per-step)."""
    skip = set(mean_nodes)
    keys = {}
    for n in range(model.n_nodes):
        if n not in skip:
            for k in (model.node_codes[n] if ideal == "artifact" else (model.node_label[n],)):
                keys.setdefault(k, []).append(n)
    return keys


def _group_means(model, mean_nodes, out):

    """Per step: the mean over (optype, step, microbatch) across DP ranks and stages."""
    if not mean_nodes:
        return
    S, D = model.shape[1:]
    idx = np.array(mean_nodes)
    codes = np.array([model.node_codes[n][0] for n in mean_nodes])
    mb = model.node_mb[idx].astype(np.int64)  # a copy, and wide enough for mb + 1 (the kept codes are narrowed)
    mb[~np.isin(codes, (OPTYPES.index("forward-compute"), OPTYPES.index("backward-compute")))] = -1
    mb_max = int(mb.max()) + 2
    step_idx = np.broadcast_to(np.arange(S)[None, :, None], mb.shape)
    flat = ((codes[:, None, None] * S + step_idx) * mb_max + (mb + 1)).reshape(-1)
    size = int(flat.max()) + 1
    total = np.bincount(flat, weights=model.work[idx].reshape(-1), minlength=size)
    count = np.bincount(flat, minlength=size)
    out[idx] = (total / np.maximum(count, 1))[flat].reshape(len(idx), S, D)


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

    return replay(model, work, nonnegative=True)


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


def _mw_fix(by_worker, D, P):
    """The ceil(3%) workers with the largest S_worker (at least one): a (P, D) mask and their ids."""
    k = max(1, math.ceil(MW_FRACTION * D * P))
    ranked = sorted(by_worker, key=lambda w: (-by_worker[w], w[1] * D + w[0]))[:k]
    fix = np.zeros((P, D), dtype=bool)
    for d, s in ranked:
        fix[s, d] = True
    return fix, tuple(ranked)


def _mw_times(model, ideal, fix):
    """Step times, shape (S,), with the fixed workers' ops at their ideal work."""

    def work(n):
        out = model.work[n].copy()
        cols = fix[model.node_stage[n]]
        out[:, cols] = ideal[n][:, cols]
        return out[None]

    return replay(model, work, nonnegative=True)[0]


def _notes(model, notes, skipped, report_workers):
    notes = list(dict.fromkeys(notes))
    if skipped:
        notes.append(Note(N_("skipped ops of unknown type: {ops}"), ops=", ".join(f"{n} ×{c}" for n, c in skipped.items())))
    if not report_workers:
        D, P = model.dp_size, model.pp_size
        notes.append(Note(N_("by_dp_rank and by_worker are left out for {workers} workers (more than {limit}); use "
                             "--attribution full to include them"), workers=D * P, limit=AUTO_WORKERS))
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
        S, the waste, M_W, M_S and S_X by op type, stage, DP rank and worker.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> a = analyze_ops(synthetic_trace(dp=4, pp=2, microbatches=4, steps=2, last_stage=1.5))
    >>> a.culprit("by_stage"), a.m_s > 1
    (1, True)
    """
    return analyze_blocks([trace], attribution=attribution, progress=progress, ideal=ideal)


def analyze_blocks(blocks, *, program=None, attribution="auto", progress=False, ideal="artifact", spill=None):
    """What-if analysis of a trace given as blocks of whole steps, in step order.

    The same analysis as :func:`analyze_ops` on the whole trace, with peak
    memory set by one block: the first pass builds each block's dependency
    model, keeps its work (spilled to ``spill``, a folder, when given) and
    the whole-trace statistics of the ideal; the second replays every block
    with the ideal and the what-if variants; the third replays the M_W
    variant once the slowest workers are known. Means are summed block by
    block, so results agree with the one-block analysis to rounding (about
    1e-15 relative); medians are exact.

    Parameters
    ----------
    blocks : iterable of OpTrace
        Each holds every op of its steps; blocks come in increasing step
        order and run the same ops, as one job's steps do.
    program : DependencyModel, optional
        Where the op order and the dependencies come from (see
        :func:`~straggle_edu.traces.replay.build_model`); by default from
        the first block. :func:`~straggle_edu.traces.blocks.analyze_op_file`
        builds it from the first 64 DP ranks over every step: the ranks
        whose median timeline orders the ops of the whole trace.
    attribution, progress, ideal
        As for :func:`analyze_ops`.
    spill : str or os.PathLike, optional
        A folder for the blocks' work arrays (memory-mapped when read back).

    Returns
    -------
    Analysis
        As from :func:`analyze_ops` on the whole trace.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> from straggle_edu.traces.optrace import op_trace_from_columns
    >>> t = synthetic_trace(dp=4, pp=2, microbatches=4, steps=4, slow_worker=(1, 1, 1.5), jitter=0.02, rng=0)
    >>> cols = t.columns()
    >>> halves = [op_trace_from_columns({k: v[t.step // 2 == h] for k, v in cols.items()}) for h in (0, 1)]
    >>> a, b = analyze_ops(t), analyze_blocks(halves)
    >>> bool(abs(a.slowdown - b.slowdown) < 1e-12), b.culprit("by_worker")
    (True, (1, 1))
    """
    if ideal not in IDEALS:
        raise ValueError(f"ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
    bar = _Ticker(progress)
    store = _BlockStore(spill)
    first, stats, notes, skipped, trace0 = None, [], [], {}, None
    for trace in blocks:
        model = build_model(trace, program=program if first is None else first)
        if first is None:
            first, trace0 = model, trace
        elif model.steps[0] <= store.steps[-1]:
            raise ValueError(f"{model.source}: blocks must come in increasing step order without repeats; step "
                             f"{model.steps[0]} comes after step {store.steps[-1]}")
        stats.append(ideal_stats(model, ideal, values=False))  # the values are taken from the kept work below
        notes += model.notes
        for name, count in trace.skipped:
            skipped[name] = skipped.get(name, 0) + count
        store.put(model, keep_model=store.empty)
        if store.count == 2:  # more than one block: only a one-block analysis shows the first block's rows and times
            first = store.first_model = replace(first, start=None, duration=None, cell_of_row=None)
            trace0 = SimpleNamespace(source=trace0.source, layout=trace0.layout)
        del trace, model  # the next block is read and modelled without this one's arrays beside it
    if first is None:
        raise ValueError("blocks must hold at least one block of steps, got none")
    bar.tick()
    finished = {**finish_stats(merge_all_stats(stats)), "median": _block_medians(store, first, ideal)}
    del stats
    return _score_blocks(store, first, trace0, finished, ideal, attribution, notes, skipped, bar)


def _block_medians(store, first, ideal):
    """The ``"median"`` of :func:`finish_stats` over the blocks' :func:`ideal_stats`, from the blocks' kept work (no
    second copy of the values is kept beside it): one key's values at a time, each median taken in place."""
    return {k: float(np.median(v, overwrite_input=True))
            for k, v in _values_by_key(first, [m.work for m in store.models(first)], ideal)}


def _values_by_key(first, works, ideal):
    """``(key, values)`` per median key, one key at a time: the values of every block's ``work`` (in order),
    concatenated; ``first``: a block's model (the blocks share its nodes)."""
    for k, nodes in _median_keys(first, _mean_nodes(first), ideal).items():
        yield k, np.concatenate(_pieces(works, nodes))


def _pieces(works, nodes):
    """The values of ``nodes`` in each block's ``work`` (in order), flat: one median key's."""
    return [w[nodes].ravel() for w in works]


def median_values(models, ideal="artifact"):
    """The ``"values"`` of :func:`ideal_stats` of several blocks' models (kept work will do), merged: one array per
    median key.

    For blocks analysed apart: a worker sends the values of its blocks at once, as its blocks' statistics are
    merged (:func:`finish_all_stats`), and keeps no copy of them beside the work meanwhile.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> ms = [build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, rng=i)) for i in (0, 1)]
    >>> v = median_values(ms)
    >>> sorted(v) == sorted(ideal_stats(ms[0])["values"])
    True
    >>> all(np.array_equal(v[k], merge_stats(ideal_stats(ms[0]), ideal_stats(ms[1]))["values"][k]) for k in v)
    True
    """
    models = list(models)
    return dict(_values_by_key(models[0], [m.work for m in models], ideal)) if models else {}


def _score_blocks(store, first, trace0, finished, ideal, attribution, notes, skipped, bar):
    """Passes 2 and 3 of :func:`analyze_blocks`: replay the variants block by block, then M_W."""
    parts, offset = [], 0
    for model in store.models(first):
        parts.append(block_scores(model, first, finished, ideal, step_offset=offset))
        offset += len(model.steps)
    bar.tick()
    scores = merge_scores(first, parts, store.steps, store.recorded_step, ideal)
    t_mw = np.concatenate([block_mw(m, finished, scores["fix"], ideal) for m in store.models(first)])
    bar.tick()
    result = scores_analysis(scores, t_mw, first=first, trace0=trace0, finished=finished, ideal=ideal,
                             attribution=attribution, notes=notes, skipped=skipped, blocks=store.count)
    bar.tick()
    bar.close()
    return result


# The passes of analyze_blocks one block at a time, for callers that run the blocks apart (the fleet
# runs each as a task): ideal_stats per block -> merge_stats in step order -> finish_stats ->
# block_scores per block -> merge_scores -> block_mw per block -> scores_analysis.

def block_scores(model, program, finished, ideal="artifact", step_offset=0):
    """Pass 2 of :func:`analyze_blocks` for one block: its variant replays, DP-rank variants and microbatch part.

    ``program`` is the model the block's was built from (or the first
    block's), ``finished`` the whole trace's :func:`finish_stats`, and
    ``step_offset`` the number of steps in the blocks before this one.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=3))
    >>> sorted(block_scores(m, m, finish_stats(ideal_stats(m)))), block_scores(m, m, finish_stats(ideal_stats(m)))["T"].shape[1]
    (['T', 'dp_step', 'mb'], 3)
    """
    keep = _variant_masks(program, optype_groups(program, ideal))
    ideal_b = ideal_from_stats(model, ideal, finished)
    return {"T": _replay_variants(model, ideal_b, keep), "dp_step": _dp_variants(model, model.work, ideal_b),
            "mb": _microbatch_part(model, ideal_b, step_offset)}


def merge_scores(program, parts, steps, recorded_step, ideal="artifact"):
    """Every block's :func:`block_scores` (in step order) as the whole trace's scores, and the workers M_W fixes.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=3, slow_worker=(1, 0, 2.0)))
    >>> sc = merge_scores(m, [block_scores(m, m, finish_stats(ideal_stats(m)))], m.steps, m.recorded_step)
    >>> sc["fixed"], round(sc["sc"]["slowdown"], 3) > 1
    (((1, 0),), True)
    """
    groups = optype_groups(program, ideal)
    whole = replace(program, steps=steps, recorded_step=recorded_step)
    T = np.concatenate([p["T"] for p in parts], axis=1)
    dp_step = np.concatenate([p["dp_step"] for p in parts], axis=1)
    sc = _stage_optype_scores(whole, T, groups)
    t_ideal = T[1]
    by_dp = {d: float(np.mean(dp_step[d] * t_ideal) / np.mean(t_ideal)) for d in range(program.dp_size)}
    workers, by_worker, worker_step = _worker_scores(by_dp, sc["by_stage"], dp_step, sc["stage_step"])
    fix, fixed = _mw_fix(by_worker, program.dp_size, program.pp_size)
    return {"whole": whole, "T": T, "dp_step": dp_step, "sc": sc, "by_dp": by_dp, "workers": workers,
            "by_worker": by_worker, "worker_step": worker_step, "fix": fix, "fixed": fixed, "mb": [p["mb"] for p in parts]}


def block_mw(model, finished, fix, ideal="artifact"):
    """Pass 3 of :func:`analyze_blocks` for one block: its step times with the workers of ``fix`` at ideal.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=3))
    >>> block_mw(m, finish_stats(ideal_stats(m)), np.zeros((2, 2), dtype=bool)).shape
    (3,)
    """
    return _mw_times(model, ideal_from_stats(model, ideal, finished), fix)


def scores_analysis(scores, t_mw, *, first, trace0, finished, ideal, attribution, notes, skipped, blocks):
    """The :class:`Analysis` of :func:`merge_scores` and the M_W step times of every block (in step order).

    ``first`` is the first block's model (or the program), ``trace0`` the
    first block's trace, ``notes`` and ``skipped`` what every block's model
    and trace noted, ``blocks`` the number of blocks.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> t = synthetic_trace(dp=2, pp=2, microbatches=2, steps=3)
    >>> m = build_model(t)
    >>> fin = finish_stats(ideal_stats(m))
    >>> sc = merge_scores(m, [block_scores(m, m, fin)], m.steps, m.recorded_step)
    >>> a = scores_analysis(sc, block_mw(m, fin, sc["fix"]), first=m, trace0=t, finished=fin, ideal="artifact",
    ...                     attribution="auto", notes=[], skipped={}, blocks=1)
    >>> a.slowdown == analyze_ops(t).slowdown
    True
    """
    sc, whole, T = scores["sc"], scores["whole"], scores["T"]
    t_orig, t_ideal = T[0], T[1]
    m_w = _share(t_orig, t_mw, t_ideal)
    workers, fixed = scores["workers"], scores["fixed"]
    report = attribution == "full" or (attribution == "auto" and len(workers) <= AUTO_WORKERS)
    single = blocks == 1
    details = {"model": first if single else None, "ideal": ideal_from_stats(first, ideal, finished) if single else None,
               "ideal_method": ideal, "optypes": tuple(sc["by_optype"]), "stage_step": sc["stage_step"],
               "dp_step": scores["dp_step"], "optype_step": sc["optype_step"], "mw_workers": len(fixed),
               "mw_fixed": fixed, "microbatch": _microbatch_stats(scores["mb"]), "layout": trace0.layout,
               "trace": trace0 if single else None, "blocks": blocks}
    return Analysis(
        format="op-level", source=str(trace0.source), slowdown=sc["slowdown"], waste=1.0 - 1.0 / sc["slowdown"],
        per_step={int(s): float(v) for s, v in zip(whole.steps, sc["per_step"])},
        replay_error=float(np.mean(np.abs(t_orig - whole.recorded_step) / whole.recorded_step)),
        steps=whole.steps, step_time=t_orig, ideal_step_time=t_ideal, recorded_step_time=whole.recorded_step,
        workers=tuple(workers), worker_step_slowdown=scores["worker_step"], by_optype=sc["by_optype"],
        by_dp_rank=scores["by_dp"] if report else None, by_stage=sc["by_stage"],
        by_worker=scores["by_worker"] if report else None,
        m_w=m_w, m_s=sc["m_s"], notes=_notes(first, notes, skipped, report), details=details,
    )


def kept_work(model, slab):
    """A block's model as the later passes need it: its work and microbatches copied into ``slab`` (a
    :class:`~straggle_edu.traces._kept.Slab`; microbatches in the narrowest integer type), without its recorded
    starts and durations or the rows' cells.

    Examples
    --------
    >>> from straggle_edu.traces._kept import Slab
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=3, steps=2))
    >>> k = kept_work(m, Slab(2**20))
    >>> bool(np.array_equal(k.work, m.work)), k.node_mb.dtype, k.start is None
    (True, dtype('int8'), True)
    """
    return replace(model, start=None, duration=None, cell_of_row=None, work=slab.keep(model.work),
                   node_mb=slab.keep(_narrow(model.node_mb)))


def _narrow(codes):
    """Integer codes (microbatches, -1 for none) in the narrowest signed dtype that holds them: the kept work of a
    large trace is 10 bytes per op rather than 16."""
    if not codes.size:
        return codes
    lo, hi = int(codes.min()), int(codes.max())
    for dtype in (np.int8, np.int16, np.int32):
        if np.iinfo(dtype).min <= lo and hi <= np.iinfo(dtype).max:
            return codes.astype(dtype)
    return codes


class _BlockStore:
    """Each block's work, microbatches, steps and recorded step times; in memory or spilled to a folder."""

    def __init__(self, spill=None):
        self.folder = None if spill is None else Path(spill)
        self.blocks, self._steps, self._recorded = [], [], []
        self.first_model = None
        self._slab = Slab()

    @property
    def empty(self):
        return not self.blocks

    @property
    def count(self):
        return len(self.blocks)

    @property
    def single(self):
        return len(self.blocks) == 1

    @property
    def steps(self):
        return np.concatenate(self._steps) if self._steps else np.zeros(0, dtype=np.int64)

    @property
    def recorded_step(self):
        return np.concatenate(self._recorded)

    def put(self, model, keep_model=False):
        self._steps.append(np.asarray(model.steps))
        self._recorded.append(np.asarray(model.recorded_step))
        if keep_model:
            self.first_model = model
            self.blocks.append({"work": model.work, "node_mb": model.node_mb})
            return
        if self.folder is None:
            kept = kept_work(model, self._slab)
            self.blocks.append({"work": kept.work, "node_mb": kept.node_mb})
            return
        entry = {}
        for name, arr in (("work", model.work), ("node_mb", _narrow(model.node_mb))):
            path = self.folder / f"block{len(self.blocks):05d}-{name}.npy"
            np.save(path, arr)
            entry[name] = path
        self.blocks.append(entry)

    def models(self, first):
        """Each block as a DependencyModel (the first block's program, the block's cells)."""
        for i, entry in enumerate(self.blocks):
            if i == 0 and self.first_model is not None:
                yield self.first_model
                continue
            arrays = {k: np.load(v, mmap_mode="r") if isinstance(v, Path) else v for k, v in entry.items()}
            yield replace(first, steps=self._steps[i], recorded_step=self._recorded[i], work=np.asarray(arrays["work"]),
                          node_mb=arrays["node_mb"], start=None, duration=None, cell_of_row=None)


def _dp_variants(model, orig, ideal):
    """Per-step S_dp for every DP rank, shape (D, S).

    The ideal work of a node is the same on every DP rank, so in the variant
    "DP rank d keeps its recorded work" all other DP ranks are identical:
    two DP columns suffice (d, and one stand-in for the rest). Traces whose
    ideal differs across DP ranks fall back to the full width.
    """
    N, S, D = model.shape
    t_ideal = replay(model, lambda n: ideal[n][None], nonnegative=True)[0]
    if D == 1:
        t = replay(model, lambda n: orig[n][None], nonnegative=True)[0]
        return (t / t_ideal)[None]
    uniform = np.ptp(ideal, axis=2).max() <= 1e-12 * max(1.0, float(np.abs(ideal).max()))
    if uniform:
        def work_b(n):
            out = np.empty((D, S, 2))
            out[:, :, 0] = orig[n].T
            out[:, :, 1] = ideal[n][None, :, 0]
            return out

        T = replay(model, work_b, nonnegative=True)
    else:
        rows = []
        chunk = max(1, int(2**26 // max(1, S * D * 8)))
        for lo in range(0, D, chunk):
            ds = np.arange(lo, min(D, lo + chunk))

            def work_full(n, ds=ds):
                out = np.broadcast_to(ideal[n], (len(ds), S, D)).copy()
                out[np.arange(len(ds)), :, ds] = orig[n][:, ds].T
                return out

            rows.append(replay(model, work_full, nonnegative=True))
        T = np.concatenate(rows)
    return T / t_ideal[None]


def _microbatch_part(model, ideal, step_offset):
    """One block's share of :func:`_microbatch_stats`: its longest compute op and sum of squared residuals.

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
    top = {"step": int(model.steps[s]), "mb": int(model.node_mb[n, s, d]), "dp_rank": int(d),
           "stage": int(model.node_stage[n]), "optype": OPTYPES[model.node_codes[n][0]], "ratio": float(ratio[j])}
    return {"top": top, "order": (j[0], step_offset + s, d), "sq": float(np.sum(resid**2)), "count": resid.size}


def _microbatch_stats(parts):
    """The longest compute op relative to its group's mean (the first in op, step, DP order on ties),
    and the microbatch spread ``cv`` over every block."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    best = min(parts, key=lambda p: (-p["top"]["ratio"], p["order"]))
    cv = float(np.sqrt(sum(p["sq"] for p in parts) / sum(p["count"] for p in parts)))
    return {**best["top"], "cv": cv}


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
    if model is None:
        raise ValueError(f"analysis must hold its trace in one block for a worker's timeline, got one analysed in "
                         f"{analysis.details['blocks']} blocks of steps (analyse with block_steps=None)")
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


# The what-if of models mapped from other traces (PyTorch profiler traces, straggle_edu.traces.syncpoints): the same
# replay and variants, with the ideal of a synchronising job: each compute node at the ranks' mean for its step, each
# collective's transfer kept.

def mean_ideal(model):
    """The ideal work of a mapped model: compute nodes at the mean over the ranks (per node and step), the rest kept.

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace, analyze_profiler
    >>> m = analyze_profiler(_demo_trace([[1.0, 3.0]])).details["models"][0][0]
    >>> (mean_ideal(m)[0] - 2.0).round(9).tolist(), (mean_ideal(m)[1] - m.work[1]).tolist()
    ([[0.0, 0.0]], [[0.0, 0.0]])
    """
    ideal = model.work.copy()
    compute = np.array(node_kinds(model)) == "compute"
    ideal[compute] = model.work[compute].mean(axis=-1, keepdims=True)
    return ideal


def node_kinds(model):
    """The kind of each node of a mapped model: ``"compute"`` (a label that starts with it), or the collective's kind
    (its label before ``" #"``: ``"allreduce #2"`` is an ``allreduce``)."""
    return ["compute" if label.startswith("compute") else label.split(" #")[0] for label in model.node_label]


def analyze_sync(parts, n_steps, *, steps, workers, format, source, notes=(), details=None):
    """What-if analysis of mapped models (one per program of the steps): S, per-step S, S_X by rank and kind, M_W.

    Parameters
    ----------
    parts : list of (DependencyModel, list of int)
        Each model and the positions of its steps among all ``n_steps``.
    steps : array of int
        The step ids, in order.
    workers : sequence of int
        The ranks, in the order of the models' DP columns.

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace, analyze_profiler
    >>> a = analyze_profiler(_demo_trace([[1.0, 3.0]] * 4))   # rank 1 computes 3 s, rank 0 1 s
    >>> round(a.slowdown, 4), a.culprit(), dict(a.by_optype)["compute"] == a.slowdown
    (1.4762, 1, True)
    """
    kinds = sorted({k for m, _ in parts for k in node_kinds(m)} - {"compute"})
    names = ["compute"] + kinds
    D = parts[0][0].dp_size
    T, dp, rec, ideals = np.empty((2 + len(names), n_steps)), np.empty((D, n_steps)), np.empty(n_steps), []
    for model, idx in parts:
        ideal = mean_ideal(model)
        ideals.append(ideal)
        nk = np.array(node_kinds(model))
        keep = np.vstack([np.ones(model.n_nodes, bool), np.zeros(model.n_nodes, bool)] + [nk == x for x in names])
        T[:, idx] = _replay_variants(model, ideal, keep)
        dp[:, idx] = _dp_variants(model, model.work, ideal)
        rec[idx] = model.recorded_step
    t_orig, t_ideal = T[0], T[1]
    by_rank = {w: float(np.mean(dp[d] * t_ideal) / np.mean(t_ideal)) for d, w in enumerate(workers)}
    fix, fixed = _mw_fix({(d, 0): by_rank[w] for d, w in enumerate(workers)}, D, 1)
    t_mw = np.empty(n_steps)
    for (model, idx), ideal in zip(parts, ideals):
        t_mw[idx] = _mw_times(model, ideal, fix)
    S = _ratio(t_orig, t_ideal)
    return Analysis(
        format=format, source=str(source), slowdown=S, waste=1.0 - 1.0 / S,
        per_step={int(s): float(v) for s, v in zip(steps, t_orig / t_ideal)},
        replay_error=float(np.mean(np.abs(t_orig - rec) / rec)), steps=np.asarray(steps), step_time=t_orig,
        ideal_step_time=t_ideal, recorded_step_time=rec, workers=tuple(workers), worker_step_slowdown=dp,
        by_rank=by_rank, by_optype={x: _ratio(T[2 + j], t_ideal) for j, x in enumerate(names)},
        m_w=_share(t_orig, t_mw, t_ideal), notes=tuple(notes),
        details={**(details or {}), "mw_workers": len(fixed), "mw_fixed": tuple(workers[d] for d, _ in fixed),
                 "models": parts, "optypes": tuple(names)},
    )
