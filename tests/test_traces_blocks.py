"""Block-by-block analysis (traces.blocks, whatif.analyze_blocks) gives the whole-trace result.

Real data: the OSDI 2025 artifact's AR, SE and ST traces (straggle_edu/traces/data/osdi2025, Apache-2.0),
cut into blocks of one and of three steps; and a synthetic trace written sorted and shuffled.
Means are summed block by block, so values agree to rounding (1e-12 relative); the
rankings, medians, M_W's workers and the longest microbatch are the same.
"""


import numpy as np
import pytest

from straggle_edu.traces.blocks import analyze_op_file, iter_op_blocks, program_sample
from straggle_edu.traces.optrace import ARTIFACT_DATA, op_trace_from_columns, read_op_trace, write_trace
from straggle_edu.traces.replay import build_model
from straggle_edu.traces.synthetic import synthetic_trace
from straggle_edu.traces.whatif import analyze_blocks, analyze_ops

DATA = ARTIFACT_DATA


def assert_same(a, b):
    close = dict(rel=1e-12, abs=1e-12)
    assert b.slowdown == pytest.approx(a.slowdown, **close)
    assert list(b.per_step) == list(a.per_step)
    assert list(b.per_step.values()) == pytest.approx(list(a.per_step.values()), **close)
    for by in ("by_optype", "by_stage", "by_dp_rank", "by_worker"):
        x, y = getattr(a, by), getattr(b, by)
        assert (x is None) == (y is None)
        if x is not None:
            assert list(y) == list(x)
            assert list(y.values()) == pytest.approx(list(x.values()), **close)
    for name in ("m_w", "m_s", "replay_error"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None) and (x is None or y == pytest.approx(x, **close))
    np.testing.assert_allclose(b.worker_step_slowdown, a.worker_step_slowdown, rtol=1e-12)
    assert b.details["mw_fixed"] == a.details["mw_fixed"]
    mb_a, mb_b = a.details["microbatch"], b.details["microbatch"]
    exact = ("step", "mb", "dp_rank", "stage", "optype")
    assert {k: mb_b[k] for k in exact} == {k: mb_a[k] for k in exact}
    assert [mb_b["ratio"], mb_b["cv"]] == pytest.approx([mb_a["ratio"], mb_a["cv"]], **close)


