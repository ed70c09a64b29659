"""One large op-level job as Dask tasks, a block of steps each, merged as ``analyze --block-steps`` merges them.

The passes of :func:`~straggle_edu.traces.whatif.analyze_blocks`, one task per run of blocks that
share row groups (not per block: Dask's cost per task, about 1 ms of CPU, is then paid about 80
times for the 16,384-rank job's 50 blocks in 25 runs, not 325), the blocks' models kept on the
worker that built them.
The runs are dealt out to the workers' threads in step order when the job is submitted, and each
later task of a run is asked for on the worker that read it (a wish the scheduler drops when that
worker is gone). Left to place them itself, Dask sent 23 of the 25 runs to the worker that built
the program, then the later passes wherever a thread was free, moving 59 MB of models.

1. the program (the dependency model of the first 64 DP ranks over every step), its rows read
   in as many parts as there are workers, then built once;
2. per run of blocks that share row groups (read once; a Parquet file's other row groups are not
   read): build each block's model from the program, take its
   :func:`~straggle_edu.traces.whatif.ideal_stats`;
3. on the worker of the first run, merge the statistics in step order
   (:func:`~straggle_edu.traces.whatif.finish_all_stats`, the exact merge of ``analyze``) and
   finish them, with the runs' infos and the steps before each run. Each other worker sends, in one
   task once its runs are read, their statistics, infos and median values, taken from their kept
   work (:func:`~straggle_edu.traces.whatif.median_values`): no copy of them waits beside the work,
   as in ``analyze``; the merging worker takes its own runs' values key by key;
4. per run: each block's :func:`~straggle_edu.traces.whatif.block_scores`;
5. :func:`~straggle_edu.traces.whatif.merge_scores`: the whole trace's scores and the workers that M_W fixes;
6. per run: each block's :func:`~straggle_edu.traces.whatif.block_mw`;
7. :func:`~straggle_edu.traces.whatif.scores_analysis`, then the job's row (or, ``submit(..., analysis=True)``,
   the :class:`~straggle_edu.traces.Analysis` itself, every S_X of it, which the tests and
   ``benchmarks/bench_fleet.py --huge`` compare with ``analyze``'s).

Why tasks, for a job that one worker could analyse alone (the 16,384-rank x 50-step trace, 2
workers on 2 cores, ``benchmarks/bench_fleet.py --only-huge``, medians of 3 interleaved runs):
the fleet's block tasks took 5.5 s wall and 8.9 s of CPU (client, fork server and workers),
``straggle-edu analyze`` of the same trace in one process 7.5 s wall and 7.6 s of CPU. So a job
analysed in blocks is cut into block tasks: they finish it sooner on workers that would otherwise
wait, at about 1.3 s more CPU (the cluster's processes and Dask's handling, the medians' values
sent to one worker, a second process's memory).

The blocks are those ``analyze`` cuts (the same ``block_steps``), and every sum runs in the same
order, so S and every S_X equal ``straggle-edu analyze``'s, bit for bit. A worker that dies takes
its blocks' models with it; the scheduler rebuilds them from their tasks.
"""

from __future__ import annotations

import functools
import operator
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

__all__ = ["plan", "submit"]


def _batch(task):
    """``task`` run under :func:`~straggle_edu.traces.blocks.batch_memory` (the memory of a worker of any cluster):
    every task of a job's blocks that makes large arrays, as ``analyze`` runs all of it (outside it, numpy asks for
    huge pages: the merge of the medians' values, :func:`_merge`, spent 0.1 s of system time in 1,900 faults
    there, 0.06 s in 45,000 faults under it)."""
    @functools.wraps(task)
    def run(*args):
        from ..traces.blocks import batch_memory

        with batch_memory():
            return task(*args)

    return run


