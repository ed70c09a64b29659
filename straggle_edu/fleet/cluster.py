"""Which cluster the fleet runs on, how it connects, and how it fails: one line a platform engineer can act on.

Where the scheduler's address comes from (:func:`scheduler_address`), the first that is given:

1. ``--scheduler tcp://HOST:PORT`` (``scheduler=``);
2. ``--scheduler-file PATH`` (``scheduler_file=``): the JSON file that
   ``dask scheduler --scheduler-file``, dask-mpi and batch scripts write, its
   ``"address"``; waited for until it appears, within the timeout;
3. the environment variable ``DASK_SCHEDULER_ADDRESS``, unless ``--workers``
   asks for a LocalCluster (or 0: this process) in so many words;
4. else a new ``distributed.LocalCluster`` on 127.0.0.1.

Connecting (:func:`connect`) has one budget, ``timeout`` seconds
(``--timeout``, default :data:`TIMEOUT_SECONDS`), for the connection and the
wait for the first worker. Each failure is a :class:`ClusterError`, one
line that the command prints as it is (exit status 1):

- a refused connection: tried again for :data:`REFUSED_SECONDS` (a
  scheduler that is starting), then "connection refused";
- a host that does not resolve, or that does not answer: at once, or when
  the timeout runs out;
- a scheduler with no worker: "0 workers on tcp://...; waiting" after
  :data:`NOTICE_SECONDS`, again every :data:`REPEAT_SECONDS`, and the error
  when the timeout runs out;
- a scheduler lost during the run (:class:`Watch`): at once, with no row
  for the jobs it was running.

:func:`local_cluster` starts the LocalCluster's worker processes with
SIGINT blocked, so that a terminal's Ctrl-C (sent to the whole process
group) stops the fleet, which closes its cluster, instead of printing each
worker's traceback. :func:`stopping_signals` turns SIGTERM (Slurm's ``scancel``
and time limit, ``kill``, a container's stop) into :class:`Terminated`, so
the fleet writes the tables of the jobs that finished before it exits, and
makes sure neither it nor a Ctrl-C is lost (:func:`check_signals`).

Dask is imported only inside the functions that need it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["ClusterError", "Terminated", "scheduler_address", "read_scheduler_file", "connect", "local_cluster",
           "close_local", "Watch", "stopping_signals", "check_signals", "say", "TIMEOUT_SECONDS", "REFUSED_SECONDS",
           "NOTICE_SECONDS", "REPEAT_SECONDS", "HURRY_SECONDS", "ENV_ADDRESS", "SMALL_FLEET_BYTES"]

TIMEOUT_SECONDS = 60.0  # connection and the wait for the first worker, together
REFUSED_SECONDS = 1.0  # a refused connection is tried again this long: a scheduler may be starting
NOTICE_SECONDS = 3.0  # a wait (for a worker, a scheduler file) says so after this long
REPEAT_SECONDS = 30.0  # and again this often
HURRY_SECONDS = 0.5  # a LocalCluster's worker, on Ctrl-C or SIGTERM, stops within this or is terminated
LOCAL_START_SECONDS = 300.0  # a LocalCluster's workers start within this (about 2 s on 2 idle cores)
ENV_ADDRESS = "DASK_SCHEDULER_ADDRESS"
_POLL = 0.25


class ClusterError(RuntimeError):
    """The cluster failed: refused, unreachable, no worker, lost. Its text is one line naming the address.

    Examples
    --------
    >>> str(ClusterError("0 workers on tcp://10.0.0.5:8786 after 60 s (--timeout)"))
    '0 workers on tcp://10.0.0.5:8786 after 60 s (--timeout)'
    """


class Terminated(BaseException):
    """SIGTERM arrived (:func:`stopping_signals`). A BaseException, like KeyboardInterrupt: no ``except Exception``
    that keeps a job's error as its row swallows it.

    Where the fleet wrote the tables of the jobs finished before passing it on, ``finished`` of ``total`` jobs
    are in ``tables`` (None, None, () where nothing was written down).
    """

    def __init__(self, finished=None, total=None, tables=()):
        super().__init__()
        self.finished, self.total, self.tables = finished, total, tuple(str(t) for t in tables)


# A fleet whose traces hold less than this in all runs in this process when no cluster is named (no scheduler,
# no --workers): a LocalCluster's start (a process per core, with numpy, pandas and pyarrow imported, by a fork
# server once where there is one, :func:`_start_method`; 1-3 s of wall time on 2 cores) would take longer than the
# work (the 200-job demo, 11 MB, is 1.5-2 s on one core).
SMALL_FLEET_BYTES = 16 * 2**20

def say(text):
    """Print one status line on stderr at once (the progress bar's stream; stdout holds the results)."""
    print(text, file=sys.stderr, flush=True)


def _seconds(x):
    return f"{x:g}"


def scheduler_address(scheduler=None, scheduler_file=None, workers=None, environ=None):
    """``(address or None, where it came from)``, by the precedence of the module docstring.

    With ``scheduler_file`` the address is read later (:func:`read_scheduler_file`): the address is None and the
    origin names the file. ``(None, None)``: a LocalCluster (or this process, ``workers=0``).

    Examples
    --------
    >>> scheduler_address("tcp://a:8786", "f.json", environ={"DASK_SCHEDULER_ADDRESS": "tcp://c:8786"})
    ('tcp://a:8786', '--scheduler')
    >>> scheduler_address(None, "f.json", environ={"DASK_SCHEDULER_ADDRESS": "tcp://c:8786"})
    (None, '--scheduler-file f.json')
    >>> scheduler_address(environ={"DASK_SCHEDULER_ADDRESS": "tcp://c:8786"})
    ('tcp://c:8786', 'DASK_SCHEDULER_ADDRESS')
    >>> scheduler_address(workers=2, environ={"DASK_SCHEDULER_ADDRESS": "tcp://c:8786"})
    (None, None)
    """
    environ = os.environ if environ is None else environ
    if scheduler is not None:
        return str(scheduler), "--scheduler"
    if scheduler_file is not None:
        return None, f"--scheduler-file {scheduler_file}"
    env = environ.get(ENV_ADDRESS, "").strip()
    if env and workers is None:
        return env, ENV_ADDRESS
    return None, None


def read_scheduler_file(path, deadline, timeout):
    """The ``"address"`` in the scheduler file ``path``; waits for the file until ``deadline`` (``time.monotonic``).

    Examples
    --------
    >>> import tempfile, pathlib, time
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "scheduler.json"
    >>> _ = p.write_text('{"type": "Scheduler", "address": "tcp://10.0.0.5:8786"}')
    >>> read_scheduler_file(p, time.monotonic() + 1, 1)
    'tcp://10.0.0.5:8786'
    """
    p = Path(path)
    _wait(p.exists, deadline, lambda waited: f"waiting for the scheduler file {p} ({waited:.0f} s of "
                                             f"{_seconds(timeout)}, --timeout)",
          f"the scheduler file {p} did not appear within {_seconds(timeout)} s (--timeout); start the scheduler with: "
          f"dask scheduler --scheduler-file {p}")
    for _ in range(40):  # half written as it is read: a moment later it is whole
        try:
            info = json.loads(p.read_text(encoding="utf-8"))
            break
        except ValueError:
            info = None
            time.sleep(0.05)
        except OSError as exc:
            raise ValueError(f"--scheduler-file {p}: cannot be read ({exc.strerror})") from None
    address = info.get("address") if isinstance(info, dict) else None
    if isinstance(address, str) and address:
        return address
    raise ValueError(f"--scheduler-file {p} must be JSON with an \"address\" (as 'dask scheduler --scheduler-file' "
                     f"writes it), got {p.read_text(encoding='utf-8', errors='replace')[:80]!r}")


def _host_port(address):
    """``(host, port)`` of a tcp/tls/ws/wss address (Dask's default port 8786), or None for another scheme."""
    parts = urlsplit(address)
    if parts.scheme not in ("tcp", "tls", "ws", "wss") or not parts.hostname:
        return None
    try:
        return parts.hostname, parts.port or 8786
    except ValueError:
        raise ValueError(f"scheduler must be an address like tcp://HOST:PORT, got {address!r}") from None


def _try_connect(host, port, seconds):
    """``None`` when a TCP connection to ``host:port`` opens, else the exception; in a thread of its own, so that a
    slow name lookup cannot outlast the deadline."""
    box = {}

    def attempt():
        try:
            socket.create_connection((host, port), timeout=max(0.05, seconds)).close()
            box["error"] = None
        except OSError as exc:
            box["error"] = exc

    worker = threading.Thread(target=attempt, daemon=True, name="straggle-edu fleet: scheduler probe")
    worker.start()
    worker.join(seconds)
    return box.get("error", TimeoutError())


def _probe(address, deadline, timeout, shown):
    """Open and close a TCP connection to the scheduler: a refused, unresolvable or silent address fails here, in
    one line, instead of in Dask's retries and traceback. ``shown``: the address as the messages name it."""
    target = _host_port(address)
    if target is None:
        return
    host, port = target
    refused_until = min(deadline, time.monotonic() + REFUSED_SECONDS)
    while True:
        error = _try_connect(host, port, deadline - time.monotonic())
        if error is None:
            return
        if isinstance(error, ConnectionRefusedError):
            if time.monotonic() < refused_until:
                time.sleep(_POLL)
                continue
            raise ClusterError(f"cannot connect to the scheduler {shown}: connection refused (nothing listens on "
                               f"{host}:{port}; is 'dask scheduler' running there?)")
        if isinstance(error, socket.gaierror):
            raise ClusterError(f"cannot connect to the scheduler {shown}: the host {host!r} does not resolve "
                               f"({error.strerror})")
        if isinstance(error, (TimeoutError, socket.timeout)):
            raise ClusterError(f"no answer from the scheduler {shown} within {_seconds(timeout)} s (--timeout): "
                               f"the host is unreachable, or a firewall drops the connection")
        raise ClusterError(f"cannot connect to the scheduler {shown}: {error.strerror or error}")


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def connect(address, origin, timeout=TIMEOUT_SECONDS, scheduler_file=None):
    """``(client, shown)``: a ``distributed.Client`` of the running scheduler at ``address`` (or in
    ``scheduler_file``), with at least one worker, and the address as messages name it (with its origin, unless
    ``--scheduler``); :class:`ClusterError` when that is not so within ``timeout`` seconds."""
    from distributed import Client

    deadline = time.monotonic() + timeout
    if address is None:
        address = read_scheduler_file(scheduler_file, deadline, timeout)
    if not address.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise ValueError(f"scheduler must be an address like tcp://HOST:PORT, got {address!r} (from {origin})")
    shown = address if origin == "--scheduler" else f"{address} (from {origin})"
    _probe(address, deadline, timeout, shown)
    client = _client(Client, address, deadline, timeout, shown)
    try:
        workers = _wait_for_workers(client, address, shown, deadline, timeout)
    except BaseException:
        client.close()
        raise
    say(f"fleet: on the scheduler {shown}, {workers} worker{'' if workers == 1 else 's'}")
    return client, shown


def _client(Client, address, deadline, timeout, shown):
    """``Client(address)``, made in a thread of its own and waited for until ``deadline``: a server that accepts
    the connection and never speaks Dask's protocol holds ``Client()`` past its own timeout."""
    box = {}

    def make():
        try:
            box["client"] = Client(address, timeout=max(1.0, deadline - time.monotonic()))
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    maker = threading.Thread(target=make, daemon=True, name="straggle-edu fleet: client")
    maker.start()
    while maker.is_alive() and time.monotonic() < deadline + 1:
        maker.join(0.1)
    if "client" in box:
        return box["client"]
    error = box.get("error")
    if error is not None and not isinstance(error, Exception):
        raise error
    if error is not None and not isinstance(error, (OSError, TimeoutError)):
        # a server that speaks first and not Dask (sshd's banner, an HTTP proxy): Dask reads its first bytes as a
        # message length and fails to allocate exabytes, or fails to unpack them
        raise ClusterError(f"cannot connect to the scheduler {shown}: what answers there does not speak Dask's "
                           f"protocol; is it the scheduler's port (8786 by default)?")
    why = "no answer in Dask's protocol" if error is None else _one_line(error)
    raise ClusterError(f"no answer from the scheduler {shown} within {_seconds(timeout)} s (--timeout): {why}")


def _workers(client, address):
    try:
        return len(client.nthreads())
    except Exception as exc:  # the scheduler went away while we asked
        raise ClusterError(f"lost the scheduler {address}: {_one_line(exc)}") from None


def _wait_for_workers(client, address, shown, deadline, timeout):
    """The number of workers, once there is one."""
    return _wait(lambda: _workers(client, shown), deadline,
                 lambda waited: f"0 workers on {shown}; waiting ({waited:.0f} s of {_seconds(timeout)}, --timeout)",
                 f"0 workers on {shown} after {_seconds(timeout)} s (--timeout); start some with: dask worker {address}")


def _wait(ready, deadline, waiting, failed):
    """``ready()``'s first true value, asked every :data:`_POLL` s; the line ``waiting(seconds so far)`` after
    :data:`NOTICE_SECONDS` and every :data:`REPEAT_SECONDS`; ClusterError(``failed``) at the deadline."""
    start = time.monotonic()
    notice = start + NOTICE_SECONDS
    while not (value := ready()):
        check_signals()
        now = time.monotonic()
        if now >= deadline:
            raise ClusterError(failed)
        if now >= notice:
            say(waiting(now - start))
            notice = now + REPEAT_SECONDS
        time.sleep(min(_POLL, deadline - now))
    return value


@contextlib.contextmanager
def _threads_block_sigint():
    """The threads started inside the block, and the processes they spawn, block SIGINT for life.

    A signal mask is kept by the threads a thread starts and across fork and
    exec, so the LocalCluster's loop thread, the threads that spawn its
    worker processes (a worker the nanny restarts too), and those processes
    never receive SIGINT. The resource tracker is started first: starting it
    unblocks SIGINT in the thread that does. This thread gets its mask back
    after the block; a Ctrl-C meanwhile still reaches it through its other
    threads (Python runs the handler in the main thread).
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover (Windows)
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# The LocalCluster's workers, as each nanny starts one:
# - glibc's malloc set as for `straggle-edu analyze`, with one arena (straggle_edu.traces.blocks.WORKER_ENV), not with the
#   MALLOC_TRIM_THRESHOLD_=65536 of distributed, which also stops glibc from raising its mmap threshold: every
#   large array was then mapped and unmapped anew, and the block tasks of the 16,384-rank job faulted in every page
#   they used (5 million page faults, as much system time as user time). (These were meant to hold since the
#   fleet's failures landed, but the nannies read them as the workers start, after the block that set them ended.)
# - without the statistical profiler (a stack sample every 10 ms, for the dashboard): CPU the jobs need.
# - started as :func:`_start_method` says (a fork server where there is one).
# And the cluster's periodic chores, less often (the scheduler, the nannies and the workers each run them): the
# event loop's health check every 1 s, not 20 ms (it warns of a loop blocked for `tick.limit`, 3 s, all the
# same); each process's memory (the nanny's and the worker's memory limits) every 0.5 s, not 0.1 s; the
# dashboard's system statistics every 2 s, not 0.5 s. An idle LocalCluster of 2 workers then took 0.1 s of CPU
# in 10 s instead of 0.4-0.6 s (measured on 2 cores), CPU that a fleet's run pays for as long as it lasts.
# dashboard_address=None still asks for port 8787 and warns when another cluster holds it; a free port does not.
def _worker_settings(method="spawn"):
    from ..traces.blocks import WORKER_ENV

    return {**{f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENV.items()},
            "distributed.worker.profile.enabled": False, "distributed.worker.multiprocessing-method": method,
            "distributed.admin.tick.interval": "1s", "distributed.worker.memory.monitor-interval": "500ms",
            "distributed.admin.system-monitor.interval": "2s"}


# How the LocalCluster's worker processes start. Dask's default, "spawn", starts each as a new interpreter, which
# imports distributed, numpy, pandas, pyarrow and the fleet's task modules anew: about 0.7 s of CPU per worker
# before its first job. Where the platform has one (POSIX), the fleet uses a fork server instead: one process,
# started for the cluster, imports them once (:data:`_PRELOAD`, after distributed's own list), and each worker is
# forked from it with them imported. The server is single-threaded, so the fork is safe (unlike "fork" from the
# fleet's process, whose threads may hold locks). Where it can, the fleet forks the server from its own process
# (:func:`_fork_here`), which has imported those modules already: the server imported them anew, 0.27-0.30 s of
# CPU, and the fleet of the 16,384-rank trace (2 workers) took 9.3 s of CPU rather than 9.9 (medians of 5
# interleaved runs on 2 cores). Else it is started by the nanny's first worker, from the cluster's loop thread, so it has the
# workers' environment (the malloc settings above) and their signal mask (SIGINT blocked), and its children inherit
# both; a forked server is given both by hand. :func:`close_local` stops it. A fork server that is already running
# (started by something else in this process, with another environment) is not used: spawn then.
_PRELOAD = ("pyarrow.parquet", "straggle_edu.traces.blocks", "straggle_edu.traces.replay", "straggle_edu.traces.whatif",
            "straggle_edu.fleet.engine")
# Of distributed's own list, what the workers never use: pandas (0.2 s of the server's CPU) is imported only by
# pyarrow's pa.array, which the traces' readers and the tables no longer call (traces._table.arrow_array).
_NOT_PRELOADED = ("pandas",)


def _fork_server():
    """multiprocessing's fork server object, or None where there is none or it cannot be told whether it runs."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    if not (hasattr(server, "_forkserver_pid") and callable(getattr(server, "_stop", None))):
        return None
    return server


def _start_method():
    """``"forkserver"`` where a fork server of our own can be started (none runs), else ``"spawn"``; with the server
    set to preload the workers' modules."""
    server = _fork_server()
    if server is None or server._forkserver_pid is not None:
        return "spawn"
    import dask
    import distributed.utils
    from distributed.versions import optional_packages, required_packages

    if hasattr(distributed.utils, "_forkserver_preload_set"):
        # distributed's own list, which its get_mp_context would set (after importing each package here, to see
        # that it imports: pandas, 0.3 s of CPU, in a process that has no use for it), and ours
        listed = ["distributed", *required_packages, *(p for p in optional_packages if p not in _NOT_PRELOADED)]
        distributed.utils._forkserver_preload_set = True
    else:  # pragma: no cover (another distributed): its list as it sets it, and ours
        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
            distributed.utils.get_mp_context()
        listed = list(getattr(server, "_preload_modules", None) or ["distributed"])
    preload = list(dict.fromkeys(listed + list(_PRELOAD)))
    server.set_forkserver_preload(preload)  # (a server of ours that died is started anew, the usual way, with them)
    _fork_here(server, preload)
    return "forkserver"


# multiprocessing's fork server as Python 3.10-3.13 run it: its main() and the ForkServer fields that say where it
# listens. (3.14's takes an authentication key, which a server forked here would go without: not forked there.)
_SERVER_MAIN = ("listener_fd", "alive_r", "preload", "main_path", "sys_path")
_SERVER_FIELDS = ("_lock", "_forkserver_address", "_forkserver_alive_fd", "_forkserver_pid")


def _fork_here(server, preload):
    """Start multiprocessing's fork ``server`` as a fork of this process, which imports ``preload`` first; return
    whether it did. Only where that is as safe as the fork server's own start, and gives the workers what it
    gives them (:func:`_can_fork_here`); else the server is started as usual, when the first worker starts.

    The server's process is set as the nanny would set it: the workers' variables in its environment
    (``distributed.nanny.pre-spawn-environ`` with :data:`~straggle_edu.traces.blocks.WORKER_ENV`), glibc's malloc
    set as they say (already so in the fleet command, :func:`~straggle_edu.traces.blocks.keep_freed_memory`), SIGINT
    blocked and this process's handlers of SIGINT and SIGTERM put back to Python's defaults, no file descriptor but
    the standard ones and its own. It lives in the stack of this call until it exits (``os._exit``, no cleanup of
    this process's objects); its workers get their signal handlers and the resource tracker from the server's
    protocol, as from a server started anew. One thing differs: OpenBLAS, set up when this process imported numpy,
    keeps its thread count (``OPENBLAS_NUM_THREADS=1`` in the environment comes too late for it); the fleet's
    tasks make no BLAS calls.
    """
    import importlib

    if not _can_fork_here(server):
        return False
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError:  # as the server skips a module it cannot import
            pass
    if not _can_fork_here(server):  # an import started a thread, or made a malloc arena
        return False
    import gc
    import warnings
    from multiprocessing import connection, forkserver, resource_tracker, util

    env = _worker_environ()
    resource_tracker.ensure_running()  # before the fork: the server and its workers share this process's tracker
    with server._lock, socket.socket(socket.AF_UNIX) as listener:
        address = connection.arbitrary_address("AF_UNIX")
        listener.bind(address)
        if not util.is_abstract_socket_namespace(address):
            os.chmod(address, 0o600)
        listener.listen()
        alive_r, alive_w = os.pipe()
        gc.freeze()  # the objects imported so far stay out of both processes' collections: no copy-on-write for them
        try:
            with warnings.catch_warnings():
                # Python >= 3.12 warns of any thread in the process: here only native ones (OpenBLAS's pool, Arrow's
                # and jemalloc's), which their libraries stop or reset around a fork; no Python thread runs
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException:
            gc.unfreeze()
            for fd in (alive_r, alive_w):
                os.close(fd)
            raise
        if pid == 0:  # the server: never returns
            code = 1
            try:
                _become_server(listener.fileno(), alive_r, alive_w, env)
                forkserver.main(listener.fileno(), alive_r, [])  # until this process has gone: SystemExit
            except SystemExit as exc:
                code = 0 if exc.code in (None, 0) else 1
            except BaseException:  # as a server started anew would print it
                import traceback

                os.write(2, traceback.format_exc().encode("utf-8", "replace"))
            finally:
                os._exit(code)
        gc.unfreeze()
        os.close(alive_r)
        server._forkserver_address, server._forkserver_alive_fd, server._forkserver_pid = address, alive_w, pid
    return True


def _can_fork_here(server):
    """Whether :func:`_fork_here` may fork the fork server from this process: Linux, with the fork server of
    Python 3.10-3.13, only the main thread running Python, Arrow's default pool the C library's malloc (or pyarrow
    not imported: it reads ``ARROW_DEFAULT_MEMORY_POOL`` when it is), and glibc's malloc with one arena.

    One arena: the server's children take a thread's arena from the arenas this process has, and a second one is
    built of heaps of at most 64 MiB that a block's arrays outgrow: the fleet of the 16,384-rank trace faulted in a
    million pages rather than 0.4 million under it (:data:`~straggle_edu.traces.blocks.WORKER_ENV`).
    """
    import inspect

    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    from multiprocessing import forkserver

    try:
        if tuple(inspect.signature(forkserver.main).parameters) != _SERVER_MAIN:
            return False
    except (TypeError, ValueError):  # pragma: no cover
        return False
    if not all(hasattr(server, name) for name in _SERVER_FIELDS):
        return False
    if "pyarrow" in sys.modules and sys.modules["pyarrow"].default_memory_pool().backend_name != "system":
        return False
    return _malloc_arenas() == 1


def _malloc_arenas():
    """The number of glibc malloc arenas in this process (its ``malloc_info``), or None where that cannot be read."""
    import ctypes
    import re
    import tempfile

    try:
        libc = ctypes.CDLL(None)
        fdopen, malloc_info, fclose = libc.fdopen, libc.malloc_info, libc.fclose
    except (OSError, AttributeError):  # not glibc
        return None
    fdopen.restype, fdopen.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_char_p]
    malloc_info.argtypes, fclose.argtypes = [ctypes.c_int, ctypes.c_void_p], [ctypes.c_void_p]
    with tempfile.TemporaryFile() as f:
        stream = fdopen(os.dup(f.fileno()), b"w")
        if not stream:
            return None
        try:
            if malloc_info(0, stream) != 0:
                return None
        finally:
            fclose(stream)
        f.seek(0)
        return len(re.findall(rb"<heap nr=", f.read()))


