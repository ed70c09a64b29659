"""The notebooks' real-process timings, held strictly: each notebook that times real processes runs alone, no timing strays.

In a notebook, a number measured on real processes (a step's wall time, the share of time a
worker waits, the rank that came last) is checked with ``timing()``
(:func:`straggle_edu.notebook.timing`): on a busy machine it shows a ⚠ note instead of
failing the learner's run, so the default tier passes beside other work. Here, in the slow tier,
which runs nothing beside this test, each of those notebooks (10, 11 and the labs' appendix A4:
every notebook whose metadata says ``runs_alone`` and that calls ``timing()``) runs once in a fresh
kernel, and a ⚠ line fails: every timing must hold to the tolerance its notebook states. The
Chinese twins run the same code (``tests/test_zh_notebooks.py``), so the English runs stand for both.
"""

import ast
import json
import re

import pytest

import _notebook_runs as runs

def _code(path):
    return [c["source"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def _timing_calls(source):
    """How many ``timing(...)`` calls a code cell makes (0 for IPython magics, which are not Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    return sum(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "timing" for n in ast.walk(tree))


TIMED = [p for p in runs.ENGLISH if runs.solo(p) and any(_timing_calls("".join(src)) for src in _code(p))]


def test_every_notebook_that_checks_a_timing_runs_alone():
    # A timing() in a notebook that the pool runs beside another would be timed on a busy machine, and never held here.
    pooled = [p.name for p in runs.ENGLISH if not runs.solo(p) and any(_timing_calls("".join(src)) for src in _code(p))]
    assert not pooled, f"{pooled} call timing() but their metadata does not say runs_alone"
    assert {"10_live_barrier_lab.ipynb", "11_backup_workers_for_real.ipynb"} <= {p.name for p in TIMED}


def _text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


@pytest.mark.slow  # times real processes: alone, in the slow tier
@pytest.mark.parametrize("path", TIMED, ids=[p.name for p in TIMED])
def test_every_timing_holds_when_the_notebook_runs_alone(path):
    run = runs.run_notebook(path)
    assert run.error is None, f"{path.name} failed at {run.error}"
    timed = [(i, c) for i, c in enumerate(run.cells) if c.cell_type == "code" and _timing_calls(c.source)]
    assert timed, f"{path.name} checks no timing with timing(): nothing to hold"
    strayed = [f"cell {i}: {line}" for i, c in timed for line in _text(c).splitlines() if line.startswith("⚠")]
    assert not strayed, f"{path.name}, run alone, strayed:\n" + "\n".join(strayed)
    for i, cell in timed:
        checked = len(re.findall(r"^✓ ", _text(cell), flags=re.M))
        assert checked >= _timing_calls(cell.source), f"{path.name} cell {i}: fewer ✓ lines than timing() calls"
