"""Profiler traces on the one what-if engine: collectives as synchronisation points, segments as work.

A PyTorch profiler trace records no op-level program like the OSDI 2025
artifact's, but each rank's collectives and when it arrived at them
(:mod:`~straggle_edu.traces.profiler`). This module maps that onto the
dependency model of :mod:`~straggle_edu.traces.replay` (one pipeline stage,
the ranks as its DP ranks), and the replay, the ideal and every S_X come
from :mod:`~straggle_edu.traces.whatif`, as for an op-level trace.

The mapping
-----------
Process groups
    The collectives of one process group over all the ranks analysed are
    the synchronisation points (DP collectives). Groups of one rank are
    local and left out. A group whose traces are incomplete (a rank
    missing) is left out with a note: its collectives stay inside the
    segments. Several complete groups over different ranks (tensor and data
    parallel, say) cannot be mapped onto one stage: the job is refused,
    naming them. Collectives are matched across ranks within each step, by
    ``Seq`` where every one has it, else by their order in the group.
Clocks
    Ranks that record the same ``host_name`` share a clock. Across hosts, or
    when no host is recorded, each clock is shifted by the median over the
    collectives of how far its ends lie from the median end (a collective
    ends at about the same moment on all its ranks).
Per collective
    Each rank's arrival (host: issue time; GPU: launch, or the end of the
    compute launched before it); L, the last arrival; the transfer, what
    the last arrival spends in it beyond the previous collective's end
    (T = E - max(L, E_previous), where E is the end on the last rank to
    arrive); each rank's wait, L - arrival.
Segments (work)
    Per rank, the time from the previous synchronisation point to its
    arrival at the next collective, gaps included (a sleep or a stall
    leaves no event, yet it is the lateness). The previous synchronisation
    point is the previous collective's end E when the rank's own timeline
    stayed idle until then (it was blocked, as by the wait at the end of
    DDP's backward), else its arrival there (the collective ran alongside
    its compute, as DDP's gradient buckets do).
Steps (windows)
    A step's window runs from the end of the previous step's last
    collective to the end of its own, so every rank starts it together (the
    replay starts every step at 0). A step without a previous collective in
    the trace (the first, or the first after a gap between profiling
    cycles) counts each rank's first arrival from the step start of the
    rank that arrived first. A step without any collective is counted in
    the next step's window.
The dependency model (per distinct program of the steps)
    Nodes: one compute segment before each collective, and the collective.
    Stream order: each segment follows the previous one. A collective is
    launched after the segment before it, runs after the previous collective
    (one communication stream), and is a barrier across the ranks (it ends
    at L + T). A segment after a collective the ranks were blocked by (in
    most cells) waits for its end: the optimizer's wait on the gradient
    collectives.
Ideal
    Each segment takes the ranks' mean for that segment of that step (the
    paper's choice, as the op-level engine does); each transfer is kept.

:func:`analyze_profiler` returns the :class:`~straggle_edu.traces.Analysis`:
S, waste, per-step S, S_X by rank and by kind of op (compute, each
collective kind), M_W, the replay error, the noise floor, and per collective
the arrivals, waits and transfer.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from ._table import column_error, display_path
from .profiler import ProfilerTrace
from .result import Note

__all__ = ["sync_groups", "match_collectives", "clock_offsets", "rank_waits", "step_windows", "build_models",
           "analyze_profiler", "rank_table", "counted_waits", "BLOCKED_TOLERANCE", "WAKE_UP"]

#: Microseconds: a pause that ends this much before a collective's end still waited for it (clocks differ a little).
BLOCKED_TOLERANCE = 50.0


def _few(ranks, most=8):
    ranks = sorted(ranks)
    return "[" + ", ".join(map(str, ranks[:most])) + (f", ... ({len(ranks)} ranks)" if len(ranks) > most else "") + "]"


def _known_groups(trace):
    """``{pg_name: (description, members or None, size or None)}`` from pg_config and the collectives' args."""
    out = {}
    for r in trace.ranks:
        for name, desc, members, size in r.pg_config:
            out.setdefault(name, (desc, tuple(members) if members else None, size))
    for r in trace.ranks:
        for name, (desc, size, members) in r.groups.items():
            if name not in out or out[name][1] is None and members is not None:
                out[name] = (desc, members, size)
    return out


def _default_group(known, world, present):
    """The name and members of the group a collective without a recorded group belongs to (the world)."""
    for name, (desc, members, size) in known.items():
        if desc == "default_pg" and members:
            return name, members
    members = tuple(range(world)) if world else tuple(sorted(present))
    for name, (_desc, m, _size) in known.items():
        if m == members:
            return name, members
    return "", members


def _members(name, known, default, world):
    """The ranks of group ``name``, or None when the trace does not say."""
    if name == "" or name == default[0]:
        return default[1]
    desc, members, size = known.get(name, ("", None, None))
    if members:
        return members
    if size is not None and world is not None and size == world:
        return tuple(range(world))
    return None


