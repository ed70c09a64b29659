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
    profiler = tmp_path / "profiler"  # a real 2-rank gloo DDP job (HTA's sample holds 2 of 128 ranks: refused)
    profiler.mkdir()
    for rank in DATA.joinpath("ddp-gloo", "2r-late").glob("rank*.pt.trace.json.gz"):
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
        # every row names its file: led by the path where analyze's line does not (pyarrow's "Parquet magic bytes")
        assert rows[str(path)]["error"] == (line if path.name in line else f"{path}: {line}")
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


def test_a_one_off_culprit_is_no_single_worker_a_persistent_one_is():
    # review M7/H3: GC pauses put one worker's share of the excess above one half in a few steps; a slow GPU does it in
    # every step. Only the second is a host to replace.
    from straggle_edu.traces import analyze
    from straggle_edu.traces.synthetic import synthetic_trace

    gc = analysis_row(analyze(synthetic_trace(dp=4, pp=2, microbatches=4, steps=8, jitter=0.01, rng=4,
                                              gc_pauses=(0.2, 0.02)), attribution="full"))
    assert gc["worker_share"] > 0.9 and gc["second_worker_s"] < gc["top_worker_s"]  # the old rule said single-worker
    assert gc["worker_steps"] == 0.25 and gc["culprit_where"] == "spread"
    slow = analysis_row(analyze(synthetic_trace(dp=4, pp=2, microbatches=4, steps=8, jitter=0.01, rng=4,
                                                slow_worker=(1, 1, 1.6)), attribution="full"))
    assert slow["worker_steps"] == 1.0 and slow["culprit_where"] == "single-worker"


@pytest.mark.parametrize("name, where, steps", [("AR", "single-worker", 1.0), ("ST", "last-stage", 1.0),
                                                ("SE", "last-stage", 0.349)])
def test_public_jobs_culprit_and_its_persistence(name, where, steps):
    # AR's artificially slowed rank is slow in each of its 44 steps; SE's long sequences move from step to step
    row = job_row(OSDI / f"trace-{name}.parquet")
    assert row["culprit_where"] == where and row["worker_steps"] == pytest.approx(steps, abs=5e-4)


def test_two_runs_write_the_same_files_whatever_order_the_jobs_finish_in(tmp_path):
    # review: rows were kept in the order jobs finished, and fleet.json's sums followed it (last digits differed)
    for name, seed in (("a", 5), ("b", 6)):
        (tmp_path / name).mkdir()
        synthetic_fleet(tmp_path / name, 3, seed=seed)
    run_fleet([tmp_path / "a", tmp_path / "b"], tmp_path / "one", workers=0, progress=False)
    run_fleet([tmp_path / "b", tmp_path / "a"], tmp_path / "two", workers=0, progress=False)  # b's jobs finish first
    assert (tmp_path / "one" / "fleet.json").read_bytes() == (tmp_path / "two" / "fleet.json").read_bytes()
    one, two = read_rows(tmp_path / "one"), read_rows(tmp_path / "two")
    assert [r["job_id"] for r in one] == sorted(r["job_id"] for r in one) == [r["job_id"] for r in two]
    assert without_seconds(one) == without_seconds(two)


def test_cli_fleet_counts_one_worker_among_the_slowed_jobs(tmp_path, capsys):
    # review H3: over the slowed jobs (S >= 1.1), by culprit_where; the artifact's three sample traces are all slowed,
    # and only AR's culprit is one worker
    assert main(["fleet", str(OSDI), "--out", str(tmp_path), "--workers", "0"]) == 0
    out = capsys.readouterr().out
    figures = json.loads((tmp_path / "fleet.json").read_text())
    assert (figures["slowed_jobs"], figures["slowed_single_worker"], figures["slowed_single_dp_rank"]) == (3, 1, 0)
    assert ("Of the 3 slowed jobs, one worker explains most of the excess, step after step, in 1 (33.3%); "
            "one DP rank in 0 (0.0%).") in out
    assert "demo" not in figures and "demo:" not in out


