"""Straggler-detector logs: Megatron-LM ``--log-straggler`` and nvidia-resiliency-ext reports.

Both print summaries, not step times, so both yield a
:class:`~straggle_edu.traces.suspects.SuspectAnalysis` (format
``"straggler-log"``).

**Megatron-LM** (``megatron/core/README_STRAGGLER.md``): with
``--log-straggler`` rank 0 logs, every log interval, the minimum and maximum
of each metric and the rank where it was seen::

    [2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | ... | MnEtpt/Rnk: 296.02TF/0 | ...

``Rtt`` is the time in the traced ops per iteration. The barrier waits for
the slowest rank, and the ideal step is the mean rank's, which is at least
the fastest one's, so ``MxRtt / MnRtt`` is an upper bound on the interval's
slowdown S. An interval with that bound >= 1.10 (the OSDI 2025 study's line
for a straggling job) names its ``MxRtt`` rank as a suspect; below it, the
job did not straggle then, whoever was slowest.

**nvidia-resiliency-ext** (its straggler detector, as the NeMo / Megatron
Bridge callbacks print it)::

    GPU relative performance:
     Worst performing 5/512 ranks:
      Rank=76 Node=h100-001-253-012 Score=0.94
     ...
     Best performing 5/512 ranks:
      Rank=432 Node=h100-004-141-026 Score=0.99

A score is the rank's speed over a reference (1.0 = as fast): the fastest
rank (relative) or the rank's own best (individual); 0.5 = twice as slow.
A score below the callbacks' default threshold 0.7 makes a suspect, and so
does every rank named in a ``STRAGGLER DETECTION WARNING`` line.

Text only: the file is parsed with regular expressions, never evaluated.
"""

from __future__ import annotations

import re

from ._safe import iter_lines
from ._table import column_error, display_path
from ..i18n import N_
from .result import Note
from .suspects import suspect_analysis

__all__ = ["read_straggler_log", "REPORT_LINE", "STRAGGLING_SPREAD", "SCORE_THRESHOLD"]

#: The MxRtt / MnRtt bound from which an interval counts as straggling.
STRAGGLING_SPREAD = 1.10
#: nvidia-resiliency-ext's default gpu_relative/individual_perf_threshold.
SCORE_THRESHOLD = 0.7

_WHAT = "a Megatron-LM --log-straggler log or an nvidia-resiliency-ext straggler report"
_METRIC = re.compile(r"\b(Mn|Mx)(\w+)/Rnk:\s*([-+0-9.eE]+|nan|inf)\s*([A-Za-z%]*)/(\d+)")
_BOTTOM = re.compile(r"(Bottom|Top)\s+\d+\s+Ranks with (?:lowest|highest)\s+Etpt\(TF\):\s*(.*)")
_PAIR = re.compile(r"([-+0-9.eE]+)/(\d+)")
_HEADER = re.compile(r"GPU (relative|individual) performance:")
_SCORE = re.compile(r"Rank=(\d+)\s+Node=(\S+)\s+Score=([-+0-9.eE]+|nan)")
_GROUP = re.compile(r"(Worst|Best) performing (\d+)/(\d+) ranks:")
_WARN = re.compile(r"STRAGGLER DETECTION WARNING: Some GPUs (have worse relative performance|performance dropped)")
_WARN_RANK = re.compile(r"StragglerId\(rank=(\d+)")
#: A line of a straggler-detector report, whatever comes before it on the line (a date stamp, ``[default0]:``).
REPORT_LINE = re.compile("|".join(f"(?:{r.pattern})" for r in (_METRIC, _HEADER, _WARN)))


def _megatron(shown, lines):
    intervals, lists = [], []
    for lineno, line in lines:
        found = _METRIC.findall(line)
        if found:
            row = {}
            for mn, metric, value, unit, rank in found:
                try:
                    row[(mn, metric)] = (float(value), int(rank), unit)
                except ValueError:
                    raise column_error(shown, f"{mn}{metric}/Rnk", lineno, "a number/rank pair",
                                       f"{value}{unit}/{rank}") from None
            if ("Mn", "Rtt") in row and ("Mx", "Rtt") in row:
                intervals.append((lineno, row))
        m = _BOTTOM.search(line)
        if m:
            pairs = [(float(v), int(r)) for v, r in _PAIR.findall(m.group(2))]
            lists.append({"line": lineno, "which": "lowest" if m.group(1) == "Bottom" else "highest",
                          "etpt_tf_rank": pairs})
    return intervals, lists


