"""Reading the three trace formats, and one clear error for every kind of bad input."""

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu.traces import (
    OpTrace,
    RankTrace,
    TraceError,
    analyze,
    analyze_rank_times,
    read_trace,
    write_trace,
)
from straggle_edu.traces.optrace import OPTYPES, read_meta
from straggle_edu.traces.synthetic import synthetic_trace


# --------------------------------------------------------------------------- per-rank CSV


def write(path, text):
    path.write_text(text)
    return path


def test_read_rank_csv_sums_compute_rows_and_keeps_phases(tmp_path):
    p = write(
        tmp_path / "r.csv",
        "step,rank,duration_s,phase\n"
        "0,0,0.5,compute\n0,0,0.5,compute\n0,0,1.0,wait\n0,1,2.0,compute\n0,1,0.25,comm\n",
    )
    t = read_trace(p)
    assert isinstance(t, RankTrace)
    assert t.compute.tolist() == [[1.0, 2.0]]
    assert t.wait.tolist() == [[1.0, 0.0]]
    assert t.comm.tolist() == [[0.0, 0.25]]
    assert t.recorded.tolist() == [2.25]


def test_read_rank_csv_without_phase_is_all_compute(tmp_path):
    p = write(tmp_path / "r.csv", "rank,step,duration_s\n1,0,2.0\n0,0,1.0\n")
    t = read_trace(p)
    assert t.ranks.tolist() == [0, 1] and t.compute.tolist() == [[1.0, 2.0]]


def test_per_rank_example_of_the_issue(tmp_path):
    p = write(tmp_path / "r.csv", "step,rank,duration_s\n0,0,1\n0,1,2\n0,2,1\n0,3,1\n")
    assert analyze(p).to_dict() == {
        "format": "per-rank",
        "slowdown": 1.6,
        "waste": 0.375,
        "per_step": {"0": 1.6},
        "by_rank": {"0": 1.0, "1": 1.6, "2": 1.0, "3": 1.0},
        "replay_error": 0.0,
        "noise_floor": None,  # one step: no step-to-step spread to measure
    }


def test_incomplete_run_drops_its_partial_last_step(tmp_path):
    p = write(tmp_path / "r.csv", "step,rank,duration_s\n0,0,1\n0,1,2\n1,0,1\n# incomplete\n")
    with pytest.warns(UserWarning, match="interrupted"):
        t = read_trace(p)
    assert t.incomplete and t.steps.tolist() == [0]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "empty"),
        ("step,rank,duration_s\n", "no rows"),
        ("step,rank\n0,0\n", "missing column 'duration_s'"),
        ("step,rank,duration_s\n0,0,abc\n", "column 'duration_s', row 1"),
        ("step,rank,duration_s\n0,0,1\n0,1,-2\n", "column 'duration_s', row 2"),
        ("step,rank,duration_s\n0,0,nan\n", "column 'duration_s', row 1"),
        ("step,rank,duration_s\n0,0.5,1\n", "column 'rank', row 1"),
        ("step,rank,duration_s,phase\n0,0,1,compute\n0,1,1,sleep\n", "column 'phase', row 2"),
        ("step,rank,duration_s\n0,0,1\n0,1,1\n1,0,1\n2,0,1\n2,1,1\n", "no row for rank 1 in step 1"),
        ("step,rank,duration_s\n0,0,1,9\n", "row 1: expected 3"),
        ("step,rank,duration_s,phase\n0,0,1,wait\n0,1,1,compute\n", "no compute row for rank 0"),
    ],
)
def test_bad_rank_csv_names_file_column_and_row(tmp_path, text, needle):
    p = write(tmp_path / "bad.csv", text)
    with pytest.raises(ValueError) as exc:
        read_trace(p, format="per-rank")
    assert "bad.csv" in str(exc.value) and needle in str(exc.value)


@given(st.lists(st.lists(st.floats(0.01, 100.0), min_size=3, max_size=3), min_size=1, max_size=6))
def test_per_rank_slowdown_is_between_1_and_max_over_mean(rows):
    a = analyze_rank_times(rows)
    w = np.array(rows)
    assert 1.0 - 1e-12 <= a.slowdown <= (w.max(axis=1) / w.mean(axis=1)).max() + 1e-12
    assert 0.0 <= a.waste < 1.0
    # a rank's own slowdown never exceeds the job's
    assert max(a.by_rank.values()) <= a.slowdown + 1e-12


# --------------------------------------------------------------------------- op-level


@pytest.fixture(scope="module")
def small_trace():
    return synthetic_trace(dp=2, pp=2, microbatches=3, steps=2, rng=0)


def trace_csv(tmp_path, trace, name="trace-x.csv"):
    return write_trace(trace, tmp_path / name)


