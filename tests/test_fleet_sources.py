"""SOURCE expansion (fleet.sources): directories, globs, manifests, and hostile fleets.

Real data: tests/data (the OSDI 2025 artifact's traces beside their result files, HTA's profiler
traces, nvidia-resiliency-ext's Flight Recorder dumps, documented log examples).
"""

import itertools
import json
import os
import pathlib
import shutil
import tracemalloc

import pytest

from straggle_edu.app.cli import main
from straggle_edu.fleet.sources import Job, count_jobs, expand, is_manifest, trace_kind
from straggle_edu.fleet.store import read_rows
from straggle_edu.traces.optrace import ARTIFACT_DATA

DATA = pathlib.Path(__file__).parent / "data"
OSDI = ARTIFACT_DATA


def ids(jobs):
    return [j.job_id for j in jobs]


def test_expand_directory_skips_what_is_not_a_trace():
    jobs = list(expand([OSDI]))
    # ms-*.json, mw-*.json, result-*.json, meta-*.yaml, README.md and LICENSE are not jobs;
    # each trace is one job with its layout sidecar.
    assert ids(jobs) == [str(OSDI / f"trace-{n}.parquet") for n in ("AR", "SE", "ST")]
    assert all(j.error is None for j in jobs)


def test_expand_tree_makes_a_folder_of_per_rank_files_one_job():
    found = ids(expand([DATA]))
    fr = DATA / "nvidia-resiliency-ext" / "fr_traces"
    assert str(fr / "lock_gil_1st") in found and not any(j.startswith(str(fr / "lock_gil_1st") + os.sep) for j in found)
    assert str(DATA / "hta") in found  # two rank-* profiler traces: one job
    assert str(DATA / "documented-examples" / "megatron_log_straggler.log") in found
    assert len(found) == len(set(found))


def test_trace_kind_tells_traces_from_their_neighbours():
    assert trace_kind(OSDI / "trace-SE.parquet") == "op-level"
    assert [trace_kind(OSDI / n) for n in ("ms-SE.json", "result-SE.json", "meta-SE.yaml", "README.md", "LICENSE")] == [None] * 5
    assert trace_kind(DATA / "hta" / "sampled_rank-0.json.gz") == "torch-profiler"
    assert trace_kind(DATA / "nvidia-resiliency-ext" / "fr_traces" / "lock_gil_1st" / "_dump_0") == "flight-recorder"


def test_expand_glob_and_a_trace_file():
    pattern = str(OSDI.parent / "**" / "trace-S*.parquet")
    assert ids(expand([pattern])) == [str(OSDI / "trace-SE.parquet"), str(OSDI / "trace-ST.parquet")]
    assert ids(expand([OSDI / "trace-AR.parquet"])) == [str(OSDI / "trace-AR.parquet")]


