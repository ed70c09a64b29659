"""PyTorch profiler (Kineto) traces: the streaming reader and the what-if through the one engine.

Real traces: HolisticTraceAnalysis' samples (tests/data/hta), and the other projects' files in
../shared/outside (HTA, AMD TraceLens, the Kineto TensorBoard plugin). Traces written in tests/_kineto.py
stand in where no public trace has the case (a known slow rank, a GPU a step behind its host).
"""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from straggle_edu.traces import ProfilerTrace, TraceError, analyze, read_trace
from straggle_edu.traces._safe import json_depth
from straggle_edu.traces._stream import ChromeStream, _Depth
from straggle_edu.traces.diagnose import answer
from straggle_edu.traces.profiler import read_profiler_rank

from _kineto import job_times, write_gpu_job

DATA = Path(__file__).parent / "data"


# --------------------------------------------------------------------------- the stream


@pytest.mark.parametrize("name", ["hta-single/trace_file_list/inference_rank_1.json.gz",  # distributedInfo after
                                  "hta-single/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",  # keys after
                                  "hta-single/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "hta/sampled_rank-0.json.gz"])
def test_stream_reads_the_events_and_every_top_level_key_as_json_does(name):
    path = DATA / name
    whole = json.loads(gzip.decompress(path.read_bytes()))
    stream = ChromeStream(path)
    assert [e for e in stream] == whole["traceEvents"]
    assert {k: v for k, v in stream.meta.items() if k != "traceEvents"} == \
        {k: v for k, v in whole.items() if k != "traceEvents"}


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.integers() | st.text(alphabet='[]{}"\\ab', max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text('[]{}"\\k', max_size=3),
                                                                                inner, max_size=3), max_leaves=20),
       st.integers(1, 9))
def test_depth_of_a_stream_in_chunks_is_json_depth(obj, size):
    doc = json.dumps(obj).encode()
    d = _Depth()
    for i in range(0, len(doc), size):
        d.feed(doc[i:i + size])
    assert (d.best, d.depth) == (json_depth(doc), 0)


# --------------------------------------------------------------------------- what one rank's file gives


def test_gpu_kernels_count_by_their_launch_when_the_gpu_runs_a_step_behind(tmp_path):
    # each kernel starts 0.5 s after its launch: by overlap it would fall in the next host step
    files = write_gpu_job(tmp_path, [[1.0, 2.0]] * 3, behind=0.5)
    r = read_profiler_rank(files[1])
    assert r.timeline == "gpu" and r.steps.tolist() == [3, 4, 5]
    assert r.coll_step.tolist() == [3, 4, 5]  # launched in its own step
    starts = [t0 for _, t0, _ in job_times([[1.0, 2.0]] * 3)[1]]
    np.testing.assert_allclose(r.arrival, 1.7e15 + (np.array(starts) + 2.0) * 1e6)  # when its matmul ended


def test_several_files_of_one_rank_are_joined(tmp_path):
    # schedule(repeat=2): two profiling cycles, steps 3-4 and 7-8, each rank in two files
    for cycle, first in enumerate((3, 7)):
        d = tmp_path / f"cycle{cycle}"
        d.mkdir()
        write_gpu_job(d, [[1.0, 2.0]] * 2, first_step=first, t0=1.7e15 + cycle * 60e6)
    files = sorted(tmp_path.glob("cycle*/rank*.json"))
    t = read_trace(files)
    assert isinstance(t, ProfilerTrace) and t.rank_ids == [0, 1]
    assert t.ranks[0].steps.tolist() == [3, 4, 7, 8]
    a = analyze(t)
    assert a.steps.tolist() == [3, 4, 7, 8]
    assert any("steps 3, 7" in n or "step 3, 7" in n for n in a.notes)  # each cycle starts without a collective


def test_a_file_name_that_names_another_rank_is_warned_about(tmp_path):
    files = write_gpu_job(tmp_path, [[1.0, 2.0]], names="rank{r}.json")
    files[0].rename(tmp_path / "rank9.json")
    with pytest.warns(UserWarning, match=r"rank9\.json: distributedInfo\.rank is 0 but the file name says rank 9"):
        read_trace(tmp_path)


# --------------------------------------------------------------------------- the what-if


