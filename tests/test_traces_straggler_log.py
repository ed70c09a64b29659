"""Straggler logs: the documented example output of Megatron-LM and nvidia-resiliency-ext, verbatim.

No real logs are published (see tests/data/documented-examples/README.md); the straggling cases
below are built here in the same line format, since no documented example shows one.
"""

from pathlib import Path

import pytest

from straggle_edu.traces import SuspectAnalysis, TraceError, analyze
from straggle_edu.traces.straggler_log import read_straggler_log

DOCS = Path(__file__).parent / "data" / "documented-examples"


def test_read_straggler_log_megatron_documented_line():
    a = analyze(DOCS / "megatron_log_straggler.log")
    assert isinstance(a, SuspectAnalysis) and a.format == "straggler-log"
    (row,) = a.evidence["megatron"]["intervals"]
    assert (row["min_rtt"], row["min_rank"], row["max_rtt"], row["max_rank"]) == (3453.08, 8, 3468.20, 0)
    assert row["s_upper_bound"] == pytest.approx(3468.20 / 3453.08)
    assert a.suspects == ()  # S <= 1.0044: below the 1.10 line, nobody straggles
    lowest, highest = a.evidence["megatron"]["etpt_lists"]
    assert lowest["which"] == "lowest" and lowest["etpt_tf_rank"][0] == (296.02, 0)
    assert highest["etpt_tf_rank"][-1] == (297.32, 8)


def test_read_straggler_log_nvrx_documented_report():
    a = read_straggler_log(DOCS / "nvrx_straggler_report.log")
    rel, ind = a.evidence["nvrx"]["reports"]
    assert rel["kind"] == "relative" and ind["kind"] == "individual" and rel["ranks"] == 512
    assert [s["rank"] for s in rel["scores"] if s["group"] == "worst"] == [76, 13, 45, 433, 308]
    assert [s["rank"] for s in ind["scores"] if s["group"] == "best"] == [297, 123, 21, 389, 489]
    assert min(s["score"] for s in rel["scores"]) == 0.94
    assert a.suspects == ()  # every score is above the 0.7 threshold


def test_read_straggler_log_megatron_straggling_intervals(tmp_path):
    # built here: rank 5 is 1.5x the fastest in two intervals, rank 2 1.2x in one, then a calm one
    lines = [" 0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 100.00ms/3 | MxRtt/Rnk: 150.00ms/5",
             " 0: INFO:megatron.core.utils:[2024-03-14 23:08:56] | MnRtt/Rnk: 100.00ms/1 | MxRtt/Rnk: 150.00ms/5",
             " 0: INFO:megatron.core.utils:[2024-03-14 23:09:56] | MnRtt/Rnk: 100.00ms/1 | MxRtt/Rnk: 120.00ms/2",
             " 0: INFO:megatron.core.utils:[2024-03-14 23:10:56] | MnRtt/Rnk: 100.00ms/1 | MxRtt/Rnk: 105.00ms/7"]
    p = tmp_path / "train.log"
    p.write_text("iteration 10 | loss 2.3\n" + "\n".join(lines) + "\n")
    a = analyze(p)
    assert a.suspects == (5, 2)
    assert [r["line"] for r in a.evidence["megatron"]["intervals"]] == [2, 3, 4, 5]


def test_read_straggler_log_nvrx_low_score_and_warning(tmp_path):
    # built here, in the callbacks' format: rank 6 scores 0.59 and a warning names rank 9
    text = ("GPU relative performance:\n  Rank=6 Node=n0 Score=0.59\n  Rank=0 Node=n0 Score=1.00\n"
            "STRAGGLER DETECTION WARNING: Some GPUs performance dropped. Affected ranks: "
            "{StragglerId(rank=9, node='n1')}\n")
    p = tmp_path / "nemo.log"
    p.write_text(text)
    assert read_straggler_log(p).suspects == (6, 9)


def test_read_straggler_log_refuses_a_log_without_detector_lines(tmp_path):
    p = tmp_path / "plain.log"
    p.write_text("iteration 1 | loss 2.0\n" * 3)
    with pytest.raises(TraceError, match=r"plain\.log: no straggler-detector lines"):
        read_straggler_log(p)
