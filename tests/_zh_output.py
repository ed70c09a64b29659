"""What a reader of a Chinese twin sees, and the English left in it.

Run a twin in ``notebooks/zh/`` with nbclient (widget state stored), collect
every text a reader sees (streams, ``text/plain``, ``text/html``,
``text/markdown``, Vega-Lite specs, and widget labels, values, options and
JupyterChart specs), and list the English sentences in it: a run of three
or more Latin words with no Chinese character around, after removing what
stays English on purpose (code, units, identifiers, paths, citation titles).

Used by ``tests/test_zh_output.py``; run by hand to list a twin's leftovers::

    PYTHONPATH=$PWD python tests/_zh_output.py notebooks/zh/05_training_step.ipynb
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "notebooks" / "zh"

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)
_WORD = r"[A-Za-z][A-Za-z'\-]*"
# three or more Latin words separated by spaces (and light punctuation)
_RUN = re.compile(rf"{_WORD}(?:[ ,]+{_WORD}){{2,}}")

# Text that stays English on purpose: matched against a whole run, case-insensitively.
ALLOW = [
    r".*\b(et al|arXiv|In Proceedings|OSDI|NSDI|SOSP|EuroSys|ATC|SIGCOMM|MLSys|ICML|NeurIPS|ICLR|Proc)\b.*",  # citations
    r"(Dean|Barroso|Tail at Scale|The Tail at Scale).*",
    r".*\b(Communications of the ACM|CACM)\b.*",
    r"(DejaVu Sans|Helvetica Neue|Noto Sans|Source Han|PingFang|Hiragino|Microsoft YaHei|WenQuanYi).*",  # fonts
    r"(sans serif|sans-serif).*",
    r"(import|from|def|return|print|lambda|for|if|else|None|True|False)\b.*",  # code
    r"(all[ -]reduce|all[ -]gather|reduce[ -]scatter|send recv|broadcast).*",  # collective op names
    r".*\b(NCCL|Kineto|PyTorch|torch|nvidia-smi|Flight Recorder)\b.*",  # tool names
    r"(Traceback|File|Error|ValueError|TypeError|KeyError).*",  # error messages stay English
]
_ALLOW = [re.compile(a, re.I) for a in ALLOW]
_CITATION = re.compile(r"\bet al\.|arXiv:\d")

# Widget state keys a reader sees.
_WIDGET_KEYS = ("description", "_options_labels", "tooltip", "placeholder", "title", "_titles", "children_titles")
_TEXT_WIDGETS = ("HTMLModel", "LabelModel", "HTMLMathModel", "TextareaModel", "TextModel")
# Vega-Lite keys whose values a reader sees (or whose data holds visible strings).
_SKIP_SPEC_KEYS = {"$schema", "font", "labelFont", "titleFont", "field", "type", "scheme", "name", "as",
                   "param", "calculate", "filter", "expr", "test", "signal", "format", "timeUnit", "mark",
                   "axis_labelExpr", "labelExpr", "sort", "interpolate", "shape", "color", "stroke", "fill",
                   "fontWeight", "align", "baseline", "orient", "strokeDash", "datasets_key", "bind", "input",
                   "legendFont", "on", "clear", "encodings", "fields", "stack", "resolve", "legendX", "zindex"}


def run(path, timeout=600):
    """Execute the twin at ``path`` (cwd its folder, widget state stored); return the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    env_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    os.environ["PYTHONPATH"] = env_path
    os.environ.pop("STRAGGLE_EDU_SITE", None)
    os.environ.pop("STRAGGLE_EDU_LANG", None)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            store_widget_state=True, resources={"metadata": {"path": str(Path(path).parent)}})
    client.execute()
    return nb


def _spec_strings(spec, key=None):
    """The strings in a Vega-Lite spec that a reader may see."""
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k in _SKIP_SPEC_KEYS or k.startswith("$"):
                continue
            yield from _spec_strings(v, k)
    elif isinstance(spec, list):
        for v in spec:
            yield from _spec_strings(v, key)
    elif isinstance(spec, str):
        yield spec


def texts(nb):
    """``(cell id, where, text)`` for everything a reader sees in the executed notebook ``nb``."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                found.append((cell.id, out.name, out.text))
            elif out.output_type == "error":
                found.append((cell.id, "error", f"{out.ename}: {out.evalue}"))
            else:
                data = out.get("data", {})
                if "text/html" in data:
                    found.append((cell.id, "html", html.unescape(_TAG.sub("\n", data["text/html"]))))
                elif "text/markdown" in data:
                    found.append((cell.id, "markdown", data["text/markdown"]))
                elif "text/plain" in data and not any(k.startswith("application/vnd.jupyter.widget-view") for k in data):
                    found.append((cell.id, "plain", data["text/plain"]))
                for mime, value in data.items():
                    if "vegalite" in mime or "vega+json" in mime:
                        spec = value if isinstance(value, dict) else json.loads(value)
                        found += [(cell.id, "vega", s) for s in _spec_strings(spec)]
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model_id, model in state.items():
        st, name = model.get("state", {}), model.get("model_name", "")
        where = f"widget {name} {model_id[:6]}"
        for key in _WIDGET_KEYS:
            value = st.get(key)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str) and v:
                    found.append((where, key, html.unescape(_TAG.sub("\n", v))))
        if name in _TEXT_WIDGETS and isinstance(st.get("value"), str):
            found.append((where, "value", html.unescape(_TAG.sub("\n", st["value"]))))
        if "spec" in st:
            spec = st["spec"]
            spec = json.loads(spec) if isinstance(spec, str) else spec
            found += [(where, "spec", s) for s in _spec_strings(spec)]
    return found


def english_runs(text):
    """The English sentences in ``text``: runs of 3+ Latin words on a line without Chinese, minus ``ALLOW``."""
    runs = []
    for line in text.splitlines():
        if _CITATION.search(line):
            continue  # a citation: its title, venue and affiliations stay as published
        if _CJK.search(line):
            # a Chinese line: only long English stretches count
            chunks = [m.group(0) for m in _RUN.finditer(line) if len(m.group(0).split()) >= 4]
        else:
            chunks = [m.group(0) for m in _RUN.finditer(line)]
        for chunk in chunks:
            chunk = chunk.strip(" ,")
            if not any(a.fullmatch(chunk) for a in _ALLOW):
                runs.append(chunk)
    return runs


def leftovers(nb):
    """``(where, kind, english, text)`` for each English sentence a reader of ``nb`` sees, deduplicated."""
    seen, found = set(), []
    for where, kind, text in texts(nb):
        for run_ in english_runs(text):
            if run_ not in seen:
                seen.add(run_)
                found.append((where, kind, run_, text.strip()[:200]))
    return found


def main(paths):
    for path in paths:
        nb = run(path)
        rows = leftovers(nb)
        print(f"== {Path(path).name}: {len(rows)} English runs")
        for where, kind, english, text in rows:
            print(f"  [{where} {kind}] {english!r}   <- {text!r}")


if __name__ == "__main__":
    main(sys.argv[1:] or sorted(str(p) for p in ZH.glob("*.ipynb")))
