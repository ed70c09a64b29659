"""Op-level traces in the schema of the OSDI 2025 artifact (ByteDance-Seed/StragglerAnalysis).

One row per recorded op, with the columns

==========  ========  =====================================================
column      type      meaning
==========  ========  =====================================================
dp_rank     int >= 0  data-parallel rank of the worker
stage       int >= 0  pipeline-parallel rank (stage) of the worker
rank        int >= 0  global rank (optional; one per (dp_rank, stage))
step        int >= 0  training step
optype      text      one of :data:`OPTYPES`; others are warned about and skipped
start_ts    seconds   start timestamp
duration    seconds   >= 0, including any wait for peers
seq_id      int >= 0  order of same-type ops of the worker within the step
mc, gmc     int >= 0  model chunk, local and global (optional: 0 and stage)
mb_id       int       microbatch; meaningful for compute ops only (optional
                      when every worker-step lists its forwards in microbatch order)
==========  ========  =====================================================

The parallel layout comes from ``meta-<name>.yaml`` (or ``.yml`` / ``.json``)
beside ``trace-<name>.parquet`` as in the artifact, with ``dp_size``,
``pp_size``, ``tp_size``, ``dsp_size`` (context parallel), ``vpp_size`` and
``world_size``; otherwise it is inferred from the trace. Only one rank per
tensor/context-parallel group is traced, so a 128-GPU job with TP 2 holds 64
workers (DP32 x PP2).

Reading checks everything the replay relies on and stops at the first problem
with one message naming the file, the column and the row.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import check_memory
from ..i18n import _
from ..models.job_trace import OPTYPES
from ._table import (
    TraceError,
    _Coded,
    dense_codes,
    display_path,
    float_column,
    int_column,
    missing_pyarrow,
    read_table,
    require_columns,
    str_column,
)
from ._table import column_error

__all__ = ["OPTYPES", "OpTrace", "Layout", "read_op_trace", "write_trace", "op_trace_from_columns", "ops_table",
           "public_trace_path", "public_result", "PUBLIC_TRACES", "ARTIFACT_DATA", "find_meta"]

COMPUTE = ("forward-compute", "backward-compute")
P2P = ("forward-send", "forward-recv", "backward-send", "backward-recv")

REQUIRED = ("dp_rank", "stage", "step", "optype", "start_ts", "duration", "seq_id")
OPTIONAL = ("rank", "mc", "gmc", "mb_id")
_META_KEYS = ("dp_size", "pp_size", "tp_size", "dsp_size", "vpp_size", "world_size")


@dataclass(frozen=True)
class Layout:
    """The parallel layout of a job (sizes are counts of ranks).

    Examples
    --------
    >>> layout = Layout(dp_size=4, pp_size=2, tp_size=8)
    >>> layout.workers   # one traced worker per (DP rank, stage); TP ranks share one
    8
    """

    dp_size: int
    pp_size: int
    tp_size: int = 1
    dsp_size: int = 1
    vpp_size: int = 1
    world_size: int = 0
    source: str = "inferred"

    @property
    def workers(self):
        """Traced workers: one per (DP rank, stage)."""
        return self.dp_size * self.pp_size


@dataclass(frozen=True, eq=False)
class OpTrace:
    """An op-level trace, checked and ready for the replay.

    Columns are numpy arrays of equal length, one entry per op. ``optype``
    holds integer codes into :attr:`optypes`. ``row`` is each op's row in the
    file (from 1), for messages.

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> t = synthetic_trace(dp=2, pp=2, microbatches=2, steps=1)
    >>> t, len(t), t.layout.workers
    (OpTrace(ops=60, dp=2, pp=2, steps=1, source='<memory>'), 60, 4)
    >>> t.optypes[:2]
    ('forward-compute', 'backward-compute')
    """

    source: str
    layout: Layout
    dp_rank: np.ndarray
    stage: np.ndarray
    rank: np.ndarray
    step: np.ndarray
    optype: np.ndarray
    optypes: tuple
    start_ts: np.ndarray
    duration: np.ndarray
    seq_id: np.ndarray
    mc: np.ndarray
    gmc: np.ndarray
    mb_id: np.ndarray
    row: np.ndarray
    skipped: tuple = ()

    def __len__(self):
        return len(self.step)

    @property
    def steps(self):
        """The step ids, sorted."""
        return np.unique(self.step)

    @property
    def optype_names(self):
        """The optype of every op, as text (an object array)."""
        return np.asarray(self.optypes, dtype=object)[self.optype]

    def worker_ops(self, dp_rank, stage, step=None):
        """The ops of one worker (optionally one step), sorted by start.

        Returns a dict of column arrays (optype as text).
        """
        mask = (self.dp_rank == dp_rank) & (self.stage == stage)
        if step is not None:
            mask &= self.step == step
        idx = np.flatnonzero(mask)
        idx = idx[np.lexsort((self.seq_id[idx], self.start_ts[idx], self.step[idx]))]
        return {
            "step": self.step[idx],
            "optype": self.optype_names[idx],
            "start_ts": self.start_ts[idx],
            "duration": self.duration[idx],
            "seq_id": self.seq_id[idx],
            "mb_id": self.mb_id[idx],
        }

    def columns(self):
        """The trace as ``{column: array}`` in the artifact schema (optype as text)."""
        return {
            "dp_rank": self.dp_rank,
            "stage": self.stage,
            "rank": self.rank,
            "step": self.step,
            "optype": self.optype_names,
            "start_ts": self.start_ts,
            "duration": self.duration,
            "seq_id": self.seq_id,
            "mc": self.mc,
            "gmc": self.gmc,
            "mb_id": self.mb_id,
        }

    def __repr__(self):
        L = self.layout
        return (
            f"OpTrace(ops={len(self)}, dp={L.dp_size}, pp={L.pp_size}, steps={len(self.steps)}, "
            f"source={self.source!r})"
        )


# ---------------------------------------------------------------------------
# reading


def _meta_candidates(path):
    stem = path.name
    for suffix in (".parquet", ".pq", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    names = []
    if stem.startswith("trace-"):
        names.append("meta-" + stem[len("trace-"):])
    names.append("meta-" + stem)
    names.append("meta")
    out = []
    for n in names:
        for ext in (".yaml", ".yml", ".json"):
            out.append(path.parent / (n + ext))
    return out


def _parse_flat_yaml(text, path):
    """``key: value`` lines, for when pyyaml is not installed."""
    out = {}
    for i, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        m = re.fullmatch(r"\s*([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*", line)
        if not m or line.startswith((" ", "\t")) or m.group(2).startswith(("[", "{", "|", ">", "&", "*", "!")):
            raise column_error(path, problem=f"line {i}: not a flat 'key: value' line")
        key, value = m.groups()
        value = value.strip("'\"")
        try:
            out[key] = int(value)
        except ValueError:
            out[key] = value
    return out


def read_meta(path):
    """Read a layout file (YAML or JSON) into a dict."""
    path = Path(path)
    shown = display_path(path)
    if not path.exists():
        raise FileNotFoundError(f"{shown}: no such layout file")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise column_error(shown, problem=f"not valid JSON ({exc})") from None
    else:
        try:  # the artifact's layout files are flat "key: value" lines
            data = _parse_flat_yaml(text, shown)
        except TraceError:
            try:
                import yaml
            except ImportError:
                raise column_error(shown, problem="this layout file is not flat 'key: value' YAML; reading it "
                                   "needs the optional package pyyaml (pip install pyyaml)") from None
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise column_error(shown, problem=f"not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise column_error(shown, expected="a mapping of layout sizes (dp_size: 2, pp_size: 4, ...)")
    for key in _META_KEYS:
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise column_error(shown, key, expected="a whole number >= 1", got=v)
    return data


def read_op_trace(path, *, meta=None):
    """Read an op-level trace (.parquet or .csv) and check its layout.

    Parameters
    ----------
    path : str or os.PathLike
        The trace. Never modified.
    meta : str or os.PathLike, optional
        The layout file; by default ``meta-<name>.yaml|.yml|.json`` beside the
        trace (``trace-AR.parquet`` -> ``meta-AR.yaml``), else inferred.

    Returns
    -------
    OpTrace

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> p = write_trace(synthetic_trace(2, 2, 2, 1), pathlib.Path(tempfile.mkdtemp()) / "trace-demo.csv")
    >>> t = read_op_trace(p)
    >>> t.layout.dp_size, t.layout.pp_size, t.layout.source.endswith("meta-demo.yaml")
    (2, 2, True)
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise missing_pyarrow(display_path(path)) from None
    cols, __ = read_table(path)
    meta_data, meta_source = find_meta(path, meta)
    return op_trace_from_columns(cols, source=str(path), meta=meta_data, meta_source=meta_source)


