"""The live barrier lab: real worker processes that meet at a real barrier.

W worker processes start with the ``spawn`` method (forking a running
Jupyter kernel can deadlock). Every step, each worker works, then waits at a
``multiprocessing.Barrier`` until the last worker arrives. The work is one of:

- ``sleep`` (the default): sleep for a duration drawn from the worker's
  :class:`~straggle_edu.models.step_time.StepTime` model;
- ``compute``: real computation (a busy numpy loop) until that drawn
  duration has passed;
- ``fixed``: the same fixed amount of real computation every step (a fixed
  number of passes of a numpy kernel, sized once to ``step_seconds`` on this
  machine; the slow rank does ``slow_factor`` times as many). Nothing is
  drawn: the spread of the times is the machine's own jitter, which the lab
  measures (:meth:`LabResult.prediction` then predicts E[max] from the
  measured times, :func:`~straggle_edu.models.empirical.empirical_expected_max`).

The computing kinds run at most one worker per core. The parent process
records, per step and per worker:

- ``compute``: the time from the previous barrier release to the end of the
  work (the worker's own time, bookkeeping included);
- ``wait``: the time blocked at the barrier.

So compute + wait of any worker is the step time, release to release. The
parent writes the per-rank trace CSV (``step,rank,duration_s,phase``) as the
steps complete, so an interrupted run keeps every finished step and ends
with ``# incomplete``.

Before the measured steps the workers pass the barrier ``WARMUP_ROUNDS``
times with no work, so the first measured step starts together on every
worker, whatever the spread of process start-up.

A step lasts as long as the slowest worker's work plus the barrier's own
cost (the last arrival wakes the others, which the scheduler then runs).
The lab measures that cost in the run itself: the step time minus the
slowest worker's compute, averaged over the steps. The library predicts the
rest, the slowest worker's work, with the order statistics of the model:

    predicted mean step time = E[max over the workers' StepTime models]
                               + measured barrier overhead

That model lives in :mod:`straggle_edu.models.barrier_lab`; a run's
:meth:`LabResult.prediction` compares it with what was measured.

Processes are always cleaned up, whatever happens (an error, a worker that
dies, an interrupt from the notebook's stop button, a timeout): the parent
terminates every worker, then kills, then joins it, in a ``finally`` block.
A worker that loses its parent exits by itself (a thread watches the
parent's sentinel), and workers ignore SIGINT, so a Ctrl-C reaches only the
parent, which then stops them in order.

Entry points
------------
:func:`run_barrier_lab`
    Run it; returns a :class:`LabResult`.
:meth:`LabSettings.step_times`, :meth:`LabResult.prediction`
    The workers' step-time models (the input of the predictions in
    :mod:`straggle_edu.models.barrier_lab`), and a run against them.
``straggle-edu barrier``
    The command line (:func:`configure` and :func:`run`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import shlex
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._procs import reap, sigterm_as
from .rank_csv import RankTraceWriter, check_out_path
from .._validate import as_rng, check_memory, in_range, probability, require, whole
from ..i18n import _

__all__ = [
    "LabSettings",
    "LabResult",
    "BarrierLabTimeout",
    "run_barrier_lab",
    "max_workers",
    "cpu_cores",
    "calibrate_work_units",
    "WARMUP_ROUNDS",
    "MAX_WORKERS",
    "configure",
    "run",
]

MAX_WORKERS = 64
MAX_STEPS = 100_000
MAX_SECONDS = 60.0
WARMUP_ROUNDS = 2
WORK_KINDS = ("sleep", "compute", "fixed")
_KIND_TEXT = "'sleep', 'compute' or 'fixed'"
_KERNEL_SIZE = 2048  # float64 elements per pass of the fixed-work kernel


class BarrierLabTimeout(TimeoutError):
    """The lab did not finish in time; the workers were stopped and the
    partial trace kept (``exc.lab_result`` holds the steps that finished)."""


def cpu_cores():
    """The number of CPU cores this process may run on.

    Examples
    --------
    >>> cpu_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def max_workers(work="sleep"):
    """The largest worker count the lab accepts for this kind of work.

    Sleeping workers share a core happily, so ``sleep`` allows
    ``MAX_WORKERS`` (64). Computing workers each need a core of their own, or
    they would measure the scheduler instead of the straggler, so
    ``compute`` and ``fixed`` allow one per core.

    Examples
    --------
    >>> max_workers("sleep")
    64
    >>> max_workers("compute") == max_workers("fixed") == min(64, cpu_cores())
    True
    """
    require(work in WORK_KINDS, "work", work, _KIND_TEXT)
    return MAX_WORKERS if work == "sleep" else min(MAX_WORKERS, cpu_cores())


