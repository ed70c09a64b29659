"""The dependency model of a training step, and its vectorised replay.

Every DP rank runs the same program, and so does every step: only the
durations differ. So the model is built once, as a small graph of *nodes*
(one per op of one worker-step of each stage, named by (stage, optype,
seq_id)), and every node carries arrays of shape (steps, DP ranks). The
replay walks the graph once and computes all steps, all DP ranks and all
what-if variants at once with numpy: arrays of shape (variants, steps, DP).

Rules (the OSDI 2025 method; Lin et al., "Understanding Stragglers in Large
Model Training Using What-if Analysis")
------------------------------------------------------------------------
Program order
    On each worker, ops run one after another in their recorded order (the
    median start over all worker-steps orders the nodes of a stage).
Pipeline send/recv (1F1B)
    The k-th ``forward-send`` of stage s pairs with the k-th ``forward-recv``
    of stage s + 1, and the k-th ``backward-send`` of stage s + 1 with the k-th
    ``backward-recv`` of stage s, in the same DP rank and step. Sends and
    receives block until the peer is there. ``forward-recv`` and
    ``backward-send`` on the first stage and ``forward-send`` and
    ``backward-recv`` on the last stage have no peer (no-ops).
Combined send+recv
    Megatron's ``send_forward_recv_backward`` and ``send_backward_recv_forward``
    appear as two rows with the same start and duration on one worker; they
    are one op, which waits for both peers.
DP collectives
    ``params-all-gather``, ``grads-reduce-scatter`` and
    ``separate-grads-all-reduce`` are barriers across their DP group (same
    stage, same step, all DP ranks). A DP collective that overlaps compute in
    the recorded timeline runs on its own stream: it is issued after the
    last op that ended before it started, the first forward of its model
    chunk waits for a ``params-all-gather``, and the gradient clipping (the
    optimizer comes after the gradient sync) waits for a ``grads-reduce-scatter``.
Global barrier
    ``optimizer-clip-main-grad`` holds the gradient-norm all-reduce across
    every rank: a barrier across all stages and DP ranks.
Embedding
    ``embedding-grads-all-reduce`` joins the first and the last stage of the
    same DP rank.
Local ops
    ``layernorm-grads-all-reduce`` (its tensor-parallel peers are not
    traced), ``optimizer`` and ``gc`` involve only the worker.

A collective (or a send/recv) ends at the latest arrival among its
participants plus its own transfer time; the recorded transfer time is the
recorded end minus the latest recorded arrival. A step ends with its last
op; every worker starts it at time 0, so the idle gaps between ops (launch
delays) are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_memory
from ..i18n import N_
from ._table import column_error, dense_codes, display_path
from .optrace import OPTYPES
from .result import Note

__all__ = ["DependencyModel", "build_model", "replay"]

FWD, BWD = OPTYPES.index("forward-compute"), OPTYPES.index("backward-compute")
FSEND, FRECV = OPTYPES.index("forward-send"), OPTYPES.index("forward-recv")
BSEND, BRECV = OPTYPES.index("backward-send"), OPTYPES.index("backward-recv")
AG = OPTYPES.index("params-all-gather")
RS = OPTYPES.index("grads-reduce-scatter")
SEP = OPTYPES.index("separate-grads-all-reduce")
LN = OPTYPES.index("layernorm-grads-all-reduce")
EMB = OPTYPES.index("embedding-grads-all-reduce")
CLIP = OPTYPES.index("optimizer-clip-main-grad")
OPT = OPTYPES.index("optimizer")
GC = OPTYPES.index("gc")
P2P_CODES = (FSEND, FRECV, BSEND, BRECV)
DP_COLLECTIVES = (AG, RS, SEP)
MEAN_KIND = (FWD, BWD, OPT, GC)  # ideal = group mean; every other optype: median transfer
COMBINE_TOL = 1e-6  # seconds: two p2p rows this close in start and duration are one op


@dataclass(eq=False)
class DependencyModel:
    """A step's dependency graph, shared by all DP ranks and steps.

    Arrays over nodes have length N; arrays over cells have shape (N, S, D):
    node, step index, DP rank.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=1))
    >>> m.n_nodes, m.work.shape   # nodes x steps x DP ranks
    (28, (28, 1, 2))
    >>> m.node_label[:3]
    ['forward-compute', 'forward-compute', 'backward-compute']
    """

    source: str
    steps: np.ndarray  # (S,)
    dp_size: int
    pp_size: int
    node_stage: np.ndarray  # (N,)
    node_codes: list  # per node: tuple of optype codes (two for a combined send+recv)
    node_label: list  # per node: text, e.g. "forward-send+backward-recv"
    node_noop: np.ndarray  # (N,) bool: a send/recv without a peer
    node_mb: np.ndarray  # (N, S, D) microbatch (-1 where meaningless)
    preds: list  # per node: nodes whose end it waits for to start
    peers: list  # per node: nodes whose start it waits for to end
    dpsync: np.ndarray  # (N,) bool: barrier across the DP ranks
    side: np.ndarray  # (N,) bool: runs on the DP-collective stream
    order: list  # events (0 = start, 1 = end, node) in dependency order
    start: np.ndarray  # (N, S, D) recorded start, relative to the step start
    duration: np.ndarray  # (N, S, D) recorded duration
    work: np.ndarray  # (N, S, D) duration (local op) or transfer time (collective, send/recv)
    recorded_step: np.ndarray  # (S,) recorded step time: last end - first start
    cell_of_row: np.ndarray  # (ops,) flat cell index of every op of the trace
    notes: list
    keys: np.ndarray = None  # (K,) the trace's op keys (stage, optype, seq_id), coded
    node_of_key: np.ndarray = None  # (K,) the node of every key

    @property
    def n_nodes(self):
        return len(self.node_stage)

    @property
    def shape(self):
        return (self.n_nodes, len(self.steps), self.dp_size)

    def is_collective(self, n):
        return bool(self.dpsync[n]) or len(self.peers[n]) > 0


def _median_time(arr):
    """Median over steps and (up to 64) DP ranks of each node: its typical time."""
    return np.median(arr[:, :, :64].reshape(arr.shape[0], -1), axis=1)


def build_model(trace, program=None):
    """Build the :class:`DependencyModel` of an :class:`~straggle_edu.traces.OpTrace`.

    Parameters
    ----------
    trace : OpTrace
    program : DependencyModel, optional
        Take the nodes and their dependencies from this model (built from the
        same job's trace, e.g. a sample of its DP ranks over every step)
        instead of deriving them from ``trace``: a block of steps is then
        modelled exactly as the whole trace would model it. Its op keys must
        be those of ``trace``.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=3, steps=4))
    >>> m.shape   # nodes (ops of one worker-step, per stage), steps, DP ranks
    (34, 4, 2)
    >>> sorted({m.node_label[n] for n in range(m.n_nodes) if len(m.node_codes[n]) == 2})
    ['forward-recv+backward-send', 'forward-send+backward-recv']
    >>> build_model(synthetic_trace(dp=2, pp=2, microbatches=3, steps=1, rng=1), program=m).shape
    (34, 1, 2)
    """
    shown = display_path(trace.source) if trace.source != "<memory>" else trace.source
    _check_plain_1f1b(trace, shown)
    notes = []
    cells = _cells(trace, shown, notes, medians=program is None)
    if program is not None:
        return _model_of(trace, cells, _program_nodes(cells, program, shown), program, notes)
    nodes = _combine_p2p(cells, trace.layout.pp_size, notes)
    peers, noop, linked = _p2p_links(cells, nodes, trace.layout.pp_size, shown, notes)
    dpsync = _collective_groups(cells, nodes, peers, trace.layout.dp_size, trace.layout.pp_size)
    peers = [sorted(x) for x in peers]
    side, preds = _streams(nodes, trace.layout.pp_size)
    order = _event_order(nodes["N"], preds, peers, node_label=None, node_stage=nodes["stage"],
                         node_codes=nodes["codes"], shown=shown)
    labels = ["+".join(OPTYPES[c] for c in nodes["codes"][n]) + (" (no peer)" if noop[n] else "")
              for n in range(nodes["N"])]
    wiring = {"node_codes": nodes["codes"], "node_label": labels, "node_noop": noop, "preds": preds, "peers": peers,
              "dpsync": dpsync, "side": side, "order": order}
    return _model_of(trace, cells, nodes, wiring, notes)


def _model_of(trace, cells, nodes, wiring, notes):
    """The model from the trace's cells, its nodes and their wiring (a dict, or a model to copy it from)."""
    w = wiring if isinstance(wiring, dict) else {k: getattr(wiring, k) for k in (
        "node_codes", "node_label", "node_noop", "preds", "peers", "dpsync", "side", "order")}
    work = _recorded_work(nodes, w["peers"], w["dpsync"], notes)
    S, D = len(cells["steps"]), trace.layout.dp_size
    return DependencyModel(
        source=str(trace.source), steps=cells["steps"], dp_size=D, pp_size=trace.layout.pp_size,
        node_stage=nodes["stage"], node_mb=nodes["mb"], start=nodes["start"], duration=nodes["dur"], work=work,
        recorded_step=cells["recorded_step"], notes=notes, keys=cells["keys"], node_of_key=nodes["node_of_key"],
        cell_of_row=(nodes["node_of_key"][cells["kidx"]] * S + cells["si"]) * D + trace.dp_rank, **w,
    )


