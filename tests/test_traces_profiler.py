"""PyTorch profiler Chrome traces: generated here in the format torch.profiler writes."""

import gzip
import json

import numpy as np
import pytest

from straggle_edu.traces import RankTrace, TraceError, analyze, read_trace


def chrome_trace(rank, steps, *, with_rank=True, host_comm=False, t0=1.7e12):
    """One rank's trace: steps = [(compute_s, comm_s), ...], in the layout of export_chrome_trace."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]
    ts = t0
    for n, (compute, comm) in enumerate(steps):
        dur = (compute + comm) * 1e6
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n + 3}", "pid": 1, "tid": 1,
                       "ts": ts, "dur": dur, "args": {}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts + 5,
                       "dur": compute * 1e6 * 0.5, "args": {}})
        events.append({"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm", "pid": 0, "tid": 7, "ts": ts + 10,
                       "dur": compute * 1e6 * 0.9, "args": {}})
        c_start = ts + compute * 1e6
        if host_comm:
            events.append({"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "pid": 1, "tid": 1,
                           "ts": c_start, "dur": comm * 1e6, "args": {}})
        else:
            # two overlapping NCCL kernels: counted once (union of intervals)
            events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                           "pid": 0, "tid": 20, "ts": c_start, "dur": comm * 1e6, "args": {}})
            events.append({"ph": "X", "cat": "kernel", "name": "ncclKernel_Broadcast", "pid": 0, "tid": 21,
                           "ts": c_start + 1, "dur": comm * 1e6 * 0.5, "args": {}})
            events.append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 1, "tid": 1,
                           "ts": c_start, "dur": 3.0, "args": {}})
        ts += dur + 100
    out = {"schemaVersion": 1, "traceEvents": events, "traceName": f"rank{rank}"}
    if with_rank:
        out["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 4}
    return out


def write_ranks(folder, compute, transfer=0.1, gz=False, **kwargs):
    """compute: (steps, ranks) seconds. Every rank waits for the slowest, then moves data."""
    compute = np.asarray(compute, dtype=float)
    files = []
    for r in range(compute.shape[1]):
        steps = [(compute[s, r], compute[s].max() - compute[s, r] + transfer) for s in range(compute.shape[0])]
        name = folder / (f"rank-{r}.pt.trace.json" + (".gz" if gz else ""))
        text = json.dumps(chrome_trace(r, steps, **kwargs))
        if gz:
            with gzip.open(name, "wt") as f:
                f.write(text)
        else:
            name.write_text(text)
        files.append(name)
    return files


def test_profiler_folder_reduces_to_per_rank_and_finds_the_slow_rank(tmp_path):
    compute = [[1.0, 2.0, 1.0, 1.0], [1.0, 2.0, 1.0, 1.0]]
    write_ranks(tmp_path, compute, gz=True)
    t = read_trace(tmp_path)
    assert isinstance(t, RankTrace) and t.format == "torch-profiler"
    assert t.steps.tolist() == [3, 4] and t.ranks.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(t.compute, compute, atol=1e-6)
    np.testing.assert_allclose(t.comm, 0.1, atol=1e-6)  # the transfer: the last arriver's comm
    np.testing.assert_allclose(t.wait[:, 0], 1.0, atol=1e-6)
    a = analyze(t)
    assert a.format == "torch-profiler"
    assert a.slowdown == pytest.approx(1.6, rel=1e-6)
    assert a.culprit() == 1
    assert a.replay_error == pytest.approx(0.0, abs=1e-6)
    assert set(a.to_dict()) == {"format", "slowdown", "waste", "per_step", "by_rank", "replay_error"}


def test_profiler_list_of_files_rank_from_name_and_host_collectives(tmp_path):
    files = write_ranks(tmp_path, [[3.0, 1.0]], with_rank=False, host_comm=True)
    t = read_trace([files[1], files[0]])
    assert t.ranks.tolist() == [0, 1]
    np.testing.assert_allclose(t.compute, [[3.0, 1.0]], atol=1e-6)
    assert analyze(t).culprit() == 0


def test_profiler_steps_missing_on_one_rank_are_left_out_with_a_warning(tmp_path):
    write_ranks(tmp_path, [[1.0, 1.0], [1.0, 1.5]])
    data = json.loads((tmp_path / "rank-1.pt.trace.json").read_text())
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("name") != "ProfilerStep#4"]
    (tmp_path / "rank-1.pt.trace.json").write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="ProfilerStep#4"):
        t = read_trace(tmp_path)
    assert t.steps.tolist() == [3]


@pytest.mark.parametrize(
    "content, needle",
    [
        ("", "empty"),
        ("{not json", "not valid JSON"),
        ('{"foo": 1}', "top-level keys are 'foo'"),
        ('{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 0, "dur": 1}]}', "no ProfilerStep#N"),
        ('{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": "soon", "dur": 1}]}', "column 'ts', row 1"),
        ('{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": -5}]}', "column 'dur', row 1"),
    ],
)
def test_bad_profiler_traces(tmp_path, content, needle):
    p = tmp_path / "rank-0.json"
    p.write_text(content)
    with pytest.raises(TraceError) as exc:
        read_trace(p)
    assert "rank-0.json" in str(exc.value) and needle in str(exc.value)


def test_two_files_claiming_one_rank(tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(chrome_trace(0, [(1.0, 0.1)])))
    b.write_text(json.dumps(chrome_trace(0, [(1.0, 0.1)])))
    with pytest.raises(TraceError, match="rank 0 is also the rank of"):
        read_trace([a, b])


def test_empty_folder(tmp_path):
    with pytest.raises(TraceError, match=r"holds no trace file \(it is empty\)"):
        read_trace(tmp_path)


# Real traces: HolisticTraceAnalysis' sampled Kineto traces (tests/data/hta/README.md)

HTA = __import__("pathlib").Path(__file__).parent / "data" / "hta"


def test_profiler_real_hta_samples():
    t = read_trace(HTA)
    assert t.ranks.tolist() == [0, 1] and t.steps.tolist() == [551, 552]
    assert (t.comm > 0).all()  # the ncclKernel_SendRecv kernels are found
    a = analyze(t)
    assert 1.0 <= a.slowdown < 1.1
    assert a.replay_error < 0.05


def test_profiler_ncclDevKernel_naming_gives_the_same_result():
    text = gzip.open(HTA / "derived_ncclDevKernel" / "sampled_rank-0.json.gz", "rt").read()
    assert "ncclDevKernel_SendRecv" in text and "ncclKernel_" not in text
    old, new = analyze(HTA), analyze(HTA / "derived_ncclDevKernel")
    np.testing.assert_array_equal(old.step_time, new.step_time)
    assert new.to_dict() == old.to_dict()
    assert read_trace(HTA / "derived_ncclDevKernel").comm.sum() > 0
