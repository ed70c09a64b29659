"""The SGD experiment's harness overhead, and (``--table``) the default table.

Overhead: a ``sync`` run with no slowness against a bare loop, in one
process, that does the same gradient work and sleeps until the same planned
step ends. Both are measured in the same run; each prints its time per step
beyond the plan's (the slowest planned gradient of the step). The goal: the
harness adds <= 5% of a 20 ms base step.

``--table``: every scheme under every slowness kind at the defaults (200
steps, 8 workers; backup and drop with b = 2), the issue's closing table.

    python benchmarks/bench_sgd.py [--steps 50] [--table]
"""

import argparse
import time


from straggle_edu.instruments.sgd import SGDSettings, make_plan, run_sgd
from straggle_edu.models.sgd_schedule import sgd_update
from straggle_edu.models.softmax import gradient_sum, loss


def bare_loop(plan):
    """Same gradients, same update, same loss evaluation, sleeps to the same step ends."""
    d, W = plan.data, plan.W0.copy()
    start = time.monotonic()
    for t, step in enumerate(plan.idx):
        t0 = time.monotonic()
        grads = [gradient_sum(W, d.X[b], d.y[b]) for b in step]
        W = sgd_update(W, grads, step.size, plan.settings.lr)
        loss(W, d.X_test, d.y_test)
        left = t0 + plan.planned[t].max() - time.monotonic()
        if left > 0:
            time.sleep(left)
    return time.monotonic() - start


def overhead(steps, base_step=0.02, workers=8):
    kw = dict(scheme="sync", slow="none", steps=steps, base_step=base_step, workers=workers)
    plan = make_plan(SGDSettings(**kw))
    ideal = plan.planned.max(axis=1).sum()
    bare = bare_loop(plan)
    harness = run_sgd(**kw).wall_s
    for name, wall in (("bare loop", bare), ("harness", harness)):
        extra = (wall - ideal) / steps
        print(f"{name:9s}: {wall / steps * 1e3:7.2f} ms/step, {extra * 1e3:+6.2f} ms beyond the plan "
              f"= {extra / base_step:+.1%} of the {base_step * 1e3:g} ms base step")
    print(f"harness overhead vs bare loop: {(harness - bare) / steps * 1e3:+.2f} ms/step "
          f"= {(harness - bare) / steps / base_step:+.1%} of the base step (goal <= 5%)")


def table():
    cols = ("wall_s", "final_loss", "accuracy_long", "time_to_target_s", "worker_s_reserved",
            "gradient_s_discarded")
    print("| slow | scheme | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for slow in ("transient", "data", "persistent"):
        for scheme, b in (("sync", 0), ("backup", 2), ("drop", 2), ("local", 0), ("balanced", 0)):
            d = run_sgd(scheme=scheme, backups=b, slow=slow).to_dict()
            cells = ["-" if d[c] is None else f"{d[c]:.3f}" for c in cols]
            name = f"{scheme} b={b}" if b else scheme
            print(f"| {slow} | {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    overhead(args.steps)
    if args.table:
        table()
