"""Write the Flight Recorder dumps of a 2-rank gloo job in which rank 1 holds back the last all-reduce.

Run it under torchrun with the Flight Recorder on (PyTorch 2.13, CPU), from this folder:

    TORCH_FR_BUFFER_SIZE=64 torchrun --nproc-per-node 2 --master-port 29571 make_dump.py .

Each rank writes pickle/nccl_trace_rank_<r> (the pickle of
``torch._C._distributed_c10d._dump_fr_trace``, what a dump on timeout writes to
``$TORCH_FR_DUMP_TEMP_FILE<rank>``) and json/nccl_trace_rank_<r>.json (the same dump as JSON,
``_dump_fr_trace_json``). Both ranks run five all-reduces; rank 0 then enters all-reduce #6 and
dumps while it waits; rank 1 dumps before it joins #6, then joins, so the job ends cleanly.
"""

import os
import sys
import time


def dump(out, rank):
    from torch._C._distributed_c10d import _dump_fr_trace, _dump_fr_trace_json

    for sub in ("pickle", "json"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "pickle", f"nccl_trace_rank_{rank}"), "wb") as f:
        f.write(_dump_fr_trace(includeCollectives=True, includeStackTraces=False, onlyActive=False))
    with open(os.path.join(out, "json", f"nccl_trace_rank_{rank}.json"), "wb") as f:
        f.write(_dump_fr_trace_json(includeCollectives=True, onlyActive=False))


def main(out):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    store = dist.distributed_c10d._get_default_store()
    x = torch.ones(4)
    for _ in range(5):
        dist.all_reduce(x)
    if rank == 0:
        work = dist.all_reduce(x, async_op=True)  # waits for rank 1
        time.sleep(1.0)
        dump(out, rank)
        store.set("rank0-dumped", "1")
        work.wait()
    else:
        time.sleep(1.0)  # gloo retires a finished entry on another thread: let #5 be retired before the dump
        dump(out, rank)
        store.wait(["rank0-dumped"])
        dist.all_reduce(x)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
