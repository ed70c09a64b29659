"""The pipeline schedule: which op each stage runs, in which order.

A pipeline-parallel (PP) job splits the model into P stages. Each step pushes
M microbatches through them: a forward (``"F"``) from stage 0 to stage P - 1,
then a backward (``"B"``) from stage P - 1 back to stage 0.

Vocabulary
----------
P, ``stages``
    the number of pipeline stages (stage s = 0 .. P - 1).
M, ``microbatches``
    the number of microbatches per step (microbatch m = 0 .. M - 1).
op
    a pair ``("F" | "B", m)``: one stage's forward or backward of microbatch m.

1F1B (one forward, one backward; Narayanan et al., PipeDream-Flush, 2021,
the schedule Megatron-LM uses) keeps at most P - s microbatches in flight on
stage s:

- warm-up: ``min(P - s - 1, M)`` forwards;
- steady state: alternate one forward and one backward;
- cool-down: the remaining backwards.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._validate import check_memory, described, nonnegative, require, whole

__all__ = [
    "OP_KINDS",
    "PipelineRun",
    "pipeline_schedule",
    "pipeline_step_times",
    "schedule_1f1b",
    "simulate_pipeline",
    "slowed",
    "uniform_pipeline_time",
]


def schedule_1f1b(stages, microbatches):
    """The 1F1B execution order of every pipeline stage.

    Stage s first runs ``w = min(P - s - 1, M)`` warm-up forwards, then
    alternates forward ``w + i`` and backward ``i`` for i = 0 .. M - w - 1,
    then runs the remaining ``w`` backwards (the cool-down).

    Parameters
    ----------
    stages : int
        Number of pipeline stages P, >= 1.
    microbatches : int
        Number of microbatches M per step, >= 1.

    Returns
    -------
    list of list of tuple
        ``schedule[s]`` is stage s's list of ``("F" | "B", m)`` in execution
        order; each has 2M entries.

    Examples
    --------
    >>> sched = schedule_1f1b(2, 3)
    >>> sched[0]   # one warm-up forward, then 1F1B, then one cool-down backward
    [('F', 0), ('F', 1), ('B', 0), ('F', 2), ('B', 1), ('B', 2)]
    >>> sched[1]   # the last stage has no warm-up
    [('F', 0), ('B', 0), ('F', 1), ('B', 1), ('F', 2), ('B', 2)]
    >>> schedule_1f1b(4, 2)[0]   # more stages than microbatches: warm-up is capped at M
    [('F', 0), ('F', 1), ('B', 0), ('B', 1)]
    """
    P = whole("stages", stages)
    M = whole("microbatches", microbatches)
    schedule = []
    for s in range(P):
        warmup = min(P - s - 1, M)
        ops = [("F", m) for m in range(warmup)]
        for i in range(M - warmup):
            ops.append(("F", warmup + i))
            ops.append(("B", i))
        ops.extend(("B", m) for m in range(M - warmup, M))
        schedule.append(ops)
    return schedule


SCHEDULES = ("1f1b", "gpipe")

# Kinds of op in a PipelineRun's table, in the order charts list them.
OP_KINDS = ("F", "B", "send-F", "send-B", "allreduce", "optimizer")


def pipeline_schedule(stages, microbatches, schedule="1f1b", chunks=1):
    """The execution order of every pipeline stage, with model chunks.

    Parameters
    ----------
    stages : int
        Number of pipeline stages (devices) P, >= 1.
    microbatches : int
        Number of microbatches M per step, >= 1.
    schedule : {"1f1b", "gpipe"}
        ``"1f1b"``: see :func:`schedule_1f1b`; with ``chunks > 1`` it is
        Megatron-LM's interleaved 1F1B. ``"gpipe"``: every forward, then
        every backward (Huang et al., GPipe, 2019).
    chunks : int
        Model chunks (virtual stages) per device, v >= 1. Virtual stage
        ``j = c * P + s`` is chunk c on device s, so a microbatch visits the
        devices v times. Interleaving needs M to be a multiple of P, as in
        Megatron-LM.

    Returns
    -------
    list of list of tuple
        ``order[s]`` is device s's list of ``(kind, m, c)``: kind ``"F"`` or
        ``"B"``, microbatch m, chunk c.

    Examples
    --------
    >>> pipeline_schedule(2, 2, "gpipe")[0]
    [('F', 0, 0), ('F', 1, 0), ('B', 0, 0), ('B', 1, 0)]

    Interleaved: the last device runs chunk 0 (virtual stage 1) and chunk 1
    (virtual stage 3) of a 4-virtual-stage model.

    >>> pipeline_schedule(2, 4, chunks=2)[1][:8]
    [('F', 0, 0), ('F', 1, 0), ('F', 0, 1), ('B', 0, 1), ('F', 1, 1), ('B', 1, 1), ('F', 2, 0), ('B', 0, 0)]
    """
    P = whole("stages", stages)
    M = whole("microbatches", microbatches)
    v = whole("chunks", chunks)
    require(schedule in SCHEDULES, "schedule", schedule, f"one of {', '.join(map(repr, SCHEDULES))}")
    if schedule == "gpipe":
        require(v == 1, "chunks", v, "1 with schedule='gpipe' (interleaving needs '1f1b')")
        return [[("F", m, 0) for m in range(M)] + [("B", m, 0) for m in range(M)] for _ in range(P)]
    if v == 1:
        return [[(k, m, 0) for k, m in ops] for ops in schedule_1f1b(P, M)]
    require(M % P == 0, "microbatches", M, f"a multiple of stages={P} when chunks > 1 (interleaved 1F1B)")
    total = M * v

    def op(kind, k):
        chunk = (k % (P * v)) // P
        if kind == "B":
            chunk = v - 1 - chunk
        return (kind, (k // (P * v)) * P + k % P, chunk)

    order = []
    for s in range(P):
        warmup = total if M == P else min((P - s - 1) * 2 + (v - 1) * P, total)
        ops = [op("F", k) for k in range(warmup)]
        for k in range(total - warmup):
            ops += [op("F", k + warmup), op("B", k)]
        ops += [op("B", k) for k in range(total - warmup, total)]
        order.append(ops)
    return order


@functools.lru_cache(maxsize=64)
def _graph(P, M, v, schedule):
    """The dependency graph of one step's compute ops, as flat arrays.

    Node i is one (device, kind, microbatch, chunk). Each node has at most
    two predecessors (the previous op on its device, and the same
    microbatch's op on the neighbouring virtual stage, reached through the
    link ``link[i]``) and at most two successors. ``levels`` groups nodes
    whose predecessors all lie in earlier groups, so each group can be timed
    at once with numpy.
    """
    order = pipeline_schedule(P, M, schedule, v)
    V = P * v
    keys = [(s, kind, m, c) for s, ops in enumerate(order) for kind, m, c in ops]
    N = len(keys)
    index = {(kind, m, c * P + s): i for i, (s, kind, m, c) in enumerate(keys)}
    stage = np.array([k[0] for k in keys], dtype=np.int64)
    kind = np.array([0 if k[1] == "F" else 1 for k in keys], dtype=np.int8)
    mb = np.array([k[2] for k in keys], dtype=np.int64)
    chunk = np.array([k[3] for k in keys], dtype=np.int64)
    prog = np.full(N, N, dtype=np.int64)  # N is the "no predecessor" sentinel
    cross = np.full(N, N, dtype=np.int64)
    link = np.full(N, -1, dtype=np.int64)
    pos = 0
    for ops in order:
        prog[pos + 1 : pos + len(ops)] = np.arange(pos, pos + len(ops) - 1)
        pos += len(ops)
    for i, (s, k, m, c) in enumerate(keys):
        j = c * P + s
        if k == "F" and j > 0:
            cross[i], link[i] = index[("F", m, j - 1)], (j - 1) % P
        elif k == "B" and j < V - 1:
            cross[i], link[i] = index[("B", m, j + 1)], j % P
    nxt = np.full(N, N, dtype=np.int64)
    nxt[prog[prog < N]] = np.nonzero(prog < N)[0]
    cross_next = np.full(N, N, dtype=np.int64)
    cross_next[cross[cross < N]] = np.nonzero(cross < N)[0]
    # Levels by Kahn's algorithm; a cycle would mean an invalid order.
    level = np.full(N, -1, dtype=np.int64)
    indeg = (prog < N).astype(int) + (cross < N)
    frontier = list(np.nonzero(indeg == 0)[0])
    depth = 0
    while frontier:
        level[frontier] = depth
        new = []
        for u in frontier:
            for w in (nxt[u], cross_next[u]):
                if w < N:
                    indeg[w] -= 1
                    if indeg[w] == 0:
                        new.append(w)
        frontier, depth = new, depth + 1
    if (level < 0).any():  # pragma: no cover - every schedule above is valid
        raise RuntimeError(f"pipeline order for P={P}, M={M}, v={v} has a dependency cycle")
    levels = [np.nonzero(level == d)[0] for d in range(depth)]
    last = np.array([pos_ - 1 for pos_ in np.cumsum([len(o) for o in order])], dtype=np.int64)
    g = dict(stage=stage, kind=kind, mb=mb, chunk=chunk, prog=prog, cross=cross, link=link,
             nxt=nxt, cross_next=cross_next, levels=levels, last=last, N=N)
    for a in g.values():
        if isinstance(a, np.ndarray):
            a.flags.writeable = False
    return g


def _durations(name, value, shape, axes):
    """Validate op durations (seconds >= 0) and broadcast them to ``shape``."""
    arr = nonnegative(name, value)
    try:
        return np.broadcast_to(np.asarray(arr, dtype=float), shape)
    except ValueError:
        pass
    require(False, name, described(f"an array of shape {np.shape(arr)}"), f"a number or an array broadcastable to {axes} = {shape}")


_ROW = np.dtype(
    [
        ("kind", "U9"),
        ("dp", np.int32),
        ("stage", np.int32),
        ("peer", np.int32),
        ("chunk", np.int32),
        ("microbatch", np.int32),
        ("start", float),
        ("end", float),
        ("slack", float),
        ("critical", bool),
    ]
)


@dataclass(frozen=True, eq=False)
class PipelineRun:
    """The timeline of one training step on a DP x PP grid.

    Attributes
    ----------
    dp, stages, microbatches, chunks : int
        The grid: D data-parallel replicas, P stages, M microbatches, v chunks.
    schedule : str
        ``"1f1b"`` (interleaved when ``chunks > 1``) or ``"gpipe"``.
    ops : numpy structured array
        One row per op, read-only, with fields ``kind`` (see ``OP_KINDS``),
        ``dp``, ``stage`` (the device; for a send, the sender), ``peer`` (a
        send's receiver, else -1), ``chunk``, ``microbatch`` (-1 for the
        all-reduce and the optimizer), ``start`` and ``end`` (seconds from
        the start of the step), ``slack`` (how much later the op could end
        without delaying the step, seconds) and ``critical`` (on
        ``critical_path``). The all-reduce of stage s has one row per DP
        rank, all with the same start and end.
    step_time : float
        Seconds from the first op's start to the last optimizer's end.
    critical_path : tuple of int
        Row numbers of ``ops``, in time order: a chain of back-to-back ops,
        each starting the moment its predecessor ends, from time 0 to
        ``step_time``. Their durations sum to the step time. When several
        chains tie, this is one of them; every op with zero slack lies on
        some critical chain.

    Examples
    --------
    >>> run = simulate_pipeline(4, 8, forward=1.0, backward=2.0)
    >>> run.step_time, len(run.ops), round(run.utilization, 3)   # (8 + 3) x 3 s; 24 of 33 s busy
    (33.0, 120, 0.727)
    """

    dp: int
    stages: int
    microbatches: int
    chunks: int
    schedule: str
    ops: np.ndarray
    step_time: float
    critical_path: tuple

    def critical_ops(self):
        """The rows of ``ops`` on the critical path, in time order."""
        return self.ops[list(self.critical_path)]

    def select(self, kind=None, *, dp=None, stage=None, microbatch=None):
        """A boolean mask over ``ops``: the rows matching every given field.

        ``kind`` may be one kind or a list of kinds; None matches anything.

        Examples
        --------
        >>> run = simulate_pipeline(2, 3, 1.0, 2.0, dp=2)
        >>> int(run.select(["F", "B"], dp=1, stage=0).sum())
        6
        """
        o = self.ops
        mask = np.ones(len(o), bool)
        if kind is not None:
            mask &= np.isin(o["kind"], np.atleast_1d(kind))
        for field, value in (("dp", dp), ("stage", stage), ("microbatch", microbatch)):
            if value is not None:
                mask &= o[field] == value
        return mask

    def op(self, kind, dp=0, stage=0, microbatch=-1, chunk=0):
        """The row of one op: ``run.op("B", dp=1, stage=2, microbatch=3)``.

        ``kind`` is one of ``OP_KINDS``; the all-reduce and the optimizer
        have no microbatch (leave it at -1); a send is found by its sender's
        stage.

        Examples
        --------
        >>> run = simulate_pipeline(2, 2, 1.0, 2.0, allreduce=1.0)
        >>> row = run.op("B", stage=0, microbatch=1)
        >>> float(row["start"]), float(row["end"]), float(row["slack"])
        (7.0, 9.0, 0.0)
        >>> float(run.op("allreduce", stage=1)["start"])
        7.0
        """
        require(kind in OP_KINDS, "kind", kind, f"one of {', '.join(map(repr, OP_KINDS))}")
        o = self.ops
        hit = np.flatnonzero((o["kind"] == kind) & (o["dp"] == dp) & (o["stage"] == stage)
                             & (o["microbatch"] == microbatch) & (o["chunk"] == chunk))
        if hit.size != 1:
            raise ValueError(
                f"no {kind!r} op at dp={dp}, stage={stage}, microbatch={microbatch}, chunk={chunk} in this "
                f"{self.dp} x {self.stages} x {self.microbatches} step"
            )
        return o[hit[0]]

    def op_times(self, kind):
        """Start and end of every forward (``"F"``) or backward (``"B"``).

        Returns
        -------
        (start, end) : tuple of numpy.ndarray
            Each of shape (dp, stages, microbatches), with a trailing chunks
            axis when ``chunks > 1``; seconds.
        """
        require(kind in ("F", "B"), "kind", kind, "'F' or 'B'")
        rows = self.ops[self.ops["kind"] == kind]
        shape = (self.dp, self.stages, self.microbatches, self.chunks)
        start, end = np.empty(shape), np.empty(shape)
        at = (rows["dp"], rows["stage"], rows["microbatch"], rows["chunk"])
        start[at], end[at] = rows["start"], rows["end"]
        if self.chunks == 1:
            return start[..., 0], end[..., 0]
        return start, end

    @property
    def utilization(self):
        """Fraction of the D x P devices' step time spent computing (0..1)."""
        compute = self.ops[(self.ops["kind"] == "F") | (self.ops["kind"] == "B")]
        busy = float(np.sum(compute["end"] - compute["start"]))
        return busy / (self.dp * self.stages * self.step_time) if self.step_time > 0 else 1.0