def _worker_environ():
    """The variables a nanny sets for its worker (``distributed.nanny.pre-spawn-environ``), ours among them."""
    import dask

    from ..traces.blocks import WORKER_ENV

    return {**{k: str(v) for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()},
            **WORKER_ENV}


def _become_server(listener_fd, alive_r, alive_w, env):
    """In the forked fork server, before its main loop: as a server started anew is, and as the nanny starts it
    (:func:`_fork_here`)."""
    from ..traces.blocks import keep_freed_memory

    os.close(alive_w)
    for fd in map(int, os.listdir("/proc/self/fd")):  # the descriptors open (Linux: _can_fork_here)
        if fd not in (0, 1, 2, listener_fd, alive_r):
            with contextlib.suppress(OSError):  # (the listing's own, closed already)
                os.close(fd)
    os.environ.update(env)
    keep_freed_memory(one_arena=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.unraisablehook = sys.__unraisablehook__


def _stop_fork_server(cluster):
    """Stop the fork server that the LocalCluster ``cluster`` started (its idle process would stay with us)."""
    server = _fork_server() if getattr(cluster, "_straggle_edu_method", None) == "forkserver" else None
    if server is not None:
        with contextlib.suppress(OSError):
            server._stop()


def local_cluster(workers):
    """``(client, cluster)``: a ``distributed.LocalCluster`` on 127.0.0.1 with one single-threaded worker process
    per core (or ``workers``), no dashboard beyond 127.0.0.1, its workers started; its processes block SIGINT
    (the fleet closes them). Interrupted while it starts, it is closed at once."""
    import dask
    from distributed import Client, LocalCluster

    n = workers if workers is not None else (os.cpu_count() or 1)
    environ = dict(os.environ)  # distributed's nannies set the workers' variables here too, for good: put back below
    method = _start_method()
    with dask.config.set(_worker_settings(method)):  # each nanny reads them as its worker starts: held until they have
        with _threads_block_sigint():
            cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL)
        cluster._straggle_edu_method, cluster._straggle_edu_environ = method, environ
        client = None
        try:  # the workers are spawned by the cluster's loop thread, which blocks SIGINT
            client = Client(cluster)
            cluster.scale(n)
            client.wait_for_workers(n, timeout=LOCAL_START_SECONDS)
        except BaseException as exc:
            if client is not None:
                client.close()
            close_local(cluster, hurry=True)
            if isinstance(exc, (TimeoutError, OSError)):
                raise ClusterError(f"the LocalCluster's {n} worker processes did not start within "
                                   f"{_seconds(LOCAL_START_SECONDS)} s") from None
            raise
        finally:
            _put_back(environ)
    return client, cluster


