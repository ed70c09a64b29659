"""The published figures of the OSDI 2025 straggler study, in one place.

Jinkun Lin, Ziheng Jiang, Zuquan Song, Sida Zhao, Menghan Yu, Zhanghan
Wang, Chenyuan Wang, Zuocheng Shi, Xiang Shi, Wei Jia, Zherui Liu, Shuguang
Wang, Haibin Lin, Xin Liu, Aurojit Panda and Jinyang Li. "Understanding
Stragglers in Large Model Training Using What-if Analysis". 19th USENIX
Symposium on Operating Systems Design and Implementation (OSDI 2025). New
York University, ByteDance Seed, ByteDance and Zhejiang University.
arXiv:2505.05713. Artifact: https://github.com/ByteDance-Seed/StragglerAnalysis

The study replays five months of ByteDance LLM-training traces with every
op at its "ideal" duration (what-if analysis) and compares with the real
run. Notebooks quote these constants through ``claim()``, so a figure
appears in exactly one place. Fractions are stored as fractions (0.425,
not 42.5).
"""

from __future__ import annotations

__all__ = ["CITATION", "ARTIFACT_URL", "FINDINGS", "STUDY", "StudyFigure"]

from dataclasses import dataclass

from ..i18n import N_

CITATION = (
    'Lin et al., "Understanding Stragglers in Large Model Training Using What-if Analysis", '
    "OSDI 2025 (NYU, ByteDance, Zhejiang University); arXiv:2505.05713"
)
ARTIFACT_URL = "https://github.com/ByteDance-Seed/StragglerAnalysis"


@dataclass(frozen=True)
class StudyFigure:
    """One published figure: its value, its unit and what it measures.

    Examples
    --------
    >>> f = STUDY["gpu_hours_wasted"]
    >>> float(f), f.unit
    (0.104, 'fraction of GPU-hours')
    """

    value: float
    unit: str
    what: str

    def __float__(self):
        return float(self.value)


#: Every figure the notebooks quote, by name. ``what`` is English, marked for the catalog: a reader's
#: language shows it through ``_(figure.what)`` where it is displayed.
STUDY = {
    "jobs": StudyFigure(3079, "jobs", N_("training jobs in the trace")),
    "min_gpus": StudyFigure(128, "GPUs", N_("every job in the trace used at least this many GPUs")),
    "months": StudyFigure(5, "months", N_("length of the trace")),
    "jobs_slowed_10pct": StudyFigure(
        0.425, "fraction of jobs", N_("jobs at least 10% slower because of stragglers")
    ),
    "gpu_hours_wasted": StudyFigure(
        0.104, "fraction of GPU-hours", N_("allocated GPU-hours wasted by stragglers, over all jobs")
    ),
    "waste_median": StudyFigure(0.078, "fraction of the job's resources", N_("per-job waste, median job")),
    "waste_p90": StudyFigure(0.213, "fraction of the job's resources", N_("per-job waste, 90th percentile")),
    "waste_p99": StudyFigure(0.450, "fraction of the job's resources", N_("per-job waste, 99th percentile")),
    "worker_fault_share": StudyFigure(
        0.017, "fraction of straggling jobs", N_("straggling jobs caused by individual worker faults")
    ),
    "worker_fault_slowdown": StudyFigure(
        3.04, "x", N_("average slowdown of the jobs whose stragglers were individual worker faults")
    ),
    "last_stage_share": StudyFigure(
        0.393, "fraction of jobs", N_("jobs where last-stage imbalance explains most of the slowdown")
    ),
    "sequence_length_share": StudyFigure(
        0.214, "fraction of jobs", N_("jobs affected by sequence-length imbalance")
    ),
    "planned_gc_gain": StudyFigure(
        0.126, "fraction of throughput", N_("throughput gain of planned (synchronized) GC over Python's automatic GC")
    ),
}

#: The study's qualitative findings, as statements a model can reproduce.
FINDINGS = {
    "persistent_not_spiky": N_("a straggling job's slowdown persists over its steps rather than coming in spikes"),
    "compute_dominates": N_("computation, not communication, causes most of the slowdown"),
    "worker_faults_rare_but_severe": N_("individual worker faults are rare but slow a job down a lot"),
    "last_stage_imbalance": N_("the last pipeline stage, with its loss and output layer, is often the slowest"),
    "sequence_length_imbalance": N_("long-tailed sequence lengths load workers unequally"),
    "planned_gc_beats_random": N_("planned, synchronized GC beats each worker collecting on its own"),
}
