"""The fleet sandbox: each control changes what it should, and the remedies agree with fleet/remedies.py."""

import pytest
from _chartdata import layer_rows

from straggle_edu.explorers.fleet import fleet_explorer, fleet_readout
from straggle_edu.fleet.demo import draw_jobs, drawn_rows
from straggle_edu.fleet.remedies import apply_remedies, remedy_gains, slowed_shares


@pytest.fixture()
def ex():
    return fleet_explorer(jobs=120, seed=3)


def _S(ex):
    return [r["value"] for r in layer_rows(ex.charts["cdf"].spec, 0)]


def test_fleet_explorer_starts_on_the_drawn_fleet(ex):
    rows = drawn_rows(draw_jobs(120, seed=3))
    jobs, hours = slowed_shares(rows)
    assert ex.readout.value.startswith(f"S ≥ 1.10: <b>{100 * jobs:.1f}%</b> of the jobs, {100 * hours:.1f}%")
    assert max(_S(ex)) == pytest.approx(max(r["slowdown"] for r in rows))


def test_fleet_explorer_threshold_moves_the_line_and_the_readout(ex):
    ex.controls["threshold"].value = 1.5
    spec = ex.charts["cdf"].spec
    assert layer_rows(spec, 1)[0]["value"] == 1.5 and layer_rows(spec, 2)[0]["label"] == "S = 1.5"
    assert ex.readout.value.startswith("S ≥ 1.50: ")
    assert spec["title"]["subtitle"].endswith("of the jobs at S >= 1.5")


def test_fleet_explorer_full_rebalance_gets_back_what_remedy_gains_says(ex):
    rows = drawn_rows(draw_jobs(120, seed=3))
    before = _S(ex)
    ex.controls["rebalance"].value = 1.0
    want = remedy_gains(rows)["rebalance"]["gpu_hours"]
    assert f"got back: <b>{want:,.0f}</b> GPU-hours" in ex.readout.value
    assert max(_S(ex)) <= max(before) and _S(ex) != before


def test_fleet_explorer_replacing_hosts_fixes_the_faults(ex):
    ex.controls["replace"].value = 1.0
    faults = [r for r in drawn_rows(draw_jobs(120, seed=3)) if r["culprit_where"] == "single-worker"]
    assert faults and max(_S(ex)) < min(r["slowdown"] for r in faults)


def test_fleet_explorer_on_a_fleet_runs_rows():
    rows = [{"job_id": "a", "slowdown": 2.0, "gpus": 8, "hours": 10.0, "gpu_hours_lost": 40.0,
             "culprit_where": "last-stage", "top_stage_s": 2.0},
            {"job_id": "b", "slowdown": 1.05, "gpus": 8, "hours": 10.0, "gpu_hours_lost": 80 * (1 - 1 / 1.05),
             "culprit_where": "spread"}]
    ex = fleet_explorer(rows)
    ex.controls["rebalance"].value = 0.5
    after = apply_remedies(rows, rebalance=0.5)
    assert ex.readout.value == fleet_readout(after, 1.1, before=rows)
    assert after[0]["slowdown"] == 1.5 and after[0]["hours"] == 7.5


def test_fleet_explorer_rejects_a_bad_start():
    with pytest.raises(ValueError, match=r"threshold must be in \[1.02, 2\], got 3"):
        fleet_explorer(threshold=3)
