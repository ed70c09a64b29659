"""The result of a what-if analysis: one frozen :class:`Analysis`.

Every format ends here, so the CLI, the charts and the notebook read one
shape. Dictionaries map an id to a slowdown S_X (a ratio >= about 1):

``by_rank``
    per-rank formats: rank (int) -> S when only that rank keeps its time.
``by_optype``, ``by_dp_rank``, ``by_stage``
    op-level traces: optype (str), DP rank (int), stage (int) -> S_X.
``by_worker``
    op-level traces: ``(dp_rank, stage)`` -> min(S_dp, S_stage).

A PyTorch profiler trace's analysis has ``by_rank`` and ``by_optype`` (the
kinds of op: ``compute`` and each collective kind), M_W, and in
``details`` (and its JSON) the ranks present against the world size, the
noise floor, each collective's arrivals, waits and transfer, and the wait
each rank caused.

:meth:`Analysis.to_json` turns ids into strings (``"0:3"`` for a worker) and
keeps exactly the keys that apply to the format.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..i18n import _

__all__ = ["Analysis", "Note"]

_ATTRIBUTIONS = ("by_rank", "by_optype", "by_dp_rank", "by_stage", "by_worker")


class Note(str):
    """A note of an analysis: its English text (what ``--json`` writes), which keeps its template.

    The readers mark the template with ``N_()``; the readable report shows
    :meth:`translated`, the template translated and then filled, so that a
    Chinese report reads Chinese while the JSON stays English.

    Examples
    --------
    >>> note = Note("{count} collective or send/recv ops end early", count=8)
    >>> note, note.translated()
    ('8 collective or send/recv ops end early', '8 collective or send/recv ops end early')
    """

    def __new__(cls, template, **values):
        self = super().__new__(cls, template.format(**values))
        self.template, self.values = template, values
        return self

    def __reduce__(self):
        return (_note, (self.template, self.values))

    def translated(self):
        """The note in the current language."""
        return _(self.template).format(**self.values)


def _note(template, values):
    return Note(template, **values)


def _key(k):
    if isinstance(k, tuple):
        return ":".join(str(int(x)) for x in k)
    if isinstance(k, (np.integer,)):
        return str(int(k))
    return str(k)


def _num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _frozen(d):
    if d is None:
        return None
    return MappingProxyType(dict(d))


@dataclass(frozen=True, eq=False)
class Analysis:
    """What-if analysis of one trace.

    Attributes
    ----------
    format : str
        ``"op-level"``, ``"per-rank"`` or ``"torch-profiler"``.
    source : str
        The file or folder the trace came from (or ``"<memory>"``).
    slowdown : float
        S = mean replayed step time with the recorded durations / mean replayed
        step time with the ideal durations.
    waste : float
        1 - 1/S: the fraction of the job's time (and GPU-hours) lost to stragglers.
    per_step : mapping
        step (int) -> S of that step.
    replay_error : float
        Mean relative error of the recorded-duration replay against the
        recorded step times (a fraction; idle gaps the replay drops).
    by_rank, by_optype, by_dp_rank, by_stage, by_worker : mapping or None
        Attribution S_X, see the module docstring; None where it does not apply.
    m_w, m_s : float or None
        Op-level only: the share of the slowdown removed by fixing the few
        slowest workers (M_W) or the last stage (M_S). Ratios, can exceed 1;
        None when there is no slowdown to share.
    steps : numpy.ndarray
        The step ids, in order.
    step_time, ideal_step_time, recorded_step_time : numpy.ndarray
        Per step, in seconds: replay with recorded durations, replay with ideal
        durations, and the recorded step time.
    workers : tuple
        Worker ids for :attr:`worker_step_slowdown`: ranks (per-rank formats)
        or ``(dp_rank, stage)`` pairs (op-level).
    worker_step_slowdown : numpy.ndarray
        Shape (workers, steps): each worker's attributed slowdown per step.
    notes : tuple of str
        What the analysis left out or had to assume.

    Examples
    --------
    >>> from straggle_edu.traces import analyze, rank_trace_from_times
    >>> a = analyze(rank_trace_from_times([[1.0, 2.0], [1.0, 1.0]]))
    >>> a   # replayed 1.5 s per step against 1.25 s with every rank at the mean
    Analysis(format='per-rank', slowdown=1.2, waste=0.167, steps=2, replay_error=0)
    >>> dict(a.by_rank), dict(a.per_step)
    ({0: 1.0, 1: 1.2}, {0: 1.3333333333333333, 1: 1.0})
    """

    format: str
    source: str
    slowdown: float
    waste: float
    per_step: object
    replay_error: float
    steps: np.ndarray
    step_time: np.ndarray
    ideal_step_time: np.ndarray
    recorded_step_time: np.ndarray
    workers: tuple = ()
    worker_step_slowdown: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    by_rank: object = None
    by_optype: object = None
    by_dp_rank: object = None
    by_stage: object = None
    by_worker: object = None
    m_w: float | None = None
    m_s: float | None = None
    notes: tuple = ()
    details: object = None

    def __post_init__(self):
        for name in ("per_step", *_ATTRIBUTIONS):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        for name in ("steps", "step_time", "ideal_step_time", "recorded_step_time", "worker_step_slowdown"):
            arr = np.array(getattr(self, name))
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "notes", tuple(self.notes))

    def culprit(self, by=None):
        """The id with the largest S_X in attribution ``by`` (default: workers or ranks).

        Examples
        --------
        >>> from straggle_edu.traces import analyze_rank_times
        >>> analyze_rank_times([[1.0, 2.0, 1.0, 1.0]]).culprit()
        1
        """
        if by is None:
            by = "by_rank" if self.by_rank is not None else "by_worker" if self.by_worker is not None else "by_stage"
        if not by.startswith("by_"):
            by = "by_" + by
        if by not in _ATTRIBUTIONS:
            raise ValueError(f"by must be one of {', '.join(_ATTRIBUTIONS)}, got {by!r}")
        table = getattr(self, by)
        if not table:
            raise ValueError(f"this analysis has no {by} attribution ({self.format} trace)")
        return max(table, key=lambda k: (table[k], -_order(k)))

    def ranking(self, by, top=None):
        """``[(id, S_X), ...]`` sorted from the largest S_X down."""
        table = getattr(self, by if by.startswith("by_") else "by_" + by)
        if table is None:
            raise ValueError(f"this analysis has no {by} attribution ({self.format} trace)")
        items = sorted(table.items(), key=lambda kv: (-kv[1], _order(kv[0])))
        return items if top is None else items[:top]

    def to_dict(self):
        """The JSON object of ``straggle-edu analyze --json``, as a dict."""
        out = {
            "format": self.format,
            "slowdown": _num(self.slowdown),
            "waste": _num(self.waste),
            "per_step": {_key(k): _num(v) for k, v in self.per_step.items()},
        }
        for name in _ATTRIBUTIONS:
            table = getattr(self, name)
            if table is not None:
                out[name] = {_key(k): _num(v) for k, v in table.items()}
        if self.format == "op-level":
            out["m_w"] = _num(self.m_w)
            out["m_s"] = _num(self.m_s)
        out["replay_error"] = _num(self.replay_error)
        if self.format == "torch-profiler":
            out.update(_profiler_fields(self))
        elif self.format == "per-rank" and self.details:
            out["noise_floor"] = _num(self.details.get("noise_floor"))
        return out

    def to_json(self, **kwargs):
        """:meth:`to_dict` as a JSON string (keyword arguments go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)

    def __repr__(self):
        return (
            f"Analysis(format={self.format!r}, slowdown={self.slowdown:.4g}, waste={self.waste:.3g}, "
            f"steps={len(self.steps)}, replay_error={self.replay_error:.3g})"
        )


