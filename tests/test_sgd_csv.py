"""The SGD experiment's per-process CSV as `straggle-edu analyze` reads it (traces.perrank)."""

import pytest

from straggle_edu.traces import analyze, read_trace
from straggle_edu.traces._table import TraceError

CSV = """rank,step,compute_s,wait_s,comm_s,counted
0,0,0.020,0.000,0.001,1
1,0,0.010,0.010,0.001,1
2,0,0.080,0.000,0.001,0
0,1,0.010,0.000,0.001,1
1,1,0.010,0.000,0.001,1
2,1,0.010,0.000,0.001,1
"""


def test_read_rank_csv_wide_format_keeps_counted(tmp_path):
    p = tmp_path / "run.csv"
    p.write_text(CSV)
    t = read_trace(p)
    assert t.counted.tolist() == [[True, True, False], [True, True, True]]
    assert t.compute[0].tolist() == [0.020, 0.010, 0.080]


def test_analyze_backup_step_ends_at_the_last_counted_arrival(tmp_path):
    p = tmp_path / "run.csv"
    p.write_text(CSV)
    a = analyze(read_trace(p))
    # step 0: counted 20 and 10 ms -> max 20, mean 15 (the late 80 ms rank counts as the mean);
    # step 1: all 10 ms. S = mean(max) / mean(ideal) = (20 + 10) / (15 + 10) = 1.2, not (80 + 10) / ...
    assert a.slowdown == pytest.approx(30 / 25)


def test_read_rank_csv_wide_format_rejects_bad_counted(tmp_path):
    p = tmp_path / "run.csv"
    p.write_text(CSV.replace("0.001,0\n", "0.001,2\n"))
    with pytest.raises(TraceError, match="column 'counted', row 3: expected 0 or 1, got 2"):
        read_trace(p)
