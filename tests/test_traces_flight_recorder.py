"""Flight Recorder dumps: nvidia-resiliency-ext's real 16-rank dumps with injected faults."""

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from straggle_edu.traces import SuspectAnalysis, TraceError, analyze, read_trace
from straggle_edu.traces.flight_recorder import FlightRecorderTrace, analyze_flight_recorder, read_flight_recorder

DATA = Path(__file__).parent / "data" / "nvidia-resiliency-ext"
CASES = ("gpu_error_1st", "gpu_error_2nd", "lock_gil_1st", "lock_gil_2nd")


def reference_missing(case):
    """The 'Missing Ranks' column of nvidia-resiliency-ext's own reference output for a case."""
    lines = (DATA / "reference_outputs" / f"{case}_reference.txt").read_text().splitlines()[1:]
    return {int(r) for line in lines if line.strip() for r in line.split("|")[-1].split(",")}


def reference_groups(case):
    lines = (DATA / "reference_outputs" / f"{case}_reference.txt").read_text().splitlines()[1:]
    return {line.split("|")[0].strip() for line in lines if line.strip()}


@pytest.mark.parametrize("case", CASES)
def test_analyze_flight_recorder_matches_the_reference_missing_ranks(case):
    a = analyze(DATA / "fr_traces" / case)
    assert isinstance(a, SuspectAnalysis) and a.format == "flight-recorder"
    assert set(a.suspects) == reference_missing(case)
    stuck = {g["process_group"] for g in a.evidence["groups"]}
    assert reference_groups(case) <= stuck  # the groups the reference names are among the stuck ones
    assert a.evidence["version"] == "2.9" and a.evidence["ranks"] == list(range(16))


def test_read_flight_recorder_ranks_from_file_names():
    t = read_trace(DATA / "fr_traces" / "gpu_error_1st")
    assert isinstance(t, FlightRecorderTrace)
    assert sorted(t.dumps) == list(range(16)) and t.version == "2.9"
    assert len(t.dumps[12]["entries"]) == 27


def test_analyze_flight_recorder_json_variant_gives_the_same_suspects(tmp_path):
    for f in (DATA / "fr_traces" / "gpu_error_2nd").glob("_dump_*"):
        dump = read_flight_recorder(f).dumps
        (tmp_path / f"nccl_trace_rank_{f.name.split('_')[-1]}.json").write_text(json.dumps(next(iter(dump.values()))))
    a = analyze(tmp_path)
    assert a.format == "flight-recorder" and set(a.suspects) == {9, 14}


def test_analyze_flight_recorder_rank_without_dump_is_a_suspect(tmp_path):
    src = DATA / "fr_traces" / "gpu_error_1st"
    for f in src.glob("_dump_*"):
        if f.name != "_dump_13":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    a = analyze_flight_recorder(tmp_path)
    assert 12 in a.suspects and 13 in a.suspects
    assert any("without a dump" in n for n in a.notes)


def test_flight_recorder_cli_json_names_format_and_suspects():
    out = subprocess.run([sys.executable, "-m", "straggle_edu", "analyze", str(DATA / "fr_traces" / "lock_gil_2nd"),
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["format"] == "flight-recorder" and data["suspects"] == [10, 15]
    assert data["slowdown"] is None


@pytest.mark.parametrize(
    "dump, needle",
    [
        ([1, 2], "expected a PyTorch Flight Recorder dump"),
        ({"version": "2.9", "pg_config": {}}, "column 'entries'"),
        ({"version": "2.9", "pg_config": {}, "entries": [{"process_group": ("0", "pg"), "collective_seq_id": "x"}]},
         "column 'collective_seq_id', row 1: expected a whole number, got 'x'"),
        ({"version": "2.9", "pg_config": {"0": {"ranks": "__import__('os')"}}, "entries": []},
         "process group '0' has no list of ranks"),
    ],
)
def test_bad_flight_recorder_dumps(tmp_path, dump, needle):
    p = tmp_path / "nccl_trace_rank_0"
    p.write_bytes(pickle.dumps(dump, protocol=2))
    with pytest.raises(TraceError) as exc:
        analyze_flight_recorder(p)
    assert "nccl_trace_rank_0" in str(exc.value) and needle in str(exc.value)


# A real PyTorch 2.13 gloo job (tests/data/pytorch-gloo-fr/README.md): rank 0 waits in all-reduce #6, rank 1
# dumped before joining it. pg_config is keyed by '' while the entries name group '0'.
GLOO = Path(__file__).parent / "data" / "pytorch-gloo-fr"


@pytest.mark.parametrize("form", ["pickle", "json"])
def test_gloo_dumps_of_pytorch_2_13_name_the_rank_that_held_back(form):
    a = analyze(GLOO / form)
    assert a.suspects == (1,)
    (g,) = a.evidence["groups"]
    assert (g["process_group"], g["desc"], g["collective_seq_id"], g["waiting"], g["missing"]) == \
        ("0", "default_pg", 6, [0], [1])
    assert a.evidence["groups_not_in_pg_config"] == {"0": {"pg_config_key": "", "ranks": [0, 1]}}
    assert any("not a key of pg_config" in n and "PyTorch 2.13" in n for n in a.notes)


def test_one_gloo_dump_alone_uses_pg_config_s_one_group():
    # before the fallback, rank 0's dump alone named no suspect: group '0' had one known member
    a = analyze(GLOO / "pickle" / "nccl_trace_rank_0")
    assert a.suspects == (1,) and a.evidence["groups"][0]["no_dump"] == [1]
    assert analyze([GLOO / "json" / "nccl_trace_rank_1.json"]).suspects == ()  # rank 1 finished all it entered


def test_gloo_json_and_pickle_dumps_agree():
    assert analyze(GLOO / "json").to_dict()["evidence"] == analyze(GLOO / "pickle").to_dict()["evidence"]


@pytest.mark.slow
def test_flight_recorder_of_a_live_gloo_job_under_torchrun(tmp_path):
    # the fixture's generator, run again on a free port: real processes at a real collective
    pytest.importorskip("torch", reason="the live Flight Recorder job needs torch (pip install torch==2.13.0)")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           str(GLOO / "make_dump.py"), str(tmp_path)]
    import os

    run = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                         env={**os.environ, "TORCH_FR_BUFFER_SIZE": "64"})
    assert run.returncode == 0, run.stderr[-2000:]
    for form in ("pickle", "json"):
        assert analyze(tmp_path / form).suspects == (1,)
