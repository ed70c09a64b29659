"""``straggle-edu analyze``: run as a real process, the way a user does."""

import json
import subprocess
import sys

import pytest

from straggle_edu.traces import write_trace
from straggle_edu.traces.optrace import ARTIFACT_DATA
from straggle_edu.traces.synthetic import example_trace, synthetic_trace

OP_KEYS = {"format", "slowdown", "waste", "per_step", "by_optype", "by_dp_rank", "by_stage", "by_worker",
           "m_w", "m_s", "replay_error"}


def run(*args):
    return subprocess.run([sys.executable, "-m", "straggle_edu", "analyze", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def op_trace_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    return write_trace(example_trace("slow-worker"), folder / "trace-slow.parquet")


def test_json_for_an_op_level_trace(op_trace_path):
    out = run(op_trace_path, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)  # one JSON object, nothing else on stdout
    assert set(data) == OP_KEYS
    assert data["format"] == "op-level"
    assert data["waste"] == pytest.approx(1 - 1 / data["slowdown"])
    assert all(isinstance(k, str) for name in ("per_step", "by_dp_rank", "by_stage", "by_worker") for k in data[name])
    assert max(data["by_worker"], key=data["by_worker"].get) == "1:1"
    assert set(data["by_worker"]) == {f"{d}:{s}" for d in range(4) for s in range(2)}
    assert data["replay_error"] < 1e-6


def test_json_for_a_per_rank_trace(tmp_path):
    p = tmp_path / "lab.csv"
    p.write_text("step,rank,duration_s,phase\n0,0,1,compute\n0,1,2,compute\n0,2,1,compute\n0,3,1,compute\n"
                 "0,0,1,wait\n0,2,1,wait\n0,3,1,wait\n")
    out = run(p, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "format": "per-rank", "slowdown": 1.6, "waste": 0.375, "per_step": {"0": 1.6},
        "by_rank": {"0": 1.0, "1": 1.6, "2": 1.0, "3": 1.0}, "replay_error": 0.0,
        "noise_floor": None,  # one step: no step-to-step spread to measure
    }


def test_readable_report_answers_the_questions(op_trace_path):
    out = run(op_trace_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for needle in ("Slowdown S =", "waste", "Replay check", "by_optype", "by_worker", "dp 1 / stage 1",
                   "M_W", "Which worker?", "Persistent or one-off?", "Compute or communication?"):
        assert needle in text


def test_warnings_go_to_stderr_and_json_stays_clean(tmp_path):
    t = synthetic_trace(2, 1, 2, 2, rng=0)
    p = write_trace(t, tmp_path / "trace-w.csv")
    lines = p.read_text().splitlines()
    cells = lines[1].split(",")
    cells[lines[0].split(",").index("optype")] = "mystery-op"
    lines.append(",".join(cells))
    p.write_text("\n".join(lines) + "\n")
    out = run(p, "--json")
    assert out.returncode == 0, out.stderr
    json.loads(out.stdout)
    assert "warning:" in out.stderr and "mystery-op" in out.stderr


def test_large_jobs_leave_out_worker_attribution_unless_full(tmp_path):
    t = synthetic_trace(520, 2, 1, 1, rng=0)  # 1040 workers
    p = write_trace(t, tmp_path / "trace-big.parquet")
    data = json.loads(run(p, "--json").stdout)
    assert "by_dp_rank" not in data and "by_worker" not in data
    assert {"by_stage", "by_optype", "per_step", "slowdown"} <= set(data)
    full = run(p, "--json", "--attribution", "full")
    assert "by_worker" in json.loads(full.stdout) and "left out" not in full.stderr
    assert "--attribution full" in run(p, "--json").stderr


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda d: d / "missing.csv", "no such file"),
        (lambda d: (d / "e.csv").write_text("") * 0 or d / "e.csv", "empty"),
        (lambda d: (d / "b.csv").write_text("step,rank,duration_s\n0,0,-1\n") * 0 or d / "b.csv",
         "column 'duration_s', row 1"),
    ],
)
def test_bad_input_is_one_clean_error_line(tmp_path, make, needle):
    out = run(make(tmp_path))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert needle in out.stderr