def test_op_csv_and_parquet_round_trip(tmp_path, small_trace):
    for name in ("trace-a.csv", "trace-a.parquet"):
        p = write_trace(small_trace, tmp_path / name)
        t = read_trace(p)
        assert isinstance(t, OpTrace) and len(t) == len(small_trace)
        assert t.layout.dp_size == 2 and t.layout.pp_size == 2
        assert t.layout.source.endswith("meta-a.yaml")
        np.testing.assert_allclose(np.sort(t.duration), np.sort(small_trace.duration), atol=1e-9)
        assert analyze(t).slowdown == pytest.approx(analyze(small_trace).slowdown, rel=1e-6)


def test_reading_never_modifies_the_input(tmp_path, small_trace):
    p = trace_csv(tmp_path, small_trace)
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    mtime = p.stat().st_mtime_ns
    analyze(p)
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before and p.stat().st_mtime_ns == mtime


def test_layout_inferred_without_meta_and_read_from_json_meta(tmp_path, small_trace):
    p = write_trace(small_trace, tmp_path / "plain.csv", meta=False)
    assert read_trace(p).layout.source == "inferred"
    (tmp_path / "meta-plain.json").write_text(json.dumps({"dp_size": 2, "pp_size": 2, "tp_size": 4, "world_size": 16}))
    L = read_trace(p).layout
    assert (L.tp_size, L.world_size, L.workers) == (4, 16, 4)


def test_meta_that_disagrees_with_the_trace_is_an_error(tmp_path, small_trace):
    p = trace_csv(tmp_path, small_trace)
    (tmp_path / "meta-x.yaml").write_text("trial_name: x\ndp_size: 4\npp_size: 2\n")
    with pytest.raises(TraceError, match="dp_size = 4"):
        read_trace(p)


def test_nested_yaml_meta_uses_pyyaml(tmp_path):
    p = tmp_path / "meta-n.yaml"
    p.write_text("dp_size: 2\npp_size: 1\nextra:\n  a: 1\n")
    assert read_meta(p)["extra"] == {"a": 1}


def mutate(tmp_path, trace, row, column, value, name="trace-bad.csv"):
    """Write the trace as CSV and set one cell (row counted from 1)."""
    p = write_trace(trace, tmp_path / name, meta=False)
    lines = p.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[row].split(",")
    cells[header.index(column)] = value
    lines[row] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize(
    "column, value, needle",
    [
        ("duration", "-0.5", "column 'duration', row 7"),
        ("duration", "nan", "column 'duration', row 7"),
        ("duration", "soon", "column 'duration', row 7"),
        ("start_ts", "", "column 'start_ts', row 7"),
        ("step", "1.5", "column 'step', row 7"),
        ("dp_rank", "-1", "column 'dp_rank', row 7"),
    ],
)
def test_bad_op_cell_names_file_column_and_row(tmp_path, small_trace, column, value, needle):
    p = mutate(tmp_path, small_trace, 7, column, value)
    with pytest.raises(TraceError) as exc:
        read_trace(p)
    assert "trace-bad.csv" in str(exc.value) and needle in str(exc.value)


def test_missing_columns_are_named(tmp_path, small_trace):
    p = write_trace(small_trace, tmp_path / "t.csv", meta=False)
    lines = p.read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, h in enumerate(header) if h not in ("seq_id", "duration")]
    p.write_text("\n".join(",".join(l.split(",")[i] for i in keep) for l in lines) + "\n")
    with pytest.raises(TraceError, match=r"t\.csv: missing columns 'duration', 'seq_id'"):
        read_trace(p)


def test_empty_op_trace_files(tmp_path):
    p = write(tmp_path / "e.csv", "")
    with pytest.raises(TraceError, match="e.csv.*empty"):
        read_trace(p, format="op-level")
    p = write(tmp_path / "h.csv", ",".join(["dp_rank", "stage", "step", "optype", "start_ts", "duration", "seq_id"]) + "\n")
    with pytest.raises(TraceError, match="h.csv: the file has a header but no rows"):
        read_trace(p)


def test_rank_in_two_stages_is_an_error(tmp_path, small_trace):
    # row 7 belongs to some worker; give it the rank of a worker on another stage
    cols = small_trace.columns()
    i = 6
    other = int(np.flatnonzero(small_trace.stage != small_trace.stage[i])[0])
    p = mutate(tmp_path, small_trace, 7, "rank", str(int(cols["rank"][other])))
    with pytest.raises(TraceError, match=r"inconsistent layout: column '(stage|dp_rank|rank)', row \d+: rank \d+"):
        read_trace(p)


