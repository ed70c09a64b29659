"""Exercises for the mitigation notebooks: 07 (balance), 07b (backups, hedging), 07c (relaxed sync).

- ``07_mitigations.ipynb``: ``q1``, the makespan greedy LPT gets for seven
  sequences on three workers; ``q5`` (design), pick the stage split with the
  shortest 1F1B step.
- ``07b_backup_workers_and_hedging.ipynb``: ``q2``, the best number of
  backups for N = 200 when a backup costs 30% of a worker; ``q3``, the share of extra
  requests when hedging after 7 ms; ``q6`` (design), choose b for a job.
- ``07c_relaxed_sync.ipynb``: ``q4``, samples per second, waiting for the
  fastest 98 of 100 cards. (Replace-or-keep, once posed here as ``q7``, is
  06b's ``root_causes.q6``: the track teaches it once.)
"""

from __future__ import annotations

from ..models.backup import backup_workers, inception_50_setup, wait_for_fastest
from ..models.balance import greedy_lpt, partition_for_step
from ..models.causes import stage_imbalance
from ..models.hedging import tail_at_scale_latency
from ..models.step_time import StepTime
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5", "q6", "Q1_COSTS", "Q4_STEP", "Q5_JOB", "Q6_JOB"]

#: Seconds of work of seven sequences (q1).
Q1_COSTS = (7.0, 6.0, 5.0, 4.0, 4.0, 3.0, 3.0)
#: One card's step time in q4: 1 s, 2% jitter, a 0.5 s stall on 1% of steps.
Q4_STEP = StepTime(1.0, jitter=0.02, pause_prob=0.01, pause=0.5)
#: q5's pipeline: 24 equal layers, 4 stages, 4 microbatches, an output layer worth 3 layers.
Q5_JOB = {"layers": 24, "stages": 4, "microbatches": 4, "output_layers": 3.0}
#: q6's job: N = 100, 1 s steps with 2% jitter and a 0.8 s stall on 2% of them,
#: 0.1 s of communication plus 5 ms per worker, backups at half a worker's price.
Q6_JOB = {"dist": StepTime(1.0, jitter=0.02, pause_prob=0.02, pause=0.8), "n": 100, "sync": 0.1,
          "sync_per_worker": 0.005, "price": 0.5}


def _q5_step(split):
    return stage_imbalance(Q5_JOB["layers"], Q5_JOB["stages"], Q5_JOB["microbatches"],
                           output_layers=Q5_JOB["output_layers"], layers_per_stage=split).step_time


def _q5_best():
    job = Q5_JOB
    best = partition_for_step([1.0] * job["layers"], job["stages"], job["microbatches"],
                              last_stage_extra=job["output_layers"])
    return [int(k) for k in best.layers_per_stage]


def _same_step(answer, want):
    """Any split of the 24 layers into 4 non-empty stages whose step is as short as the best one."""
    try:
        split = [int(k) for k in answer]
    except (TypeError, ValueError):
        return False
    if len(split) != Q5_JOB["stages"] or sum(split) != Q5_JOB["layers"] or min(split) < 1:
        return False
    return _q5_step(split) <= _q5_step(want) + 1e-9



q1 = Exercise(
    "q1", expected=lambda: greedy_lpt(Q1_COSTS, 3).makespan,
    hint="Sort the sequences longest first. Give each to the worker with the least work so far. "
         "The step lasts as long as the most loaded worker.",
    solution="greedy_lpt(Q1_COSTS, 3).makespan  # 7 | 6 | 5; then 4 joins 5 (9), 4 joins 6 (10), 3 joins 7 (10), "
             "3 joins 9 (12): 12, where the best split (7+4 | 6+5 | 4+3+3) gets 11",
)

q2 = Exercise(
    "q2", expected=lambda: backup_workers(**{**inception_50_setup(), "n": 200}, max_backups=16, price=0.3).best_normalized,
    hint="Cheaper backups lower the price line in the margin chart, and more workers stall per step at N = 200. "
         "backup_workers(..., price=0.3) returns a plan; look at its best_normalized.",
    solution='backup_workers(**{**inception_50_setup(), "n": 200}, max_backups=16, price=0.3).best_normalized  # 10',
)

q3 = Exercise(
    "q3", expected=lambda: float(tail_at_scale_latency().sf(0.007)),
    hint="A hedge goes out only for requests still running after the delay: P(latency > 5 ms).",
    solution="float(tail_at_scale_latency().sf(0.007))  # about 0.072: hedging after 7 ms sends 7.2% more requests",
    abs_tol=5e-4,
    fraction=True,
)

q4 = Exercise(
    "q4", expected=lambda: wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio,
    hint="Samples per second are (gradients kept per step) / (step time). Compare 98 / E[98th of 100] with "
         "100 / E[max of 100]: wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio.",
    solution="wait_for_fastest(Q4_STEP, 100, 98).throughput_ratio",
    rel_tol=1e-3,
)

q5 = Exercise(
    "q5", expected=_q5_best,
    hint="Pick the split for Q5_JOB: 24 layers on 4 stages, 4 microbatches, the last stage also runs an "
         "output layer worth 3 layers. Answer a list of 4 layer counts. With few microbatches the fill and the "
         "drain weigh more than the beat: compare splits with stage_imbalance(..., layers_per_stage=...).step_time, "
         "or search them all with partition_for_step.",
    solution="partition_for_step([1.0] * 24, 4, 4, last_stage_extra=3.0).layers_per_stage  # [9, 6, 6, 3]: "
             "step 45 layer-times, where the smallest bottleneck (6/7/7/4) gives 48",
    compare=_same_step,
)

q6 = Exercise(
    "q6", expected=lambda: backup_workers(Q6_JOB["dist"], Q6_JOB["n"], 12, sync=Q6_JOB["sync"],
                                    sync_per_worker=Q6_JOB["sync_per_worker"], price=Q6_JOB["price"]).best_normalized,
    hint="Choose b (0 to 12) for Q6_JOB, the one that uses the least GPU-time per gradient. Count the stalled "
         "workers on a typical step first (p x N); then let backup_workers(...) weigh gains against traffic and price.",
    solution="backup_workers(Q6_JOB['dist'], 100, 12, sync=0.1, sync_per_worker=0.005, price=0.5).best_normalized"
             "  # 5: about two workers stall per step, and the 6th backup saves less than its traffic and price",
)