def test_barrier_out_without_an_extension_suggests_an_analyze_line_that_works(tmp_path, capsys):
    # straggle-edu barrier --out bar writes a per-rank CSV named "bar"; its "next:" line must run as printed
    import shlex

    from straggle_edu.app.cli import main

    folder = tmp_path / "my runs"
    folder.mkdir()
    assert main(["barrier", "--workers", "2", "--steps", "3", "--step-seconds", "0.01", "--out", str(folder / "bar")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("next: "))
    argv = shlex.split(line[len("next: "):])
    assert argv[:2] == ["straggle-edu", "analyze"]
    assert main(argv[1:]) == 0
    assert "(per-rank, 3 steps, 2 workers)" in capsys.readouterr().out


def test_a_file_without_an_extension_is_detected_from_its_header(tmp_path):
    from straggle_edu.traces import read_trace

    p = tmp_path / "bar"
    p.write_text("# a note\nstep,rank,duration_s,phase\n0,0,1.0,compute\n0,1,2.0,compute\n")
    assert read_trace(p).format == "per-rank"
    (tmp_path / "notes").write_text("just some words\n")
    with pytest.raises(ValueError, match="unknown trace file type"):
        read_trace(tmp_path / "notes")


@pytest.fixture
def artifact_folder(tmp_path):
    # The OSDI 2025 artifact's layout, small: one op-level trace, its layout, and files that are not traces
    import shutil

    here = ARTIFACT_DATA
    for name in ("trace-ST.parquet", "meta-ST.yaml", "ms-ST.json", "result-ST.json", "README.md"):
        shutil.copy(here / name, tmp_path / name)
    return tmp_path


def test_analyze_a_folder_reads_its_traces_skips_the_rest_and_says_which(artifact_folder, capsys):
    pytest.importorskip("pyarrow")
    from straggle_edu.app.cli import main

    assert main(["analyze", str(artifact_folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Folder {artifact_folder}: read 1 op-level trace(s), one at a time: trace-ST.parquet."
    assert out[1] == "Layouts read with them: meta-ST.yaml."
    assert out[2] == "Skipped 3 file(s) that are not traces: README.md, ms-ST.json, result-ST.json."
    assert any(ln.startswith(f"Trace: {artifact_folder / 'trace-ST.parquet'} (op-level, 32 steps, 8 workers)") for ln in out)
    assert main(["analyze", str(artifact_folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["read"] == ["trace-ST.parquet"] and data["skipped"] == ["README.md", "ms-ST.json", "result-ST.json"]
    assert set(data["analyses"][0]) == OP_KEYS


def test_analyze_a_json_beside_op_level_traces_says_which_file_to_read(artifact_folder, capsys):
    from straggle_edu.app.cli import main

    assert main(["analyze", str(artifact_folder / "ms-ST.json")]) == 2
    err = capsys.readouterr().err
    assert "ms-ST.json: unknown trace file type: a JSON object whose top-level keys are" in err
    assert f"try straggle-edu analyze {artifact_folder / 'trace-ST.parquet'}, or the folder itself" in err


def test_read_trace_refuses_a_folder_of_op_level_traces_clearly(artifact_folder):
    from straggle_edu.traces import read_trace

    with pytest.raises(ValueError, match=r"trace must be one file, got the folder .* which holds 1 op-level trace\(s\): "
                                         r"trace-ST.parquet; read them one at a time"):
        read_trace(artifact_folder)


def test_report_explains_ratios_above_1_and_s_x_below_1():
    from straggle_edu.traces import analyze
    from straggle_edu.traces.cli import report
    from straggle_edu.traces.optrace import public_trace_path

    text = report(analyze(public_trace_path("ST"), attribution="full"))  # M_S = 1.21; stages 0-2 below 1
    assert "above 1, the fix saves more than the rebalanced ideal does" in text
    assert "S_X below 1: X alone at its recorded durations runs faster than the ideal" in text
    for cause in ("seq-imbalance", "gc-pauses", "slow-worker"):  # M_W, M_S both below 1 in the first two; not in the last
        a = analyze(example_trace(cause))
        text = report(a)
        assert ("above 1, the fix saves" in text) == (max(a.m_w, a.m_s) > 1.0)
        assert ("S_X below 1" in text) == any(v < 1 - 5e-4 for t in ("by_optype", "by_stage", "by_dp_rank", "by_worker")
                                              for _k, v in a.ranking(t)[:5] if getattr(a, t))
