"""The study's fleet figures, from the rows of ``jobs.parquet``: what ``DIR/fleet.json`` holds.

Lin et al. (OSDI 2025) report, over 3,000+ jobs: the share of jobs slowed by
at least 10% (S >= 1.1), the distribution of S and of the waste 1 - 1/S,
the GPU-hours lost, and what kind of cause each job's slowdown has.
:func:`fleet_figures` computes the same from any fleet's rows.

Definitions
-----------
analysed
    a row with a slowdown and no error. Every share below is over the
    analysed jobs (the GPU-hours ones over those whose ``gpus`` and
    ``hours`` are known).
quantiles
    numpy's default (linear interpolation between order statistics).
CDF
    ``[[x, share of jobs with a value <= x], ...]`` at every distinct value,
    thinned to at most :data:`CDF_POINTS` points (evenly spaced in rank) for
    large fleets; the last point is always the maximum, at share 1.
slowed_jobs
    the analysed jobs at S >= 1.1 (:data:`SLOWED`), the study's line.
slowed_single_worker, slowed_single_dp_rank, share_slowed_single_worker, share_slowed_single_dp_rank
    of the slowed jobs: how many, and what share, have the ``culprit_where``
    ``single-worker`` (one worker explains most of the excess, alone, step
    after step) or ``single-dp-rank`` (one DP rank does). A job whose top
    worker explains most of the excess in a few steps only (a GC pause, a
    mix of causes) does not count: see :func:`culprit_where`'s persistence
    rule.
lost_curve
    ``{"by_lost": [[share of jobs, share of GPU-hours lost], ...], "by_waste":
    [...]}``: the cumulative share of all GPU-hours lost held by the jobs,
    taken in order of their GPU-hours lost (or of their waste), largest first;
    from [0, 0] to [1, 1], thinned as the CDFs are. Over the jobs whose
    GPU-hours lost are known.
demo
    present only when the fleet is the demo (:func:`straggle_edu.fleet.demo.demo_of`):
    its seed, its ``demo.json``, and the study's figures it was calibrated to.
worst
    the ten jobs with the most GPU-hours lost (jobs whose GPU-hours are
    unknown come after, by S), with the ``straggle-edu analyze`` line that
    opens each.

Every figure is computed from the rows in job-id order, and every sum is
``math.fsum``: two runs of one fleet write the same ``fleet.json``, whatever
order their jobs finished in.

The kind of culprit (:func:`culprit_class`, :func:`culprit_where`) is decided
when a job is analysed, from its :class:`~straggle_edu.traces.Analysis`, and
stored in its row.
"""

from __future__ import annotations

import math
import shlex

import numpy as np

from ..traces.diagnose import PERSISTENT

__all__ = ["fleet_figures", "analysis_row", "culprit_class", "culprit_where", "culprit_steps", "row_order",
           "COMPUTE_OPTYPES", "WHERE", "CDF_POINTS", "SLOWED", "DOMINANT", "PERSISTS"]

SLOWED = 1.1  # "slowed by at least 10%"
DOMINANT = 0.5  # "most of the excess": a share above one half
PERSISTS = 0.5  # a culprit persists when it carries its share in more than half of the steps
CDF_POINTS = 1001
WHERE = ("last-stage", "single-dp-rank", "single-worker", "spread")
# Local work, whose ideal is a mean in the what-if engine; every other optype is communication.
# "compute": a profiler trace's compute segments (its other kinds are its collectives)
COMPUTE_OPTYPES = ("forward-compute", "backward-compute", "optimizer", "gc", "compute")


def culprit_class(optype):
    """``"compute"`` for a compute optype, ``"communication"`` for the rest, None for no optype.

    The artifact's groups ``forward-pp-comm`` and ``backward-pp-comm`` (sends
    and receives) are communication.

    Examples
    --------
    >>> culprit_class("backward-compute"), culprit_class("forward-pp-comm"), culprit_class(None)
    ('compute', 'communication', None)
    """
    if optype is None:
        return None
    return "compute" if optype in COMPUTE_OPTYPES else "communication"


def _share(s_x, s):
    """The share of the excess S - 1 that X alone explains: (S_X - 1) / (S - 1)."""
    return (s_x - 1.0) / (s - 1.0)