def _measured():
    """Have Dask measure a block's model by what it holds: it measures an object it does not know by its shell
    (about 100 bytes), so its memory manager and its work stealing took a run's models (2 to 5 MB on the
    16,384-rank trace) for nothing."""
    from dask.sizeof import sizeof

    from ..traces.replay import DependencyModel

    sizeof.register(DependencyModel, _model_bytes)


def _model_bytes(model):
    from dask.sizeof import sizeof

    return sum(sizeof(v) for v in vars(model).values())


def _key(name, job):
    """A task's key: ``fleet-KIND-JOB[-INDEX]`` for ``name`` ``KIND`` or ``(KIND, INDEX)``.

    Dask groups tasks by their keys' leading words (:func:`dask.utils.key_split`), so each kind is a group of
    its own: the scheduler learns how long each kind takes and places a task by where its inputs are. Named
    ``fleet-RUN-...``, every task of a fleet was one group, which the scheduler took for root tasks and placed
    without regard to their inputs: on the 16,384-rank x 50-step trace, 23 of the 25 runs of blocks were read
    on one of the 2 workers, and 59 MB of their models were then sent to the other for the later passes.

    Examples
    --------
    >>> from dask.utils import key_split
    >>> _key(("read", 3), "1a2b3c4d-7"), key_split(_key(("read", 3), "1a2b3c4d-7"))
    ('fleet-read-1a2b3c4d-7-3', 'fleet-read')
    >>> key_split(_key("merge", "abcdefab-1"))
    'fleet-merge'
    """
    kind, index = (name, None) if isinstance(name, str) else name
    return f"fleet-{kind}-{job}" if index is None else f"fleet-{kind}-{job}-{index}"


def plan(path, block_steps, meta):
    """The tasks of a job, or None (analysed in one task): the blocks of a Parquet op-level trace, or the files of a
    job of profiler traces (one task each).

    Examples
    --------
    >>> from straggle_edu.traces.optrace import public_trace_path
    >>> plan(public_trace_path(), 10, None) is None   # a CSV: read once, in one task
    True
    """
    p = Path(path)
    if p.is_dir():
        return _profiler_plan(p)
    from ..traces import _detect
    from ..traces.blocks import (STREAM_ROWS, _step_order, auto_block_steps, block_ranges, count_rows,
                                 sample_row_groups, step_row_groups)

    if p.suffix.lower() not in (".parquet", ".pq") or _detect(p) != "op-level":
        return None
    if block_steps == "auto" and count_rows(p) <= STREAM_ROWS:
        return None
    order = _step_order(p)  # read once, for the block size and the blocks
    if block_steps == "auto":
        block_steps = auto_block_steps(p, steps=order[0])
    if not block_steps:
        return None
    ranges, _ = block_ranges(p, block_steps, order=order)
    if len(ranges) < 2:
        return None
    return {"ranges": ranges, "units": _units(ranges, step_row_groups(p)), "meta": None if meta is None else str(meta),
            "sample_groups": sample_row_groups(p)}


def _units(ranges, groups):
    """The blocks in runs that share row groups (each run read once): ``[[block index, ...], ...]``.

    Examples
    --------
    >>> _units([(0, 0), (1, 1), (2, 2), (3, 3)], [(0, 1), (2, 3)])
    [[0, 1], [2, 3]]
    >>> _units([(0, 0), (1, 1)], [None])
    [[0, 1]]
    """
    def touched(lo, hi):
        return {i for i, g in enumerate(groups) if g is None or not (g[1] < lo or g[0] > hi)}

    units, seen = [], set()
    for i, (lo, hi) in enumerate(ranges):
        rgs = touched(lo, hi)
        if units and rgs & seen:
            units[-1].append(i)
            seen |= rgs
        else:
            units.append([i])
            seen = rgs
    return units


@_batch
def _sample(path, row_groups):
    """The first 64 DP ranks' rows of some of the file's row groups (the program's sample, read in parts)."""
    from ..traces.blocks import sample_rows

    return sample_rows(path, row_groups)


