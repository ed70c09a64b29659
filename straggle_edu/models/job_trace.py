"""The op-level trace of a simulated Megatron-style DP x PP job (1F1B), as plain arrays.

A scenario model turns its causes into the work of every op; this module
runs the job's program and records what a profiler would have seen, in the
schema of the OSDI 2025 artifact (one row per op: ``dp_rank``, ``stage``,
``step``, ``optype``, ``start_ts``, ``duration``, ``seq_id``, ...). The
analysis of such a trace lives in :mod:`straggle_edu.traces`, which reads
these columns like any file's (models never import traces).

:func:`program`
    the ops of one stage in program order, on the main and the DP-collective
    stream.
:func:`wire`, :func:`wavefront`, :func:`record`
    peers and dependencies, the simulated start and end of every op, and the
    recorded columns.

Each DP rank runs the same program:

- a ``params-all-gather`` on the DP-collective stream at the start of the
  step (the first forward waits for it);
- the 1F1B forwards and backwards, with blocking pipeline sends and
  receives; in the steady state the send of one op and the receive of the
  next are one combined op (Megatron's ``send_forward_recv_backward`` and
  ``send_backward_recv_forward``), recorded as two rows with the same start
  and duration;
- after the last backward: ``grads-reduce-scatter`` on the DP-collective
  stream, and on the main stream ``gc``, ``layernorm-grads-all-reduce``,
  ``embedding-grads-all-reduce`` (first and last stage),
  ``optimizer-clip-main-grad`` (waits for the reduce-scatter; a barrier
  across all ranks) and ``optimizer``.

Collectives and sends/receives end at the latest arrival of their
participants plus their transfer time. The simulation is its own simple
wavefront over each worker's program, independent of the analyzer's replay.
"""

from __future__ import annotations

import numpy as np

from .pipeline import schedule_1f1b

__all__ = ["OPTYPES", "program", "wire", "wavefront", "record"]

#: The optypes of the artifact's schema (straggle_edu.traces.optrace reads and writes these).
OPTYPES = (
    "forward-compute",
    "backward-compute",
    "forward-send",
    "forward-recv",
    "backward-send",
    "backward-recv",
    "params-all-gather",
    "grads-reduce-scatter",
    "separate-grads-all-reduce",
    "layernorm-grads-all-reduce",
    "embedding-grads-all-reduce",
    "optimizer-clip-main-grad",
    "optimizer",
    "gc",
)
C = {name: i for i, name in enumerate(OPTYPES)}


def program(s, P, M, D):
    """The ops of stage s in program order: ``(main, side)`` lists of (kind, codes, mb, tags).

    Examples
    --------
    >>> main, side = program(0, 2, 1, 2)
    >>> [OPTYPES[codes[0]] for _, codes, _, _ in main][:3]
    ['forward-compute', 'forward-send', 'backward-compute']
    """
    sched = schedule_1f1b(P, M)[s]
    main = []
    for i, (kind, m) in enumerate(sched):
        prev = sched[i - 1] if i > 0 else None
        nxt = sched[i + 1] if i + 1 < len(sched) else None
        if kind == "F":
            if s > 0 and not (prev is not None and prev[0] == "B"):
                main.append(("p2p", (C["forward-recv"],), -1, (("F", m, s - 1),)))
            main.append(("compute", (C["forward-compute"],), m, ()))
            if s < P - 1:
                if nxt is not None and nxt[0] == "B":
                    main.append(("p2p", (C["forward-send"], C["backward-recv"]), -1, (("F", m, s), ("B", nxt[1], s + 1))))
                else:
                    main.append(("p2p", (C["forward-send"],), -1, (("F", m, s),)))
        else:
            if s < P - 1 and not (prev is not None and prev[0] == "F"):
                main.append(("p2p", (C["backward-recv"],), -1, (("B", m, s + 1),)))
            main.append(("compute", (C["backward-compute"],), m, ()))
            if s > 0:
                if nxt is not None and nxt[0] == "F":
                    main.append(("p2p", (C["backward-send"], C["forward-recv"]), -1, (("B", m, s), ("F", nxt[1], s - 1))))
                else:
                    main.append(("p2p", (C["backward-send"],), -1, (("B", m, s),)))
    main.append(("local", (C["gc"],), -1, ()))
    main.append(("local", (C["layernorm-grads-all-reduce"],), -1, ()))
    if P > 1 and s in (0, P - 1):
        main.append(("emb", (C["embedding-grads-all-reduce"],), -1, ()))
    main.append(("clip", (C["optimizer-clip-main-grad"],), -1, ()))
    main.append(("local", (C["optimizer"],), -1, ()))
    side = []
    if D > 1:
        side.append(("dp", (C["params-all-gather"],), -1, ()))
        side.append(("dp", (C["grads-reduce-scatter"],), -1, ()))
    return main, side


