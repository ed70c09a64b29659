"""Measure stragglers on a real cluster: ``python -m straggle_edu.instruments.probe`` under torchrun.

Two tools, one trace format (the per-rank CSV that ``straggle-edu analyze``
reads: ``step,rank,duration_s,phase``):

:class:`StepTimer`
    Drop it into your own torch.distributed training loop. Three lines::

        timer = StepTimer("trace.csv")     # after init_process_group
        for batch in loader:
            with timer.step():             # around the body of one step
                train_step(batch)
        timer.close()                      # rank 0 finishes the CSV

    Per step and rank it records ``compute`` (the step's own time) and
    ``wait`` (a barrier at the end of the step: the time until the slowest
    peer has finished its step too). Wrap your own collectives in
    ``with timer.sync():`` to split them into ``wait`` (a barrier first) and
    ``comm`` (the transfer itself).

``python -m straggle_edu.instruments.probe``
    A synthetic job that needs no model: each step a matmul of
    ``--compute-size`` on the device (optionally with jitter or one slow
    rank), then an all-reduce of ``--allreduce-mb`` MiB. It uses gloo on
    CPU and NCCL on GPUs, records compute, wait and comm per rank, and rank 0
    writes the CSV. See ``docs/cluster-probe.md``.

torch is an optional extra (``pip install "straggle-edu[torch]"``). This
module never imports torch at import time; without torch, the probe prints
how to install it and exits with code 3.

Rank 0 gathers every rank's timings after each step (``flush_every``
steps; outside the timed parts) and appends them to the CSV at once, so an
interrupted job keeps every step it gathered, and a trace that was not
closed ends with ``# incomplete``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import datetime
import inspect
import os
import random
import shlex
import signal
import sys
import time

from .._validate import require
from .rank_csv import RankTraceWriter, check_out_path

__all__ = ["StepTimer", "main", "INSTALL_HINT", "MissingTorch"]

INSTALL_HINT = 'the probe needs PyTorch; install it with: pip install "straggle-edu[torch]"'
EXIT_BAD_INPUT = 2
EXIT_NO_TORCH = 3
MAX_COMPUTE_SIZE = 32768
MAX_ALLREDUCE_MB = 16384.0


class MissingTorch(ImportError):
    """PyTorch is not installed."""


def _torch():
    """Import torch and torch.distributed, or raise MissingTorch with the hint."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        raise MissingTorch(f"{INSTALL_HINT} ({exc})") from None
    return torch, dist


