"""Where stragglers come from: one small model per root cause, and classifiers.

The OSDI 2025 study (Lin et al., :mod:`straggle_edu.models.osdi2025`) found
that most straggling in LLM training is not a broken machine but work that
is handed out unequally, or pauses that nobody coordinated. Each model here
turns one such cause into step times, so a notebook can show how big it is.

Sequence-length imbalance
    :func:`sequence_lengths` draws long-tailed sequence lengths;
    :func:`sequence_cost` prices a sequence at ``per_token * L +
    attention * L**2`` seconds; :func:`sequence_imbalance` gives every
    data-parallel worker its own sequences and times the synchronous step.
Pipeline stage imbalance
    :func:`output_layer_cost` says how many transformer layers the output
    layer (vocabulary projection and loss) is worth; :func:`stage_imbalance`
    splits layers evenly over the stages, puts that extra work on the last
    stage and times the 1F1B step with :func:`~.pipeline.pipeline_step_times`.
Garbage-collection pauses
    :func:`gc_step_times` and :func:`gc_expected_step_time`: every worker
    collecting on its own (random) against all of them collecting at the
    same planned steps.
Classification
    :func:`classify_persistence` (persistent, transient or none) and
    :func:`classify_bottleneck` (compute or communication), by what-if:
    make everything ideal except one thing, and see how slow that is.
Debugging
    :func:`straggler_scenario` builds a small DP x PP job with one hidden
    cause, and :meth:`Scenario.trace_columns` records it as an op-level trace
    (plain arrays, the OSDI 2025 artifact's schema). The one what-if engine,
    :func:`straggle_edu.traces.diagnose.diagnose_job`, analyses that trace and
    answers the debugging questions, with the same thresholds as for a real
    trace.

Units: seconds, tokens. Fixed symbols: n (``workers``), ``rng``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import (
    as_rng,
    check_memory,
    in_range,
    nonnegative,
    positive,
    require,
    whole,
)
from .balance import split_layers_evenly
from .job_trace import OPTYPES as _JOB_OPTYPES
from .job_trace import program, record, wavefront, wire
from .pipeline import pipeline_step_times

__all__ = [
    "CAUSES",
    "Scenario",
    "SequenceImbalance",
    "StageImbalance",
    "classify_bottleneck",
    "classify_persistence",
    "gc_expected_step_time",
    "gc_step_times",
    "output_layer_cost",
    "sequence_cost",
    "sequence_imbalance",
    "sequence_lengths",
    "stage_imbalance",
    "straggler_scenario",
]

# A 7B-parameter model on one H100-class GPU, forward + backward:
# 6 * 7e9 FLOP per token / 4e14 FLOP/s ~ 1e-4 s per token, and the attention
# scores 12 * layers * hidden * L**2 FLOP per sequence (32 layers, hidden
# 4096) / 4e14 ~ 4e-9 s per token**2. Attention then costs as much as the
# rest at L = 1e-4 / 4e-9 = 25,000 tokens.
PER_TOKEN = 1e-4
ATTENTION = 4e-9

# ------------------------------------------------------- sequence lengths ---


def sequence_lengths(size, *, median=1024, sigma=1.0, max_len=32768, rng=None):
    """Draw long-tailed sequence lengths, in tokens.

    Log-normal with the given median and log-scale spread ``sigma``, rounded
    and clipped to ``1 .. max_len`` (the context window). Real corpora mix
    many short documents with a few very long ones; ``sigma = 1`` puts the
    99th percentile at about 10x the median.

    Parameters
    ----------
    size : int or tuple of int
        How many lengths (or the shape of the array).
    median : float
        Median length in tokens, >= 1.
    sigma : float
        Spread of log(length), in [0, 3].
    max_len : int
        Context window: the longest allowed sequence, >= 1.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> x = sequence_lengths(100_000, median=1024, sigma=1.0, rng=0)
    >>> int(np.median(x)), int(np.quantile(x, 0.99)), int(x.max())
    (1020, 10553, 32768)
    """
    shape = tuple(np.atleast_1d(whole("size", np.asarray(size, dtype=float), low=0)).tolist())
    median = in_range("median", median, 1.0)
    sigma = in_range("sigma", sigma, 0.0, 3.0)
    max_len = whole("max_len", max_len)
    check_memory(int(np.prod(shape, dtype=np.int64)) * 16, f"drawing {shape} sequence lengths")
    rng = as_rng(rng)
    x = np.rint(median * np.exp(sigma * rng.standard_normal(shape)))
    return np.clip(x, 1, max_len).astype(np.int64)


def sequence_cost(lengths, *, per_token=PER_TOKEN, attention=ATTENTION):
    """Forward + backward seconds of each sequence: linear plus attention.

    ``per_token * L + attention * L**2``: the matrix multiplies cost the same
    per token; self-attention compares every token with every other, so its
    cost grows with the square of the length. The defaults describe a 7B
    model on an H100-class GPU, where the two terms are equal at
    ``per_token / attention`` = 25,000 tokens.

    Parameters
    ----------
    lengths : int or array of int
        Sequence lengths, tokens >= 0.
    per_token : float
        Seconds per token, >= 0.
    attention : float
        Seconds per token squared, >= 0.

    Returns
    -------
    float or numpy.ndarray
        Seconds per sequence, shaped like ``lengths``.

    Examples
    --------
    >>> sequence_cost(1000, per_token=1e-4, attention=4e-9)   # 0.1 + 0.004
    0.104
    >>> sequence_cost([2000, 1000, 1000], per_token=1e-4, attention=4e-9).round(3).tolist()
    [0.216, 0.104, 0.104]
    """
    lengths = nonnegative("lengths", lengths)
    a = nonnegative("per_token", per_token)
    c = nonnegative("attention", attention)
    out = a * lengths + c * np.square(lengths)
    return float(out) if np.ndim(out) == 0 else np.asarray(out, dtype=float)


@dataclass(frozen=True)
class SequenceImbalance:
    """Synchronous steps of data-parallel workers with unequal sequences.

    Attributes
    ----------
    tokens : numpy.ndarray
        (steps, workers): tokens each worker processed in each step.
    worker_times : numpy.ndarray
        (steps, workers): each worker's compute time, seconds.
    attention_share : float
        Fraction of all compute spent in the quadratic attention term.

    Examples
    --------
    >>> r = sequence_imbalance(64, sequences=8, rng=0)
    >>> r.worker_times.shape, round(r.waste, 2)   # steps x workers; share of time lost to imbalance
    ((200, 64), 0.73)
    """

    tokens: np.ndarray
    worker_times: np.ndarray
    attention_share: float

    @property
    def step_times(self):
        """(steps,): the slowest worker of each step, seconds."""
        return self.worker_times.max(axis=1)

    @property
    def ideal_step_times(self):
        """(steps,): the step if the same work were split evenly, seconds."""
        return self.worker_times.mean(axis=1)

    @property
    def slowdown(self):
        """S = mean step time / mean ideal step time (>= 1)."""
        return float(self.step_times.mean() / self.ideal_step_times.mean())

    @property
    def waste(self):
        """Fraction of worker time spent waiting: 1 - 1/S."""
        return 1.0 - 1.0 / self.slowdown

    @property
    def token_spread(self):
        """Mean over steps of (most tokens / mean tokens) across workers."""
        return float(np.mean(self.tokens.max(axis=1) / self.tokens.mean(axis=1)))


def sequence_imbalance(
    workers,
    *,
    sequences=8,
    token_budget=None,
    steps=200,
    median=1024,
    sigma=1.0,
    max_len=32768,
    per_token=PER_TOKEN,
    attention=ATTENTION,
    rng=None,
):
    """Step times of n data-parallel workers fed long-tailed sequences.

    Two ways to batch, as in practice:

    - ``token_budget=None``: every worker gets ``sequences`` whole sequences
      per step, so token counts differ (linear *and* attention imbalance);
    - ``token_budget=B``: sequences are packed back to back into B tokens
      per worker (the last one cut to fit), so every worker has the same
      tokens and only the attention term, the sum of L**2 over its
      documents, differs. Packing fixes the linear part, not the quadratic.

    Parameters
    ----------
    workers : int
        Data-parallel workers n, >= 1.
    sequences : int
        Sequences per worker per step (unpacked), >= 1.
    token_budget : int or None
        Tokens per worker per step (packed), >= 1.
    steps : int
        Steps to simulate, >= 1.
    median, sigma, max_len
        The length distribution; see :func:`sequence_lengths`.
    per_token, attention
        The cost model; see :func:`sequence_cost`.

    Returns
    -------
    SequenceImbalance

    Examples
    --------
    Eight whole sequences per worker: the busiest of 64 workers has 2.6x the
    average tokens, and attention makes its step 3.7x the balanced one.

    >>> r = sequence_imbalance(64, sequences=8, rng=0)
    >>> round(r.token_spread, 2), round(r.slowdown, 2)
    (2.64, 3.69)

    Packed into 8192 tokens each: equal tokens, yet attention still costs 19%.

    >>> packed = sequence_imbalance(64, token_budget=8192, rng=0)
    >>> round(packed.token_spread, 2), round(packed.slowdown, 2)
    (1.0, 1.19)
    """
    n = whole("workers", workers)
    steps = whole("steps", steps)
    per_token = nonnegative("per_token", per_token)
    attention = nonnegative("attention", attention)
    rng = as_rng(rng)
    if token_budget is None:
        k = whole("sequences", sequences)
        check_memory(steps * n * k * 40, f"drawing {steps} x {n} x {k} sequences")
        lengths = sequence_lengths((steps, n, k), median=median, sigma=sigma, max_len=max_len, rng=rng)
        tokens = lengths.sum(axis=2).astype(float)
        linear = per_token * tokens
        quad = attention * np.square(lengths.astype(float)).sum(axis=2)
    else:
        budget = whole("token_budget", token_budget)
        lengths = _packed_documents(steps * n, budget, median, sigma, max_len, rng)
        tokens = np.full((steps, n), float(budget))
        linear = per_token * tokens
        quad = attention * np.square(lengths).sum(axis=1).reshape(steps, n)
    total = linear + quad
    share = float(quad.sum() / total.sum()) if total.sum() > 0 else 0.0
    return SequenceImbalance(tokens=tokens, worker_times=total, attention_share=share)


def _packed_documents(rows, budget, median, sigma, max_len, rng):
    """Per row, document lengths packed into exactly ``budget`` tokens (the
    last document cut to fit); returned as a (rows, k) float array padded
    with zeros."""
    median = in_range("median", median, 1.0)
    sigma = in_range("sigma", sigma, 0.0, 3.0)
    mean_len = median * math.exp(sigma**2 / 2)
    k = int(min(budget, math.ceil(2 * budget / min(mean_len, max_len)) + 8))
    check_memory(rows * k * 40, f"packing {rows} rows of up to {k} documents")
    while True:
        lengths = sequence_lengths((rows, k), median=median, sigma=sigma, max_len=max_len, rng=rng)
        ends = np.cumsum(lengths, axis=1)
        if (ends[:, -1] >= budget).all() or k >= budget:
            break
        k = min(budget, 2 * k)
        check_memory(rows * k * 40, f"packing {rows} rows of up to {k} documents")
    starts = ends - lengths
    return np.clip(budget - starts, 0, lengths).astype(float)


# --------------------------------------------------- pipeline stage imbalance ---


def output_layer_cost(hidden, vocab, seq_len=4096):
    """The output layer's work, in transformer layers.

    Per token, a transformer layer costs about ``24 h**2 + 4 s h`` FLOP
    (projections, MLP with 4h, attention over s tokens) and the output
    projection onto the vocabulary ``2 h V`` (Narayanan et al., SC 2021).
    Their ratio ``V / (12 h + 2 s)`` is how many layers' worth of extra work
    the last pipeline stage carries (the loss itself is small next to it).

    Parameters
    ----------
    hidden : int
        Hidden size h, >= 1.
    vocab : int
        Vocabulary size V, >= 1.
    seq_len : int
        Sequence length s, >= 1.

    Returns
    -------
    float
        Layers.

    Examples
    --------
    A 7B-class model with a 128k vocabulary: the last stage carries 2.3
    extra layers.

    >>> round(output_layer_cost(4096, 131072, 4096), 2)
    2.29
    >>> round(output_layer_cost(4096, 32000, 4096), 2)    # Llama-2's 32k vocabulary
    0.56
    """
    h = whole("hidden", hidden)
    V = whole("vocab", vocab)
    s = whole("seq_len", seq_len)
    return float(V / (12 * h + 2 * s))


@dataclass(frozen=True)
class StageImbalance:
    """A pipeline whose stages carry unequal work.

    Attributes
    ----------
    layers_per_stage : numpy.ndarray of int
        (stages,).
    stage_costs : numpy.ndarray
        (stages,): forward + backward seconds per microbatch on each stage.
    step_time : float
        The 1F1B step, seconds.
    ideal_step_time : float
        The 1F1B step with the same total work spread evenly, seconds.
    layer_time : float
        Forward + backward seconds of one layer on one microbatch.

    Examples
    --------
    >>> r = stage_imbalance(32, 4, 8, output_layers=2.3)
    >>> r.slowest_stage, r.extra_costs.tolist(), round(r.step_time / r.ideal_step_time, 3)
    (3, [0.0, 0.0, 0.0, 2.3], 1.128)
    """

    layers_per_stage: np.ndarray
    stage_costs: np.ndarray
    step_time: float
    ideal_step_time: float
    layer_time: float = 1.0

    @property
    def extra_costs(self):
        """(stages,): seconds beyond the stage's layers (embedding, output layer)."""
        return self.stage_costs - self.layers_per_stage * self.layer_time

    @property
    def slowdown(self):
        """S = step time / ideal step time (>= 1)."""
        return self.step_time / self.ideal_step_time if self.ideal_step_time > 0 else 1.0

    @property
    def slowest_stage(self):
        """Index of the stage with the most work (ties: the last one)."""
        c = self.stage_costs
        return int(len(c) - 1 - np.argmax(c[::-1]))