def find_meta(path, meta=None):
    """The layout of the trace at ``path``: ``(sizes, shown path)``, or ``(None, None)`` when inferred.

    ``meta`` names the layout file; by default ``meta-<name>.yaml|.yml|.json``
    is looked up beside the trace.

    Examples
    --------
    >>> sizes, shown = find_meta(public_trace_path())
    >>> sizes["dp_size"], sizes["pp_size"], shown.endswith("meta-ST.yaml")
    (2, 4, True)
    """
    if meta is not None:
        return read_meta(Path(meta)), display_path(Path(meta))
    for cand in _meta_candidates(Path(path)):
        if cand.exists():
            return read_meta(cand), display_path(cand)
    return None, None


def op_trace_from_columns(columns, *, source="<memory>", meta=None, meta_source=None):
    """Check columns in the artifact schema and build an :class:`OpTrace`.

    ``columns`` maps column names to sequences (optype as text).

    Examples
    --------
    >>> t = op_trace_from_columns({"dp_rank": [0, 1], "stage": [0, 0], "step": [0, 0],
    ...                            "optype": ["forward-compute"] * 2, "start_ts": [0.0, 0.0],
    ...                            "duration": [1.0, 2.0], "seq_id": [0, 0]})
    >>> t
    OpTrace(ops=2, dp=2, pp=1, steps=1, source='<memory>')
    """
    shown = display_path(source) if source != "<memory>" else source
    cols = {str(k).strip(): v for k, v in columns.items()}
    require_columns(shown, cols, list(REQUIRED), "op-level trace")
    n = len(cols["step"])
    if n == 0:
        raise column_error(shown, problem="the trace has no rows")
    check_memory(n * 8 * 16, f"an op-level trace of {n} ops")
    dp = int_column(shown, cols, "dp_rank")
    stage = int_column(shown, cols, "stage")
    step = int_column(shown, cols, "step")
    seq = int_column(shown, cols, "seq_id")
    start = float_column(shown, cols, "start_ts", expected="a timestamp in seconds")
    dur = float_column(shown, cols, "duration", expected="a duration in seconds >= 0", low=0.0)
    codes, labels = str_column(shown, {"optype": _coded_text(cols["optype"])}, "optype")
    rank = int_column(shown, cols, "rank") if "rank" in cols else None
    chunk = "a whole number (model chunk, -1 for none)"
    mc = int_column(shown, cols, "mc", expected=chunk, low=-1) if "mc" in cols else np.zeros(n, np.int64)
    gmc = int_column(shown, cols, "gmc", expected=chunk, low=-1) if "gmc" in cols else None
    mb = int_column(shown, cols, "mb_id", expected="a whole number (microbatch id, -1 allowed)", low=-1) if "mb_id" in cols else None

    # unknown optypes: warn with counts, skip
    known = np.array([lab in OPTYPES for lab in labels], dtype=bool)
    skipped = ()
    rows = np.arange(1, n + 1, dtype=np.int64)
    if not known[np.bincount(codes, minlength=len(labels)) > 0].all():  # unused dictionary labels do not count
        counts = np.bincount(codes, minlength=len(labels))
        unknown = [(str(labels[i]), int(counts[i])) for i in np.flatnonzero(~known) if counts[i] > 0]
        skipped = tuple(unknown)
        listed = ", ".join(f"{name!r} x{c}" for name, c in unknown)
        warnings.warn(
            f"{shown}: column 'optype': skipping {sum(c for __, c in unknown)} ops of unknown type ({listed}); "
            f"known types: {', '.join(OPTYPES)}",
            stacklevel=3,
        )
        keep = known[codes]
        if not keep.any():
            raise column_error(shown, "optype", problem="no op has a known type")
        sel = np.flatnonzero(keep)
        dp, stage, step, seq, start, dur, codes, mc, rows = (
            a[sel] for a in (dp, stage, step, seq, start, dur, codes, mc, rows)
        )
        rank = None if rank is None else rank[sel]
        gmc = None if gmc is None else gmc[sel]
        mb = None if mb is None else mb[sel]
    # re-code optypes onto the canonical list
    remap = np.array([OPTYPES.index(lab) if lab in OPTYPES else -1 for lab in labels], dtype=np.int64)
    code = remap[codes]
    optypes = OPTYPES  # codes index into the canonical tuple
    if gmc is None:
        gmc = stage.copy()

    step_codes = dense_codes(step)  # (step ids, each op's step index), for every check below
    layout = _check_layout(shown, dp, stage, rank, step_codes, code, mc, meta, meta_source, rows)
    if rank is None:
        rank = stage * layout.dp_size + dp
    if mb is None:
        mb = _infer_microbatches(dp, stage, step, code, seq)
    _check_microbatches(shown, dp, stage, step_codes, code, mb, mc, rows)
    _check_duplicates(shown, dp, stage, step, step_codes, code, seq, rows)
    return OpTrace(
        source=str(source),
        layout=layout,
        dp_rank=dp,
        stage=stage,
        rank=rank,
        step=step,
        optype=code,
        optypes=optypes,
        start_ts=start,
        duration=dur,
        seq_id=seq,
        mc=mc,
        gmc=gmc,
        mb_id=mb,
        row=rows,
        skipped=skipped,
    )


