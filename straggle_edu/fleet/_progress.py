"""The fleet's progress: a bar on a terminal, log lines elsewhere (a SLURM log, ``nohup``, CI), nothing when asked.

On a terminal (``progress=True``, or ``"bar"``), a tqdm bar of jobs done with
the rate and the ETA. Without one (``progress="log"``, what the CLI picks
when stderr is not a terminal), a line on stderr every ``every`` seconds
(:data:`LOG_SECONDS`) while jobs run, and one when they are done, in
logfmt (``key=value``, space-separated; seconds and rates as plain numbers)::

    fleet progress: done=640 total=1003 errors=3 elapsed_s=11.2 jobs_per_s=57.1 eta_s=6.4

``eta_s`` is absent until the first job is done. The keys are English and
stay so in every language, for the programs that read them.
"""

from __future__ import annotations

import sys
import time

from ..i18n import _, get_language

__all__ = ["LOG_SECONDS", "LogLines", "progress"]

LOG_SECONDS = 10.0


class LogLines:
    """Progress as log lines: one every ``every`` seconds (checked at each update and tick), one at the end.

    Examples
    --------
    >>> import io
    >>> now = [0.0]
    >>> out = io.StringIO()
    >>> p = LogLines(4, every=10, file=out, clock=lambda: now[0])
    >>> now[0] = 11.0; p.update(error=True); now[0] = 12.0; p.update(); p.tick(); now[0] = 20.0; p.close()
    >>> print(out.getvalue(), end="")
    fleet progress: done=1 total=4 errors=1 elapsed_s=11.0 jobs_per_s=0.0909 eta_s=33.0
    fleet progress: done=2 total=4 errors=1 elapsed_s=20.0 jobs_per_s=0.1 eta_s=20.0
    """

    def __init__(self, total, every=LOG_SECONDS, *, file=None, clock=time.monotonic):
        self.total, self.every, self.file, self.clock = total, every, file, clock
        self.start = clock()
        self.due = self.start + every
        self.done = self.errors = 0

    def update(self, error=False):
        self.done += 1
        self.errors += bool(error)
        self.tick()

    def tick(self):
        if self.clock() >= self.due:
            self._line()

    def _line(self):
        now = self.clock()
        elapsed = now - self.start
        words = [f"done={self.done}", f"total={self.total}", f"errors={self.errors}", f"elapsed_s={elapsed:.1f}"]
        if self.done and elapsed > 0:
            rate = self.done / elapsed
            words += [f"jobs_per_s={rate:.3g}", f"eta_s={(self.total - self.done) / rate:.1f}"]
        print("fleet progress: " + " ".join(words), file=self.file or sys.stderr, flush=True)
        self.due = now + self.every

    def close(self):
        self._line()

    def stop(self):
        """The run stopped early: no closing line (the reason is said after)."""


class _Bar:
    def __init__(self, total, desc, unit):
        from tqdm.auto import tqdm

        # tqdm writes "{desc}: " and "{rate}{unit}/s": Chinese wants "作业集：" and "4.3 个作业/s" (zh review S5)
        chinese = get_language() == "zh"
        fmt = "{desc}：{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
        self.bar = tqdm(total=total, unit=(" " if chinese else "") + unit, desc=desc, file=sys.stderr, smoothing=0.05,
                        bar_format=fmt if chinese else None)

    def update(self, error=False):
        self.bar.update(1)

    def tick(self):
        pass

    def close(self):
        self.bar.close()

    def stop(self):
        """The run stopped early: the bar as it stands, and a new line, so that the reason printed next has its own
        line and the bar is not drawn again after it (when tqdm closes it at exit)."""
        self.bar.close()


class _Quiet:
    def update(self, error=False):
        pass

    def tick(self):
        pass

    def close(self):
        pass

    def stop(self):
        pass


def progress(mode, total, every=LOG_SECONDS, *, desc=None, unit=None):
    """The progress of ``total`` jobs: ``True`` or ``"bar"`` a tqdm bar (log lines without tqdm), ``"log"`` log
    lines every ``every`` seconds, ``False`` nothing. Each has ``update(error)``, ``tick()``, ``close()`` and
    ``stop()`` (an early end).
    ``desc`` and ``unit``: the bar's words (default: the fleet's, translated).

    Examples
    --------
    >>> type(progress(False, 10)).__name__, type(progress("log", 10)).__name__
    ('_Quiet', 'LogLines')
    """
    if mode not in (True, False, "bar", "log"):
        raise ValueError(f"progress must be True, False, 'bar' or 'log', got {mode!r}")
    if mode is False:
        return _Quiet()
    if mode != "log":
        try:
            return _Bar(total, _("fleet") if desc is None else desc, _("jobs") if unit is None else unit)
        except ImportError:  # pragma: no cover
            pass
    return LogLines(total, every)
