"""Which remedy pays most over a fleet: replacing slow hosts, or rebalancing stages.

A fleet's rows (the schema of ``DIR/jobs.parquet``) say, for each job, how
many GPU-hours it lost (``gpu_hours_lost``) and how much of its slowdown one
culprit explains alone: the top worker's S_X (``top_worker_s``), the top DP
rank's (``top_dp_rank_s``), the top stage's (``top_stage_s``). A fix removes
about the excess its culprit explains, so it recovers about

    gpu_hours_lost x min(1, (S_X - 1) / (S - 1))

GPU-hours of that job. The cap: a culprit can explain more than the job's
whole excess (S_X > S, when the other workers' noise partly hid it), and a
fix never gets back more than the job lost. Where the cap binds, the remedy
gets back all that job lost; :func:`remedy_gains` counts those jobs
(``capped``). Which jobs each remedy applies to follows their ``culprit_where``:

``"replace"`` (cordon or replace a slow host)
    jobs whose culprit is one worker (``single-worker``, S_X of the top
    worker) or one DP rank (``single-dp-rank``, S_X of that rank), which by
    :func:`~straggle_edu.fleet.figures.culprit_where`'s rules is a
    persistent one: a worker that GC pauses or long sequences hit in a few
    steps is no host to replace.
``"rebalance"`` (repartition the pipeline's stages)
    jobs whose culprit is the last stage (``last-stage``, S_X of the top stage).

Both are estimates from the what-if attribution. A replacement gains more
than its what-if S_X says (the what-if ideal is rebalanced work, the slow
worker included; see :func:`straggle_edu.models.remedies.replaced_slowdown`),
and neither counts the restart a fix needs
(:func:`straggle_edu.models.remedies.restart_or_keep`).
"""

from __future__ import annotations

import math

from .._validate import require

__all__ = ["REMEDY_WHERE", "records", "recovered", "remedy_gains", "apply_remedies", "slowed_shares"]

#: Remedy -> {culprit_where: the row's S_X column that the fix removes}.
REMEDY_WHERE = {
    "replace": {"single-worker": "top_worker_s", "single-dp-rank": "top_dp_rank_s"},
    "rebalance": {"last-stage": "top_stage_s"},
}