def sync_groups(trace):
    """The ranks to analyse and the process groups that synchronise them.

    Returns
    -------
    ranks : list of int
        The ranks of the complete group(s) analysed.
    groups : dict
        ``{name as recorded: name shown}`` of the groups whose collectives
        are the synchronisation points ("" is a collective without a
        recorded group, taken as the world's).
    notes : list of str

    Raises ``ValueError`` (naming the groups and the missing ranks) when no
    group is complete, or when complete groups span different ranks.

    Examples
    --------
    >>> from straggle_edu.traces.syncpoints import _demo_trace
    >>> sync_groups(_demo_trace([[1.0, 2.0]]))
    ([0, 1], {'': "'0' (default_pg)"}, [])
    """
    present = set(trace.rank_ids)
    world = trace.world_size
    known = _known_groups(trace)
    default = _default_group(known, world, present)
    used = {g for r in trace.ranks for g in r.coll_group}
    complete, partial, unknown, notes = {}, {}, [], []
    for g in sorted(used):
        members = _members(g, known, default, world)
        if members is None:
            unknown.append(g)
        elif len(members) > 1:
            (complete if set(members) <= present else partial)[g] = tuple(sorted(members))
    if unknown:
        raise column_error(display_path(trace.source), problem=f"the process groups {', '.join(map(repr, unknown))} "
                           f"are used but their ranks are not recorded (no pg_config, no Process Group Ranks): the "
                           f"collectives cannot be matched")
    spans = {m for m in complete.values()}
    if len(spans) > 1:
        told = "; ".join(f"{_shown(g, known)}: ranks {_few(m)}" for g, m in complete.items())
        raise column_error(display_path(trace.source), problem=f"trace must synchronise its ranks through one process "
                           f"group (or groups of the same ranks); got groups over different ranks that the replay "
                           f"cannot map onto one stage: {told}")
    if not spans:
        raise column_error(display_path(trace.source), problem=_nothing_complete(trace, partial, known, present, world))
    ranks = sorted(spans.pop())
    for g, m in partial.items():
        notes.append(Note(N_("group {group} lacks {missing} of its {size} ranks ({ranks}); its collectives are left "
                             "inside the compute segments"), group=_shown(g, known), missing=len(set(m) - present),
                          size=len(m), ranks=_few(set(m) - present)))
    if set(ranks) != present:
        notes.append(Note(N_("ranks {ranks} are in no group analysed and are left out"),
                          ranks=_few(present - set(ranks))))
    return ranks, {g: _shown(g or default[0], known) for g in complete}, notes


def _shown(name, known):
    desc = known.get(name, ("",))[0]
    return f"{name!r}" + (f" ({desc})" if desc else "") if name else "the world (no process group recorded)"


def _nothing_complete(trace, partial, known, present, world):
    """Why no group can be analysed: the ranks present against the world size, and what each group lacks."""
    have = f"{len(present)} of {world} ranks ({_few(present)})" if world else \
        f"{len(present)} rank(s) ({_few(present)}), world size not recorded"
    if world and set(partial) <= {"", _default_group(known, world, present)[0]}:
        return (f"trace must hold every rank of the job to compare the ranks, got {have}; give the traces of all "
                f"{world} ranks (or of every rank of one process group)")
    if partial:
        told = "; ".join(f"group {_shown(g, known)} has {len(m)} ranks, {len(set(m) - present)} missing: "
                         f"{_few(set(m) - present)}" for g, m in partial.items())
        return (f"trace must hold every rank of a process group to compare the ranks, got {have}: no group is "
                f"complete ({told}); give the traces of all the ranks of a group")
    if world is None and len(present) == 1:
        return (f"trace must hold the traces of every rank of a job to compare the ranks, got {have}: one rank alone "
                f"cannot show a straggler; give the traces of all its ranks")
    if world not in (None, 1) and len(present) < world:
        return (f"trace must hold every rank of the job to compare the ranks, got {have}; give the traces of all "
                f"{world} ranks")
    return (f"trace must record collectives between its ranks to compare them, got {have} and no collective across "
            f"ranks (a communication kernel the patterns do not know can be named with --comm-kernel REGEX)")


def _rank_lists(re_, canon):
    """One rank's synchronising collectives: ``{step: [(key, index), ...]}`` in arrival order.

    The key matches a collective across ranks: (group, Seq) when every
    collective of the rank has a ``Seq``, else (group, its number in the group within the step). ``canon``
    names each group analysed by one name for all its names (a kernel without a recorded group is the world's).
    """
    names = [canon.get(g, g) for g in re_.coll_group]
    use = [i for i, g in enumerate(re_.coll_group) if g in canon and re_.coll_step[i] >= 0]
    use.sort(key=lambda i: re_.arrival[i])
    by_seq = bool(use) and all(re_.coll_seq[i] >= 0 for i in use)
    out, count = {}, {}
    for i in use:
        s, g = int(re_.coll_step[i]), names[i]
        n = count[(s, g)] = count.get((s, g), -1) + 1
        out.setdefault(s, []).append(((g, int(re_.coll_seq[i]) if by_seq else n), i))
    return out


