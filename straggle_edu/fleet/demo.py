"""A fleet to learn on: synthetic job traces calibrated to the OSDI 2025 study's fleet figures.

The study (Lin et al., OSDI 2025; :mod:`straggle_edu.models.osdi2025`)
analysed 3,079 jobs of at least 128 GPUs over five months. :func:`write_demo`
writes a fleet of small op-level traces whose slowdowns, causes and sizes are
drawn from the distributions stated here, so that ``straggle-edu fleet`` has
something to chew on and the result can be held against the study's figures.
Every figure it reproduces is *calibrated* (fitted by hand), never checked:
agreement is by construction.

The stated distributions
------------------------
Waste (1 - 1/S) per job
    A quantile function, log-linear between knots (:data:`WASTE_KNOTS`)
    placed on the study's per-job figures: the median 7.8%, the 57.5th
    percentile at S = 1.1 (42.5% of jobs at least 10% slower), p90 21.3%,
    p99 45%. The lowest knot (1% waste) is hand-fitted so that the mean waste,
    which is the share of GPU-hours wasted when size and slowdown are
    independent, is the study's 10.4%.
Worker faults
    The top 0.72% of jobs (1.7% of the 42.5% that straggle) are individual
    worker faults, with S uniform on [2.5, 3.58]: mean 3.04, the study's
    average slowdown of those jobs.
Causes
    Of all jobs: the last stage 39.3% and sequence-length imbalance 21.4% (the
    study's shares), GC pauses 20% and a slow link 8% (assumed: the study
    names GC among the common causes and finds communication the minority,
    without a share we could quote), and a mix of small causes for the rest
    (:data:`CAUSE_SHARES`). Apart from the faults, a job's cause is
    independent of its slowdown.
Sizes
    GPUs 128 x 2^k, k = 0..4 (128 to 2,048 GPUs), in counts proportional to
    2^-k, so that each size class holds about a fifth of the GPU-hours;
    hours lognormal with median 24 h and log-sd 0.5 (about 9 h to 65 h for
    the middle 95%), clipped to [1, 720] h. Assumed: the study states only
    "at least 128 GPUs", some with thousands. The law is chosen so that no
    one job decides a GPU-hour-weighted figure: over the seeds 0..199, the
    largest job of a fleet of 200 holds 5.5% of its GPU-hours (the median;
    at most 16%), and leaving any one job out moves the share of GPU-hours
    in slowed jobs by at most 2.7 points (the median; 7.4 at worst). With
    8,192-GPU jobs as heavy as the rest (the earlier law), one job of 200
    could hold a quarter of the GPU-hours and decide every weighted figure.

Sampling is stratified: each of N equal-probability slices of the waste
distribution gets exactly one job, so does each slice of the hours'
distribution, and the causes and the size classes come in exact counts
(largest remainders), shuffled by the seed; size, cause and slowdown are
independent (apart from the faults, which are the slowest jobs). A fleet of 200 jobs then shows
the distribution's quantiles closely, and the same seed gives the same fleet,
byte for byte.

Each job's trace is a miniature (a few DP ranks and stages, 8 steps, a few
thousand ops) of the job its meta describes (``gpus`` and ``hours``), so that
hundreds of jobs analyse in seconds. The cause's strength is set so that the
what-if analysis of the miniature gives the drawn S: each cause's response
S(strength) is measured once per process on a grid (with the miniature's 1%
jitter, one seed, so that the noise's own small slowdown is counted) and
inverted (:func:`strength_for`). Each job's own jitter moves its measured S a
little off the drawn one (by 0.6% typically). Causes that move from worker to
worker (sequence lengths, GC) visit every DP rank equally often, so that no
one rank becomes the culprit of a job of 8 steps by chance.

The artifact's three sample traces (ST, AR and SE; Apache-2.0,
see ``straggle_edu/traces/data/README.txt``) are added by default, copied
unchanged with their licence. All three ship with the package: ST as CSV, AR
and SE as the artifact's Parquet (``straggle_edu/traces/data/osdi2025/``),
which needs pyarrow (the ``fleet`` and ``lab`` extras).

Examples
--------
>>> jobs = draw_jobs(200, seed=0)
>>> len(jobs), jobs[0].job_id
(200, 'job-0001')
>>> figures = drawn_figures(jobs)
>>> round(figures["share_slowed_10pct"], 2), round(figures["waste_p50"], 3)
(0.42, 0.078)
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .._validate import as_rng, one_of, require, whole
from ..models.osdi2025 import CITATION, STUDY
from ._progress import progress as shown_progress

__all__ = ["DemoJob", "DemoFleet", "WASTE_KNOTS", "FAULT_SLOWDOWN", "CAUSE_SHARES", "LAYOUTS", "TARGETS", "CULPRITS",
           "GPU_CLASSES", "HOURS", "DEMO_NOTE", "draw_jobs", "draw_sizes", "drawn_figures", "drawn_rows", "strength_for",
           "demo_trace", "write_demo", "public_jobs", "demo_of"]

#: The study's fleet figures the demo is calibrated to (fractions; the fault slowdown in x).
TARGETS = {name: float(STUDY[name]) for name in ("jobs_slowed_10pct", "waste_median", "waste_p90", "waste_p99",
                                                  "gpu_hours_wasted", "last_stage_share", "sequence_length_share",
                                                  "worker_fault_share", "worker_fault_slowdown")}

_FAULTS = TARGETS["worker_fault_share"] * TARGETS["jobs_slowed_10pct"]  # of all jobs: 1.7% of 42.5%

#: (quantile, waste) knots of the waste distribution, log-linear between them; the faults sit above the last.
WASTE_KNOTS = (
    (0.0, 0.01),  # hand-fitted: the mean waste is then the study's 10.4% of GPU-hours
    (0.5, TARGETS["waste_median"]),
    (1.0 - TARGETS["jobs_slowed_10pct"], 1.0 - 1.0 / 1.1),
    (0.9, TARGETS["waste_p90"]),
    (0.99, TARGETS["waste_p99"]),
    (1.0 - _FAULTS, 0.6),
)

#: Worker faults: S uniform on this range (mean 3.04, the study's average).
FAULT_SLOWDOWN = (2.5, 2 * TARGETS["worker_fault_slowdown"] - 2.5)

#: Share of all jobs per cause ("slow-worker" is the worker faults).
CAUSE_SHARES = {
    "last-stage": TARGETS["last_stage_share"],
    "seq-imbalance": TARGETS["sequence_length_share"],
    "gc-pauses": 0.20,
    "slow-link": 0.08,
    "slow-worker": _FAULTS,
}
CAUSE_SHARES["mixed"] = 1.0 - sum(CAUSE_SHARES.values())

#: The miniature each cause's job runs: (DP ranks, stages, microbatches); 8 steps each.
LAYOUTS = {
    "last-stage": (2, 4, 8),  # 8 microbatches: S can reach 4 x 8 / 11 = 2.9 as the last stage grows
    "seq-imbalance": (4, 2, 4),
    "gc-pauses": (4, 2, 4),
    "slow-link": (4, 2, 4),
    "slow-worker": (4, 2, 4),
    "mixed": (2, 4, 4),
}
STEPS = 8
JITTER = 0.01
#: The size classes: {GPUs: share of the jobs}, 128 x 2^k in proportion to 2^-k.
GPU_CLASSES = {128 * 2**k: 2.0**-k / sum(2.0**-j for j in range(5)) for k in range(5)}
#: Hours: lognormal (median, log-sd), clipped to (low, high).
HOURS = (24.0, 0.5, 1.0, 720.0)
#: Cause strength grids (the ``x`` of :func:`_cause_kwargs`), wide enough for the drawn slowdowns.
_GRIDS = {
    "last-stage": np.r_[0.0, np.geomspace(0.02, 200.0, 16)],
    "seq-imbalance": np.r_[0.0, np.geomspace(0.02, 40.0, 14)],
    "gc-pauses": np.r_[0.0, np.geomspace(0.01, 20.0, 14)],
    "slow-link": np.r_[0.0, np.geomspace(0.5, 4000.0, 14)],
    "slow-worker": np.r_[0.0, np.geomspace(0.02, 40.0, 14)],
    "mixed": np.r_[0.0, np.geomspace(0.02, 40.0, 14)],
}
_STEP_SECONDS = 0.15  # a miniature's step, about (M + P - 1) x (forward + backward): GC pauses in these units


@dataclass(frozen=True)
class DemoJob:
    """One job of the demo fleet, as drawn.

    Attributes
    ----------
    job_id : str
        ``job-0001``, ...
    cause : str
        A key of :data:`CAUSE_SHARES`.
    slowdown : float
        The drawn S; the trace's what-if analysis gives about this.
    gpus : int
        GPUs of the job the miniature stands for.
    hours : float
        Its wall-clock hours.
    dp, pp, microbatches, steps : int
        The miniature's layout.
    seed : int
        Seeds the miniature's trace.
    """

    job_id: str
    cause: str
    slowdown: float
    gpus: int
    hours: float
    dp: int
    pp: int
    microbatches: int
    steps: int
    seed: int

    @property
    def waste(self):
        """1 - 1/S, the share of the job's GPU-hours lost."""
        return 1.0 - 1.0 / self.slowdown