@dataclass(frozen=True)
class LabSettings:
    """What to run: validated settings of one barrier-lab run.

    Parameters
    ----------
    workers : int
        Number of worker processes W, 1..64 (1..cores with ``work="compute"``
        or ``"fixed"``).
    steps : int
        Number of measured steps, 2..100000.
    step_seconds : float
        Base work time T of a step, in seconds, in (0, 60]. With
        ``work="fixed"``, the time the fixed work is sized to on this machine.
    jitter : float or None
        Coefficient of variation of the drawn work time, in [0, 1]; None
        (the default) means 0.05, or 0 with ``work="fixed"``, where nothing
        is drawn and any other value is refused.
    pause_prob : float
        Probability that a worker's step also hits a pause, in [0, 1]
        (0 with ``work="fixed"``).
    pause_seconds : float
        Length of that pause, in seconds, in [0, 60].
    slow_rank : int or None
        The one slow worker, 0..W-1, or None for none.
    slow_factor : float
        How many times longer the slow worker works, in (0, 100].
    work : {"sleep", "compute", "fixed"}
        Sleep for the drawn time, compute (a busy numpy loop) until it
        passes, or do a fixed amount of computation (see the module notes).
    seed : int
        Seed of the drawn work times; each rank gets its own stream.
    work_units : int or None
        With ``work="fixed"``: the passes of the kernel a healthy worker does
        per step, >= 1; None sizes them to ``step_seconds`` when the run
        starts (:func:`calibrate_work_units`). Must be None for the other kinds.

    Examples
    --------
    >>> s = LabSettings(workers=4, steps=10, step_seconds=0.02, slow_rank=1, slow_factor=2)
    >>> [round(s.step_time(r).mean(), 3) for r in range(4)]
    [0.02, 0.04, 0.02, 0.02]
    >>> LabSettings(workers=4, slow_rank=4)
    Traceback (most recent call last):
    ...
    ValueError: slow_rank must be a whole number in 0..3 (one of the 4 workers), got 4
    >>> LabSettings(workers=1, work="fixed").jitter, LabSettings().jitter
    (0.0, 0.05)
    >>> LabSettings(workers=1, work="fixed", jitter=0.1)
    Traceback (most recent call last):
    ...
    ValueError: jitter must be 0 with work='fixed' (the spread is your machine's own), got 0.1
    """

    workers: int = 4
    steps: int = 20
    step_seconds: float = 0.05
    jitter: float | None = None
    pause_prob: float = 0.0
    pause_seconds: float = 0.0
    slow_rank: int | None = None
    slow_factor: float = 2.0
    work: str = "sleep"
    seed: int = 0
    work_units: int | None = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)
        require(self.work in WORK_KINDS, "work", self.work, _KIND_TEXT)
        limit = max_workers(self.work)
        if self.work != "sleep":
            require(
                _is_whole(self.workers) and 1 <= self.workers <= limit,
                "workers",
                self.workers,
                f"a whole number in 1..{limit} with work='{self.work}' (this machine has "
                f"{cpu_cores()} cores; use work='sleep' for more workers)",
            )
        if self.jitter is None:
            set_("jitter", 0.0 if self.work == "fixed" else 0.05)
        self._check_fixed()
        set_("workers", whole("workers", self.workers, 1, limit))
        set_("steps", whole("steps", self.steps, 2, MAX_STEPS))
        set_("step_seconds", in_range("step_seconds", self.step_seconds, 0.0, MAX_SECONDS, low_open=True))
        set_("jitter", in_range("jitter", self.jitter, 0.0, 1.0))
        set_("pause_prob", probability("pause_prob", self.pause_prob))
        set_("pause_seconds", in_range("pause_seconds", self.pause_seconds, 0.0, MAX_SECONDS))
        if self.slow_rank is not None:
            w = self.workers
            require(
                _is_whole(self.slow_rank) and 0 <= self.slow_rank < w,
                "slow_rank",
                self.slow_rank,
                f"a whole number in 0..{w - 1} (one of the {w} workers)",
            )
            set_("slow_rank", int(self.slow_rank))
        set_("slow_factor", in_range("slow_factor", self.slow_factor, 0.0, 100.0, low_open=True))
        require(_is_whole(self.seed) and self.seed >= 0, "seed", self.seed, "a whole number >= 0")
        set_("seed", int(self.seed))
        check_memory(self.steps * self.workers * 8 * 8, f"recording {self.steps} steps of {self.workers} workers")

    def _check_fixed(self):
        """The fixed-work mode draws nothing: no jitter, no pauses; work_units only there."""
        if self.work != "fixed":
            require(self.work_units is None, "work_units", self.work_units, "None unless work='fixed'")
            return
        fixed = "0 with work='fixed' (the spread is your machine's own)"
        require(self.jitter == 0, "jitter", self.jitter, fixed)
        require(self.pause_prob == 0, "pause_prob", self.pause_prob, fixed)
        if self.work_units is not None:
            object.__setattr__(self, "work_units", whole("work_units", self.work_units, 1, 10**9))

    def units(self, rank):
        """The kernel passes rank ``rank`` does per step with ``work="fixed"``:
        ``work_units``, times ``slow_factor`` (rounded) for the slow rank.

        Examples
        --------
        >>> s = LabSettings(workers=2, work="fixed", work_units=100, slow_rank=1, slow_factor=1.5)
        >>> s.units(0), s.units(1)
        (100, 150)
        """
        require(self.work_units is not None, "work_units", None, "set (work='fixed', sized or given)")
        rank = whole("rank", rank, 0, self.workers - 1)
        slow = self.slow_factor if rank == self.slow_rank else 1.0
        return max(1, round(self.work_units * slow))

    def step_time(self, rank):
        """The :class:`~straggle_edu.models.step_time.StepTime` model of one worker."""
        from ..models.step_time import StepTime

        rank = whole("rank", rank, 0, self.workers - 1)
        slow = self.slow_factor if rank == self.slow_rank else 1.0
        return StepTime(
            self.step_seconds,
            jitter=self.jitter,
            pause_prob=self.pause_prob,
            pause=self.pause_seconds,
            slowdown=slow,
        )

    def step_times(self):
        """Every worker's :class:`~straggle_edu.models.step_time.StepTime`, rank by rank:
        the input of :mod:`straggle_edu.models.barrier_lab`'s predictions.

        Examples
        --------
        >>> from straggle_edu.models.barrier_lab import predict_step_time
        >>> s = LabSettings(workers=4, step_seconds=0.05, jitter=0.0, slow_rank=1, slow_factor=2)
        >>> [t.slowdown for t in s.step_times()], predict_step_time(s.step_times())
        ([1.0, 2.0, 1.0, 1.0], 0.1)
        """
        return tuple(self.step_time(r) for r in range(self.workers))

    def planned_durations(self):
        """The work times each worker will do: an array (steps, workers), seconds.

        Rank r draws from its own stream, ``SeedSequence(seed).spawn(W)[r]``,
        so a rank's times do not change when W changes. Normal jitter can
        draw a negative time with tiny probability; it is clipped to 0.
        With ``work="fixed"`` nothing is drawn: these are the nominal times
        the fixed work was sized to (``step_seconds``, times the slow factor).

        Examples
        --------
        >>> d = LabSettings(workers=3, steps=4, step_seconds=0.01, seed=1).planned_durations()
        >>> d.shape, bool((d > 0).all())
        ((4, 3), True)
        """
        seeds = np.random.SeedSequence(self.seed).spawn(self.workers)
        cols = [
            self.step_time(r).rvs(self.steps, random_state=as_rng(np.random.Generator(np.random.PCG64(s))))
            for r, s in enumerate(seeds)
        ]
        return np.clip(np.column_stack(cols), 0.0, None)