# --------------------------------------------------------------- StepTimer
class StepTimer:
    """Record each rank's compute, wait and comm time per step of a
    torch.distributed loop; rank 0 writes the per-rank trace CSV.

    Parameters
    ----------
    out : str or os.PathLike
        The CSV that rank 0 writes (its folder must exist on rank 0's
        machine). The other ranks ignore it.
    group : torch.distributed.ProcessGroup or None
        The ranks to time (default: the whole job).
    flush_every : int
        Gather and write every this many steps (default 1, so an interrupted
        job loses nothing). Each flush is one small all-gather, outside the
        timed parts.
    barrier : bool
        End each step that has no :meth:`sync` section with a barrier, and
        record its length as ``wait`` (default True). Without it, ``wait``
        is only measured inside :meth:`sync` sections.
    cuda_sync : bool or None
        Call ``torch.cuda.synchronize()`` before reading the clock, so that
        GPU work is counted where it runs. None: when the backend is NCCL.
    first_step : int
        The number of the first recorded step (default 0).

    Notes
    -----
    Every rank must create the timer and time the same number of steps, as
    with any collective. Use it as a context manager (``with StepTimer(...)
    as timer:``), or call :meth:`close` at the end; a trace that was never
    closed (an exception, an interrupt) is marked ``# incomplete`` when the
    process exits.
    """

    def __init__(self, out, *, group=None, flush_every=1, barrier=True, cuda_sync=None, first_step=0):
        from .._validate import whole

        torch, dist = _torch()
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError(
                "StepTimer needs torch.distributed: call torch.distributed.init_process_group() first "
                "(under torchrun, init_process_group() with no arguments is enough)"
            )
        self._torch, self._dist = torch, dist
        self.group = group
        self.flush_every = whole("flush_every", flush_every, 1)
        self.barrier = bool(barrier)
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        backend = str(dist.get_backend(group)).lower()
        self._nccl = "nccl" in backend
        self._cuda_sync = self._nccl if cuda_sync is None else bool(cuda_sync)
        if self._nccl:
            self._device = torch.device("cuda", torch.cuda.current_device())
        else:
            self._device = torch.device("cpu")
        self.step_index = whole("first_step", first_step, 0)
        self.writer = None
        self.closed = False
        self._pending = []  # [compute, wait, comm, has_comm] per finished step
        self._in_step = False
        self._in_sync = False
        # Rank 0 opens the file; every rank learns whether that worked, so
        # that a bad path fails everywhere instead of hanging the others.
        problem = ""
        if self.rank == 0:
            try:
                self.writer = RankTraceWriter(out)
            except (ValueError, OSError) as exc:
                problem = str(exc)
        if not self._agree(problem == ""):
            raise ValueError(problem or "rank 0 could not open the trace file: see rank 0's error")
        atexit.register(self._abandon)

    # -------------------------------------------------------------- clock
    def _now(self):
        if self._cuda_sync:
            self._torch.cuda.synchronize()
        return time.perf_counter()

    def _agree(self, ok):
        """True when ok is True on every rank (one small all-reduce)."""
        flag = self._torch.tensor([1 if ok else 0], dtype=self._torch.int32, device=self._device)
        self._dist.all_reduce(flag, op=self._dist.ReduceOp.MIN, group=self.group)
        return bool(flag.item() == 1)

    # ----------------------------------------------------------- callbacks
    def start_step(self):
        """Begin timing a step (the callback form of :meth:`step`)."""
        if self.closed:
            raise RuntimeError("this StepTimer is closed")
        if self._in_step:
            raise RuntimeError("start_step() called twice without end_step()")
        self._in_step = True
        self._compute = self._wait = self._comm = 0.0
        self._has_comm = False
        self._mark = self._now()

    def end_step(self):
        """Finish the step: add its compute time, the end-of-step barrier,
        and gather to rank 0 every ``flush_every`` steps."""
        if not self._in_step:
            raise RuntimeError("end_step() called without start_step()")
        now = self._now()
        self._compute += now - self._mark
        if self.barrier and not self._has_comm:
            self._dist.barrier(group=self.group)
            self._wait += self._now() - now
        self._in_step = False
        self._pending.append([self._compute, self._wait, self._comm, 1.0 if self._has_comm else 0.0])
        self.step_index += 1
        if len(self._pending) >= self.flush_every:
            self.flush()

    def start_sync(self):
        """Begin a collective section: barrier (recorded as wait), then the
        section's own time is comm."""
        if not self._in_step:
            raise RuntimeError("sync() must be inside a step")
        now = self._now()
        self._compute += now - self._mark
        self._dist.barrier(group=self.group)
        after = self._now()
        self._wait += after - now
        self._mark = after
        self._in_sync = True

    def end_sync(self):
        """End the collective section started by :meth:`start_sync`."""
        now = self._now()
        self._comm += now - self._mark
        self._has_comm = True
        self._mark = now
        self._in_sync = False

    # ---------------------------------------------------- context managers
    @contextlib.contextmanager
    def step(self):
        """Time one step: ``with timer.step(): ...``."""
        self.start_step()
        try:
            yield self
        except BaseException:
            self._in_step = False  # no collective on the way out of an error
            raise
        self.end_step()

    @contextlib.contextmanager
    def sync(self):
        """Time a collective inside a step: ``with timer.sync(): dist.all_reduce(t)``."""
        self.start_sync()
        try:
            yield self
        except BaseException:
            self._in_sync = False
            raise
        self.end_sync()

    # --------------------------------------------------------- gathering
    def flush(self):
        """Gather the finished steps from every rank; rank 0 writes them.

        A collective: every rank must call it (``end_step`` and ``close`` do).
        """
        torch, dist = self._torch, self._dist
        k = len(self._pending)
        first = self.step_index - k
        if k == 0:
            return
        mine = torch.tensor(self._pending, dtype=torch.float64, device=self._device)
        bufs = [torch.empty_like(mine) for __ in range(self.world)]
        dist.all_gather(bufs, mine, group=self.group)
        self._pending = []
        if self.writer is None:
            return
        rows = [b.cpu().tolist() for b in bufs]
        for i in range(k):
            step_rows = []
            for r in range(self.world):
                compute, wait, comm, has_comm = rows[r][i]
                step_rows.append((r, max(compute, 0.0), "compute"))
                step_rows.append((r, max(wait, 0.0), "wait"))
                if has_comm:
                    step_rows.append((r, max(comm, 0.0), "comm"))
            self.writer.write_step(first + i, step_rows)

    def close(self, complete=True):
        """Gather what is left and close the CSV on rank 0 (a collective
        when ``complete``). ``complete=False`` just marks the trace
        ``# incomplete`` without talking to the other ranks."""
        if self.closed:
            return
        try:
            if complete:
                self.flush()
        finally:
            self.closed = True
            if self.writer is not None:
                self.writer.close(complete=complete)
            atexit.unregister(self._abandon)

    def _abandon(self):
        if not self.closed:
            self.closed = True
            if self.writer is not None:
                self.writer.close(complete=False)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close(complete=exc_type is None)
        return False

    @property
    def path(self):
        """The CSV path on rank 0, None on the other ranks."""
        return self.writer.path if self.writer is not None else None