def _coded_text(col, few=64):
    """A text column as (codes, labels) at C speed when it is a plain array of strings.

    Up to ``few`` distinct labels are found one comparison sweep at a time (an
    optype column has 14); beyond that, by sorting (np.unique).
    """
    if not isinstance(col, (list, tuple, np.ndarray)):
        return col
    arr = np.asarray(col)
    if arr.dtype.kind not in "OU" or arr.ndim != 1 or not all(isinstance(x, str) for x in arr[:1]):
        return col
    codes, labels, rest = np.full(len(arr), -1, dtype=np.int64), [], np.ones(len(arr), dtype=bool)
    try:
        while rest.any():
            if len(labels) == few:
                found, inverse = np.unique(arr, return_inverse=True)
                return _Coded(inverse.astype(np.int64), found.astype(object))
            label = arr[int(rest.argmax())]
            hit = arr == label
            codes[hit] = len(labels)
            labels.append(label)
            rest &= ~hit
    except TypeError:  # mixed types: let the checker name the bad cell
        return col
    return _Coded(codes, np.asarray(labels, dtype=object))


def _is_function(a, b):
    """True when equal values of a always come with equal values of b (ints).

    Each value of a keeps one of its b's (a scatter); a -> b is a function
    exactly when every row's b is the one its a kept.
    """
    if a.min() >= 0 and a.max() < (1 << 26):
        kept = np.empty(int(a.max()) + 1, dtype=b.dtype)
        kept[a] = b
        return bool((kept[a] == b).all())
    return _first_conflict(a, b) is None