def uniform_pipeline_time(stages, microbatches, forward, backward, chunks=1):
    """Step time of a pipeline with equal op times and free communication.

    ``(M + (P - 1) / v) * (f + b)``: M microbatches' worth of work, plus the
    pipeline bubble of ``(P - 1) / v`` microbatch times (Narayanan et al.,
    SC 2021). With ``v = 1`` this is ``(M + P - 1) * (f + b)``, for 1F1B and
    GPipe alike.

    Parameters
    ----------
    stages, microbatches, chunks : int
        P, M and v.
    forward, backward : float
        f and b: one stage's forward and backward time per microbatch, in
        seconds (each of its v chunks takes 1/v of it).

    Returns
    -------
    float
        Seconds per step.

    Examples
    --------
    >>> uniform_pipeline_time(4, 8, 1.0, 2.0)   # (8 + 3) * 3
    33.0
    >>> uniform_pipeline_time(4, 8, 1.0, 2.0, chunks=2)   # (8 + 1.5) * 3
    28.5
    """
    P = whole("stages", stages)
    M = whole("microbatches", microbatches)
    v = whole("chunks", chunks)
    f = nonnegative("forward", forward)
    b = nonnegative("backward", backward)
    return float((M + (P - 1) / v) * (f + b))


def slowed(value, factor, shape, *, dp=None, stage=None, microbatch=None):
    """Durations of one kind of op with a slice of them slowed down.

    The "what if this one were slow" input of :func:`simulate_pipeline`:
    pick one worker (``dp`` and ``stage``), one whole stage (``stage``),
    one DP replica (``dp``) or one microbatch's op (all three). None means
    every index on that axis.

    Parameters
    ----------
    value : float or array
        The normal durations, in seconds, broadcastable to ``shape``.
    factor : float
        Multiplier for the chosen ops, >= 0 (2.0 = twice as slow).
    shape : tuple of int
        ``(dp, stages, microbatches)``.
    dp, stage, microbatch : int or None
        Which ops to slow.

    Returns
    -------
    numpy.ndarray
        Durations of shape ``shape``, in seconds.

    Examples
    --------
    >>> slowed(1.0, 3.0, (1, 2, 3), stage=1, microbatch=0).tolist()
    [[[1.0, 1.0, 1.0], [3.0, 1.0, 1.0]]]
    """
    factor = nonnegative("factor", factor)
    shape = tuple(whole("shape", np.asarray(shape, dtype=float)).tolist())
    require(len(shape) == 3, "shape", shape, "(dp, stages, microbatches)")
    out = np.array(_durations("value", value, shape, "(dp, stages, microbatches)"), dtype=float)
    pick = []
    for name, i, size in (("dp", dp, shape[0]), ("stage", stage, shape[1]), ("microbatch", microbatch, shape[2])):
        pick.append(slice(None) if i is None else whole(name, i, low=0, high=size - 1))
    out[tuple(pick)] *= factor
    return out


