"""NCCL Inspector JSON lines: the README's example record verbatim, then per-rank logs built here."""

import json
from pathlib import Path

import pytest

from straggle_edu.traces import SuspectAnalysis, TraceError, analyze
from straggle_edu.traces.nccl_inspector import read_nccl_inspector

DOCS = Path(__file__).parent / "data" / "documented-examples"


def record(rank, sn, us, comm="0x7f8c496ae9f661", n_ranks=4):
    return {"header": {"id": comm, "rank": rank, "n_ranks": n_ranks, "nnodes": 1},
            "metadata": {"inspector_output_format_version": "v4.0", "hostname": "h", "pid": 100 + rank},
            "coll_perf": {"coll": "AllReduce", "coll_sn": sn, "coll_msg_size_bytes": 1 << 20,
                          "coll_exec_time_us": us, "coll_algobw_gbs": 1.0, "coll_busbw_gbs": 1.5}}


def write_ranks(folder, times, **kwargs):
    """times[sn][rank] in microseconds; one JSON-lines file per rank, as the plugin writes per process."""
    for r in range(len(times[0])):
        lines = [json.dumps(record(r, sn, row[r], **kwargs)) for sn, row in enumerate(times)]
        (folder / f"h-pid{100 + r}.log").write_text("\n".join(lines) + "\n")


def test_read_nccl_inspector_documented_record():
    a = analyze(DOCS / "nccl_inspector_example.log")  # pretty-printed, as the README shows it
    assert isinstance(a, SuspectAnalysis) and a.format == "nccl-inspector"
    assert a.evidence["records"] == 1 and a.evidence["collectives"] == 0 and a.suspects == ()


def test_read_nccl_inspector_last_arriver_is_the_suspect(tmp_path):
    # rank 3 arrives 2 ms late to every all-reduce: it has the shortest time, 0.5 ms, the others 2.5 ms
    write_ranks(tmp_path, [[2500, 2500, 2500, 500]] * 4)
    a = read_nccl_inspector(tmp_path)
    assert a.suspects == (3,)
    assert a.evidence["collectives"] == 4
    assert a.evidence["caused_wait_s"]["3"] == pytest.approx(4 * 3 * 0.002)
    assert a.evidence["last_share"]["3"] == 1.0


def test_read_nccl_inspector_even_times_name_nobody(tmp_path):
    write_ranks(tmp_path, [[1000, 1010, 1005, 1002]] * 5)  # 1% jitter: waiting below the 5% line
    assert read_nccl_inspector(tmp_path).suspects == ()


def test_read_nccl_inspector_two_communicators_use_comm_rank_ids(tmp_path):
    write_ranks(tmp_path, [[3000, 1000]], comm="0xa", n_ranks=2)
    more = [json.dumps(record(r, 0, t, comm="0xb", n_ranks=2)) for r, t in ((0, 1000), (1, 1000))]
    (tmp_path / "other.jsonl").write_text("\n".join(more))
    assert read_nccl_inspector(tmp_path).suspects == ("0xa:1",)


@pytest.mark.parametrize(
    "line, needle",
    [
        ('{"header": {"id": "x", "rank": 0, "n_ranks": 2}, "coll_perf": {"coll_sn": 1, "coll_exec_time_us": -1}}',
         "column 'coll_exec_time_us', row 1: expected a time in microseconds >= 0, got -1"),
        ('{"header": {"id": "x", "rank": 0, "n_ranks": 2}, "coll_perf": {"coll_sn": 1, "coll_exec_time_us": NaN}}',
         "got nan"),
        ('{"header": {"id": "x", "rank": 5, "n_ranks": 2}, "coll_perf": {"coll_sn": 1, "coll_exec_time_us": 3}}',
         "column 'rank', row 1: expected a rank below n_ranks = 2, got 5"),
        ('{"header": {"id": "x", "rank": 0, "n_ranks": 2}, "coll_perf": {"coll_sn": 1', "row 1: not valid JSON"),
    ],
)
def test_bad_nccl_inspector_lines(tmp_path, line, needle):
    p = tmp_path / "bad.log"
    p.write_text(line + "\n")
    with pytest.raises(TraceError) as exc:
        read_nccl_inspector(p)
    assert "bad.log" in str(exc.value) and needle in str(exc.value)


# NCCL Inspector's Prometheus files (NCCL_INSPECTOR_PROM_DUMP=1): the documented example verbatim, then
# one file per GPU built here in the format of plugins/profiler/inspector/inspector_prom.cc.
PROM = Path(__file__).parent / "data" / "nccl-inspector" / "prometheus" / "prom_example.prom"