def _count_distinct(values):
    """The number of distinct values of an int array (``len(dense_codes(values)[0])``)."""
    lo, hi = int(values.min()), int(values.max())
    if lo >= 0 and hi < max(4 * values.size, 1 << 16) and hi < (1 << 26):
        return int(np.count_nonzero(np.bincount(values, minlength=hi + 1)))
    return len(np.unique(values))


def _first_conflict(a, b):
    """``(i, j)``: rows where a -> b is not a function (a[i] == a[j], b[i] != b[j]), or None."""
    order = np.argsort(a, kind="stable")
    a_s, b_s = a[order], b[order]
    first = np.r_[True, a_s[1:] != a_s[:-1]]
    ref = np.maximum.accumulate(np.where(first, np.arange(len(a_s)), 0))
    bad = b_s != b_s[ref]
    if not bad.any():
        return None
    j = int(np.flatnonzero(bad)[0])
    return int(order[j]), int(order[ref[j]])


def _check_layout(shown, dp, stage, rank, step_codes, code, mc, meta, meta_source, rows):
    # a rank belongs to one stage and one DP rank
    if rank is not None:
        worker = dp * (int(stage.max()) + 1) + stage
        one_worker = _is_function(rank, worker)
        for col, other in (("stage", stage), ("dp_rank", dp)):
            hit = None if one_worker else _first_conflict(rank, other)
            if hit is not None:
                i, j = hit
                raise column_error(shown, col, rows[i], layout=True, problem=f"rank {rank[i]} is in {col} {other[i]} "
                                   f"here but in {col} {other[j]} at row {rows[j]} (a rank has one {col})")
        n_ranks = _count_distinct(rank)
        n_workers = _count_distinct(worker)
        hit = None if n_ranks == n_workers else _first_conflict(worker, rank)
        if hit is not None:
            i, j = hit
            raise column_error(shown, "rank", rows[i], layout=True, problem=f"worker (dp_rank {dp[i]}, stage "
                               f"{stage[i]}) is rank {rank[i]} here but rank {rank[j]} at row {rows[j]}")
    dps = np.flatnonzero(np.bincount(dp))
    stages = np.flatnonzero(np.bincount(stage))
    DP, PP = int(dps.max()) + 1, int(stages.max()) + 1
    for name, have, size in (("dp_rank", dps, DP), ("stage", stages, PP)):
        if len(have) != size:
            missing = sorted(set(range(size)) - set(have.tolist()))
            raise column_error(shown, name, layout=True, problem=f"no row with {name} {missing[0]} "
                               f"(values 0..{size - 1} are expected, since {size - 1} appears)")
    # every worker in every step
    steps, si = step_codes
    S = len(steps)
    cell = (si * DP + dp) * PP + stage
    seen = np.bincount(cell, minlength=S * DP * PP).reshape(S, DP, PP) > 0
    if not seen.all():
        s, d, p = np.argwhere(~seen)[0]
        raise column_error(shown, "step", layout=True, problem=f"no row for worker (dp_rank {d}, stage {p}) "
                           f"in step {steps[s]}; every worker needs its ops in every step")
    vpp = int(mc.max()) + 1
    sizes = {"dp_size": DP, "pp_size": PP, "tp_size": 1, "dsp_size": 1, "vpp_size": vpp, "world_size": DP * PP}
    source = "inferred"
    if meta:
        source = meta_source or "meta"
        for key, have in (("dp_size", DP), ("pp_size", PP)):
            if key in meta and int(meta[key]) != have:
                raise column_error(shown, layout=True, problem=f"{meta_source or 'the layout file'} says {key} = "
                                   f"{meta[key]}, but the trace has {have} "
                                   f"({'dp_rank' if key == 'dp_size' else 'stage'} 0..{have - 1})")
        for key in _META_KEYS:
            if key in meta:
                sizes[key] = int(meta[key])
        if "world_size" not in meta:
            sizes["world_size"] = sizes["dp_size"] * sizes["pp_size"] * sizes["tp_size"] * sizes["dsp_size"]
    return Layout(**sizes, source=source)


