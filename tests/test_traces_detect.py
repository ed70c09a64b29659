"""Which file is which: every sample other projects wrote is detected as its own format or refused with a reason.

Real files: every file under tests/data (samples of HolisticTraceAnalysis, AMD TraceLens, nvidia-resiliency-ext,
NCCL's documentation, savanna, the OSDI 2025 artifact, a real PyTorch 2.13 gloo job), and, where the folder is
beside the repository, every file of ../shared/outside/. No file is read as another format: a file detected as X
either analyses as X or is refused by X's reader.
"""

import fnmatch
import gzip
import json
import pathlib
import tracemalloc
import warnings

import pytest

from straggle_edu.fleet.sources import trace_kind
from straggle_edu.traces import FORMATS, TraceError, analyze, read_trace
from straggle_edu.traces import detect as det
from straggle_edu.traces.detect import detect, sniff
from straggle_edu.traces.optrace import ARTIFACT_DATA

REPO = pathlib.Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
# ../shared/outside (real files other projects wrote, with their licences), mirrored here so that every run has them.
OUTSIDE = DATA / "outside"

# Every file under tests/data: its format (None: not a trace), first matching pattern wins.
DATA_FORMATS = [
    ("outside/*", None),  # walked with OUTSIDE_FORMATS by its own test below
    ("osdi2025/trace-*.parquet", "op-level"),
    ("osdi2025/*", None),  # meta-*.yaml, ms-/mw-/result-*.json, README, LICENSE
    ("hta/*.json.gz", "torch-profiler"),
    ("ddp-gloo/*/*.json.gz", "torch-profiler"),  # PyTorch 2.13's own traces of real gloo DDP jobs
    ("param-dlrm/*.json.gz", "torch-profiler"),
    ("hta/derived_ncclDevKernel/*.json.gz", "torch-profiler"),
    ("hta-single/execution_trace/*", None),
    ("hta-single/memory_analysis/*", None),
    ("hta-single/*/*.json.gz", "torch-profiler"),
    ("tracelens/sglang_decode/execution_details.json", None),
    ("tracelens/*/*.json.gz", "torch-profiler"),
    ("nvidia-resiliency-ext/fr_traces/*/_dump_*", "flight-recorder"),
    ("pytorch-gloo-fr/pickle/nccl_trace_rank_*", "flight-recorder"),
    ("pytorch-gloo-fr/json/nccl_trace_rank_*.json", "flight-recorder"),
    ("nccl-inspector/json/*.log", "nccl-inspector"),
    ("nccl-inspector/prometheus/*.prom", "nccl-inspector"),
    ("documented-examples/nccl_inspector_example.log", "nccl-inspector"),
    ("documented-examples/*straggler*.log", "straggler-log"),
    ("savanna/hsd_line.log", "straggler-log"),
    ("ddp-gloo/*/rank*.pt.trace.json.gz", "torch-profiler"),  # runs.json beside them is the sidecar, not a trace
    ("param-dlrm/*.pt.trace.json.gz", "torch-profiler"),
    ("hta-small/*.json.gz", "torch-profiler"),
    ("*", None),  # READMEs, licences, scripts, fault_injection.log, reference outputs
]

OUTSIDE_FORMATS = [
    ("nccl-inspector/*.log", "nccl-inspector"),
    ("nccl-inspector/*.prom", "nccl-inspector"),
    ("savanna-hsd/hsd_line.log", "straggler-log"),
    ("*/*.json.gz", "torch-profiler"),
    ("*", None),  # README.md, LICENSE files
]


def expected(rel, table):
    return next(fmt for pattern, fmt in table if fnmatch.fnmatch(rel, pattern))