def _put_back(environ):
    """This process's environment as ``environ`` was: a nanny's ``os.environ.update`` of its worker's variables
    (``distributed.nanny.pre-spawn-environ``: one malloc arena, OMP_NUM_THREADS=1, ...) would otherwise hold for
    every process this one starts later (torch's DDP ranks crashed under one arena)."""
    if environ is None:
        return
    for key in [k for k in os.environ if k not in environ and not k.startswith("__DASK")]:  # (its own markers stay)
        del os.environ[key]
    for key, value in environ.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def close_local(cluster, hurry=False):
    """Close a LocalCluster of :func:`local_cluster`. ``hurry`` (Ctrl-C, SIGTERM, a failure): each worker gets
    :data:`HURRY_SECONDS` to stop, then SIGTERM, since a running task cannot be interrupted; a worker left to
    finish its task would hold the exit for seconds."""
    import asyncio

    if hurry:
        async def stop_workers():
            await asyncio.gather(*(w.close(timeout=HURRY_SECONDS) for w in list(cluster.workers.values())),
                                 return_exceptions=True)

        with contextlib.suppress(Exception):
            cluster.sync(stop_workers)
    try:
        cluster.close()
    finally:
        _stop_fork_server(cluster)
        _put_back(getattr(cluster, "_straggle_edu_environ", None))  # a worker restarted mid-run set them again