def stage_imbalance(
    layers,
    stages,
    microbatches,
    *,
    layer_time=1.0,
    output_layers=2.0,
    embedding_layers=0.0,
    layers_per_stage=None,
):
    """Time a 1F1B step whose last stage also runs the output layer.

    Layers are split evenly (earlier stages get the remainder, as
    :func:`~.balance.split_layers_evenly` does) unless ``layers_per_stage``
    says otherwise. The last stage adds ``output_layers`` layers' worth of
    work (see :func:`output_layer_cost`), the first ``embedding_layers``.
    Forward is a third of a stage's cost and backward two thirds. The ideal
    spreads the same total evenly over the stages.

    Parameters
    ----------
    layers : int
        Transformer layers L, >= stages.
    stages : int
        Pipeline stages P, >= 1.
    microbatches : int
        Microbatches M, >= 1.
    layer_time : float
        Forward + backward seconds of one layer on one microbatch, > 0.
    output_layers, embedding_layers : float
        Extra work on the last / first stage, in layers, >= 0.
    layers_per_stage : array of int, optional
        A custom split (must sum to ``layers``, each >= 0).

    Returns
    -------
    StageImbalance

    Examples
    --------
    32 layers on 4 stages, 8 microbatches; the output layer is worth 2.3
    layers, so the last stage has 10.3 layers' worth of work against 8.

    >>> r = stage_imbalance(32, 4, 8, output_layers=2.3)
    >>> r.stage_costs.tolist(), round(r.slowdown, 3)
    ([8.0, 8.0, 8.0, 10.3], 1.128)

    Moving layers off the last stage helps:

    >>> round(stage_imbalance(32, 4, 8, output_layers=2.3, layers_per_stage=[9, 9, 8, 6]).slowdown, 3)
    1.014
    """
    L = whole("layers", layers)
    P = whole("stages", stages, low=1, high=L)
    M = whole("microbatches", microbatches)
    t = positive("layer_time", layer_time)
    out = nonnegative("output_layers", output_layers)
    emb = nonnegative("embedding_layers", embedding_layers)
    if layers_per_stage is None:
        counts = split_layers_evenly(np.ones(L), P).layers_per_stage.astype(np.int64)
    else:
        counts = np.atleast_1d(whole("layers_per_stage", np.asarray(layers_per_stage, dtype=float), low=0))
        require(counts.shape == (P,), "layers_per_stage", counts, f"{P} whole numbers, one per stage")
        require(int(counts.sum()) == L, "layers_per_stage", counts, f"whole numbers summing to layers={L}")
    work = counts.astype(float)
    work[0] += emb
    work[-1] += out
    costs = work * t
    step = pipeline_step_times(P, M, (costs / 3)[None, :, None], (2 * costs / 3)[None, :, None])
    even = np.full((1, P, 1), costs.sum() / P)
    ideal = pipeline_step_times(P, M, even / 3, 2 * even / 3)
    return StageImbalance(layers_per_stage=counts, stage_costs=costs, step_time=step, ideal_step_time=ideal,
                          layer_time=t)


