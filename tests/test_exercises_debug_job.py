"""Every debug-a-real-job exercise accepts one right answer (worked out independently here) and rejects a wrong one."""

import numpy as np
import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.debug_job import q1, q2, q3, q4, q5, q6
from straggle_edu.models.pipeline import pipeline_step_times
from _exercise_checks import assert_right, assert_wrong


def m_s_by_hand():
    # DP 2 x PP 4, 8 microbatches, f = 1, b = 2, last stage 1.5x; the ideal is the mean over all workers
    slow = np.ones((2, 4, 8))
    slow[:, 3] = 1.5
    ideal = np.full_like(slow, slow.mean())
    fixed = slow.copy()
    fixed[:, 3] = slow.mean()
    T = lambda x: pipeline_step_times(4, 8, x, 2 * x, dp=2)  # noqa: E731
    return float((T(slow) - T(fixed)) / (T(slow) - T(ideal)))


def recorded(cause):
    from straggle_edu.traces import analyze
    from straggle_edu.traces.synthetic import example_trace

    return analyze(example_trace(cause)).recorded_step_time.mean()


RIGHT = {
    "q1": 3.0 / ((7 * 1.0 + 3.0) / 8),  # 2.4
    "q2": (3, 2),  # mystery_trace() slows dp rank 3, stage 2
    "q3": "gc-pauses",
    "q4": m_s_by_hand(),
    "q5": "replace",  # 3.3 x 1.5 = 4.95 h against 1 + 0.5 + 3.3 = 4.8 h
    "q6": 1.0 / (recorded("slow-worker") / recorded("none") - 1.0),  # (20 + 40 min) / (speed-up - 1)
}
WRONG = {"q1": 3.0, "q2": (2, 3), "q3": "slow-worker", "q4": 1.0, "q5": "keep running", "q6": 1.0 / (1.56 - 1.0)}
ALL = [q1, q2, q3, q4, q5, q6]


def test_m_s_by_hand_is_8_over_7():
    assert m_s_by_hand() == pytest.approx(8 / 7)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_debug_job_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_debug_job_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_debug_job_exercise_blank_hint_and_solution(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "Not attempted" in out and "Hint: " in out and "Solution: " in out


def test_q2_accepts_a_list_and_rejects_junk(capsys):
    q2.check([3, 2])
    assert q2.is_correct([3, 2])
    q2.check("dp 3")
    assert not q2.is_correct("dp 3")


def test_q4_rejects_the_other_last_stage_example():
    # issue 15, point 7: the text above q4 shows example_trace("last-stage") (M_S 1.30); q4 asks about
    # last_stage_trace() (8/7), and the two must not be confused by the checker
    from straggle_edu.traces import analyze
    from straggle_edu.traces.synthetic import example_trace

    assert not q4.is_correct(analyze(example_trace("last-stage")).m_s)


def test_q5_what_if_s_would_give_the_other_answer():
    # the point of q5: with the what-if S (rebalanced work) instead of the replacement's 1.5, keeping looks better
    from straggle_edu.models.remedies import restart_or_keep
    from straggle_edu.traces import analyze_rank_times

    what_if = analyze_rank_times([[1.5] + [1.0] * 7]).slowdown
    assert what_if == pytest.approx(1.5 / (8.5 / 8))
    assert restart_or_keep(3.3, what_if, restart=1.0, lost=0.5).choice == "keep running"


def test_q5_says_the_reading_that_decides_it():
    # "3.3 hours of work left" read as hours at full speed gives "replace" (4.95 h against 4.8 h); read as the
    # job's current ETA it gives "keep running" (3.3 h against 1 + 0.5 + 3.3 / 1.5 = 3.7 h). The question must say.
    import json
    from pathlib import Path

    from straggle_edu.exercises.debug_job import q5
    from straggle_edu.models.remedies import replaced_slowdown, restart_or_keep

    speedup = replaced_slowdown([[1.5] + [1.0] * 7])
    as_eta = "replace" if 3.3 > 1.0 + 0.5 + 3.3 / speedup else "keep running"
    assert restart_or_keep(3.3, speedup, restart=1.0, lost=0.5).choice == q5.expected() != as_eta
    root = Path(__file__).resolve().parents[1] / "notebooks"
    for path, words in ((root / "09_debug_a_real_job.ipynb", "at full speed"), (root / "zh" / "09_debug_a_real_job.ipynb", "全速")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        question = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("**q5"))
        assert words in question, f"{path.name}: q5 does not say that its 3.3 hours are {words}"