def _infer_microbatches(dp, stage, step, code, seq):
    """Without mb_id, the k-th forward (backward) of a worker-step is microbatch k."""
    mb = np.full(len(step), -1, dtype=np.int64)
    comp = (code == 0) | (code == 1)
    mb[comp] = seq[comp]
    return mb


def _check_microbatches(shown, dp, stage, step_codes, code, mb, mc, rows):
    """Every worker-step runs the same forward and backward microbatches."""
    DP, PP, chunks = int(dp.max()) + 1, int(stage.max()) + 1, int(mc.max()) + 1
    one_chunk = chunks == 1 and int(mc.min()) == 0  # then a (microbatch, chunk) key is the microbatch
    for c in (0, 1):
        sel = np.flatnonzero(code == c)
        if sel.size == 0:
            continue
        m = mb[sel]
        if m.min() < 0:
            i = sel[int(np.flatnonzero(m < 0)[0])]
            raise column_error(shown, "mb_id", rows[i], f"a microbatch id >= 0 for a {OPTYPES[c]} op", mb[i])
        used, si = dense_codes(step_codes[1][sel])  # the steps of these ops, as dense_codes(step[sel]) gives them
        steps = step_codes[0][used]
        mbs, mi = dense_codes(m if one_chunk else m * chunks + mc[sel])
        W = len(steps) * DP * PP
        worker = (si * DP + dp[sel]) * PP + stage[sel]
        check_memory(W * len(mbs) * 8, "checking the microbatches of every worker-step")
        present = (np.bincount(worker * len(mbs) + mi, minlength=W * len(mbs)) > 0).reshape(W, len(mbs))
        if not present.all():
            w, k = np.argwhere(~present)[0]
            s, rest = divmod(int(w), DP * PP)
            d, p = divmod(rest, PP)
            where = sel[np.flatnonzero(worker == w)]
            first_row = rows[where[0]] if where.size else "?"
            missing_mb = int(mbs[k]) // chunks
            raise column_error(shown, "mb_id", layout=True, problem=f"worker (dp_rank {d}, stage {p}) in step "
                               f"{steps[s]} has no {OPTYPES[c]} for microbatch {missing_mb} (its ops start at row "
                               f"{first_row}); every worker-step must run every microbatch")


