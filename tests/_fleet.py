"""A small synthetic fleet for the fleet tests: op-level jobs with known causes, their layouts, gpus and hours."""

import numpy as np

from straggle_edu.traces.optrace import write_trace
from straggle_edu.traces.synthetic import synthetic_trace

CAUSES = (
    {},
    {"slow_worker": (1, 1, 1.6)},
    {"last_stage": 1.4},
    {"seq_imbalance": 0.4},
    {"gc_pauses": (0.2, 0.02)},
)


def synthetic_fleet(folder, n, *, seed=0, dp=4, pp=2, microbatches=4, steps=4):
    """Write ``n`` jobs ``trace-jobNNN.parquet`` (with ``meta-jobNNN.yaml``: layout, gpus, hours) into ``folder``."""
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        t = synthetic_trace(dp=dp, pp=pp, microbatches=microbatches, steps=steps, jitter=0.02,
                            rng=int(rng.integers(2**31)), **CAUSES[i % len(CAUSES)])
        path = write_trace(t, folder / f"trace-job{i:03d}.parquet")
        meta = folder / f"meta-job{i:03d}.yaml"
        meta.write_text(meta.read_text() + f"hours: {float(rng.uniform(1, 48)):.2f}\n")
        paths.append(path)
    return paths


def without_seconds(rows):
    """Rows keyed by job id, without the one column that differs between runs (seconds)."""
    return {r["job_id"]: {k: v for k, v in r.items() if k != "seconds"} for r in rows}