def match_collectives(trace, ranks, groups):
    """The collectives of each step, matched across ``ranks`` (raw clocks, microseconds).

    Returns a list, one entry per step that every rank recorded with the
    same collectives: ``{"step", "kinds", "groups", "arrival", "start",
    "end"}`` (arrays of shape collectives x ranks, in the order of the
    median arrival) and ``"step_start"`` per rank, and the notes on the
    steps left out.

    Examples
    --------
    >>> t = _demo_trace([[1.0, 2.0], [1.0, 1.5]])
    >>> steps, notes = match_collectives(t, [0, 1], sync_groups(t)[1])
    >>> [(s["step"], s["kinds"], s["arrival"].shape) for s in steps]
    [(0, ('allreduce',), (1, 2)), (1, ('allreduce',), (1, 2))]
    """
    by_rank = {r.rank: r for r in trace.ranks}
    canon = {g: min(k for k in groups if groups[k] == groups[g]) for g in groups}  # '' and '0': one group
    lists = [_rank_lists(by_rank[r], canon) for r in ranks]
    common = set.intersection(*(set(by_rank[r].steps.tolist()) for r in ranks))
    out, notes, skipped = [], [], set().union(*(set(by_rank[r].steps.tolist()) for r in ranks)) - common
    if skipped:
        notes.append(Note(N_("{count} step(s) not profiled on every rank are left out: {steps}"), count=len(skipped),
                          steps=", ".join(f"#{s}" for s in sorted(skipped)[:8]) + (" ..." if len(skipped) > 8 else "")))
    for s in sorted(common):
        rows = [lst.get(s, []) for lst in lists]
        keys = [tuple(k for k, _ in row) for row in rows]
        if any(k != keys[0] for k in keys):
            a = next(i for i, k in enumerate(keys) if k != keys[0])
            notes.append(Note(N_("step {step}: rank {a} and rank {b} recorded different collectives ({na} and {nb}); "
                                 "the step is left out"), step=s, a=ranks[0], b=ranks[a], na=len(keys[0]),
                              nb=len(keys[a])))
            continue
        out.append(_step_table(s, rows, [by_rank[r] for r in ranks]))
    return out, notes


def _step_table(step, rows, events):
    """One step's matched collectives as arrays (collectives x ranks), ordered by the median arrival."""
    idx = np.array([[i for _, i in row] for row in rows], np.int64).T.reshape(len(rows[0]), len(rows))
    get = lambda name: np.array([[getattr(events[d], name)[idx[c, d]] for d in range(len(events))]  # noqa: E731
                                 for c in range(idx.shape[0])], float).reshape(idx.shape)
    arrival = get("arrival")
    order = np.argsort(np.median(arrival, axis=1), kind="stable") if idx.size else np.zeros(0, np.int64)
    first = events[0]
    return {"step": step, "kinds": tuple(first.coll_kind[idx[c, 0]] for c in order),
            "groups": tuple(first.coll_group[idx[c, 0]] for c in order), "arrival": arrival[order],
            "start": get("start")[order], "end": get("end")[order],
            "step_start": np.array([e.step_start[np.flatnonzero(e.steps == step)[0]] for e in events]),
            "step_end": np.array([e.step_end[np.flatnonzero(e.steps == step)[0]] for e in events])}


def clock_offsets(trace, ranks, steps):
    """Each rank's clock offset (microseconds, subtracted from its times) and how it was found.

    Ranks recording one ``host_name`` share a clock (offset 0 on one host).
    Otherwise an offset is the median, over the collectives, of how far the
    rank's end lies from the median end; ranks of one host take their host's
    median.

    Examples
    --------
    >>> t = _demo_trace([[1.0, 2.0]])
    >>> clock_offsets(t, [0, 1], match_collectives(t, [0, 1], sync_groups(t)[1])[0])
    (array([0., 0.]), 'one host (demo): one clock')
    """
    hosts = [next(r.host for r in trace.ranks if r.rank == k) for k in ranks]
    if None not in hosts and len(set(hosts)) == 1:
        return np.zeros(len(ranks)), Note(N_("one host ({host}): one clock"), host=hosts[0])
    ends = np.concatenate([s["end"] for s in steps]) if steps else np.zeros((0, len(ranks)))
    if ends.shape[0] == 0:
        return np.zeros(len(ranks)), Note(N_("no collective to align clocks on"))
    off = np.median(ends - np.median(ends, axis=1, keepdims=True), axis=0)
    if None not in hosts:
        for h in set(hosts):
            on = np.array([x == h for x in hosts])
            off[on] = np.median(off[on])
        return off, Note(N_("{hosts} hosts, clocks aligned on the ends of {n} collectives (offsets up to {us:.0f} "
                            "µs)"), hosts=len(set(hosts)), n=ends.shape[0], us=float(np.abs(off).max()))
    return off, Note(N_("no host_name recorded: clocks aligned on the ends of {n} collectives (offsets up to {us:.0f} "
                        "µs)"), n=ends.shape[0], us=float(np.abs(off).max()))