def _timeline(g, fwd, bwd, link_t, v):
    """Earliest start and end of every compute node, for a batch of B pipelines.

    ``fwd``, ``bwd`` and ``link_t`` have shape (B, P, M). Returns ``comp``
    and ``delay`` (durations and incoming-link delays, (N, B) and (N+1, B)),
    ``start`` (N, B), ``end`` (N+1, B; row N is the "no predecessor" row at
    0) and ``via_cross`` (N, B; True where the cross-stage dependency, not
    program order, set the start).
    """
    N, st, mb, lk = g["N"], g["stage"], g["mb"], g["link"]
    B = fwd.shape[0]
    comp = np.where((g["kind"] == 0)[:, None], fwd[:, st, mb].T, bwd[:, st, mb].T)
    if v > 1:
        comp = comp / v
    delay = np.zeros((N + 1, B))
    recv = np.nonzero(lk >= 0)[0]
    delay[recv] = link_t[:, lk[recv], mb[recv]].T
    end = np.zeros((N + 1, B))
    start = np.zeros((N, B))
    via_cross = np.zeros((N, B), dtype=bool)
    prog, cross = g["prog"], g["cross"]
    for idx in g["levels"]:
        a = end[prog[idx]]
        b = end[cross[idx]] + delay[idx]
        start[idx] = np.maximum(a, b)
        via_cross[idx] = b > a
        end[idx] = start[idx] + comp[idx]
    return comp, delay, start, end, via_cross


