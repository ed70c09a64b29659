"""The fast reader of profiler traces (msgspec, a megabyte of events at a time) reads what the exact reader (ijson,
event by event) reads, or leaves the file to it.

Its promise, tested here: where the fast scan returns, what it kept equals the exact scan's, value for value; where
the exact reader refuses a file, the fast one refuses it too, and the error the user sees is the exact reader's.
Real traces of other projects, the committed multi-rank jobs, and generated documents, cut into batches anywhere and
broken on purpose.
"""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from straggle_edu.traces import TraceError, analyze
from straggle_edu.traces import _stream, profiler
from straggle_edu.traces._stream import ChromeStream, Unsure

DATA = Path(__file__).parent / "data"
COMM = profiler.comm_regex(())
KEPT = ("k_corr", "k_ts", "k_dur", "k_idx", "k_comm", "r_corr", "r_ts", "h_tid", "h_ts", "h_dur", "h_idx")


def kept(scan):
    """What a scan kept, as comparable values (arrays as bytes: equal means bit for bit)."""
    sc, meta = scan
    out = {k: bytes(getattr(sc, k)) for k in KEPT}
    out.update(steps=repr(sc.steps), host_comm=repr(sc.host_comm), k_info=repr(sc.k_info), tids=repr(sc.tids),
               step_tid=sc.step_tid, meta=repr(meta))
    return out


def outcome(read, path):
    try:
        return "kept", kept(read(path))
    except (TraceError, ValueError) as exc:
        return "error", str(exc)


def fast(path):
    return profiler._scan_fast(path, COMM, None, profiler._fast_event())


def exact(path):
    return profiler._scan_exact(path, COMM, None)


def either(path):
    """What the reader does: the fast scan, or the exact one where the fast one is unsure."""
    return profiler._scan(path, COMM, None)


REAL = ["param-dlrm/worker0_step_12.1694128201545.pt.trace.json.gz", "ddp-gloo/4r-slow/rank2.pt.trace.json.gz",
        "hta/sampled_rank-1.json.gz", "hta/derived_ncclDevKernel/sampled_rank-0.json.gz",
        "hta-single/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",  # keys after the events
        "hta-single/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "tracelens/mi210/gpu_only_trace.json.gz",
        "tracelens/sglang_decode/execution_details.json", "outside/tracelens/bs_32_rank0.json.gz",  # 16 MB, indented
        "outside/kineto-tbplugin/worker0.1623143089861.pt.trace.json.gz"]


@pytest.mark.parametrize("name", REAL)
def test_the_fast_reader_keeps_what_the_exact_reader_keeps_from_real_traces(name):
    assert kept(fast(DATA / name)) == kept(exact(DATA / name))  # and fast() was sure of the file: it did not raise


@pytest.mark.parametrize("job", ["param-dlrm", "ddp-gloo/4r-slow", "ddp-gloo/2r-late"])
def test_the_analysis_of_a_real_job_is_the_same_bit_for_bit(job, monkeypatch):
    by_fast = analyze(DATA / job).to_dict()
    monkeypatch.setattr(profiler, "_fast_event", lambda: None)  # as without msgspec: the exact reader alone
    assert json.dumps(by_fast) == json.dumps(analyze(DATA / job).to_dict())


def test_batches_are_the_events_and_the_keys_json_reads(tmp_path):
    path = DATA / "hta-single/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    whole = json.loads(gzip.decompress(path.read_bytes()))
    stream = ChromeStream(path)
    unset = _stream.fast_decoding().UNSET
    events = [e for batch in stream.batches(profiler._fast_event()) for e in batch]
    assert [(e.ph, e.cat, e.name, e.ts, e.dur) for e in events] == \
        [(w.get("ph"), w.get("cat"), w.get("name", unset), w.get("ts", unset), w.get("dur", unset))
         for w in whole["traceEvents"]]
    assert {k: v for k, v in stream.meta.items() if k != "traceEvents"} == \
        {k: v for k, v in whole.items() if k != "traceEvents"}