#: Microseconds a rank may take to resume after the collective it waited for ended, on the host and on a GPU.
WAKE_UP = {"host": 1000.0, "gpu": 20.0}


def _collective_ends(st, off, host):
    """One step's collectives on aligned clocks: arrivals (K, D), last arrival L, its rank, end E, transfer T.

    A collective ends (E) when the first rank sees it end, but not before
    the last arrival. On the host, no later than the step's earliest end
    either: gloo's spans close late when the machine is busy (the runloop
    thread is not scheduled), while the ranks it woke already go on.
    """
    a, e = st["arrival"] - off, st["end"] - off
    K = a.shape[0]
    last = a.argmax(axis=1)
    L = a[np.arange(K), last]
    bound = (st["step_end"] - off).min() if host else np.inf
    E = np.maximum(L, np.minimum(e.min(axis=1), bound))
    T = np.maximum(0.0, E - np.maximum(L, np.r_[-np.inf, np.maximum.accumulate(E)[:-1]]))
    return {"a": a, "L": L, "E": E, "last": last, "T": T}


def rank_waits(busy_start, busy_end, arrival, end, wake_up):
    """A rank's waits: the pauses of its timeline that end when a collective it had reached ends.

    A pause (between two busy intervals) holds a wait for collective j when
    j's end E lies in it (or up to :data:`BLOCKED_TOLERANCE` before its
    end) and the rank had reached j before the pause ended. The wait runs
    from the later of the pause's start and the arrival to the end E plus
    ``wake_up``; the rest of the pause is the rank's own (a sleep, a
    stall). Returns the wait intervals (starts, ends) and, per collective,
    when the pause that waited for it began (NaN: the rank never waited for it).

    Examples
    --------
    >>> ws, we, since = rank_waits(np.array([0.0, 900.0]), np.array([100.0, 1000.0]),
    ...                            np.array([50.0]), np.array([800.0]), 20.0)
    >>> ws.tolist(), we.tolist(), since.tolist()   # paused 100..900: waited until 820, then 80 us its own
    ([100.0], [820.0], [100.0])
    """
    g0, g1 = busy_end[:-1], busy_start[1:]
    i = np.searchsorted(g0, end, side="left") - 1
    ok = i >= 0
    iok = np.maximum(i, 0)
    if len(g0):
        ok &= (end <= g1[iok] + BLOCKED_TOLERANCE) & (arrival < g1[iok])
    else:
        ok[:] = False
    since = np.where(ok, g0[iok] if len(g0) else np.nan, np.nan)
    if not ok.any():
        return np.zeros(0), np.zeros(0), since
    gi = iok[ok]
    ws = np.full(len(g0), np.inf)
    x = np.full(len(g0), -np.inf)
    np.minimum.at(ws, gi, np.maximum(g0[gi], arrival[ok]))
    np.maximum.at(x, gi, end[ok])
    used = np.flatnonzero(np.isfinite(ws))
    we = np.minimum(g1[used], x[used] + wake_up)
    keep = we > ws[used]
    return ws[used][keep], we[keep], since


def _waited(t, ws, we):
    """The wait time before each time t, over disjoint sorted wait intervals."""
    if len(ws) == 0:
        return np.zeros(np.shape(t))
    cum = np.r_[0.0, np.cumsum(we - ws)]
    k = np.searchsorted(ws, t, side="right") - 1
    part = np.clip(t - ws[np.maximum(k, 0)], 0.0, (we - ws)[np.maximum(k, 0)])
    return np.where(k >= 0, cum[np.maximum(k, 0)] + part, 0.0)


