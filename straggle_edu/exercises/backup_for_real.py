"""Exercises for ``11_backup_workers_for_real.ipynb``: the k-of-n rule.

Each asks for a case the notebook's cells did not compute:

- ``q1``: a job needs N = 64 gradients a step, all equally long; backups may
  throw away at most 5% of the gradient compute. The largest b?
- ``q2``: 12 processes, 10 count, the late ones cancelled at the step's end;
  planned gradient times (ms) 31, 22, 25, 22, 90, 24, 26, 23, 22, 95, 27, 25.
  What share of the step's gradient compute is thrown away (not b/(N+b))?
- ``q3``: length-bucketed batches (``slow="data"``), N = 8 and b = 1: two of
  the nine processes get a long batch each step. What fraction of the long
  batches' gradients is applied?
- ``q4`` (design): choose b. 16 gradients a step; each process stalls with
  probability 0.1 for 4 extra base steps; the bill is every reserved
  process for the whole step, (16 + b) x E[step]. Which b in 0..8 gives
  the smallest bill?
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..instruments.sgd_plan import SGDSettings, make_plan
from ..models.sgd_schedule import discarded_share
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "backup_bill", "long_batches_applied", "Q2_TIMES"]

#: q2's planned gradient times of one step, ms (12 processes, 10 count).
Q2_TIMES = np.array([[31, 22, 25, 22, 90, 24, 26, 23, 22, 95, 27, 25]], dtype=float)


def long_batches_applied(backups, workers=8):
    """The fraction of the long batches' gradients that count, with length-bucketed batches (``slow="data"``).

    Examples
    --------
    >>> long_batches_applied(0), long_batches_applied(2)
    (1.0, 0.0)
    """
    plan = make_plan(SGDSettings(scheme="backup", workers=workers, backups=backups, slow="data"))
    long = plan.data.long[plan.idx].all(axis=2)
    return float((long & plan.counted).sum() / long.sum())


q1 = Exercise(
    "q1", expected=lambda: max(b for b in range(65) if discarded_share(np.ones((1, 64 + b)), 64) <= 0.05),
    hint="With equal times the late b work as long as the step: b/(N + b) of the compute. Which b keep it at 5% or less?",
    solution="max(b for b in range(65) if discarded_share(np.ones((1, 64 + b)), 64) <= 0.05)  "
             "# 3: 3/67 = 4.5%; a 4th backup makes it 4/68 = 5.9%",
)

q2 = Exercise(
    "q2", expected=lambda: discarded_share(Q2_TIMES, 10),
    hint="The step ends at the 10th of the 12 times. The two late processes are cancelled then, so each worked as long "
         "as the step; everyone else worked their own time.",
    solution="discarded_share(Q2_TIMES, 10)  # 0.201: the step is 31 ms, the late two did 31 ms each, 62 of 309 ms; "
             "more than b/(N+b) = 2/12, because the processes that count are faster than the step",
    rel_tol=2e-3,
    fraction=True,
)

q3 = Exercise(
    "q3", expected=lambda: long_batches_applied(1),
    hint="Each step, which processes arrive last? With one backup, how many of the two long batches can be dropped?",
    solution="long_batches_applied(1)  # 0.5: one backup drops the slower of the two long batches, the other still "
             "counts; with b = 2 both are dropped, as in the notebook",
    abs_tol=1e-9,
    fraction=True,
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
