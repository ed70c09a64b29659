"""Exercises for ``13_the_fleet.ipynb``: a cluster's jobs, all at once.

- ``q1``: a job of 1,024 GPUs ran 48 hours at S = 1.25: how many GPU-hours
  did stragglers cost it?
- ``q2``: three jobs, (128 GPUs, 10 h, S = 1.5), (1,024 GPUs, 100 h, S = 1.05)
  and (512 GPUs, 20 h, S = 1.2). Two of three are slowed (S >= 1.1); what
  share of their GPU-hours ran in slowed jobs?
- ``q3``: in :func:`exercise_fleet` (60 demo jobs, seed 13, analysed in this
  process), what share of all the GPU-hours lost would rebalancing stages get
  back?
- ``q4``: in the same fleet, what share of the jobs lose more than 20% of
  their GPU-hours (waste > 0.2)?
- ``q5`` (design): instead of analysing every job, a platform team samples.
  How many jobs must it analyse to know the share of jobs at S >= 1.1 within
  +-2 points (95% confidence), when that share is near the study's 42.5%?
"""

from __future__ import annotations

import functools
import math

from ..math.cost import lost_fraction_from_slowdown
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5", "exercise_fleet", "THREE_JOBS"]

#: q2's three jobs.
THREE_JOBS = (
    {"job_id": "a", "gpus": 128, "hours": 10.0, "slowdown": 1.5},
    {"job_id": "b", "gpus": 1024, "hours": 100.0, "slowdown": 1.05},
    {"job_id": "c", "gpus": 512, "hours": 20.0, "slowdown": 1.2},
)


@functools.lru_cache(maxsize=1)
def _exercise_rows():
    import tempfile
    from pathlib import Path

    from ..fleet.demo import write_demo
    from ..fleet.engine import run_fleet
    from ..fleet.store import read_rows

    folder = Path(tempfile.mkdtemp(prefix="straggle-edu-exercise-fleet-"))
    fleet = write_demo(folder / "demo", jobs=60, seed=13, public=False)
    run_fleet([fleet.manifest], folder / "out", workers=0, progress=False)
    return tuple(read_rows(folder / "out"))


def exercise_fleet():
    """The rows of a fleet of 60 demo jobs (seed 13), analysed in this process (a list of dicts, ``jobs.parquet``'s schema).

    Examples
    --------
    >>> rows = exercise_fleet()
    >>> len(rows), rows[0]["job_id"], rows[0]["error"]
    (60, 'job-0001', None)
    """
    return [dict(r) for r in _exercise_rows()]


def _rebalance_share():
    from ..fleet.remedies import remedy_gains

    return remedy_gains(exercise_fleet())["rebalance"]["share"]


def _wasteful_share():
    rows = [r for r in exercise_fleet() if r["slowdown"] is not None]
    return sum(r["waste"] > 0.2 for r in rows) / len(rows)


def _sample_size(p, margin, confidence=0.95):
    from scipy import stats

    z = stats.norm.ppf(0.5 + confidence / 2)
    return math.ceil(z * z * p * (1 - p) / margin**2)


q1 = Exercise(
    "q1", expected=lambda: 1024 * 48 * lost_fraction_from_slowdown(1.25),
    hint="GPU-hours lost = GPUs x hours x waste, and waste = 1 - 1/S: the share of the job's time spent waiting.",
    solution="1024 * 48 * (1 - 1 / 1.25)  # 9,830.4 GPU-hours: 20% of the 49,152 the job held",
    rel_tol=1e-3,
)

q2 = Exercise(
    "q2", expected=lambda: _slowed_gpu_hours(),
    hint="Weigh each job by its GPU-hours (GPUs x hours). Which job holds most of them, and is it slowed?",
    solution="(128 * 10 + 512 * 20) / (128 * 10 + 1024 * 100 + 512 * 20)  # 0.101: two jobs of three, "
             "but only a tenth of the GPU-hours, because the big job is barely slowed",
    rel_tol=1e-3,
    fraction=True,
)

q3 = Exercise(
    "q3", expected=_rebalance_share,
    hint="remedy_gains(exercise_fleet()) from straggle_edu.fleet.remedies: look at its 'rebalance' entry.",
    solution="remedy_gains(exercise_fleet())['rebalance']['share']",
    rel_tol=1e-3,
    fraction=True,
)

q4 = Exercise(
    "q4", expected=_wasteful_share,
    hint="Each row has its waste = 1 - 1/S. Count the jobs with waste > 0.2 and divide by the jobs with a slowdown.",
    solution="rows = [r for r in exercise_fleet() if r['slowdown'] is not None]; "
             "sum(r['waste'] > 0.2 for r in rows) / len(rows)",
    rel_tol=1e-6,
    fraction=True,
)

q5 = Exercise(
    "q5", expected=lambda: _sample_size(0.425, 0.02),
    hint="A share p estimated from n sampled jobs has a standard error sqrt(p (1 - p) / n); "
         "95% confidence is 1.96 standard errors. Solve 1.96 sqrt(p (1 - p) / n) = 0.02 for n.",
    solution="math.ceil(1.96**2 * 0.425 * 0.575 / 0.02**2)  # 2,347 jobs: a sample gives the share, "
             "but not the worst jobs, which only the whole fleet names",
    rel_tol=1e-3,
)


def _slowed_gpu_hours():
    from ..fleet.remedies import slowed_shares

    return slowed_shares(THREE_JOBS)[1]
