"""Every root-cause exercise accepts one right answer (worked out by hand here) and rejects a wrong one."""

import pytest

from straggle_edu.exercises import ____
from straggle_edu.exercises.root_causes import q1, q2, q3, q4, q5, q6, split_slowdown
from _exercise_checks import assert_right, assert_wrong

RIGHT = {
    "q1": 151936 / (12 * 2048 + 2 * 4096),
    "q2": (1 + 0.2 * (1 - 0.95**256)) / (1 + 0.2 / 20) - 1,
    "q3": 1 / (1 - 0.213),  # the study's p90 job
    "q4": 1,  # straggler_scenario("slow worker", rng=7) slows dp rank 1 (its truth, and diagnose agrees)
    "q5": [8, 7, 7, 2],  # the last stage keeps 2 layers: its 2 + 4.64 output layers ~ the others' 7 or 8
    "q6": "keep running",  # 12 x 1.2 = 14.4 h against 0.5 + 2 + 12 = 14.5 h
}
WRONG = {"q1": 1.0, "q2": 0.2, "q3": 1.213, "q4": 0, "q5": [6, 6, 6, 6], "q6": "replace"}
ALL = [q1, q2, q3, q4, q5, q6]


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_root_causes_exercise_right_answer(q, capsys):
    assert_right(q, RIGHT[q.name], capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
def test_root_causes_exercise_wrong_answer(q, capsys):
    assert_wrong(q, WRONG[q.name], capsys)


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.name)
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


def test_root_causes_q5_accepts_any_split_as_fast_and_rejects_junk():
    # [8, 8, 7, 1] ties [8, 7, 7, 2]; [8, 8, 6, 2] is not an even split of the first three but is as fast
    for split in ([8, 8, 7, 1], [8, 8, 6, 2]):
        assert q5.is_correct(split)
    for junk in ([8, 8, 8], [24, 0, 0, 0], "8,7,7,2", [7.5, 7.5, 7, 2], None):
        assert not q5.is_correct(junk)


def test_root_causes_q5_moving_layers_off_the_last_stage_helps_then_hurts():
    # the output layer is 4.64 layers: keeping 3 on the last stage is better than 6, keeping 0 is not a split
    assert split_slowdown([8, 7, 7, 2]) < split_slowdown([7, 7, 7, 3]) < split_slowdown([6, 6, 6, 6])


def test_root_causes_q6_takes_the_short_answer():
    assert q6.is_correct("keep") and q6.is_correct(" Keep running ") and not q6.is_correct(1)