# ------------------------------------------------------------------ probe
def _parser():
    p = argparse.ArgumentParser(
        prog="python -m straggle_edu.instruments.probe",
        description=(
            "Run under torchrun. Each step: a matmul on the device (compute), a barrier "
            "(wait: until the last peer arrives), an all-reduce (comm). Rank 0 writes the "
            "per-rank trace CSV for straggle-edu analyze."
        ),
        epilog="example: torchrun --nproc-per-node 2 -m straggle_edu.instruments.probe --steps 20 --out probe.csv",
    )
    p.add_argument("--steps", type=int, default=20, help="recorded steps (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="unrecorded steps first (default 2)")
    p.add_argument("--compute-size", type=int, default=512, help="N of the N x N float32 matmul per step (default 512)")
    p.add_argument("--allreduce-mb", type=float, default=4.0, help="all-reduce size in MiB (default 4; 0 skips it)")
    p.add_argument("--slow-rank", type=int, default=None, help="one rank that computes longer (default: none)")
    p.add_argument("--slow-factor", type=float, default=None, help="how many times longer the slow rank computes (default 2)")
    p.add_argument("--jitter", type=float, default=0.0, help="coefficient of variation injected into every rank's compute (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed of the injected jitter (default 0)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="auto: cuda when available (default)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a collective may wait before the job fails (default 300)")
    p.add_argument("--out", required=True, help="the per-rank trace CSV that rank 0 writes (its folder must exist)")
    return p


def _environment():
    """Rank, world size, local rank and local world size from torchrun."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise ValueError(
            "the probe runs under torchrun, which sets RANK and WORLD_SIZE; try: "
            "torchrun --nproc-per-node 2 -m straggle_edu.instruments.probe --out probe.csv"
        )
    env = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        raw = os.environ.get(name, "0" if name == "LOCAL_RANK" else os.environ["WORLD_SIZE"])
        env[name] = int(raw) if raw.strip().lstrip("+-").isdigit() else None
        require(env[name] is not None, name, raw, "a whole number")
    return env


def _check_args(args, world):
    from .._validate import in_range, require, whole

    whole("--steps", args.steps, 1, 1_000_000)
    whole("--warmup", args.warmup, 0, 1_000_000)
    whole("--compute-size", args.compute_size, 1, MAX_COMPUTE_SIZE)
    in_range("--allreduce-mb", args.allreduce_mb, 0.0, MAX_ALLREDUCE_MB)
    in_range("--jitter", args.jitter, 0.0, 1.0)
    in_range("--timeout", args.timeout, 0.0, low_open=True)
    require(args.seed >= 0, "--seed", args.seed, "a whole number >= 0")
    whole("world size", world, 1)
    if args.slow_factor is not None and args.slow_rank is None:
        raise ValueError("--slow-factor needs --slow-rank (which rank is slow)")
    if args.slow_rank is not None:
        require(
            0 <= args.slow_rank < world,
            "--slow-rank",
            args.slow_rank,
            f"a whole number in 0..{world - 1} (one of the {world} ranks)",
        )
        in_range("--slow-factor", 2.0 if args.slow_factor is None else args.slow_factor, 0.0, 100.0, low_open=True)


def _limit_check(torch, device, local_world):
    """One rank per GPU; one rank per CPU core."""
    if device.type == "cuda":
        gpus = torch.cuda.device_count()
        require(local_world <= gpus, "ranks per node", local_world,
                f"at most the {gpus} GPUs of this node with --device cuda (NCCL needs one GPU per rank)")
    else:
        from .barrier_lab import cpu_cores

        cores = cpu_cores()
        require(local_world <= cores, "ranks per node", local_world,
                f"at most the {cores} CPU cores of this node on CPU (each rank computes on a core of its own)")


BLOCKS = 16


def _work(torch, block, b, count):
    """``count`` row blocks of the N x N matmul; ``BLOCKS`` of them make one
    whole matmul, so a rank with factor F does F times the work."""
    for __ in range(count):
        torch.mm(block, b)


def _run_probe(args, env):
    torch, dist = _torch()
    rank, world = env["RANK"], env["WORLD_SIZE"]
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        raise ValueError("--device cuda, but torch sees no GPU here (torch.cuda.is_available() is False)")
    if use_cuda:
        device = torch.device("cuda", env["LOCAL_RANK"] % max(torch.cuda.device_count(), 1))
    else:
        device = torch.device("cpu")
    _limit_check(torch, device, env["LOCAL_WORLD_SIZE"])
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(1)
    extra = {}
    if device.type == "cuda" and "device_id" in inspect.signature(dist.init_process_group).parameters:
        extra["device_id"] = device  # torch >= 2.3: bind the group to this GPU
    dist.init_process_group(
        backend="nccl" if device.type == "cuda" else "gloo",
        timeout=datetime.timedelta(seconds=args.timeout),
        **extra,
    )
    try:
        n = args.compute_size
        gen = torch.Generator(device="cpu").manual_seed(args.seed * 1000 + rank)
        block = torch.randn(max(1, n // BLOCKS), n, generator=gen).to(device)
        b = torch.randn(n, n, generator=gen).to(device)
        numel = int(args.allreduce_mb * 2**20 // 4)
        buf = torch.ones(numel, dtype=torch.float32, device=device) if numel else None
        rng = random.Random(args.seed * 1000 + rank)
        slow = (2.0 if args.slow_factor is None else args.slow_factor) if rank == args.slow_rank else 1.0
        sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

        blocks = n / block.shape[0]  # row blocks in one whole matmul

        def one_step(timer=None):
            factor = slow * max(0.0, 1.0 + args.jitter * rng.gauss(0.0, 1.0))
            _work(torch, block, b, round(factor * blocks))
            if timer is None:
                dist.barrier()
                if buf is not None:
                    dist.all_reduce(buf)
                sync()
                return
            with timer.sync():
                if buf is not None:
                    dist.all_reduce(buf)

        for __ in range(args.warmup):
            one_step()
        with StepTimer(args.out, barrier=True) as timer:
            for __ in range(args.steps):
                with timer.step():
                    one_step(timer)
        if rank == 0:
            _summary(args, world, timer.path, device)
    finally:
        with contextlib.suppress(Exception):
            dist.destroy_process_group()


def _summary(args, world, path, device):
    import csv

    sums = {}
    with open(path, newline="", encoding="utf-8") as f:
        rows = [ln for ln in f if not ln.startswith("#")]
    by_rank = {}
    for row in csv.DictReader(rows):
        sums[row["phase"]] = sums.get(row["phase"], 0.0) + float(row["duration_s"])
        if row["phase"] == "compute":
            by_rank[int(row["rank"])] = by_rank.get(int(row["rank"]), 0.0) + float(row["duration_s"])
    per = args.steps * world
    parts = ", ".join(f"{ph} {sums.get(ph, 0.0) / per * 1e3:.2f} ms" for ph in ("compute", "wait", "comm"))  # CSV phase names
    slowest = max(by_rank, key=by_rank.get)
    from ..i18n import _

    print(_("wrote {steps} steps x {world} ranks ({device}) to {path}").format(steps=args.steps, world=world,
                                                                              device=device.type, path=path))
    print(_("mean per rank and step: {parts}; slowest rank by compute: {rank}").format(parts=parts, rank=slowest))
    print(_("next: {command}").format(command=f"straggle-edu analyze {shlex.quote(str(path))}"))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    """Run the probe (one rank of it); return the exit code."""
    args = _parser().parse_args(argv)
    rank = os.environ.get("RANK", "0")
    say = (lambda text: print(f"straggle_edu.instruments.probe: {text}", file=sys.stderr)) if rank == "0" else (lambda text: None)
    try:
        _torch()
    except MissingTorch as exc:
        say(f"error: {exc}")
        return EXIT_NO_TORCH
    try:
        env = _environment()
        _check_args(args, env["WORLD_SIZE"])
        if env["RANK"] == 0:
            check_out_path(args.out, "--out")
    except ValueError as exc:
        say(f"error: {exc}")
        return EXIT_BAD_INPUT
    # torchrun stops its workers with SIGTERM: finish the trace on the way out.
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        _run_probe(args, env)
    except ValueError as exc:
        say(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        say("interrupted; the trace written so far is marked '# incomplete'")
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