def _sizes(stages, microbatches, dp, chunks, schedule):
    """The grid's checked sizes (P, M, D, v); then checks that ``schedule`` is one of :data:`SCHEDULES`."""
    sizes = whole("stages", stages), whole("microbatches", microbatches), whole("dp", dp), whole("chunks", chunks)
    require(schedule in SCHEDULES, "schedule", schedule, f"one of {', '.join(map(repr, SCHEDULES))}")
    return sizes


def pipeline_step_times(stages, microbatches, forward, backward, *, dp=1, p2p=0.0, allreduce=0.0, optimizer=0.0,
                        schedule="1f1b", chunks=1):
    """Step times of many pipeline steps at once (no op table, just the totals).

    The same model as :func:`simulate_pipeline`, vectorized over any leading
    axes: pass durations of shape (..., dp, stages, microbatches) (and
    (..., dp, stages) for ``allreduce`` and ``optimizer``) to time a batch of
    steps, Monte Carlo samples or what-if variants in one call.

    Returns
    -------
    float or numpy.ndarray
        Step time in seconds, of the leading shape (a float when there are
        no leading axes).

    Examples
    --------
    Three steps whose forward on stage 1 takes 1, 2 and 3 s (stage 0: 1 s).
    Once stage 1 is the slowest, it sets the pace: the step is the stage-0
    forward that fills the pipe, 4 microbatches of (f1 + b) on stage 1, and
    the stage-0 backward that drains it, 1 + 4 (f1 + 2) + 2.

    >>> f = np.ones((3, 1, 2, 4))
    >>> f[:, 0, 1, :] = [[1.0], [2.0], [3.0]]
    >>> pipeline_step_times(2, 4, f, 2.0).tolist()
    [15.0, 19.0, 23.0]
    """
    P, M, D, v = _sizes(stages, microbatches, dp, chunks, schedule)
    arrays = {k: nonnegative(k, x) for k, x in
              (("forward", forward), ("backward", backward), ("p2p", p2p))}
    per_rank = {k: nonnegative(k, x) for k, x in (("allreduce", allreduce), ("optimizer", optimizer))}
    lead = []
    for k, x in arrays.items():
        lead.append(np.shape(x)[:-3] if np.ndim(x) > 3 else ())
    for k, x in per_rank.items():
        lead.append(np.shape(x)[:-2] if np.ndim(x) > 2 else ())
    try:
        lead = np.broadcast_shapes(*lead)
    except ValueError:
        lead = None
    shapes = described(f"shapes {[np.shape(x) for x in (*arrays.values(), *per_rank.values())]}")
    require(lead is not None, "forward, backward, p2p, allreduce and optimizer", shapes, "arrays that share their leading axes")
    nb = int(np.prod(lead, dtype=np.int64))
    check_memory(nb * D * (P * M * v * 2 + 1) * 8 * 8, f"timing {nb} steps of dp={D} x stages={P} x microbatches={M}")
    grid, axes = (*lead, D, P, M), "(..., dp, stages, microbatches)"
    fwd, bwd, link_t = (_durations(k, x, grid, axes).reshape(nb * D, P, M) for k, x in arrays.items())
    ar, opt = (_durations(k, x, (*lead, D, P), "(..., dp, stages)").reshape(nb, D, P) for k, x in per_rank.items())
    g = _graph(P, M, v, schedule)
    _, _, _, end, _ = _timeline(g, fwd, bwd, link_t, v)
    arrival = end[g["last"]].reshape(P, nb, D)  # last backward of each worker
    ar_end = arrival.max(axis=2).T + ar.max(axis=1)  # (nb, P)
    step = (ar_end[:, None, :] + opt).max(axis=(1, 2)).reshape(lead)
    return float(step) if step.ndim == 0 else step