def _is_whole(x):
    try:
        return not isinstance(x, bool) and float(x) == int(x)
    except (TypeError, ValueError, OverflowError):
        return False


@dataclass(frozen=True)
class LabResult:
    """What a barrier-lab run measured. All times in seconds.

    Attributes
    ----------
    settings : LabSettings
    busy, wait : numpy.ndarray
        Shape (steps done, workers): each worker's compute and barrier wait.
    start : numpy.ndarray
        Shape (steps done, workers): when each worker began the step,
        counted from the start of the first measured step.
    planned : numpy.ndarray
        Shape (steps, workers): the work times that were drawn.
    overhead : float
        The measured barrier overhead: the mean over steps of the step time
        minus the slowest worker's compute.
    complete : bool
        False when the run was interrupted or stopped; then only the finished
        steps are here (and in the trace, which ends with ``# incomplete``).
    path : pathlib.Path or None
        The trace CSV, when one was written.
    pids : tuple of int
        The worker processes' ids (all reaped when the run returns).
    """

    settings: LabSettings
    busy: np.ndarray
    wait: np.ndarray
    start: np.ndarray
    planned: np.ndarray
    overhead: float
    complete: bool
    path: Path | None = None
    pids: tuple = field(default=())

    @property
    def steps_done(self):
        """Number of measured steps that finished."""
        return int(self.busy.shape[0])

    @property
    def step_times(self):
        """Each step's length, release to release (mean over the workers)."""
        return (self.busy + self.wait).mean(axis=1)

    @property
    def mean_step_time(self):
        """The measured mean step time, in seconds."""
        require(self.steps_done >= 1, "steps done", self.steps_done, "at least 1 to take a mean")
        return float(self.step_times.mean())

    @property
    def stderr(self):
        """Standard error of :attr:`mean_step_time`, in seconds (NaN, with a
        warning, when fewer than 2 steps finished)."""
        n = self.steps_done
        if n < 2:
            warnings.warn(f"{n} finished step(s) give no standard error", stacklevel=2)
            return math.nan
        return float(self.step_times.std(ddof=1) / math.sqrt(n))

    @property
    def slowest_rank(self):
        """The rank with the largest mean compute time."""
        return int(np.argmax(self.busy.mean(axis=0)))

    def wait_share(self):
        """Each worker's share of its time spent waiting at the barrier: an
        array of ``workers`` fractions in [0, 1]."""
        total = (self.busy + self.wait).sum(axis=0)
        return np.divide(self.wait.sum(axis=0), total, out=np.zeros_like(total), where=total > 0)

    def slowdown(self):
        """The per-rank what-if slowdown of this run: mean over steps of the
        slowest worker's compute, over the mean of the per-step mean compute.

        This is the definition ``straggle-edu analyze`` uses for a per-rank
        trace (the ideal step gives every worker the per-step mean).
        """
        return float(self.busy.max(axis=1).mean() / self.busy.mean(axis=1).mean())

    def prediction(self):
        """This run's measured mean step time against the prediction; needs
        at least 2 finished steps.

        For drawn work (``sleep``, ``compute``) the prediction is the model's
        (:func:`straggle_edu.models.barrier_lab.measured_vs_predicted`). For
        ``fixed`` work there is no model: E[max] is predicted from the
        measured compute times themselves
        (:func:`straggle_edu.models.barrier_lab.measured_vs_empirical`).

        Examples
        --------
        >>> p = run_barrier_lab(workers=2, steps=4, step_seconds=0.03).prediction()
        >>> bool(abs(p.error) < 0.5), p.steps
        (True, 4)
        """
        from ..models.barrier_lab import measured_vs_empirical, measured_vs_predicted

        require(self.steps_done >= 2, "steps done", self.steps_done, "at least 2 to compare")
        if self.settings.work == "fixed":
            return measured_vs_empirical(self.busy, self.step_times, self.overhead, self.settings.slow_rank)
        return measured_vs_predicted(self.settings.step_times(), self.step_times, self.planned[: self.steps_done],
                                     self.overhead)

    def rows(self):
        """The trace as dicts ``{step, rank, duration_s, phase}`` (compute, then wait)."""
        out = []
        for s in range(self.steps_done):
            for r in range(self.settings.workers):
                out.append({"step": s, "rank": r, "duration_s": float(self.busy[s, r]), "phase": "compute"})
                out.append({"step": s, "rank": r, "duration_s": float(self.wait[s, r]), "phase": "wait"})
        return out