class Watch:
    """Checks, while the fleet waits for its tasks, that the scheduler is there and has workers.

    ``check()`` raises :class:`ClusterError` at once when the client lost its
    scheduler; when no task has finished for :data:`NOTICE_SECONDS` and the
    scheduler has 0 workers, it says so, and raises once ``timeout`` seconds
    have passed without a worker. ``finished()`` is called when a task ends.
    """

    def __init__(self, client, address, timeout=TIMEOUT_SECONDS, *, clock=time.monotonic):
        self.client, self.address, self.timeout, self.clock = client, address, timeout, clock
        self.last = self.asked = clock()
        self.empty_since = self.notice = None

    def finished(self):
        self.last = self.clock()
        self.empty_since = None

    def lost(self, what="the fleet's tasks"):
        """The error for a task that was cancelled: the scheduler is gone, or it dropped ``what``."""
        if getattr(self.client, "status", "running") != "running":
            return ClusterError(f"lost the connection to the scheduler {self.address}; {what} were not finished")
        return ClusterError(f"the scheduler {self.address} cancelled {what} (was it restarted, or the tasks "
                            f"cancelled by another client?)")

    def check(self):
        check_signals()
        if getattr(self.client, "status", "running") != "running":
            raise self.lost()
        now = self.clock()
        if now - self.last < NOTICE_SECONDS or now - self.asked < 1.0:
            return
        self.asked = now
        if _workers(self.client, self.address):
            self.empty_since = None
            return
        if self.empty_since is None:
            self.empty_since, self.notice = now, now
        if now - self.empty_since >= self.timeout:
            raise ClusterError(f"0 workers on {self.address} for {_seconds(self.timeout)} s (--timeout); the jobs "
                               f"left were not analysed")
        if now >= self.notice:
            say(f"0 workers on {self.address}; waiting ({now - self.empty_since:.0f} s of "
                f"{_seconds(self.timeout)}, --timeout)")
            self.notice = now + REPEAT_SECONDS


