"""What ``straggle-edu analyze`` says of each real trace: format, ranks, S and culprit, or the refusal.

Runs ``python -m straggle_edu analyze PATH --json`` on each file or folder it is given, each as a process of its
own (with a timeout), and prints one table row per input. With no paths it walks ``tests/data``, which mirrors the
shared folder of outside traces in ``tests/data/outside`` (without that mirror it walks the shared folder itself:
``$STRAGGLE_EDU_OUTSIDE``, else ``../shared/outside`` beside the repository, else ``/work/shared/outside``). Each
folder that holds traces is analysed as a whole (a job's ranks), and where ``analyze`` refuses the folder, or with
``--each``, each of its files on its own too.

Run: ``.venv/bin/python benchmarks/public_traces.py [PATH ...] [--each] [--timeout 120] [--markdown]``
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Files beside the traces that are no trace: notices, docs, helpers, the OSDI artifact's outputs, a sidecar.
SKIP = ("LICENSE*", "README*", "NOTICE*", "*.md", "*.py", "*.yaml", "*.txt", "*.jpg", "*.png", "runs.json",
        "result-*.json", "ms-*.json", "mw-*.json")


def outside_folder():
    """The shared folder of outside traces, or None."""
    for candidate in (os.environ.get("STRAGGLE_EDU_OUTSIDE"), ROOT.parent / "shared" / "outside",
                      "/work/shared/outside"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def trace_files(folder):
    """The files directly in ``folder`` that may be traces, sorted."""
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not any(fnmatch.fnmatch(p.name, pat) for pat in SKIP))


def folders_with_traces(root):
    """Every folder under ``root`` (itself included) that directly holds a possible trace."""
    return [d for d in sorted([root, *root.rglob("*")]) if d.is_dir() and trace_files(d)]


def analyze(path, timeout):
    """One ``analyze --json`` run: a dict with what it said (``error`` when it refused)."""
    cmd = [sys.executable, "-m", "straggle_edu", "analyze", str(path), "--json"]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {timeout} s", "seconds": timeout}
    seconds = round(time.monotonic() - start, 1)
    notes = [line[len("note: "):] for line in done.stderr.splitlines() if line.startswith("note: ")]
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("note: ")]
        return {"error": errors[-1] if errors else f"exit status {done.returncode}", "seconds": seconds}
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": f"not JSON on stdout: {done.stdout[:200]!r}", "seconds": seconds}
    return {**result, "notes": notes, "seconds": seconds}


def _said(result):
    """S and the top rank or worker, or the suspects, of one analysis."""
    if result.get("slowdown") is None:
        return f"suspects {result.get('suspects')}"
    said = f"S = {result['slowdown']:.3f}"
    for by, name in (("by_rank", "rank"), ("by_worker", "worker")):
        table = result.get(by)
        if table:
            return said + f", top {name} {max(table, key=table.get)}"
    return said


def summary(result):
    """(format, ranks, what it said) for one result."""
    if "error" in result:
        return "refused", "", result["error"].removeprefix("straggle-edu analyze: error: ")
    if "analyses" in result:  # a folder of several traces: one analysis each
        parts = [f"{name}: {_said(a)}" for name, a in zip(result.get("read", []), result["analyses"])]
        return ", ".join(sorted({a.get("format", "?") for a in result["analyses"]})), "", "; ".join(parts)
    ranks = result.get("ranks", len(result.get("by_rank") or {}) or "")
    said = _said(result)
    if result.get("notes"):
        said += f" (note: {result['notes'][0]})"
    return result.get("format", "?"), len(ranks) if isinstance(ranks, list) else ranks, said


def _label(path):
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def inputs(paths):
    """The (label, path) inputs, the paths given or the walk of tests/data and the outside folder; and the files
    of each multi-file folder."""
    if paths:
        return [(str(p), Path(p)) for p in paths], {}
    data = ROOT / "tests" / "data"
    roots = [data, None if (data / "outside").is_dir() else outside_folder()]  # tests/data/outside mirrors it
    folders = [d for root in roots if root is not None for d in folders_with_traces(root)]
    single = {d: trace_files(d) for d in folders}
    out = [(_label(d), d) if len(f) > 1 else (_label(f[0]), f[0]) for d, f in single.items()]
    return out, {d: f for d, f in single.items() if len(f) > 1}


def _rows(todo, files_of, each, timeout):
    rows, n = [], 0
    while todo:
        label, path = todo.pop(0)
        n += 1
        result = analyze(path, timeout)
        fmt, ranks, said = summary(result)
        rows.append((label, fmt, ranks, said, result["seconds"]))
        print(f"[public_traces] {n}: {label}: {fmt} in {result['seconds']} s", file=sys.stderr, flush=True)
        if path in files_of and (each or fmt == "refused"):
            todo[0:0] = [(f"  {f.name}", f) for f in files_of.pop(path)]
    return rows


def table(rows, markdown):
    head = ("trace", "format", "ranks", "what analyze said", "s")
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    return "\n".join(f"{row[0][:70]:70s}  {row[1]:15s}  {row[2]!s:>5}  {row[3]}  ({row[4]} s)" for row in rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="*", help="files or folders (default: tests/data and the outside folder)")
    p.add_argument("--each", action="store_true", help="also each file of a folder that analyze reads whole")
    p.add_argument("--timeout", type=float, default=120, help="seconds per analyze run (default 120)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    todo, files_of = inputs(args.paths)
    if not todo:
        p.error("no traces found")
    print(table(_rows(todo, files_of, args.each, args.timeout), args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