def test_slow_rank_on_the_gpu_its_slowdown_and_the_collectives(tmp_path):
    write_gpu_job(tmp_path, [[1.0, 2.0, 1.0, 1.0]] * 5, gz=True, group="0")
    a = analyze(tmp_path)
    # step of 2.1 s against the mean compute 1.25 s + 0.1 s transfer (first step counted from the earliest start)
    assert a.slowdown == pytest.approx(2.1 / 1.35, rel=1e-6)
    assert a.culprit() == 1 and a.by_rank[0] == pytest.approx(1.0)
    assert a.replay_error == pytest.approx(0.0, abs=1e-9)
    assert dict(a.by_optype) == pytest.approx({"compute": a.slowdown, "allreduce": 1.0})
    c = a.details["collectives"]
    assert c["ranks"] == [0, 1, 2, 3] and c["step"].tolist() == [3, 4, 5, 6, 7] and c["kind"] == ["allreduce"] * 5
    assert (c["last_rank"] == 1).all() and c["transfer_s"] == pytest.approx([0.1] * 5)
    np.testing.assert_allclose(c["wait_s"], [[1.0, 0.0, 1.0, 1.0]] * 5)
    np.testing.assert_allclose(c["arrival_s"], [[0.0, 1.0, 0.0, 0.0]] * 5)
    assert a.details["caused_wait"] == pytest.approx({0: 0.0, 1: 15.0, 2: 0.0, 3: 0.0})  # 5 steps x 3 ranks x 1 s
    assert a.m_w == pytest.approx(1.0)
    assert answer(a, "worker").startswith("rank 1")


def test_json_fields_of_a_profiler_analysis(tmp_path):
    write_gpu_job(tmp_path, [[1.0, 1.5]] * 4)
    out = analyze(tmp_path).to_dict()
    assert set(out) == {"format", "slowdown", "waste", "per_step", "by_rank", "by_optype", "replay_error", "m_w",
                        "ranks_present", "world_size", "groups", "noise_floor", "clock", "clock_offsets_s",
                        "caused_wait_s", "step_spans_s", "collectives"}
    assert out["ranks_present"] == [0, 1] and out["world_size"] == 2 and out["clock"] == "one host (node0): one clock"
    assert set(out["step_spans_s"]) == {"0", "1"}  # each rank's mean ProfilerStep span, as recorded
    assert out["collectives"]["ranks"] == [0, 1] and out["collectives"]["arrival_s"][0] == pytest.approx([0.0, 0.5])
    # one all-reduce a step: nothing overlaps, so each wait counts whole
    np.testing.assert_allclose(out["collectives"]["counted_s"], out["collectives"]["wait_s"])
    assert np.shape(out["collectives"]["counted_s"]) == (4, 2)
    json.dumps(out)


def test_clocks_of_two_hosts_are_aligned_on_collective_ends(tmp_path):
    files = write_gpu_job(tmp_path, [[1.0, 2.0]] * 4)
    data = json.loads(files[1].read_text())
    for e in data["traceEvents"]:  # rank 1's clock runs 3 s ahead, on another host
        if "ts" in e:
            e["ts"] += 3e6
    data["host_name"] = "node1"
    files[1].write_text(json.dumps(data))
    a = analyze(tmp_path)
    assert a.details["clock_offsets"][1] - a.details["clock_offsets"][0] == pytest.approx(3.0)
    assert a.slowdown == pytest.approx(2.1 / 1.6, rel=1e-6) and a.culprit() == 1


def test_fewer_than_four_steps_tell_no_persistence_and_one_step_no_noise_floor(tmp_path):
    write_gpu_job(tmp_path, [[1.0, 2.0]])
    a = analyze(tmp_path)
    assert a.details["noise_floor"] is None
    assert answer(a, "persistence") == "1 step(s): cannot tell persistent from transient (it takes at least 4 steps)."


def test_noise_below_the_floor_is_within_noise_not_yes(tmp_path):
    rng = np.random.default_rng(3)
    compute = 1.0 + 0.15 * rng.standard_normal((6, 2))  # two equal ranks, 15% step-to-step noise
    write_gpu_job(tmp_path, compute.tolist())
    a = analyze(tmp_path)
    assert a.slowdown >= 1.10 and a.details["noise_floor"] > a.slowdown
    assert answer(a, "straggling").startswith("Within noise: S = ")


def test_a_comm_kernel_the_patterns_do_not_know_is_named_with_comm_kernel(tmp_path):
    write_gpu_job(tmp_path, [[1.0, 2.0]] * 2, kernel="my_ring_exchange_kernel")
    for f in tmp_path.iterdir():  # the host op that issued it
        data = json.loads(f.read_text())
        data["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1,
                                    "ts": 1.7e15 + 10, "dur": 5})
        f.write_text(json.dumps(data))
    with pytest.raises(TraceError, match="no kernel's name matches the communication patterns .* --comm-kernel"):
        analyze(tmp_path)
    assert analyze(tmp_path, comm_kernel=[r"ring_exchange"]).culprit() == 1