def check_file(path, want):
    """Detection says ``want``; reading says the same format or refuses it with a TraceError naming the file."""
    info = sniff(path)
    assert info.format == want, (path, info)
    assert trace_kind(path) == want  # the fleet's walk decides alike
    if want is None:
        assert info.reason
        with pytest.raises(TraceError, match="unknown trace file type"):
            read_trace(path)
        return info.reason
    if want == "op-level":
        return "op-level"  # analysed in tests/test_traces_whatif.py
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = analyze(path)
    except TraceError as exc:
        assert path.name in str(exc)
        return f"refused: {exc}"
    assert result.format == want
    return result.format


def files_under(root):
    return sorted(p for p in root.rglob("*") if p.is_file())


# Every file under tests/data (but outside/), and the OSDI artifact's folder, which ships as package data, as osdi2025/.
SAMPLES = [(p, str(p.relative_to(DATA))) for p in files_under(DATA) if p.relative_to(DATA).parts[0] != "outside"] + [
    (p, f"osdi2025/{p.relative_to(ARTIFACT_DATA)}") for p in files_under(ARTIFACT_DATA)]


@pytest.mark.parametrize("path, rel", SAMPLES, ids=[rel for _, rel in SAMPLES])
def test_every_sample_in_tests_data_is_its_own_format_or_refused(path, rel):
    check_file(path, expected(rel, DATA_FORMATS))


def test_every_file_of_shared_outside_is_its_own_format_or_refused():
    seen = {}
    for path in files_under(OUTSIDE):
        rel = str(path.relative_to(OUTSIDE))
        seen[rel] = check_file(path, expected(rel, OUTSIDE_FORMATS))
    # the 6 profiler traces with distributedInfo.pg_config that a substring test took for Flight Recorder dumps
    pg = [r for r in seen if r.endswith(".json.gz") and "pg_config" in gzip.open(OUTSIDE / r).read(1 << 20).decode(
        "utf-8", "replace")]
    assert len(pg) >= 6 and all(not seen[r].startswith("refused: ") or "Flight Recorder" not in seen[r] for r in pg)


def test_formats_of_the_cli_are_the_library_s():
    from straggle_edu.traces import cli

    assert cli.FORMATS == FORMATS == det.FORMATS


# --------------------------------------------------------------------------- profiler traces, any name


def trace(rank=None, world=None, steps=1, extra=None):
    info = {} if rank is None else {"distributedInfo": {"rank": rank, "world_size": world, **(extra or {})}}
    events = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "ts": s * 1000, "dur": 900}
              for s in range(steps)]
    return {"schemaVersion": 1, **info, "traceEvents": events}


@pytest.mark.parametrize("name", ["rank0.json", "rank-0.json.gz", "rank0_trace.json", "h_1.1.pt.trace.json.gz",
                                  "anything", "trace.txt"])
def test_a_profiler_trace_is_detected_whatever_its_name(tmp_path, name):
    data = json.dumps(trace(0, 2)).encode()
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    info = sniff(tmp_path / name)
    assert (info.format, info.rank, info.world_size) == ("torch-profiler", 0, 2)


def test_a_folder_of_several_files_per_rank_groups_them(tmp_path):
    # torchtitan's rank<R>_trace.json and a second window of each rank (schedule(repeat=2)), plus a README
    for r in (0, 1):
        for k in (0, 1):
            (tmp_path / f"rank{r}_trace.{k}.json").write_text(json.dumps(trace(r, 2)))
    (tmp_path / "README.md").write_text("profiled with repeat=2\n")
    found = detect(tmp_path)
    assert found.format == "torch-profiler" and [f.path.name for f in found.skipped] == ["README.md"]
    assert {r: [f.path.name for f in fs] for r, fs in found.by_rank().items()} == {
        0: ["rank0_trace.0.json", "rank0_trace.1.json"], 1: ["rank1_trace.0.json", "rank1_trace.1.json"]}


def test_a_file_name_that_disagrees_with_distributed_info_is_warned(tmp_path):
    (tmp_path / "rank3.json").write_text(json.dumps(trace(2, 4)))
    (line,) = detect(tmp_path).warnings
    assert "rank3.json: distributedInfo.rank is 2 but the file name says rank 3" in line


