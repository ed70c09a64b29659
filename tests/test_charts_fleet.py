"""Fleet charts: valid specs (to_dict) that draw the figures they are given."""

import json

import pytest
from _chartdata import layer_rows

from straggle_edu.charts import fleet as fleet_charts
from straggle_edu.charts.fleet import (
    cdf_rows,
    culprit_rows,
    lost_by_culprit_chart,
    lost_curve_chart,
    lost_curve_rows,
    remedy_chart,
    short_labels,
    slowdown_cdf_chart,
    study_waste_rows,
    waste_cdf_chart,
    worst_jobs_chart,
)
from straggle_edu.models.osdi2025 import STUDY


def figures(n=5):
    S = [1.0 + 0.1 * i for i in range(n)]
    return {
        "slowdown_cdf": [[s, (i + 1) / n] for i, s in enumerate(S)],
        "waste_cdf": [[1 - 1 / s, (i + 1) / n] for i, s in enumerate(S)],
        "share_slowed_10pct": sum(s >= 1.1 for s in S) / n,
        "gpu_hours_lost": 1000.0,
        "gpu_hours_lost_by_class": {"communication": 250.0, "compute": 750.0},
        "gpu_hours_lost_by_where": {"spread": 100.0, "last-stage": 600.0, "single-worker": 300.0},
        "worst": [{"job_id": f"j{i}", "slowdown": S[-1 - i], "waste": 1 - 1 / S[-1 - i], "gpu_hours_lost": 500.0 / (i + 1),
                   "path": f"j{i}.csv", "analyze": f"straggle-edu analyze j{i}.csv"} for i in range(n)],
    }


def test_cdf_rows_keep_every_point_of_a_short_cdf_and_both_ends_of_a_long_one():
    assert cdf_rows([[1.0, 0.5], [1.5, 1.0]]) == [{"value": 1.0, "share": 0.5}, {"value": 1.5, "share": 1.0}]
    long = [[1 + i / 1e4, (i + 1) / 10_000] for i in range(10_000)]
    rows = cdf_rows(long, max_points=50)
    assert len(rows) == 50 and rows[0] == {"value": 1.0, "share": 1e-4} and rows[-1]["share"] == 1.0
    assert [r["value"] for r in rows] == sorted(r["value"] for r in rows)


def test_cdf_rows_refuse_an_empty_cdf():
    with pytest.raises(ValueError, match="cdf must be a list of"):
        cdf_rows([])


def test_slowdown_cdf_chart_draws_the_cdf_and_the_line():
    spec = slowdown_cdf_chart(figures()).to_dict()
    assert [r["value"] for r in layer_rows(spec, 0)] == pytest.approx([1.0, 1.1, 1.2, 1.3, 1.4])
    assert layer_rows(spec, 1)[0]["value"] == 1.1
    assert spec["title"]["subtitle"] == "80% of the jobs at S >= 1.1"


def test_waste_cdf_chart_marks_the_study_quantiles():
    spec = waste_cdf_chart(figures()).to_dict()
    assert layer_rows(spec, 1)[0]["value"] == pytest.approx(1 - 1 / 1.1)
    study = {round(r["share"], 3): r["value"] for r in layer_rows(spec, 3)}
    assert study[0.5] == float(STUDY["waste_median"]) and study[0.99] == float(STUDY["waste_p99"])
    assert study[round(1 - float(STUDY["jobs_slowed_10pct"]), 3)] == pytest.approx(1 - 1 / 1.1, abs=1e-4)
    assert len(waste_cdf_chart(figures(), study=False).to_dict()["layer"]) == 3


def test_study_waste_rows_are_the_cited_figures():
    assert [r["value"] for r in study_waste_rows()][::2] == [float(STUDY["waste_median"]), float(STUDY["waste_p90"])]


def test_culprit_rows_in_a_fixed_order_with_shares():
    by_class, by_where = culprit_rows(figures())
    assert [(r["key"], r["share"]) for r in by_class] == [("compute", 0.75), ("communication", 0.25)]
    assert [r["key"] for r in by_where] == ["last-stage", "single-worker", "spread"]
    assert [r["label"] for r in by_where] == ["the last stage", "one worker", "spread over many workers"]


def test_culprit_rows_name_the_jobs_without_attribution():
    by_class, _ = culprit_rows({"gpu_hours_lost": 2.0, "gpu_hours_lost_by_class": {"compute": 1.0, "none": 1.0}})
    assert [r["label"] for r in by_class] == ["compute", "no attribution"]


def test_lost_by_culprit_chart_two_panels():
    spec = lost_by_culprit_chart(figures()).to_dict()
    assert len(spec["hconcat"]) == 2
    where = spec["hconcat"][1]
    assert sum(r["gpu_hours"] for r in layer_rows({**where, "datasets": spec.get("datasets", {})}, 0)) == 1000.0