def _waste_quantile(u):
    """The waste at quantiles ``u`` (array in [0, 1]) of the stated distribution, faults included."""
    qs, ws = np.array(WASTE_KNOTS).T
    w = np.exp(np.interp(u, qs, np.log(ws)))
    top = u > qs[-1]
    low, high = FAULT_SLOWDOWN
    w[top] = 1.0 - 1.0 / (low + (high - low) * (u[top] - qs[-1]) / (1.0 - qs[-1]))
    return w


def _counts(shares, n):
    """Whole counts summing to n, proportional to ``shares`` (largest remainders)."""
    raw = np.array(list(shares.values())) * n
    counts = np.floor(raw).astype(int)
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    return dict(zip(shares, counts.tolist()))


def draw_sizes(n, rng):
    """GPUs and hours of ``n`` jobs: the size classes in exact counts, the hours one per slice of their law, shuffled.

    Examples
    --------
    >>> gpus, hours = draw_sizes(200, np.random.default_rng(0))
    >>> sorted(set(gpus.tolist())), int((gpus == 2048).sum()), float(np.median(hours))
    ([128, 256, 512, 1024, 2048], 6, 24.0)
    """
    from statistics import NormalDist

    counts = _counts(GPU_CLASSES, n)
    gpus = rng.permutation(np.repeat(list(counts), list(counts.values())))
    median, sigma, low, high = HOURS
    z = np.array([NormalDist().inv_cdf(u) for u in (rng.permutation(n) + rng.random(n)) / n])
    return gpus.astype(int), np.clip(np.round(median * np.exp(sigma * z), 1), low, high)