# --------------------------------------------------------------------- workers
def _watch_parent():
    """Exit this worker as soon as its parent process is gone."""
    parent = mp.parent_process()
    if parent is None:  # pragma: no cover - always set for spawned children
        return

    def watch():
        mp.connection.wait([parent.sentinel])
        os._exit(3)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _busy_until(deadline):
    """Real computation (a numpy loop) until the monotonic clock passes deadline."""
    x = np.linspace(0.0, 1.0, _KERNEL_SIZE)
    while time.monotonic() < deadline:
        np.sin(x, out=x)
        x += 1.0


def _fixed_work(units):
    """A fixed amount of real computation: ``units`` passes of the same numpy
    kernel (the one :func:`_busy_until` loops), whatever the clock says."""
    x = np.linspace(0.0, 1.0, _KERNEL_SIZE)
    for __ in range(units):
        np.sin(x, out=x)
        x += 1.0
    return float(x[0])


def calibrate_work_units(seconds, repeats=5):
    """How many passes of the fixed-work kernel take about ``seconds`` here.

    Times a probe of the kernel ``repeats`` times in this process and keeps
    the fastest (an interruption only ever slows a probe down), so the
    count fits an undisturbed core of this machine.

    Parameters
    ----------
    seconds : float
        The wanted work time of one step, in seconds, in (0, 60].
    repeats : int
        Timed probes, 1..100.

    Returns
    -------
    int
        Kernel passes, >= 1.

    Examples
    --------
    >>> units = calibrate_work_units(0.01)
    >>> units >= 1
    True
    """
    seconds = in_range("seconds", seconds, 0.0, MAX_SECONDS, low_open=True)
    repeats = whole("repeats", repeats, 1, 100)
    probe = max(1, min(2000, round(seconds / 20e-6)))
    best = math.inf
    for __ in range(repeats):
        t0 = time.perf_counter()
        _fixed_work(probe)
        best = min(best, time.perf_counter() - t0)
    return max(1, round(seconds * probe / max(best, 1e-9)))