@_batch
def _program(path, meta, budget, *samples):
    """The dependency model's wiring, from the first 64 DP ranks over every step (as analyze_op_file builds it)."""
    from .. import _validate
    from ..traces.blocks import program_sample
    from ..traces.replay import build_model

    old = _validate.set_memory_budget(max(_validate.memory_budget(), budget))
    try:
        m = build_model(program_sample(path, meta=meta, parts=[t for part in samples for t in part]))
    finally:
        _validate.set_memory_budget(old)
    return replace(m, work=None, start=None, duration=None, node_mb=None, cell_of_row=None)


@_batch
def _first_pass(path, ranges, meta, program, ideal, budget):
    """Pass 1 of a run of blocks (read at once): each block's model (work and microbatches kept), statistics,
    notes and size."""
    from .. import _validate
    from ..traces._kept import Slab
    from ..traces.blocks import read_op_blocks
    from ..traces.replay import build_model
    from ..traces.whatif import ideal_stats, kept_work

    t0 = time.perf_counter()
    _measured()
    old = _validate.set_memory_budget(max(_validate.memory_budget(), budget))
    out, slab = [], Slab()  # what the run keeps, out of the heap its blocks' arrays come and go in (as analyze's)
    try:
        for trace in read_op_blocks(path, ranges, meta=meta):
            model = build_model(trace, program=program)
            out.append({"model": kept_work(model, slab), "notes": list(model.notes), "skipped": list(trace.skipped),
                        "stats": ideal_stats(model, ideal, values=False),  # the values: from the kept work (_merge, _part)
                        "ops": len(trace), "trace0": SimpleNamespace(source=trace.source, layout=trace.layout)})
            del trace, model  # the next block is modelled without this one's arrays beside it
    finally:
        _validate.set_memory_budget(old)
    for block in out:
        block["seconds"] = (time.perf_counter() - t0) / len(out)
    return out


@_batch
def _merge(ideal, mine, n, *args):
    """Pass 2, on the worker of the first run: every block's statistics merged in step order and finished; with each
    run's infos (:func:`_info`) and the steps before it. ``args``: the ``n`` other workers' parts (:func:`_part`),
    then this worker's runs, the runs ``mine``, whose median values are taken from their kept work key by key (no
    copy of them all is made here, nor sent to itself)."""
    import itertools

    from ..traces.whatif import finish_all_stats

    parts, runs = args[:n], args[n:]
    by_run = {u: (_stats(run), _info(run)) for u, run in zip(mine, runs)}
    for part in parts:
        by_run.update(zip(part["runs"], zip(part["stats"], part["infos"])))
    order = sorted(by_run)
    stats = [s for u in order for s in by_run[u][0]] + [{"sum": {}, "count": {}, "values": p["values"]} for p in parts]
    infos = [by_run[u][1] for u in order]
    steps = (sum(i["steps"] for i in run) for run in infos)
    return {"finished": finish_all_stats(stats, [b["model"] for run in runs for b in run], ideal), "infos": infos,
            "before": list(itertools.accumulate(steps, initial=0))}


def _stats(run):
    """The statistics of a run's blocks (not their models), for the merge."""
    return [block["stats"] for block in run]


@_batch
def _part(ideal, indices, *runs):
    """What the merge (:func:`_merge`) needs of another worker's runs (``indices``), in one task and one message:
    their blocks' statistics and infos, and their median values, taken from the kept work once the runs are read,
    so no copy of them is kept beside the work meanwhile (as ``analyze`` takes them)."""
    from ..traces.whatif import median_values

    return {"runs": list(indices), "stats": [_stats(r) for r in runs], "infos": [_info(r) for r in runs],
            "values": median_values([b["model"] for run in runs for b in run], ideal)}