def draw_jobs(jobs=200, seed=0):
    """Draw the demo fleet's jobs from the stated distributions (no trace is built).

    Parameters
    ----------
    jobs : int
        Number of synthetic jobs, 1 to 100,000.
    seed : int
        The same seed gives the same jobs.

    Returns
    -------
    tuple of DemoJob
        In job-id order; the worker faults are the jobs of the highest waste.

    Examples
    --------
    >>> jobs = draw_jobs(1000, seed=1)
    >>> sum(j.cause == "slow-worker" for j in jobs), min(j.gpus for j in jobs)
    (7, 128)
    >>> draw_jobs(5, seed=1) == draw_jobs(5, seed=1)
    True
    """
    n = whole("jobs", jobs, low=1, high=100_000)
    seed = whole("seed", seed, low=0)
    rng = as_rng(seed)
    u = (rng.permutation(n) + rng.random(n)) / n  # one job in each of n equal slices
    waste = _waste_quantile(u)
    counts = _counts(CAUSE_SHARES, n)
    faults = counts.pop("slow-worker")
    cause = np.empty(n, dtype=object)
    top = np.argsort(-u, kind="stable")[:faults]
    cause[top] = "slow-worker"
    rest = np.flatnonzero(cause == None)  # noqa: E711 (object array)
    cause[rest] = rng.permutation(np.repeat(list(counts), list(counts.values())))
    gpus, hours = draw_sizes(n, rng)
    seeds = rng.integers(0, 2**31, size=n)
    out = []
    for i in range(n):
        dp, pp, mb = LAYOUTS[cause[i]]
        out.append(DemoJob(f"job-{i + 1:04d}", str(cause[i]), float(1.0 / (1.0 - waste[i])), int(gpus[i]),
                           float(hours[i]), dp, pp, mb, STEPS, int(seeds[i])))
    return tuple(out)