def culprit_where(row):
    """Where a job's slowdown sits: ``"single-worker"``, ``"single-dp-rank"``, ``"last-stage"`` or ``"spread"``.

    With share(X) = (S_X - 1) / (S - 1), the part of the excess that X alone
    explains (X keeps its recorded times, everything else is ideal), the
    first rule that holds wins:

    1. ``"single-worker"``: the top worker's share is above 0.5, the
       runner-up worker's is not (one worker, alone; for per-rank traces, one
       rank), and the top worker persists (below);
    2. ``"single-dp-rank"``: the same for DP ranks (a slow host across its stages);
    3. ``"last-stage"``: the top stage is the last one (of more than one), its
       share is above 0.5 and the runner-up stage's is not (stage imbalance);
    4. ``"spread"``: otherwise (many workers, sequence lengths, GC pauses
       that move from worker to worker, noise).

    A barrier makes one slow worker slow its whole DP group, so a stage that
    is slow everywhere lights up every one of its workers: hence "and the
    runner-up's is not". A worker (or DP rank) *persists* when it carries
    at least half of the job's excess in more than half of the steps
    (:func:`culprit_steps`; the row's ``worker_steps`` and ``dp_rank_steps``):
    a slow GPU or a slow link does, step after step, while a GC pause or a
    burst of long sequences lands on one worker in a few steps and on
    others in the rest. Only a persistent culprit is a host to replace; a
    transient one goes on to the next rules. "More than half", not "half":
    in a job of two DP ranks, a cause that alternates between them
    carries half of the steps on each. None when S <= 1 or S is unknown.

    Parameters
    ----------
    row : mapping
        ``slowdown``, ``top_worker_s``, ``top_dp_rank_s``, ``top_stage``,
        ``top_stage_s``, ``worker_steps`` and ``dp_rank_steps`` (the columns
        of the row), with the runner-ups' ``second_worker_s``,
        ``second_dp_rank_s``, ``second_stage_s`` and the job's
        ``last_stage``, which the engine adds from the analysis and does not
        store. A missing value fails its rule.

    Examples
    --------
    >>> culprit_where({"slowdown": 1.5, "top_worker_s": 1.5, "second_worker_s": 1.01, "worker_steps": 1.0})
    'single-worker'
    >>> culprit_where({"slowdown": 1.5, "top_worker_s": 1.5, "second_worker_s": 1.01, "worker_steps": 0.25})
    'spread'
    >>> culprit_where({"slowdown": 1.4, "top_worker_s": 1.4, "second_worker_s": 1.4, "top_dp_rank_s": 1.4,
    ...                "second_dp_rank_s": 1.4, "top_stage": 3, "last_stage": 3, "top_stage_s": 1.4,
    ...                "second_stage_s": 1.02})
    'last-stage'
    """
    s = row.get("slowdown")
    if s is None or not math.isfinite(s) or s <= 1.0:
        return None

    def alone(top, second):
        t, r = row.get(top), row.get(second)
        return t is not None and _share(t, s) > DOMINANT and (r is None or _share(r, s) <= DOMINANT)

    def persists(steps):
        share = row.get(steps)
        return share is not None and share > PERSISTS

    if alone("top_worker_s", "second_worker_s") and persists("worker_steps"):
        return "single-worker"
    if alone("top_dp_rank_s", "second_dp_rank_s") and persists("dp_rank_steps"):
        return "single-dp-rank"
    last = row.get("last_stage")
    if last is not None and last > 0 and row.get("top_stage") == last and alone("top_stage_s", "second_stage_s"):
        return "last-stage"
    return "spread"


def culprit_steps(per_step, slowdown):
    """The share of steps in which a culprit carries at least half of the job's excess: S_X(step) - 1 >= (S - 1) / 2.

    ``per_step`` is the culprit's S_X in each step (the same half as
    :data:`straggle_edu.traces.diagnose.PERSISTENT`). None when there is no
    excess or no step.

    Examples
    --------
    >>> culprit_steps([1.5, 1.5, 1.0, 1.5], 1.375), culprit_steps([1.9, 1.0, 1.0, 1.0], 1.2)
    (0.75, 0.25)
    """
    per = np.asarray(per_step, dtype=float)
    if slowdown is None or not math.isfinite(slowdown) or slowdown <= 1.0 or per.size == 0:
        return None
    return float(np.mean(per - 1.0 >= PERSISTENT * (slowdown - 1.0)))


def _rows(rows):
    """A list of dicts from a list of dicts or a pandas DataFrame (NaN and NA read as None)."""
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    out = []
    for r in rows:
        out.append({k: (None if v is None or (isinstance(v, float) and math.isnan(v)) or _is_na(v) else v)
                    for k, v in r.items()})
    return out


def _is_na(v):
    return type(v).__name__ in ("NAType", "NaTType")


def _quantiles(values):
    if not len(values):
        return {"p50": None, "p90": None, "p99": None, "max": None}
    q = np.quantile(values, [0.5, 0.9, 0.99])
    return {"p50": float(q[0]), "p90": float(q[1]), "p99": float(q[2]), "max": float(np.max(values))}