def _worker(rank, durations, work, barrier, conn, warmup, timeout):
    """One worker: warm-up rounds, then work + barrier for each step."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _watch_parent()
    try:
        for __ in range(warmup):
            barrier.wait(timeout)
        prev = time.monotonic()
        conn.send(("warm", prev))
        for step, d in enumerate(durations):
            if work == "sleep":
                time.sleep(d)
            elif work == "fixed":
                _fixed_work(d)  # d is a count of kernel passes here
            else:
                _busy_until(prev + d)
            arrived = time.monotonic()
            barrier.wait(timeout)
            released = time.monotonic()
            conn.send(("step", step, prev, arrived, released))
            prev = released
        # One more round, so that no worker exits (and burns a core shutting
        # down) while a peer is still being released from the last step.
        barrier.wait(timeout)
        conn.send(("done",))
    except threading.BrokenBarrierError:
        os._exit(4)  # a peer failed or the parent stopped the run
    except BaseException as exc:  # report anything else to the parent
        try:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
        finally:
            os._exit(1)


@contextlib.contextmanager
def _interrupts_deferred():
    """Hold SIGINT while the block runs; raise KeyboardInterrupt after it if
    one arrived. Only the main thread can do this; elsewhere, do nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.getsignal(signal.SIGINT)
    if old is None:  # installed outside Python: leave it alone
        yield
        return
    caught = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if caught:
        raise KeyboardInterrupt


def _default_timeout(settings):
    s = settings
    per_step = s.step_seconds * max(1.0, s.slow_factor) * (1 + 6 * s.jitter) + s.pause_seconds
    return 30.0 + 3.0 * s.steps * per_step