def test_cli_fleet_of_the_demo_says_calibrated_and_lists_the_worst_by_gpu_hours(tmp_path, capsys):
    # review M2/H3: the demo labelled wherever its figures stand beside the study's; the worst jobs with their loss
    assert main(["fleet-demo", str(tmp_path / "demo"), "--jobs", "6", "--seed", "2", "--no-public", "--format", "csv"]) == 0
    capsys.readouterr()
    assert main(["fleet", str(tmp_path / "demo" / "manifest.csv"), "--out", str(tmp_path / "out"), "--workers", "0"]) == 0
    out = capsys.readouterr().out
    figures = json.loads((tmp_path / "out" / "fleet.json").read_text())
    assert figures["demo"]["seed"] == 2 and figures["demo"]["synthetic_jobs"] == 6
    assert "calibrated" in figures["demo"]["note"] and figures["demo"]["targets"]["jobs_slowed_10pct"] == 0.425
    assert "demo: these jobs are the demo fleet (seed 2" in out and "calibrated" in out and "✓" not in out
    worst = [line for line in out.splitlines() if line.startswith("  job-")]
    lost = [float(line.split("GPU-hours lost")[0].split()[-1].replace(",", "")) for line in worst]
    assert len(worst) == 5 and lost == sorted(lost, reverse=True)
    assert lost[0] == pytest.approx(figures["worst"][0]["gpu_hours_lost"], abs=0.5)
    report = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "calibrated" in report and "demo:" in report


def test_a_part_written_before_a_column_existed_is_analysed_again(tmp_path):
    # the parts of an earlier version lack worker_steps and dp_rank_steps, and judged culprit_where without them
    (tmp_path / "src").mkdir()
    synthetic_fleet(tmp_path / "src", 2, seed=7)
    run_fleet([tmp_path / "src"], tmp_path / "out", workers=0, progress=False)
    part = sorted((tmp_path / "out" / "parts").rglob("*.json"))[0]
    old = json.loads(part.read_text())
    del old["worker_steps"], old["dp_rank_steps"]
    part.write_text(json.dumps(old))
    again = run_fleet([tmp_path / "src"], tmp_path / "out", workers=0, progress=False)
    assert (again.analysed, again.cached) == (1, 1) and "worker_steps" in json.loads(part.read_text())


def test_a_small_fleet_runs_in_this_process_unless_workers_are_given(tmp_path, capsys, monkeypatch):
    """Under SMALL_FLEET_BYTES of traces and no cluster named, no LocalCluster is started (its start would take
    longer than the work), and stderr says so; --workers N still starts one; the rows are the same."""
    from straggle_edu.fleet import engine
    from straggle_edu.fleet.cluster import ENV_ADDRESS, SMALL_FLEET_BYTES

    monkeypatch.delenv(ENV_ADDRESS, raising=False)
    started = []
    real = engine.local_cluster
    monkeypatch.setattr(engine, "local_cluster", lambda n: started.append(n) or real(n))
    assert sum(p.stat().st_size for p in OSDI.iterdir()) < SMALL_FLEET_BYTES
    assert main(["fleet", str(OSDI), "--out", str(tmp_path / "small")]) == 0
    err = capsys.readouterr().err
    assert started == [] and f"under {SMALL_FLEET_BYTES // 2**20} MiB of traces, analysed in this process" in err
    assert main(["fleet", str(OSDI), "--out", str(tmp_path / "cluster"), "--workers", "1"]) == 0
    assert started == [1] and "analysed in this process" not in capsys.readouterr().err
    assert without_seconds(read_rows(tmp_path / "small")) == without_seconds(read_rows(tmp_path / "cluster"))
    assert not engine.small_fleet(engine.expand([str(OSDI)]), limit=SMALL_FLEET_BYTES // 2**20)
