"""Kineto (PyTorch profiler) traces written here, event for event in the layout PyTorch 2.13 writes.

Only for cases no public trace has (a known slow rank on the GPU, a GPU a step behind its host, files of
several profiling cycles); the readers are tested on real traces in test_traces_profiler.py too.
"""

import gzip
import json


def gpu_rank(rank, compute, *, world, transfer=0.1, t0=1.7e15, behind=0.0, group=None, host="node0",
             first_step=3, kernel="ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"):
    """One rank of a GPU job: per step, a matmul kernel of ``compute[step]`` seconds, then an all-reduce.

    ``compute`` and the all-reduce's end are the job's: each step starts when the previous all-reduce
    ended (``ends[step - 1]``), as ``job_ends`` computes them. ``behind`` (seconds) delays every kernel
    on the GPU after its launch, as a GPU running behind its host does.
    """
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}]
    corr = 0
    for s, (c, start, end) in enumerate(compute):
        us = lambda t: t0 + t * 1e6  # noqa: E731
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{first_step + s}", "pid": 1, "tid": 1,
                   "ts": us(start - behind), "dur": (end - start) * 1e6, "args": {"External id": 1 + s}})
        for name, k_start, k_dur, args in (
            ("sm90_xmma_gemm_f32", start, c, {}),
            (kernel, start + c, end - start - c, _comm_args(group, world)),
        ):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": us(k_start - behind) - 5, "dur": 4, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7 if "gemm" in name else 20,
                       "ts": us(k_start), "dur": k_dur * 1e6, "args": {"correlation": corr, "stream": 7, **args}})
    info = {"backend": "nccl", "rank": rank, "world_size": world, "pg_count": 1,
            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": world,
                           "ranks": list(range(world))}]}
    return {"schemaVersion": 1, "deviceProperties": [], "distributedInfo": info, "host_name": host,
            "traceEvents": ev, "traceName": f"rank{rank}.json"}


def _comm_args(group, world):
    if group is None:
        return {}
    return {"Collective name": "allreduce", "Process Group Name": group, "Process Group Description": "default_pg",
            "Group size": world, "Process Group Ranks": str(list(range(world)))}


def job_times(compute, transfer=0.1):
    """Per rank, per step: (compute, step start, all-reduce end) in seconds, for ``compute[step][rank]``."""
    out, t = [[] for _ in compute[0]], 0.0
    for row in compute:
        end = t + max(row) + transfer
        for r, c in enumerate(row):
            out[r].append((c, t, end))
        t = end
    return out


def write_gpu_job(folder, compute, *, transfer=0.1, gz=False, names="rank{r}.json", **kwargs):
    """A GPU job's traces, one file per rank; ``compute[step][rank]`` seconds. Returns the paths."""
    files = []
    for r, times in enumerate(job_times(compute, transfer)):
        path = folder / (names.format(r=r) + (".gz" if gz else ""))
        text = json.dumps(gpu_rank(r, times, world=len(compute[0]), **kwargs))
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
        files.append(path)
    return files
