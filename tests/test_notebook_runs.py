"""Every notebook, in both languages, runs top to bottom in a fresh kernel without an error.

This is the suite's one execution of each notebook (see ``tests/_notebook_runs.py``):
the exercise-value scan and the Chinese output scan read the same runs. A ✓
that does not hold raises in its cell (``straggle_edu.notebook.claim``), so a
wrong number fails here too. Cell by cell, one notebook at a time, the same
check is ``pytest notebooks/05_training_step.ipynb`` (nbval).
"""

import pytest

import _notebook_runs as runs

pytestmark = pytest.mark.notebooks


@pytest.mark.parametrize("path", runs.ALL, ids=[runs.rel(p) for p in runs.ALL])
def test_notebook_runs_without_error(path):
    before = path.read_bytes()
    run = runs.executed(path)
    print(f"{runs.rel(path)}: Run-All {run.seconds:.1f} s")
    assert run.error is None, f"{runs.rel(path)} failed at {run.error}"
    code = [c for c in run.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code if c.source.strip()), "a code cell did not run"
    assert path.read_bytes() == before, "executing the notebook modified the stored file"
