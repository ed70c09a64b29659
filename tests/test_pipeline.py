"""Tests for the pipeline schedule and simulator (straggle_edu.models.pipeline)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.models.pipeline import schedule_1f1b


def test_schedule_1f1b_two_stages_by_hand():
    assert schedule_1f1b(2, 3) == [
        [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("B", 2)],
        [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2)],
    ]


def test_schedule_1f1b_four_stages_first_stage_by_hand():
    # Megatron's first stage with P=4, M=6: 3 warm-up forwards, 3 pairs, 3 cool-down backwards.
    assert schedule_1f1b(4, 6)[0] == [
        ("F", 0), ("F", 1), ("F", 2),
        ("F", 3), ("B", 0), ("F", 4), ("B", 1), ("F", 5), ("B", 2),
        ("B", 3), ("B", 4), ("B", 5),
    ]


def test_schedule_1f1b_one_stage_alternates():
    assert schedule_1f1b(1, 2) == [[("F", 0), ("B", 0), ("F", 1), ("B", 1)]]


@given(st.integers(1, 8), st.integers(1, 12))
def test_schedule_1f1b_properties(P, M):
    sched = schedule_1f1b(P, M)
    assert len(sched) == P
    for s, ops in enumerate(sched):
        assert sorted(ops) == sorted([("F", m) for m in range(M)] + [("B", m) for m in range(M)])
        # forwards and backwards each run in microbatch order
        assert [m for k, m in ops if k == "F"] == list(range(M))
        assert [m for k, m in ops if k == "B"] == list(range(M))
        # B of m after F of m; in flight never exceeds P - s
        done_f, in_flight = set(), 0
        for kind, m in ops:
            if kind == "F":
                done_f.add(m)
                in_flight += 1
            else:
                assert m in done_f
                in_flight -= 1
            assert in_flight <= P - s
        warmup = next(i for i, (k, _) in enumerate(ops) if k == "B")
        assert warmup == min(P - s - 1, M) + (1 if M > P - s - 1 else 0)


@pytest.mark.parametrize("bad", [0, -1, 2.5, None, "x"])
def test_schedule_1f1b_bad_input(bad):
    with pytest.raises(ValueError, match="stages must be"):
        schedule_1f1b(bad, 4)
    with pytest.raises(ValueError, match="microbatches must be"):
        schedule_1f1b(4, bad)
