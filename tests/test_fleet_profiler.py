"""A job of PyTorch profiler traces in the fleet: its files read as Dask tasks of their own, its row analyze's.

Real traces: the gloo DDP jobs PyTorch 2.13 wrote (tests/data/ddp-gloo) and facebookresearch/param's 8-rank DLRM
NCCL trace (tests/data/param-dlrm). The cluster test is slow (a LocalCluster of worker processes).
"""

import logging
import pathlib
import shutil
import warnings

import pytest

from straggle_edu.fleet import _split
from straggle_edu.fleet.engine import job_row, run_fleet
from straggle_edu.fleet.figures import analysis_row
from straggle_edu.fleet.store import read_rows
from straggle_edu.traces import analyze
from straggle_edu.traces.optrace import public_trace_path

DATA = pathlib.Path(__file__).parent / "data"
JOBS = [DATA / "ddp-gloo" / "2r-late", DATA / "ddp-gloo" / "4r-slow", DATA / "param-dlrm"]


def analyzed(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(path, attribution="full")


def test_a_folder_of_profiler_traces_is_planned_as_one_task_per_file(tmp_path):
    assert job_row(DATA / "ddp-gloo" / "4r-slow", split=True)["plan"] == {
        "profiler": [str(DATA / "ddp-gloo" / "4r-slow" / f"rank{r}.pt.trace.json.gz") for r in range(4)]}
    shutil.copy(DATA / "ddp-gloo" / "2r-late" / "rank0.pt.trace.json.gz", tmp_path)
    assert _split.plan(tmp_path, "auto", None) is None  # one file: read in the one task
    assert _split.plan(public_trace_path().parent, "auto", None) is None  # not profiler traces


def test_serial_fleet_rows_of_profiler_jobs_are_analyzes(tmp_path):
    run = run_fleet(JOBS, tmp_path / "out", workers=0, progress=False)
    assert (run.jobs, run.errors) == (3, 0)
    for row in read_rows(tmp_path / "out"):
        want = analysis_row(analyzed(row["path"]))
        assert {k: row[k] for k in want if k in row} == {k: want[k] for k in want if k in row}
        assert (row["slowdown"], row["top_worker"]) == (want["slowdown"], want["top_worker"])


@pytest.mark.slow
def test_on_a_local_cluster_each_rank_is_a_task_and_the_rows_are_analyzes(tmp_path):
    pytest.importorskip("distributed", reason='the fleet on a cluster needs dask: pip install "straggle-edu[fleet]"')
    from distributed import Client, LocalCluster, get_task_stream

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as lc, Client(lc) as client:
        with get_task_stream(client) as stream:
            run = run_fleet(JOBS, tmp_path / "out", scheduler=lc.scheduler_address, progress=False)
        rows = {r["path"]: r for r in read_rows(tmp_path / "out")}
        plans = [job_row(p, split=True) for p in JOBS]
        whole = client.gather([_split.submit(client, p, plan["plan"], f"test-{i}", plan["budget"], analysis=True)
                               for i, (p, plan) in enumerate(zip(JOBS, plans))])
    assert (run.jobs, run.errors) == (3, 0)
    reads = [t for t in stream.data if "-rank" in t["key"] and t["key"].startswith("fleet-")]
    assert len(reads) == 2 + 4 + 8 and len({t["worker"] for t in reads}) == 2  # every file a task, on both workers
    for path, a in zip(JOBS, whole):
        want = analyzed(path)
        assert (a.slowdown, a.m_w, dict(a.by_rank), dict(a.per_step)) == \
            (want.slowdown, want.m_w, dict(want.by_rank), dict(want.per_step))
        row = rows[str(path)]
        assert {k: row[k] for k in analysis_row(want) if k in row} == {k: v for k, v in analysis_row(want).items() if k in row}
