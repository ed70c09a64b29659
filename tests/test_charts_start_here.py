"""The map's chart: job step time against the average worker's."""

import pytest
from _vega import drawn_texts, with_params
from scipy import stats

from straggle_edu import expected_max
from straggle_edu.charts.start_here import job_vs_average_chart

NS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


@pytest.fixture(scope="module")
def normal_job():
    dist = stats.norm(1.0, 0.05)
    return dist, expected_max(dist, NS)


def test_job_vs_average_chart_labels_the_picked_count(normal_job):
    dist, job = normal_job
    texts = drawn_texts(job_vs_average_chart(NS, job, 1.0, n=4096))
    speedup = 4096 * 1.0 / job[-1]
    assert f"4,096 workers do the work of {speedup:,.0f}" in texts
    assert f"{job[-1]:.3f} s" in texts and "1.000 s" in texts


@pytest.mark.parametrize("n, picked", [(90, 64), (1, 1), (3, 4), (5000, 4096), (181, 128), (182, 256)])
def test_job_vs_average_chart_picks_the_nearest_count_on_a_log_scale(normal_job, n, picked):
    _, job = normal_job
    texts = drawn_texts(with_params(job_vs_average_chart(NS, job, 1.0), n=n))
    assert any(t.startswith(f"{picked:,} workers do the work of") for t in texts)


def test_job_vs_average_chart_defaults_to_the_largest_count(normal_job):
    _, job = normal_job
    params = {p["name"]: p["value"] for p in job_vs_average_chart(NS, job, 1.0).to_dict()["params"]}
    assert params["n"] == 4096


@pytest.mark.parametrize(
    "ns, job, average, message",
    [
        ([1, 2], [1.0], 1.0, r"job must be one time per worker count \(2\)"),
        ([2, 1], [1.0, 1.0], 1.0, "ns must be increasing"),
        ([0, 1], [1.0, 1.0], 1.0, r"ns must be >= 1, got 0.0"),
        ([1, 2], [1.0, -1.0], 1.0, "job must be >= 0, got -1.0"),
        ([1, 2], [1.0, 1.1], 0.0, "average must be > 0, got 0.0"),
        ([], [], 1.0, "ns must be a 1-D array of 1 to 5,000 worker counts"),
    ],
)
def test_job_vs_average_chart_bad_input(ns, job, average, message):
    with pytest.raises(ValueError, match=message):
        job_vs_average_chart(ns, job, average)
