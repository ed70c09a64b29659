"""``straggle-edu analyze``: run as a real process, the way a user does."""

import json
import subprocess
import sys

import pytest

from straggle_edu.traces import write_trace
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
