"""The fleet engine in this process (fleet.engine, workers=0): each row is analyze's answer.

Real data: the OSDI 2025 artifact's AR, SE and ST traces (straggle_edu/traces/data/osdi2025, Apache-2.0), and a
job of each other format with a public sample under tests/data: PyTorch profiler traces
(HolisticTraceAnalysis), Flight Recorder dumps (nvidia-resiliency-ext), an NCCL Inspector log and
straggler logs (the tools' documented examples). The answers they are checked against come from
``straggle-edu analyze TRACE --json``, run through the CLI: the fleet must print the same numbers,
bit for bit (JSON floats round-trip exactly).
The Dask cluster, the killed worker and the killed run are in tests/test_fleet_cluster.py (slow).
"""

import contextlib
import io
import json
import pathlib
import shutil

import pytest

from _fleet import synthetic_fleet, without_seconds
from straggle_edu import set_memory_budget
from straggle_edu.app.cli import main
from straggle_edu.fleet.engine import BYTES_PER_OP, job_row, run_fleet
from straggle_edu.fleet.figures import analysis_row
from straggle_edu.fleet.store import read_rows
from straggle_edu.traces.blocks import analyze_op_file
from straggle_edu.traces.optrace import ARTIFACT_DATA

DATA = pathlib.Path(__file__).parent / "data"
OSDI = ARTIFACT_DATA