# --------------------------------------------------------------------------- what a trace cannot tell


def test_ranks_of_a_larger_job_are_refused_naming_what_is_missing():
    # HTA's sample: ranks 0 and 1 of a 128-rank job (distributedInfo.world_size)
    with pytest.raises(ValueError, match=r"got 2 of 128 ranks \(\[0, 1\]\); give the traces of all 128 ranks"):
        analyze(DATA / "hta")


def test_one_rank_of_a_300_rank_gloo_job_is_refused():
    with pytest.raises(ValueError, match=r"1 of 300 ranks \(\[34\]\); give the traces of all 300 ranks"):
        analyze(DATA / "hta-single" / "cpu_only" / "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")


def test_traces_of_two_jobs_are_refused_with_the_reason():
    # two real traces of two jobs: HTA's 128-rank sample and its 300-rank gloo job
    files = [DATA / "hta" / "sampled_rank-0.json.gz",
             DATA / "hta-single" / "cpu_only" / "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"]
    with pytest.raises(ValueError, match=r"different jobs: their world sizes differ \(128 in .*sampled_rank-0\.json\.gz; "
                                         r"300 in .*rank-34"):
        analyze(files)


def test_traces_recorded_hours_apart_are_two_jobs(tmp_path):
    files = write_gpu_job(tmp_path, [[1.0, 2.0]])
    data = json.loads(files[1].read_text())
    for e in data["traceEvents"]:  # rank 1 was profiled 8 hours later
        if "ts" in e:
            e["ts"] += 8 * 3600e6
    files[1].write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"recorded 8\.0 hours apart"):
        analyze(tmp_path)


def test_world_size_not_recorded_is_said(tmp_path):
    for f in write_gpu_job(tmp_path, [[1.0, 2.0]] * 2):
        data = json.loads(f.read_text())
        del data["distributedInfo"]
        f.write_text(json.dumps(data))
    a = analyze(tmp_path)
    assert a.culprit() == 1
    assert "world size not recorded (no distributedInfo); 2 rank(s) given: [0, 1]" in a.notes


def test_a_job_of_one_rank_has_s_one(tmp_path):
    (f,) = write_gpu_job(tmp_path, [[1.0]] * 3)
    a = analyze(f)
    assert a.slowdown == 1.0 and a.workers == (0,) and a.per_step == {3: 1.0, 4: 1.0, 5: 1.0}
    assert "a job of one rank (world size 1) waits for no other rank: S = 1" in a.notes


def test_groups_over_different_ranks_are_refused_naming_them(tmp_path):
    files = write_gpu_job(tmp_path, [[1.0, 2.0, 1.0, 1.0]] * 2, group="0")
    for f in files:
        data = json.loads(f.read_text())
        r = data["distributedInfo"]["rank"]
        mine = [0, 1] if r < 2 else [2, 3]
        data["distributedInfo"]["pg_config"] += [{"pg_name": "1", "pg_desc": "tp", "pg_size": 2, "ranks": [0, 1]},
                                                 {"pg_name": "2", "pg_desc": "tp", "pg_size": 2, "ranks": [2, 3]}]
        for e in data["traceEvents"]:
            if e.get("name", "").startswith("nccl"):
                e["args"]["Process Group Name"] = "1" if mine == [0, 1] else "2"
        f.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"groups over different ranks .* '1' \(tp\): ranks \[0, 1\]; '2' \(tp\): "
                                         r"ranks \[2, 3\]"):
        analyze(tmp_path)


# --------------------------------------------------------------------------- real traces of other projects