# ------------------------------------------------------------------ GC pauses ---


def _gc_args(workers, base, pause, interval):
    n = whole("workers", workers)
    base = positive("base", base)
    pause = nonnegative("pause", pause)
    interval = in_range("interval", interval, 1.0)
    return n, base, pause, interval


def gc_expected_step_time(workers, *, base=1.0, pause=0.5, interval=10, planned=False):
    """Expected synchronous step time with garbage-collection pauses.

    - Random (Python's automatic GC): each worker collects on its own, on a
      step of its own, with probability ``1 / interval`` per step. The step
      waits for any worker that collects::

          E = base + pause * (1 - (1 - 1/interval)**n)

      which tends to ``base + pause`` as n grows: every step pays.
    - Planned (``gc.disable()``, then ``gc.collect()`` on every worker at the
      same step, once every ``interval`` steps)::

          E = base + pause / interval

      whatever n is: the pauses overlap instead of adding up.

    Parameters
    ----------
    workers : int
        n, >= 1.
    base : float
        Step time without GC, seconds > 0.
    pause : float
        One collection, seconds >= 0.
    interval : float
        Steps between one worker's collections, on average, >= 1.
    planned : bool
        Planned (synchronized) instead of random GC.

    Returns
    -------
    float
        Expected seconds per step.

    Examples
    --------
    >>> round(gc_expected_step_time(1, base=1.0, pause=0.5, interval=10), 3)
    1.05
    >>> round(gc_expected_step_time(64, base=1.0, pause=0.5, interval=10), 3)
    1.499
    >>> gc_expected_step_time(64, base=1.0, pause=0.5, interval=10, planned=True)
    1.05
    """
    n, base, pause, interval = _gc_args(workers, base, pause, interval)
    if planned:
        return float(base + pause / interval)
    return float(base + pause * -math.expm1(n * math.log1p(-1.0 / interval)) if interval > 1 else base + pause)


