"""Cost accounting: what stragglers cost in GPU-hours, dollars and days.

A job that holds ``gpus`` accelerators for ``days`` days and loses a
fraction ``lost_fraction`` of that time to waiting at barriers has wasted::

    gpu_hours_lost = gpus * days * 24 * lost_fraction

:func:`cost_of_stragglers` returns all of it at once as a
:class:`StragglerCost`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import in_range, nonnegative

__all__ = ["StragglerCost", "cost_of_stragglers", "lost_fraction_from_slowdown"]

HOURS_PER_DAY = 24


@dataclass(frozen=True)
class StragglerCost:
    """The bill for a job's stragglers.

    Attributes
    ----------
    gpus, days, lost_fraction, usd_per_gpu_hour
        The inputs, as given.
    gpu_hours : float
        GPU-hours allocated: ``gpus * days * 24``.
    gpu_hours_lost : float
        ``gpu_hours * lost_fraction``: GPU-hours spent waiting.
    usd_lost : float
        ``gpu_hours_lost * usd_per_gpu_hour``, in US dollars.
    days_delay : float
        ``days * lost_fraction``: the days of this run spent waiting.

    Examples
    --------
    >>> bill = cost_of_stragglers(4096, 10, 0.10, 2.0)
    >>> bill.days_without_stragglers, round(bill.days_stretched, 2)   # 10 days of work at 90%: 9 useful
    (9.0, 11.11)
    """

    gpus: float
    days: float
    lost_fraction: float
    usd_per_gpu_hour: float
    gpu_hours: float
    gpu_hours_lost: float
    usd_lost: float
    days_delay: float

    @property
    def days_without_stragglers(self):
        """Days the same work would take with no straggling: ``days * (1 - lost_fraction)``."""
        return self.days * (1.0 - self.lost_fraction)

    @property
    def days_stretched(self):
        """The other framing: a job planned at ``days`` without stragglers
        takes ``days / (1 - lost_fraction)`` with them."""
        return self.days / (1.0 - self.lost_fraction)


def cost_of_stragglers(gpus, days, lost_fraction, usd_per_gpu_hour):
    """What stragglers cost a job of ``gpus`` GPUs running for ``days`` days.

    Parameters
    ----------
    gpus : float
        GPUs allocated, >= 0.
    days : float
        Wall-clock days the job holds them, >= 0.
    lost_fraction : float
        Fraction of the time lost to stragglers, in [0, 1).
    usd_per_gpu_hour : float
        Price of one GPU-hour in US dollars, >= 0.

    Returns
    -------
    StragglerCost

    Examples
    --------
    The article's example: 4096 GPUs for 10 days, 10% lost, at $2 per GPU-hour.

    >>> bill = cost_of_stragglers(4096, 10, 0.10, 2.0)
    >>> bill.gpu_hours, bill.gpu_hours_lost, bill.usd_lost, bill.days_delay
    (983040.0, 98304.0, 196608.0, 1.0)
    >>> cost_of_stragglers(4096, 10, 0.10, 5.0).usd_lost
    491520.0
    """
    gpus = nonnegative("gpus", gpus)
    days = nonnegative("days", days)
    lost_fraction = in_range("lost_fraction", lost_fraction, 0.0, 1.0, high_open=True)
    usd_per_gpu_hour = nonnegative("usd_per_gpu_hour", usd_per_gpu_hour)
    gpu_hours = gpus * days * HOURS_PER_DAY
    lost = gpu_hours * lost_fraction
    return StragglerCost(
        gpus=gpus,
        days=days,
        lost_fraction=lost_fraction,
        usd_per_gpu_hour=usd_per_gpu_hour,
        gpu_hours=gpu_hours,
        gpu_hours_lost=lost,
        usd_lost=lost * usd_per_gpu_hour,
        days_delay=days * lost_fraction,
    )


def lost_fraction_from_slowdown(slowdown):
    """The fraction of time lost when a job runs ``slowdown`` times slower
    than it would with no stragglers: ``1 - 1/slowdown``.

    Examples
    --------
    >>> lost_fraction_from_slowdown(1.6)
    0.375
    """
    slowdown = in_range("slowdown", slowdown, 1.0)
    return 1.0 - 1.0 / slowdown