def write_manifest(path, rows, header="job_id,path,gpus,hours"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


@pytest.fixture
def fleet_dir(tmp_path):
    for n in ("AR", "ST"):
        shutil.copy(OSDI / f"trace-{n}.parquet", tmp_path)
        shutil.copy(OSDI / f"meta-{n}.yaml", tmp_path)
    return tmp_path


def test_manifest_csv_reads_paths_gpus_and_hours(fleet_dir):
    m = write_manifest(fleet_dir / "fleet.csv", [("ar", "trace-AR.parquet", 64, 12.5), ("st", "trace-ST.parquet", "", "")])
    assert is_manifest(m) and not is_manifest(fleet_dir / "trace-AR.parquet")
    assert list(expand([m])) == [Job("ar", str(fleet_dir / "trace-AR.parquet"), 64, 12.5),
                                 Job("st", str(fleet_dir / "trace-ST.parquet"))]


def test_manifest_parquet(fleet_dir):
    import pyarrow as pa
    import pyarrow.parquet as pq

    m = fleet_dir / "fleet.parquet"
    pq.write_table(pa.table({"job_id": ["ar"], "path": ["trace-AR.parquet"], "hours": [3.0]}), m)
    assert list(expand([m])) == [Job("ar", str(fleet_dir / "trace-AR.parquet"), None, 3.0)]


def test_manifest_missing_file_and_bad_cells_are_error_rows(fleet_dir):
    m = write_manifest(fleet_dir / "fleet.csv", [("gone", "trace-XX.parquet", "", ""), ("bad", "trace-AR.parquet", "-3", ""),
                                                 ("ok", "trace-ST.parquet", "", "")])
    gone, bad, ok = expand([m])
    assert gone.error == f"{fleet_dir / 'trace-XX.parquet'}: no such file or folder"
    assert "column 'gpus', row 2: expected a whole number >= 1, got -3" in bad.error
    assert ok.error is None


def test_manifest_path_leaving_the_source_is_refused_unless_follow_links(fleet_dir, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    shutil.copy(OSDI / "trace-SE.parquet", outside)
    sub = fleet_dir / "sub"
    sub.mkdir()
    rel = os.path.relpath(outside / "trace-SE.parquet", sub)
    m = write_manifest(sub / "fleet.csv", [("dots", rel, "", ""), ("abs", outside / "trace-SE.parquet", "", "")])
    refused = list(expand([m]))
    assert all("refused: the path leaves" in j.error and "--follow-links" in j.error for j in refused)
    assert [j.error for j in expand([m], follow_links=True)] == [None, None]


def test_directory_symlink_leaving_the_source_is_refused_unless_follow_links(fleet_dir, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    shutil.copy(OSDI / "trace-SE.parquet", outside)
    (fleet_dir / "link.parquet").symlink_to(outside / "trace-SE.parquet")
    (fleet_dir / "linkdir").symlink_to(outside, target_is_directory=True)
    jobs = {j.job_id: j for j in expand([fleet_dir])}
    assert "refused" in jobs[str(fleet_dir / "link.parquet")].error
    assert "refused" in jobs[str(fleet_dir / "linkdir")].error
    followed = ids(expand([fleet_dir], follow_links=True))
    assert str(fleet_dir / "link.parquet") in followed and str(fleet_dir / "linkdir" / "trace-SE.parquet") in followed


def test_duplicate_job_ids_stop_the_fleet_naming_both(fleet_dir):
    m = write_manifest(fleet_dir / "fleet.csv", [("a", "trace-AR.parquet", "", ""), ("a", "trace-ST.parquet", "", "")])
    with pytest.raises(ValueError, match="job_id must be unique, got 'a' for job 1 and job 2"):
        count_jobs(expand([m]))


def test_manifest_row_without_a_path_is_refused(fleet_dir):
    m = write_manifest(fleet_dir / "fleet.csv", [("a", "", "", "")])
    with pytest.raises(ValueError, match="column 'path', row 1: expected a job id and a path on every row"):
        list(expand([m]))


def test_million_row_manifest_is_streamed(tmp_path):
    m = tmp_path / "big.csv"
    with open(m, "w") as f:
        f.write("job_id,path\n")
        f.writelines(f"job{i},trace-{i}.parquet\n" for i in range(1_000_000))
    assert m.stat().st_size > 25 * 2**20
    tracemalloc.start()
    first = list(itertools.islice(expand([m]), 3))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert ids(first) == ["job0", "job1", "job2"] and "no such file" in first[0].error
    assert peak < 2 * 2**20  # a batch of lines, not the 26 MB file


def test_empty_directory_is_a_clear_error_and_exit_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="SOURCE must hold at least one trace, got none"):
        count_jobs(expand([tmp_path / "empty"]))
    assert main(["fleet", str(tmp_path / "empty"), "--out", str(tmp_path / "out"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("straggle-edu fleet: error: SOURCE must hold at least one trace") and "Traceback" not in err


def test_a_glob_that_matches_nothing_is_one_line_before_any_work_also_beside_good_sources(fleet_dir, tmp_path, capsys):
    out, pattern = tmp_path / "out", str(tmp_path / "runs" / "**" / "trace-*.parquet")
    for argv in ([pattern], [str(fleet_dir), pattern], [pattern, str(fleet_dir / "trace-AR.parquet")]):
        assert main(["fleet", *argv, "--out", str(out), "--workers", "0"]) == 2
        assert capsys.readouterr().err == (f"straggle-edu fleet: error: SOURCE must hold at least one trace, got the "
                                           f"glob '{pattern}', which matches no path\n")
        assert not out.exists()
    # a glob whose matches hold no trace, and a folder without one, are said of the SOURCE too
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.md").write_text("# runs\n")
    for bad in (str(tmp_path / "*.md"), str(tmp_path / "empty")):
        assert main(["fleet", str(fleet_dir / "trace-ST.parquet"), bad, "--out", str(out), "--workers", "0"]) == 2
        assert capsys.readouterr().err == (f"straggle-edu fleet: error: SOURCE must hold at least one trace, got none "
                                           f"in '{bad}' (no trace file, folder of per-rank traces or manifest row was "
                                           f"found)\n")
        assert not out.exists()


def test_files_named_like_traces_that_hold_nothing_readable_are_rows_in_a_walk_and_a_glob(fleet_dir, tmp_path):
    import random

    from straggle_edu.fleet.engine import job_row

    noise = random.Random(0).randbytes(4096)
    named = {"trace-empty.parquet": b"",  # a copy that never finished, a corrupt file, a cut-off download
             "trace-noise.parquet": noise,
             "rank-1.json.gz": (DATA / "hta" / "sampled_rank-0.json.gz").read_bytes()[:300]}
    others = {"README": b"", "notes.md": b"", "weights.bin": noise,  # not named like traces: skipped as before
              "result-x.json": json.dumps({"steps": [1, 2]}).encode(), "meta-x.yaml": b""}
    for name, data in {**named, **others}.items():
        (fleet_dir / name).write_bytes(data)
    jobs = list(expand([fleet_dir]))
    assert sorted(ids(jobs)) == sorted(str(fleet_dir / n) for n in (*named, "trace-AR.parquet", "trace-ST.parquet"))
    assert all(j.error is None for j in jobs)  # each is a job: its row says what analyze says of the file
    # through the command: a row each, whose error names the file, as when the file is given as the SOURCE
    out = tmp_path / "out"
    assert main(["fleet", str(fleet_dir), "--out", str(out), "--workers", "0"]) == 0
    errors = {r["job_id"]: r["error"] for r in read_rows(out) if r["error"]}
    assert set(errors) == {str(fleet_dir / n) for n in named}
    for name in named:
        path = str(fleet_dir / name)
        assert errors[path].startswith(path + ": ") and errors[path] == job_row(path)["error"], errors[path]
    assert "size is 0 bytes" in errors[str(fleet_dir / "trace-empty.parquet")]
    # a glob takes its matches as the walk takes them
    parquet = ids(expand([str(fleet_dir / "*.parquet")]))
    assert parquet == [str(fleet_dir / n) for n in ("trace-AR.parquet", "trace-ST.parquet", "trace-empty.parquet",
                                                     "trace-noise.parquet")]


def test_missing_source_is_an_error():
    with pytest.raises(ValueError, match="SOURCE must be a directory, a glob, a manifest or a trace file"):
        list(expand(["/no/such/folder"]))


def test_link_loops_named_like_traces_are_rows_and_directory_loops_are_walked_once(fleet_dir):
    # real links: a self-link and a loop of two, named like traces; a directory loop; a loop with another name
    (fleet_dir / "self.parquet").symlink_to("self.parquet")
    (fleet_dir / "a.csv").symlink_to("b.csv")
    (fleet_dir / "b.csv").symlink_to("a.csv")
    (fleet_dir / "notes").symlink_to("notes")
    (fleet_dir / "sub" / "deeper").mkdir(parents=True)
    shutil.copy(OSDI / "trace-SE.parquet", fleet_dir / "sub")
    (fleet_dir / "loop").symlink_to(".", target_is_directory=True)
    (fleet_dir / "sub" / "deeper" / "up").symlink_to("../../sub", target_is_directory=True)
    jobs = list(expand([fleet_dir]))
    errors = {j.job_id: j.error for j in jobs if j.error}
    assert errors == {str(fleet_dir / n): f"{fleet_dir / n}: cannot be opened (Too many levels of symbolic links)"
                      for n in ("a.csv", "b.csv", "self.parquet")}
    assert sorted(j.job_id for j in jobs if not j.error) == [str(fleet_dir / n) for n in
                                                            ("sub/trace-SE.parquet", "trace-AR.parquet", "trace-ST.parquet")]
    # the same links given as a SOURCE: one line that says what the path is
    for name, why in (("self.parquet", "cannot be opened: Too many levels of symbolic links"),
                      ("gone.parquet", "a symbolic link to a missing path")):
        if name == "gone.parquet":
            (fleet_dir / name).symlink_to("no-such-target.parquet")
        with pytest.raises(ValueError, match=f"got '{fleet_dir / name}' \\({why}\\)"):
            list(expand([fleet_dir / name]))


_UNREADABLE = """
import json, sys
from straggle_edu.fleet.sources import expand
print(json.dumps({j.job_id: j.error for j in expand([sys.argv[1]])}))
"""


def _without_dac_override(cmd):
    """``cmd`` run so that file permissions bind: as is for a user, under setpriv without CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH for root (who reads a chmod 000 file otherwise); None when that cannot be done."""
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", "--ambient-caps=-all", *cmd]


def test_unreadable_file_and_folder_are_rows(fleet_dir):
    import subprocess
    import sys

    for name in ("trace-gone.csv", "trace-gone.json", "results.txt"):
        (fleet_dir / name).write_text("step,rank,duration_s\n0,0,1.0\n")
        (fleet_dir / name).chmod(0)
    (fleet_dir / "locked").mkdir()
    (fleet_dir / "locked").chmod(0)
    cmd = _without_dac_override([sys.executable, "-c", _UNREADABLE, str(fleet_dir)])
    if cmd is None:
        pytest.skip("running as root without setpriv (util-linux): a chmod 000 file stays readable to root")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        (fleet_dir / "locked").chmod(0o755)
    if done.returncode and "setpriv" in done.stderr:
        pytest.skip(f"setpriv cannot drop CAP_DAC_OVERRIDE here: {done.stderr.strip()}")
    errors = {k: v for k, v in json.loads(done.stdout).items() if v}
    assert errors == {str(fleet_dir / "locked"): f"{fleet_dir / 'locked'}: cannot be read (Permission denied)",
                      **{str(fleet_dir / n): f"{fleet_dir / n}: cannot be read (Permission denied)"
                         for n in ("results.txt", "trace-gone.csv", "trace-gone.json")}}


def test_bad_source_is_one_line_before_any_work_and_creates_nothing(fleet_dir, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["fleet", str(fleet_dir), str(tmp_path / "no-such-dir"), "--out", str(out), "--workers", "0"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err == (f"straggle-edu fleet: error: SOURCE must be a directory, a glob, a manifest or a trace file, "
                   f"got '{tmp_path / 'no-such-dir'}' (no such file or folder)\n")
    os.mkfifo(tmp_path / "trace.csv")
    assert main(["fleet", str(tmp_path / "trace.csv"), "--out", str(out), "--workers", "0"]) == 2
    assert "(neither a file nor a folder (a FIFO, a socket or a device))" in capsys.readouterr().err
    assert not out.exists()
