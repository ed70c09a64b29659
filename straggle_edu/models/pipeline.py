"""The pipeline schedule: which op each stage runs, in which order.

A pipeline-parallel (PP) job splits the model into P stages. Each step pushes
M microbatches through them: a forward (``"F"``) from stage 0 to stage P - 1,
then a backward (``"B"``) from stage P - 1 back to stage 0.

Vocabulary
----------
P, ``stages``
    the number of pipeline stages (stage s = 0 .. P - 1).
M, ``microbatches``
    the number of microbatches per step (microbatch m = 0 .. M - 1).
op
    a pair ``("F" | "B", m)``: one stage's forward or backward of microbatch m.

1F1B (one forward, one backward; Narayanan et al., PipeDream-Flush, 2021,
the schedule Megatron-LM uses) keeps at most P - s microbatches in flight on
stage s:

- warm-up: ``min(P - s - 1, M)`` forwards;
- steady state: alternate one forward and one backward;
- cool-down: the remaining backwards.
"""

from __future__ import annotations

from .._validate import whole

__all__ = ["schedule_1f1b"]


def schedule_1f1b(stages, microbatches):
    """The 1F1B execution order of every pipeline stage.

    Stage s first runs ``w = min(P - s - 1, M)`` warm-up forwards, then
    alternates forward ``w + i`` and backward ``i`` for i = 0 .. M - w - 1,
    then runs the remaining ``w`` backwards (the cool-down).

    Parameters
    ----------
    stages : int
        Number of pipeline stages P, >= 1.
    microbatches : int
        Number of microbatches M per step, >= 1.

    Returns
    -------
    list of list of tuple
        ``schedule[s]`` is stage s's list of ``("F" | "B", m)`` in execution
        order; each has 2M entries.

    Examples
    --------
    >>> sched = schedule_1f1b(2, 3)
    >>> sched[0]   # one warm-up forward, then 1F1B, then one cool-down backward
    [('F', 0), ('F', 1), ('B', 0), ('F', 2), ('B', 1), ('B', 2)]
    >>> sched[1]   # the last stage has no warm-up
    [('F', 0), ('B', 0), ('F', 1), ('B', 1), ('F', 2), ('B', 2)]
    >>> schedule_1f1b(4, 2)[0]   # more stages than microbatches: warm-up is capped at M
    [('F', 0), ('F', 1), ('B', 0), ('B', 1)]
    """
    P = whole("stages", stages)
    M = whole("microbatches", microbatches)
    schedule = []
    for s in range(P):
        warmup = min(P - s - 1, M)
        ops = [("F", m) for m in range(warmup)]
        for i in range(M - warmup):
            ops.append(("F", warmup + i))
            ops.append(("B", i))
        ops.extend(("B", m) for m in range(M - warmup, M))
        schedule.append(ops)
    return schedule