def records(rows):
    """A fleet's rows as a list of dicts, from a list of dicts or a pandas DataFrame (missing values: None).

    Examples
    --------
    >>> records([{"job_id": "a", "slowdown": float("nan")}])
    [{'job_id': 'a', 'slowdown': None}]
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    out = []
    for row in rows:
        require(isinstance(row, dict), "rows", row, "a list of dicts (one per job) or a pandas DataFrame")
        out.append({k: _plain(v) for k, v in row.items()})
    return out


def _plain(v):
    """None for a missing value (None, NaN, pandas' NA), else the value."""
    if v is None:
        return None
    try:
        if v != v:  # NaN
            return None
    except (TypeError, ValueError):  # pandas.NA refuses a truth value
        return None
    return v.item() if hasattr(v, "item") else v


def recovered(row, remedy):
    """GPU-hours one job would get back from ``remedy`` ("replace" or "rebalance"); 0 where it does not apply.

    Examples
    --------
    >>> row = {"slowdown": 1.5, "gpu_hours_lost": 300.0, "culprit_where": "last-stage", "top_stage_s": 1.4}
    >>> round(recovered(row, "rebalance"), 6), recovered(row, "replace")
    (240.0, 0.0)
    """
    require(remedy in REMEDY_WHERE, "remedy", remedy, f"one of {', '.join(map(repr, REMEDY_WHERE))}")
    column = REMEDY_WHERE[remedy].get(row.get("culprit_where"))
    S, lost = row.get("slowdown"), row.get("gpu_hours_lost")
    sx = row.get(column) if column else None
    if None in (S, lost, sx) or not S > 1 or not math.isfinite(lost):
        return 0.0
    return float(lost) * min(max((float(sx) - 1.0) / (float(S) - 1.0), 0.0), 1.0)


def remedy_gains(rows):
    """What each remedy would recover over the fleet, in GPU-hours.

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        The fleet's rows (``DIR/jobs.parquet``'s schema).

    Returns
    -------
    dict
        ``{"lost": all GPU-hours lost, "replace": {...}, "rebalance": {...}}``
        where each remedy has ``jobs`` (how many jobs it applies to),
        ``gpu_hours`` (recovered), ``share`` (of all GPU-hours lost),
        ``capped`` (the jobs where the cap binds: S_X >= S, so the remedy
        gets back all they lost) and ``uncapped_share`` (the share the
        formula would give without the cap, for comparison).

    Examples
    --------
    >>> rows = [
    ...     {"slowdown": 3.0, "gpu_hours_lost": 200.0, "culprit_where": "single-worker", "top_worker_s": 2.8},
    ...     {"slowdown": 1.2, "gpu_hours_lost": 500.0, "culprit_where": "last-stage", "top_stage_s": 1.15},
    ...     {"slowdown": 1.1, "gpu_hours_lost": 100.0, "culprit_where": "spread", "top_stage_s": 1.02},
    ... ]
    >>> g = remedy_gains(rows)
    >>> g["lost"], round(g["replace"]["gpu_hours"], 6), round(g["rebalance"]["gpu_hours"], 6), g["rebalance"]["capped"]
    (800.0, 180.0, 375.0, 0)
    """
    rows = records(rows)
    lost = math.fsum(r["gpu_hours_lost"] for r in rows if r.get("gpu_hours_lost") is not None)
    out = {"lost": float(lost)}
    for remedy in REMEDY_WHERE:
        applies = [r for r in rows if r.get("culprit_where") in REMEDY_WHERE[remedy]]
        got = math.fsum(recovered(r, remedy) for r in applies)
        ratios = [_ratio(r, remedy) for r in applies]
        uncapped = math.fsum(float(r["gpu_hours_lost"]) * x for r, x in zip(applies, ratios) if x is not None)
        out[remedy] = {"jobs": len(applies), "gpu_hours": got, "share": got / lost if lost > 0 else 0.0,
                       "capped": sum(x is not None and x >= 1.0 for x in ratios),
                       "uncapped_share": uncapped / lost if lost > 0 else 0.0}
    return out


def _ratio(row, remedy):
    """(S_X - 1) / (S - 1) of the job's culprit, uncapped; None where it is not known."""
    column = REMEDY_WHERE[remedy].get(row.get("culprit_where"))
    S, lost, sx = row.get("slowdown"), row.get("gpu_hours_lost"), row.get(column) if column else None
    if None in (S, lost, sx) or not S > 1 or not math.isfinite(lost):
        return None
    return max((float(sx) - 1.0) / (float(S) - 1.0), 0.0)


def _fixed(row, remedy, amount):
    """``row`` after ``remedy`` removed ``amount`` (0..1) of what its culprit explains."""
    column = REMEDY_WHERE[remedy].get(row.get("culprit_where"))
    S, sx = row.get("slowdown"), row.get(column) if column else None
    if not amount or None in (S, sx) or not S > 1:
        return row
    share = min(max((float(sx) - 1.0) / (float(S) - 1.0), 0.0), 1.0)
    new = 1.0 + (float(S) - 1.0) * (1.0 - amount * share)
    out = dict(row, slowdown=new, waste=1.0 - 1.0 / new)
    out[column] = 1.0 + (float(sx) - 1.0) * (1.0 - amount)
    if row.get("hours") is not None:  # the job runs faster: fewer hours, and fewer of them lost
        out["hours"] = float(row["hours"]) * new / float(S)
    if row.get("gpus") is not None and out.get("hours") is not None:
        out["gpu_hours_lost"] = float(row["gpus"]) * out["hours"] * out["waste"]
    return out


def apply_remedies(rows, *, rebalance=0.0, replace=0.0):
    """The fleet's rows after rebalancing stages and replacing slow hosts, each removing a share of its culprit.

    A remedy that removes the share ``a`` (0 to 1) of what a job's culprit
    explains takes its S to ``1 + (S - 1)(1 - a x share)``, with share =
    (S_X - 1)/(S - 1); the job then runs ``S'/S`` of its hours. With ``a = 1``
    the GPU-hours each job gets back are :func:`recovered`'s.

    Examples
    --------
    >>> rows = [{"slowdown": 1.5, "gpus": 10, "hours": 30.0, "gpu_hours_lost": 100.0, "culprit_where": "last-stage",
    ...          "top_stage_s": 1.5}]
    >>> after = apply_remedies(rows, rebalance=1.0)[0]
    >>> after["slowdown"], after["hours"], after["gpu_hours_lost"]
    (1.0, 20.0, 0.0)
    >>> round(apply_remedies(rows, rebalance=0.5)[0]["slowdown"], 6)
    1.25
    """
    from .._validate import in_range

    rebalance = in_range("rebalance", rebalance, 0.0, 1.0)
    replace = in_range("replace", replace, 0.0, 1.0)
    return [_fixed(_fixed(r, "rebalance", rebalance), "replace", replace) for r in records(rows)]


def slowed_shares(rows, threshold=1.1):
    """The share of the jobs at S >= ``threshold``, and of the GPU-hours they ran (analysed jobs only).

    Examples
    --------
    >>> rows = [{"slowdown": 1.2, "gpus": 8, "hours": 3.0}, {"slowdown": 1.0, "gpus": 8, "hours": 1.0},
    ...         {"slowdown": None, "error": "bad"}]
    >>> slowed_shares(rows)
    (0.5, 0.75)
    """
    rows = [r for r in records(rows) if r.get("slowdown") is not None and not r.get("error")]
    if not rows:
        return None, None
    slowed = [r for r in rows if r["slowdown"] >= threshold]
    known = [r for r in rows if r.get("gpus") is not None and r.get("hours") is not None]
    total = sum(r["gpus"] * r["hours"] for r in known)
    hours = sum(r["gpus"] * r["hours"] for r in known if r["slowdown"] >= threshold)
    return len(slowed) / len(rows), (hours / total if total > 0 else None)