def drawn_figures(jobs):
    """The fleet figures of the drawn jobs (their drawn S, before any trace): to hold against :data:`TARGETS`.

    Returns
    -------
    dict
        ``share_slowed_10pct``, ``share_slowed_10pct_gpu_hours``, ``waste_p50``,
        ``waste_p90``, ``waste_p99``, ``gpu_hours_wasted`` (GPU-hours lost /
        GPU-hours), ``cause_shares`` ({cause: share of jobs}),
        ``fault_share_of_slowed`` and ``fault_slowdown`` (mean S of the faults).

    Examples
    --------
    >>> f = drawn_figures(draw_jobs(3079, seed=0))
    >>> round(f["waste_p90"], 3), round(f["cause_shares"]["last-stage"], 3)
    (0.213, 0.393)
    """
    require(len(jobs) > 0, "jobs", jobs, "at least one DemoJob")
    S = np.array([j.slowdown for j in jobs])
    w = 1.0 - 1.0 / S
    gh = np.array([j.gpus * j.hours for j in jobs])
    slowed = S >= 1.1
    faults = np.array([j.cause == "slow-worker" for j in jobs])
    causes = [j.cause for j in jobs]
    return {
        "share_slowed_10pct": float(slowed.mean()),
        "share_slowed_10pct_gpu_hours": float(gh[slowed].sum() / gh.sum()),
        "waste_p50": float(np.quantile(w, 0.5)),
        "waste_p90": float(np.quantile(w, 0.9)),
        "waste_p99": float(np.quantile(w, 0.99)),
        "gpu_hours_wasted": float((gh * w).sum() / gh.sum()),
        "cause_shares": {c: causes.count(c) / len(jobs) for c in CAUSE_SHARES},
        "fault_share_of_slowed": float(faults[slowed].sum() / max(slowed.sum(), 1)),
        "fault_slowdown": float(S[faults].mean()) if faults.any() else float("nan"),
    }


#: Each cause's culprit as the fleet's rows name it: (culprit_where, culprit_class, the S_X column it fills).
CULPRITS = {
    "last-stage": ("last-stage", "compute", "top_stage_s"),
    "seq-imbalance": ("spread", "compute", None),
    "gc-pauses": ("spread", "compute", None),
    "slow-link": ("single-dp-rank", "communication", "top_dp_rank_s"),
    "slow-worker": ("single-worker", "compute", "top_worker_s"),
    "mixed": ("spread", "compute", None),
}


