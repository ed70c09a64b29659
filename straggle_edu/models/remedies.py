"""From a debugging answer to an action: the remedy table and the restart arithmetic.

The debugging questions (which worker, which stage, compute or
communication, persistent or one-off) end in one of a few answers. Each
answer has a remedy:

- a persistent single worker: cordon or replace it, if the remaining work
  pays for the restart (:func:`restart_or_keep`);
- a hot last stage: repartition the layers;
- uneven sequence lengths: balance the sequences;
- transient GC pauses: planned GC;
- slow communication: placement.

:data:`REMEDIES` holds that table as data: one :class:`Remedy` per answer,
keyed by the cause names of :data:`straggle_edu.traces.synthetic.CAUSES`, so
that the notebooks show it (06b, 09b) and a translation replaces the text in
one place.

What-if analysis measures against *rebalanced work*: every op at the mean
of its peers, the straggler included. Replacing the slow GPU with a healthy
one gains more; :func:`replaced_slowdown` measures that, and it is the
speed-up that the restart arithmetic needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..i18n import N_, _
from .._validate import finite, in_range, nonnegative, one_of, positive, require, whole

__all__ = ["Remedy", "RemedyTable", "REMEDIES", "remedy_for", "RestartChoice", "restart_or_keep",
           "replaced_slowdown"]


@dataclass(frozen=True)
class Remedy:
    """One row of the remedy table.

    Attributes
    ----------
    cause : str
        Stable key, a name of :data:`straggle_edu.traces.synthetic.CAUSES`.
    answer : str
        What the debugging answers say for this cause.
    remedy : str
        What to do about it.
    notebook : str
        The notebook that teaches the remedy (a file name, "" when none does).

    Examples
    --------
    >>> remedy_for("gc-pauses").remedy.split(":")[0]
    'Planned GC'
    """

    cause: str
    answer: str
    remedy: str
    notebook: str = ""

    def __str__(self):
        """The remedy, in the reader's language (the fields stay English: they are the catalog's keys)."""
        return _(self.remedy)


@dataclass(frozen=True)
class RemedyTable:
    """The remedy table: shows itself as a Markdown table in a notebook.

    Examples
    --------
    >>> print(str(REMEDIES).splitlines()[0])
    | The debugging answers say | Remedy | Where |
    >>> len(REMEDIES.rows)
    5
    """

    rows: tuple

    def __iter__(self):
        return iter(self.rows)

    def _repr_markdown_(self):
        return str(self)

    def __str__(self):
        lines = ["| {} | {} | {} |".format(_("The debugging answers say"), _("Remedy"), _("Where")), "|---|---|---|"]
        for r in self.rows:
            where = f"[{r.notebook[:3].rstrip('_')}]({r.notebook})" if r.notebook else ""
            lines.append(f"| {_(r.answer)} | {_(r.remedy)} | {where} |")
        return "\n".join(lines)


#: Each debugging answer and its remedy, in the order of the issue's table.
REMEDIES = RemedyTable((
    Remedy("slow-worker",
           N_("One worker, persistent: the same worker is slowest step after step; fixing it (M_W) removes the slowdown."),
           N_("Cordon or replace it: restart from the last checkpoint without it, when the remaining work pays "
              "for the restart (`restart_or_keep`)."),
           "06b_diagnose_and_act.ipynb"),
    Remedy("last-stage",
           N_("The last pipeline stage, persistent, compute: fixing the last stage (M_S) removes the slowdown."),
           N_("Repartition: move layers off the last stage, which also runs the output layer and the loss."),
           "07_mitigations.ipynb"),
    Remedy("seq-imbalance",
           N_("Compute, on many workers in turn: the microbatches of one worker vary a lot."),
           N_("Balance the sequences: pack documents by their cost (tokens and attention), not by count."),
           "07_mitigations.ipynb"),
    Remedy("gc-pauses",
           N_("Transient: a few steps spike, on a different worker each time; the `gc` op."),
           N_("Planned GC: turn automatic GC off and collect on every worker at the same step."),
           "06b_diagnose_and_act.ipynb"),
    Remedy("slow-communication",
           N_("Communication: a send/receive or a collective explains the slowdown, in one group."),
           N_("Placement: put the group's ranks on healthy, nearby links (one host or switch), away from the slow one."),
           ""),
))

_ALIASES = {"slow-link": "slow-communication"}


def remedy_for(cause):
    """The row of :data:`REMEDIES` for one debugging answer.

    Parameters
    ----------
    cause : str
        A cause name: ``"slow-worker"``, ``"last-stage"``,
        ``"seq-imbalance"``, ``"gc-pauses"``, ``"slow-communication"``
        (``"slow-link"`` is the same row).

    Examples
    --------
    >>> remedy_for("last-stage").remedy.split(":")[0]
    'Repartition'
    >>> remedy_for("slow-link").cause
    'slow-communication'
    """
    rows = {r.cause: r for r in REMEDIES}
    one_of("cause", cause, [*rows, *_ALIASES])
    return rows[_ALIASES.get(cause, cause)]


@dataclass(frozen=True)
class RestartChoice:
    """Keep running with the slow worker, or restart without it.

    Attributes
    ----------
    keep_hours : float
        Wall-clock hours to finish if the job keeps running: remaining x speed-up.
    restart_hours : float
        Wall-clock hours to finish after a restart: restart + lost + remaining.
    saved_hours : float
        keep_hours - restart_hours (negative when restarting costs time).
    saved_gpu_hours : float
        saved_hours x gpus.
    break_even_hours : float
        The remaining work at which both take as long: (restart + lost) / (speed-up - 1).
    choice : str
        ``"replace"`` when restarting finishes sooner, else ``"keep running"``.
    """

    keep_hours: float
    restart_hours: float
    saved_hours: float
    saved_gpu_hours: float
    break_even_hours: float
    choice: str

    def __str__(self):
        """The choice as a sentence, in the reader's language (``choice`` stays the English key).

        Examples
        --------
        >>> print(restart_or_keep(240, 1.1, restart=0.5, lost=1.0, gpus=128))
        replace: 264 h keeping the slow worker, 241.5 h after a restart (saves 2,880 GPU-hours)
        """
        template = {"replace": N_("replace: {keep:,.6g} h keeping the slow worker, {restart:,.6g} h after a restart "
                                  "(saves {gpu_hours:,.6g} GPU-hours)"),
                    "keep running": N_("keep running: {keep:,.6g} h keeping the slow worker, {restart:,.6g} h after a "
                                       "restart (a restart would cost {gpu_hours:,.6g} GPU-hours)")}[self.choice]
        return _(template).format(keep=self.keep_hours, restart=self.restart_hours, gpu_hours=abs(self.saved_gpu_hours))


def restart_or_keep(remaining, speedup, restart, lost=0.0, gpus=1):
    """The restart-against-keep-running arithmetic for one persistent slow worker.

    Keeping the slow worker, the remaining work takes ``remaining x speedup``
    hours. Cordoning it costs a restart (``restart`` hours to reschedule and
    reload the checkpoint) plus the work done since the last checkpoint
    (``lost``, redone), and then the remaining work at full speed. Replace
    when ``remaining x (speedup - 1) > restart + lost``.

    Parameters
    ----------
    remaining : float
        Work left, in hours at full speed (without the slow worker), > 0.
    speedup : float
        How much slower the job runs with the slow worker than with a healthy
        replacement, >= 1 (:func:`replaced_slowdown`; not the what-if S,
        which compares with rebalanced work).
    restart : float
        Hours to restart: reschedule, reload the checkpoint, warm up, >= 0.
    lost : float
        Hours of work since the last checkpoint, redone after a restart, >= 0.
    gpus : int
        GPUs in the job, to count GPU-hours.

    Returns
    -------
    RestartChoice

    Examples
    --------
    Ten days of work, 10% slower with the slow worker: 10 days become 11.
    A 30-minute restart that loses an hour of work pays for itself many times:

    >>> c = restart_or_keep(240, 1.1, restart=0.5, lost=1.0)
    >>> round(c.keep_hours, 6), c.restart_hours, round(c.saved_hours, 6), c.choice
    (264.0, 241.5, 22.5, 'replace')
    >>> round(c.break_even_hours, 6)
    15.0
    >>> restart_or_keep(10, 1.1, restart=0.5, lost=1.0).choice
    'keep running'
    """
    positive("remaining", remaining)
    finite("remaining", remaining)
    in_range("speedup", speedup, 1.0, 1e6)
    nonnegative("restart", restart)
    nonnegative("lost", lost)
    finite("restart", restart)
    finite("lost", lost)
    whole("gpus", gpus)
    keep = float(remaining) * float(speedup)
    again = float(restart) + float(lost) + float(remaining)
    gain = float(speedup) - 1.0
    even = (float(restart) + float(lost)) / gain if gain > 0 else float("inf")
    return RestartChoice(keep, again, keep - again, (keep - again) * int(gpus), even,
                         "replace" if keep > again else "keep running")


def replaced_slowdown(rank_times, worker=None):
    """How much faster the job runs when one worker is replaced by a healthy one.

    Each step's time is its slowest rank. Replacing ``worker`` gives it, in
    every step, the median time of its peers. The ratio of the mean step
    times is the replacement's speed-up. What-if analysis instead compares
    with rebalanced work (each rank at the mean of all, the slow one
    included), so it reports less: one 2x rank among four is 1.6 there and
    2.0 here.

    Parameters
    ----------
    rank_times : array_like, shape (steps, ranks)
        Each rank's compute time per step, in seconds, > 0; at least 2 ranks.
    worker : int, optional
        The rank to replace; the slowest rank on average when None.

    Returns
    -------
    float
        Mean recorded step time / mean step time with the worker replaced (>= 1).

    Examples
    --------
    >>> replaced_slowdown([[2.0, 1.0, 1.0, 1.0]])
    2.0
    >>> replaced_slowdown([[2.0, 1.0], [1.0, 1.0]], worker=1)
    1.0
    """
    t = np.asarray(rank_times, dtype=float)
    require(t.ndim == 2 and t.shape[1] >= 2, "rank_times", t, "a (steps, ranks) table with at least 2 ranks")
    positive("rank_times", t)
    finite("rank_times", t)
    w = int(np.argmax(t.mean(axis=0))) if worker is None else worker
    whole("worker", w, 0, t.shape[1] - 1)
    fixed = t.copy()
    fixed[:, w] = np.median(np.delete(t, w, axis=1), axis=1)
    return float(t.max(axis=1).mean() / fixed.max(axis=1).mean())
