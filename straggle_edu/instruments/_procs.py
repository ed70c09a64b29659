"""Child processes, the one way the instruments start and stop them.

- :func:`reap`: stop and join every child process, never raising, so no
  child outlives a run (the barrier lab and the SGD experiment both end
  here).
- :func:`sigterm_as`: while a command runs, SIGTERM calls a handler (such
  as one that raises ``KeyboardInterrupt``, so that the run cleans up as on
  Ctrl-C); the old handler comes back afterwards.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

__all__ = ["reap", "sigterm_as"]


def reap(procs, grace=1.0, *, terminate=True, close=False):
    """Stop and join every process in ``procs``. Never raises.

    Parameters
    ----------
    procs : sequence of multiprocessing.Process
        Started (or already finished) processes.
    grace : float
        Seconds the processes get, all together, before they are killed.
    terminate : bool
        True: terminate them all at once, then join, then kill whatever is
        left. False: first wait ``grace`` for them to finish on their own,
        then terminate (1 s each), then kill.
    close : bool
        Also release each process object (``Process.close``).

    Examples
    --------
    >>> import multiprocessing as mp, time
    >>> p = mp.get_context("spawn").Process(target=time.sleep, args=(60,))
    >>> p.start()
    >>> reap([p], grace=0.1)
    >>> p.is_alive(), p.exitcode is not None
    (False, True)
    """
    if terminate:
        for p in procs:
            try:
                if p.is_alive():
                    p.terminate()
            except Exception:  # pragma: no cover - already gone
                pass
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.join(max(0.0, deadline - time.monotonic()))
            if not terminate and p.is_alive():
                p.terminate()
                p.join(1.0)
            if p.is_alive():
                p.kill()
                p.join(5.0)
        except Exception:  # pragma: no cover
            pass
    for p in procs if close else ():
        try:
            p.close()
        except Exception:  # pragma: no cover - still alive after kill + join
            pass


@contextlib.contextmanager
def sigterm_as(handler):
    """Within the block, SIGTERM calls ``handler``; the old handler comes back after.

    Only the main thread can set signal handlers: elsewhere the block runs
    with the handlers as they are.

    Parameters
    ----------
    handler : callable
        A signal handler, ``handler(signum, frame)``.

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> with sigterm_as(signal.default_int_handler):
    ...     signal.getsignal(signal.SIGTERM) is signal.default_int_handler
    True
    >>> signal.getsignal(signal.SIGTERM) is before
    True
    """
    old = signal.signal(signal.SIGTERM, handler) if threading.current_thread() is threading.main_thread() else None
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