def _program_nodes(cells, program, shown):
    """The nodes of ``program`` filled with this trace's cells."""
    if program.keys is None or not np.array_equal(cells["keys"], program.keys):
        raise column_error(shown, "optype", layout=True, problem=f"steps {cells['steps'][0]}..{cells['steps'][-1]} "
                           f"run other ops (stage, optype, seq_id) than the rest of the trace")
    return _group_nodes(cells, program.node_of_key, medians=False)


def _check_plain_1f1b(trace, shown):
    """The replay supports the plain 1F1B schedule (one model chunk per stage)."""
    chunks = int(trace.mc.max()) + 1
    if chunks > 1 or trace.layout.vpp_size > 1:
        raise column_error(shown, "mc", problem=f"this trace uses an interleaved (virtual) pipeline with "
                           f"{max(chunks, trace.layout.vpp_size)} model chunks per stage; the replay supports the "
                           f"plain 1F1B schedule (vpp_size = 1, mc = 0) so far")


def _step_bounds(trace, shown):
    """Step ids, each op's step index, each step's start and its recorded time (last end - first start)."""
    steps, si = dense_codes(trace.step)
    S = len(steps)
    end = trace.start_ts + trace.duration
    if S == 1 or (si[1:] >= si[:-1]).all():  # rows in step order: one reduction per step
        cuts = np.r_[0, np.flatnonzero(si[1:] != si[:-1]) + 1]
        step_start, step_end = np.minimum.reduceat(trace.start_ts, cuts), np.maximum.reduceat(end, cuts)
    else:
        step_start = np.full(S, np.inf)
        np.minimum.at(step_start, si, trace.start_ts)
        step_end = np.full(S, -np.inf)
        np.maximum.at(step_end, si, end)
    recorded_step = step_end - step_start
    if (recorded_step <= 0).any():
        s = int(np.flatnonzero(recorded_step <= 0)[0])
        raise column_error(shown, "duration", problem=f"step {steps[s]} has no time in it (every op lasts 0 s)")
    return steps, si, step_start, recorded_step


