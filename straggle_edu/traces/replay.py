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
from ._table import TraceError, dense_codes, display_path
from .optrace import OPTYPES

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


def build_model(trace):
    """Build the :class:`DependencyModel` of an :class:`~straggle_edu.traces.OpTrace`.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> m = build_model(synthetic_trace(dp=2, pp=2, microbatches=3, steps=4))
    >>> m.shape   # nodes (ops of one worker-step, per stage), steps, DP ranks
    (34, 4, 2)
    >>> sorted({m.node_label[n] for n in range(m.n_nodes) if len(m.node_codes[n]) == 2})
    ['forward-recv+backward-send', 'forward-send+backward-recv']
    """
    shown = display_path(trace.source) if trace.source != "<memory>" else trace.source
    L = trace.layout
    D, P = L.dp_size, L.pp_size
    chunks = int(trace.mc.max()) + 1
    if chunks > 1 or L.vpp_size > 1:
        raise TraceError(
            f"{shown}: column 'mc': this trace uses an interleaved (virtual) pipeline with "
            f"{max(chunks, L.vpp_size)} model chunks per stage; the replay supports the plain 1F1B schedule "
            f"(vpp_size = 1, mc = 0) so far"
        )
    steps, si = dense_codes(trace.step)
    S = len(steps)
    step_start = np.full(S, np.inf)
    np.minimum.at(step_start, si, trace.start_ts)
    end_ts = trace.start_ts + trace.duration
    step_end = np.full(S, -np.inf)
    np.maximum.at(step_end, si, end_ts)
    recorded_step = step_end - step_start
    if (recorded_step <= 0).any():
        s = int(np.flatnonzero(recorded_step <= 0)[0])
        raise TraceError(f"{shown}: column 'duration': step {steps[s]} has no time in it (every op lasts 0 s)")

    # nodes: one per (stage, optype, seq_id)
    nseq = int(trace.seq_id.max()) + 1
    key = (trace.stage * len(OPTYPES) + trace.optype) * nseq + trace.seq_id
    keys, kidx = dense_codes(key)
    K = len(keys)
    k_stage = keys // (nseq * len(OPTYPES))
    k_code = (keys // nseq) % len(OPTYPES)
    k_seq = keys % nseq
    check_memory(6 * 8 * K * S * D, f"replaying {K} ops x {S} steps x {D} DP ranks")
    cell = (kidx * S + si) * D + trace.dp_rank
    counts = np.bincount(cell, minlength=K * S * D).reshape(K, S, D)
    notes = []
    if (counts != 1).any():
        missing = counts == 0
        # gc ops may be absent in some worker-steps: they take 0 s there
        fill = missing & (k_code == GC)[:, None, None]
        bad = missing & ~fill
        if bad.any():
            k, s, d = np.argwhere(bad)[0]
            raise TraceError(
                f"{shown}: inconsistent layout: column 'seq_id': worker (dp_rank {d}, stage {k_stage[k]}) has no "
                f"{OPTYPES[k_code[k]]} op with seq_id {k_seq[k]} in step {steps[s]}, but other workers of its "
                f"stage do (every DP rank and step must run the same ops)"
            )
        if fill.any():
            notes.append(f"{int(fill.sum())} worker-steps have fewer gc ops than others; the missing ones count as 0 s")
    start = np.zeros((K, S, D))
    dur = np.zeros((K, S, D))
    mb = np.full((K, S, D), -1, dtype=np.int64)
    rel = trace.start_ts - step_start[si]
    start.reshape(-1)[cell] = rel
    dur.reshape(-1)[cell] = trace.duration
    mb.reshape(-1)[cell] = trace.mb_id
    if (counts == 0).any():  # filled gc: start where the op before it ends (set below via median order)
        pass
    mc_of = np.zeros(K, dtype=np.int64)
    mc_of[kidx] = trace.mc  # any row of the node (chunks are fixed per node)
    med_start = _median_time(start)
    med_end = _median_time(start + dur)

    # combined send+recv: p2p nodes of one stage with the same start and duration
    group_of = np.arange(K)
    for p in range(P):
        ks = np.flatnonzero((k_stage == p) & np.isin(k_code, P2P_CODES))
        ks = ks[np.argsort(med_start[ks], kind="stable")]
        for a, b in zip(ks[:-1], ks[1:]):
            if group_of[a] != a:
                continue
            same = (np.abs(start[a] - start[b]) <= COMBINE_TOL) & (np.abs(dur[a] - dur[b]) <= COMBINE_TOL)
            frac = same.mean()
            if frac >= 0.5:
                group_of[b] = a
                if frac < 1:
                    notes.append(
                        f"{OPTYPES[k_code[a]]} and {OPTYPES[k_code[b]]} of stage {p} are combined in "
                        f"{100 * frac:.0f}% of worker-steps and treated as one op everywhere"
                    )
    heads = np.flatnonzero(group_of == np.arange(K))
    node_of_key = np.searchsorted(heads, group_of)
    N = len(heads)
    members = [[] for _ in range(N)]
    for k in range(K):
        members[node_of_key[k]].append(k)

    node_stage = k_stage[heads]
    node_codes = [tuple(int(k_code[k]) for k in members[n]) for n in range(N)]
    n_start = start[heads]
    n_dur = np.stack([dur[members[n]].max(axis=0) for n in range(N)]) if N else dur[:0]
    n_mb = mb[heads]
    n_med_start = med_start[heads]
    n_med_end = _median_time(n_start + n_dur)

    # p2p links, between keys, then between nodes
    peers = [set() for _ in range(N)]
    noop = np.zeros(N, dtype=bool)

    def by_seq(stage_, code):
        ks = np.flatnonzero((k_stage == stage_) & (k_code == code))
        return ks[np.argsort(k_seq[ks], kind="stable")]

    linked = np.zeros(K, dtype=bool)
    for s_ in range(P - 1):
        for send_code, send_stage, recv_code, recv_stage in (
            (FSEND, s_, FRECV, s_ + 1),
            (BSEND, s_ + 1, BRECV, s_),
        ):
            sends, recvs = by_seq(send_stage, send_code), by_seq(recv_stage, recv_code)
            if len(sends) != len(recvs):
                sends, recvs = _trim_noops(sends, recvs, send_stage, recv_stage, send_code, recv_code,
                                           k_stage, k_code, med_start, med_end, shown)
            for a, b in zip(sends, recvs):
                na, nb = node_of_key[a], node_of_key[b]
                peers[na].add(nb)
                peers[nb].add(na)
                linked[a] = linked[b] = True
    p2p_keys = np.flatnonzero(np.isin(k_code, P2P_CODES))
    for k in p2p_keys:
        n = node_of_key[k]
        if not peers[n]:
            noop[n] = True  # moved no data: a send/recv (or pair) without any peer
    if P == 1 and len(p2p_keys):
        notes.append("a single stage has no pipeline peers: its send/recv ops are treated as local")

    # embedding: first and last stage of the same DP rank; clip: all stages and DP ranks
    dpsync = np.zeros(N, dtype=bool)
    for n in range(N):
        if node_codes[n][0] in DP_COLLECTIVES and D > 1:
            dpsync[n] = True
    for code, stages_ in ((EMB, (0, P - 1)), (CLIP, tuple(range(P)))):
        if P == 1 and code == EMB:
            continue
        for sq in np.unique(k_seq[k_code == code]):
            group = [node_of_key[k] for k in np.flatnonzero((k_code == code) & (k_seq == sq))
                     if k_stage[k] in stages_]
            for a in group:
                peers[a].update(g for g in group if g != a)
                if code == CLIP and D > 1:
                    dpsync[a] = True
    peers = [sorted(x) for x in peers]

    # streams: the main chain of each stage, and the DP-collective side stream
    side = np.zeros(N, dtype=bool)
    preds = [set() for _ in range(N)]
    eps = 1e-6
    for p in range(P):
        ns = np.flatnonzero(node_stage == p)
        ns = ns[np.lexsort((n_med_end[ns], n_med_start[ns]))]
        dpc = [n for n in ns if node_codes[n][0] in (AG, RS)]
        for n in dpc:
            others = [m for m in ns if m != n and node_codes[m][0] not in (AG, RS)]
            overlap = any(
                n_med_start[m] < n_med_end[n] - eps and n_med_end[m] > n_med_start[n] + eps for m in others
            )
            side[n] = overlap
        main = [n for n in ns if not side[n]]
        for a, b in zip(main[:-1], main[1:]):
            preds[b].add(a)
        sides = [n for n in ns if side[n]]
        for a, b in zip(sides[:-1], sides[1:]):
            preds[b].add(a)
        for n in sides:
            before = [m for m in main if n_med_end[m] <= n_med_start[n] + eps]
            if before:
                preds[n].add(max(before, key=lambda m: (n_med_end[m], n_med_start[m])))
            later = [m for m in main if n_med_start[m] >= n_med_start[n] - eps]
            if node_codes[n][0] == AG:
                chunk = mc_of[heads[n]]
                fwd = [m for m in later if node_codes[m][0] == FWD and mc_of[heads[m]] == chunk]
                if fwd:
                    preds[fwd[0]].add(n)
            else:  # gradient sync: the clip (or what follows the sync) waits for it
                sync = [m for m in later if node_codes[m][0] in (SEP, CLIP, OPT)]
                if sync:
                    preds[sync[0]].add(n)
    preds = [sorted(x) for x in preds]

    order = _event_order(N, preds, peers, node_label=None, node_stage=node_stage, node_codes=node_codes,
                         shown=shown)

    # recorded work: duration for local ops, transfer time for collectives and send/recv
    work = n_dur.copy()
    n_end = n_start + n_dur
    negative = 0
    for n in range(N):
        if not (dpsync[n] or peers[n]):
            continue
        arrive = n_start[n]
        for u in peers[n]:
            arrive = np.maximum(arrive, n_start[u])
        if dpsync[n]:
            arrive = arrive.max(axis=-1, keepdims=True)
        t = n_end[n] - arrive
        negative += int((t < -1e-9).sum())
        work[n] = np.maximum(t, 0.0)
    if negative:
        notes.append(
            f"{negative} collective or send/recv ops end before their last peer arrives (clock skew or an "
            f"eager send); their transfer time is taken as 0"
        )

    labels = []
    for n in range(N):
        lab = "+".join(OPTYPES[c] for c in node_codes[n])
        labels.append(lab + " (no peer)" if noop[n] else lab)

    # map every op row to its cell
    cell_of_row = (node_of_key[kidx] * S + si) * D + trace.dp_rank
    return DependencyModel(
        source=str(trace.source),
        steps=steps,
        dp_size=D,
        pp_size=P,
        node_stage=node_stage,
        node_codes=node_codes,
        node_label=labels,
        node_noop=noop,
        node_mb=n_mb,
        preds=preds,
        peers=peers,
        dpsync=dpsync,
        side=side,
        order=order,
        start=n_start,
        duration=n_dur,
        work=work,
        recorded_step=recorded_step,
        cell_of_row=cell_of_row,
        notes=notes,
    )


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
        raise TraceError(
            f"{shown}: inconsistent layout: column 'optype': stage {send_stage} has {len(sends)} "
            f"{OPTYPES[send_code]} ops per step but stage {recv_stage} has {len(recvs)} {OPTYPES[recv_code]} "
            f"ops; every send needs its receive"
        )
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
        raise TraceError(
            f"{shown}: inconsistent layout: column 'start_ts': the recorded order of ops deadlocks "
            f"(a send/recv or collective waits on itself), around: {names}"
        )
    return order


def _last_uses(model):
    """For each node, the index in model.order of the last event reading its start / end."""
    N = model.n_nodes
    last_start = np.full(N, -1)
    last_end = np.full(N, -1)
    for i, (kind, n) in enumerate(model.order):
        if kind == 0:
            for p in model.preds[n]:
                last_end[p] = i
        else:
            last_start[n] = i
            for u in model.peers[n]:
                last_start[u] = max(last_start[u], i)
    return last_start, last_end


def replay(model, work, *, keep_timeline=False, progress=None):
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
    """
    N = model.n_nodes
    starts = [None] * N
    ends = [None] * N
    last_start, last_end = (None, None) if keep_timeline else _last_uses(model)
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
                m = m.max(axis=-1, keepdims=True)
            e = m + work(n)
            ends[n] = e
            last = e.max(axis=-1)
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