def _check_duplicates(shown, dp, stage, step, step_codes, code, seq, rows):
    """No worker has two ops of one optype with the same seq_id in a step."""
    steps, si = step_codes
    DP, PP, Q = int(dp.max()) + 1, int(stage.max()) + 1, int(seq.max()) + 1
    key = (((si.astype(np.int64, copy=False) * DP + dp) * PP + stage) * len(OPTYPES) + code) * Q + seq
    size = len(steps) * DP * PP * len(OPTYPES) * Q
    if size <= 8 * len(key):  # counting is cheaper than sorting
        if not (np.bincount(key, minlength=size) > 1).any():
            return
    else:
        sk = np.sort(key)
        if not (sk[1:] == sk[:-1]).any():
            return
    order = np.argsort(key, kind="stable")
    ks = key[order]
    j = int(np.flatnonzero(ks[1:] == ks[:-1])[0])
    a, b = order[j], order[j + 1]
    raise column_error(shown, "seq_id", rows[max(a, b)], layout=True, problem=f"worker (dp_rank {dp[a]}, "
                       f"stage {stage[a]}) has two {OPTYPES[code[a]]} ops with seq_id {seq[a]} in step {step[a]} "
                       f"(rows {rows[min(a, b)]} and {rows[max(a, b)]})")


def _columns(text):
    """The terminal columns ``text`` takes: two for a wide (CJK) character."""
    return len(text) + sum(ord(ch) >= 0x1100 for ch in text)


