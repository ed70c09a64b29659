"""The Chinese notebooks: twins of the English ones, with one language line.

``notebooks/zh/NAME.ipynb`` is the twin of ``notebooks/NAME.ipynb``:

- the same cells in the same order;
- every code cell the English one, except the first, which starts with
  :data:`LANGUAGE_LINE` (there is no second copy of the code: the library
  speaks Chinese);
- every markdown cell written in Chinese for the article's readers.

After an English code cell changes, ``python -m straggle_edu.app.translations sync``
copies the code into the twins; the markdown stays as translated.
``python -m straggle_edu.app.translations check`` (and ``tests/test_zh_notebooks.py``)
lists what keeps a twin from matching.
"""

from __future__ import annotations

import copy
import json
import pathlib
import re
import sys

__all__ = ["LANGUAGE_LINE", "NOTEBOOKS", "twin_path", "check_twin", "sync_twin", "start_twin"]

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
LANGUAGE_LINE = 'import straggle_edu; straggle_edu.set_language("zh")'
_CJK = re.compile(r"[\u4e00-\u9fff]")


def twin_path(english, lang="zh"):
    """The path of ``english``'s twin in ``lang``: ``notebooks/zh/NAME.ipynb``.

    Examples
    --------
    >>> twin_path(pathlib.Path("notebooks/02_tail_probability.ipynb")).as_posix()
    'notebooks/zh/02_tail_probability.ipynb'
    """
    english = pathlib.Path(english)
    return english.parent / lang / english.name


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _save(nb, path):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(nb, fh, ensure_ascii=False, indent=1)
        fh.write("\n")


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _lines(text):
    return text.splitlines(keepends=True)


def _with_language_line(source):
    return LANGUAGE_LINE + "\n" + source


def _expected_code(english_cells):
    """The twin's code cells: the English ones, the first with the language line."""
    out, first = [], True
    for cell in english_cells:
        if cell["cell_type"] == "code":
            out.append(_with_language_line(_source(cell)) if first else _source(cell))
            first = False
    return out


def check_twin(english, twin=None):
    """What keeps ``twin`` from being ``english``'s twin: a list of one-line findings (empty when it is).

    Examples
    --------
    >>> import tempfile
    >>> en = {"cells": [{"cell_type": "markdown", "source": "# Hello"},
    ...                 {"cell_type": "code", "source": "x = 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    >>> zh = {"cells": [{"cell_type": "markdown", "source": "# 你好"},
    ...                 {"cell_type": "code", "source": LANGUAGE_LINE + "\\nx = 1"}],
    ...       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _save(en, f"{d}/a.ipynb"); _save(zh, f"{d}/zh/a.ipynb")
    ...     check_twin(f"{d}/a.ipynb")
    []
    """
    english = pathlib.Path(english)
    twin = twin_path(english) if twin is None else pathlib.Path(twin)
    if not twin.exists():
        return [f"{twin}: missing (python -m straggle_edu.app.translations start {english.name})"]
    en_cells, zh_cells = _load(english)["cells"], _load(twin)["cells"]
    found = []
    en_types = [c["cell_type"] for c in en_cells]
    zh_types = [c["cell_type"] for c in zh_cells]
    if en_types != zh_types:
        return [f"{twin.name}: cell types differ from the English notebook ({len(zh_types)} cells against {len(en_types)})"]
    want = iter(_expected_code(en_cells))
    for index, cell in enumerate(zh_cells):
        if cell["cell_type"] == "code":
            if _source(cell) != next(want):
                found.append(f"{twin.name}: code cell {index} differs from the English one (run sync)")
        elif cell["cell_type"] == "markdown" and _source(cell).strip() and not _CJK.search(_source(cell)):
            found.append(f"{twin.name}: markdown cell {index} has no Chinese")
    return found


def sync_twin(english, twin=None):
    """Copy ``english``'s code cells into its twin, keeping the twin's markdown. Returns the cells changed.

    The twin must have the English notebook's cells in the same order; a
    cell added to the English notebook is added to the twin as it is (in
    English), for a translator to write.
    """
    english = pathlib.Path(english)
    twin = twin_path(english) if twin is None else pathlib.Path(twin)
    en = _load(english)
    zh = _load(twin) if twin.exists() else copy.deepcopy(en)
    by_id = {c.get("id"): c for c in zh["cells"] if c.get("id")}
    code = iter(_expected_code(en["cells"]))
    cells, changed = [], 0
    for cell in en["cells"]:
        mine = copy.deepcopy(by_id.get(cell.get("id"), cell))
        if cell["cell_type"] == "code":
            new = _lines(next(code))
            if _source(mine) != "".join(new) or mine.get("cell_type") != "code":
                changed += 1
            mine = copy.deepcopy(cell)
            mine["source"] = new
        cells.append(mine)
    zh["cells"] = cells
    zh["metadata"] = copy.deepcopy(en["metadata"])
    _save(zh, twin)
    return changed


def start_twin(english):
    """Start ``english``'s twin: a copy with the language line, its markdown still English, to translate."""
    english = pathlib.Path(english)
    twin = twin_path(english)
    if twin.exists():
        raise FileExistsError(f"{twin} exists: edit it, or run sync")
    return sync_twin(english, twin)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("check", "sync", "start"):
        print("usage: python -m straggle_edu.app.translations check|sync|start [NOTEBOOK ...]", file=sys.stderr)
        return 2
    names = argv[1:] or [p.name for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
    found = []
    for name in names:
        english = NOTEBOOKS / pathlib.Path(name).name
        if argv[0] == "check":
            found += check_twin(english)
        elif argv[0] == "sync":
            print(f"{english.name}: {sync_twin(english)} code cell(s) copied")
        else:
            start_twin(english)
            print(f"{twin_path(english)}: started")
    print("\n".join(found) if found else ("twins match" if argv[0] == "check" else ""), end="\n" if found or argv[0] == "check" else "")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
