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
"""

from __future__ import annotations

from ..models.causes import gc_expected_step_time, output_layer_cost, straggler_scenario
from ..models.osdi2025 import STUDY
from . import Exercise

__all__ = ["q1", "q2", "q3", "q4"]

q1 = Exercise(
    "q1",
    expected=lambda: output_layer_cost(2048, 151936, 4096),
    hint="Per token, a layer is about 24 h^2 + 4 s h FLOP and the output layer 2 h V.",
    solution="output_layer_cost(2048, 151936, 4096)  # 151936 / (12 * 2048 + 2 * 4096) = 4.64 layers",
    rel_tol=1e-3,
)

q2 = Exercise(
    "q2",
    expected=lambda: (gc_expected_step_time(256, base=1.0, pause=0.2, interval=20)
                      / gc_expected_step_time(256, base=1.0, pause=0.2, interval=20, planned=True) - 1.0),
    hint="Random: the step pauses if any of 256 workers collects, 1 - 0.95^256 of the time. Planned: 1 step in 20.",
    solution=("gc_expected_step_time(256, pause=0.2, interval=20) / "
              "gc_expected_step_time(256, pause=0.2, interval=20, planned=True) - 1  # 1.2 / 1.01 - 1 = 0.188"),
    rel_tol=1e-3,
)

q3 = Exercise(
    "q3",
    expected=lambda: 1.0 / (1.0 - STUDY["waste_p90"].value),
    hint="Waste = 1 - 1/S: the share of the time that a straggler-free run would not need.",
    solution="1 / (1 - 0.213)  # S = 1.27",
    rel_tol=1e-3,
)

q4 = Exercise(
    "q4",
    expected=lambda: straggler_scenario("slow worker", rng=7).truth["dp"],
    hint="diagnose_job(straggler_scenario('slow worker', rng=7)).by_dp: which rank stands out?",
    solution="int(diagnose_job(straggler_scenario('slow worker', rng=7)).by_dp.argmax())",
)
