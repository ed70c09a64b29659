"""Hostile and broken files: every reader refuses them with one line that names the file.

Cases: compression bombs, deeply nested JSON, truncated and binary files, pickles that try to
run code, files too large for the memory budget; values shown as written (-1, nan).
"""

import gzip
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import straggle_edu
from straggle_edu.traces import TraceError, analyze, read_trace
from straggle_edu.traces._safe import json_depth, load_pickle, read_bytes
from straggle_edu.traces._table import column_error, show_value

KINDS = {
    "profiler": "rank-0.json",
    "profiler-gz": "rank-0.json.gz",
    "flight-recorder": "nccl_trace_rank_0",
    "inspector": "h-pid1.log",
}


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "straggle_edu", "analyze", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env)


def one_clean_line(out, name):
    assert out.returncode == 2, out.stdout
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0], out.stderr
    return lines[0]


class Boom:
    """Unpickling this would call os.system."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_load_pickle_refuses_a_pickle_that_runs_code(tmp_path):
    for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
        p = tmp_path / f"nccl_trace_rank_{proto}"
        p.write_bytes(pickle.dumps({"entries": [Boom()]}, protocol=proto))
        with pytest.raises(TraceError, match=f"nccl_trace_rank_{proto}: the pickle wants to run code"):
            load_pickle(p, "a dump")
    assert not (tmp_path / "pwned").exists() and not os.path.exists("pwned")


def test_load_pickle_refuses_a_class_instance_too(tmp_path):
    p = tmp_path / "d"
    p.write_bytes(pickle.dumps({"x": np.int64(3)}))  # reconstructing it would import numpy
    with pytest.raises(TraceError, match="opcode (GLOBAL|STACK_GLOBAL)"):
        load_pickle(p, "a dump")


def test_analyze_cli_pickle_bomb_is_one_line_and_runs_nothing(tmp_path):
    folder = tmp_path / "fr"
    folder.mkdir()
    (folder / "nccl_trace_rank_0").write_bytes(b"\x80\x02" + pickle.dumps(Boom(), protocol=2)[2:])
    out = run_cli(folder, "--json")
    assert "wants to run code" in one_clean_line(out, "nccl_trace_rank_0")
    assert not (tmp_path / "pwned").exists()


def test_read_bytes_stops_a_gzip_bomb_at_the_budget(tmp_path):
    p = tmp_path / "rank-0.json.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:  # a profiler trace of 200 MiB of blanks, 200 KiB on disk
        f.write(b'{"traceEvents": [')
        block = b" " * (1 << 20)
        for _ in range(200):
            f.write(block)
    assert p.stat().st_size < 1 << 20
    old = straggle_edu.set_memory_budget(64 * 2**20)  # 8 MiB of input allowed
    try:
        with pytest.raises(TraceError, match=r"rank-0\.json\.gz: decompresses to more than the 8 MiB that fit the memory budget of 64 MiB"):
            read_bytes(p)
        with pytest.raises(TraceError, match=r"rank-0\.json\.gz: not valid JSON"):  # streamed: its first byte
            read_trace(p)
    finally:
        straggle_edu.set_memory_budget(old)


def test_a_profiler_trace_bomb_stops_at_one_event_of_64_mib(tmp_path):
    # a valid start, then one event whose name runs for 100 MiB: the stream holds one event at a time, and no
    # event that large
    p = tmp_path / "rank-0.json.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents": [{"ph": "X", "name": "')
        block = b"a" * (1 << 20)
        for _ in range(100):
            f.write(block)
    with pytest.raises(TraceError, match=r"rank-0\.json\.gz: one event .* is larger than 64 MiB"):
        read_trace(p)


def test_read_bytes_refuses_a_huge_file_before_reading_it(tmp_path):
    p = tmp_path / "rank-0.json"
    with open(p, "wb") as f:  # sparse: 100 MiB long, nothing written
        f.truncate(100 * 2**20)
    with pytest.raises(TraceError, match=r"rank-0\.json: the file holds 100 MiB, more than the 64 MiB"):
        read_bytes(p)


def test_analyze_cli_huge_file_names_the_budget_switch(tmp_path):
    p = tmp_path / "h-pid1.log"
    p.write_text('{"coll_perf": {}}' + " " * (3 * 2**20))
    out = run_cli(p, env={**os.environ, "STRAGGLE_EDU_MEMORY_MIB": "16"})
    assert "STRAGGLE_EDU_MEMORY_MIB" in one_clean_line(out, "h-pid1.log")


def test_profiler_trace_larger_than_the_byte_limit_streams_to_its_real_error(tmp_path):
    # a profiler trace is read as a stream: a file larger than the memory budget gets the
    # error of its content, not a refusal of its size
    p = tmp_path / "rank-0.json"
    p.write_text('{"traceEvents": [' + ", ".join(['{"ph": "X", "name": "aten::mm", "ts": 1, "dur": 1}'] * 400_000)
                 + "]}")
    assert p.stat().st_size > 16 * 2**20  # larger than the whole memory budget
    out = run_cli(p, env={**os.environ, "STRAGGLE_EDU_MEMORY_MIB": "16"})
    lines = out.stderr.strip().splitlines()  # a read over 2 s says how far it got, on stderr, before the error
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert all(line.startswith("reading: ") for line in lines[:-1]), lines
    assert "rank-0.json" in lines[-1] and "no ProfilerStep#N events" in lines[-1]


@pytest.mark.parametrize("kind", ["profiler", "profiler-gz", "inspector"])
def test_deeply_nested_json_is_refused_before_parsing(tmp_path, kind):
    p = tmp_path / KINDS[kind]
    deep = (b'{"traceEvents": ' if kind != "inspector" else b'{"coll_perf": ') + b"[" * 100_000 + b"]" * 100_000 + b"}"
    p.write_bytes(gzip.compress(deep) if kind.endswith("gz") else deep)
    # a profiler trace is streamed: refused at the first chunk that nests past 64, before the parser sees it
    depth = r"at least \d+" if kind.startswith("profiler") else "100001"
    with pytest.raises(TraceError, match=rf"{KINDS[kind]}: JSON nested {depth} levels deep, more than the 64"):
        analyze(p)


def test_truncated_gzip_is_refused(tmp_path):
    data = gzip.compress(json.dumps({"traceEvents": [{"ph": "X"}] * 1000}).encode())
    p = tmp_path / "rank-0.json.gz"
    p.write_bytes(data[: len(data) // 2])
    out = run_cli(p)
    assert "not a readable gzip file (truncated or corrupt" in one_clean_line(out, "rank-0.json.gz")


@pytest.mark.parametrize("kind", list(KINDS))
def test_binary_and_truncated_files_are_one_line_errors(tmp_path, kind):
    p = tmp_path / KINDS[kind]
    if kind == "flight-recorder":
        p.write_bytes(pickle.dumps({"entries": list(range(100))}, protocol=2)[:40])  # truncated pickle
    elif kind == "profiler-gz":
        p.write_bytes(gzip.compress(bytes(range(256)) * 10))
    elif kind == "inspector":
        p.write_bytes(b'{"header": {"n_ranks": 2}, "coll_perf": {' + bytes(range(256)))
    else:
        p.write_bytes(b"{" + bytes(range(256)) * 4)
    out = run_cli(p, "--json")
    one_clean_line(out, KINDS[kind])
    assert out.stdout == ""


def test_unknown_binary_file_is_refused(tmp_path):
    p = tmp_path / "core.dump"
    p.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(TraceError, match=r"core\.dump: unknown trace file type"):
        read_trace(p)


def test_column_error_shows_values_as_written():
    assert str(column_error("t.csv", "rank", 3, "a whole number >= 0", np.int8(-1))).endswith("got -1")
    assert str(column_error("t.csv", "x", 1, "a number", np.float64("nan"))).endswith("got nan")
    assert "np." not in str(column_error("t.csv", "x", 1, "a number", np.float32(2.5)))


def test_rank_csv_errors_show_the_cell_as_written(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("step,rank,duration_s\n0,0,1.0\n0,1,-0.50\n")
    with pytest.raises(TraceError, match=r"r\.csv: column 'duration_s', row 2: expected a duration in seconds >= 0, got -0\.50$"):
        read_trace(p)
    p.write_text("step,rank,duration_s\n0,-1,1.0\n")
    with pytest.raises(TraceError, match=r"column 'rank', row 1: expected a whole number >= 0, got -1$"):
        read_trace(p)
    p.write_text("step,rank,duration_s\n0,0,nan\n")
    with pytest.raises(TraceError, match=r"got nan$"):
        read_trace(p)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='a"[]{}\\\\,: '),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=4),
                    max_leaves=30))
def test_json_depth_matches_the_parsed_nesting(obj):
    def depth(o):
        if isinstance(o, dict):
            return 1 + max(map(depth, o.values()), default=0)
        if isinstance(o, list):
            return 1 + max(map(depth, o), default=0)
        return 0

    assert json_depth(json.dumps(obj).encode()) == depth(obj)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_every_reader_refuses_random_bytes_with_a_trace_error(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    for name in ("rank-0.json", "nccl_trace_rank_0", "h-pid1.log", "train.log", "nccl_inspector_metrics_0.prom"):
        p = folder / name
        p.write_bytes(data)
        try:
            analyze(p)
        except (TraceError, FileNotFoundError):
            pass


def test_show_value_never_shows_numpy_types():
    for v in (np.int8(-1), np.uint64(7), np.float16(0.5), np.bool_(True)):
        assert "np." not in show_value(v) and "(" not in show_value(v)


def test_unused_parquet_dictionary_labels_raise_no_skipping_warning(tmp_path):
    # a Parquet writer may keep dictionary labels no row uses; they once gave
    # "warning: ... skipping 0 ops of unknown type ()" on the public traces
    import warnings

    import pyarrow as pa
    import pyarrow.parquet as pq

    from straggle_edu.traces import write_trace
    from straggle_edu.traces.synthetic import synthetic_trace

    p = write_trace(synthetic_trace(2, 2, 2, 2, rng=0), tmp_path / "trace-d.parquet")
    table = pq.read_table(p)
    names = table.column("optype").to_pylist()
    labels = sorted(set(names)) + ["moe-all-to-all"]  # one label that no row uses
    col = pa.DictionaryArray.from_arrays(pa.array([labels.index(x) for x in names], pa.int32()), pa.array(labels))
    pq.write_table(table.set_column(table.column_names.index("optype"), "optype", col), p)
    assert "moe-all-to-all" in pq.read_table(p).column("optype").combine_chunks().dictionary.to_pylist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = read_trace(p)
    assert t.skipped == ()


# --------------------------------------------------------------------------- detection (traces/detect.py)


def test_detection_stops_a_gzip_bomb_at_its_scan_size(tmp_path):
    import tracemalloc

    from straggle_edu.traces.detect import sniff

    p = tmp_path / "rank-0.json.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:  # 200 MiB of zeros (no JSON, no text), 200 KiB on disk
        block = b"0" * (1 << 20)
        for _ in range(200):
            f.write(block)
    tracemalloc.start()
    info = sniff(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.format is None and "in its first 16 MiB" in info.reason
    assert peak < 64 * 2**20  # the scan's 16 MiB, never the 200


def test_detection_of_a_huge_pg_config_stops_at_its_scan_size_and_names_the_switch(tmp_path, monkeypatch):
    from straggle_edu.traces import detect

    monkeypatch.setattr(detect, "JSON_SCAN_BYTES", 4 * 2**20)  # 64 MiB in use: the same stop, 16x sooner
    p = tmp_path / "rank-0.json.gz"
    group = json.dumps({"pg_name": "0", "ranks": list(range(512))}).encode() + b","
    with gzip.open(p, "wb", compresslevel=1) as f:  # 5 MiB of pg_config before traceEvents
        f.write(b'{"distributedInfo": {"rank": 0, "pg_config": [')
        for _ in range(5 * 2**20 // len(group)):
            f.write(group)
        f.write(b'{}]}, "traceEvents": []}')
    with pytest.raises(TraceError, match=r"rank-0\.json\.gz: unknown trace file type: no 'traceEvents', 'entries' or "
                                         r"'coll_perf' among the top-level keys of its first 4 MiB \('distributedInfo'\)"):
        read_trace(p)
    with pytest.raises(TraceError, match="no ProfilerStep#N"):  # --format: the reader's turn
        read_trace(p, format="torch-profiler")


@pytest.mark.parametrize("name, data, needle", [
    ("rank-0.json", b'{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "d', "not valid JSON"),
    ("rank-1.json", b'{"schemaVersion": 1, "distributedInfo": {"rank": 1, "pg_con', "not valid JSON (parse error"),
    ("rank-2.json", bytes(range(256)) * 4, "binary data, not a trace"),
    ("rank-3.json.gz", gzip.compress(b'{"schemaVersion": 1, "deviceProperties": ["' + __import__("random").Random(0)
                                     .randbytes(100_000).hex().encode() + b'"], "traceEvents": []}')[:20_000],
     "not a readable gzip file (truncated or corrupt"),  # cut before 'traceEvents'
])
def test_analyze_cli_truncated_and_junk_traces_are_one_line(tmp_path, name, data, needle):
    p = tmp_path / name
    p.write_bytes(data)
    out = run_cli(p)
    assert needle in one_clean_line(out, name)