def step_windows(steps, offsets, kept_ids, ranks_events, wake_up=WAKE_UP["host"]):
    """Each step's window: segments, transfers, arrivals and waits (microseconds, aligned clocks).

    ``steps`` is :func:`match_collectives`'s list, ``offsets`` from
    :func:`clock_offsets`, ``kept_ids`` every step id kept (with or without
    collectives): a window follows the previous one only when no step
    between them is missing. ``ranks_events`` are the ranks'
    :class:`~straggle_edu.traces.profiler.RankEvents`, in the order of the
    columns (their timelines tell waits from work). Steps without
    collectives make no window; their time is in the next window's first segment.

    Examples
    --------
    >>> t = _demo_trace([[1.0, 2.0], [1.0, 1.5]])
    >>> steps, _ = match_collectives(t, [0, 1], sync_groups(t)[1])
    >>> w = step_windows(steps, np.zeros(2), {0, 1}, t.ranks)
    >>> [(x["step"], x["first"], (x["seg"] / 1e6).round(3).tolist()) for x in w]   # seconds
    [(0, True, [[1.0, 2.0]]), (1, False, [[1.0, 1.5]])]
    """
    host = wake_up >= WAKE_UP["host"]
    tables = [(st, _collective_ends(st, offsets, host)) for st in steps if len(st["kinds"])]
    D = len(offsets)
    waits, waited = [], []
    for d, ev in enumerate(ranks_events):
        a = np.concatenate([c["a"][:, d] for _, c in tables]) if tables else np.zeros(0)
        E = np.concatenate([c["E"] for _, c in tables]) if tables else np.zeros(0)
        ws, we, ok = rank_waits(ev.busy_start - offsets[d], ev.busy_end - offsets[d], a, E, wake_up)
        waits.append((ws, we))
        waited.append(ok)
    out, prev, pos = [], None, 0
    for st, c in tables:
        K = len(st["kinds"])
        since = np.stack([waited[d][pos:pos + K] for d in range(D)], axis=1)
        pos += K
        # blocked: the wait began before the rank's next arrival (at the step's last collective: at all)
        blocked = np.vstack([since[:-1] < c["a"][1:], np.isfinite(since[-1:])])
        follows = prev is not None and all(i in kept_ids for i in range(prev["step"] + 1, st["step"]))
        w = _window(st, c, blocked, waits, offsets, prev if follows else None)
        out.append(w)
        prev = w
    return out


def _window(st, c, blocked, waits, off, prev):
    """One step's window (see :func:`step_windows`); ``prev`` is the window it follows, or None."""
    a, E, L = c["a"], c["E"], c["L"]
    K, D = a.shape
    if prev is None:
        start = (st["step_start"] - off)[int(np.argmin(a[0]))]
    else:
        start = prev["end"]
    b = np.vstack([np.full(D, start), a[:-1]])  # each segment runs from here to its arrival
    seg = a - b
    for d, (ws, we) in enumerate(waits):
        seg[:, d] -= _waited(a[:, d], ws, we) - _waited(b[:, d], ws, we)
    return {"step": st["step"], "kinds": st["kinds"], "groups": st["groups"], "arrival": a, "L": L, "E": E,
            "span": st["end"] - st["start"],
            "T": c["T"], "last": c["last"], "wait": L[:, None] - a, "counted": counted_waits(a, L, start),
            "blocked": blocked, "seg": np.maximum(seg, 0.0),
            "negative": int((seg < -1e-6).sum()), "start": start, "end": E.max(), "recorded": E.max() - start,
            "first": prev is None}


def counted_waits(arrival, last, start=-np.inf):
    """Each rank's waits in one step, every instant counted once: arrays of shape collectives x ranks.

    Rank d waits for collective c from its arrival ``arrival[c, d]`` to the
    last arrival ``last[c]``. Collectives that overlap (DDP's gradient
    buckets) overlap in their waits too, so a rank's waits are added as the
    union of these intervals (from ``start`` on): each instant goes to the
    earliest-arriving collective whose wait covers it, the one the rank had
    been waiting for longest. A column sums to the measure of the union,
    never more than the time from ``start`` to the last arrival.

    Examples
    --------
    Rank 0 waits 0..4 for one collective and 1..6 for the next; rank 1 arrives last at both:

    >>> counted_waits(np.array([[0.0, 4.0], [1.0, 6.0]]), np.array([4.0, 6.0])).tolist()
    [[4.0, 0.0], [2.0, 0.0]]
    """
    a = np.asarray(arrival, float)
    L = np.broadcast_to(np.asarray(last, float)[:, None], a.shape)
    order = np.argsort(a, axis=0, kind="stable")
    a_sorted, L_sorted = np.take_along_axis(a, order, axis=0), np.take_along_axis(L, order, axis=0)
    covered = np.vstack([np.full((1, a.shape[1]), start, float),
                         np.maximum(start, np.maximum.accumulate(L_sorted, axis=0)[:-1])])
    once = np.zeros_like(a)
    np.put_along_axis(once, order, np.maximum(0.0, L_sorted - np.maximum(a_sorted, covered)), axis=0)
    return once


def _shape(w):
    return tuple(zip(w["groups"], w["kinds"]))