def drawn_rows(jobs):
    """The drawn jobs as rows of ``jobs.parquet``'s schema, as if the analysis found exactly what was drawn.

    Each row has the drawn S, its waste and GPU-hours lost, and its cause's
    culprit (:data:`CULPRITS`) explaining all of S. For sandboxes that
    change the fleet without analysing a trace; the rows of a fleet run
    are the measured ones.

    Examples
    --------
    >>> r = drawn_rows(draw_jobs(3, seed=0))[0]
    >>> r["job_id"], r["culprit_where"], round(r["gpu_hours_lost"] / (r["gpus"] * r["hours"]), 4) == round(r["waste"], 4)
    ('job-0001', 'last-stage', True)
    """
    rows = []
    for j in jobs:
        where, kind, column = CULPRITS[j.cause]
        row = {"job_id": j.job_id, "path": f"jobs/trace-{j.job_id}.parquet", "gpus": j.gpus, "hours": j.hours,
               "slowdown": j.slowdown, "waste": j.waste, "gpu_hours_lost": j.gpus * j.hours * j.waste,
               "culprit_where": where if j.slowdown > 1 else None, "culprit_class": kind, "error": None}
        if column:
            row[column] = j.slowdown
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------
# the miniature traces


def _cause_kwargs(cause, x, dp, pp, mb, steps, rng):
    """:func:`~straggle_edu.traces.synthetic.synthetic_trace` arguments for ``cause`` at strength ``x`` >= 0."""
    if cause == "last-stage":
        return {"last_stage": 1.0 + x}
    if cause == "slow-worker":
        return {"slow_worker": (int(rng.integers(dp)), int(rng.integers(pp)), 1.0 + x)}
    if cause == "slow-link":
        return {"slow_link": (int(rng.integers(dp)), int(rng.integers(pp - 1)), 1.0 + x)}
    tokens = np.ones((steps, dp, mb))
    pauses = np.zeros((steps, dp, pp))
    step = np.arange(steps)
    if cause == "seq-imbalance":  # the long sequences land on one DP rank, a different one each step
        tokens[step, _turns(rng, dp, steps)] = 1.0 + x
        return {"seq_imbalance": tokens}
    if cause == "gc-pauses":  # some worker collects in every step: at fleet scale, someone always does
        pauses[step, _turns(rng, dp, steps), step % pp] = x * _STEP_SECONDS
        return {"gc_pauses": pauses}
    one_of("cause", cause, list(CAUSE_SHARES))  # "mixed": a third of the strength to each of three causes
    tokens[step, _turns(rng, dp, steps)] = 1.0 + x / 3
    pauses[step, _turns(rng, dp, steps), step % pp] = x / 3 * _STEP_SECONDS
    return {"last_stage": 1.0 + x / 3, "seq_imbalance": tokens, "gc_pauses": pauses}


def _turns(rng, dp, steps):
    """Which DP rank it hits in each step: every rank equally often, in a shuffled order (no rank is the culprit)."""
    return rng.permutation(np.resize(np.arange(dp), steps))


def _trace(cause, x, dp, pp, mb, steps, jitter, seed):
    from ..traces.synthetic import synthetic_trace

    rng = as_rng(seed)
    kwargs = _cause_kwargs(cause, x, dp, pp, mb, steps, rng)
    return synthetic_trace(dp, pp, mb, steps, jitter=jitter, rng=rng, **kwargs)


@functools.lru_cache(maxsize=None)
def _response(cause):
    """(strength grid, S) of ``cause`` on its miniature (with its jitter, one seed); S made non-decreasing."""
    from ..traces.whatif import analyze_ops

    dp, pp, mb = LAYOUTS[cause]
    grid = _GRIDS[cause]
    S = np.array([analyze_ops(_trace(cause, x, dp, pp, mb, STEPS, JITTER, 0), attribution="basic").slowdown
                  for x in grid])
    return grid, np.maximum.accumulate(S)