def prom_line(node, gpu, us, comm="DP Group 0", nranks=4, coll="AllReduce", size="4-5GB", metric="collective"):
    labels = (f'version="v5.1",slurm_job_id="unknown",node="{node}",gpu="{gpu}",comm_name="{comm}",n_nodes="2",'
              f'nranks="{nranks}",collective="{coll}",message_size="{size}",algo_proto="Ring_ll"')
    return (f"nccl_bus_bandwidth_gbs{{{labels}}} 600\n" if metric == "collective" else "") + \
        f"nccl_{metric}_exec_time_microseconds{{{labels}}} {us}\n"


def write_gpus(folder, rows):
    """rows: {(node, gpu): text}; one .prom file per GPU, as the plugin writes them."""
    for i, ((node, gpu), text) in enumerate(sorted(rows.items())):
        (folder / f"nccl_inspector_metrics_GPU-{i:04d}.prom").write_text(text)


def test_prometheus_documented_example_cannot_compare_one_gpu():
    a = analyze(PROM)
    assert a.format == "nccl-inspector" and a.suspects == () and a.evidence["output"] == "prometheus"
    (row,) = a.evidence["cannot_tell"]
    assert (row["comm_name"], row["message_size"], row["reason"]) == ("DP Group 0", "4-5GB", "seen on one GPU only")
    assert a.evidence["p2p_samples"] == 1 and a.evidence["buckets"] == 0
    assert any("no bucket can be compared across GPUs" in n for n in a.notes)


def test_prometheus_names_the_gpu_with_the_shortest_times(tmp_path):
    # node b's GPU1 arrives last in both buckets: it has the shortest mean; the others wait for it
    gpus = {("a", "GPU0"): (9000, 900), ("a", "GPU1"): (8000, 800), ("b", "GPU0"): (8500, 850), ("b", "GPU1"): (500, 50)}
    write_gpus(tmp_path, {k: prom_line(*k, t[0]) + prom_line(*k, t[1], size="1-2MB") for k, t in gpus.items()})
    a = analyze(tmp_path)
    assert a.suspects == ("b/GPU1",)
    assert a.evidence["caused_wait_us"] == {"b/GPU1": (8500 + 7500 + 8000) + (850 + 750 + 800)}
    assert a.evidence["last_share"] == {"b/GPU1": 1.0} and a.evidence["cannot_tell"] == []
    assert a.to_dict()["evidence"]["last"][0]["gpus"]["b/GPU1"] == 500


def test_prometheus_says_why_a_bucket_cannot_be_told(tmp_path):
    # five GPUs report "unknown" (every unnamed communicator) with nranks=4: two communicators share the name
    rows = {("a", f"GPU{i}"): prom_line("a", f"GPU{i}", 1000 + i, comm="unknown") for i in range(5)}
    rows[("a", "GPU0")] += prom_line("a", "GPU0", 30, metric="p2p")
    write_gpus(tmp_path, rows)
    a = analyze(tmp_path)
    assert a.suspects == ()
    (row,) = a.evidence["cannot_tell"]
    assert "5 GPUs report a communicator of nranks=4" in row["reason"] and a.evidence["p2p_samples"] == 1


def test_prometheus_even_waits_name_no_suspect(tmp_path):
    write_gpus(tmp_path, {("a", f"GPU{i}"): prom_line("a", f"GPU{i}", 1000 + i) for i in range(4)})
    a = analyze(tmp_path)
    assert a.suspects == () and a.evidence["wait_us"] == pytest.approx(6.0)  # 6 us of 4006: below the 5% line


def test_prometheus_bad_line_names_file_and_row(tmp_path):
    p = tmp_path / "nccl_inspector_metrics_x.prom"
    p.write_text(prom_line("a", "GPU0", 10) + 'nccl_collective_exec_time_microseconds{node="a",gpu="GPU1" 5\n')
    with pytest.raises(TraceError, match=r"nccl_inspector_metrics_x.prom: row 3: not a Prometheus sample line"):
        analyze(p)
    p.write_text(prom_line("a", "GPU0", "NaN"))
    with pytest.raises(TraceError, match=r"column 'nccl_collective_exec_time_microseconds', row 2: .* got nan"):
        analyze(p)


def test_inspector_json_and_prometheus_files_are_not_mixed(tmp_path):
    write_ranks(tmp_path, [[1000, 4000]])
    (tmp_path / "nccl_inspector_metrics_x.prom").write_text(prom_line("a", "GPU0", 10))
    with pytest.raises(TraceError, match=r"Prometheus files \(1\) and JSON-lines logs \(2\) of NCCL Inspector mixed"):
        analyze(tmp_path)


def test_inspector_current_documented_examples_of_two_communicators_compare_nothing():
    a = analyze(Path(__file__).parent / "data" / "nccl-inspector" / "json")
    assert a.suspects == () and a.evidence["records"] == 2 and a.evidence["collectives"] == 0