class _Recorder:
    """The parent's bookkeeping while the workers run."""

    def __init__(self, settings, writer, progress):
        shape = (settings.steps, settings.workers)
        self.settings = settings
        self.writer = writer
        self.progress = progress
        self.begin = np.full(shape, np.nan)
        self.arrive = np.full(shape, np.nan)
        self.release = np.full(shape, np.nan)
        self.count = np.zeros(settings.steps, dtype=int)
        self.warm = [None] * settings.workers
        self.done = [False] * settings.workers
        self.written = 0

    def take(self, rank, msg):
        kind = msg[0]
        if kind == "warm":
            self.warm[rank] = msg[1]
        elif kind == "step":
            __, step, prev, arrived, released = msg
            self.begin[step, rank], self.arrive[step, rank], self.release[step, rank] = prev, arrived, released
            self.count[step] += 1
            self._flush()
        elif kind == "done":
            self.done[rank] = True
        elif kind == "error":
            raise RuntimeError(f"worker {rank} failed: {msg[1]}")

    def _flush(self):
        w = self.settings.workers
        while self.written < self.settings.steps and self.count[self.written] == w:
            s = self.written
            busy = self.arrive[s] - self.begin[s]
            wait = self.release[s] - self.arrive[s]
            if self.writer is not None:
                self.writer.write_step(
                    s, [row for r in range(w) for row in ((r, busy[r], "compute"), (r, wait[r], "wait"))]
                )
            self.written += 1
            if self.progress is not None:
                self.progress(self.written, self.settings.steps)

    def result(self, planned, complete, path, pids):
        n = self.written
        begin = self.begin[:n]
        zero = float(np.min(begin[0])) if n else 0.0
        busy = np.maximum(self.arrive[:n] - begin, 0.0)
        wait = np.maximum(self.release[:n] - self.arrive[:n], 0.0)
        overhead = float(((busy + wait).mean(axis=1) - busy.max(axis=1)).mean()) if n else 0.0
        return LabResult(
            settings=self.settings,
            busy=busy,
            wait=wait,
            start=begin - zero,
            planned=planned,
            overhead=max(overhead, 0.0),
            complete=complete,
            path=path,
            pids=tuple(pids),
        )


def run_barrier_lab(workers=4, steps=20, step_seconds=0.05, jitter=None, pause_prob=0.0, pause_seconds=0.0,
                    slow_rank=None, slow_factor=2.0, work="sleep", out=None, seed=0, timeout=None, progress=None,
                    work_units=None):
    """Run W real worker processes that meet at a real barrier every step.

    Parameters
    ----------
    workers, steps, step_seconds, jitter, pause_prob, pause_seconds, slow_rank, slow_factor, work, seed, work_units
        See :class:`LabSettings`. With ``work="fixed"`` and no
        ``work_units``, the work is sized to ``step_seconds`` here before the
        workers start; the result's ``settings.work_units`` says how much.
    out : str, os.PathLike or None
        Where to write the per-rank trace CSV (its folder must exist), or
        None for no file.
    timeout : float or None
        Seconds before the run is stopped (process start-up included);
        None allows 30 s plus three times the expected work.
    progress : callable or None
        ``progress(steps_done, steps)``, called in this process after every
        finished step (a notebook updates a progress bar with it).

    Returns
    -------
    LabResult

    Raises
    ------
    ValueError
        For bad settings, before any process starts.
    BarrierLabTimeout
        When the run takes longer than ``timeout``.
    RuntimeError
        When a worker fails or dies.
    KeyboardInterrupt
        Passed on after the clean-up, when the run is interrupted.

    Whatever stops the run, every worker is terminated and reaped first, the
    trace keeps the finished steps and ends with ``# incomplete``, and the
    exception carries the partial :class:`LabResult` as ``exc.lab_result``.

    Examples
    --------
    >>> r = run_barrier_lab(workers=2, steps=3, step_seconds=0.01, slow_rank=1)
    >>> r.busy.shape, r.complete, r.slowest_rank
    ((3, 2), True, 1)
    >>> bool(abs(r.mean_step_time - 0.02) < 0.015)
    True
    >>> f = run_barrier_lab(workers=1, steps=3, step_seconds=0.01, work="fixed")
    >>> f.settings.work_units >= 1, f.busy.shape
    (True, (3, 1))
    """
    settings = LabSettings(
        workers=workers,
        steps=steps,
        step_seconds=step_seconds,
        jitter=jitter,
        pause_prob=pause_prob,
        pause_seconds=pause_seconds,
        slow_rank=slow_rank,
        slow_factor=slow_factor,
        work=work,
        seed=seed,
        work_units=work_units,
    )
    if settings.work == "fixed" and settings.work_units is None:
        settings = dataclasses.replace(settings, work_units=calibrate_work_units(settings.step_seconds))
    timeout = _default_timeout(settings) if timeout is None else in_range("timeout", timeout, 0.0, low_open=True)
    require(progress is None or callable(progress), "progress", progress, "a callable progress(done, total) or None")
    path = check_out_path(out) if out is not None else None
    planned = settings.planned_durations()

    ctx = mp.get_context("spawn")
    writer = RankTraceWriter(path) if path is not None else None
    rec = _Recorder(settings, writer, progress)
    procs, readers, pids = [], {}, []
    complete = False
    try:
        deadline = time.monotonic() + timeout
        barrier = _start_workers(ctx, settings, planned, timeout, procs, pids, readers)  # noqa: F841 (kept alive)
        sentinels = {p.sentinel: rank for rank, p in enumerate(procs)}
        while not all(rec.done):
            left = deadline - time.monotonic()
            if left <= 0:
                raise BarrierLabTimeout(
                    f"the barrier lab did not finish within timeout={timeout:g} s "
                    f"({rec.written} of {settings.steps} steps done); the workers were stopped"
                    + (f" and the partial trace kept in {path}" if path else "")
                )
            ready = mp.connection.wait(list(readers) + list(sentinels), timeout=min(left, 0.5))
            for obj in ready:
                if obj in readers:
                    try:
                        msg = obj.recv()
                    except EOFError:
                        rank = readers.pop(obj)
                        obj.close()
                        if not rec.done[rank]:
                            _raise_died(procs[rank], rank, rec)
                        continue
                    rec.take(readers[obj], msg)
            for s in [s for s in ready if s in sentinels]:
                rank = sentinels.pop(s)
                _drain(rank, readers, rec)  # read what the worker sent before it exited, then judge
                if not rec.done[rank]:
                    _raise_died(procs[rank], rank, rec)
        complete = True
        return rec.result(planned, True, path, pids)
    except BaseException as exc:
        if not complete:
            try:
                exc.lab_result = rec.result(planned, False, path, pids)
            except Exception:  # pragma: no cover - never hide the first error
                pass
        raise
    finally:
        with _interrupts_deferred():  # a second Ctrl-C must not cut the clean-up short
            reap(procs, close=True)
            for reader in readers:
                reader.close()
            if writer is not None:
                writer.close(complete=complete)