def wire(ops, programs, D):
    """Peers (by tag; the embedding pair; the clip everywhere) and stream dependencies, in place.

    ``ops`` is a list of dicts with ``stage``, ``stream``, ``i``, ``kind``,
    ``codes``, ``mb``, ``tags`` and ``work`` (an (S, D) array of seconds),
    one per entry of :func:`program`'s lists.
    """
    by_pos = {(o["stage"], o["stream"], o["i"]): j for j, o in enumerate(ops)}
    tag_owner = {}
    for j, o in enumerate(ops):
        for tag in o["tags"]:
            tag_owner.setdefault(tag, []).append(j)
    for j, o in enumerate(ops):
        peers = set()
        for tag in o["tags"]:
            peers.update(k for k in tag_owner[tag] if k != j)
        if o["kind"] == "emb":
            peers.update(k for k, q in enumerate(ops) if q["kind"] == "emb" and k != j)
        if o["kind"] == "clip":
            peers.update(k for k, q in enumerate(ops) if q["kind"] == "clip" and k != j)
        o["peers"] = sorted(peers)
        o["dpsync"] = o["kind"] in ("dp", "clip") and D > 1
        o["deps"] = []
        if o["i"] > 0:
            o["deps"].append(by_pos[(o["stage"], o["stream"], o["i"] - 1)])
    for s, (main, side) in enumerate(programs):
        if side:
            ag = by_pos[(s, "side", 0)]
            rs = by_pos[(s, "side", 1)]
            first_f = next(i for i, op in enumerate(main) if op[1][0] == C["forward-compute"])
            ops[by_pos[(s, "main", first_f)]]["deps"].append(ag)
            last_b = max(i for i, op in enumerate(main) if op[1][0] == C["backward-compute"])
            ops[rs]["deps"].append(by_pos[(s, "main", last_b)])
            clip_i = next(i for i, op in enumerate(main) if op[1][0] == C["optimizer-clip-main-grad"])
            ops[by_pos[(s, "main", clip_i)]]["deps"].append(rs)



def wavefront(ops, S, D, gaps=0.0, rng=None):
    """Start an op when its dependencies have ended; end it when its peers have started.

    Returns ``(start, end)``: lists of (S, D) arrays, seconds from the step's
    start. ``gaps`` > 0 delays each start by up to ``gaps`` seconds (uniform,
    from ``rng``).
    """
    start = [None] * len(ops)
    end = [None] * len(ops)
    pending = set(range(len(ops)))
    while pending:
        progressed = False
        for j in sorted(pending):
            o = ops[j]
            if start[j] is None:
                if any(end[k] is None for k in o["deps"]):
                    continue
                ready = np.zeros((S, D))
                for k in o["deps"]:
                    ready = np.maximum(ready, end[k])
                if gaps > 0:
                    ready = ready + gaps * rng.random((S, D))
                start[j] = ready
                progressed = True
            if any(start[k] is None for k in o["peers"]):
                continue
            arrive = start[j]
            for k in o["peers"]:
                arrive = np.maximum(arrive, start[k])
            if o["dpsync"]:
                arrive = np.broadcast_to(arrive.max(axis=1, keepdims=True), (S, D))
            end[j] = arrive + o["work"]
            pending.discard(j)
            progressed = True
        if not progressed:  # pragma: no cover - the programs above never deadlock
            raise RuntimeError("synthetic_trace: the simulated program deadlocked")
    return start, end


def record(ops, start, end, S, D, P, step_gap=0.001):
    """The simulated timeline in the artifact's op-level schema: ``(columns, layout)``, plain arrays.

    One row per op and optype (a combined send+recv is two rows with the same
    start and duration), sorted by step, DP rank, stage and start; steps
    follow each other ``step_gap`` seconds apart from t = 1000 s.
    """
    step_len = np.max([e.max(axis=1) for e in end], axis=0)  # (S,)
    origin = 1000.0 + np.concatenate([[0.0], np.cumsum(step_len + step_gap)[:-1]])
    entries, seq_count = [], {}  # one per (op, optype): op index, stage, code, seq_id, microbatch
    for j, o in enumerate(ops):
        for code in o["codes"]:
            seq = seq_count.get((o["stage"], code), 0)
            seq_count[(o["stage"], code)] = seq + 1
            entries.append((j, o["stage"], code, seq, o["mb"] if o["kind"] == "compute" else -1))
    j, stage, code, seq, mb = (np.array(x, dtype=np.int64) for x in zip(*entries))
    shape = (len(entries), S, D)
    per_entry = lambda v: np.broadcast_to(v[:, None, None], shape).ravel()  # noqa: E731
    st0 = np.stack([start[k] for k in j])
    st = st0 + origin[None, :, None]
    out = {
        "dp_rank": np.broadcast_to(np.arange(D), shape).ravel(),
        "stage": per_entry(stage),
        "step": np.broadcast_to(np.arange(S)[:, None], shape).ravel(),
        "optype": per_entry(code),
        "start_ts": st.ravel(),
        "duration": (np.stack([end[k] for k in j]) - st0).ravel(),
        "seq_id": per_entry(seq),
        "mc": np.zeros(st.size, dtype=np.int64),
        "gmc": per_entry(stage),
        "mb_id": per_entry(mb),
    }
    out["rank"] = out["stage"] * D + out["dp_rank"]
    order = np.lexsort((out["start_ts"], out["stage"], out["dp_rank"], out["step"]))
    keys = ("dp_rank", "stage", "rank", "step", "optype", "start_ts", "duration", "seq_id", "mc", "gmc", "mb_id")
    out = {k: out[k][order] for k in keys}
    out["optype"] = np.asarray(OPTYPES)[out["optype"]]  # fixed-width text: cheap to code
    meta = {"dp_size": D, "pp_size": P, "tp_size": 1, "dsp_size": 1, "vpp_size": 1, "world_size": D * P}
    return out, meta
