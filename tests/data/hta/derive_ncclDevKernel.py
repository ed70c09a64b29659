"""Write the ncclDevKernel_* copies of HTA's sampled traces (derived data, see README.md).

NCCL 2.19 and later name their kernels ``ncclDevKernel_*`` where older
versions wrote ``ncclKernel_*``. The public samples use the old naming, so
this script renames every ``ncclKernel_`` in an event name to
``ncclDevKernel_`` and writes ``derived_ncclDevKernel/sampled_rank-N.json.gz``.
Nothing else changes. The gzip header carries no time stamp or file name, so
running it again gives the same bytes.

Run from the repository root:  python tests/data/hta/derive_ncclDevKernel.py
"""

import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "derived_ncclDevKernel"


def rename(data):
    """Rename ncclKernel_ to ncclDevKernel_ in every event name; return the count."""
    count = 0
    for event in data["traceEvents"]:
        name = event.get("name")
        if isinstance(name, str) and name.startswith("ncclKernel_"):
            event["name"] = "ncclDevKernel_" + name[len("ncclKernel_"):]
            count += 1
    return count


def main():
    OUT.mkdir(exist_ok=True)
    for src in sorted(HERE.glob("sampled_rank-*.json.gz")):
        with gzip.open(src, "rt", encoding="utf-8") as f:
            data = json.load(f)
        count = rename(data)
        text = json.dumps(data).encode("utf-8")
        with open(OUT / src.name, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
                f.write(text)
        print(f"{src.name}: renamed {count} kernels")


if __name__ == "__main__":
    main()
