"""Exercises for ``06_root_causes.ipynb``: where stragglers come from.

- ``q1``: a model with hidden size 2048, a 151,936-token vocabulary and
  4,096-token sequences: how many transformer layers of work is its output
  layer?
- ``q2``: 256 workers, 1 s steps, a 0.2 s GC pause every 20 steps per
  worker: what throughput gain does planned (synchronized) GC give over
  random GC (as a fraction)?
- ``q3``: the study's p90 job wastes 21.3% of its resources. What slowdown S
  is that?
- ``q4``: a job from ``straggler_scenario("slow worker", rng=7)``: which DP
  rank holds the slow worker?
- ``q5`` (design, 06): pick the split of the q1 model's 24 layers over 4
  pipeline stages: the last stage keeps k layers, the first three share the
  rest evenly; the fastest 1F1B step is right (and any split at least as
  fast).
- ``q6`` (design, 06b): replace or keep a slow worker, from the
  restart-against-keep-running arithmetic.
"""

from __future__ import annotations

from ..models.causes import gc_expected_step_time, output_layer_cost, stage_imbalance, straggler_scenario
from ..models.osdi2025 import STUDY
from ..models.remedies import restart_or_keep
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4", "q5", "q6", "split_slowdown"]

Q5_LAYERS, Q5_STAGES, Q5_MICROBATCHES = 24, 4, 8


def split_slowdown(layers_per_stage):
    """The 1F1B slowdown of q5's model (hidden 2048, vocabulary 151,936) for one split of its 24 layers.

    Examples
    --------
    >>> round(split_slowdown([6, 6, 6, 6]), 3) > round(split_slowdown([7, 7, 6, 4]), 3)
    True
    """
    return stage_imbalance(Q5_LAYERS, Q5_STAGES, Q5_MICROBATCHES, output_layers=output_layer_cost(2048, 151936, 4096),
                           layers_per_stage=list(layers_per_stage)).slowdown


def _best_split_slowdown():
    """The fastest split that keeps k layers on the last stage and spreads the rest evenly (any k)."""
    return min(split_slowdown(_keep_last(k)) for k in range(1, Q5_LAYERS - Q5_STAGES + 2))


def _keep_last(k):
    rest, first = Q5_LAYERS - k, Q5_STAGES - 1
    return [rest // first + (i < rest % first) for i in range(first)] + [k]


def _as_fast_as(answer, best):
    try:
        split = [int(x) for x in answer]
    except (TypeError, ValueError):
        return False
    if len(split) != Q5_STAGES or min(split) < 1 or sum(split) != Q5_LAYERS or split != list(answer):
        return False
    return split_slowdown(split) <= best * (1 + 1e-9)  # as fast as the best even split, or faster



q1 = Exercise(
    "q1", expected=lambda: output_layer_cost(2048, 151936, 4096),
    hint="Per token, a layer is about 24 h^2 + 4 s h FLOP and the output layer 2 h V.",
    solution="output_layer_cost(2048, 151936, 4096)  # 151936 / (12 * 2048 + 2 * 4096) = 4.64 layers",
    rel_tol=1e-3,
)

q2 = Exercise(
    "q2", expected=lambda: (gc_expected_step_time(256, base=1.0, pause=0.2, interval=20)
                      / gc_expected_step_time(256, base=1.0, pause=0.2, interval=20, planned=True) - 1.0),
    hint="Random: the step pauses if any of 256 workers collects, 1 - 0.95^256 of the time. Planned: 1 step in 20.",
    solution="gc_expected_step_time(256, pause=0.2, interval=20) / "
             "gc_expected_step_time(256, pause=0.2, interval=20, planned=True) - 1  # 1.2 / 1.01 - 1 = 0.188",
    rel_tol=1e-3,
    fraction=True,
)

q3 = Exercise(
    "q3", expected=lambda: 1.0 / (1.0 - STUDY["waste_p90"].value),
    hint="Waste = 1 - 1/S: the share of the time that a straggler-free run would not need.",
    solution="1 / (1 - 0.213)  # S = 1.27",
    rel_tol=1e-3,
)

q4 = Exercise(
    "q4", expected=lambda: straggler_scenario("slow worker", rng=7).truth["dp"],
    hint="diagnose_job(straggler_scenario('slow worker', rng=7)).by_dp: which rank stands out?",
    solution="int(diagnose_job(straggler_scenario('slow worker', rng=7)).by_dp.argmax())",
)

q5 = Exercise(
    "q5", expected=_best_split_slowdown,
    hint="The last stage also runs the output layer (q1). Try split_slowdown([6, 6, 6, 6]), then move layers "
         "off the last stage one at a time; stop when the step gets slower again.",
    solution="min over splits of split_slowdown(split): the last stage keeps fewer layers, "
             "e.g. split_slowdown([7, 7, 6, 4]); any split with the same slowdown is right",
    compare=_as_fast_as,
)

q6 = Exercise(
    "q6", expected=lambda: restart_or_keep(12, 1.2, restart=0.5, lost=2.0).choice,
    hint="Keeping it: 12 h x 1.2. Replacing it: 0.5 h + 2 h + 12 h. Which finishes sooner?",
    solution="restart_or_keep(12, 1.2, restart=0.5, lost=2.0).choice  # 14.4 h against 14.5 h: 'keep running'",
)
