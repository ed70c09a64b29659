"""Charts of a trace analysis: built, validated against the Vega-Lite schema (to_dict), data checked."""

import numpy as np
import pytest

from straggle_edu.charts.debug_job import (
    cause_gallery_chart,
    trace_attribution_chart,
    trace_heatmap_chart,
    worker_ops_chart,
)
from straggle_edu.traces import analyze, analyze_rank_times, cause_gallery
from straggle_edu.traces.synthetic import example_trace, synthetic_trace
from straggle_edu.traces.whatif import worker_timeline


def data_of(spec, panel=None):
    """The inline rows a chart (or one of its panels / layers) draws.

    Altair lifts shared data to the top level and turns inline values into
    named ``datasets``; follow either.
    """
    for node in (panel, spec):
        data = None if node is None else node.get("data")
        if isinstance(data, dict):
            if "values" in data:
                return data["values"]
            if "name" in data:
                return spec["datasets"][data["name"]]
    raise KeyError("no data")


@pytest.fixture(scope="module")
def slow():
    return analyze(example_trace("slow-worker"))


def test_heatmap_has_one_cell_per_worker_step_and_a_worker_selection(slow):
    spec = trace_heatmap_chart(slow).to_dict()
    rows = data_of(spec, spec["vconcat"][0])
    assert len(rows) == 8 * 8
    assert {p["name"] for p in spec.get("params", [])} == {"worker"}
    worst = max(rows, key=lambda r: r["S"])
    assert worst["worker"] == "dp 1 · stage 1"
    assert all(r["S"] >= 0.9 for r in rows)


def test_heatmap_keeps_the_slowest_workers_of_a_large_job():
    a = analyze(synthetic_trace(300, 2, 1, 10, slow_worker=(123, 1, 2.0), rng=0))
    spec = trace_heatmap_chart(a, max_rows=1000).to_dict()
    rows = data_of(spec, spec["vconcat"][0])
    assert len(rows) <= 1000
    assert any(r["worker"] == "dp 123 · stage 1" for r in rows)


def test_heatmap_of_a_per_rank_trace():
    a = analyze_rank_times([[1.0, 2.0], [1.0, 1.0]])
    spec = trace_heatmap_chart(a).to_dict()
    rows = data_of(spec, spec["vconcat"][0])
    assert {r["worker"] for r in rows} == {"rank 0", "rank 1"}


@pytest.mark.parametrize("by", ["by_optype", "by_stage", "by_dp_rank", "by_worker"])
def test_attribution_chart_sorted_with_the_job_line(slow, by):
    spec = trace_attribution_chart(slow, by).to_dict()
    bars = data_of(spec, spec["layer"][0])
    assert [r["S"] for r in bars] == sorted((r["S"] for r in bars), reverse=True)
    assert data_of(spec, spec["layer"][1]) == [{"S": slow.slowdown}]


def test_attribution_chart_rejects_a_missing_attribution(slow):
    with pytest.raises(ValueError, match="by must be"):
        trace_attribution_chart(slow, "by_rank")


def test_worker_ops_chart_has_both_lanes_and_marks_long_ops(slow):
    ops = worker_timeline(slow, 1, 1, int(slow.steps[0]))
    spec = worker_ops_chart(ops).to_dict()
    rows = data_of(spec)
    assert len(rows) == 2 * len(ops)
    long = [r for r in rows if r["kind"] == "ran long"]
    assert long and all(r["op"] in ("forward-compute", "backward-compute") for r in long)
    rec = [r for r in rows if r["lane"] == "recorded"]
    ideal = [r for r in rows if r["lane"] == "ideal replay"]
    assert max(r["end"] for r in ideal) < max(r["end"] for r in rec)  # ideal is shorter


def test_cause_gallery_chart():
    rows = cause_gallery(steps=4)
    spec = cause_gallery_chart(rows).to_dict()
    cells = data_of(spec, spec["layer"][0])
    assert len(cells) == 4 * len(rows)
    s = {c["cause"]: c["value"] for c in cells if c["metric"] == "S"}
    assert s["slow-worker"] > s["none"]
    assert np.isfinite([c["value"] for c in cells if c["value"] is not None]).all()


def test_collective_tell_chart_marks_the_culprit():
    from straggle_edu.charts.debug_job import collective_tell_chart

    spec = collective_tell_chart({0: 0.063, 1: 0.054}, culprit=1, by="DP rank").to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [r["culprit"] for r in rows] == [False, True]
    assert rows[1]["ms"] == pytest.approx(54.0)


def test_collective_tell_chart_names_its_statistic():
    from straggle_edu.charts.debug_job import collective_tell_chart

    median = collective_tell_chart({0: 0.008, 3: 0.0065}, culprit=3, by="stage", stat="median").to_dict()
    assert median["encoding"]["x"]["title"].startswith("median recorded collective")
    with pytest.raises(ValueError, match="stat must be 'mean' or 'median', got 'max'"):
        collective_tell_chart({0: 0.008}, stat="max")


def test_worker_ops_chart_calls_non_communicating_ops_local_ops(slow):
    # "local" alone is 11's local-SGD scheme in the catalog; here it is an op that does not communicate
    ops = worker_timeline(slow, 0, 0, int(slow.steps[0]))
    kinds = {r["kind"] for r in data_of(worker_ops_chart(ops, long_factor=1e9).to_dict())}
    assert "local op" in kinds and "local" not in kinds


def test_collective_tell_chart_empty():
    from straggle_edu.charts.debug_job import collective_tell_chart

    with pytest.raises(ValueError, match="tell must be a non-empty dict"):
        collective_tell_chart({})


def test_arrival_chart_of_the_packaged_gloo_job_puts_the_late_rank_on_top():
    # a real 2-rank DDP job (straggle_edu/traces/data/ddp_gloo_late): rank 1 sleeps 40 ms before each forward
    from straggle_edu.charts.debug_job import arrival_chart
    from straggle_edu.traces.profiler import DDP_GLOO_LATE

    a = analyze(DDP_GLOO_LATE)
    spec = arrival_chart(a).to_dict()
    rows = data_of(spec)
    assert len(rows) == 2 * 40 and spec["title"] == "each rank's arrival at each collective"
    by = {(r["n"], r["rank"]): r for r in rows}
    for n in range(1, 41):
        late, early = by[(n, "rank 1")], by[(n, "rank 0")]
        assert early["ms"] == 0.0 and late["ms"] > 30 and late["wait"] == 0.0
        assert early["wait"] == pytest.approx(late["ms"], abs=1e-3)  # rank 0 waits until rank 1 arrives
    short = arrival_chart(a, max_rows=10).to_dict()
    assert len(data_of(short)) == 10 and short["title"] == "each rank's arrival at the first 5 collectives"


def test_arrival_chart_refuses_an_analysis_without_arrivals(slow):
    from straggle_edu.charts.debug_job import arrival_chart

    with pytest.raises(ValueError, match="analysis must be an Analysis of a profiler trace with collectives"):
        arrival_chart(slow)