def gc_step_times(workers, steps, *, base=1.0, pause=0.5, interval=10, planned=False, jitter=0.0, rng=None):
    """Sampled synchronous step times with garbage-collection pauses.

    Each worker's step is ``base * (1 + jitter * Z)`` plus ``pause`` when it
    collects; the step is the slowest worker. Random GC: each worker
    collects with probability ``1 / interval`` on each step, independently.
    Planned GC: every worker collects on steps ``interval - 1, 2 interval -
    1, ...`` (``interval`` rounded to a whole number of steps).

    Parameters
    ----------
    workers, base, pause, interval, planned
        See :func:`gc_expected_step_time`.
    steps : int
        Steps to sample, >= 1.
    jitter : float
        Coefficient of variation of the compute time, in [0, 0.2].

    Returns
    -------
    numpy.ndarray
        (steps,) seconds.

    Examples
    --------
    >>> t = gc_step_times(64, 10_000, base=1.0, pause=0.5, interval=10, rng=0)
    >>> round(float(t.mean()), 2)
    1.5
    >>> gc_step_times(64, 10, base=1.0, pause=0.5, interval=5, planned=True).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.5]
    """
    n, base, pause, interval = _gc_args(workers, base, pause, interval)
    steps = whole("steps", steps)
    jitter = in_range("jitter", jitter, 0.0, 0.2)
    check_memory(steps * n * 24, f"sampling {steps} steps of {n} workers")
    rng = as_rng(rng)
    compute = base * (1.0 + jitter * rng.standard_normal((steps, n))) if jitter > 0 else np.full((steps, n), base)
    if planned:
        every = max(1, round(interval))
        hit = np.zeros((steps, n), dtype=bool)
        hit[every - 1 :: every] = True
    else:
        hit = rng.random((steps, n)) < 1.0 / interval
    return (compute + pause * hit).max(axis=1)