def test_trace_events_after_a_large_pg_config_of_a_real_trace(tmp_path):
    # HTA's CPU-only (gloo) trace of rank 34, its pg_config widened to 8,000 groups of 64 ranks: traceEvents
    # now sits 3.2 MB into the file, far past any 64 KiB peek, and is found in constant memory
    real = json.loads(gzip.open(DATA / "hta-single" / "cpu_only" / "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz").read())
    groups = [{"pg_name": str(i), "pg_desc": "", "backend_config": "cpu:gloo", "pg_size": 64,
               "ranks": list(range(64 * (i % 8), 64 * (i % 8) + 64))} for i in range(8_000)]
    real["distributedInfo"]["pg_config"] = groups
    ordered = {k: real[k] for k in real if k != "traceEvents"} | {"traceEvents": real["traceEvents"]}
    text = json.dumps(ordered).encode()
    p = tmp_path / "rank-34.json.gz"
    p.write_bytes(gzip.compress(text, 1))
    assert text.index(b'"traceEvents"') > 3 * 2**20
    tracemalloc.start()
    info = sniff(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (info.format, info.rank) == ("torch-profiler", 34)
    assert peak < 2 * 2**20  # Python's share of the scan: a few 64 KiB buffers, never the document


def test_a_chrome_trace_in_array_form_is_a_profiler_trace(tmp_path):
    p = tmp_path / "t.json"
    p.write_text(json.dumps([{"name": "ProfilerStep#0", "ph": "X", "ts": 0, "dur": 1}]))
    assert sniff(p).variant == "chrome-array"


def test_a_flight_recorder_json_dump_is_told_by_its_keys(tmp_path):
    # the JSON form sorts its keys: 'entries' comes before 'pg_config'
    p = tmp_path / "dump.json"
    p.write_text(json.dumps({"comm_lib_version": "", "entries": [], "pg_config": {}, "version": "2.10"}))
    assert sniff(p).format == "flight-recorder"


def test_a_folder_of_two_formats_is_refused_naming_both(tmp_path):
    (tmp_path / "rank0.json").write_text(json.dumps(trace(0, 2)))
    (tmp_path / "nccl_trace_rank_0.json").write_text(json.dumps({"entries": [], "pg_config": {}}))
    with pytest.raises(TraceError, match=r"2 formats: 1 flight-recorder \(nccl_trace_rank_0.json\), 1 torch-profiler \(rank0.json\)"):
        read_trace(tmp_path)
    assert read_trace(tmp_path, format="flight-recorder").dumps.keys() == {0}


@pytest.mark.parametrize("name, data, reason", [
    ("t.tar.gz", None, "a tar archive"),
    ("t.json", b"\x00\x01\x02" * 100, "binary data"),
    ("events.xplane.pb", b"\x0a\x00\x12" * 100, "XPlane"),
    ("ms-ST.json", b'{"Ms": [1], "trem": 2}', "top-level keys are 'Ms', 'trem'"),
    ("nested.json", b'{"run": {"traceEvents": []}}', "top-level keys are 'run'"),
    ("empty.json", b"[]", "an empty JSON list"),
    ("notes.txt", b"iteration 1 loss 2.0\n", "text without straggler-detector reports"),
    # NCCL's own README quotes the metric lines in a code block: a README, not a metrics file
    ("README.md", b'# NCCL Inspector\n\nIt writes:\n\n```\nnccl_collective_exec_time_microseconds{node="a",gpu="GPU0",'
                  b'comm_name="DP"} 9498.47\n```\n', "text without straggler-detector reports"),
    # and Megatron's README_STRAGGLER.md quotes a report line in one: documentation, not a log
    ("README_STRAGGLER.md", b"## StragglerDetector\n\n```\n 0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | "
                            b"MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0\n```\n", "text without straggler-detector"),
])
def test_what_is_no_trace_is_refused_with_its_reason(tmp_path, name, data, reason):
    p = tmp_path / name
    if data is None:
        import io
        import tarfile

        with tarfile.open(p, "w:gz") as tar:
            member = tarfile.TarInfo("rank0.json")
            body = json.dumps(trace(0, 1)).encode()
            member.size = len(body)
            tar.addfile(member, io.BytesIO(body))
    else:
        p.write_bytes(data)
    assert sniff(p).format is None and reason in sniff(p).reason
    with pytest.raises(TraceError, match=f"{p.name}: unknown trace file type: .*{reason[:12]}"):
        analyze(p)


# --------------------------------------------------------------------------- logs as they are written

MEGATRON = "| MnRtt/Rnk: 100.00ms/3 | MxRtt/Rnk: 150.00ms/5"


@pytest.mark.parametrize("line", [
    f"[2024-03-14 23:07:56] {MEGATRON}",                       # Megatron's own stamp
    f"[default0]:[2024-03-14 23:07:56] {MEGATRON}",            # torchrun --tee / --redirects
    "[NeMo I 2024-03-14 23:07:56 straggler:120] GPU relative performance:\n  Rank=5 Node=n1 Score=0.5",
])
def test_a_log_that_starts_with_a_bracket_is_a_log(tmp_path, line):
    p = tmp_path / "train.log"
    p.write_text(line + "\n")
    assert sniff(p).format == "straggler-log" and trace_kind(p) == "straggler-log"
    assert analyze(p).suspects == (5,)


def test_a_report_after_the_first_64_kib_is_found_and_one_after_the_scan_is_refused_with_the_switch(tmp_path,
                                                                                                     monkeypatch):
    p = tmp_path / "train.log"
    p.write_text("[2024-03-14 23:00:00] iteration 1 | lm loss 2.0\n" * 3000 + f"[2024-03-14 23:07:56] {MEGATRON}\n")
    assert p.stat().st_size > 2 * 2**16
    assert sniff(p).format == "straggler-log"
    monkeypatch.setattr(det, "TEXT_SCAN_BYTES", 2**16)
    assert sniff(p).format is None and "in its first 64 KiB" in sniff(p).reason
    with pytest.raises(TraceError, match=r"--format straggler-log"):
        read_trace(p)
    assert read_trace(p, format="straggler-log").suspects == (5,)


def test_a_json_beside_the_traces_is_skipped_not_read_as_a_trace(tmp_path):
    # TraceLens' capture_traces/ layout: bs_32_rank0.json.gz beside its execution_details.json (the real one)
    import shutil

    shutil.copy(DATA / "tracelens" / "sglang_decode" / "execution_details.json", tmp_path)
    (tmp_path / "bs_32_rank0.json").write_text(json.dumps(trace(0, 1, steps=2)))
    t = read_trace(tmp_path)
    assert t.format == "torch-profiler" and t.rank_ids == [0] and t.steps.tolist() == [0, 1]
    assert [f.path.name for f in detect(tmp_path).skipped] == ["execution_details.json"]


def test_a_folder_of_folders_names_them(tmp_path):
    for n in (10, 20):  # torchtitan: profile_trace/iteration_<N>/rank<R>_trace.json
        (tmp_path / f"iteration_{n}").mkdir()
        (tmp_path / f"iteration_{n}" / "rank0_trace.json").write_text(json.dumps(trace(0, 1)))
    with pytest.raises(TraceError, match=r"no file, only folders: pass one of them \(iteration_10, iteration_20\)"):
        read_trace(tmp_path)
    assert read_trace(tmp_path / "iteration_20").rank_ids == [0]


def test_a_gzipped_csv_says_to_gunzip_it(tmp_path):
    p = tmp_path / "ranks.csv.gz"
    p.write_bytes(gzip.compress(b"step,rank,duration_s\n0,0,1.0\n0,1,2.0\n"))
    with pytest.raises(TraceError, match=r"ranks.csv.gz: unknown trace file type: a gzipped CSV .*gunzip it"):
        read_trace(p)