def _cells(trace, shown, notes, medians=True):
    """Every op in its cell (key, step, DP rank); a key is one (stage, optype, seq_id).

    ``medians``: also each key's median start and end (what orders the ops
    when the model derives its own program; a given program has its order).
    """
    D = trace.layout.dp_size
    steps, si, step_start, recorded_step = _step_bounds(trace, shown)
    S = len(steps)
    nseq = int(trace.seq_id.max()) + 1
    keys, kidx = dense_codes((trace.stage * len(OPTYPES) + trace.optype) * nseq + trace.seq_id)
    K = len(keys)
    k_stage, k_code, k_seq = keys // (nseq * len(OPTYPES)), (keys // nseq) % len(OPTYPES), keys % nseq
    check_memory(6 * 8 * K * S * D, f"replaying {K} ops x {S} steps x {D} DP ranks")
    cell = (kidx * S + si) * D + trace.dp_rank
    counts = np.bincount(cell, minlength=K * S * D)
    _check_cells(counts.reshape(K, S, D), k_stage, k_code, k_seq, steps, shown, notes)
    rel = trace.start_ts - (step_start[0] if S == 1 else step_start[si])
    if len(cell) == K * S * D and counts.max() == 1:  # one op per cell: gather each cell's op (cheaper than scatter)
        row = np.empty(len(cell), dtype=np.int64)
        row[cell] = np.arange(len(cell))
        start, dur, mb = (a[row].reshape(K, S, D) for a in (rel, trace.duration, trace.mb_id))
    else:
        start, dur = np.zeros((K, S, D)), np.zeros((K, S, D))
        mb = np.full((K, S, D), -1, dtype=np.int64)
        start.reshape(-1)[cell] = rel
        dur.reshape(-1)[cell] = trace.duration
        mb.reshape(-1)[cell] = trace.mb_id
    if trace.mc.min() == trace.mc.max():  # one chunk everywhere (the replay allows no other)
        mc_of = np.full(K, trace.mc[0], dtype=np.int64)
    else:
        mc_of = np.zeros(K, dtype=np.int64)
        mc_of[kidx] = trace.mc  # any row of the key (chunks are fixed per key)
    out = {"steps": steps, "si": si, "kidx": kidx, "keys": keys, "recorded_step": recorded_step, "stage": k_stage,
           "code": k_code, "seq": k_seq, "start": start, "dur": dur, "mb": mb, "mc": mc_of}
    if medians:
        out["med_start"] = _median_time(start)
        out["med_end"] = _median_time(start[:, :, :64] + dur[:, :, :64])
    return out


