"""Exercises for ``10_live_barrier_lab.ipynb``: predict what real processes do.

- ``q1``: 4 workers with 65 ms steps and no jitter, one of them 2x slow:
  the mean step time in ms, without the barrier's own overhead?
- ``q2``: in that run, how many ms does each healthy worker wait per step?
- ``q3``: the same 2x slow worker among 8 workers: the slowdown S that
  ``straggle-edu analyze`` reports?
- ``q4`` (posed in the appendix ``A4_labs_in_depth.ipynb``): 8 workers with 50 ms
  steps and 10% jitter, no slow worker: the library's predicted mean step time
  in ms (no overhead)?
- ``q5`` (a design question): 8 workers with 50 ms steps and 5% jitter,
  rank 3 at 1.5x; 2000 steps remain, and replacing rank 3 costs a 60 s
  restart. ``"replace"`` or ``"keep running"``: which finishes first?
"""

from __future__ import annotations

from ..instruments.barrier_lab import LabSettings
from ..models.barrier_lab import predict_step_time, predicted_slowdown, replaced_step_time
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5"]

_SLOW = dict(workers=4, step_seconds=0.065, jitter=0.0, slow_rank=1, slow_factor=2.0)

q1 = Exercise(
    "q1", expected=lambda: 1e3 * predict_step_time(LabSettings(**_SLOW).step_times()),
    hint="Every step ends when the last worker reaches the barrier. Who is last, and how long does it work?",
    solution="1e3 * predict_step_time(LabSettings(workers=4, step_seconds=0.065, jitter=0.0, slow_rank=1, "
             "slow_factor=2).step_times())  # 130 ms",
    rel_tol=1e-3,
)

q2 = Exercise(
    "q2", expected=lambda: 1e3 * (predict_step_time(LabSettings(**_SLOW).step_times()) - LabSettings(**_SLOW).step_time(0).mean()),
    hint="A healthy worker is done after its own 65 ms, then waits at the barrier until the step ends.",
    solution="130 - 65  # ms: the step (q1) minus a healthy worker's own work",
    rel_tol=1e-3,
)

q3 = Exercise(
    "q3", expected=lambda: predicted_slowdown(LabSettings(**{**_SLOW, "workers": 8}).step_times()),
    hint="The ideal step gives every worker the per-step mean work: (130 + 7 x 65) / 8 ms. "
         "S is the real step over the ideal one.",
    solution="predicted_slowdown(LabSettings(workers=8, step_seconds=0.065, jitter=0.0, slow_rank=1, "
             "slow_factor=2).step_times())  # 130 / 73.125 = 16/9 = 1.78",
    rel_tol=1e-3,
)

q4 = Exercise(
    "q4", expected=lambda: 1e3 * predict_step_time(LabSettings(workers=8, step_seconds=0.05, jitter=0.1).step_times()),
    hint="The step is E[max] of 8 draws of 50 ms x (1 + 0.1 Z). predict_step_time(LabSettings(...).step_times()) computes it.",
    solution="1e3 * predict_step_time(LabSettings(workers=8, step_seconds=0.05, jitter=0.1).step_times())"
             "  # about 57.1 ms: 50 + 5 x 1.424, E[max of 8 standard normals]",
    rel_tol=2e-3,
)

_NODE = dict(workers=8, step_seconds=0.05, jitter=0.05, slow_rank=3, slow_factor=1.5)
_STEPS_LEFT, _RESTART_S = 2000, 60.0


def _replace_or_keep():
    models = LabSettings(**_NODE).step_times()
    keep = _STEPS_LEFT * predict_step_time(models)
    replace = _RESTART_S + _STEPS_LEFT * replaced_step_time(models)
    return "replace" if replace < keep else "keep running"


q5 = Exercise(
    "q5", expected=_replace_or_keep,
    hint="Compare two finishing times: keep = steps x the step with rank 3; replace = the restart + steps x the "
         "step of 8 healthy workers. replaced_step_time(models) gives the second step.",
    solution="models = LabSettings(workers=8, step_seconds=0.05, jitter=0.05, slow_rank=3, slow_factor=1.5)"
             ".step_times(); keep = 2000 * predict_step_time(models)  # 150 s; "
             "replace = 60 + 2000 * replaced_step_time(models)  # 167 s: keep it. Replacing pays off only "
             "after 60 / (0.0750 - 0.0536) = about 2,800 steps",
)