def _start_workers(ctx, settings, planned, timeout, procs, pids, readers):
    """Start one process per rank, each with its pipe; fill ``procs``, ``pids``
    and ``readers`` as they start, so the caller's clean-up sees every one.

    Returns the barrier: the caller must hold it for the whole run (a spawned
    worker unpickles it after the start, and the parent's copy owns the
    semaphore)."""
    barrier = ctx.Barrier(settings.workers)
    for rank in range(settings.workers):
        reader, sender = ctx.Pipe(duplex=False)
        work = [settings.units(rank)] * settings.steps if settings.work == "fixed" else planned[:, rank].tolist()
        p = ctx.Process(
            target=_worker,
            args=(rank, work, settings.work, barrier, sender, WARMUP_ROUNDS, timeout),
            name=f"barrier-lab-worker-{rank}",
            daemon=True,
        )
        procs.append(p)
        p.start()
        pids.append(p.pid)
        sender.close()
        readers[reader] = rank
    return barrier


def _drain(rank, readers, rec):
    """Record every message a rank's pipe still holds."""
    for reader, r in list(readers.items()):
        if r == rank:
            while reader.poll():
                try:
                    rec.take(rank, reader.recv())
                except EOFError:
                    break


def _raise_died(proc, rank, rec):
    proc.join(0.2)
    code = proc.exitcode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
    hint = ""
    if rec.warm[rank] is None and code == 1 and _main_is_script():
        hint = (
            "; it failed while starting: when you run the lab from a script, put the call under "
            "`if __name__ == \"__main__\":`, because the spawn start method imports your script "
            "again in every worker"
        )
    raise RuntimeError(f"worker {rank} {how} after {rec.written} finished steps{hint}")


def _main_is_script():
    main = sys.modules.get("__main__")
    return getattr(main, "__spec__", None) is None and hasattr(main, "__file__")