@pytest.mark.parametrize("name", ["AR", "SE", "ST"])
@pytest.mark.parametrize("block_steps", [1, 3])
def test_analyze_op_file_blocks_equal_whole_on_public_traces(name, block_steps):
    path = DATA / f"trace-{name}.parquet"
    whole = analyze_ops(read_op_trace(path))
    streamed = analyze_op_file(path, block_steps=block_steps)
    assert streamed.details["blocks"] == -(-len(whole.steps) // block_steps)
    assert_same(whole, streamed)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    t = synthetic_trace(dp=3, pp=3, microbatches=4, steps=7, jitter=0.05, seq_imbalance=0.3,
                        slow_worker=(2, 1, 1.4), gc_pauses=(0.2, 0.02), gaps=0.001, rng=3)
    folder = tmp_path_factory.mktemp("blocks")
    return t, write_trace(t, folder / "trace-syn.parquet"), write_trace(t, folder / "trace-syn.csv")


def test_analyze_op_file_blocks_equal_whole_on_synthetic_parquet_and_csv(synthetic):
    t, parquet, csv = synthetic
    for path in (parquet, csv):  # the CSV keeps 9 decimals: compare with the file read whole
        whole = analyze_ops(read_op_trace(path))
        for block_steps in (1, 2, 7):
            assert_same(whole, analyze_op_file(path, block_steps=block_steps))


def test_iter_op_blocks_unsorted_file_reads_each_block(synthetic, tmp_path):
    t, _, _ = synthetic
    cols = t.columns()
    order = np.random.default_rng(0).permutation(len(t))
    shuffled = op_trace_from_columns({k: v[order] for k, v in cols.items()}, meta={"dp_size": 3, "pp_size": 3})
    path = write_trace(shuffled, tmp_path / "trace-shuffled.parquet")
    blocks = list(iter_op_blocks(path, block_steps=3))
    assert [b.steps.tolist() for b in blocks] == [[0, 1, 2], [3, 4, 5], [6]]
    assert sum(len(b) for b in blocks) == len(t)
    assert_same(analyze_ops(t), analyze_op_file(path, block_steps=3))


def test_analyze_op_file_auto_reads_a_small_trace_whole(synthetic):
    _, parquet, _ = synthetic
    assert analyze_op_file(parquet).details["blocks"] == 1
    assert analyze_op_file(parquet, block_steps=None).details["model"] is not None


def test_program_sample_gives_the_whole_traces_program():
    path = DATA / "trace-SE.parquet"
    whole, sample = build_model(read_op_trace(path)), build_model(program_sample(path, dp_ranks=8))
    assert whole.order == sample.order and whole.preds == sample.preds and np.array_equal(whole.side, sample.side)


def test_analyze_blocks_refuses_blocks_out_of_order(synthetic):
    t, _, _ = synthetic
    cols = t.columns()
    halves = [op_trace_from_columns({k: v[(t.step >= 4) == h] for k, v in cols.items()}) for h in (True, False)]
    with pytest.raises(ValueError, match="increasing step order"):
        analyze_blocks(halves)
    with pytest.raises(ValueError, match="at least one block"):
        analyze_blocks([])


def test_analyze_blocks_refuses_a_block_with_other_ops(synthetic):
    t, _, _ = synthetic
    other = synthetic_trace(dp=3, pp=3, microbatches=5, steps=1, rng=0)
    cols = other.columns()
    cols["step"] = cols["step"] + 100
    with pytest.raises(Exception, match="run other ops"):
        analyze_blocks([t, op_trace_from_columns(cols)])


def test_iter_op_blocks_bad_block_steps(synthetic):
    _, parquet, _ = synthetic
    with pytest.raises(ValueError, match="block_steps must be a whole number >= 1, got 0"):
        list(iter_op_blocks(parquet, block_steps=0))


def test_dp_ranks_that_do_not_start_at_0_are_one_error_naming_file_and_column_also_in_blocks(tmp_path):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from straggle_edu.traces import TraceError

    table = pq.read_table(DATA / "trace-SE.parquet")
    i = table.schema.get_field_index("dp_rank")
    path = tmp_path / "trace-offset.parquet"
    pq.write_table(table.set_column(i, "dp_rank", pc.add(table["dp_rank"], 100)), path)
    for block_steps in (None, 2):  # read whole; in blocks, where the program's sample finds no row
        with pytest.raises(TraceError, match=r"trace-offset\.parquet: inconsistent layout: column 'dp_rank': no row"):
            analyze_op_file(path, block_steps=block_steps)


def test_worker_timeline_needs_a_one_block_analysis(synthetic):
    from straggle_edu.traces.whatif import worker_timeline

    _, parquet, _ = synthetic
    with pytest.raises(ValueError, match="analysis must hold its trace in one block"):
        worker_timeline(analyze_op_file(parquet, block_steps=2), 0, 0, 0)
    assert worker_timeline(analyze_op_file(parquet), 0, 0, 0)


def test_analyze_op_file_blocks_equal_whole_with_the_per_step_ideal():
    path = DATA / "trace-ST.parquet"
    assert_same(analyze_ops(read_op_trace(path), ideal="per-step"), analyze_op_file(path, block_steps=3, ideal="per-step"))


@pytest.mark.parametrize("spill", [False, True])
def test_analyze_blocks_keeps_the_work_in_memory_or_spilled_alike(spill, tmp_path):
    # the kept work (copied into slabs, microbatches narrowed) or its spilled files give the whole-trace result
    path = DATA / "trace-AR.parquet"
    blocks = iter_op_blocks(path, block_steps=2)
    got = analyze_blocks(blocks, program=build_model(program_sample(path)), spill=tmp_path if spill else None)
    assert_same(analyze_ops(read_op_trace(path)), got)
    assert bool(list(tmp_path.iterdir())) == spill


def test_sample_rows_are_the_rows_of_the_first_dp_ranks(synthetic):
    # kept as numpy columns (Parquet's dictionary codes) or, for a CSV's string column, as pyarrow arrays
    import pyarrow as pa

    from straggle_edu.traces.blocks import sample_rows

    t, parquet, csv = synthetic
    for path in (parquet, csv):
        table = pa.concat_tables(sample_rows(path, dp_ranks=2)).to_pydict()
        whole = read_op_trace(path).columns()
        keep = whole["dp_rank"] < 2
        assert len(table["dp_rank"]) == int(keep.sum())
        for name in ("dp_rank", "stage", "step", "start_ts", "duration"):
            assert table[name] == whole[name][keep].tolist(), name
        assert table["optype"] == [str(x) for x in np.asarray(whole["optype"])[keep]]
    assert sample_rows(parquet, dp_ranks=0) == []