def _x(name, ts, dur, cat="cpu_op", **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 7, "ts": ts, "dur": dur, "args": args}


def _doc(*events, head=None, tail=None):
    return {**(head or {"schemaVersion": 1}), "traceEvents": list(events), **(tail or {"traceName": "t"})}


GOOD = _doc(_x("ProfilerStep#1", 0, 100, "user_annotation"), _x("aten::mm", 1, 5),
            _x("cudaLaunchKernel", 2, 1, "cuda_runtime", correlation=9),
            _x("ncclKernel_AllReduce", 10, 20, "kernel", correlation=9, **{"Collective name": "allreduce", "Seq": 3}))
TEXT = json.dumps(GOOD)


@pytest.mark.parametrize("text", [
    TEXT.replace('"traceName"', '"traceEvents": [], "traceName"'),  # a second traceEvents list: ijson reads both
    TEXT.replace('"schemaVersion": 1', '"note": {"traceEvents": 1}'),  # the first 'traceEvents' is not the key
    '{"s": "traceEvents", ' + TEXT[1:],  # nor here: a value
    TEXT.replace('}], "traceName"', '},], "traceName"'),  # a comma before ']'
    TEXT.replace('"ts": 10,', '"ts": 18446744073709551616,'),  # an integer beyond 64 bits that the scan reads
    TEXT.replace('"correlation": 9}', '"correlation": 9223372036854775808}'),
    TEXT.replace('"Seq": 3', '"Seq": -9223372036854775809'),
    TEXT.replace('"schemaVersion": 1', '"schemaVersion": 99999999999999999999'),  # before the events
    TEXT.replace('"traceName": "t"', '"traceName": [1e999]'),  # after them
    TEXT.replace('"aten::mm"', '"aten::\\ud800"'),  # a lone surrogate (ijson reads it, msgspec does not)
    TEXT + "\x0c",
    '[' + json.dumps(GOOD["traceEvents"][0]) + ']',  # a list of events
    '{"traceEvents": []}',
    '{"traceEvents": {"item": 1}}',
])
def test_documents_at_the_edge_are_read_as_the_exact_reader_reads_them(tmp_path, text):
    p = tmp_path / "rank0.json"
    p.write_text(text)
    try:
        got = "kept", kept(fast(p))
    except profiler.NOT_FAST:
        got = None  # left to the exact reader
    if got is not None:
        assert got == outcome(exact, p)
    assert outcome(either, p) == outcome(exact, p)


@pytest.mark.parametrize("chunk", [3, 64, 1 << 16])
def test_bytes_that_are_not_utf8_are_refused_as_ijson_refuses_them_even_split_between_chunks(tmp_path, monkeypatch,
                                                                                            chunk):
    monkeypatch.setattr(_stream, "_CHUNK", chunk)
    monkeypatch.setattr(_stream, "_BATCH", chunk)
    good = TEXT.replace('"aten::mm"', '"aten::\u00e9\u00e9 mm"').encode("utf-8")
    p = tmp_path / "rank0.json"
    p.write_bytes(good)
    assert kept(fast(p)) == kept(exact(p))
    for bad in (good.replace(b"\xa9 mm", b" mm"), good.replace(b"\xc3\xa9 mm", b"\xa9 mm"), good + b"\xc3"):
        p.write_bytes(bad)  # the second byte of a character missing, a stray continuation byte, a cut at the end
        with pytest.raises(Unsure):
            fast(p)
        assert outcome(either, p) == outcome(exact, p)


def test_an_integer_beyond_64_bits_in_a_field_the_scan_does_not_read_is_read_past(tmp_path):
    # ijson refuses the whole file ("integer overflow"); msgspec skips the field unbuilt and reads the rest as before
    p = tmp_path / "rank0.json"
    p.write_text(TEXT.replace('"correlation": 9,', '"correlation": 9, "External id": 123456789012345678901234567890,'))
    assert outcome(exact, p)[0] == "error"
    q = tmp_path / "plain.json"
    q.write_text(TEXT)
    assert kept(fast(p)) == kept(exact(q))