def _megatron_evidence(shown, intervals):
    rows, counts = [], {}
    for lineno, row in intervals:
        lo, lo_rank, unit = row[("Mn", "Rtt")]
        hi, hi_rank, _ = row[("Mx", "Rtt")]
        if not lo > 0:
            raise column_error(shown, "MnRtt/Rnk", lineno, "a round-trip time > 0", lo)
        bound = hi / lo
        rows.append({"line": lineno, "min_rtt": lo, "min_rank": lo_rank, "max_rtt": hi, "max_rank": hi_rank,
                     "unit": unit, "s_upper_bound": bound})
        if bound >= STRAGGLING_SPREAD:
            counts[hi_rank] = counts.get(hi_rank, 0) + 1
    return rows, counts


def _nvrx(shown, lines):
    reports, kind, group, warned = [], None, None, set()
    for lineno, line in lines:
        h = _HEADER.search(line)
        if h:
            kind, group = h.group(1), "all"
            reports.append({"line": lineno, "kind": kind, "ranks": None, "scores": []})
            continue
        g = _GROUP.search(line)
        if g and reports:
            group = g.group(1).lower()
            reports[-1]["ranks"] = int(g.group(3))
            continue
        s = _SCORE.search(line)
        if s and reports:
            score = float(s.group(3))
            if not score == score:  # nan
                raise column_error(shown, "Score", lineno, "a score in [0, 1]", s.group(3))
            reports[-1]["scores"].append({"rank": int(s.group(1)), "node": s.group(2), "score": score,
                                          "group": group})
        if _WARN.search(line):
            warned.update(int(r) for r in _WARN_RANK.findall(line))
    return reports, warned


def read_straggler_log(path):
    """Suspects from a Megatron-LM straggler log or nvidia-resiliency-ext reports.

    Parameters
    ----------
    path : str or os.PathLike
        A training log (text, optionally gzipped), read as a stream: only
        the report lines are kept, so a log of any size fits in memory;
        other lines are ignored.

    Returns
    -------
    SuspectAnalysis
        ``format="straggler-log"``. ``evidence["megatron"]``: per interval
        ``min_rtt``/``min_rank``/``max_rtt``/``max_rank`` and
        ``s_upper_bound`` = MxRtt / MnRtt, plus the Etpt rank lists;
        ``evidence["nvrx"]``: every report's scores. ``suspects``: MxRtt ranks
        of intervals with a bound >= 1.10, ranks scored below 0.7, and ranks
        named in warnings, most often named first.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "train.log"
    >>> _ = p.write_text("[x] | MnRtt/Rnk: 100.0ms/3 | MxRtt/Rnk: 150.0ms/5\\n")
    >>> a = read_straggler_log(p)
    >>> a.suspects, round(a.evidence["megatron"]["intervals"][0]["s_upper_bound"], 2)
    ((5,), 1.5)
    """
    shown = display_path(path)
    lines = [(i, line) for i, line in iter_lines(path, _WHAT) if "/Rnk:" in line or "erform" in line
             or "Rank=" in line or "Etpt(TF)" in line or "STRAGGLER" in line]
    intervals, lists = _megatron(shown, lines)
    reports, warned = _nvrx(shown, lines)
    if not intervals and not any(r["scores"] for r in reports) and not warned:
        raise column_error(shown, problem=f"no straggler-detector lines (expected {_WHAT}: 'MnRtt/Rnk: ...' or "
                           "'GPU relative performance:' reports)")
    rows, counts = _megatron_evidence(shown, intervals)
    for r in reports:
        for s in r["scores"]:
            if s["score"] < SCORE_THRESHOLD:
                counts[s["rank"]] = counts.get(s["rank"], 0) + 1
    for rank in warned:
        counts[rank] = counts.get(rank, 0) + 1
    suspects = sorted(counts, key=lambda r: (-counts[r], r))
    evidence = {
        "megatron": {"intervals": rows, "etpt_lists": lists, "straggling_spread": STRAGGLING_SPREAD},
        "nvrx": {"reports": reports, "warned_ranks": sorted(warned), "score_threshold": SCORE_THRESHOLD},
    }
    notes = [Note(N_("a straggler log summarises each interval (min/max or best/worst ranks), not every rank's step "
                     "times, so it names suspects but gives no slowdown"))]
    return suspect_analysis("straggler-log", path, suspects=suspects, evidence=evidence, notes=notes)
