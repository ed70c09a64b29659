"""The multiprocessing backend of the SGD experiment (shared memory).

The parent holds the weights in a shared array and acts as the parameter
server: each step it publishes the weights, sends every process its batch
and its deadline (the step's start plus the planned gradient time), and
waits for the gradients the plan counts. A process copies the weights,
computes its real gradient (a few hundred microseconds), then sleeps until
its deadline while listening to its pipe: a new step (or ``stop``) that
arrives first cancels its late work. It writes its gradient to its own slot
of a shared array and reports its measured begin and arrival times.

Workers start from a ``forkserver`` that has imported this module once (a
clean single-threaded server, so it is as safe in a Jupyter kernel as
``spawn``, and a worker starts in milliseconds instead of importing numpy
and scipy again; ``spawn`` where there is no forkserver). They ignore SIGINT, exit when their parent dies (a
thread watches its sentinel), and the parent terminates, kills and joins
every one of them in a ``finally`` block, as the barrier lab does.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import multiprocessing.connection
import os
import signal
import sys
import threading
import time

import numpy as np

from ..models.sgd_schedule import balanced_cuts, sgd_update
from ..models.softmax import gradient_sum, loss, make_length_data
from ._procs import reap
from .sgd_plan import SGDResult, make_plan, reference_target, summarize, write_csv

__all__ = ["run_processes"]


# --------------------------------------------------------------------- worker
def _watch_parent():
    parent = mp.parent_process()
    if parent is None:  # pragma: no cover
        return

    def watch():
        mp.connection.wait([parent.sentinel])
        os._exit(3)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _worker(rank, data_kwargs, shape, weights_buf, slots_buf, conn):
    """One process: run the jobs it is sent until ``stop``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent()
    try:
        data = make_length_data(**data_kwargs)
        shared = np.frombuffer(weights_buf, dtype=float).reshape(shape)
        slot = np.frombuffer(slots_buf, dtype=float).reshape(-1, *shape)[rank]
        conn.send(("ready",))
        msg = conn.recv()
        while msg[0] != "stop":
            msg = _one_step(data, shared, slot, conn, msg)
    except (EOFError, BrokenPipeError):
        os._exit(0)  # the parent went away
    except BaseException as exc:
        try:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        finally:
            os._exit(1)


def _one_step(data, shared, slot, conn, msg):
    """Run one step's jobs; return the next message (read now or later)."""
    kind, step, jobs, lr = msg
    begin = time.monotonic()
    W = shared.copy()
    finishes, real = [], 0.0
    for samples, deadline in jobs:
        c0 = time.perf_counter()
        g = gradient_sum(W, data.X[samples], data.y[samples])
        if kind == "local":
            W = sgd_update(W, [g], len(samples), lr)
        real += time.perf_counter() - c0
        left = deadline - time.monotonic()
        if left > 0 and conn.poll(left):  # a new step or stop: this work is cancelled
            conn.send(("cancelled", step, begin, time.monotonic(), real))
            return conn.recv()
        finishes.append(time.monotonic())
    slot[:] = W if kind == "local" else g
    conn.send(("done", step, begin, finishes, real))
    return conn.recv()


# --------------------------------------------------------------------- parent
class _Book:
    """The parent's record: per (row step, process) begin, end, arrival."""

    def __init__(self, rows, processes, period):
        shape = (rows, processes)
        self.begin, self.end, self.finish = (np.full(shape, np.nan) for _ in range(3))
        self.wait = np.zeros(shape)
        self.planned = np.full(shape, np.nan)  # planned arrival, seconds after the row's start
        self.counted = np.zeros(shape, dtype=bool)
        self.real = np.zeros(shape)
        self.t0 = np.full(rows, np.nan)
        self.period = period
        self.curve = []
        self.done_rows = 0

    def take(self, rank, msg, local):
        kind, step = msg[0], msg[1]
        H = self.period if local else 1
        rows = slice(step * H, step * H + H)
        t0 = self.t0[step * H]
        if kind == "cancelled":
            _, _, begin, end, real = msg
            self.begin[step * H, rank], self.end[step * H, rank] = begin - t0, end - t0
            self.real[step * H, rank] = real
            return
        _, _, begin, finishes, real = msg
        starts = [begin] + list(finishes[:-1])
        self.begin[rows, rank] = np.asarray(starts) - t0
        self.end[rows, rank] = self.finish[rows, rank] = np.asarray(finishes) - t0
        self.real[step * H, rank] = real

    def seen(self, step, rank, local):
        return not math.isnan(self.end[step * (self.period if local else 1), rank])