def strength_for(cause, slowdown):
    """The strength of ``cause`` at which its miniature's what-if S is ``slowdown`` (jitter included).

    Measured once per process on a grid of strengths and interpolated; a
    slowdown beyond the grid gets the grid's strongest cause.

    Examples
    --------
    >>> x = strength_for("last-stage", 1.2)
    >>> from straggle_edu.traces import analyze
    >>> round(analyze(_trace("last-stage", x, 2, 4, 8, STEPS, JITTER, 0)).slowdown, 2)
    1.2
    """
    one_of("cause", cause, list(CAUSE_SHARES))
    grid, S = _response(cause)
    return float(np.interp(float(slowdown), S, grid))


def demo_trace(job):
    """The miniature op-level trace of one :class:`DemoJob`.

    Examples
    --------
    >>> from straggle_edu.traces import analyze
    >>> job = draw_jobs(3, seed=0)[0]
    >>> t = demo_trace(job)
    >>> len(t) < 5000, abs(analyze(t).slowdown / job.slowdown - 1) < 0.03
    (True, True)
    """
    x = strength_for(job.cause, job.slowdown)
    return _trace(job.cause, x, job.dp, job.pp, job.microbatches, job.steps, JITTER, job.seed)


# ---------------------------------------------------------------------------
# the three public jobs

_PACKAGED = Path(__file__).resolve().parents[1] / "traces" / "data"


_PUBLIC_README = """\
The sample traces of this demo fleet ({names}) come from the OSDI 2025
study, Lin et al., "Understanding Stragglers in Large Model Training Using
What-if Analysis", from its public artifact
https://github.com/ByteDance-Seed/StragglerAnalysis (commit 8efcd7f, folder data/):
AR (an artificial slowdown of one DP rank), SE (sequence-length imbalance) and
ST (stage imbalance), each with its layout file meta-<name>.yaml.

Copyright (c) 2025 Bytedance Ltd. and/or its affiliates. Licensed under the
Apache License, Version 2.0; the full text is in LICENSE.txt beside this file.

The files are copied unchanged from straggle-edu, which redistributes AR and SE
unmodified (straggle_edu/traces/data/osdi2025/) and ST converted from Parquet
to CSV (the same rows, columns and values; straggle_edu/traces/data/README.txt).
The study publishes no wall-clock hours for these jobs: the manifest leaves
their hours empty, so they count in the fleet's slowdown figures and not in
its GPU-hours.
"""


def public_jobs():
    """The study's public jobs that are at hand: ``{name: (trace file, meta file)}``.

    All three ship with the package: ST as CSV, AR and SE as the artifact's
    Parquet (:data:`~straggle_edu.traces.optrace.ARTIFACT_DATA`), which needs pyarrow.

    Examples
    --------
    >>> sorted(public_jobs())[-1], public_jobs()["ST"][0].name
    ('ST', 'trace-ST.csv')
    """
    from ..traces.optrace import ARTIFACT_DATA

    found = {"ST": (_PACKAGED / "trace-ST.csv", _PACKAGED / "meta-ST.yaml")}
    if _has_pyarrow():
        for name in ("AR", "SE"):
            found[name] = (ARTIFACT_DATA / f"trace-{name}.parquet", ARTIFACT_DATA / f"meta-{name}.yaml")
    return dict(sorted(found.items()))


def _has_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _world_size(meta):
    from ..traces.optrace import read_meta

    return int(read_meta(meta)["world_size"])


def _copy_public(folder):
    """Copy the public jobs, unchanged, with their licence; return their manifest rows."""
    out = folder / "public"
    out.mkdir()
    shutil.copyfile(_PACKAGED / "LICENSE.txt", out / "LICENSE.txt")
    jobs = public_jobs()
    (out / "README.txt").write_text(_PUBLIC_README.format(names=", ".join(jobs)), encoding="utf-8")
    rows = []
    for name, (trace, meta) in jobs.items():
        shutil.copyfile(trace, out / trace.name)
        shutil.copyfile(meta, out / meta.name)
        rows.append({"job_id": f"osdi-{name}", "path": f"public/{trace.name}", "gpus": _world_size(meta), "hours": ""})
    return rows


