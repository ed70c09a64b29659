"""NCCL Inspector's Prometheus text files: which GPU the others wait for, from aggregated times.

With ``NCCL_INSPECTOR_PROM_DUMP=1`` the Inspector plugin (NVIDIA/nccl
``plugins/profiler/inspector``) writes, instead of JSON lines, one file per
GPU, ``nccl_inspector_metrics_<device uuid>.prom``, rewritten every dump
interval (at least 30 s) for a node exporter's textfile collector::

    nccl_collective_exec_time_microseconds{version="v5.1",slurm_job_id="unknown",node="nvl72004-T01",gpu="GPU0",
        comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",
        algo_proto="Ring_ll"} 9498.47

Each value is the mean over the collectives of the interval that share the
labels (NCCL's bucket: communicator name, nranks, nodes, collective,
power-of-two message-size range, algorithm and protocol). The lines carry no
rank and no sequence number, so single collectives cannot be matched across
GPUs; buckets can. A collective's time on a GPU includes its wait for the
last GPU to arrive, so in each bucket seen on two or more GPUs, the GPU
with the *shortest* mean time is the last to arrive, and ``t - min(t)`` is
each other GPU's mean wait per collective. A GPU (``node/gpu``) is a suspect
when the waits it causes add up to at least
:data:`~straggle_edu.traces.suspects.SUSPECT_SHARE` of all the waiting
and the waiting is at least
:data:`~straggle_edu.traces.suspects.WAIT_SHARE` of all the time: the
rule of the JSON lines, on means.

A bucket cannot be told when it is seen on one GPU only, when the same GPU
appears twice in it, or when more GPUs report it than its ``nranks``
(several communicators share the name, e.g. ``"unknown"``, the name of every
unnamed communicator); the evidence lists each with its reason.

Text only: lines are parsed with regular expressions, never evaluated.
"""

from __future__ import annotations

import math
import re

from ..i18n import N_
from ._safe import iter_lines
from ._table import column_error, display_path
from .result import Note
from .suspects import SUSPECT_SHARE, WAIT_SHARE, suspect_analysis

__all__ = ["read_nccl_prometheus", "EXEC_TIME"]

#: The metric compared across GPUs.
EXEC_TIME = "nccl_collective_exec_time_microseconds"
_P2P = "nccl_p2p_exec_time_microseconds"
_WHAT = "NCCL Inspector Prometheus lines (nccl_...{node=...,gpu=...,comm_name=...} value)"
_NAME = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,?)')
_BUCKET = ("comm_name", "nranks", "n_nodes", "collective", "message_size", "algo_proto")
_UNESCAPE = re.compile(r"\\(.)")


def _unescape(text):
    return _UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def parse_line(line):
    """``(metric, {label: value}, number)`` of one sample line of the Prometheus text format, or None.

    Examples
    --------
    >>> parse_line('nccl_x{node="a",gpu="GPU0",comm_name="DP \\\\"0\\\\""} 12.5')
    ('nccl_x', {'node': 'a', 'gpu': 'GPU0', 'comm_name': 'DP "0"'}, 12.5)
    >>> parse_line("# HELP nccl_x") is None, parse_line("up 1 1700000000000")
    (True, ('up', {}, 1.0))
    """
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    m = _NAME.match(text)
    if not m:
        raise ValueError("no metric name")
    name, pos, labels = m.group(1), m.end(), {}
    if text[pos:pos + 1] == "{":
        pos += 1
        while True:
            lm = _LABEL.match(text, pos)
            if not lm:
                break
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
            if not lm.group(3):
                break
        rest = text[pos:].lstrip()
        if not rest.startswith("}"):
            raise ValueError("labels not closed by '}'")
        pos = len(text) - len(rest) + 1
    fields = text[pos:].split()
    if not 1 <= len(fields) <= 2:
        raise ValueError("expected a value (and a timestamp) after the labels")
    return name, labels, float(fields[0])


def _samples(files):
    """The execution-time samples of ``files``: (labels, microseconds, where) and the count of p2p samples."""
    samples, p2p = [], 0
    for f in files:
        shown = display_path(f)
        for lineno, line in iter_lines(f, _WHAT):
            if not line.startswith("nccl_"):
                continue
            try:
                parsed = parse_line(line)
            except ValueError as exc:
                raise column_error(shown, row=lineno, problem=f"not a Prometheus sample line ({exc}; expected "
                                   f"{_WHAT})") from None
            name, labels, value = parsed
            if name == _P2P:
                p2p += 1
            if name != EXEC_TIME:
                continue
            if not (math.isfinite(value) and value >= 0):
                raise column_error(shown, EXEC_TIME, lineno, "a time in microseconds >= 0", value)
            for key in ("node", "gpu") + _BUCKET[:1] + ("nranks", "collective"):
                if key not in labels:
                    raise column_error(shown, key, lineno, problem=f"the label is missing (expected {_WHAT})")
            samples.append((labels, value, f"{shown}:{lineno}"))
    return samples, p2p