def _cdf(values):
    """``[[x, share <= x], ...]`` at each distinct value, at most CDF_POINTS of them."""
    if not len(values):
        return []
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    last = np.flatnonzero(np.append(x[1:] != x[:-1], True))  # the last index of each distinct value
    if len(last) > CDF_POINTS:
        last = last[np.unique(np.linspace(0, len(last) - 1, CDF_POINTS).round().astype(int))]
    return [[float(x[i]), (i + 1) / n] for i in last]


def _gpu_hours(r):
    g, h = r.get("gpus"), r.get("hours")
    return None if g is None or h is None else float(g) * float(h)


def _by(ok, key, keys):
    parts = {k: [] for k in keys}
    for r in ok:
        lost = r.get("gpu_hours_lost")
        if lost is not None:
            parts.setdefault(r.get(key) or "unattributed", []).append(float(lost))
    return {k: math.fsum(v) for k, v in parts.items()}


def row_order(row):
    """The key that puts rows in job-id order (then path): the order of the tables and of every sum.

    Examples
    --------
    >>> sorted([{"job_id": "b"}, {"job_id": "a", "path": "x"}], key=row_order)[0]["job_id"]
    'a'
    """
    return str(row.get("job_id")), str(row.get("path"))


def _worst(ok, top=10):
    def order(r):
        lost = r.get("gpu_hours_lost")
        return (lost is None, -(lost or 0.0), -r["slowdown"], str(r.get("job_id")))

    return [{"job_id": r.get("job_id"), "slowdown": r["slowdown"], "waste": r.get("waste"),
             "gpu_hours_lost": r.get("gpu_hours_lost"), "path": r.get("path"),
             "analyze": "straggle-edu analyze " + shlex.quote(str(r.get("path")))} for r in sorted(ok, key=order)[:top]]


def _lorenz(lost):
    """``[[share of jobs, share of the total], ...]`` of ``lost`` taken largest first, from [0, 0]; thinned."""
    x = np.asarray(lost, dtype=float)
    total = math.fsum(x)
    if not len(x) or total <= 0:
        return []
    cum = np.cumsum(x) / total
    keep = np.arange(len(x))
    if len(x) > CDF_POINTS:
        keep = np.unique(np.linspace(0, len(x) - 1, CDF_POINTS).round().astype(int))
    return [[0.0, 0.0]] + [[float(i + 1) / len(x), min(float(cum[i]), 1.0)] for i in keep]


def _lost_curve(ok):
    known = [r for r in ok if r.get("gpu_hours_lost") is not None]
    by_lost = sorted(known, key=lambda r: -r["gpu_hours_lost"])  # stable: ties stay in job-id order
    by_waste = sorted(known, key=lambda r: -(r.get("waste") if r.get("waste") is not None else 1.0 - 1.0 / r["slowdown"]))
    return {"by_lost": _lorenz([r["gpu_hours_lost"] for r in by_lost]),
            "by_waste": _lorenz([r["gpu_hours_lost"] for r in by_waste])}


def _slowed_by(slowed, where):
    return sum(r.get("culprit_where") == where for r in slowed)


def fleet_figures(rows, demo=None):
    """The fleet figures of ``DIR/fleet.json`` from the job rows (a list of dicts or a DataFrame).

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        The fleet's rows, in any order.
    demo : dict, optional
        The demo's label (:func:`straggle_edu.fleet.demo.demo_of`), kept as ``demo``.

    Examples
    --------
    >>> rows = [{"job_id": "a", "path": "a.parquet", "slowdown": 1.25, "waste": 0.2, "gpus": 8, "hours": 10.0,
    ...          "gpu_hours_lost": 16.0, "culprit_class": "compute", "culprit_where": "single-worker",
    ...          "worker_share": 0.9},
    ...         {"job_id": "b", "path": "b.parquet", "slowdown": 1.0, "waste": 0.0, "gpus": 8, "hours": 10.0,
    ...          "gpu_hours_lost": 0.0},
    ...         {"job_id": "c", "path": "c.csv", "error": "c.csv: the file is empty"}]
    >>> f = fleet_figures(rows)
    >>> f["jobs"], f["analysed"], f["errors"], f["share_slowed_10pct"], f["gpu_hours_lost"]
    (3, 2, 1, 0.5, 16.0)
    >>> f["worst"][0]["analyze"], f["slowed_jobs"], f["share_slowed_single_worker"]
    ('straggle-edu analyze a.parquet', 1, 1.0)
    """
    rows = sorted(_rows(rows), key=row_order)
    ok = [r for r in rows if r.get("error") is None and r.get("slowdown") is not None]
    s = np.array([r["slowdown"] for r in ok], dtype=float)
    waste = np.array([r["waste"] if r.get("waste") is not None else 1.0 - 1.0 / r["slowdown"] for r in ok])
    gh = [(g, r["slowdown"]) for r in ok if (g := _gpu_hours(r)) is not None]
    total = math.fsum(g for g, _ in gh)
    slowed = [r for r in ok if r["slowdown"] >= SLOWED]
    one_worker, one_dp_rank = _slowed_by(slowed, "single-worker"), _slowed_by(slowed, "single-dp-rank")
    figures = {
        "jobs": len(rows),
        "analysed": len(ok),
        "errors": sum(r.get("error") is not None for r in rows),
        "share_slowed_10pct": float(np.mean(s >= SLOWED)) if len(s) else None,
        "share_slowed_10pct_gpu_hours": math.fsum(g for g, x in gh if x >= SLOWED) / total if total > 0 else None,
        "slowdown_quantiles": _quantiles(s),
        "waste_quantiles": _quantiles(waste),
        "slowdown_cdf": _cdf(s),
        "waste_cdf": _cdf(waste),
        "gpu_hours": float(total),
        "gpu_hours_lost": math.fsum(r["gpu_hours_lost"] for r in ok if r.get("gpu_hours_lost") is not None),
        "gpu_hours_lost_by_class": _by(ok, "culprit_class", ("compute", "communication")),
        "gpu_hours_lost_by_where": _by(ok, "culprit_where", WHERE),
        "slowed_jobs": len(slowed),
        "slowed_single_worker": one_worker,
        "slowed_single_dp_rank": one_dp_rank,
        "share_slowed_single_worker": one_worker / len(slowed) if slowed else None,
        "share_slowed_single_dp_rank": one_dp_rank / len(slowed) if slowed else None,
        "lost_curve": _lost_curve(ok),
        "worst": _worst(ok),
    }
    if demo is not None:
        figures["demo"] = demo
    return figures