def _check_cells(counts, k_stage, k_code, k_seq, steps, shown, notes):
    """One op per cell; a missing gc counts as 0 s, any other missing op is an error."""
    if not (counts != 1).any():
        return
    missing = counts == 0
    fill = missing & (k_code == GC)[:, None, None]
    bad = missing & ~fill
    if bad.any():
        k, s, d = np.argwhere(bad)[0]
        raise column_error(shown, "seq_id", layout=True, problem=f"worker (dp_rank {d}, stage {k_stage[k]}) has no "
                           f"{OPTYPES[k_code[k]]} op with seq_id {k_seq[k]} in step {steps[s]}, but other workers "
                           f"of its stage do (every DP rank and step must run the same ops)")
    if fill.any():
        notes.append(Note(N_("{count} worker-steps have fewer gc ops than others; the missing ones count as 0 s"),
                          count=int(fill.sum())))


def _combine_p2p(cells, P, notes):
    """Nodes: keys, with Megatron's combined send+recv (same start and duration) merged into one."""
    k_stage, k_code, start, dur = cells["stage"], cells["code"], cells["start"], cells["dur"]
    K = len(k_stage)
    group_of = np.arange(K)
    for p in range(P):
        ks = np.flatnonzero((k_stage == p) & np.isin(k_code, P2P_CODES))
        ks = ks[np.argsort(cells["med_start"][ks], kind="stable")]
        for a, b in zip(ks[:-1], ks[1:]):
            if group_of[a] != a:
                continue
            frac = ((np.abs(start[a] - start[b]) <= COMBINE_TOL) & (np.abs(dur[a] - dur[b]) <= COMBINE_TOL)).mean()
            if frac >= 0.5:
                group_of[b] = a
                if frac < 1:
                    notes.append(Note(N_("{first} and {second} of stage {stage} are combined in {share:.0f}% of "
                                         "worker-steps and treated as one op everywhere"),
                                      first=OPTYPES[k_code[a]], second=OPTYPES[k_code[b]], stage=p, share=100 * frac))
    heads = np.flatnonzero(group_of == np.arange(K))
    return _group_nodes(cells, np.searchsorted(heads, group_of))


def _group_nodes(cells, node_of_key, medians=True):
    """Nodes from keys: each node's start, duration (the longest member's), microbatch and median times."""
    k_stage, k_code, start, dur = cells["stage"], cells["code"], cells["start"], cells["dur"]
    K = len(k_stage)
    heads = np.full(int(node_of_key.max()) + 1 if K else 0, K, dtype=np.int64)
    np.minimum.at(heads, node_of_key, np.arange(K))  # a node's head is its first key
    members = [[] for _ in heads]
    for k in range(K):
        members[node_of_key[k]].append(k)
    n_start = start[heads]
    n_dur = dur[heads]  # a copy; a combined node takes its longest member's
    for i, m in enumerate(members):
        if len(m) > 1:
            n_dur[i] = dur[m].max(axis=0)
    out = {"N": len(heads), "heads": heads, "node_of_key": node_of_key, "stage": k_stage[heads],
           "codes": [tuple(int(k_code[k]) for k in m) for m in members], "start": n_start, "dur": n_dur,
           "mb": cells["mb"][heads], "mc": cells["mc"][heads]}
    if medians:
        out["med_start"] = cells["med_start"][heads]
        out["med_end"] = _median_time(n_start[:, :, :64] + n_dur[:, :, :64])
    return out