def _profiler_fields(a):
    """The JSON fields of a profiler trace's analysis beyond the common ones (seconds; ranks as strings).

    ``collectives`` is columnar, one entry per collective, so that a long trace's JSON stays compact.
    """
    d = a.details or {}
    c = d.get("collectives")
    columns = None if not c else {
        "ranks": [int(r) for r in c["ranks"]], "step": c["step"].tolist(), "kind": list(c["kind"]),
        "group": list(c["group"]), "last_rank": c["last_rank"].tolist(),
        "transfer_s": [_num(x) for x in c["transfer_s"]], "blocked": c["blocked"].tolist(),
        "arrival_s": [[_num(x) for x in row] for row in c["arrival_s"]],
        "wait_s": [[_num(x) for x in row] for row in c["wait_s"]],
        "counted_s": [[_num(x) for x in row] for row in c["counted_s"]]}
    return {"m_w": _num(a.m_w), "ranks_present": list(d.get("ranks_present", [])), "world_size": d.get("world_size"),
            "groups": list(d.get("groups", [])), "noise_floor": _num(d.get("noise_floor")), "clock": d.get("clock"),
            "clock_offsets_s": {_key(r): _num(v) for r, v in d.get("clock_offsets", {}).items()},
            "caused_wait_s": {_key(r): _num(v) for r, v in d.get("caused_wait", {}).items()},
            "step_spans_s": {_key(r): _num(v) for r, v in d.get("step_spans", {}).items()},
            "collectives": columns}


def _order(k):
    if isinstance(k, tuple):
        return k[0] * 1_000_003 + k[1]
    try:
        return int(k)
    except (TypeError, ValueError):
        return 0