def ops_table(trace, dp_rank, stage, step, rows=10):
    """One worker's first ops in one step, as a text table (seconds from the step's start).

    Examples
    --------
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> print(ops_table(synthetic_trace(2, 1, 1, 1), 0, 0, 0, rows=3))
    optype                        mb    start (s)    duration (s)
    params-all-gather             -1     0.000000        0.002000
    forward-compute                0     0.002000        0.010000
    backward-compute               0     0.012000        0.020000
    """
    ops = trace.worker_ops(dp_rank, stage, step)
    if len(ops["step"]) == 0:
        raise ValueError(f"no ops for worker (dp_rank {dp_rank}, stage {stage}) in step {step}")
    t0 = trace.start_ts[trace.step == step].min()
    # the header in the reader's language: a CJK character takes two terminal columns
    optype, start, duration = _("optype"), _("start (s)"), _("duration (s)")
    lines = [optype + " " * (28 - _columns(optype)) + "  mb" + " " * (13 - _columns(start)) + start
             + " " * (16 - _columns(duration)) + duration]
    for i in range(min(rows, len(ops["step"]))):
        lines.append(f"{ops['optype'][i]:<28}{int(ops['mb_id'][i]):>4}{ops['start_ts'][i] - t0:>13.6f}"
                     f"{ops['duration'][i]:>16.6f}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# the public trace shipped with the package

PUBLIC_TRACES = ("ST",)  # the OSDI 2025 artifact's trace as CSV, readable without pyarrow
_DATA = Path(__file__).parent / "data"
#: The OSDI 2025 artifact's ``data/`` folder, unchanged (AR, SE and ST as Parquet, their layouts and the
#: artifact's results; Apache-2.0, see its README.md and LICENSE): package data, so that an installed
#: wheel has it too (the demo fleet's public jobs; the tests' real traces).
ARTIFACT_DATA = _DATA / "osdi2025"


def public_trace_path(name="ST"):
    """The path of a real production trace shipped with the package.

    ``"ST"`` is the stage-imbalance job of the OSDI 2025 study (DP 2 x PP 4,
    32 steps), from its public artifact (Apache-2.0, see ``data/README.txt``),
    as CSV so that it reads without pyarrow; ``meta-ST.yaml`` lies beside it.

    Examples
    --------
    >>> public_trace_path().name
    'trace-ST.csv'
    >>> read_op_trace(public_trace_path())
    OpTrace(ops=6784, dp=2, pp=4, steps=32, source='...trace-ST.csv')
    """
    if name not in PUBLIC_TRACES:
        raise ValueError(f"name must be one of {', '.join(PUBLIC_TRACES)}, got {name!r}")
    return _DATA / f"trace-{name}.csv"


def public_result(name="ST"):
    """The artifact's own analysis of a shipped trace (its ``result-<name>.json``, from ``wia.py``).

    Examples
    --------
    >>> round(public_result()["blocking_slowdown"], 4)
    1.1787
    """
    public_trace_path(name)
    return json.loads((_DATA / f"result-{name}.json").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# writing


def _write_meta(trace, path):
    L = trace.layout
    name = path.name
    for suffix in (".parquet", ".csv"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.startswith("trace-"):
        name = name[len("trace-"):]
    meta_path = path.parent / f"meta-{name}.yaml"
    lines = [f"trial_name: {name}", "run_id: 0"]
    for key in _META_KEYS:
        lines.append(f"{key}: {getattr(L, key)}")
    meta_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return meta_path


def write_trace(trace, path, *, meta=True):
    """Write an :class:`OpTrace` as ``.csv`` or ``.parquet`` (plus ``meta-<name>.yaml``).

    Parameters
    ----------
    trace : OpTrace
    path : str or os.PathLike
        ``trace-<name>.csv`` or ``trace-<name>.parquet``; its folder must exist.
    meta : bool
        Also write the layout file ``meta-<name>.yaml`` beside it.

    Returns
    -------
    pathlib.Path
        The trace file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from straggle_edu.traces.synthetic import synthetic_trace
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_trace(synthetic_trace(1, 1, 1, 1), folder / "trace-x.parquet").name
    'trace-x.parquet'
    >>> sorted(p.name for p in folder.iterdir())
    ['meta-x.yaml', 'trace-x.parquet']
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"path must be a file in a folder that exists, got {str(path)!r}")
    cols = trace.columns()
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise missing_pyarrow(path, "writing Parquet files") from None
        table = pa.table(
            {
                k: (pa.array(v.tolist(), type=pa.string()).dictionary_encode() if k == "optype" else pa.array(v))
                for k, v in cols.items()
            }
        )
        pq.write_table(table, path)
    elif suffix == ".csv":
        names = list(cols)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(",".join(names) + "\n")
            fmt = []
            for k in names:
                fmt.append("%s" if k == "optype" else "%.9f" if k in ("start_ts", "duration") else "%d")
            n = len(trace)
            chunk = 200_000
            for lo in range(0, n, chunk):
                hi = min(n, lo + chunk)
                parts = []
                for k, f_ in zip(names, fmt):
                    v = cols[k][lo:hi]
                    if f_ == "%s":
                        parts.append(v.astype(str))
                    elif f_ == "%d":
                        parts.append(v.astype(np.int64).astype(str))
                    else:
                        parts.append(np.char.mod("%.9f", v))
                lines = parts[0].astype(object)
                for p in parts[1:]:
                    lines = lines + "," + p.astype(object)
                f.write("\n".join(lines.tolist()) + "\n")
    else:
        raise ValueError(f"path must end in .csv or .parquet, got {str(path)!r}")
    if meta:
        _write_meta(trace, path)
    return path
