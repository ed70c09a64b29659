"""The readers a job cut into block tasks uses (traces.blocks: read_op_blocks, sample_rows, step_row_groups),
against the block-by-block analysis they must reproduce: the same blocks, the same program sample."""

import numpy as np
import pyarrow.parquet as pq
import pytest

from straggle_edu.fleet._split import _units, plan
from straggle_edu.traces.blocks import (block_ranges, iter_op_blocks, program_sample, read_op_blocks, sample_row_groups,
                                        sample_rows, step_row_groups)
from straggle_edu.traces.optrace import write_trace
from straggle_edu.traces.synthetic import synthetic_trace


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    t = synthetic_trace(dp=6, pp=2, microbatches=2, steps=7, jitter=0.05, slow_worker=(4, 1, 1.3), rng=11)
    path = write_trace(t, tmp_path_factory.mktemp("split") / "trace-rg.parquet")
    pq.write_table(pq.read_table(path), path, row_group_size=300)  # row groups that cut through steps
    return path


def same_trace(a, b):
    ca, cb = a.columns(), b.columns()
    return list(ca) == list(cb) and all(np.array_equal(ca[k], cb[k]) for k in ca) and a.layout == b.layout


@pytest.mark.parametrize("block_steps", [1, 2, 3])
def test_read_op_blocks_gives_iter_op_blocks_blocks(trace_file, block_steps):
    ranges, ordered = block_ranges(trace_file, block_steps)
    assert ordered
    expected = list(iter_op_blocks(trace_file, block_steps=block_steps))
    for unit in _units(ranges, step_row_groups(trace_file)):
        got = read_op_blocks(trace_file, [ranges[i] for i in unit])
        assert all(same_trace(g, expected[i]) for g, i in zip(got, unit))


def test_sample_read_in_parts_is_the_program_sample(trace_file):
    groups = pq.ParquetFile(trace_file).metadata.num_row_groups
    assert groups > 4
    parts = sample_rows(trace_file, range(0, 2), dp_ranks=4) + sample_rows(trace_file, range(2, groups), dp_ranks=4)
    assert same_trace(program_sample(trace_file, dp_ranks=4, parts=parts), program_sample(trace_file, dp_ranks=4))


def test_sample_skips_row_groups_without_its_dp_ranks_and_keeps_every_row(trace_file, tmp_path):
    table = pq.read_table(trace_file)
    by_rank = tmp_path / "trace-by-rank.parquet"  # written in DP-rank order
    pq.write_table(table.sort_by([("dp_rank", "ascending"), ("step", "ascending")]), by_rank, row_group_size=100)
    groups = pq.ParquetFile(by_rank).metadata.num_row_groups
    read = sample_row_groups(by_rank, dp_ranks=2)
    assert 0 < len(read) < groups / 2  # the row groups of DP ranks 2..5 only are not read
    every = pq.read_table(by_rank)
    got = every.filter(every["dp_rank"].to_numpy() < 2)
    assert sum(t.num_rows for t in sample_rows(by_rank, dp_ranks=2)) == got.num_rows
    assert same_trace(program_sample(by_rank, dp_ranks=2), program_sample(by_rank, dp_ranks=2, parts=[got]))
    assert plan(by_rank, 2, None)["sample_groups"] == sample_row_groups(by_rank)


def test_units_join_blocks_that_share_a_row_group():
    assert _units([(0, 0), (1, 1), (2, 2)], [(0, 1), (1, 2)]) == [[0, 1, 2]]
    assert _units([(0, 1), (2, 3)], [(0, 1), (2, 3)]) == [[0], [1]]


def test_plan_only_for_parquet_traces_in_blocks(trace_file):
    assert plan(trace_file, None, None) is None and plan(trace_file, "auto", None) is None  # small: read whole
    p = plan(trace_file, 2, None)
    assert p["ranges"] == block_ranges(trace_file, 2)[0] and sum(map(len, p["units"])) == 4
