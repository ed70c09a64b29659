"""The learner's path, measured: words, visible cells, prompts, explorers, exercises and minutes of a notebook.

One formula for every notebook (issue 26 §2), the one ``00_start_here`` states for the core:

    minutes = words / 200 + 0.25 × visible code cells + 0.5 × prompts + 2 × explorers + 2 × exercises

- *words*: the words of the markdown cells (English notebooks; a word is a run of letters, digits or ').
- *visible code cells*: code cells not tagged ``check`` (a hidden check cell is not read by the learner).
- *prompts*: markdown cells tagged ``guess`` ("Guess first").
- *explorers*: calls of a ``*_explorer(`` in the code.
- *exercises*: the distinct ``qN.check(`` calls in the code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# Notebooks not yet moved to the guess mechanism of docs/teaching.md ("Guess first"): tests/test_guesses.py holds
# the others, and the old rule (test_exercise_values.py's test_no_guess_is_answered_before_it_is_asked) still holds
# these. Each is taken off as it moves, with its twin; empty when done.
PENDING = set()
_WORD = re.compile(r"[A-Za-z0-9']+")
_EXPLORER = re.compile(r"\b\w+_explorer\(")
_EXERCISE = re.compile(r"\b(q\d+)\.check\(")


def load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source(cell):
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def hidden_check(cell):
    """A check cell: code tagged ``check`` with its source hidden (it runs, the learner does not read it)."""
    return (cell["cell_type"] == "code" and "check" in tags(cell)
            and cell.get("metadata", {}).get("jupyter", {}).get("source_hidden") is True)


def visible_cells(nb):
    """The cells a learner reads: every cell but the hidden check cells (the 50-cell cap counts these)."""
    return [c for c in nb["cells"] if not hidden_check(c)]


def words(nb):
    return sum(len(_WORD.findall(source(c))) for c in nb["cells"] if c["cell_type"] == "markdown")


def counts(nb):
    """``{"words", "cells", "code", "prompts", "explorers", "exercises"}`` of a notebook (a dict from :func:`load`)."""
    code = [source(c) for c in visible_cells(nb) if c["cell_type"] == "code"]
    every_code = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "code")
    return {
        "words": words(nb),
        "cells": len(visible_cells(nb)),
        "code": len(code),
        "prompts": sum(1 for c in nb["cells"] if c["cell_type"] == "markdown" and "guess" in tags(c)),
        "explorers": len(_EXPLORER.findall(every_code)),
        "exercises": len(set(_EXERCISE.findall(every_code))),
    }


def minutes(nb):
    """The notebook's minutes by the formula above."""
    n = counts(nb)
    return n["words"] / 200 + 0.25 * n["code"] + 0.5 * n["prompts"] + 2 * n["explorers"] + 2 * n["exercises"]


if __name__ == "__main__":  # a table of every notebook: python tests/_path.py
    total = 0.0
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = load(path)
        n, m = counts(nb), minutes(nb)
        total += n["words"]
        print(f"{path.stem:42s} words {n['words']:5d}  cells {n['cells']:3d}  code {n['code']:3d}  prompts "
              f"{n['prompts']:2d}  explorers {n['explorers']:2d}  exercises {n['exercises']:2d}  minutes {m:6.1f}")
    print(f"{'all':42s} words {int(total):5d}")
