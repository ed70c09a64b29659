"""straggle-edu: why a synchronous job runs at the speed of its slowest worker.

Vocabulary, fixed once and used everywhere
------------------------------------------
n
    the number of workers.
p
    the per-worker probability of a slow step.
k
    the order-statistic index: the k-th smallest of n (k = n is the slowest).
t
    time, in seconds.
dist
    one worker's step-time distribution: a continuous frozen
    ``scipy.stats`` distribution or a :class:`StepTime` model.
rng
    a ``numpy.random.Generator``, an int seed or None, always passed through
    ``numpy.random.default_rng``. Nothing here seeds a global generator.
    A docstring lists ``rng`` among its parameters only when it has more to
    say about it.

The rooms
---------
Five layers, from the bottom up; each imports only the layers below it:

``straggle_edu.math``
    closed forms, order statistics, tail probabilities, cost.
``straggle_edu.models``
    samplers, the step-time and cluster model, the pipeline schedule, the
    root-cause and mitigation models, the barrier lab's prediction.
``straggle_edu.traces``
    reading real traces, and the one what-if engine that analyses them.
``straggle_edu.charts``
    pure functions from data to an Altair chart.
``straggle_edu.explorers``
    ipywidgets that wire controls to models and charts.

Beside them, three rooms of their own:

``straggle_edu.instruments``
    real processes: the barrier lab, the cluster probe, the per-rank CSV.
``straggle_edu.notebook``
    what a notebook cell calls: ``claim``, ``show``, the fact-check boxes;
    with ``straggle_edu.exercises``, each notebook's exercises.
``straggle_edu.app``
    what a shell runs: the CLI, the lab launcher, the site, the classroom
    tools, the Chinese twins' sync.

Every room that shows text to a reader speaks through ``straggle_edu.i18n``:
``set_language("zh")`` (or ``STRAGGLE_EDU_LANG=zh``) switches it to Chinese.

``tests/test_layers.py`` states what each room may import. Modules in
charts, explorers and exercises are named after the notebook they serve
(``tail`` for ``02_tail_probability``); models are named after the model.
Importing ``straggle_edu`` loads only the math and models layers (numpy and
scipy); charts and widgets load when you import them.
"""

from ._validate import memory_budget, set_memory_budget
from .i18n import get_language, set_language
from .math import (
    StragglerCost,
    cost_of_stragglers,
    expected_max,
    expected_order_stat,
    gumbel_max_approx,
    lost_fraction_from_slowdown,
    p_any_slow,
    p_none_slow,
    per_worker_budget,
    sqrt_2_ln_n,
    workers_until,
)
from .models import (
    AllReduce,
    backup_workers,
    Cluster,
    Group,
    StepTime,
    expected_slowest,
    expected_step_time,
    ring_allreduce_time,
    sample_max,
    sample_order_stat,
    sample_step_times,
    scaling_efficiency,
    throughput,
)

__version__ = "0.1.0"

__all__ = [
    "AllReduce",
    "backup_workers",
    "Cluster",
    "cost_of_stragglers",
    "expected_max",
    "expected_order_stat",
    "expected_slowest",
    "expected_step_time",
    "get_language",
    "Group",
    "gumbel_max_approx",
    "lost_fraction_from_slowdown",
    "memory_budget",
    "p_any_slow",
    "p_none_slow",
    "per_worker_budget",
    "ring_allreduce_time",
    "sample_max",
    "sample_order_stat",
    "sample_step_times",
    "scaling_efficiency",
    "set_language",
    "set_memory_budget",
    "sqrt_2_ln_n",
    "StepTime",
    "StragglerCost",
    "throughput",
    "workers_until",
]