# ------------------------------------------------------------- classification ---


def classify_persistence(per_step_slowdown, *, threshold=1.1, persistent_share=0.5):
    """Persistent, transient or no straggling, from per-step slowdowns.

    A step straggles when its slowdown S (step time / ideal step time) is at
    least ``threshold``. The job's straggling is *persistent* when at least
    ``persistent_share`` of its steps straggle, *transient* (spiky, one-off)
    when some but fewer do, and ``"none"`` when no step does. The OSDI 2025
    study found it mostly persistent.

    Parameters
    ----------
    per_step_slowdown : array of float
        S of each step, >= 1 in principle (values below 1 are allowed).
    threshold : float
        S at which a step counts as straggling, >= 1.
    persistent_share : float
        Share of straggling steps that makes it persistent, in (0, 1].

    Returns
    -------
    str
        ``"persistent"``, ``"transient"`` or ``"none"``.

    Examples
    --------
    >>> classify_persistence([1.3, 1.25, 1.31, 1.28])
    'persistent'
    >>> classify_persistence([1.0, 1.0, 2.5, 1.0, 1.0, 1.0])
    'transient'
    >>> classify_persistence([1.01, 1.0])
    'none'
    """
    s = nonnegative("per_step_slowdown", per_step_slowdown)
    s = np.atleast_1d(s)
    require(s.ndim == 1 and s.size >= 1, "per_step_slowdown", s, "a non-empty 1-D array")
    threshold = in_range("threshold", threshold, 1.0)
    share_needed = in_range("persistent_share", persistent_share, 0.0, 1.0, low_open=True)
    share = float(np.mean(s >= threshold))
    if share == 0:
        return "none"
    return "persistent" if share >= share_needed else "transient"


