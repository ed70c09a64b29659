"""The fleet figures (fleet.figures): hand-checkable fleets, the culprit rules, the CDF."""

import json
import math

import numpy as np
import pytest

from straggle_edu.fleet.figures import CDF_POINTS, culprit_class, culprit_where, fleet_figures


def job(i, s, gpus=8, hours=10.0, **kw):
    waste = 1 - 1 / s
    return {"job_id": f"j{i}", "path": f"runs/j {i}.parquet", "slowdown": s, "waste": waste, "gpus": gpus,
            "hours": hours, "gpu_hours_lost": None if gpus is None or hours is None else gpus * hours * waste, **kw}


def test_fleet_figures_by_hand():
    rows = [job(0, 1.0), job(1, 1.05), job(2, 1.25, gpus=16, culprit_class="compute", culprit_where="last-stage",
                                          worker_share=0.3),
            job(3, 2.0, culprit_class="communication", culprit_where="single-worker", worker_share=0.9),
            job(5, 1.12, gpus=None, culprit_class="compute", culprit_where="single-dp-rank"),
            job(4, 1.5, hours=None), {"job_id": "bad", "path": "x.csv", "error": "x.csv: the file is empty"}]
    f = fleet_figures(rows)
    assert (f["jobs"], f["analysed"], f["errors"]) == (7, 6, 1)
    assert f["share_slowed_10pct"] == 4 / 6
    # GPU-hours: 80 + 80 + 160 + 80 = 400 known; slowed (S >= 1.1): 160 + 80
    assert f["gpu_hours"] == 400.0 and f["share_slowed_10pct_gpu_hours"] == 240 / 400
    assert f["gpu_hours_lost"] == pytest.approx(80 * (1 - 1 / 1.05) + 160 * 0.2 + 80 * 0.5)
    assert f["gpu_hours_lost_by_class"]["compute"] == pytest.approx(32.0)
    assert f["gpu_hours_lost_by_class"]["communication"] == pytest.approx(40.0)
    assert f["gpu_hours_lost_by_where"] == pytest.approx(
        {"last-stage": 32.0, "single-dp-rank": 0.0, "single-worker": 40.0, "spread": 0.0,
         "unattributed": 80 * (1 - 1 / 1.05)})
    # review H3: "one worker explains most" counts among the slowed jobs (S >= 1.1: j2, j3, j4, j5), by culprit_where
    assert f["slowed_jobs"] == 4
    assert f["share_slowed_single_worker"] == 1 / 4 and f["share_slowed_single_dp_rank"] == 1 / 4
    assert "share_one_worker_dominant" not in f
    assert f["slowdown_cdf"][-1] == [2.0, 1.0]
    assert [w["job_id"] for w in f["worst"]] == ["j3", "j2", "j1", "j0", "j4", "j5"]  # by GPU-hours lost; unknown last
    assert f["worst"][0]["analyze"] == "straggle-edu analyze 'runs/j 3.parquet'"


def test_fleet_figures_same_whatever_order_the_jobs_finished_in():
    # review: row order and the last digits of fleet.json's sums followed the order the jobs finished in
    rows = [job(i, 1 + ((i * 7919) % 1000) / 997, gpus=8 + i % 5, hours=0.1 * (i % 13) + 1.3) for i in range(300)]
    shuffled = [rows[i] for i in np.random.default_rng(1).permutation(len(rows))]
    assert json.dumps(fleet_figures(shuffled)) == json.dumps(fleet_figures(rows))


def test_fleet_figures_lost_curve_by_loss_and_by_waste():
    rows = [job(0, 2.0, gpus=1, hours=10.0),      # waste 0.5, lost 5
            job(1, 1.25, gpus=100, hours=10.0),   # waste 0.2, lost 200
            job(2, 1.0)]                          # lost 0
    curve = fleet_figures(rows)["lost_curve"]
    assert np.allclose(curve["by_lost"], [[0.0, 0.0], [1 / 3, 200 / 205], [2 / 3, 1.0], [1.0, 1.0]])
    assert np.allclose(curve["by_waste"], [[0.0, 0.0], [1 / 3, 5 / 205], [2 / 3, 1.0], [1.0, 1.0]])


def test_fleet_figures_of_no_analysed_job():
    f = fleet_figures([{"job_id": "a", "error": "boom"}])
    assert f["analysed"] == 0 and f["share_slowed_10pct"] is None and f["slowdown_cdf"] == [] and f["worst"] == []
    assert f["slowdown_quantiles"] == {"p50": None, "p90": None, "p99": None, "max": None}


def test_cdf_is_thinned_for_large_fleets_and_ends_at_the_maximum():
    rows = [job(i, 1 + i / 10_000) for i in range(5000)]
    cdf = fleet_figures(rows)["slowdown_cdf"]
    assert len(cdf) == CDF_POINTS and cdf[-1] == [1 + 4999 / 10_000, 1.0] and cdf[0][0] == 1.0
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(cdf, cdf[1:]))


def test_culprit_class():
    assert [culprit_class(o) for o in ("forward-compute", "gc", "optimizer", "grads-reduce-scatter", "backward-pp-comm")] == [
        "compute", "compute", "compute", "communication", "communication"]


@pytest.mark.parametrize("row, where", [
    ({"slowdown": 1.0}, None),
    ({"slowdown": math.nan}, None),
    ({"slowdown": 1.5, "top_worker_s": 1.4, "second_worker_s": 1.1, "worker_steps": 1.0}, "single-worker"),
    # review M7 and H3: a worker that explains most of the excess in a few steps only (a GC pause) is no host to replace
    ({"slowdown": 1.5, "top_worker_s": 1.4, "second_worker_s": 1.1, "worker_steps": 0.25}, "spread"),
    ({"slowdown": 1.5, "top_worker_s": 1.4, "second_worker_s": 1.1, "worker_steps": 0.5}, "spread"),  # alternating
    ({"slowdown": 1.5, "top_worker_s": 1.4, "second_worker_s": 1.1}, "spread"),  # persistence unknown
    ({"slowdown": 1.5, "top_worker_s": 1.4, "second_worker_s": 1.1, "worker_steps": 0.25, "top_stage": 3,
      "last_stage": 3, "top_stage_s": 1.4, "second_stage_s": 1.1}, "last-stage"),
    # every worker of the slow stage explains it: not one worker, not one DP rank, the last stage
    ({"slowdown": 1.5, "top_worker_s": 1.5, "second_worker_s": 1.5, "top_dp_rank_s": 1.5, "second_dp_rank_s": 1.5,
      "top_stage": 1, "last_stage": 1, "top_stage_s": 1.5, "second_stage_s": 1.0}, "last-stage"),
    ({"slowdown": 1.5, "top_worker_s": 1.3, "second_worker_s": 1.3, "top_dp_rank_s": 1.5, "second_dp_rank_s": 1.1,
      "dp_rank_steps": 0.875}, "single-dp-rank"),
    ({"slowdown": 1.5, "top_stage": 0, "last_stage": 1, "top_stage_s": 1.5, "second_stage_s": 1.0}, "spread"),
    ({"slowdown": 1.5, "top_worker_s": 1.2, "second_worker_s": 1.2}, "spread"),
])
def test_culprit_where_rules(row, where):
    assert culprit_where(row) == where
