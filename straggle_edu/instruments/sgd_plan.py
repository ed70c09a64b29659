"""The SGD experiment's settings, plan and result, shared by its two backends.

:class:`SGDSettings` (the CLI's flags, validated), :class:`SGDPlan` and
:func:`make_plan` (everything drawn from the seeds), :func:`reference_target`
(the loss that ``time_to_target_s`` times), :class:`SGDResult` with
:func:`write_csv` and :func:`summarize` (what a run measured). The backends,
:mod:`~straggle_edu.instruments.sgd_procs` and
:mod:`~straggle_edu.instruments.sgd_torch`, import this module, and
:mod:`~straggle_edu.instruments.sgd` (the entry points) imports both it and
the backends: so no module of the experiment imports one that imports it
back. See :mod:`~straggle_edu.instruments.sgd` for the schemes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validate import in_range, probability, require, whole
from ..models import sgd_schedule as plan_
from ..models.softmax import accuracy, init_weights, loss, make_length_data, weights_sha256

__all__ = [
    "SGDSettings",
    "SGDPlan",
    "SGDResult",
    "make_plan",
    "reference_target",
    "summarize",
    "write_csv",
    "SCHEMES",
    "SLOWS",
    "BACKENDS",
    "CSV_HEADER",
]

SCHEMES = plan_.SCHEMES
SLOWS = plan_.SLOWS
BACKENDS = ("multiprocessing", "torch")
MAX_WORKERS = 64
MAX_STEPS = 100_000
DEFAULT_LR = 0.2
DEFAULT_BATCH = 16
CSV_HEADER = "rank,step,compute_s,wait_s,comm_s,counted"
CURVE_POINTS = 200


@dataclass(frozen=True)
class SGDSettings:
    """Validated settings of one SGD run (the CLI's flags; see the module docstring).

    Examples
    --------
    >>> s = SGDSettings(scheme="backup", workers=4, backups=1)
    >>> s.processes, s.counted
    (5, 4)
    >>> SGDSettings(workers=0)
    Traceback (most recent call last):
    ...
    ValueError: workers must be a whole number in 1..64, got 0
    >>> SGDSettings(scheme="sync", backups=1)
    Traceback (most recent call last):
    ...
    ValueError: backups must be 0 for scheme 'sync' (only backup and drop use it), got 1
    """

    scheme: str = "sync"
    workers: int = 8
    backups: int = 0
    slow: str = "transient"
    p: float = 0.1
    stall: float = 4.0
    factor: float = 3.0
    long_share: float = 0.2
    long_factor: float = 4.0
    steps: int = 200
    period: int = 4
    lr: float = DEFAULT_LR
    batch: int = DEFAULT_BATCH
    drop_lr: str = "scale"
    base_step: float = 0.02
    seed: int = 0
    timing_seed: int = 0
    backend: str = "multiprocessing"
    target_loss: float | None = None

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)
        for name, options in (("scheme", SCHEMES), ("slow", SLOWS), ("backend", BACKENDS),
                              ("drop_lr", ("keep", "scale"))):
            require(getattr(self, name) in options, name, getattr(self, name), f"one of {', '.join(options)}")
        set_("workers", whole("workers", self.workers, 1, MAX_WORKERS))
        n = self.workers
        if self.scheme in ("backup", "drop"):
            set_("backups", whole("backups", self.backups, 0, n - 1))
        else:
            require(self.backups == 0, "backups", self.backups,
                    f"0 for scheme {self.scheme!r} (only backup and drop use it)")
        set_("p", probability("p", self.p))
        set_("stall", in_range("stall", self.stall, 0.0, 100.0))
        set_("factor", in_range("factor", self.factor, 1.0, 100.0))
        set_("long_share", in_range("long_share", self.long_share, 0.0, 0.5, low_open=True))
        set_("long_factor", in_range("long_factor", self.long_factor, 1.0, 100.0))
        set_("steps", whole("steps", self.steps, 1, MAX_STEPS))
        set_("period", whole("period", self.period, 1, 1000))
        if self.scheme == "local":
            require(self.steps % self.period == 0, "steps", self.steps,
                    f"a multiple of period={self.period} for scheme 'local' (one round = period steps)")
        set_("lr", in_range("lr", self.lr, 0.0, 100.0, low_open=True))
        set_("batch", whole("batch", self.batch, 1, 1024))
        set_("base_step", in_range("base_step", self.base_step, 0.0, 10.0, low_open=True))
        set_("seed", whole("seed", self.seed, 0))
        set_("timing_seed", whole("timing_seed", self.timing_seed, 0))
        if self.target_loss is not None:
            set_("target_loss", in_range("target_loss", self.target_loss, 0.0, low_open=True))

    @property
    def processes(self):
        """Processes the scheme runs (N + b for backup)."""
        return plan_.processes_for(self.scheme, self.workers, self.backups)

    @property
    def counted(self):
        """Gradients that count per step (N - b for drop)."""
        return plan_.counted_per_step(self.scheme, self.workers, self.backups)

    @property
    def step_lr(self):
        """The learning rate applied (x (N - b)/N for drop with drop_lr='scale')."""
        if self.scheme == "drop" and self.drop_lr == "scale":
            return self.lr * (self.workers - self.backups) / self.workers
        return self.lr

    def data_kwargs(self):
        """How the data is generated (a worker rebuilds it from these)."""
        return {"seed": self.seed, "long_share": self.long_share, "long_factor": self.long_factor}


@dataclass(frozen=True, eq=False)
class SGDPlan:
    """Everything drawn from the seeds: data, initial weights, batches, timing.

    ``idx`` is (steps, processes, batch); ``planned`` (steps, processes) the
    gradient times in seconds and ``counted`` which gradients count (for
    ``balanced``, equal splits; the run re-plans each step from measured speeds).
    """

    settings: SGDSettings
    data: object
    W0: np.ndarray
    idx: np.ndarray
    factor: np.ndarray
    stall: np.ndarray
    planned: np.ndarray
    counted: np.ndarray
    mean_batch_length: float

    def duration(self, step, rank, samples):
        """Planned gradient time (seconds) of ``samples`` for process ``rank`` at ``step``."""
        s = self.settings
        lengths = float(self.data.length[samples].sum())
        return float(plan_.durations(lengths, self.mean_batch_length, self.factor[step, rank],
                                     self.stall[step, rank], s.base_step))


def make_plan(settings):
    """Draw the plan of a run from its settings (pure: no processes, no clock).

    Examples
    --------
    >>> p = make_plan(SGDSettings(scheme="backup", workers=3, backups=1, steps=5))
    >>> p.idx.shape, p.planned.shape, p.counted.sum(axis=1).tolist()
    ((5, 4, 16), (5, 4), [3, 3, 3, 3, 3])
    """
    s = settings
    data = make_length_data(**s.data_kwargs())
    idx = plan_.batch_plan(data, s.processes, s.steps, s.batch, s.slow, s.seed)
    factor, stall = plan_.slowness(s.slow, s.steps, s.processes, p=s.p, stall=s.stall, factor=s.factor,
                                   timing_seed=s.timing_seed)
    mean_len = s.batch * data.mean_length
    planned = plan_.durations(data.length[idx].sum(axis=2), mean_len, factor, stall, s.base_step)
    counted = plan_.counted_mask(planned, s.counted)
    return SGDPlan(s, data, init_weights(data, s.seed), idx, factor, stall, planned, counted, mean_len)


def reference_target(settings):
    """sync's test loss after 80% of its steps at the same seed (replayed).

    Examples
    --------
    >>> round(reference_target(SGDSettings(steps=10)), 3) < 1.6
    True
    """
    s = settings
    data = make_length_data(**s.data_kwargs())
    idx = plan_.batch_plan(data, s.workers, s.steps, s.batch, s.slow, s.seed)
    stop = max(1, int(math.ceil(0.8 * s.steps)))
    __, losses = plan_.sync_reference(data, init_weights(data, s.seed), idx[:stop], s.lr)
    return float(losses[-1])


@dataclass(frozen=True, eq=False)
class SGDResult:
    """What one run measured. Times in seconds; see ``to_dict`` for the JSON.

    ``compute``, ``wait``, ``comm`` and ``counted`` have shape (steps,
    processes): the CSV's columns. ``finish`` is each gradient's measured
    arrival (seconds after its step, or local round, began; NaN when
    cancelled) and ``planned`` the planned arrival on the same clock.
    """

    settings: SGDSettings
    wall_s: float
    final_loss: float
    final_accuracy: float
    accuracy_long: float
    target_loss: float
    time_to_target_s: float | None
    gradients_applied: int
    gradients_discarded: int
    gradient_s_computed: float
    gradient_s_discarded: float
    weights: np.ndarray
    curve: list
    compute: np.ndarray
    wait: np.ndarray
    comm: np.ndarray
    counted: np.ndarray
    finish: np.ndarray
    planned: np.ndarray
    complete: bool = True
    pids: tuple = field(default=())

    @property
    def worker_s_reserved(self):
        """What a bill charges: processes x wall_s."""
        return self.settings.processes * self.wall_s

    @property
    def weights_sha256(self):
        return weights_sha256(self.weights)

    def to_dict(self):
        """The result object: echoed settings, outcomes, accounting, weights hash, curve."""
        s = self.settings
        echo = {k: getattr(s, k) for k in ("scheme", "workers", "backups", "slow", "steps", "seed",
                                           "timing_seed", "backend")}
        echo["processes"] = s.processes
        out = {k: getattr(self, k) for k in (
            "wall_s", "final_loss", "final_accuracy", "accuracy_long", "target_loss", "time_to_target_s",
            "gradients_applied", "gradients_discarded", "worker_s_reserved", "gradient_s_computed",
            "gradient_s_discarded", "weights_sha256", "curve")}
        return {**echo, **out}

    def csv_rows(self):
        """The per-process rows ``(rank, step, compute_s, wait_s, comm_s, counted)``."""
        S, P = self.compute.shape
        return [(r, t, self.compute[t, r], self.wait[t, r], self.comm[t, r], int(self.counted[t, r]))
                for t in range(S) for r in range(P)]


def write_csv(result, path, complete=True):
    """Write the per-process CSV (``rank,step,compute_s,wait_s,comm_s,counted``)."""
    from .rank_csv import check_out_path

    path = check_out_path(path)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(CSV_HEADER + "\n")
        for r, t, c, w, m, k in result.csv_rows():
            f.write(f"{r},{t},{c:.9f},{w:.9f},{m:.9f},{k}\n")
        if not complete:
            f.write("# incomplete\n")
    return path


def summarize(settings, data, W, curve_rows, target, **acct):
    """Outcomes from the final weights and the per-step curve rows
    ``(step, wall_s, gradients_applied, loss)``."""
    L = data.long_test
    rows = np.asarray(curve_rows, dtype=float).reshape(-1, 4)
    hit = np.flatnonzero(rows[:, 3] <= target)
    pick = np.unique(np.linspace(0, len(rows) - 1, min(CURVE_POINTS, len(rows))).round().astype(int))
    curve = [{"step": int(r[0]), "wall_s": float(r[1]), "gradients_applied": int(r[2]), "loss": float(r[3])}
             for r in rows[pick]] if len(rows) else []
    return dict(
        final_loss=loss(W, data.X_test, data.y_test),
        final_accuracy=accuracy(W, data.X_test, data.y_test),
        accuracy_long=accuracy(W, data.X_test[L], data.y_test[L]),
        target_loss=float(target),
        time_to_target_s=float(rows[hit[0], 1]) if len(hit) else None,
        weights=W,
        curve=curve,
        **acct,
    )
