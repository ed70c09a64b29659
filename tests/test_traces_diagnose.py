"""The one diagnosis engine: scenario models' traces and real traces, one set of thresholds.

Scenario jobs (models.causes.straggler_scenario) are recorded as op-level traces and go
through the same what-if engine as the OSDI 2025 artifact's traces; the answers are checked
against the cause the scenario injected (its ``truth``). The ST trace (Apache-2.0, shipped
in the package) checks that a stage-wide slowdown is named as the stage, not one worker.
"""

import numpy as np
import pytest

from straggle_edu.models.causes import CAUSES, straggler_scenario
from straggle_edu.traces.diagnose import (
    OP_QUESTIONS,
    STRAGGLING,
    Diagnosis,
    diagnose_job,
    verdicts,
)
from straggle_edu.traces.optrace import ARTIFACT_DATA, public_trace_path, read_op_trace
from straggle_edu.traces.whatif import analyze_ops


@pytest.mark.parametrize("seed", range(3))
def test_diagnose_job_finds_the_slow_worker(seed):
    sc = straggler_scenario("slow worker", rng=seed)
    dx = diagnose_job(sc)
    d, s = sc.truth["dp"], sc.truth["stage"]
    assert dx.truth == sc.truth
    assert dx.verdicts["worker"] == (d, s) and dx.verdicts["stage"] == s
    assert dx.answers["Which worker?"].startswith(f"DP rank {d}, stage {s}: ")
    assert dx.verdicts["kind"] == "compute" and dx.verdicts["persistence"] == "persistent"
    assert np.unravel_index(np.argmax(dx.by_worker), dx.by_worker.shape) == (d, s)
    assert dx.slowdown >= STRAGGLING


@pytest.mark.parametrize("seed", range(2))
def test_diagnose_job_last_stage_names_the_stage_not_a_worker(seed):
    dx = diagnose_job(straggler_scenario("last stage", stages=4, rng=seed))
    assert dx.verdicts["stage"] == 3 and dx.verdicts["worker"] is None
    assert dx.answers["Which worker?"].startswith("no single worker: stage 3 as a whole")
    assert dx.verdicts["persistence"] == "persistent"


@pytest.mark.parametrize("seed", range(2))
def test_diagnose_job_slow_link_is_communication(seed):
    sc = straggler_scenario("slow link", rng=seed)
    dx = diagnose_job(sc)
    assert dx.verdicts["kind"] == "communication"
    assert dx.verdicts["collective"] in ("forward-pp-comm", "backward-pp-comm")
    assert dx.answers["Compute or communication?"].startswith("communication")
    d, s = sc.truth["dp"], sc.truth["link"]
    if dx.verdicts["worker"] is None:  # seed 1: the link's two ends tie, and the answer names the link
        a, b = f"DP rank {d}, stage {s}", f"DP rank {d}, stage {s + 1}"
        assert dx.answers["Which worker?"].startswith(f"no single worker: the two ends of the link from {a} to {b} tie")
    else:
        assert dx.verdicts["worker"] == (d, s + 1)  # the receiving end of the link


def test_diagnose_job_random_gc_is_spiky_and_below_the_line_unless_severe():
    mild = diagnose_job(straggler_scenario("random GC", rng=0))
    assert mild.slowdown < STRAGGLING and mild.verdicts["persistence"] == "neither"
    assert mild.per_step.max() >= STRAGGLING  # a few steps spike
    severe = diagnose_job(straggler_scenario("random GC", severity=2.0, rng=2))
    assert severe.slowdown >= STRAGGLING and severe.verdicts["persistence"] == "transient"
    assert max(severe.by_op, key=severe.by_op.get) == "gc"


def test_diagnose_job_healthy_and_severity_zero():
    for cause in CAUSES:
        dx = diagnose_job(straggler_scenario(cause, severity=0.0, jitter=0.0, rng=0))
        assert dx.slowdown == pytest.approx(1.0, abs=1e-9)
        assert dx.verdicts["kind"] == "neither" and not dx.verdicts["straggling"]
        assert list(dx.answers) == list(OP_QUESTIONS)
        assert dx.waste == pytest.approx(0.0, abs=1e-9)


def test_diagnose_job_accepts_a_trace_an_analysis_and_a_path():
    path = public_trace_path()
    a = analyze_ops(read_op_trace(path), attribution="full")
    for job in (path, read_op_trace(path), a):
        dx = diagnose_job(job)
        assert isinstance(dx, Diagnosis) and dx.truth is None
        assert dx.slowdown == pytest.approx(a.slowdown, rel=1e-12)
        assert dx.by_worker.shape == (2, 4)


def test_diagnose_job_on_st_names_stage_3_not_a_worker():
    # ST: the last stage is slow in both DP ranks; neither worker alone explains it
    dx = diagnose_job(public_trace_path())
    assert dx.verdicts["stage"] == 3 and dx.verdicts["worker"] is None
    assert dx.answers["Which worker?"].startswith("no single worker: stage 3 as a whole (all 2 of its DP ranks)")
    assert "explains the slowdown" in dx.answers["Which worker?"]


def test_diagnose_job_on_st_names_no_parallel_group_when_both_dp_ranks_tie():
    # ST: DP rank 1 gives S_X = 1.179 and DP rank 0 1.174; naming DP rank 1 would contradict "stage 3 as a whole"
    dx = diagnose_job(public_trace_path())
    group = dx.answers["Which parallel group?"]
    assert group.startswith("no single group: all 2 DP ranks tie") and "shared by every pipeline" in group
    assert "DP rank 1: S_X = 1.179" in group and "DP rank 0: 1.174" in group


def test_ties_are_named_alike_for_workers_and_groups():
    from straggle_edu.traces.diagnose import NEAR_TIE, tied

    assert [k for k, _v in tied([("a", 1.21), ("b", 1.196), ("c", 1.10)])] == ["a", "b"]
    assert tied([("a", 1.0), ("b", 1.0)]) == [("a", 1.0)]  # no excess: nobody to tie with
    edge = 1 + NEAR_TIE * 0.2
    assert len(tied([("a", 1.2), ("b", edge + 1e-9)])) == 2 and len(tied([("a", 1.2), ("b", edge - 1e-6)])) == 1


def test_diagnose_on_se_says_no_single_worker_and_no_single_group():
    pytest.importorskip("pyarrow")
    from straggle_edu.traces import analyze
    from straggle_edu.traces.diagnose import diagnose

    here = ARTIFACT_DATA / "trace-SE.parquet"
    answers = dict(diagnose(analyze(here, attribution="full")))
    assert answers["Which worker?"].startswith("no single worker: 6 of 64 workers tie")
    assert answers["Which parallel group?"].startswith("no single group: 6 of 32 DP ranks tie")
    assert answers["Which worker?"].endswith("on its own, the top one is not enough to explain the slowdown.")
    assert ", stage 1 is the longest compute" in answers["Which microbatch?"]


def test_verdicts_one_slow_worker_in_a_synthetic_trace():
    from straggle_edu.traces.synthetic import synthetic_trace

    v = verdicts(analyze_ops(synthetic_trace(dp=4, pp=2, microbatches=4, steps=3, slow_worker=(2, 1, 2.0))))
    assert (v["worker"], v["stage"], v["kind"], v["persistence"]) == ((2, 1), 1, "compute", "persistent")


def test_diagnose_job_refuses_a_per_rank_trace():
    from straggle_edu.traces import analyze_rank_times

    with pytest.raises(ValueError, match="job must be an op-level trace"):
        diagnose_job(analyze_rank_times([[1.0, 2.0]]))
