"""Exercises for ``12_detector_thresholds.ipynb``: false alarms of a relative-score detector.

Timing model throughout: lognormal timings (``se.math.lognormal_timing(cv)``),
one report every 300 s unless the question says otherwise.

- ``q1``: 1,024 ranks, 30 timings per report, CV 0.2, threshold 0.75:
  expected false alarms a day?
- ``q2``: at a threshold that gives one false alarm a day on average, the
  probability that a whole day (288 reports) passes without one?
- ``q3``: pick the threshold for your job: 1,024 ranks, a 6 s step timed once
  per step (50 timings a report), CV 0.15, at most one false alarm a week.
"""

from __future__ import annotations

from ..math.detector import alarms_per_day, lognormal_timing, p_false_alarm, threshold_for_alarms
from . import Exercise

__all__ = ["q1", "q2", "q3"]

q1 = Exercise(
    "q1", expected=lambda: alarms_per_day(p_false_alarm(1024, 0.75, 30, lognormal_timing(0.2)), 300),
    hint="A day has 86,400 / 300 = 288 reports; each raises a false alarm with probability "
         "se.math.p_false_alarm(n, threshold, window, dist).",
    solution="288 * se.math.p_false_alarm(1024, 0.75, 30, se.math.lognormal_timing(0.2))  # about 162 a day",
    rel_tol=0.005,
)

q2 = Exercise(
    "q2", expected=lambda: (1 - 1 / 288) ** 288,
    hint="One expected alarm a day over 288 independent reports means p = 1/288 per report. "
         "A quiet day needs all 288 reports clean.",
    solution="(1 - 1/288) ** 288  # about 0.367: close to exp(-1); most days still see an alarm",
    abs_tol=5e-4,
)

q3 = Exercise(
    "q3", expected=lambda: threshold_for_alarms(1024, 50, lognormal_timing(0.15), 300, per_day=1 / 7),
    hint="One a week is 1/7 a day. Find the threshold where 288 * P(false alarm per report) = 1/7: "
         "se.math.threshold_for_alarms(n, window, dist, interval, per_day).",
    solution="se.math.threshold_for_alarms(1024, 50, se.math.lognormal_timing(0.15), 300, per_day=1/7)  # about 0.796",
    abs_tol=0.002,
)