def _p2p_links(cells, nodes, P, shown, notes):
    """Pipeline peers (the k-th send of a stage with the k-th receive of its neighbour) and no-ops."""
    k_stage, k_code, k_seq, node_of_key = cells["stage"], cells["code"], cells["seq"], nodes["node_of_key"]
    N = nodes["N"]
    peers = [set() for _ in range(N)]
    linked = np.zeros(len(k_stage), dtype=bool)

    def by_seq(stage_, code):
        ks = np.flatnonzero((k_stage == stage_) & (k_code == code))
        return ks[np.argsort(k_seq[ks], kind="stable")]

    for s_ in range(P - 1):
        for send_code, send_stage, recv_code, recv_stage in ((FSEND, s_, FRECV, s_ + 1), (BSEND, s_ + 1, BRECV, s_)):
            sends, recvs = by_seq(send_stage, send_code), by_seq(recv_stage, recv_code)
            if len(sends) != len(recvs):
                sends, recvs = _trim_noops(sends, recvs, send_stage, recv_stage, send_code, recv_code, k_stage,
                                           k_code, cells["med_start"], cells["med_end"], shown)
            for a, b in zip(sends, recvs):
                peers[node_of_key[a]].add(node_of_key[b])
                peers[node_of_key[b]].add(node_of_key[a])
                linked[a] = linked[b] = True
    noop = np.zeros(N, dtype=bool)
    p2p_keys = np.flatnonzero(np.isin(k_code, P2P_CODES))
    for k in p2p_keys:
        noop[node_of_key[k]] |= not peers[node_of_key[k]]  # moved no data: no peer at all
    if P == 1 and len(p2p_keys):
        notes.append(Note(N_("a single stage has no pipeline peers: its send/recv ops are treated as local")))
    return peers, noop, linked


def _collective_groups(cells, nodes, peers, D, P):
    """DP barriers (DP collectives, clip), the embedding pair, and the clip across every stage."""
    k_stage, k_code, k_seq, node_of_key = cells["stage"], cells["code"], cells["seq"], nodes["node_of_key"]
    dpsync = np.array([c[0] in DP_COLLECTIVES and D > 1 for c in nodes["codes"]], dtype=bool)
    for code, stages_ in ((EMB, (0, P - 1)), (CLIP, tuple(range(P)))):
        if P == 1 and code == EMB:
            continue
        for sq in np.unique(k_seq[k_code == code]):
            group = [node_of_key[k] for k in np.flatnonzero((k_code == code) & (k_seq == sq)) if k_stage[k] in stages_]
            for a in group:
                peers[a].update(g for g in group if g != a)
                if code == CLIP and D > 1:
                    dpsync[a] = True
    return dpsync


def _streams(nodes, P):
    """Program order on each stage's main chain, and the side stream of overlapping DP collectives."""
    N, codes = nodes["N"], nodes["codes"]
    side = np.zeros(N, dtype=bool)
    preds = [set() for _ in range(N)]
    for p in range(P):
        ns = np.flatnonzero(nodes["stage"] == p)
        ns = ns[np.lexsort((nodes["med_end"][ns], nodes["med_start"][ns]))]
        for n in ns:
            if codes[n][0] in (AG, RS):
                side[n] = _overlaps(nodes, n, [m for m in ns if m != n and codes[m][0] not in (AG, RS)])
        main = [n for n in ns if not side[n]]
        sides = [n for n in ns if side[n]]
        for chain in (main, sides):
            for a, b in zip(chain[:-1], chain[1:]):
                preds[b].add(a)
        for n in sides:
            _side_links(nodes, n, main, preds)
    return side, [sorted(x) for x in preds]


_EPS = 1e-6  # seconds: tolerance when comparing median start and end times


def _overlaps(nodes, n, others):
    """Does node n overlap any of ``others`` in the median recorded timeline?"""
    ms, me = nodes["med_start"], nodes["med_end"]
    return any(ms[m] < me[n] - _EPS and me[m] > ms[n] + _EPS for m in others)


