"""Every root-cause exercise accepts one right answer (worked out by hand here) and rejects a wrong one."""

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.root_causes import q1, q2, q3, q4
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": 151936 / (12 * 2048 + 2 * 4096),
    "q2": (1 + 0.2 * (1 - 0.95**256)) / (1 + 0.2 / 20) - 1,
    "q3": 1 / (1 - 0.213),  # the study's p90 job
    "q4": 1,  # straggler_scenario("slow worker", rng=7) slows dp rank 1 (its truth, and diagnose agrees)
}
WRONG = {"q1": 1.0, "q2": 0.2, "q3": 1.213, "q4": 0}


@pytest.mark.parametrize("q", [q1, q2, q3, q4], ids=lambda q: q.name)
def test_root_causes_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4], ids=lambda q: q.name)
def test_root_causes_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", [q1, q2, q3, q4], ids=lambda q: q.name)
def test_root_causes_exercise_blank_hint_and_solution(q, capsys):
    q.check(____)
    assert not q.is_correct(____)
    q.hint()
    q.solution()
    out = capsys.readouterr().out
    assert "Not attempted" in out and "Hint: " in out and "Solution: " in out


def test_root_causes_q4_diagnosis_agrees_with_the_truth():
    from straggle_edu.models.causes import straggler_scenario
    from straggle_edu.traces.diagnose import diagnose_job

    assert int(diagnose_job(straggler_scenario("slow worker", rng=7)).by_dp.argmax()) == RIGHT["q4"]