def _buckets(samples):
    """``{bucket: {gpu id: microseconds}}`` and the buckets that cannot be told, with why."""
    buckets, broken = {}, {}
    for labels, value, where in samples:
        key = tuple(labels.get(k, "") for k in _BUCKET)
        gpu = f"{labels['node']}/{labels['gpu']}"
        times = buckets.setdefault(key, {})
        if gpu in times:
            broken[key] = Note(N_("{gpu} reports it twice ({where}): two snapshots, or two communicators of one name"),
                               gpu=gpu, where=where)
        times[gpu] = value
    for key, times in buckets.items():
        nranks = int(key[1]) if key[1].isdigit() else None
        if key in broken:
            continue
        if len(times) < 2:
            broken[key] = Note(N_("seen on one GPU only"))
        elif nranks is not None and len(times) > nranks:
            broken[key] = Note(N_("{count} GPUs report a communicator of nranks={nranks} under this name: several "
                                  "communicators share it, so the GPUs of one cannot be told apart"),
                               count=len(times), nranks=nranks)
    return buckets, broken


def _bucket_record(key, times):
    return dict(zip(_BUCKET, key), gpus={g: times[g] for g in sorted(times)})


def read_nccl_prometheus(path, files):
    """Suspects by (node, gpu) from NCCL Inspector Prometheus files (a :class:`SuspectAnalysis`).

    Parameters
    ----------
    path : str, os.PathLike, or list of them
        What the user named (the result's ``source``).
    files : list of paths
        The ``.prom`` files, one per GPU.

    Returns
    -------
    SuspectAnalysis
        ``format="nccl-inspector"``; ``suspects`` are ``"node/gpu"`` ids.
        ``evidence``: ``output`` = ``"prometheus"``, ``buckets`` (compared),
        ``exec_us`` and ``wait_us`` (sums of mean times per collective over
        the buckets), ``caused_wait_us`` and ``last_share`` per GPU, ``last``
        (per compared bucket: its labels, the GPUs' mean times and the last
        to arrive), ``cannot_tell`` (the other buckets, each with its
        ``reason``), ``samples``, ``p2p_samples``.

    Examples
    --------
    GPU1 of two arrives last at the all-reduces of both sizes; GPU0 waits:

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for gpu, times in (("GPU0", (900.0, 40.0)), ("GPU1", (300.0, 10.0))):
    ...     lines = [f'nccl_collective_exec_time_microseconds{{node="n1",gpu="{gpu}",comm_name="DP",nranks="2",'
    ...              f'n_nodes="1",collective="AllReduce",message_size="{size}",algo_proto="Ring_LL"}} {t}'
    ...              for size, t in zip(("1-2MB", "1-2KB"), times)]
    ...     _ = (d / f"nccl_inspector_metrics_{gpu}.prom").write_text("\\n".join(lines) + "\\n")
    >>> a = read_nccl_prometheus(d, sorted(d.iterdir()))
    >>> a.suspects, a.evidence["caused_wait_us"]
    (('n1/GPU1',), {'n1/GPU1': 630.0})
    """
    samples, p2p = _samples(files)
    if not samples:
        raise column_error(display_path(files[0]) if len(files) == 1 else str(path), EXEC_TIME,
                           problem=f"no collective execution times (expected {_WHAT})")
    buckets, broken = _buckets(samples)
    caused, last_count, exec_us, wait_us, last = {}, {}, 0.0, 0.0, []
    for key, times in sorted(buckets.items()):
        if key in broken:
            continue
        late = min(times, key=lambda g: (times[g], g))
        wait = sum(t - times[late] for t in times.values())
        caused[late] = caused.get(late, 0.0) + wait
        last_count[late] = last_count.get(late, 0) + 1
        exec_us += sum(times.values())
        wait_us += wait
        last.append({**_bucket_record(key, times), "last": late, "caused_wait_us": round(wait, 6)})
    compared = len(last)
    worth = compared > 0 and wait_us >= WAIT_SHARE * exec_us
    suspects = sorted((g for g in caused if worth and caused[g] >= SUSPECT_SHARE * wait_us),
                      key=lambda g: (-caused[g], g))
    evidence = {
        "output": "prometheus", "files": len(files), "samples": len(samples), "p2p_samples": p2p,
        "buckets": compared, "exec_us": round(exec_us, 6), "wait_us": round(wait_us, 6),
        "caused_wait_us": {g: round(v, 6) for g, v in sorted(caused.items(), key=lambda kv: (-kv[1], kv[0]))},
        "last_share": {g: last_count[g] / compared for g in sorted(last_count)},
        "last": sorted(last, key=lambda r: -r["caused_wait_us"]),
        "cannot_tell": [{**_bucket_record(k, buckets[k]), "reason": broken[k]} for k in sorted(broken)],
        "suspect_share": SUSPECT_SHARE, "wait_share": WAIT_SHARE,
    }
    return suspect_analysis("nccl-inspector", path if not isinstance(path, (list, tuple)) else ", ".join(map(str, path)),
                            suspects=suspects, evidence=evidence, notes=_notes(compared, broken, buckets))


def _notes(compared, broken, buckets):
    notes = [Note(N_("NCCL Inspector's Prometheus files hold each GPU's mean collective time per dump interval "
                     "(30 s or more), without ranks or sequence numbers: within each bucket (communicator name, "
                     "collective, message size) the GPU with the shortest mean arrived last, on average; no "
                     "slowdown can be computed"))]
    if compared == 0:
        notes.append(Note(N_("no bucket can be compared across GPUs ({count} bucket(s), see evidence.cannot_tell); "
                             "pass the .prom files of every GPU of the job, one per GPU, written in the same "
                             "interval"), count=len(buckets)))
    elif broken:
        notes.append(Note(N_("{count} of {total} bucket(s) cannot be compared (see evidence.cannot_tell)"),
                          count=len(broken), total=len(buckets)))
    return notes