# --------------------------------------------------------------------------- generated documents, broken on purpose

_names = st.sampled_from(["ProfilerStep#1", "ProfilerStep#2", "aten::mm", "c10d::allreduce_", "record_param_comms",
                          "gloo:all_reduce", "ncclKernel_AllReduce_RING", "sm90_gemm", 'a "}, {" b', "x]},{[y",
                          "\\}", "é}", "cudaLaunchKernel"])
_cats = st.sampled_from(["cpu_op", "kernel", "cuda_runtime", "user_annotation", "ac2g", "python_function", None])
# (numbers whose one byte more or less stays within 64 bits and the range of a float: an integer beyond 64 bits or
# a float beyond 1.8e308 in a field the scan does not read is read past, where ijson refuses the file; see above)
_times = st.one_of(st.integers(-10, 10**12), st.floats(-1e6, 1e15).filter(lambda x: x == 0 or abs(x) > 1e-100))
_args = st.dictionaries(st.sampled_from(["correlation", "Collective name", "Seq", "Group size", "External id",
                                         "grid", "x"]),
                        st.one_of(st.integers(0, 10**15), st.text("ab}],{[\"\\", max_size=4), st.lists(st.integers(0, 9),
                                                                                                   max_size=3)),
                        max_size=4)
_events = st.fixed_dictionaries({"ph": st.sampled_from(["X", "X", "X", "M", "s"]), "cat": _cats, "name": _names,
                                 "ts": _times, "dur": _times},
                                optional={"tid": st.sampled_from([1, 7, "main"]), "args": _args, "id": st.integers(0, 99)})
_breaks = st.sampled_from(["", "cut", "insert", "delete"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(_events, max_size=12), indent=st.sampled_from([None, 0, 2]), batch=st.integers(5, 80),
       gz=st.booleans(), how=_breaks, at=st.floats(0, 1), byte=st.sampled_from(list(b'},]["\\\x00\xff\x0c ,:0-')))
def test_the_fast_reader_is_sure_only_where_it_keeps_what_ijson_keeps(tmp_path, monkeypatch, events, indent, batch, gz,
                                                                      how, at, byte):
    monkeypatch.setattr(_stream, "_CHUNK", batch)  # chunks and batches cut at every kind of place
    monkeypatch.setattr(_stream, "_BATCH", batch)
    data = json.dumps(_doc(*events), indent=indent, ensure_ascii=False).encode()
    k = int(at * len(data))
    data = {"": data, "cut": data[:k], "insert": data[:k] + bytes([byte]) + data[k:],
            "delete": data[:k] + data[k + 1:]}[how]
    p = tmp_path / ("rank0.json.gz" if gz else "rank0.json")
    p.write_bytes(gzip.compress(data) if gz else data)
    if not data.strip():
        return
    truth = outcome(exact, p)
    try:
        got = "kept", kept(fast(p))
    except profiler.NOT_FAST:
        got = None
    assert got is None or got == truth
    assert outcome(either, p) == truth
    if how == "" and truth[0] == "kept" and "\\ud8" not in data.decode(errors="replace"):
        assert got is not None  # a well-formed document: the fast reader was sure of it


def test_a_batch_cut_inside_a_string_is_read_on_to_the_next_end(tmp_path, monkeypatch):
    monkeypatch.setattr(_stream, "_CHUNK", 16)
    monkeypatch.setattr(_stream, "_BATCH", 16)
    names = ['a"}, {"b', "}, {", "},", "} ,"]
    p = tmp_path / "rank0.json"
    p.write_text(json.dumps(_doc(*[_x(n, i, 1) for i, n in enumerate(names * 5)])))
    sc, _ = fast(p)
    assert np.frombuffer(sc.h_ts).tolist() == list(range(20)) and kept((sc, _)) == kept(exact(p))
