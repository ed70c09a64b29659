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