_CAUGHT = []  # the stop signals caught inside stopping_signals(), as the exceptions they raise


@contextlib.contextmanager
def stopping_signals():
    """Inside the block (in the main thread), SIGINT raises KeyboardInterrupt and SIGTERM :class:`Terminated`
    (once: a second SIGTERM ends the process as the default does), and :func:`check_signals` raises them again.

    Python runs a signal's handler wherever the main thread is, also inside
    a garbage-collection callback (distributed's GC diagnosis has one) or a
    ``__del__``, where an exception is printed as "Exception ignored in ..."
    and dropped: Ctrl-C would print a traceback and the fleet go on. So the
    exceptions are remembered, such a print is left out, and the fleet's
    loops call :func:`check_signals`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_int(signum, frame):
        _CAUGHT.append(KeyboardInterrupt)
        raise KeyboardInterrupt

    def on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _CAUGHT.append(Terminated)
        raise Terminated()

    def unraisable(info):
        if not (isinstance(info.exc_type, type) and issubclass(info.exc_type, (KeyboardInterrupt, Terminated))):
            hook(info)

    previous = {signal.SIGINT: signal.signal(signal.SIGINT, on_int),
                signal.SIGTERM: signal.signal(signal.SIGTERM, on_term)}
    hook, sys.unraisablehook = sys.unraisablehook, unraisable
    _CAUGHT.clear()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = hook
        _CAUGHT.clear()


def check_signals():
    """Raise the exception of a stop signal caught in :func:`stopping_signals` (again: where it was raised, it may
    have been dropped). Nothing when none came."""
    if _CAUGHT:
        raise _CAUGHT[0]()