@_batch
def _scores(run, program, merged, ideal, u):
    """Pass 3 of the blocks of run ``u``: their scores, each with the steps before it."""
    from ..traces.whatif import block_scores

    offset, out = merged["before"][u], []
    for block in run:
        t0 = time.perf_counter()
        m = block["model"]
        out.append({**block_scores(m, program, merged["finished"], ideal, step_offset=offset), "steps": m.steps,
                    "recorded": m.recorded_step, "dp_size": m.dp_size, "seconds": time.perf_counter() - t0})
        offset += len(m.steps)
    return out


@_batch
def _merge_scores(program, ideal, *unit_parts):
    import numpy as np

    from ..traces.whatif import merge_scores

    parts = [p for ps in unit_parts for p in ps]
    steps = np.concatenate([p["steps"] for p in parts])
    recorded = np.concatenate([p["recorded"] for p in parts])
    # the program holds the first 64 DP ranks; the trace's first block, all of them (as analyze_blocks' first model)
    return merge_scores(replace(program, dp_size=parts[0]["dp_size"]), parts, steps, recorded, ideal)


@_batch
def _mw(run, merged, fix, ideal):
    """Pass 4 of a run's blocks: their M_W step times, in step order."""
    from ..traces.whatif import block_mw

    return [block_mw(block["model"], merged["finished"], fix, ideal) for block in run]


def _analysis(scores, program, finished, ideal, infos, *t_mw):
    """The job's :class:`~straggle_edu.traces.Analysis` from the merged scores and every block's M_W times
    (and pass 1's notes): S and every S_X, as ``analyze`` gives them."""
    import numpy as np

    from ..traces.whatif import scores_analysis

    notes, skipped = [], {}
    for info in infos:
        notes += info["notes"]
        for name, count in info["skipped"]:
            skipped[name] = skipped.get(name, 0) + count
    return scores_analysis(scores, np.concatenate(t_mw), first=scores["whole"], trace0=infos[0]["trace0"],
                           finished=finished, ideal=ideal, attribution="full", notes=notes, skipped=skipped,
                           blocks=len(infos))


def _row(a, infos):
    """The job's row columns from its analysis and its blocks' infos."""
    from .figures import analysis_row

    return {**analysis_row(a), "ops": sum(i["ops"] for i in infos), "blocks": len(infos),
            "block_seconds": sum(i["seconds"] for i in infos)}


def _info(run):
    """What the row needs of a run's first pass (not its models): each block's notes, skipped ops, size, steps,
    seconds."""
    return [{"steps": len(b["model"].steps), **{k: b[k] for k in ("notes", "skipped", "ops", "trace0", "seconds")}}
            for b in run]


@_batch
def _analysis_of(scores, program, merged, ideal, whole, *t_mw):
    """The row columns (``whole``: the :func:`_analysis` itself) from the runs' infos (in ``merged``) and their M_W
    times, given as positional arguments (Dask resolves them)."""
    infos = [i for run in merged["infos"] for i in run]
    a = _analysis(scores, program, merged["finished"], ideal, infos, *[t for run in t_mw for t in run])
    return a if whole else _row(a, infos)


