"""The result of a format that names suspects but holds no step times.

A Flight Recorder dump, a straggler-detector log or an NCCL Inspector log
says *which* ranks the others wait on, not how long every rank computed in
every step, so no what-if slowdown can be computed from it. Its readers
return a :class:`SuspectAnalysis`: an :class:`~straggle_edu.traces.Analysis`
whose ``slowdown`` and ``waste`` are NaN (``null`` in JSON), with two more
fields:

``suspects``
    the ranks (or ``"comm:rank"`` ids) that the evidence points at, most
    suspicious first; empty when the evidence shows no straggler.
``evidence``
    a JSON-ready dict: what each suspect was caught doing, in the format's
    own terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .result import Analysis

__all__ = ["SuspectAnalysis", "suspect_analysis", "SUSPECT_SHARE", "WAIT_SHARE"]

# The rule of the formats that time collectives on every rank (NCCL Inspector's JSON lines and
# Prometheus files): the last to arrive causes the others' waits.
#: A suspect causes at least this share of all the waiting.
SUSPECT_SHARE = 0.2
#: Waiting below this share of all the execution time names no suspect.
WAIT_SHARE = 0.05


@dataclass(frozen=True, eq=False)
class SuspectAnalysis(Analysis):
    """An :class:`Analysis` of a format without step times: suspects and evidence.

    Attributes
    ----------
    suspects : tuple
        Rank ids (int) or ``"comm:rank"`` strings, most suspicious first.
    evidence : dict
        JSON-ready details, see each reader.
    """

    suspects: tuple = ()
    evidence: object = None

    def to_dict(self):
        """The JSON object of ``straggle-edu analyze --json``: ``format``, ``suspects``, ``evidence``, ...

        Examples
        --------
        >>> a = suspect_analysis("flight-recorder", "dumps/", suspects=[3], evidence={"groups": []})
        >>> d = a.to_dict()
        >>> d["format"], d["suspects"], d["slowdown"]
        ('flight-recorder', [3], None)
        """
        out = super().to_dict()
        out["suspects"] = list(self.suspects)
        out["evidence"] = self.evidence if self.evidence is not None else {}
        return out

    def __repr__(self):
        return f"SuspectAnalysis(format={self.format!r}, suspects={list(self.suspects)!r}, source={self.source!r})"


def suspect_analysis(format, source, *, suspects, evidence, workers=(), by_rank=None, notes=()):
    """Build a :class:`SuspectAnalysis` (slowdown and waste NaN: the format holds no step times).

    Examples
    --------
    >>> suspect_analysis("nccl-inspector", "x.log", suspects=[1], evidence={})
    SuspectAnalysis(format='nccl-inspector', suspects=[1], source='x.log')
    """
    empty = np.zeros(0)
    return SuspectAnalysis(
        format=format,
        source=str(source),
        slowdown=math.nan,
        waste=math.nan,
        per_step={},
        replay_error=math.nan,
        steps=np.zeros(0, np.int64),
        step_time=empty,
        ideal_step_time=empty,
        recorded_step_time=empty,
        workers=tuple(workers),
        worker_step_slowdown=np.zeros((len(workers), 0)),
        by_rank=by_rank,
        notes=tuple(notes),
        suspects=tuple(suspects),
        evidence=evidence,
    )