def _side_links(nodes, n, main, preds):
    """A side-stream collective starts after the last main op that ended before it; who waits for it."""
    ms, me, codes = nodes["med_start"], nodes["med_end"], nodes["codes"]
    before = [m for m in main if me[m] <= ms[n] + _EPS]
    if before:
        preds[n].add(max(before, key=lambda m: (me[m], ms[m])))
    later = [m for m in main if ms[m] >= ms[n] - _EPS]
    if codes[n][0] == AG:  # the first forward of its chunk waits for the parameters
        fwd = [m for m in later if codes[m][0] == FWD and nodes["mc"][m] == nodes["mc"][n]]
        if fwd:
            preds[fwd[0]].add(n)
    else:  # gradient sync: the clip (or what follows the sync) waits for it
        sync = [m for m in later if codes[m][0] in (SEP, CLIP, OPT)]
        if sync:
            preds[sync[0]].add(n)


def _recorded_work(nodes, peers, dpsync, notes):
    """Duration for local ops; transfer time (end - latest arrival) for collectives and send/recv."""
    n_start, n_dur = nodes["start"], nodes["dur"]
    work = n_dur.copy()
    negative = 0
    for n in range(nodes["N"]):
        if not (dpsync[n] or peers[n]):
            continue
        arrive = n_start[n]
        for u in peers[n]:
            arrive = np.maximum(arrive, n_start[u])
        if dpsync[n]:
            arrive = arrive.max(axis=-1, keepdims=True)
        t = (n_start[n] + n_dur[n]) - arrive
        negative += int((t < -1e-9).sum())
        work[n] = np.maximum(t, 0.0)
    if negative:
        notes.append(Note(N_("{count} collective or send/recv ops end before their last peer arrives (clock skew or "
                             "an eager send); their transfer time is taken as 0"), count=negative))
    return work


def _trim_noops(sends, recvs, send_stage, recv_stage, send_code, recv_code, k_stage, k_code, med_start, med_end, shown):
    """Drop recorded send/recv ops that were never launched (as the artifact does).

    A receive that starts after the stage's last forward (backward) compute
    started, and a send that ends before its first one ended, moved no data.
    """
    comp = FWD if send_code == FSEND else BWD

    def comp_of(stage_):
        return np.flatnonzero((k_stage == stage_) & (k_code == comp))

    cr = comp_of(recv_stage)
    cs = comp_of(send_stage)
    eps = 5e-4
    if len(cr):
        recvs = recvs[med_start[recvs] <= med_start[cr].max() + eps]
    if len(cs):
        sends = sends[med_end[sends] >= med_end[cs].min() - eps]
    if len(sends) != len(recvs):
        raise column_error(shown, "optype", layout=True, problem=f"stage {send_stage} has {len(sends)} "
                           f"{OPTYPES[send_code]} ops per step but stage {recv_stage} has {len(recvs)} "
                           f"{OPTYPES[recv_code]} ops; every send needs its receive")
    return sends, recvs


def _event_order(N, preds, peers, *, node_label, node_stage, node_codes, shown):
    """Topological order of start (0) and end (1) events; a cycle is an error."""
    # event id: 2n = start of n, 2n+1 = end of n
    indeg = np.zeros(2 * N, dtype=np.int64)
    succ = [[] for _ in range(2 * N)]
    for n in range(N):
        for p in preds[n]:
            succ[2 * p + 1].append(2 * n)
            indeg[2 * n] += 1
        succ[2 * n].append(2 * n + 1)
        indeg[2 * n + 1] += 1
        for u in peers[n]:
            succ[2 * u].append(2 * n + 1)
            indeg[2 * n + 1] += 1
    ready = [e for e in range(2 * N) if indeg[e] == 0]
    order = []
    while ready:
        e = ready.pop()
        order.append((e & 1, e >> 1))
        for f in succ[e]:
            indeg[f] -= 1
            if indeg[f] == 0:
                ready.append(f)
    if len(order) != 2 * N:
        stuck = sorted({e >> 1 for e in range(2 * N) if indeg[e] > 0})[:4]
        names = ", ".join(f"{'+'.join(OPTYPES[c] for c in node_codes[n])} of stage {node_stage[n]}" for n in stuck)
        raise column_error(shown, "start_ts", layout=True, problem=f"the recorded order of ops deadlocks "
                           f"(a send/recv or collective waits on itself), around: {names}")
    return order


