"""The torch backend of the SGD experiment, under ``torchrun``.

    torchrun --nproc-per-node 4 -m straggle_edu.instruments.sgd_torch --scheme sync --workers 4 --json

Every rank is one process of the plan (``processes`` ranks: N + b for
``backup``); rank 0 also coordinates. Each step rank 0 broadcasts the
weights; every rank computes its real float64 gradient and sleeps until its
planned arrival. Then:

- ``sync`` and ``local``: one all-reduce (sum) of the gradients, or of the
  local models after H steps; works on gloo and NCCL.
- ``backup`` and ``drop``: the counted ranks send their gradients to rank 0,
  which adds them in rank order. The plan says which ranks count, so every
  rank knows it; a late rank does no send and waits for the next broadcast,
  which is when a coordinator would cancel it. Point-to-point sends need
  gloo here (NCCL is refused with a clear error).

``balanced`` needs speeds measured during the run and is refused here; use
the multiprocessing backend. Rank 0 prints the result (``--json``) and may
save the final weights (``--weights-out w.npy``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from ..models.sgd_schedule import sgd_update
from ..models.softmax import gradient_sum, loss
from .sgd import configure
from .sgd_plan import SGDSettings, make_plan, reference_target, summarize

__all__ = ["main"]


def _parser():
    p = argparse.ArgumentParser(prog="torchrun ... -m straggle_edu.instruments.sgd_torch")
    configure(p)
    p.add_argument("--weights-out", default=None, help="save the final weights (.npy), rank 0")
    p.add_argument("--dist-backend", default="gloo", help="gloo (default) or nccl")
    return p


def _settings(args, world):
    keys = [k for k in SGDSettings.__dataclass_fields__ if k != "backend"]
    s = SGDSettings(**{k: getattr(args, k) for k in keys}, backend="torch")
    if s.processes != world:
        raise ValueError(f"--workers/--backups need {s.processes} ranks for scheme {s.scheme!r}, "
                         f"got a world of {world}: torchrun --nproc-per-node {s.processes}")
    if s.scheme == "balanced":
        raise ValueError("--scheme balanced runs on the multiprocessing backend only")
    if s.scheme in ("backup", "drop") and args.dist_backend != "gloo":
        raise ValueError(f"--scheme {s.scheme} needs point-to-point sends: use --dist-backend gloo")
    return s


def _sleep_until(deadline):
    left = deadline - time.monotonic()
    if left > 0:
        time.sleep(left)


def _step(torch, dist, plan, W, t, rank):
    """One step of sync, backup or drop; returns (W, counted ranks, finish)."""
    s, d = plan.settings, plan.data
    t0 = time.monotonic()
    b = plan.idx[t, rank]
    g = gradient_sum(W, d.X[b], d.y[b])
    counted = np.flatnonzero(plan.counted[t])
    finish = None
    if rank in counted:
        _sleep_until(t0 + plan.planned[t, rank])
        finish = time.monotonic() - t0
    if s.scheme == "sync":
        buf = torch.from_numpy(g)
        dist.all_reduce(buf)
        return sgd_update(W, [buf.numpy()], s.workers * s.batch, s.step_lr), counted, finish
    if rank != 0:
        if rank in counted:
            dist.send(torch.from_numpy(g), dst=0)
        return W, counted, finish
    grads = []
    for r in counted:
        if r == 0:
            grads.append(g)
        else:
            buf = torch.empty(W.shape, dtype=torch.float64)
            dist.recv(buf, src=int(r))
            grads.append(buf.numpy())
    return sgd_update(W, grads, len(counted) * s.batch, s.step_lr), counted, finish


def _round(torch, dist, plan, W, rnd, rank):
    """One local round: H local steps, then the models' mean (all-reduce)."""
    s, d = plan.settings, plan.data
    t0 = time.monotonic()
    H = s.period
    ends = np.cumsum(plan.planned[rnd * H:(rnd + 1) * H, rank])
    w = W.copy()
    for h in range(H):
        b = plan.idx[rnd * H + h, rank]
        w = sgd_update(w, [gradient_sum(w, d.X[b], d.y[b])], len(b), s.lr)
        _sleep_until(t0 + ends[h])
    buf = torch.from_numpy(w)
    dist.all_reduce(buf)
    return buf.numpy() / s.workers


def _train(torch, dist, plan, rank):
    s = plan.settings
    W = plan.W0.copy()
    curve, applied = [], 0
    start = time.monotonic()
    local = s.scheme == "local"
    for t in range(s.steps // s.period if local else s.steps):
        buf = torch.from_numpy(np.ascontiguousarray(W))
        dist.broadcast(buf, src=0)  # everyone starts the step from rank 0's weights
        W = buf.numpy().copy()
        if local:
            W = _round(torch, dist, plan, W, t, rank)
            applied += s.workers * s.period
            step = (t + 1) * s.period
        else:
            W, counted, _ = _step(torch, dist, plan, W, t, rank)
            applied += len(counted)
            step = t + 1
        if rank == 0:
            curve.append((step, time.monotonic() - start, applied, loss(W, plan.data.X_test, plan.data.y_test)))
    dist.barrier()
    return W, curve


def main(argv=None):
    """Entry point under torchrun; returns the exit code."""
    import torch
    import torch.distributed as dist

    args = _parser().parse_args(argv)
    if "RANK" not in os.environ:
        print("sgd_torch runs under torchrun: torchrun --nproc-per-node 4 -m straggle_edu.instruments.sgd_torch "
              "--workers 4", file=sys.stderr)
        return 2
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    try:
        s = _settings(args, world)
    except ValueError as exc:
        if rank == 0:
            print(f"sgd_torch: error: {exc}", file=sys.stderr)
        return 2
    dist.init_process_group(args.dist_backend)
    try:
        plan = make_plan(s)
        W, curve = _train(torch, dist, plan, rank)
        if rank == 0:
            target = s.target_loss if s.target_loss is not None else reference_target(s)
            out = summarize(s, plan.data, W, curve, target, gradients_applied=int(curve[-1][2]))
            if args.weights_out:
                np.save(args.weights_out, W)
            result = {k: v for k, v in out.items() if k != "weights"}
            result.update(scheme=s.scheme, processes=s.processes, backend="torch", wall_s=curve[-1][1])
            print(json.dumps(result) if args.json else
                  f"{s.scheme}: wall {curve[-1][1]:.2f} s, test loss {result['final_loss']:.4f}")
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