def analyze_cli(*args):
    """(exit code, stdout, stderr) of ``straggle-edu analyze ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["analyze", *map(str, args)])
    return code, out.getvalue(), err.getvalue()


def top(table):
    """(id, S_X) with the largest S_X, the lowest id on ties (as analyze ranks them)."""
    return min(table.items(), key=lambda kv: (-kv[1], [int(x) for x in kv[0].split(":")] if kv[0][0].isdigit() else kv[0]))


@pytest.mark.parametrize("name", ["AR", "SE", "ST"])
def test_job_row_is_analyze_bit_for_bit_on_public_traces(name):
    path = OSDI / f"trace-{name}.parquet"
    code, out, _ = analyze_cli(path, "--json", "--attribution", "full")
    want = json.loads(out)
    row = job_row(path)
    assert code == 0 and row["error"] is None and row["format"] == "op-level"
    assert row["slowdown"] == want["slowdown"] and row["waste"] == want["waste"]
    assert (row["top_optype"], row["top_optype_s"]) == top(want["by_optype"])
    assert (str(row["top_stage"]), row["top_stage_s"]) == top(want["by_stage"])
    assert (str(row["top_dp_rank"]), row["top_dp_rank_s"]) == top(want["by_dp_rank"])
    assert (row["top_worker"], row["top_worker_s"]) == top(want["by_worker"])
    assert row["steps"] == len(want["per_step"]) and row["workers"] == len(want["by_worker"])
    assert row["meta_gpus"] == {"AR": 64, "SE": 128, "ST": 8}[name]  # world_size in the artifact's layout file



@pytest.mark.parametrize("name, mib", [("ST", 1), ("SE", 16)])
def test_job_larger_than_the_memory_budget_is_cut_into_blocks_by_itself(name, mib, monkeypatch):
    # a worker's budget as a process started with STRAGGLE_EDU_MEMORY_MIB has it; no block_steps asked for
    path = OSDI / f"trace-{name}.parquet"
    monkeypatch.setenv("STRAGGLE_EDU_MEMORY_MIB", str(mib))
    old = set_memory_budget(mib * 2**20)
    try:
        row = job_row(path)  # analysed here, in blocks
        tasks = job_row(path, split=True)  # what a cluster runs as block tasks
    finally:
        set_memory_budget(old)
    assert row["error"] is None and row["budget"] == mib * 2**20 < row["ops"] * BYTES_PER_OP  # too big read whole
    assert row["blocks"] == len(tasks["plan"]["ranges"]) > 1
    want = analysis_row(analyze_op_file(path, block_steps=None, attribution="full"))  # the whole trace at once
    assert {k: row[k] for k in want} == want  # S and the culprit columns, bit for bit



def test_fleet_of_every_other_format_gives_analyzes_answer(tmp_path):
    # a folder of per-rank files (profiler traces, Flight Recorder dumps) is one job; every other file, one
    profiler = tmp_path / "profiler"  # HTA's two ranks (not its derived copy: the same format, read again)
    profiler.mkdir()
    for rank in DATA.joinpath("hta").glob("sampled_rank-*.json.gz"):
        shutil.copy(rank, profiler)
    sources = [profiler, DATA / "nvidia-resiliency-ext" / "fr_traces", DATA / "documented-examples"]
    run = run_fleet(sources, tmp_path / "out", workers=0, progress=False)
    rows = {r["job_id"]: r for r in read_rows(tmp_path / "out")}
    assert (run.jobs, run.errors) == (8, 0)
    assert {r["format"] for r in rows.values()} == {"torch-profiler", "flight-recorder", "nccl-inspector",
                                                    "straggler-log"}
    for job, row in rows.items():
        code, out, _ = analyze_cli(job, "--json", "--attribution", "full")
        want = json.loads(out)
        assert code == 0 and row["error"] is None and row["format"] == want["format"]
        assert (row["slowdown"], row["waste"]) == (want["slowdown"], want["waste"])  # None: the format has no S
        if want.get("by_rank"):  # a per-rank S_X: the top rank is the row's worker
            assert (row["top_worker"], row["top_worker_s"]) == top(want["by_rank"])
        else:  # formats that only say who is late: the first suspect
            assert row["top_worker"] == (str(want["suspects"][0]) if want["suspects"] else None)
    assert [r["format"] for r in rows.values() if r["slowdown"] is not None] == ["torch-profiler"]


def bad_traces(folder):
    """Files that look like traces and are not: what analyze refuses."""
    (folder / "trace-neg.csv").write_text("step,rank,duration_s\n0,0,1.0\n0,1,-2.0\n")
    (folder / "trace-junk.parquet").write_bytes(b"PAR1 this is not a parquet file")
    (folder / "trace-words.csv").write_text("step,rank,duration_s\n0,0,fast\n")
    return [folder / n for n in ("trace-neg.csv", "trace-junk.parquet", "trace-words.csv")]


def test_bad_trace_gets_analyzes_error_line_and_the_fleet_goes_on(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(OSDI / "trace-ST.parquet", src)
    shutil.copy(OSDI / "meta-ST.yaml", src)
    bad = bad_traces(src)
    run = run_fleet([src], tmp_path / "out", workers=0, progress=False)
    rows = {r["job_id"]: r for r in read_rows(tmp_path / "out")}
    assert run.jobs == 4 and run.errors == 3 and rows[str(src / "trace-ST.parquet")]["error"] is None
    for path in bad:
        code, _, err = analyze_cli(path)
        assert code == 2
        # analyze at a prompt adds which trace of the folder to read instead; the fleet reads them all already
        line = err.strip().removeprefix("straggle-edu analyze: error: ").split("; this folder holds op-level traces")[0]
        assert rows[str(path)]["error"] == line
        assert rows[str(path)]["slowdown"] is None and "\n" not in rows[str(path)]["error"]


def test_fleet_rows_gpu_hours_from_layout_or_manifest(tmp_path):
    paths = synthetic_fleet(tmp_path, 3, seed=1)
    (tmp_path / "fleet.csv").write_text("job_id,path,gpus,hours\n" + "".join(
        f"j{i},{p.name},{'' if i else 64},{'' if i < 2 else 5}\n" for i, p in enumerate(paths)))
    run_fleet([tmp_path / "fleet.csv"], tmp_path / "out", workers=0, progress=False)
    rows = {r["job_id"]: r for r in read_rows(tmp_path / "out")}
    metas = [float((tmp_path / f"meta-job{i:03d}.yaml").read_text().split("hours: ")[1]) for i in range(3)]
    assert (rows["j0"]["gpus"], rows["j0"]["hours"]) == (64, metas[0])  # the manifest's gpus, the layout's hours
    assert (rows["j1"]["gpus"], rows["j1"]["hours"]) == (8, metas[1])  # world_size of DP 4 x PP 2
    assert (rows["j2"]["gpus"], rows["j2"]["hours"]) == (8, 5.0)
    for r in rows.values():
        assert r["gpu_hours_lost"] == r["gpus"] * r["hours"] * r["waste"]


def test_rerun_skips_finished_jobs_and_writes_the_same_tables(tmp_path):
    (tmp_path / "src").mkdir()
    synthetic_fleet(tmp_path / "src", 4, seed=2)
    first = run_fleet([tmp_path / "src"], tmp_path / "out", workers=0, progress=False)
    rows = read_rows(tmp_path / "out")
    again = run_fleet([tmp_path / "src"], tmp_path / "out", workers=0, progress=False)
    assert (first.analysed, first.cached) == (4, 0) and (again.analysed, again.cached) == (0, 4)
    assert read_rows(tmp_path / "out") == rows  # seconds included: the stored rows are reused
    assert json.loads((tmp_path / "out" / "fleet.json").read_text()) == first.figures


def test_tables_during_the_run_hold_the_jobs_finished_so_far(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from straggle_edu.fleet import engine, store

    (tmp_path / "src").mkdir()
    synthetic_fleet(tmp_path / "src", 5, seed=4)
    out, seen, record = tmp_path / "out", [], engine._record

    def watch(st, spool, *args):  # before each job's row is kept: what a reader of DIR sees now
        tables = (out / "jobs.csv").exists(), (out / "jobs.parquet").exists()
        assert tables in ((False, False), (True, True))
        if tables[0]:
            seen.append((len(spool), read_rows(out), pq.read_schema(out / "jobs.parquet")))
            (out / "jobs.parquet").rename(out / "aside.parquet")  # and the CSV alone, as a reader without pyarrow
            assert read_rows(out) == seen[-1][1]
            (out / "aside.parquet").rename(out / "jobs.parquet")
        record(st, spool, *args)

    monkeypatch.setattr(engine, "_record", watch)
    monkeypatch.setattr(store, "_REFRESH_SHARE", 0)  # with refresh=0: a rewrite after every job
    run_fleet([tmp_path / "src"], out, workers=0, progress=False, refresh=0)
    final = read_rows(out)
    assert [k for k, _, _ in seen] == [1, 2, 3, 4]  # the first table after the first job, none before it
    for k, rows, schema in seen:
        assert rows == final[:k] and schema == pq.read_schema(out / "jobs.parquet")  # whole rows, the same types
    monkeypatch.undo()
    run_fleet([tmp_path / "src"], tmp_path / "at-end", workers=0, progress=False, refresh=None)
    assert without_seconds(final) == without_seconds(read_rows(tmp_path / "at-end"))  # the table of old
    assert not list(out.rglob(".tmp-*"))


def test_tables_of_a_small_fleet_come_at_the_end_only(tmp_path, monkeypatch):
    from straggle_edu.fleet import engine

    (tmp_path / "src").mkdir()
    synthetic_fleet(tmp_path / "src", 3, seed=4)
    out, record = tmp_path / "out", engine._record

    def watch(*args):
        assert not (out / "jobs.csv").exists()  # the first rewrite waits 30 s: a small fleet never pays for one
        record(*args)

    monkeypatch.setattr(engine, "_record", watch)
    run_fleet([tmp_path / "src"], out, workers=0, progress=False)
    assert len(read_rows(out)) == 3


def test_cli_fleet_refresh_defaults_to_the_stores_interval(capsys):
    from straggle_edu.fleet.store import REFRESH_SECONDS

    with pytest.raises(SystemExit):
        main(["fleet", "--help"])
    assert f"(default {REFRESH_SECONDS:g})" in " ".join(capsys.readouterr().out.split())


def test_a_copy_of_a_finished_trace_reuses_its_result(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    synthetic_fleet(src, 2, seed=3)
    run_fleet([src], tmp_path / "out", workers=0, progress=False)
    shutil.copy(src / "trace-job001.parquet", src / "trace-copy.parquet")
    shutil.copy(src / "meta-job001.yaml", src / "meta-copy.yaml")
    again = run_fleet([src], tmp_path / "out", workers=0, progress=False)
    rows = without_seconds(read_rows(tmp_path / "out"))
    copy, orig = rows.pop(str(src / "trace-copy.parquet")), rows[str(src / "trace-job001.parquet")]
    assert again.cached == 3 and {k: v for k, v in copy.items() if k not in ("job_id", "path")} == {
        k: v for k, v in orig.items() if k not in ("job_id", "path")}


def test_cli_fleet_prints_the_figures_and_writes_the_files(tmp_path, capsys):
    assert main(["fleet", str(OSDI), "--out", str(tmp_path), "--workers", "0"]) == 0
    out = capsys.readouterr().out
    figures = json.loads((tmp_path / "fleet.json").read_text())
    assert figures["jobs"] == 3 and figures["share_slowed_10pct"] == 1.0
    assert "Slowed by at least 10% (S >= 1.1): 100.0% of the 3 jobs" in out
    assert f"straggle-edu analyze {OSDI / 'trace-AR.parquet'}" in out
    assert {p.name for p in tmp_path.iterdir()} == {"fleet.json", "jobs.csv", "jobs.parquet", "parts", "report.html"}


def test_cli_fleet_in_chinese(tmp_path, capsys):
    assert main(["fleet", str(OSDI / "trace-ST.parquet"), "--out", str(tmp_path), "--workers", "0", "--lang", "zh"]) == 0
    assert "被拖慢至少 10%" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--workers", "-1"], "workers must be a whole number >= 0, got -1"),
    (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "workers must not be given with a scheduler"),
    (["--scheduler", "127.0.0.1:8786"], "scheduler must be an address like tcp://HOST:PORT"),
    (["--block-steps", "x"], "--block-steps must be 'auto' or a whole number >= 0, got 'x'"),
    (["--refresh", "-1"], "refresh must be >= 0, got -1"),
])
def test_cli_fleet_bad_options(tmp_path, capsys, argv, message):
    assert main(["fleet", str(OSDI), "--out", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err
