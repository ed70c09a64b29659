"""Exercises for ``12_detector_thresholds.ipynb``: false alarms of a relative-score detector.

Timing model throughout: lognormal timings (``se.math.lognormal_timing(cv)``),
one report every 300 s unless the question says otherwise. Each asks for a
case the notebook's cells did not compute, and none is the notebook's call
with one argument changed:

- ``q1``: 1,024 ranks, 30 timings per report, the default threshold 0.75: how
  low must the timing CV be for at most one false alarm a day (an inverse
  question: the CV, not the alarms)?
- ``q2``: at a threshold that gives one false alarm a day on average, the
  probability that a whole day (288 reports) passes without one, to 3
  significant figures (0.367, near e^-1 = 0.368: the question states the
  digits it wants)?
- ``q3``: pick the threshold for your job: 1,024 ranks, a 5 s step, a report
  every 300 s, ``profiling_interval=3`` (every third step timed), CV 0.15,
  at most one false alarm a week (the window and the rate are the reader's
  to derive: 20 timings, 1/7 a day).
"""

from __future__ import annotations

import functools

from ..math.detector import alarms_per_day, lognormal_timing, p_false_alarm, threshold_for_alarms
from . import Exercise

__all__ = ["q1", "q2", "q3", "cv_for_one_alarm_a_day"]


@functools.lru_cache(maxsize=None)
def cv_for_one_alarm_a_day(n=1024, threshold=0.75, window=30, interval=300):
    """The timing CV at which ``n`` healthy ranks raise one false alarm a day, on average.

    False alarms rise with the CV, so the root is the largest CV with at most one a day.

    Examples
    --------
    >>> round(cv_for_one_alarm_a_day(), 3)
    0.156
    """
    from scipy.optimize import brentq

    def excess(cv):
        return alarms_per_day(p_false_alarm(n, threshold, window, lognormal_timing(cv)), interval) - 1.0

    return float(brentq(excess, 0.01, 0.5, xtol=1e-7))


q1 = Exercise(
    "q1", expected=lambda: cv_for_one_alarm_a_day(1024, 0.75, 30, 300),
    hint="False alarms a day, 288 * se.math.p_false_alarm(n, threshold, window, se.math.lognormal_timing(cv)), "
         "rise with the CV. Try a few CVs below 0.2, or let scipy.optimize.brentq find where they equal 1.",
    solution="brentq(lambda cv: 288 * se.math.p_false_alarm(1024, 0.75, 30, se.math.lognormal_timing(cv)) - 1, 0.01, 0.5)"
             "  # about 0.156: timing noise of at most 15.6%; at 20% the same job sees about 162 a day",
    fraction=True,
)

q2 = Exercise(
    "q2", expected=lambda: (1 - 1 / 288) ** 288,
    hint="One expected alarm a day over 288 independent reports means p = 1/288 per report. "
         "A quiet day needs all 288 reports clean.",
    solution="(1 - 1/288) ** 288  # 0.367: close to exp(-1) = 0.368; most days still see an alarm",
    abs_tol=8e-4,  # e^-1 = 0.368 and 0.367 both; 0.37, two figures, is not enough
    fraction=True,
)

q3 = Exercise(
    "q3", expected=lambda: threshold_for_alarms(1024, 20, lognormal_timing(0.15), 300, per_day=1 / 7),
    hint="First the window: 300 s of 5 s steps, of which every third one is timed. Then the rate: one a week is 1/7 a "
         "day. se.math.threshold_for_alarms(n, window, dist, interval, per_day) does the rest.",
    solution="se.math.threshold_for_alarms(1024, 20, se.math.lognormal_timing(0.15), 300, per_day=1/7)  "
             "# about 0.698: 20 timings per report; timing every step (60) would allow 0.812",
    abs_tol=0.002,
    fraction=True,
)