def build_models(windows, source="<memory>"):
    """One dependency model per distinct program of the windows: ``[(model, window indices), ...]``.

    Times in the models are seconds. A collective blocks the segment after
    it when most of its cells (rank x step) were blocked by it.

    Examples
    --------
    >>> t = _demo_trace([[1.0, 2.0], [1.0, 1.5]])
    >>> w = step_windows(match_collectives(t, [0, 1], sync_groups(t)[1])[0], np.zeros(2), {0, 1}, t.ranks)
    >>> (m, idx), = build_models(w)
    >>> m.node_label, m.work.shape, idx
    (['compute before allreduce #1', 'allreduce #1'], (2, 2, 2), [0, 1])
    """
    shapes = {}
    for i, w in enumerate(windows):
        shapes.setdefault(_shape(w), []).append(i)
    return [(_model(shape, [windows[i] for i in idx], source), idx) for shape, idx in shapes.items()]


def _model(shape, ws, source):
    """The :class:`~straggle_edu.traces.replay.DependencyModel` of windows that share one program."""
    from .optrace import OPTYPES
    from .replay import DependencyModel, _event_order

    K, D, S = len(shape), ws[0]["seg"].shape[1], len(ws)
    blocks = np.mean([w["blocked"] for w in ws], axis=(0, 2)) > 0.5
    preds = [[] if c == 0 else [c - 1] + ([K + c - 1] if blocks[c - 1] else []) for c in range(K)]
    preds += [[c] + ([K + c - 1] if c else []) for c in range(K)]
    number = {}
    labels = []
    for g, kind in shape:
        number[kind] = number.get(kind, 0) + 1
        labels.append(f"{kind} #{number[kind]}")
    codes = [(OPTYPES.index("forward-compute"),)] * K + [(OPTYPES.index("separate-grads-all-reduce"),)] * K
    work = np.empty((2 * K, S, D))
    work[:K] = np.stack([w["seg"] for w in ws], axis=1) * 1e-6
    work[K:] = np.stack([w["T"] for w in ws], axis=1)[:, :, None] * 1e-6
    stage = np.zeros(2 * K, np.int64)
    order = _event_order(2 * K, preds, [[]] * (2 * K), node_label=None, node_stage=stage, node_codes=codes,
                         shown=display_path(source))
    return DependencyModel(
        source=str(source), steps=np.array([w["step"] for w in ws], np.int64), dp_size=D, pp_size=1,
        node_stage=stage, node_codes=codes, node_label=[f"compute before {x}" for x in labels] + labels,
        node_noop=np.zeros(2 * K, bool), node_mb=np.zeros((2 * K, 1, 1), np.int64), preds=preds,
        peers=[[] for _ in range(2 * K)], dpsync=np.r_[np.zeros(K, bool), np.full(K, D > 1)],
        side=np.r_[np.zeros(K, bool), np.ones(K, bool)], order=order, start=None, duration=None, work=work,
        recorded_step=np.array([w["recorded"] for w in ws]) * 1e-6, cell_of_row=np.zeros(0, np.int64), notes=[])


def _demo_trace(compute, transfer=0.1):
    """A host-side trace in memory: ``compute[step][rank]`` seconds, then one blocking all-reduce per step.

    Every rank starts a step when the previous all-reduce ends, arrives after
    its compute, and waits for the last one; the transfer takes ``transfer`` s.
    """
    from .profiler import RankEvents

    c = np.asarray(compute, float) * 1e6
    S, D = c.shape
    start = np.r_[0.0, np.cumsum(c.max(axis=1) + transfer * 1e6)[:-1]]
    end = start + c.max(axis=1) + transfer * 1e6
    ranks = []
    for r in range(D):
        ranks.append(RankEvents(
            source=f"rank{r}.json", rank=r, name_rank=r, world_size=D, backend="gloo",
            pg_config=(("0", "default_pg", tuple(range(D)), D),), host="demo", recorded_at=1.7e9, timeline="host",
            steps=np.arange(S), step_start=start, step_end=end, coll_step=np.arange(S), coll_kind=("allreduce",) * S,
            coll_group=("",) * S, coll_seq=np.full(S, -1), arrival=start + c[:, r], start=start + c[:, r], end=end,
            busy_start=start, busy_end=start + c[:, r]))
    return ProfilerTrace(source="<memory>", ranks=tuple(ranks), world_size=D)