def submit(client, path, job_plan, key, budget, workers=2, ideal="artifact", analysis=False):
    """Submit the tasks of one job's blocks (the program's sample read in ``workers`` parts), or of its profiler
    files; return the future of its row's analysis columns, or with ``analysis=True`` of the job's whole
    :class:`~straggle_edu.traces.Analysis` (every S_X, from which the row's columns are taken)."""
    if "profiler" in job_plan:
        return _submit_profiler(client, path, job_plan, key, budget, analysis)
    meta = job_plan["meta"]

    slots = sorted(a for a, k in client.nthreads().items() for _ in range(k))

    def sub(name, fn, *args, on=None):
        where = {} if on is None or not slots else {"workers": [on], "allow_other_workers": True}
        return client.submit(fn, *args, key=_key(name, key), pure=False, **where)

    def slot(i, n):
        return slots[i * len(slots) // n] if slots else None

    groups = job_plan["sample_groups"]  # the row groups that hold the program's rows, read in n parts
    n = max(1, min(len(groups), workers))
    samples = [sub(("sample", i), _sample, path, groups[len(groups) * i // n:len(groups) * (i + 1) // n],
                   on=slot(i, n)) for i in range(n)]
    program = sub("program", _program, path, meta, budget, *samples, on=slot(0, n))
    ranges, runs, units = job_plan["ranges"], [], job_plan["units"]
    at = [slot(u, len(units)) for u in range(len(units))]
    for u, unit in enumerate(units):
        runs.append(sub(("read", u), _first_pass, path, [ranges[i] for i in unit], meta, program, ideal, budget,
                        on=at[u]))
    # one task per run of blocks and pass, the blocks' models kept on the worker that read them; the merge on the
    # worker of the first run, with that worker's runs; one task per other worker, of the runs it read (not one per
    # run and kind: 50 tasks fewer on the 16,384-rank trace, each about 1 ms of Dask's CPU)
    mine = [u for u, a in enumerate(at) if a == at[0]]
    parts = []
    for i, w in enumerate(dict.fromkeys(at)):
        if w != at[0]:
            theirs = [u for u, a in enumerate(at) if a == w]
            parts.append(sub(("part", i), _part, ideal, theirs, *[runs[u] for u in theirs], on=w))
    merged = sub("finish", _merge, ideal, mine, len(parts), *parts, *[runs[u] for u in mine], on=at[0])
    scores = [sub(("scores", u), _scores, r, program, merged, ideal, u, on=at[u]) for u, r in enumerate(runs)]
    whole = sub("merge", _merge_scores, program, ideal, *scores)
    fix = sub("fix", operator.getitem, whole, "fix")
    t_mw = [sub(("mw", u), _mw, r, merged, fix, ideal, on=at[u]) for u, r in enumerate(runs)]
    return sub("analysis" if analysis else "row", _analysis_of, whole, program, merged, ideal, analysis, *t_mw)


# A job of PyTorch profiler traces: each file is read as a task of its own (a stream of events, in parallel on
# the workers; what a rank keeps is small), then one task joins them and replays the job, as analyze does.

def _profiler_plan(folder):
    """``{"profiler": [files]}`` for a folder of several profiler traces (detection's files, in its order), else None.

    Examples
    --------
    >>> import tempfile
    >>> _profiler_plan(Path(tempfile.mkdtemp())) is None   # nothing to read apart
    True
    """
    from ..traces import TraceError
    from ..traces.detect import detect

    try:
        det = detect(folder)
    except (TraceError, ValueError, OSError):
        return None  # the one task's analyze says what is wrong
    if det.format != "torch-profiler" or len(det.files) < 2:
        return None
    return {"profiler": [str(f) for f in det.paths]}


def _read_rank(path, budget):
    """Task: one profiler file read as a stream, under the job's memory budget."""
    from .. import _validate
    from ..traces.profiler import read_profiler_rank

    old = _validate.set_memory_budget(max(_validate.memory_budget(), budget))
    try:
        return read_profiler_rank(path)
    finally:
        _validate.set_memory_budget(old)


def _profiler_analysis(path, whole, *ranks):
    """Task: the files' :class:`RankEvents` joined into the job and replayed; its row columns (or the analysis)."""
    import warnings

    from ..traces.profiler import profiler_trace_of
    from ..traces.syncpoints import analyze_profiler
    from .figures import analysis_row

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # analyze's warnings go to the terminal; a row keeps its answer
        a = analyze_profiler(profiler_trace_of(list(ranks), path))
    return a if whole else {**analysis_row(a), "ops": None, "blocks": None}


def _submit_profiler(client, path, job_plan, key, budget, analysis):
    parts = [client.submit(_read_rank, f, budget, key=_key(("rank", i), key), pure=False)
             for i, f in enumerate(job_plan["profiler"])]
    return client.submit(_profiler_analysis, str(path), analysis, *parts, key=_key("analysis", key), pure=False)
