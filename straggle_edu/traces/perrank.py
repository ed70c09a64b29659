"""Per-rank step times: the simple CSV and its what-if analysis.

The format (written by the live barrier lab and the cluster probe)::

    step,rank,duration_s,phase
    0,0,0.050123,compute
    0,0,0.000210,wait
    0,1,0.101000,compute
    # incomplete

- ``step`` and ``rank``: whole numbers >= 0.
- ``duration_s``: seconds, >= 0.
- ``phase`` (optional): ``compute`` (the rank's own work), ``wait`` (blocked
  at the barrier or in a collective) or ``comm`` (data transfer). Without the
  column every row is ``compute``. A rank's work in a step is the sum of its
  ``compute`` rows.
- Lines starting with ``#`` are comments; ``# incomplete`` marks a run that
  stopped early, whose last step may lack some ranks (it is dropped).

The SGD experiment (``straggle-edu sgd``) writes one row per rank and step
instead, ``rank,step,compute_s,wait_s,comm_s,counted``: ``counted`` is 1 when
the rank's gradient was applied and 0 when it was late and discarded (a
backup worker's spare). A step then ends at its last *counted* arrival, so
the analysis takes the max and the mean over the counted ranks only.

The analysis uses only the ``compute`` rows (the barrier model):

- ideal step time = the mean over ranks of the step's work;
- step time = the max over ranks (the barrier waits for the slowest);
- S = mean(max) / mean(ideal), per step max / ideal;
- S_r (``by_rank``): only rank r keeps its work, every other rank gets the
  step's mean, so the step takes max(work_r, mean).

One 2x rank among four gives S = 2 / ((2 + 1 + 1 + 1) / 4) = 1.6, not 2:
the ideal is a mean that includes the straggler.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import check_memory, require
from ..i18n import N_
from ._table import column_error, display_path, float_column, int_column, read_table, require_columns, str_column
from .result import Analysis, Note

__all__ = ["RankTrace", "read_rank_csv", "rank_trace_from_times", "analyze_rank_times", "analyze_ranks"]

HEADER = "step,rank,duration_s,phase"
INCOMPLETE = "# incomplete"
PHASES = ("compute", "wait", "comm")


@dataclass(frozen=True, eq=False)
class RankTrace:
    """Per-rank, per-step times (seconds) of one job.

    Attributes
    ----------
    format : str
        ``"per-rank"``.
    source : str
        Where it came from.
    steps, ranks : numpy.ndarray
        Step ids (S,) and rank ids (R,), sorted.
    compute, wait, comm : numpy.ndarray
        Shape (S, R): each rank's compute, waiting and transfer time per step.
    recorded : numpy.ndarray
        Shape (S,): the recorded step time (the slowest rank's total).
    incomplete : bool
        The writer marked the file ``# incomplete``.

    Examples
    --------
    >>> t = rank_trace_from_times([[1.0, 2.0], [1.0, 1.0]])   # 2 steps x 2 ranks, seconds
    >>> t
    RankTrace(format='per-rank', ranks=2, steps=2, source='<memory>')
    >>> t.recorded.tolist()   # each step waits for its slowest rank
    [2.0, 1.0]
    """

    format: str
    source: str
    steps: np.ndarray
    ranks: np.ndarray
    compute: np.ndarray
    wait: np.ndarray
    comm: np.ndarray
    recorded: np.ndarray
    incomplete: bool = False
    counted: np.ndarray | None = None

    @property
    def n_ranks(self):
        return len(self.ranks)

    @property
    def n_steps(self):
        return len(self.steps)

    def __repr__(self):
        return (
            f"RankTrace(format={self.format!r}, ranks={self.n_ranks}, steps={self.n_steps}, "
            f"source={self.source!r})"
        )


def rank_trace_from_times(compute, *, wait=None, comm=None, steps=None, ranks=None, source="<memory>",
                          format="per-rank", recorded=None):
    """Build a :class:`RankTrace` from arrays of shape (steps, ranks), in seconds.

    Examples
    --------
    >>> t = rank_trace_from_times([[1.0, 2.0], [1.0, 1.0]])
    >>> t.n_steps, t.n_ranks
    (2, 2)
    """
    compute = np.asarray(compute, dtype=float)
    require(compute.ndim == 2 and compute.size > 0, "compute", compute, "a non-empty 2-D array (steps x ranks)")
    require(np.isfinite(compute).all() and (compute >= 0).all(), "compute", compute, "finite times >= 0 seconds")
    zeros = np.zeros_like(compute)
    wait = zeros if wait is None else np.asarray(wait, dtype=float)
    comm = zeros if comm is None else np.asarray(comm, dtype=float)
    for name, arr in (("wait", wait), ("comm", comm)):
        require(arr.shape == compute.shape, name, arr, f"an array of shape {compute.shape}")
        require(np.isfinite(arr).all() and (arr >= 0).all(), name, arr, "finite times >= 0 seconds")
    S, R = compute.shape
    steps = np.arange(S) if steps is None else np.asarray(steps, dtype=np.int64)
    ranks = np.arange(R) if ranks is None else np.asarray(ranks, dtype=np.int64)
    if recorded is None:
        recorded = (compute + wait + comm).max(axis=1)
    return RankTrace(format, source, steps, ranks, compute, wait, comm, np.asarray(recorded, float))


def read_rank_csv(path):
    """Read a per-rank step-time CSV (``step,rank,duration_s[,phase]``).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file. It is only read, never modified.

    Returns
    -------
    RankTrace

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = p.write_text("step,rank,duration_s\\n0,0,1.0\\n0,1,2.0\\n")
    >>> read_rank_csv(p).compute.tolist()
    [[1.0, 2.0]]
    """
    path = Path(path)
    shown = display_path(path)
    cols, comments = read_table(path)
    cols = {k.strip().lower(): v for k, v in cols.items()}
    if "compute_s" in cols:
        return _read_wide(path, shown, cols, comments)
    require_columns(shown, cols, ["step", "rank", "duration_s"], "per-rank trace")
    step = int_column(shown, cols, "step")
    rank = int_column(shown, cols, "rank")
    dur = float_column(shown, cols, "duration_s", expected="a duration in seconds >= 0", low=0.0)
    n = len(step)
    if "phase" in cols:
        codes, labels = str_column(shown, cols, "phase")
        labels = np.asarray([str(x).lower() for x in labels], dtype=object)
        known = np.isin(labels, PHASES)
        if not known.all():
            bad = np.isin(codes, np.flatnonzero(~known))
            i = int(np.flatnonzero(bad)[0])
            raise column_error(shown, "phase", i + 1, f"one of {', '.join(PHASES)}", labels[codes[i]])
        phase = np.array([PHASES.index(x) for x in labels], dtype=np.int64)[codes]
    else:
        phase = np.zeros(n, dtype=np.int64)
    incomplete = any(c.strip().lower() == "incomplete" for c in comments)

    steps, si = np.unique(step, return_inverse=True)
    ranks, ri = np.unique(rank, return_inverse=True)
    S, R = len(steps), len(ranks)
    check_memory(3 * 8 * S * R, f"a per-rank trace of {S} steps x {R} ranks")
    table = np.zeros((3, S, R))
    np.add.at(table, (phase, si, ri), dur)
    seen = np.zeros((S, R), dtype=bool)
    seen[si, ri] = True
    if not seen.all():
        missing_steps = np.flatnonzero(~seen.all(axis=1))
        if incomplete and missing_steps.tolist() == [S - 1]:
            warnings.warn(
                f"{shown}: the run was interrupted (# incomplete); dropping its last step "
                f"{int(steps[-1])}, which has rows for only {int(seen[-1].sum())} of {R} ranks",
                stacklevel=2,
            )
            keep = slice(0, S - 1)
            steps, table, seen = steps[keep], table[:, keep], seen[keep]
            if len(steps) == 0:
                raise column_error(shown, problem="no complete step (the run was interrupted during its first step)")
        else:
            s = int(missing_steps[0])
            r = int(np.flatnonzero(~seen[s])[0])
            raise column_error(
                shown, "rank", layout=True, problem=f"no row for rank {int(ranks[r])} in step {int(steps[s])} "
                f"(every step needs a row for every rank; ranks {int(ranks[0])}..{int(ranks[-1])} appear)"
            )
    compute, wait, comm = table
    has_compute = np.zeros_like(seen)
    comp_rows = phase == 0
    has_compute[si[comp_rows & (si < len(steps))], ri[comp_rows & (si < len(steps))]] = True
    if not has_compute.all():
        s, r = np.argwhere(~has_compute)[0]
        raise column_error(
            shown, "phase", layout=True, problem=f"no compute row for rank {int(ranks[r])} in step "
            f"{int(steps[s])}; the analysis needs each rank's compute time in every step"
        )
    recorded = (compute + wait + comm).max(axis=1)
    return RankTrace("per-rank", str(path), steps, ranks, compute, wait, comm, recorded, incomplete)


WIDE_HEADER = "rank,step,compute_s,wait_s,comm_s,counted"


def _read_wide(path, shown, cols, comments):
    """The SGD experiment's one-row-per-rank-and-step format."""
    require_columns(shown, cols, ["rank", "step", "compute_s"], "per-rank trace")
    step, rank = int_column(shown, cols, "step"), int_column(shown, cols, "rank")
    values = {c: float_column(shown, cols, c, expected="a duration in seconds >= 0", low=0.0)
              for c in ("compute_s", "wait_s", "comm_s") if c in cols}
    counted = int_column(shown, cols, "counted") if "counted" in cols else np.ones(len(step), np.int64)
    if ((counted != 0) & (counted != 1)).any():
        i = int(np.flatnonzero((counted != 0) & (counted != 1))[0])
        raise column_error(shown, "counted", i + 1, "0 or 1", int(counted[i]))
    steps, si = np.unique(step, return_inverse=True)
    ranks, ri = np.unique(rank, return_inverse=True)
    S, R = len(steps), len(ranks)
    check_memory(4 * 8 * S * R, f"a per-rank trace of {S} steps x {R} ranks")
    table = np.zeros((4, S, R))
    for i, c in enumerate(("compute_s", "wait_s", "comm_s")):
        if c in values:
            table[i, si, ri] = values[c]
    table[3, si, ri] = counted
    seen = np.zeros((S, R), dtype=bool)
    seen[si, ri] = True
    incomplete = any(c.strip().lower() == "incomplete" for c in comments)
    keep = seen.all(axis=1)
    if not keep.all():
        s = int(np.flatnonzero(~keep)[0])
        raise column_error(shown, "step", layout=True, problem=f"step {int(steps[s])} lacks a row for some rank "
                           f"(every step needs a row for every rank)")
    compute, wait, comm, cnt = table
    cnt = cnt.astype(bool)
    recorded = np.where(cnt, compute + wait + comm, 0.0).max(axis=1)
    return RankTrace("per-rank", str(path), steps, ranks, compute, wait, comm, recorded, incomplete, cnt)


def analyze_ranks(trace):
    """What-if analysis of a :class:`RankTrace` (the barrier model).

    Returns
    -------
    Analysis
        ``slowdown``, ``waste``, ``per_step``, ``by_rank`` and ``replay_error``;
        ``details["noise_floor"]``, the S that ranks of equal speed reach by
        their own step-to-step spread (None with one step; see
        :func:`~straggle_edu.traces.noise.noise_floor`).
        ``step_time`` is the slowest rank's compute and ``ideal_step_time`` the
        mean rank's. For ``replay_error`` the replayed step adds the step's
        median transfer (``comm``) and is compared with the recorded step, the
        slowest rank's total (compute + wait + comm).

    Examples
    --------
    >>> a = analyze_ranks(rank_trace_from_times([[2.0, 1.0, 1.0, 1.0]]))
    >>> round(a.slowdown, 6), round(a.waste, 6), dict(a.by_rank)
    (1.6, 0.375, {0: 1.6, 1: 1.0, 2: 1.0, 3: 1.0})

    With a ``counted`` mask (backup workers), a step ends at its last
    counted arrival; discarded ranks count as the step's mean:

    >>> import dataclasses
    >>> t = rank_trace_from_times([[2.0, 1.0, 1.0, 1.0]])
    >>> t = dataclasses.replace(t, counted=np.array([[False, True, True, True]]))
    >>> round(analyze_ranks(t).slowdown, 6)
    1.0
    """
    work = trace.compute
    if trace.counted is not None:
        cnt = trace.counted
        mean = np.where(cnt, work, 0.0).sum(axis=1) / np.maximum(cnt.sum(axis=1), 1)
        work = np.where(cnt, work, mean[:, None])
    ideal = work.mean(axis=1)
    if (ideal <= 0).any():
        s = int(np.flatnonzero(ideal <= 0)[0])
        raise column_error(
            trace.source, "duration_s", problem=f"every compute time of step {int(trace.steps[s])} is 0, "
            f"so the step has no ideal time to compare with"
        )
    actual = work.max(axis=1)
    per_step = actual / ideal
    S = float(actual.mean() / ideal.mean())
    per_rank_step = np.maximum(work, ideal[:, None]) / ideal[:, None]  # (S, R)
    by_rank = np.maximum(work, ideal[:, None]).mean(axis=0) / ideal.mean()
    transfer = np.median(trace.comm, axis=1)
    replay = actual + transfer
    recorded = trace.recorded
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(recorded > 0, np.abs(replay - recorded) / recorded, 0.0)
    total = float((trace.compute + trace.wait + trace.comm).sum())
    from .noise import noise_floor

    details = {
        "wait_share": float(trace.wait.sum()) / total if total > 0 else 0.0,
        "comm_share": float(trace.comm.sum()) / total if total > 0 else 0.0,
        "noise_floor": noise_floor(work, ideal),
    }
    notes = []
    if trace.incomplete:
        notes.append(Note(N_("the run was interrupted (# incomplete); only its complete steps are analysed")))
    return Analysis(
        format=trace.format,
        source=trace.source,
        slowdown=S,
        waste=1.0 - 1.0 / S,
        per_step={int(s): float(v) for s, v in zip(trace.steps, per_step)},
        replay_error=float(rel.mean()),
        steps=trace.steps,
        step_time=actual,
        ideal_step_time=ideal,
        recorded_step_time=recorded,
        workers=tuple(int(r) for r in trace.ranks),
        worker_step_slowdown=per_rank_step.T,
        by_rank={int(r): float(v) for r, v in zip(trace.ranks, by_rank)},
        notes=tuple(notes),
        details=details,
    )


def analyze_rank_times(compute, **kwargs):
    """What-if analysis straight from an array of work times (steps x ranks).

    Examples
    --------
    >>> round(analyze_rank_times([[2.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]).slowdown, 4)
    1.3333
    """
    return analyze_ranks(rank_trace_from_times(compute, **kwargs))