# ---------------------------------------------------------------------------
# writing the fleet


@dataclass(frozen=True)
class DemoFleet:
    """What :func:`write_demo` wrote.

    Attributes
    ----------
    folder : pathlib.Path
        The fleet's folder.
    manifest : pathlib.Path
        ``manifest.csv``: ``job_id, path, gpus, hours``, paths relative to it
        (the public jobs have no hours: the study does not publish them).
    truth : pathlib.Path
        ``demo.json``: the seed, the stated distributions, the targets and
        each job as drawn (its cause and S).
    jobs : tuple of DemoJob
        The synthetic jobs.
    public : tuple of str
        The public jobs' ids (``osdi-ST``, ...).
    ops : int
        Ops in the synthetic traces, all together.
    """

    folder: Path
    manifest: Path
    truth: Path
    jobs: tuple
    public: tuple
    ops: int

    def __repr__(self):
        return (f"DemoFleet(jobs={len(self.jobs)}, public={list(self.public)}, ops={self.ops}, "
                f"manifest={os.fspath(self.manifest)!r})")


def _new_folder(folder):
    folder = Path(folder)
    require(not folder.exists() or (folder.is_dir() and not any(folder.iterdir())), "folder", os.fspath(folder),
            "a new or empty folder", fix="the demo never writes over files; pick another folder")
    require(folder.parent.is_dir(), "folder", os.fspath(folder), "a folder whose parent exists")
    folder.mkdir(exist_ok=True)
    return folder


def _write_job(job, out, fmt):
    from ..traces.optrace import write_trace

    trace = demo_trace(job)
    path = write_trace(trace, out / f"trace-{job.job_id}.{fmt}")
    meta = out / f"meta-{job.job_id}.yaml"
    with open(meta, "a", encoding="utf-8") as f:
        f.write(f"gpus: {job.gpus}\nhours: {job.hours:g}\n")
    return path, len(trace)


def write_demo(folder, jobs=200, seed=0, *, public=True, format=None, progress=False):
    """Write a demo fleet: ``jobs`` synthetic job traces, the public jobs, a manifest and the truth.

    Parameters
    ----------
    folder : str or os.PathLike
        A new or empty folder (its parent must exist).
    jobs : int
        Synthetic jobs, 1 to 100,000 (200 take about 3 s and 5 MB as Parquet).
    seed : int
        The same seed writes the same fleet.
    public : bool
        Add the study's public jobs (:func:`public_jobs`) under ``public/``.
    format : {"parquet", "csv"}, optional
        The synthetic traces' format; Parquet when pyarrow is installed, else CSV.
    progress : bool
        Show a progress bar.

    Returns
    -------
    DemoFleet
        ``jobs/trace-job-0001.parquet`` with ``meta-job-0001.yaml`` (its
        layout plus ``gpus`` and ``hours``), ..., ``public/``, ``manifest.csv``
        and ``demo.json``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> fleet = write_demo(pathlib.Path(tempfile.mkdtemp()) / "demo", jobs=3, seed=0, format="csv")
    >>> fleet.manifest.read_text().splitlines()[:2]
    ['job_id,path,gpus,hours', 'job-0001,jobs/trace-job-0001.csv,128,17.7']
    >>> sorted(p.name for p in (fleet.folder / "jobs").iterdir())[:2]
    ['meta-job-0001.yaml', 'meta-job-0002.yaml']
    """
    fmt = format or ("parquet" if _has_pyarrow() else "csv")
    one_of("format", fmt, ["parquet", "csv"])
    drawn = draw_jobs(jobs, seed)
    folder = _new_folder(folder)
    out = folder / "jobs"
    out.mkdir()
    bar = shown_progress("bar" if progress else False, len(drawn), desc="writing the demo fleet", unit="job")
    rows, ops = [], 0
    try:
        for job in drawn:
            path, n_ops = _write_job(job, out, fmt)
            ops += n_ops
            rows.append({"job_id": job.job_id, "path": f"jobs/{path.name}", "gpus": job.gpus, "hours": f"{job.hours:g}"})
            bar.update()
    finally:
        bar.close()
    public_rows = _copy_public(folder) if public else []
    manifest = folder / "manifest.csv"
    lines = ["job_id,path,gpus,hours"] + [f"{r['job_id']},{r['path']},{r['gpus']},{r['hours']}" for r in rows + public_rows]
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    truth = folder / "demo.json"
    truth.write_text(json.dumps(_truth(drawn, seed, fmt, public_rows), indent=1) + "\n", encoding="utf-8")
    return DemoFleet(folder, manifest, truth, drawn, tuple(r["job_id"] for r in public_rows), ops)


