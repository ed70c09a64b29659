"""What replacing slow hosts and rebalancing stages recover from a fleet's rows, by hand."""

import math

import pytest

from straggle_edu.fleet.remedies import records, recovered, remedy_gains


def row(where, S, lost, **sx):
    return {"culprit_where": where, "slowdown": S, "gpu_hours_lost": lost, **sx}


def test_recovered_is_the_culprits_share_of_the_loss():
    # S = 2, the top worker alone explains S_X = 1.5: half the excess, half the 1000 lost GPU-hours
    assert recovered(row("single-worker", 2.0, 1000.0, top_worker_s=1.5), "replace") == pytest.approx(500.0)
    assert recovered(row("single-dp-rank", 2.0, 1000.0, top_dp_rank_s=1.25), "replace") == pytest.approx(250.0)
    assert recovered(row("last-stage", 1.2, 100.0, top_stage_s=1.1), "rebalance") == pytest.approx(50.0)


def test_recovered_never_more_than_the_loss_nor_below_zero():
    # M_S can exceed 1 (fixing the last stage removes more than the ideal does): the gain stops at the loss
    assert recovered(row("last-stage", 1.2, 100.0, top_stage_s=1.3), "rebalance") == 100.0
    assert recovered(row("last-stage", 1.2, 100.0, top_stage_s=0.99), "rebalance") == 0.0


@pytest.mark.parametrize("r", [
    row("spread", 2.0, 1000.0, top_worker_s=1.5),          # no remedy of this kind
    row("single-worker", 1.0, 0.0, top_worker_s=1.0),      # no slowdown
    row("single-worker", 2.0, None, top_worker_s=1.5),     # GPU-hours unknown
    row("single-worker", None, None),                      # an error row
])
def test_recovered_zero_where_it_does_not_apply(r):
    assert recovered(r, "replace") == 0.0


def test_recovered_names_a_bad_remedy():
    with pytest.raises(ValueError, match="remedy must be one of 'replace', 'rebalance', got 'pray'"):
        recovered(row("spread", 2.0, 1.0), "pray")


def test_remedy_gains_sums_over_the_fleet():
    rows = [row("single-worker", 3.0, 600.0, top_worker_s=2.0),      # 600 x 1/2 = 300
            row("last-stage", 1.5, 400.0, top_stage_s=1.25),         # 400 x 1/2 = 200
            row("last-stage", 1.1, 100.0, top_stage_s=1.1),          # all 100
            row("spread", 1.2, 900.0, top_stage_s=1.05),
            row("single-worker", None, None, error="bad trace")]
    g = remedy_gains(rows)
    assert g["lost"] == 2000.0
    assert g["replace"] == {"jobs": 2, "gpu_hours": 300.0, "share": 0.15, "capped": 0, "uncapped_share": 0.15}
    assert g["rebalance"]["jobs"] == 2 and g["rebalance"]["gpu_hours"] == pytest.approx(300.0)


def test_remedy_gains_counts_where_the_cap_binds():
    # review M6: the formula lost x (S_X - 1)/(S - 1) is capped at 1; say where it binds and what it would give without
    rows = [row("last-stage", 1.2, 100.0, top_stage_s=1.3),    # S_X > S: capped, all 100 back (uncapped: 150)
            row("last-stage", 1.5, 100.0, top_stage_s=1.25),   # half: 50
            row("spread", 1.2, 200.0)]
    g = remedy_gains(rows)["rebalance"]
    assert (g["jobs"], g["capped"]) == (2, 1)
    assert g["share"] == pytest.approx(150 / 400) and g["uncapped_share"] == pytest.approx(200 / 400)


def test_records_reads_a_dataframe_with_missing_values():
    pd = pytest.importorskip("pandas", reason="pandas is optional: a DataFrame of rows needs it")
    frame = pd.DataFrame({"job_id": ["a", "b"], "gpus": pd.array([128, None], dtype="Int64"),
                          "slowdown": [1.2, math.nan]})
    assert records(frame) == [{"job_id": "a", "gpus": 128, "slowdown": 1.2}, {"job_id": "b", "gpus": None, "slowdown": None}]


def test_records_refuses_what_is_not_rows():
    with pytest.raises(ValueError, match="rows must be a list of dicts"):
        records(["a"])


def test_apply_remedies_full_fix_gets_back_what_recovered_says():
    from straggle_edu.fleet.remedies import apply_remedies

    rows = [row("last-stage", 1.5, 100.0, top_stage_s=1.25, gpus=10, hours=30.0),   # 300 GPU-hours, 100 lost
            row("single-worker", 3.0, 200.0, top_worker_s=3.0, gpus=10, hours=30.0),
            row("spread", 1.2, 50.0, top_stage_s=1.2, gpus=10, hours=30.0)]
    after = apply_remedies(rows, rebalance=1.0, replace=1.0)
    # the last stage explains half the excess: S 1.5 -> 1.25, 30 h -> 25 h, lost 250 x 0.2 = 50
    assert after[0]["slowdown"] == 1.25 and after[0]["hours"] == 25.0 and after[0]["gpu_hours_lost"] == pytest.approx(50.0)
    assert 100.0 - after[0]["gpu_hours_lost"] == pytest.approx(recovered(rows[0], "rebalance"))
    assert after[1]["slowdown"] == 1.0 and after[1]["gpu_hours_lost"] == 0.0
    assert after[2] == rows[2]  # no remedy of this kind


def test_apply_remedies_refuses_a_share_above_one():
    from straggle_edu.fleet.remedies import apply_remedies

    with pytest.raises(ValueError, match=r"rebalance must be in \[0, 1\], got 1.5"):
        apply_remedies([], rebalance=1.5)


def test_slowed_shares_by_jobs_and_by_gpu_hours():
    from straggle_edu.fleet.remedies import slowed_shares

    rows = [{"slowdown": 1.3, "gpus": 128, "hours": 30.0}, {"slowdown": 1.05, "gpus": 128, "hours": 10.0},
            {"slowdown": 1.1, "gpus": None, "hours": None}, {"slowdown": None, "error": "bad trace"}]
    jobs, hours = slowed_shares(rows, 1.1)
    assert jobs == pytest.approx(2 / 3) and hours == pytest.approx(0.75)
    assert slowed_shares([{"error": "bad"}]) == (None, None)