def test_worst_jobs_chart_largest_first_with_the_analyze_line():
    spec = worst_jobs_chart(figures(), top=3).to_dict()
    rows = layer_rows(spec, 0)
    assert [r["job_id"] for r in rows] == ["j0", "j1", "j2"]
    assert rows[0]["analyze"] == "straggle-edu analyze j0.csv" and rows[0]["label"] == "S = 1.40"
    assert "analyze" in [t["field"] for t in spec["layer"][0]["encoding"]["tooltip"]]


def test_worst_jobs_chart_labels_walked_jobs_apart():
    # review: a walked folder's job ids are full paths, and all ten labels read "…/demo/jobs/trace-j…"
    f = figures(10)
    for i, w in enumerate(f["worst"]):
        w["job_id"] = f"/home/someone/fleets/2026-12/demo/jobs/trace-job-{i:04d}.parquet"
    spec = worst_jobs_chart(f).to_dict()
    labels = [r["job"] for r in layer_rows(spec, 0)]
    assert labels == [f"trace-job-{i:04d}.parquet" for i in range(10)]
    assert spec["layer"][0]["encoding"]["y"]["field"] == "job"
    assert "job_id" in [t["field"] for t in spec["layer"][0]["encoding"]["tooltip"]]  # the whole id, on hover


@pytest.mark.parametrize("ids", [
    ["a/b/trace.csv", "c/b/trace.csv", "d/b/trace.csv"],
    ["runs/" + "x" * 50 + f"/{i}/" + "y" * 50 + "/t.csv" for i in range(3)],
    ["job-1", "job-2"],
    ["q" * 80 + "1", "q" * 80 + "2", "r" * 80 + "1"],
])
def test_short_labels_are_short_and_distinct(ids):
    labels = short_labels(ids)
    assert len(set(labels)) == len(ids)
    assert all(len(label) <= 34 for label in labels)


def test_lost_curve_chart_draws_both_orders_and_the_diagonal():
    f = {"lost_curve": {"by_lost": [[0.0, 0.0], [0.5, 0.9], [1.0, 1.0]], "by_waste": [[0.0, 0.0], [0.5, 0.6], [1.0, 1.0]]}}
    rows = lost_curve_rows(f)
    assert [r["lost"] for r in rows] == [0.0, 0.9, 1.0, 0.0, 0.6, 1.0]
    spec = lost_curve_chart(f).to_dict()
    assert len(layer_rows(spec, 0)) == 2 and len(layer_rows(spec, 1)) == 6
    with pytest.raises(ValueError, match="lost_curve"):
        lost_curve_chart({"lost_curve": {"by_lost": []}})


def test_worst_jobs_chart_by_waste_without_gpu_hours():
    f = figures()
    for r in f["worst"]:
        r["gpu_hours_lost"] = None
    spec = worst_jobs_chart(f).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["field"] == "waste"


def test_worst_jobs_chart_refuses_no_jobs_and_a_bad_top():
    with pytest.raises(ValueError, match="at least one job"):
        worst_jobs_chart({"worst": []})
    with pytest.raises(ValueError, match="top must be a whole number in 1..50, got 0"):
        worst_jobs_chart(figures(), top=0)


def test_remedy_chart_draws_both_remedies_against_the_loss():
    gains = {"lost": 1000.0, "replace": {"jobs": 2, "gpu_hours": 100.0, "share": 0.1},
             "rebalance": {"jobs": 30, "gpu_hours": 400.0, "share": 0.4}}
    rows = layer_rows(remedy_chart(gains).to_dict(), 0)
    assert [(r["gpu_hours"], r["jobs"]) for r in rows] == [(1000.0, None), (100.0, 2), (400.0, 30)]


def _inline(spec):
    """``spec`` (a to_dict()) with its named datasets put back where they are used, and no config or $schema."""
    def walk(node):
        if isinstance(node, dict):
            node = {k: walk(v) for k, v in node.items() if k not in ("datasets", "config", "$schema")}
            if isinstance(node.get("data"), dict) and "name" in node["data"]:
                node["data"] = {"values": spec["datasets"][node["data"]["name"]]}
            return node
        return [walk(v) for v in node] if isinstance(node, list) else node

    return walk(spec)


@pytest.mark.parametrize("name, args", [
    ("slowdown_cdf", lambda: (figures(),)), ("waste_cdf", lambda: (figures(),)), ("lost_by_culprit", lambda: (figures(),)),
    ("worst_jobs", lambda: (figures(), 3)),
    ("lost_curve", lambda: ({"lost_curve": {"by_lost": [[0, 0], [1, 1]], "by_waste": [[0, 0], [1, 1]]}},)),
    ("remedy", lambda: ({"lost": 10.0, **{k: {"jobs": 1, "gpu_hours": 1.0, "share": 0.1} for k in ("replace", "rebalance")}},)),
])
def test_each_chart_is_its_spec(name, args):
    # the report embeds the *_spec dicts (no Altair); a notebook draws the *_chart: the same chart
    chart = getattr(fleet_charts, f"{name}_chart")(*args()).to_dict()
    assert _inline(chart) == json.loads(json.dumps(getattr(fleet_charts, f"{name}_spec")(*args())))
