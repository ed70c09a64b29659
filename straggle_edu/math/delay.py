"""Calendar delay: what the days lost to stragglers push back.

Two framings of the same lost fraction ``f`` (see :mod:`.cost`):

- a run that **held** its GPUs for ``days`` days spent ``days * f`` of them
  waiting, and would have finished in ``days * (1 - f)`` without stragglers;
- a run **planned** at ``days`` days of work takes ``days / (1 - f)`` with
  them, so it ends ``days * f / (1 - f)`` days late.

The planned framing is the one a schedule feels: every milestone after the
run (evaluation, fine-tunes from its checkpoints, deployment, the next
experiment on the same GPUs) moves by that delay.

- :func:`stretched_days`, :func:`planned_delay`: the planned framing.
- :func:`runs_per_year`: back-to-back runs a year holds, with and without loss.
- :func:`milestones`: a run's downstream schedule, planned and shifted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_output, in_range, nonnegative, positive, require

__all__ = [
    "DOWNSTREAM",
    "Milestone",
    "stretched_days",
    "planned_delay",
    "runs_per_year",
    "milestones",
]

DAYS_PER_YEAR = 365.0

# (stage, start in days after the run ends, duration in days): an illustrative
# schedule of the work that waits for a training run.
DOWNSTREAM = (
    ("evaluation", 0.0, 2.0),
    ("fine-tunes from the final checkpoint", 2.0, 4.0),
    ("deployment", 6.0, 1.0),
    ("next experiment on the same GPUs", 0.0, 10.0),
)


def _lost(lost_fraction):
    return in_range("lost_fraction", lost_fraction, 0.0, 1.0, high_open=True)


def _planned(days, lost_fraction, late_only):
    """``days / (1 - f)``, or with ``late_only`` just the days late, ``days * f / (1 - f)``."""
    days = nonnegative("days", days)
    f = _lost(lost_fraction)
    d, lost = np.asarray(days), np.asarray(f)
    return as_output((d * lost if late_only else d) / (1.0 - lost), days, f)


def stretched_days(days, lost_fraction):
    """Days a run planned at ``days`` days of work takes when a fraction
    ``lost_fraction`` of its time is lost: ``days / (1 - lost_fraction)``.

    Parameters
    ----------
    days : float or array_like
        Planned days, >= 0.
    lost_fraction : float or array_like
        In [0, 1).

    Examples
    --------
    >>> round(stretched_days(10, 0.10), 4)
    11.1111
    >>> stretched_days(10, 0.5)
    20.0
    """
    return _planned(days, lost_fraction, late_only=False)


def planned_delay(days, lost_fraction):
    """Days a run planned at ``days`` days finishes late:
    ``days * lost_fraction / (1 - lost_fraction)``.

    Always more than ``days * lost_fraction``, the days a run that held its
    GPUs for ``days`` days spent waiting.

    Examples
    --------
    >>> round(planned_delay(10, 0.10), 4), planned_delay(10, 0.0)
    (1.1111, 0.0)
    """
    return _planned(days, lost_fraction, late_only=True)


def runs_per_year(days, lost_fraction=0.0):
    """Back-to-back runs of ``days`` planned days that fit in a 365-day year.

    Examples
    --------
    >>> runs_per_year(10), round(runs_per_year(10, 0.10), 2)
    (36.5, 32.85)
    """
    days = positive("days", days)
    return as_output(DAYS_PER_YEAR / stretched_days(days, lost_fraction), days, lost_fraction)


@dataclass(frozen=True)
class Milestone:
    """One stage after a training run, in days from the run's start.

    ``planned_start``/``planned_end`` assume no stragglers; ``start``/``end``
    are shifted by the run's :func:`planned_delay`.

    Examples
    --------
    >>> m = milestones(10, 0.10)[1]
    >>> m.stage, m.planned_start, round(m.start, 2), round(m.shift, 2)
    ('evaluation', 10.0, 11.11, 1.11)
    """

    stage: str
    planned_start: float
    planned_end: float
    start: float
    end: float

    @property
    def shift(self):
        """Days this stage moved: the run's delay."""
        return self.start - self.planned_start


def milestones(days, lost_fraction, stages=DOWNSTREAM):
    """The training run and the stages waiting for it, planned and shifted.

    Parameters
    ----------
    days : float
        The run's planned length in days, >= 0.
    lost_fraction : float
        Fraction of its time lost to stragglers, in [0, 1).
    stages : sequence of (name, start, duration)
        Each stage starts ``start`` days after the run ends and lasts
        ``duration`` days (both >= 0). Default: :data:`DOWNSTREAM`.

    Returns
    -------
    list of Milestone
        The run itself first (named ``"training run"``), then ``stages``.

    Examples
    --------
    >>> ms = milestones(10, 0.10)
    >>> [(m.stage, m.planned_end, round(m.end, 2)) for m in ms[:4]]
    [('training run', 10.0, 11.11), ('evaluation', 12.0, 13.11),
     ('fine-tunes from the final checkpoint', 16.0, 17.11), ('deployment', 17.0, 18.11)]
    """
    days = nonnegative("days", days)
    delay = planned_delay(days, lost_fraction)
    out = [Milestone("training run", 0.0, days, 0.0, days + delay)]
    for item in stages:
        require(len(item) == 3, "each stage", item, "a (name, start, duration) triple")
        name, start, duration = item
        start = nonnegative(f"start of {name!r}", start)
        duration = nonnegative(f"duration of {name!r}", duration)
        p0 = days + start
        out.append(Milestone(str(name), p0, p0 + duration, p0 + delay, p0 + duration + delay))
    return out