def simulate_pipeline(stages, microbatches, forward, backward, *, dp=1, p2p=0.0, allreduce=0.0, optimizer=0.0,
                      schedule="1f1b", chunks=1):
    """Time one training step on a DP x PP grid, op by op.

    Every op starts as soon as all of its dependencies have ended:

    - program order: each device runs its ops in the order of
      :func:`pipeline_schedule` (1F1B by default);
    - the forward of microbatch m on stage s starts after the forward of m
      on stage s - 1 has ended and its activations have crossed the link
      (``p2p``); the backward of m on stage s after the backward of m on
      stage s + 1 and the gradient's trip back;
    - the DP gradient all-reduce of stage s is a barrier across the DP
      group: it starts when the slowest replica of that stage has finished
      its last backward, and lasts as long as its slowest participant's
      share (``allreduce``);
    - each worker's optimizer runs after its stage's all-reduce.

    Transfers do not occupy the compute stream and links have no contention.
    With equal op times and free communication the step time is
    ``(M + P - 1) * (f + b)`` (see :func:`uniform_pipeline_time`).

    Parameters
    ----------
    stages : int
        Pipeline stages P, >= 1.
    microbatches : int
        Microbatches per step per DP replica M, >= 1.
    forward, backward : float or array
        Seconds >= 0 for one stage's forward / backward of one microbatch;
        a scalar or an array broadcastable to (dp, stages, microbatches).
        With ``chunks = v``, each chunk takes 1/v of it.
    dp : int
        Data-parallel replicas D, >= 1.
    p2p : float or array
        Seconds >= 0 for one point-to-point transfer (send + recv) of one
        microbatch's activations or gradients over link s, the link between
        stage s and stage s + 1 (link P - 1 wraps to stage 0, used only by
        interleaved schedules); broadcastable to (dp, stages, microbatches).
    allreduce : float or array
        Seconds >= 0 of each stage's DP gradient all-reduce, per
        participant; broadcastable to (dp, stages). The collective of stage
        s lasts ``max(allreduce[:, s])``.
    optimizer : float or array
        Seconds >= 0 of the optimizer step; broadcastable to (dp, stages).
    schedule : {"1f1b", "gpipe"}
        The per-device order; see :func:`pipeline_schedule`.
    chunks : int
        Model chunks per device v (interleaved 1F1B when > 1; M must be a
        multiple of P).

    Returns
    -------
    PipelineRun
        Start and end of every op, the step time and the critical path.

    Examples
    --------
    Four stages, eight microbatches, f = 1 s, b = 2 s: (8 + 4 - 1) * 3 = 33 s.

    >>> run = simulate_pipeline(4, 8, forward=1.0, backward=2.0)
    >>> run.step_time
    33.0
    >>> round(run.utilization, 3)   # 8 * 3 busy seconds per device out of 33
    0.727

    Make one microbatch's backward on the last stage 5 s slower: it is on the
    critical path, so the step is 5 s longer.

    >>> b = slowed(2.0, 3.5, (1, 4, 8), stage=3, microbatch=2)
    >>> simulate_pipeline(4, 8, forward=1.0, backward=b).step_time
    38.0

    The critical path's ops, back to back, add up to the step time:

    >>> path = run.critical_ops()
    >>> float(np.sum(path["end"] - path["start"]))
    33.0
    """
    P, M, D, v = _sizes(stages, microbatches, dp, chunks, schedule)
    n_ops = D * P * M * v * 4 + 2 * D * P
    check_memory(n_ops * 160, f"simulating dp={D} x stages={P} x microbatches={M} x chunks={v}")
    grid, axes = (D, P, M), "(dp, stages, microbatches)"
    fwd = _durations("forward", forward, grid, axes)
    bwd = _durations("backward", backward, grid, axes)
    link_t = _durations("p2p", p2p, grid, axes)
    ar = _durations("allreduce", allreduce, (D, P), "(dp, stages)")
    opt = _durations("optimizer", optimizer, (D, P), "(dp, stages)")
    g = _graph(P, M, v, schedule)
    comp, delay, start, end, via_cross = _timeline(g, fwd, bwd, link_t, v)
    recv = np.nonzero(g["link"] >= 0)[0]
    arrival = end[g["last"]]  # (P, D): each worker's last backward
    ar_start = arrival.max(axis=1)
    ar_dur = ar.max(axis=0)
    ar_end = ar_start + ar_dur
    opt_end = ar_end[None, :] + opt  # (D, P)
    step = float(opt_end.max()) if opt_end.size else 0.0

    ls_opt = step - opt
    ls_ar = ls_opt.min(axis=0) - ar_dur  # (P,)
    ls = _latest_starts(g, comp, delay, ls_ar, D)
    path = _critical_path(g, arrival, opt_end, via_cross, recv, D, P)
    rows = _op_rows(g, recv, start, end, delay, ls, (ar_start, ar_end, ls_ar), (opt_end, ls_opt), D, P)
    rows["critical"][path] = True
    rows.flags.writeable = False
    return PipelineRun(D, P, M, v, schedule, rows, step, tuple(int(i) for i in path))