@pytest.mark.parametrize("name, needle", [
    ("hta-single/trace_file_list/inference_rank_1.json.gz", "no ProfilerStep#N events"),
    ("tracelens/mi210/gpu_only_trace.json.gz", "no ProfilerStep#N events"),
    ("tracelens/torch_compile_triton/trace.json.gz", "no ProfilerStep#N events"),
    ("hta-single/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "1 rank.*world size not recorded.*one rank alone"),
    ("hta-single/triton_example/triton_example.json.gz", "world size not recorded"),
])
def test_single_rank_public_traces_are_read_and_refused_with_a_reason(name, needle):
    with pytest.raises(ValueError, match=needle):
        analyze(DATA / name)


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"foo": 1}', "top-level keys are 'foo'"),
    ('{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 0, "dur": 1}]}', "no ProfilerStep#N"),
    ('{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": "soon", "dur": 1}]}', "column 'ts', row 1"),
    ('{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": -5}]}', "column 'dur', row 1"),
    ('{"traceEvents": [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 5}, '
     '{"ph": "X", "name": "ProfilerStep#1", "ts": 9, "dur": 5}]}', "ProfilerStep#1 appears twice"),
])
def test_bad_profiler_traces_are_one_error_naming_the_file(tmp_path, content, needle):
    p = tmp_path / "rank-0.json"
    p.write_text(content)
    with pytest.raises(TraceError) as exc:
        read_trace(p)
    assert "rank-0.json" in str(exc.value) and needle in str(exc.value)


def test_files_read_by_parallel_workers_give_the_same_job(monkeypatch):
    from straggle_edu.traces import profiler

    folder = DATA / "ddp-gloo" / "4r-slow"
    serial = read_trace(folder)
    monkeypatch.setattr(profiler, "PARALLEL_BYTES", 0)  # the 4 files (300 KB) count as large
    parallel = profiler.read_profiler_traces(folder, workers=2)
    assert parallel.rank_ids == serial.rank_ids == [0, 1, 2, 3]
    for a, b in zip(parallel.ranks, serial.ranks):
        assert np.array_equal(a.arrival, b.arrival) and np.array_equal(a.busy_start, b.busy_start)
    assert analyze(parallel).to_dict() == analyze(serial).to_dict()


def test_cli_report_and_json_of_a_profiler_job(tmp_path, capsys):
    import argparse

    from straggle_edu.traces import cli

    parser = argparse.ArgumentParser()
    cli.configure(parser)
    write_gpu_job(tmp_path, [[1.0, 2.0]] * 4, kernel="my_ring_exchange_kernel")
    for f in tmp_path.iterdir():  # the collectives' host ops, which ask for a communication kernel
        data = json.loads(f.read_text())
        data["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1,
                                    "ts": 1.7e15 + 10, "dur": 5})
        f.write_text(json.dumps(data))
    assert cli.run(parser.parse_args([str(tmp_path), "--comm-kernel", "ring_exchange", "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "torch-profiler" and out["ranks_present"] == [0, 1] and out["by_rank"]["1"] > 1.2
    assert cli.run(parser.parse_args([str(tmp_path), "--comm-kernel", "ring_exchange"])) == 0
    text = capsys.readouterr().out
    assert "Ranks: 2 of 2 ranks; analysed: 0, 1; synchronised by '0' (default_pg); clocks: one host (node0): one " \
           "clock." in text
    assert "Collectives: 4 in 4 steps; rank 1 arrived last at 4 of them" in text
    assert "Which worker? rank 1: S_X = " in text


def test_a_complete_group_of_an_incomplete_job_is_analysed_and_the_rest_named(tmp_path):
    # ranks 0-3 of an 8-rank job: their data-parallel group '1' is complete, the world group '0' is not
    files = write_gpu_job(tmp_path, [[1.0, 2.0, 1.0, 1.0]] * 4, group="1")
    for f in files:
        data = json.loads(f.read_text())
        data["distributedInfo"].update(world_size=8, pg_config=[
            {"pg_name": "0", "pg_desc": "default_pg", "pg_size": 8, "ranks": list(range(8))},
            {"pg_name": "1", "pg_desc": "dp", "pg_size": 4, "ranks": [0, 1, 2, 3]}])
        world = [dict(e, ts=e["ts"] + 1, dur=1.0, args={**e["args"], "correlation": 10_000 + i,
                                                        "Process Group Name": "0"})
                 for i, e in enumerate(data["traceEvents"]) if e.get("name", "").startswith("nccl")]
        data["traceEvents"] += world  # a 1 us world all-reduce after each step's: not analysable, named
        f.write_text(json.dumps(data))
    a = analyze(tmp_path)
    assert a.workers == (0, 1, 2, 3) and a.culprit() == 1 and a.details["groups"] == ["'1' (dp)"]
    assert "4 of 8 ranks: [0, 1, 2, 3]" in a.notes
    assert "group '0' (default_pg) lacks 4 of its 8 ranks ([4, 5, 6, 7]); its collectives are left inside the " \
           "compute segments" in a.notes