def analyze_profiler(trace):
    """What-if analysis of a :class:`~straggle_edu.traces.profiler.ProfilerTrace` through the one engine.

    Returns
    -------
    Analysis
        ``format="torch-profiler"``: S, waste, per-step S, ``by_rank`` and
        ``by_optype`` (``compute`` and each collective kind; a kept
        transfer gives 1), M_W, the replay error. ``details`` holds
        ``ranks_present``, ``world_size``, ``groups``, ``clock``,
        ``noise_floor``, ``collectives`` (columns, one entry per collective in
        step order: ``step``, ``kind``, ``group``, ``last_rank``,
        ``transfer_s``, ``blocked``; ``arrival_s``, ``wait_s`` (from the
        arrival to the last arrival) and ``counted_s`` (the part of that wait
        no earlier-arriving collective of the step covers, see
        :func:`counted_waits`) of shape collectives x ranks, in the order of
        ``ranks``; seconds), ``caused_wait`` (seconds the others waited for
        each rank, each instant of a rank's waiting booked once) and the models.
        ``wait_share`` and ``comm_share``: the shares of all rank-time spent
        waiting (counted once) and in transfers.

    Examples
    --------
    Rank 1 computes 2 s where rank 0 computes 1 s, in each of 4 steps:

    >>> a = analyze_profiler(_demo_trace([[1.0, 2.0]] * 4))
    >>> round(a.slowdown, 4), a.culprit(), round(a.replay_error, 9)
    (1.3125, 1, 0.0)
    >>> {r: round(s, 1) for r, s in a.details["caused_wait"].items()}   # 4 steps x 1 s
    {0: 0.0, 1: 4.0}
    """
    if len(trace.ranks) == 1 and trace.world_size == 1:
        return _one_rank(trace)
    ranks, groups, notes = sync_groups(trace)
    steps, more = match_collectives(trace, ranks, groups)
    offsets, clock = clock_offsets(trace, ranks, steps)
    by_rank = {r.rank: r for r in trace.ranks}
    wake = WAKE_UP["gpu"] if all(by_rank[r].timeline == "gpu" for r in ranks) else WAKE_UP["host"]
    windows = step_windows(steps, offsets, {s["step"] for s in steps}, [by_rank[r] for r in ranks], wake)
    if not windows:
        raise column_error(display_path(trace.source), problem=f"trace must record at least one step with a collective "
                           f"of {', '.join(groups.values())} on every rank, got none "
                           f"({'; '.join(more) or 'no collective inside a ProfilerStep'})")
    from .whatif import analyze_sync

    notes = list(trace.notes) + [n for r in trace.ranks for n in r.notes] + notes + more + _window_notes(windows, steps)
    details = {"ranks_present": [r.rank for r in trace.ranks], "world_size": trace.world_size,
               "groups": list(groups.values()), "clock": clock, "clock_offsets": dict(zip(ranks, offsets * 1e-6)),
               "collectives": _collective_table(windows, ranks), "caused_wait": _caused_wait(windows, ranks),
               "step_spans": _step_spans([by_rank[r] for r in ranks], [w["step"] for w in windows])}
    a = analyze_sync(build_models(windows, trace.source), len(windows), steps=[w["step"] for w in windows],
                     workers=ranks, format="torch-profiler", source=trace.source, notes=notes, details=details)
    from dataclasses import replace

    from .noise import noise_floor

    work = np.array([w["seg"].sum(axis=0) for w in windows]) * 1e-6
    total = sum(w["recorded"] for w in windows) * len(ranks)
    shares = {"wait_share": sum(float(w["counted"].sum()) for w in windows) / total,
              "comm_share": sum(float(w["T"].sum()) for w in windows) * len(ranks) / total}
    return replace(a, details={**a.details, **shares, "noise_floor": noise_floor(work, a.ideal_step_time),
                               "work": work})


def _window_notes(windows, steps):
    """Notes on the windows: first steps without a previous collective, merged steps, clipped segments."""
    out = []
    firsts = [w["step"] for w in windows if w["first"]]
    out.append(Note(N_("step {steps}: no collective before it in the trace; each rank's first arrival is counted "
                       "from the step start of the rank that arrived first"),
                    steps=", ".join(map(str, firsts[:6])) + (" ..." if len(firsts) > 6 else "")))
    empty = [s["step"] for s in steps if not s["kinds"]]
    if empty:
        out.append(Note(N_("{count} step(s) without a collective are counted in the next step's window"),
                        count=len(empty)))
    clipped = sum(w["negative"] for w in windows)
    if clipped:
        out.append(Note(N_("{count} segment(s) came out negative (a rank went on before the collective it was taken "
                           "to wait for ended) and count as 0 s"), count=clipped))
    return out


def _collective_table(windows, ranks):
    """Per collective (columns, in step order): step, kind, group, the last rank, the transfer and whether the ranks
    paused for it; per collective and rank, the arrival (from the first) and the wait, in seconds."""
    rows = [(w, c) for w in windows for c in range(len(w["kinds"]))]
    arrival = np.array([w["arrival"][c] - w["arrival"][c].min() for w, c in rows]).reshape(len(rows), len(ranks))
    return {"ranks": list(ranks), "step": np.array([int(w["step"]) for w, _ in rows], np.int64),
            "kind": [w["kinds"][c] for w, c in rows], "group": [w["groups"][c] for w, c in rows],
            "last_rank": np.array([ranks[int(w["last"][c])] for w, c in rows], np.int64),
            "transfer_s": np.array([w["T"][c] for w, c in rows]) * 1e-6,
            "blocked": np.array([bool(w["blocked"][c].mean() > 0.5) for w, c in rows], bool),
            "arrival_s": arrival * 1e-6,
            "recorded_s": np.array([w["span"][c] for w, c in rows]).reshape(len(rows), len(ranks)) * 1e-6,
            "wait_s": np.array([w["wait"][c] for w, c in rows]).reshape(len(rows), len(ranks)) * 1e-6,
            "counted_s": np.array([w["counted"][c] for w, c in rows]).reshape(len(rows), len(ranks)) * 1e-6}