def classify_bottleneck(compute, comm, *, threshold=1.02):
    """Compute or communication: which one, made ideal, removes the slowdown?

    What-if, as in the OSDI 2025 study. ``compute`` and ``comm`` are each
    worker's seconds of work and of data transfer (waiting excluded) per
    step, and a step takes ``max(compute) + max(comm)`` (work, then a
    collective that runs at its slowest participant's pace). The ideal
    replaces both by their per-step means. Then::

        S_compute = mean(max(compute) + mean(comm)) / ideal
        S_comm    = mean(mean(compute) + max(comm)) / ideal

    are the slowdowns each one causes alone, and the larger names the
    bottleneck (``"neither"`` if both are below ``threshold``).

    Parameters
    ----------
    compute, comm : array
        (steps, workers) seconds >= 0, same shape.
    threshold : float
        Slowdown below which a cause is ignored, >= 1.

    Returns
    -------
    (label, s_compute, s_comm) : tuple
        label is ``"compute"``, ``"communication"`` or ``"neither"``.

    Examples
    --------
    One worker computes 50% longer; the network is even:

    >>> compute = [[1.0, 1.0, 1.0, 1.5]] * 3
    >>> comm = [[0.2, 0.2, 0.2, 0.2]] * 3
    >>> label, s_compute, s_comm = classify_bottleneck(compute, comm)
    >>> label, round(s_compute, 3), round(s_comm, 3)   # (1.5 + 0.2) / (1.125 + 0.2)
    ('compute', 1.283, 1.0)
    """
    a = np.atleast_2d(nonnegative("compute", compute))
    c = np.atleast_2d(nonnegative("comm", comm))
    require(a.ndim == 2, "compute", a, "a (steps, workers) array")
    require(c.shape == a.shape, "comm", c, f"an array of the same shape as compute {a.shape}")
    threshold = in_range("threshold", threshold, 1.0)
    ideal = float(np.mean(a.mean(axis=1) + c.mean(axis=1)))
    if ideal == 0:
        return "neither", 1.0, 1.0
    s_a = float(np.mean(a.max(axis=1) + c.mean(axis=1)) / ideal)
    s_c = float(np.mean(a.mean(axis=1) + c.max(axis=1)) / ideal)
    if max(s_a, s_c) < threshold:
        return "neither", s_a, s_c
    return ("compute" if s_a >= s_c else "communication"), s_a, s_c


