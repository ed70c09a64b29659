"""Exercises for ``11_backup_workers_for_real.ipynb``: the k-of-n rule.

- ``q1``: 100 GPUs, wait for the fastest 94, equal gradient times: what
  fraction of the gradient compute is thrown away?
- ``q2``: 10 processes, 8 counted; the planned gradient times (ms) are
  20, 21, 19, 80, 22, 20, 18, 80, 21, 23. How long is the backup step (ms)?
- ``q3``: length-bucketed batches: 10 processes, 8 counted, the 2 long
  batches each take 4x a short one. What fraction of the long batches'
  gradients is applied?
- ``q4`` (design): choose b. 16 gradients a step; each process stalls with
  probability 0.1 for 4 extra base steps; the bill is every reserved
  process for the whole step, (16 + b) x E[step]. Which b in 0..8 gives
  the smallest bill?
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..models.sgd_schedule import counted_mask, discarded_share, step_times
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "backup_bill"]

_Q2 = np.array([[20, 21, 19, 80, 22, 20, 18, 80, 21, 23]], dtype=float)
_Q3 = np.array([[1, 1, 4, 1, 1, 1, 1, 4, 1, 1]], dtype=float)

q1 = Exercise(
    "q1", expected=lambda: discarded_share(np.ones((1, 100)), 94),
    hint="Each of the 6 late GPUs works until the step ends, as long as the others.",
    solution="discarded_share(np.ones((1, 100)), 94)  # 6/100 = 0.06",
    rel_tol=1e-6,
)

q2 = Exercise(
    "q2", expected=lambda: float(step_times(_Q2, 8)[0]),
    hint="Sort the ten times; the step ends at the 8th.",
    solution="step_times(np.array([[20, 21, 19, 80, 22, 20, 18, 80, 21, 23]]), 8)  # 22 ms, not 80",
    rel_tol=1e-6,
)

q3 = Exercise(
    "q3", expected=lambda: float(counted_mask(_Q3, 8)[_Q3 == 4].mean()),
    hint="Which two processes arrive last every step?",
    solution="counted_mask(times, 8)[times == 4].mean()  # 0: the long batches are exactly the dropped ones",
    abs_tol=1e-9,
)


def backup_bill(workers, backups, p=0.1, stall=4.0):
    """Worker-steps reserved per step with ``backups`` spares: (N + b) x E[step].

    A step takes 1 base step unless more than ``backups`` of the N + b
    processes stall (each with probability ``p``, independently, for
    ``stall`` extra base steps); then it takes 1 + stall.

    Examples
    --------
    >>> round(backup_bill(16, 0), 2), round(backup_bill(16, 5), 2)
    (68.14, 22.21)
    """
    n = workers + backups
    return n * (1.0 + stall * float(stats.binom(n, p).sf(backups)))


q4 = Exercise(
    "q4", expected=lambda: min(range(9), key=lambda b: backup_bill(16, b)),
    hint="A step is slow only when more than b of the 16 + b processes stall: 1 + 4 P(Binomial(16 + b, 0.1) > b). "
         "Multiply by 16 + b, and try each b.",
    solution="min(range(9), key=lambda b: backup_bill(16, b))  # 5: 22.2 worker-steps, against 68.1 with none",
)