def _last_uses(model):
    """For each node, the index in model.order of the last event reading its start / end (lists)."""
    N = model.n_nodes
    last_start = [-1] * N
    last_end = [-1] * N
    for i, (kind, n) in enumerate(model.order):
        if kind == 0:
            for p in model.preds[n]:
                last_end[p] = i
        else:
            last_start[n] = i
            for u in model.peers[n]:
                last_start[u] = max(last_start[u], i)
    return last_start, last_end


def _sinks(model):
    """Which nodes no other node waits for (in no node's preds): a bool per node."""
    sink = [True] * model.n_nodes
    for ps in model.preds:
        for p in ps:
            sink[p] = False
    return sink


_USES = {}  # id(model.order) -> (order, last uses, sinks): every block of a job shares its program's order


def _uses(model):
    """:func:`_last_uses` and :func:`_sinks` of the model, computed once per program."""
    hit = _USES.get(id(model.order))
    if hit is None or hit[0] is not model.order:
        if len(_USES) >= 16:
            _USES.clear()
        hit = _USES[id(model.order)] = (model.order, _last_uses(model), _sinks(model))
    return hit[1], hit[2]


def _max_last(x, keepdims=False):
    """``x.max(axis=-1)``; over two DP columns as one elementwise maximum (the same values, faster)."""
    if x.shape[-1] == 2:
        out = np.maximum(x[..., 0], x[..., 1])
        return out[..., None] if keepdims else out
    return x.max(axis=-1, keepdims=keepdims)


def replay(model, work, *, keep_timeline=False, progress=None, nonnegative=False):
    """Replay every step through the dependency model.

    Parameters
    ----------
    model : DependencyModel
    work : callable
        ``work(n)`` returns node n's work (duration or transfer time, seconds)
        as an array of shape (V, S, D') (or broadcastable to it): V variants,
        S steps, D' DP columns.
    keep_timeline : bool
        Also return every node's start and end arrays.
    progress : callable, optional
        Called with the number of events done, for a progress bar.
    nonnegative : bool
        The caller promises that no work is negative (recorded and ideal work
        never are). Every op then ends no earlier than an op that waits for
        it, so the step's end is the latest end among the ops no op waits
        for, and only theirs are scanned: the same step times, bit for bit.

    Returns
    -------
    step_time : numpy.ndarray
        Shape (V, S): the replayed step times, in seconds.
    timeline : tuple of lists, only with ``keep_timeline``
        ``(starts, ends)``, each a list of arrays per node.

    Examples
    --------
    Replay the recorded work, and the same work doubled, as two variants at once:

    >>> import numpy as np
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=2, steps=1))
    >>> T = replay(m, lambda n: np.stack([m.work[n], 2 * m.work[n]]))
    >>> bool(np.allclose(T[0], m.recorded_step)), bool(np.allclose(T[1], 2 * T[0]))
    (True, True)
    >>> bool(np.array_equal(replay(m, lambda n: m.work[n][None], nonnegative=True), T[:1]))
    True
    """
    N = model.n_nodes
    starts = [None] * N
    ends = [None] * N
    (last_start, last_end), sink = _uses(model)
    scan = sink if nonnegative else [True] * N
    step_end = None
    zero = np.zeros(())
    preds, peers, dpsync = model.preds, model.peers, model.dpsync
    for i, (kind, n) in enumerate(model.order):
        if kind == 0:
            ps = preds[n]
            if not ps:
                st = zero
            else:
                st = ends[ps[0]]
                for p in ps[1:]:
                    st = np.maximum(st, ends[p])
            starts[n] = st
            if not keep_timeline:
                for p in ps:
                    if last_end[p] == i:
                        ends[p] = None
        else:
            m = starts[n]
            for u in peers[n]:
                m = np.maximum(m, starts[u])
            if dpsync[n] and np.ndim(m):
                m = _max_last(m, keepdims=True)
            e = m + work(n)
            ends[n] = e
            if scan[n]:
                last = _max_last(e)
                step_end = last if step_end is None else np.maximum(step_end, last)
            if not keep_timeline:
                if last_start[n] == i:
                    starts[n] = None
                for u in peers[n]:
                    if last_start[u] == i:
                        starts[u] = None
        if progress is not None and i % 256 == 255:
            progress(256)
    if keep_timeline:
        return step_end, (starts, ends)
    return step_end
