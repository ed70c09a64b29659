"""No exercise's answer is printed above its question.

Each notebook's one run of the session (``tests/_notebook_runs.py``) is read, and the text
of every output above the cell that poses an exercise is searched for that
exercise's expected value (``straggle_edu.exercises.<topic>.qN.expected()``).

The rule, made exact:

- An exercise is *posed* by the first cell that names it: a markdown cell with
  ``**qN`` (the bold question) or a code cell calling ``qN.check(``. Its module is
  the one a code cell imports it from (``from straggle_edu.exercises.<topic> import qN``).
- Outputs searched: stream text, ``text/plain``, ``text/markdown`` and
  ``text/html`` (tags stripped) of the code cells above the posing cell. Chart
  specs and widget state are not read: they are data, not text the reader sees.
- The answer "appears" when a number printed there agrees with it to 3
  significant figures, in the usual renderings: the value (0.634, 353,894) or
  the value as a percentage (63.4%, 63.4). A printed number counts only if it
  shows at least 3 significant digits ("0.63" or "2" does not give 0.634 or 2.00 away).
- Answers that are not numbers (True/False, a name), and numbers with fewer than 3
  significant digits (6, 0.5, 98: parameters that any cell may print), are not checked.
"""

from __future__ import annotations

import ast
import html
import json
import math
import numbers
import re
from pathlib import Path

import pytest

import _notebook_runs

# English notebooks only: this test executes every notebook, and a Chinese twin in notebooks/zh/ has
# the same code (tests/test_zh_notebooks.py checks the twin structure with check_twin), so
# checking the twins' structure is enough and their values are not checked twice.
NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d+))?")
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _executed(path):
    """The notebook's cells after its one run this session (tests/_notebook_runs.py)."""
    run = _notebook_runs.executed(path)
    assert run.error is None, f"{path.name} failed at {run.error}"
    return run.cells


def _significant_digits(text):
    """How many significant digits a printed number shows: '0.634' 3, '98,304' 5, '1000' 1, '2.00' 3."""
    mantissa = re.split(r"[eE]", text.replace(",", ""))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits if "." in mantissa else digits.rstrip("0"))


def _three(x):
    return float(f"{abs(x):.3g}")


def printed_numbers(text):
    """``[(token, value)]`` for every number printed in ``text``.

    Examples
    --------
    >>> printed_numbers("P = 63.4% of 1,000; S = 1.6e+03")
    [('63.4', 63.4), ('1,000', 1000.0), ('1.6e+03', 1600.0)]
    """
    found = []
    for m in _NUMBER.finditer(text):
        token = m.group(0)
        found.append((token, float(token.replace(",", ""))))
    return found


def gives_away(text, answer):
    """The printed tokens in ``text`` that show ``answer`` to 3 significant figures (as itself or as a percentage)."""
    targets = {_three(answer), _three(100 * answer)}
    return [tok for tok, x in printed_numbers(text) if _significant_digits(tok) >= 3 and _three(x) in targets]


def _checkable(answer):
    """The answer as a float when the rule applies to it (a number with 3+ significant digits), else None."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer) or answer == 0:
        return None
    return float(answer) if _significant_digits(f"{abs(float(answer)):.6g}") >= 3 else None


def _output_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        data = out.get("data", {})
        for mime in ("text/plain", "text/markdown"):
            parts.append(data.get(mime, ""))
        if "text/html" in data:
            parts.append(html.unescape(_TAG.sub(" ", data["text/html"])))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def _exercise_modules(sources):
    """``{name: module}`` for every ``from straggle_edu.exercises.<topic> import ...`` in the code."""
    found = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("straggle_edu.exercises."):
                found.update({a.asname or a.name: node.module for a in node.names})
    return found


def posed_at(cells):
    """``{qN: index of the first cell that poses it}``.

    Examples
    --------
    >>> posed_at([{"cell_type": "code", "source": "x = 1"}, {"cell_type": "markdown", "source": "**q1.** Why?"},
    ...           {"cell_type": "code", "source": "q1.check(____)\\nq2.check(____)"}])
    {'q1': 1, 'q2': 2}
    """
    first = {}
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        pattern = r"\*\*(q\d+)\b" if cell["cell_type"] == "markdown" else r"\b(q\d+)\.check\("
        for name in re.findall(pattern, source):
            first.setdefault(name, i)
    return first


def test_gives_away_reads_the_usual_renderings():
    assert gives_away("P = 0.634", 0.63397) == ["0.634"]
    assert gives_away("P = 63.4%", 0.63397) == ["63.4"]
    assert gives_away("lost $353,894", 353_894.4) == ["353,894"]
    assert gives_away("S = 1.893", 1.8934) == ["1.893"]


def test_gives_away_ignores_other_numbers_and_short_ones():
    assert gives_away("P = 0.63 at n = 100", 0.634) == []
    assert gives_away("2 workers, 0.635", 0.634) == []
    assert gives_away("S = 2", 2.0004) == []


def test_checkable_skips_booleans_and_short_numbers():
    assert [_checkable(a) for a in (True, 6, 0.5, 98, "x", 0.634, 1.893)] == [None, None, None, None, None, 0.634, 1.893]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_answer_above_its_question(path):
    import importlib

    raw = json.loads(path.read_text(encoding="utf-8"))["cells"]
    modules = _exercise_modules("".join(c["source"]) for c in raw if c["cell_type"] == "code")
    posed = {name: i for name, i in posed_at(raw).items() if name in modules}
    if not posed:
        pytest.skip(f"{path.name} poses no exercise")
    cells = _executed(path)
    found = []
    for name, index in sorted(posed.items(), key=lambda kv: kv[1]):
        answer = _checkable(getattr(importlib.import_module(modules[name]), name).expected())
        if answer is None:
            continue
        for i in range(index):
            shown = gives_away(_output_text(cells[i]), answer)
            if shown:
                found.append(f"{name} (answer {answer:.6g}, posed in cell {index}) appears in cell {i}'s output as {shown}")
    assert not found, f"{path.name}: exercise answers printed above their questions:\n" + "\n".join(found)