def _latest_starts(g, comp, delay, ls_ar, D):
    """Latest start of every op (N + 1, D) that keeps the step time: a backward pass over the levels."""
    N = g["N"]
    tail = np.full((N, D), np.inf)
    tail[g["last"]] = ls_ar[:, None]
    ls = np.full((N + 1, D), np.inf)
    nxt, cnext = g["nxt"], g["cross_next"]
    for idx in reversed(g["levels"]):
        lf = np.minimum(np.minimum(ls[nxt[idx]], ls[cnext[idx]] - delay[cnext[idx]]), tail[idx])
        ls[idx] = lf - comp[idx]
    return ls


def _critical_path(g, arrival, opt_end, via_cross, recv, D, P):
    """Row indices of the critical path, walking back from the last optimizer along binding predecessors.

    The all-reduce is one collective: it is drawn on the row of the replica
    that arrived last, and that replica's optimizer is taken if it ends last too.
    """
    N, E, prog, cross = g["N"], recv.size, g["prog"], g["cross"]
    d0, s0 = np.unravel_index(int(np.argmax(opt_end)), opt_end.shape)
    d = int(np.argmax(arrival[s0]))
    if opt_end[d, s0] == opt_end[d0, s0]:
        d0 = d
    send_of = np.full(N, -1, dtype=np.int64)
    send_of[recv] = np.arange(E)
    base_send, base_ar = N * D, N * D + E * D
    path = [base_ar + D * P + d0 * P + s0, base_ar + d * P + s0]
    node = int(g["last"][s0])
    while True:
        path.append(d * N + node)
        if via_cross[node, d]:
            path.append(base_send + d * E + send_of[node])
            node = int(cross[node])
        elif prog[node] < N:
            node = int(prog[node])
        else:
            break
    path.reverse()
    return path