def test_missing_microbatch_is_an_error(tmp_path, small_trace):
    cols = {k: v.copy() for k, v in small_trace.columns().items()}
    fwd = np.flatnonzero((cols["optype"] == "forward-compute") & (cols["mb_id"] == 1))[0]
    keep = np.ones(len(small_trace), bool)
    keep[fwd] = False
    from straggle_edu.traces.optrace import op_trace_from_columns

    with pytest.raises(TraceError, match=r"column 'mb_id'.*no forward-compute for microbatch 1"):
        op_trace_from_columns({k: v[keep] for k, v in cols.items()}, source="x.csv")


def test_duplicate_op_is_an_error(small_trace):
    from straggle_edu.traces.optrace import op_trace_from_columns

    cols = small_trace.columns()
    dup = {k: np.concatenate([v, v[:1]]) for k, v in cols.items()}
    with pytest.raises(TraceError, match=r"column 'seq_id', row \d+: worker .* two"):
        op_trace_from_columns(dup, source="x.csv")


def test_unknown_optypes_warn_with_counts_and_are_skipped(small_trace):
    from straggle_edu.traces.optrace import op_trace_from_columns

    cols = {k: v.copy() for k, v in small_trace.columns().items()}
    extra = {k: np.concatenate([v, v[:3]]) for k, v in cols.items()}
    extra["optype"][-3:] = ["moe-all-to-all", "moe-all-to-all", "checkpoint"]
    extra["seq_id"][-3:] = [90, 91, 92]
    with pytest.warns(UserWarning, match=r"skipping 3 ops of unknown type \('moe-all-to-all' x2, 'checkpoint' x1\)"):
        t = op_trace_from_columns(extra, source="x.csv")
    assert len(t) == len(small_trace)
    assert "skipped ops of unknown type" in " ".join(analyze(t).notes)


def test_missing_op_on_one_worker_is_an_error(small_trace):
    from straggle_edu.traces.optrace import op_trace_from_columns

    cols = small_trace.columns()
    i = int(np.flatnonzero(cols["optype"] == "optimizer")[0])
    keep = np.arange(len(small_trace)) != i
    t = op_trace_from_columns({k: v[keep] for k, v in cols.items()}, source="x.csv")
    with pytest.raises(TraceError, match=r"has no optimizer op with seq_id 0"):
        analyze(t)


def test_parquet_without_pyarrow_says_how_to_install(tmp_path, small_trace, monkeypatch):
    import builtins

    p = write_trace(small_trace, tmp_path / "t.parquet")
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(TraceError, match=r"pip install 'straggle-edu\[parquet\]'"):
        read_trace(p)


def test_unknown_file_type_and_undetectable_csv(tmp_path):
    with pytest.raises(TraceError, match="unknown trace file type"):
        read_trace(write(tmp_path / "t.txt", "x"))
    with pytest.raises(TraceError, match="cannot tell the trace format"):
        read_trace(write(tmp_path / "t.csv", "a,b\n1,2\n"))
    with pytest.raises(FileNotFoundError):
        read_trace(tmp_path / "nope.csv")


def test_worker_ops_and_columns(small_trace):
    ops = small_trace.worker_ops(1, 0, step=0)
    assert set(ops["optype"]) <= set(OPTYPES)
    assert np.all(np.diff(ops["start_ts"]) >= 0)
    assert sorted(ops["mb_id"][ops["optype"] == "forward-compute"].tolist()) == [0, 1, 2]


def test_large_csv_path_via_pyarrow_gives_the_same_messages(tmp_path, small_trace, monkeypatch):
    from straggle_edu.traces import _table

    monkeypatch.setattr(_table, "_ARROW_CSV_BYTES", 0)  # every CSV takes the pyarrow path
    p = write_trace(small_trace, tmp_path / "trace-big.csv")
    with open(p, "a") as f:
        f.write("# incomplete\n")
    t = read_trace(p)
    assert len(t) == len(small_trace)
    assert analyze(t).slowdown == pytest.approx(analyze(small_trace).slowdown, rel=1e-6)
    bad = mutate(tmp_path, small_trace, 5, "duration", "oops", name="trace-bad2.csv")
    with pytest.raises(TraceError, match=r"trace-bad2.csv: column 'duration', row 5"):
        read_trace(bad)
    bad = mutate(tmp_path, small_trace, 9, "seq_id", "2.5", name="trace-bad3.csv")
    with pytest.raises(TraceError, match=r"column 'seq_id', row 9"):
        read_trace(bad)


def test_parquet_nulls_are_named(tmp_path, small_trace):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = small_trace.columns()
    dur = pa.array(cols["duration"].tolist()[:10] + [None] + cols["duration"].tolist()[11:])
    table = pa.table({k: (dur if k == "duration" else pa.array(v.tolist())) for k, v in cols.items()})
    pq.write_table(table, tmp_path / "n.parquet")
    with pytest.raises(TraceError, match=r"n.parquet: column 'duration', row 11"):
        read_trace(tmp_path / "n.parquet")