# ------------------------------------------------------------------- debugging ---

#: The causes :func:`straggler_scenario` can inject.
CAUSES = ("none", "slow worker", "last stage", "sequence length", "random GC", "slow link")

@dataclass(frozen=True)
class Scenario:
    """One small DP x PP job's op durations over several steps, with a known cause.

    Attributes
    ----------
    cause : str
        One of ``CAUSES``.
    forward, backward, p2p : numpy.ndarray
        (steps, dp, stages, microbatches) seconds; see
        :func:`~.pipeline.simulate_pipeline` for their meaning.
    allreduce : numpy.ndarray
        (steps, dp, stages) seconds: each worker's share of its stage's DP
        gradient reduce-scatter.
    truth : dict
        Where the cause was injected (for checking a diagnosis), e.g.
        ``{"dp": 2, "stage": 1}``.
    gc : numpy.ndarray
        (steps, dp, stages) seconds of garbage-collection pause (0 for none).

    Examples
    --------
    >>> sc = straggler_scenario("slow worker", rng=0)
    >>> sc.cause, sc.forward.shape, sc.truth   # steps x dp x stages x microbatches
    ('slow worker', (20, 4, 4, 8), {'dp': 1, 'stage': 0})
    """

    cause: str
    forward: np.ndarray
    backward: np.ndarray
    p2p: np.ndarray
    allreduce: np.ndarray
    truth: dict
    gc: np.ndarray = None

    @property
    def shape(self):
        """(steps, dp, stages, microbatches)."""
        return self.forward.shape

    def trace_columns(self):
        """The job as a profiler would record it: ``(columns, layout)``, plain arrays.

        Runs the 1F1B program of :mod:`~straggle_edu.models.job_trace` with
        this scenario's work: forward and backward of each stage and
        microbatch, the pipeline sends and receives (``p2p`` of the link
        after the sender's stage, or before it for backward; a combined
        send+recv takes the longer), the DP ``grads-reduce-scatter``
        (``allreduce``) and the ``gc`` pauses. The other ops of the schema
        (all-gather, layernorm, embedding, clip, optimizer) take 0 s.
        ``straggle_edu.traces.optrace.op_trace_from_columns(*columns)`` reads it.

        Examples
        --------
        >>> cols, layout = straggler_scenario("none", dp=2, stages=2, microbatches=2, steps=1, rng=0).trace_columns()
        >>> len(cols["step"]), layout["dp_size"], sorted(set(cols["optype"].tolist()))[:2]
        (60, 2, ['backward-compute', 'backward-recv'])
        """
        T, D, P, M = self.shape
        programs = [program(s, P, M, D) for s in range(P)]
        ops = []
        for s, (main, side) in enumerate(programs):
            for stream, prog in (("main", main), ("side", side)):
                for i, (kind, codes, mb, tags) in enumerate(prog):
                    ops.append({"stage": s, "stream": stream, "i": i, "kind": kind, "codes": codes, "mb": mb,
                                "tags": tags, "work": self._work(s, kind, codes, mb, tags)})
        wire(ops, programs, D)
        start, end = wavefront(ops, T, D)
        return record(ops, start, end, T, D, P)

    def _work(self, s, kind, codes, mb, tags):
        """The (steps, dp) seconds of one op of stage s's program."""
        T, D = self.shape[:2]
        name = _JOB_OPTYPES[codes[0]]
        if kind == "compute":
            return (self.forward if name == "forward-compute" else self.backward)[:, :, s, mb]
        if kind == "p2p":  # the link below the sender (forward) or above it (backward)
            return np.maximum.reduce([self.p2p[:, :, t[2] if t[0] == "F" else t[2] - 1, t[1]] for t in tags])
        if name == "grads-reduce-scatter":
            return self.allreduce[:, :, s]
        if name == "gc" and self.gc is not None:
            return self.gc[:, :, s]
        return np.zeros((T, D))