def rank_table(analysis):
    """Per rank, what a profiler trace's analysis found: one dict per rank, in rank order (seconds).

    ``step_s``: the rank's mean step as it recorded it (its ``ProfilerStep#N`` spans);
    ``work_s``: the rank's own work per step (its segments: compute, and lateness such as a sleep);
    ``collective_s``: its time in collectives per step, as recorded (its kernels or gloo spans, waits
    included); ``wait_s``: per step, how long it waited for later ranks (the union of its waits: where
    collectives overlap, as DDP's gradient buckets do, each instant counts once, so it never exceeds the
    step); ``caused_wait_s``: the others' waits booked to it (it arrived last; each instant of a rank's
    waiting is booked once); ``last_share``: the share of the collectives it
    arrived last at; ``s_x``: S when only it keeps its recorded work (``by_rank``).

    A rank that computes longest arrives last and waits least, so its recorded collectives are the
    shortest, and after the barrier every rank's step is as long as the others': per-rank durations
    hide it, its arrivals show it.

    Examples
    --------
    >>> a = analyze_profiler(_demo_trace([[1.0, 2.0]] * 4))   # rank 1 computes 2 s, rank 0 1 s
    >>> [(r["rank"], round(r["step_s"], 2), round(r["work_s"], 2), round(r["collective_s"], 2), round(r["wait_s"], 2),
    ...   r["last_share"]) for r in rank_table(a)]
    [(0, 2.1, 1.0, 1.1, 1.0, 0.0), (1, 2.1, 2.0, 0.1, 0.0, 1.0)]
    """
    d = analysis.details or {}
    c = d.get("collectives")
    if analysis.format != "torch-profiler" or not c:
        raise ValueError(f"analysis must be of a profiler trace with collectives, got a {analysis.format} analysis")
    steps = len(analysis.steps)
    work = d["work"].mean(axis=0)
    spans = d.get("step_spans", {})
    return [{"rank": r, "step_s": spans.get(r, float("nan")), "work_s": float(work[i]),
             "collective_s": float(c["recorded_s"][:, i].sum() / steps),
             "wait_s": float(c["counted_s"][:, i].sum() / steps), "caused_wait_s": d["caused_wait"][r],
             "last_share": float(np.mean(c["last_rank"] == r)), "s_x": analysis.by_rank[r]}
            for i, r in enumerate(c["ranks"])]


def _step_spans(ranks, steps):
    """{rank: seconds}: each rank's mean ``ProfilerStep#N`` span over the steps analysed, as it recorded them."""
    out = {}
    for r in ranks:
        keep = np.isin(r.steps, steps)
        out[r.rank] = float(np.mean(r.step_end[keep] - r.step_start[keep]) * 1e-6) if keep.any() else float("nan")
    return out


def _caused_wait(windows, ranks):
    """Seconds the others waited for each rank: per collective, the waits it counts (:func:`counted_waits`, each
    instant of a rank's waiting once) are booked to the last to arrive."""
    out = dict.fromkeys(ranks, 0.0)
    for w in windows:
        for c in range(len(w["kinds"])):
            out[ranks[int(w["last"][c])]] += float(w["counted"][c].sum() * 1e-6)
    return out


def _one_rank(trace):
    """A job of one rank (world size 1): no other rank to wait for, S = 1 by definition."""
    from .result import Analysis

    r = trace.ranks[0]
    dur = (r.step_end - r.step_start) * 1e-6
    return Analysis(
        format="torch-profiler", source=trace.source, slowdown=1.0, waste=0.0,
        per_step={int(s): 1.0 for s in r.steps}, replay_error=0.0, steps=r.steps, step_time=dur,
        ideal_step_time=dur, recorded_step_time=dur, workers=(r.rank,), worker_step_slowdown=np.ones((1, len(dur))),
        by_rank={r.rank: 1.0}, by_optype={"compute": 1.0}, m_w=None,
        notes=tuple(trace.notes) + (Note(N_("a job of one rank (world size 1) waits for no other rank: S = 1")),),
        details={"ranks_present": [r.rank], "world_size": 1, "groups": [], "noise_floor": None, "collectives": None,
                 "caused_wait": {r.rank: 0.0}, "clock": "one rank", "clock_offsets": {r.rank: 0.0}},
    )