# ------------------------------------------------------------------------ CLI
def configure(parser):
    """Add the ``straggle-edu barrier`` arguments to an argparse parser."""
    parser.add_argument("--workers", type=int, default=4,
                        help="worker processes W, 1..64, or 1..cores with --work compute or fixed (default 4)")
    parser.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    parser.add_argument("--step-seconds", type=float, default=0.05, help="base work time T per step, seconds (default 0.05)")
    parser.add_argument("--jitter", type=float, default=None,
                        help="coefficient of variation of the drawn work time (default 0.05; 0 with --work fixed)")
    parser.add_argument("--pause-prob", type=float, default=0.0, help="probability of a pause in a worker's step (default 0)")
    parser.add_argument("--pause-seconds", type=float, default=0.0, help="length of a pause, seconds (default 0)")
    parser.add_argument("--slow-rank", type=int, default=None, help="the one slow worker, 0..W-1 (default: none)")
    parser.add_argument("--slow-factor", type=float, default=None, help="how many times longer the slow worker works (default 2)")
    parser.add_argument("--work", choices=WORK_KINDS, default="sleep",
                        help="sleep (default); compute (a busy loop until the drawn time); fixed (the same numpy work "
                             "every step, so the spread is your machine's own jitter); one worker per core for the last two")
    parser.add_argument("--work-units", type=int, default=None,
                        help="with --work fixed: kernel passes per step (default: sized to --step-seconds on this machine)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the drawn work times (default 0)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop after this many seconds (default: 30 s plus three times the expected work)")
    parser.add_argument("--out", required=True, help="the per-rank trace CSV to write (its folder must exist)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def _text_progress(stream):
    def progress(done, total):
        stream.write("\r" + _("step {done}/{total}").format(done=done, total=total))
        if done == total:
            stream.write("\n")
        stream.flush()

    return progress


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


_FLAGS = {
    "workers": "--workers",
    "steps": "--steps",
    "step_seconds": "--step-seconds",
    "jitter": "--jitter",
    "pause_prob": "--pause-prob",
    "pause_seconds": "--pause-seconds",
    "slow_rank": "--slow-rank",
    "slow_factor": "--slow-factor",
    "seed": "--seed",
    "work_units": "--work-units",
    "timeout": "--timeout",
    "out": "--out",
}


def _with_flag_names(func, **kwargs):
    """Call func; reword a ValueError to name the command-line flag."""
    try:
        return func(**kwargs)
    except ValueError as exc:
        text = str(exc)
        name = text.split(" ", 1)[0]
        if name in _FLAGS:
            text = _FLAGS[name] + text[len(name):]
            for kind in WORK_KINDS:
                text = text.replace(f"work='{kind}'", f"--work {kind}")
            raise ValueError(text) from None
        raise


def run(args):
    """Run ``straggle-edu barrier``; return the exit code."""
    if args.slow_factor is not None and args.slow_rank is None:
        raise ValueError("--slow-factor needs --slow-rank (which worker is slow)")
    show = not args.quiet
    progress = _text_progress(sys.stderr) if show and sys.stderr.isatty() else None
    with sigterm_as(_raise_interrupt):
        try:
            result = _with_flag_names(
                run_barrier_lab,
                workers=args.workers,
                steps=args.steps,
                step_seconds=args.step_seconds,
                jitter=args.jitter,
                pause_prob=args.pause_prob,
                pause_seconds=args.pause_seconds,
                slow_rank=args.slow_rank,
                slow_factor=2.0 if args.slow_factor is None else args.slow_factor,
                work=args.work,
                out=args.out,
                seed=args.seed,
                timeout=args.timeout,
                progress=progress,
                work_units=args.work_units,
            )
        except KeyboardInterrupt as exc:
            done = getattr(getattr(exc, "lab_result", None), "steps_done", 0)
            print("\nstraggle-edu barrier: " + _("interrupted after {done} steps; the workers were stopped and the "
                                                "partial trace in {out} is marked '# incomplete'").format(done=done, out=args.out),
                  file=sys.stderr)
            return 130
        except (BarrierLabTimeout, RuntimeError) as exc:
            print(f"straggle-edu barrier: error: {exc}", file=sys.stderr)
            return 1
    if show:
        p = result.prediction()
        print(_("wrote {steps} steps x {workers} workers to {path}").format(
            steps=result.steps_done, workers=result.settings.workers, path=result.path))
        if result.settings.work == "fixed":
            print(_("fixed work: {units} kernel passes per step, sized to {ms:g} ms here; E[max] predicted from the "
                    "measured times ({predicted:.2f} ms) against the run's own mean slowest compute ({drawn:.2f} ms)").format(
                units=result.settings.work_units, ms=result.settings.step_seconds * 1e3,
                predicted=p.expected_max * 1e3, drawn=p.drawn_max * 1e3))
        print(p)
        print(_("slowest worker: rank {rank}; slowdown {slowdown:.3f}").format(rank=result.slowest_rank,
                                                                             slowdown=result.slowdown()))
        print(_("next: {command}").format(command=f"straggle-edu analyze {shlex.quote(str(result.path))}"))
    return 0