def _truth(drawn, seed, fmt, public_rows):
    return {
        "seed": seed,
        "format": fmt,
        "calibrated_to": CITATION,
        "targets": TARGETS,
        "distributions": {"waste_knots": WASTE_KNOTS, "fault_slowdown": FAULT_SLOWDOWN, "cause_shares": CAUSE_SHARES,
                          "gpus": "128 x 2^k, k = 0..4, in counts proportional to 2^-k (largest remainders)",
                          "hours": "lognormal, median 24 h, log-sd 0.5, one job per slice, clipped to [1, 720] h",
                          "layouts": {c: dict(zip(("dp", "pp", "microbatches"), v)) for c, v in LAYOUTS.items()},
                          "steps": STEPS, "jitter": JITTER},
        "drawn": drawn_figures(drawn),
        "jobs": [asdict(j) for j in drawn],
        "public": [r["job_id"] for r in public_rows],
    }


# ---------------------------------------------------------------------------
# telling a fleet run that it is the demo

#: What a fleet run of the demo says about its figures (``fleet.json``'s ``demo.note``).
DEMO_NOTE = ("The synthetic jobs of this fleet are drawn from distributions calibrated (fitted by hand) to the "
             "study's fleet figures: where their figures stand beside the study's, they agree by construction. "
             "They are not measurements.")
_TRUTH_BYTES = 512 << 20  # a demo.json of 100,000 jobs is about 25 MB


def demo_of(sources):
    """The demo's label when a SOURCE is a demo fleet (a folder with ``demo.json`` in it, or its manifest); else None.

    The label goes into ``fleet.json`` (``demo``), so that the figures of a
    synthetic fleet are never read as measurements: ``demo_json``, ``seed``,
    ``synthetic_jobs``, ``public``, ``calibrated_to`` (the study), ``targets``
    (its figures the demo was calibrated to) and ``note``. A ``demo.json``
    that is not the demo's (no ``calibrated_to``, unreadable) labels nothing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> fleet = write_demo(pathlib.Path(tempfile.mkdtemp()) / "demo", jobs=2, seed=4, public=False, format="csv")
    >>> label = demo_of([fleet.manifest])
    >>> label["seed"], label["synthetic_jobs"], label["targets"]["jobs_slowed_10pct"]
    (4, 2, 0.425)
    >>> demo_of([fleet.folder / "jobs"]) is None
    True
    """
    for source in sources:
        path = Path(source)
        try:
            folder = path if path.is_dir() else path.parent if path.is_file() else None
            truth = folder / "demo.json" if folder is not None else None
            if truth is None or not truth.is_file() or truth.stat().st_size > _TRUTH_BYTES:
                continue
            data = json.loads(truth.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "calibrated_to" in data and isinstance(data.get("jobs"), list):
            return {"demo_json": os.fspath(truth), "seed": data.get("seed"), "synthetic_jobs": len(data["jobs"]),
                    "public": data.get("public", []), "calibrated_to": data["calibrated_to"],
                    "targets": data.get("targets", {}), "note": DEMO_NOTE}
    return None