def _op_rows(g, recv, start, end, delay, ls, allreduce, optimizer, D, P):
    """The table of every op: computes, sends, then each (dp, stage)'s all-reduce and optimizer."""
    N, E, st, mb, cross = g["N"], recv.size, g["stage"], g["mb"], g["cross"]
    base_send, base_ar = N * D, N * D + E * D
    (ar_start, ar_end, ls_ar), (opt_end, ls_opt) = allreduce, optimizer
    rows = np.zeros(N * D + E * D + 2 * D * P, dtype=_ROW)
    c = rows[:base_send]
    c["kind"] = np.where(g["kind"] == 0, "F", "B")[np.tile(np.arange(N), D)]
    c["dp"], c["stage"], c["peer"] = np.repeat(np.arange(D), N), np.tile(st, D), -1
    c["chunk"], c["microbatch"] = np.tile(g["chunk"], D), np.tile(mb, D)
    c["start"], c["end"] = start.T.ravel(), end[:N].T.ravel()
    c["slack"] = (ls[:N] - start).T.ravel()
    s = rows[base_send:base_ar]
    src = cross[recv]
    s["kind"] = np.where(g["kind"][recv] == 0, "send-F", "send-B")[np.tile(np.arange(E), D)]
    s["dp"], s["stage"], s["peer"] = np.repeat(np.arange(D), E), np.tile(st[src], D), np.tile(st[recv], D)
    s["chunk"], s["microbatch"] = np.tile(g["chunk"][src], D), np.tile(mb[recv], D)
    s["start"] = end[src].T.ravel()
    s["end"] = s["start"] + delay[recv].T.ravel()
    s["slack"] = (ls[recv] - end[src] - delay[recv]).T.ravel()
    for base, kind, t0, t1, lst in (
        (base_ar, "allreduce", np.broadcast_to(ar_start, (D, P)), np.broadcast_to(ar_end, (D, P)),
         np.broadcast_to(ls_ar, (D, P))),
        (base_ar + D * P, "optimizer", np.broadcast_to(ar_end, (D, P)), opt_end, ls_opt),
    ):
        r = rows[base : base + D * P]
        r["kind"], r["dp"], r["stage"], r["peer"] = kind, np.repeat(np.arange(D), P), np.tile(np.arange(P), D), -1
        r["chunk"], r["microbatch"] = 0, -1
        r["start"], r["end"], r["slack"] = t0.ravel(), t1.ravel(), (lst - t0).ravel()
    return rows