def _top(a, by):
    """``(id, S_X, runner-up S_X)`` of attribution ``by``, ties to the lowest id as ``analyze`` ranks them."""
    table = getattr(a, by, None)
    if not table:
        return None, None, None
    ranked = a.ranking(by, top=2)
    return ranked[0][0], float(ranked[0][1]), float(ranked[1][1]) if len(ranked) > 1 else None


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


def analysis_row(a):
    """The analysis columns of a job's row from its :class:`~straggle_edu.traces.Analysis`.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import example_trace
    >>> from straggle_edu.traces import analyze
    >>> r = analysis_row(analyze(example_trace("slow-worker"), attribution="full"))
    >>> round(r["slowdown"], 2), r["top_worker"], r["culprit_class"], r["culprit_where"], r["worker_steps"]
    (1.56, '1:1', 'compute', 'single-worker', 1.0)
    """
    S = _finite(getattr(a, "slowdown", None))
    row = {"format": a.format, "slowdown": S, "waste": None if S is None else 1.0 - 1.0 / S,
           "steps": len(a.steps) if getattr(a, "steps", None) is not None else None}
    optype, row["top_optype_s"] = _top(a, "by_optype")[:2]
    row["top_optype"], row["culprit_class"] = optype, culprit_class(optype)
    row["top_stage"], row["top_stage_s"], row["second_stage_s"] = _top(a, "by_stage")
    row["top_dp_rank"], row["top_dp_rank_s"], row["second_dp_rank_s"] = _top(a, "by_dp_rank")
    worker, row["top_worker_s"], row["second_worker_s"] = _top(a, "by_worker" if a.by_worker else "by_rank")
    row["top_worker"] = None if worker is None else ":".join(map(str, worker)) if isinstance(worker, tuple) else str(worker)
    if worker is None and getattr(a, "suspects", None):
        row["top_worker"] = str(a.suspects[0])
    row["last_stage"] = len(a.by_stage) - 1 if a.by_stage else None
    row["workers"] = len(a.workers) if a.workers else len(a.by_rank) if a.by_rank else None
    has_share = S is not None and S > 1.0 and row["top_worker_s"] is not None
    row["worker_share"] = (row["top_worker_s"] - 1.0) / (S - 1.0) if has_share else None
    row["worker_steps"], row["dp_rank_steps"] = _persistence(a, worker, row["top_dp_rank"], S)
    row["culprit_where"] = culprit_where(row)
    return row


def _persistence(a, worker, dp_rank, S):
    """:func:`culprit_steps` of the top worker and of the top DP rank (None where the analysis has no per-step S_X)."""
    workers, per = tuple(getattr(a, "workers", ()) or ()), np.asarray(getattr(a, "worker_step_slowdown", ()))
    w = culprit_steps(per[workers.index(worker)], S) if worker in workers and per.ndim == 2 else None
    dp_step = (getattr(a, "details", None) or {}).get("dp_step") if dp_rank is not None else None
    d = culprit_steps(np.asarray(dp_step)[dp_rank], S) if dp_step is not None and dp_rank < len(dp_step) else None
    return w, d