def _events(conns, procs, deadline):
    """Wait for the next message: (rank, msg). Raise when a process dies or time runs out."""
    by_conn = {c: r for r, c in enumerate(conns)}
    by_sentinel = {p.sentinel: r for r, p in enumerate(procs)}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the SGD run did not finish in time; the processes were stopped")
        ready = mp.connection.wait(list(by_conn) + list(by_sentinel), timeout=min(left, 0.5))
        for obj in ready:
            if obj in by_conn and obj.poll():
                try:
                    msg = obj.recv()
                except EOFError:  # the process is gone
                    _died(procs, by_conn[obj])
                if msg[0] == "error":
                    raise RuntimeError(f"process {by_conn[obj]} failed: {msg[1]}")
                return by_conn[obj], msg
        for obj in ready:
            if obj in by_sentinel and not conns[by_sentinel[obj]].poll():
                _died(procs, by_sentinel[obj])


def _died(procs, rank):
    procs[rank].join(0.5)
    hint = ""
    main = sys.modules.get("__main__")
    if getattr(main, "__spec__", None) is None and hasattr(main, "__file__"):
        hint = ("; when you run it from a script, put the call under `if __name__ == \"__main__\":` "
                "(each process imports your script again)")
    raise RuntimeError(f"process {rank} exited with code {procs[rank].exitcode} during the run{hint}")


def _wait_for(pred, book, conns, procs, deadline, local):
    """Take messages until pred() holds."""
    while not pred():
        rank, msg = _events(conns, procs, deadline)
        if msg[0] != "ready":
            book.take(rank, msg, local)


def _step_jobs(plan, t, W, speeds):
    """This step's (samples, duration) per process and which count."""
    s = plan.settings
    if s.scheme != "balanced":
        return [(plan.idx[t, r], plan.planned[t, r]) for r in range(s.processes)], plan.counted[t]
    flat = plan.idx[t].reshape(-1)
    sizes = balanced_cuts(plan.data.length[flat], speeds)
    chunks = np.split(flat, np.cumsum(sizes)[:-1])
    return [(c, plan.duration(t, r, c)) for r, c in enumerate(chunks)], np.ones(s.processes, bool)


def _record(plan, book, point, progress):
    """Add a curve point (step, wall_s, applied, W) with its test loss; report progress."""
    step, wall, applied, W = point
    book.curve.append((step, wall, applied, loss(W, plan.data.X_test, plan.data.y_test)))
    if progress is not None:
        progress(step, plan.settings.steps)


def _run_steps(plan, book, conns, procs, shared, slots, deadline, progress):
    """sync, backup, drop and balanced: one update per step.

    The test loss of step t's weights is computed after step t + 1 has been
    sent, while the processes work, so it does not lengthen the step.
    """
    s = plan.settings
    W, applied, later = plan.W0.copy(), 0, None
    speeds, seen = np.ones(s.processes), np.zeros(s.processes)
    for t in range(s.steps):
        jobs, counted = _step_jobs(plan, t, W, speeds)
        book.planned[t] = [d for _, d in jobs]
        book.t0[t] = t0 = time.monotonic()
        for r, (samples, d) in enumerate(jobs):
            conns[r].send(("step", t, [(samples, t0 + d)], s.step_lr))
        if later is not None:
            _record(plan, book, later, progress)
        ranks = np.flatnonzero(counted)
        _wait_for(lambda: all(book.seen(t, r, False) for r in ranks), book, conns, procs, deadline, False)
        t_end = time.monotonic() - t0
        book.counted[t] = counted
        book.wait[t, ranks] = np.maximum(t_end - book.finish[t, ranks], 0.0)
        samples = sum(len(jobs[r][0]) for r in ranks)
        W = sgd_update(W, [slots[r].copy() for r in ranks], samples, s.step_lr)
        shared[:] = W
        applied += len(ranks)
        later = (t + 1, t0 + t_end - book.t0[0], applied, W)
        book.done_rows = t + 1
        if s.scheme == "balanced":
            # length done per second since the step began, averaged over the steps so far
            lengths = np.array([plan.data.length[c].sum() for c, _ in jobs])
            seen += lengths / np.maximum(book.finish[t], 1e-6)
            speeds = seen / (t + 1)
    if later is not None:
        _record(plan, book, later, progress)
    return W