def straggler_scenario(
    cause, *, dp=4, stages=4, microbatches=8, steps=20, severity=1.0, jitter=0.02, rng=None
):
    """A small synthetic job with one injected cause of straggling.

    Every op starts from the same typical durations (forward 10 ms, backward
    20 ms per stage and microbatch, p2p 1 ms, all-reduce 20 ms) with
    ``jitter`` relative noise; then the cause is injected:

    - ``"slow worker"``: one random worker (dp rank, stage) computes
      ``1 + 0.5 severity`` times slower, on every step;
    - ``"last stage"``: the last stage of every replica carries
      ``0.3 severity`` times more compute (the output layer and loss);
    - ``"sequence length"``: each microbatch of each replica holds
      long-tailed sequences (packed to a fixed token budget), so its compute
      on every stage scales with its attention cost; it changes every step;
    - ``"random GC"``: each worker pauses for ``0.3 severity`` of a step
      with probability 1/50 per step, in its garbage collection;
    - ``"slow link"``: the point-to-point link after one random stage of
      one random replica is ``1 + 10 severity`` times slower;
    - ``"none"``: jitter only.

    Parameters
    ----------
    cause : str
        One of ``CAUSES``.
    dp, stages, microbatches, steps : int
        The grid and the number of steps (stages >= 2 for ``"slow link"``).
    severity : float
        How strong the cause is, >= 0 (0 injects nothing).
    jitter : float
        Relative noise on every op, in [0, 0.2].

    Returns
    -------
    Scenario

    Examples
    --------
    >>> sc = straggler_scenario("slow worker", rng=0)
    >>> sc.shape, sc.truth
    ((20, 4, 4, 8), {'dp': 1, 'stage': 0})
    """
    require(cause in CAUSES, "cause", cause, f"one of {', '.join(map(repr, CAUSES))}")
    D, P, M, T = (whole(k, x) for k, x in (("dp", dp), ("stages", stages), ("microbatches", microbatches), ("steps", steps)))
    if cause == "slow link":
        require(P >= 2, "stages", P, "at least 2 for a slow link")
    severity = nonnegative("severity", severity)
    jitter = in_range("jitter", jitter, 0.0, 0.2)
    check_memory(T * D * P * M * 8 * 12, f"a scenario of {T} steps x {D} x {P} x {M}")
    rng = as_rng(rng)
    noise = lambda shape: np.clip(1.0 + jitter * rng.standard_normal(shape), 0.5, 1.5)
    grid = (T, D, P, M)
    fwd, bwd = 0.010 * noise(grid), 0.020 * noise(grid)
    p2p, ar = 0.001 * noise(grid), 0.020 * noise((T, D, P))
    truth, gc = {}, np.zeros((T, D, P))
    if cause == "slow worker":
        d, s = int(rng.integers(D)), int(rng.integers(P))
        fwd[:, d, s] *= 1 + 0.5 * severity
        bwd[:, d, s] *= 1 + 0.5 * severity
        truth = {"dp": d, "stage": s}
    elif cause == "last stage":
        fwd[:, :, -1] *= 1 + 0.3 * severity
        bwd[:, :, -1] *= 1 + 0.3 * severity
        truth = {"stage": P - 1}
    elif cause == "sequence length":
        docs = _packed_documents(T * D * M, 4096, 512, 1.0 + 0.2 * severity, 4096, rng)
        cost = sequence_cost(docs.sum(axis=1)) + severity * 4 * ATTENTION * np.square(docs).sum(axis=1)
        scale = (cost / cost.mean()).reshape(T, D, 1, M)
        fwd *= scale
        bwd *= scale
        truth = {"varies": "microbatch"}
    elif cause == "random GC":
        hit = rng.random((T, D, P)) < 1 / 50
        gc = hit * (0.3 * severity * (M * 0.030 + 0.020))
        truth = {"hits": int(hit.sum())}
    elif cause == "slow link":
        d, s = int(rng.integers(D)), int(rng.integers(P - 1))
        p2p[:, d, s] *= 1 + 10 * severity
        truth = {"dp": d, "link": s}
    return Scenario(cause=cause, forward=fwd, backward=bwd, p2p=p2p, allreduce=ar, truth=truth, gc=gc)