def _run_rounds(plan, book, conns, procs, shared, slots, deadline, progress):
    """local: H local steps per process, then the models are averaged."""
    s = plan.settings
    H, N = s.period, s.workers
    W = plan.W0.copy()
    for rnd in range(s.steps // H):
        rows = slice(rnd * H, rnd * H + H)
        book.t0[rows] = t0 = time.monotonic()
        ends = book.planned[rows] = np.cumsum(plan.planned[rows], axis=0)
        for r in range(N):
            conns[r].send(("local", rnd, [(plan.idx[rnd * H + h, r], t0 + ends[h, r]) for h in range(H)], s.lr))
        _wait_for(lambda: all(book.seen(rnd, r, True) for r in range(N)), book, conns, procs, deadline, True)
        t_end = time.monotonic() - t0
        book.counted[rows] = True
        book.wait[rnd * H + H - 1] = np.maximum(t_end - book.finish[rnd * H + H - 1], 0.0)
        W = sum(slots[r] for r in range(1, N)) + slots[0] if N > 1 else slots[0].copy()
        W = W / N  # the models' mean
        shared[:] = W
        book.curve.append(((rnd + 1) * H, t0 + t_end - book.t0[0], N * H * (rnd + 1),
                           loss(W, plan.data.X_test, plan.data.y_test)))
        book.done_rows = (rnd + 1) * H
        if progress is not None:
            progress((rnd + 1) * H, s.steps)
    return W


def _start(ctx, s, plan, weights_buf, slots_buf, deadline, procs, conns):
    """Start the processes (appending to procs and conns as they start); wait until all are ready."""
    for rank in range(s.processes):
        parent_end, child_end = ctx.Pipe(duplex=True)
        p = ctx.Process(target=_worker, name=f"sgd-worker-{rank}", daemon=True,
                        args=(rank, s.data_kwargs(), plan.W0.shape, weights_buf, slots_buf, child_end))
        procs.append(p)
        conns.append(parent_end)
        p.start()
        child_end.close()
    ready = set()
    while len(ready) < len(procs):
        rank, msg = _events(conns, procs, deadline)
        ready.add(rank)


def _finish(book, conns, local, rows_done):
    """Send stop; collect the late processes' last reports (at most 10 s; at once, normally)."""
    for c in conns:
        try:
            c.send(("stop",))
        except (OSError, ValueError):
            pass
    H = book.period if local else 1
    last = max(rows_done // H - 1, 0)
    deadline = time.monotonic() + 10.0
    # Read each process's own pipe until its last report: a process that got
    # "stop" exits at once, and another one's exit must not end the wait (it
    # did, and a late gradient's "cancelled" report went unread now and then).
    for rank, conn in enumerate(conns):
        while not book.seen(last, rank, local):
            try:
                if not conn.poll(max(0.0, deadline - time.monotonic())):
                    break
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg[0] not in ("ready", "error"):
                book.take(rank, msg, local)


def _result(plan, book, W, target, complete, pids):
    s = plan.settings
    n = book.done_rows
    end, begin = book.end[:n], book.begin[:n]
    work = np.where(np.isfinite(end - begin), np.maximum(end - begin, 0.0), 0.0)
    late = ~book.counted[:n] & np.isfinite(end)
    acct = dict(
        gradients_applied=int(book.counted[:n].sum()),
        gradients_discarded=int(late.sum()),
        gradient_s_computed=float(work.sum()),
        gradient_s_discarded=float(work[late].sum()),
    )
    wall = float(book.curve[-1][1]) if book.curve else 0.0
    out = summarize(s, plan.data, W, book.curve, target, **acct)
    planned = book.planned[:n]
    return SGDResult(settings=s, wall_s=wall, compute=work, wait=book.wait[:n],
                     comm=np.nan_to_num(np.maximum(begin, 0.0)), counted=book.counted[:n],
                     finish=book.finish[:n], planned=planned, complete=complete, pids=tuple(pids), **out)


def _context():
    """A forkserver context that preloads the worker's module, else spawn."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return mp.get_context("spawn")  # pragma: no cover - Windows


def _default_timeout(plan):
    return 60.0 + 3.0 * float(plan.planned.max(axis=1).sum())


def run_processes(s, progress=None, out=None, timeout=None):
    """Run the settings ``s`` with real processes; returns an SGDResult."""
    plan = make_plan(s)
    target = s.target_loss if s.target_loss is not None else reference_target(s)
    timeout = _default_timeout(plan) if timeout is None else float(timeout)
    local = s.scheme == "local"
    ctx = _context()
    weights_buf = ctx.RawArray("d", plan.W0.size)
    slots_buf = ctx.RawArray("d", plan.W0.size * s.processes)
    shared = np.frombuffer(weights_buf, dtype=float).reshape(plan.W0.shape)
    slots = np.frombuffer(slots_buf, dtype=float).reshape(-1, *plan.W0.shape)
    shared[:] = plan.W0
    book = _Book(s.steps, s.processes, s.period)
    procs, conns, W, complete = [], [], plan.W0.copy(), False
    deadline = time.monotonic() + timeout
    try:
        _start(ctx, s, plan, weights_buf, slots_buf, deadline, procs, conns)
        body = _run_rounds if local else _run_steps
        W = body(plan, book, conns, procs, shared, slots, deadline, progress)
        _finish(book, conns, local, book.done_rows)
        complete = True
        result = _result(plan, book, W, target, True, [p.pid for p in procs])
        if out is not None:
            write_csv(result, out)
        return result
    except BaseException:
        if out is not None and book.done_rows:
            write_csv(_result(plan, book, W, target, False, []), out, complete=False)
        raise
    finally:
        reap(procs, grace=0.5 if complete else 0.0, terminate=False)
        for c in conns:
            c.close()
