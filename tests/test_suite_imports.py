"""The suite runs from any folder: its helpers are imported by their own names, and no test edits the path.

``tests/`` is not a package: ``from tests._vega import ...`` worked only when pytest started in the
repository's root (the root was then on ``sys.path``), and failed with ``No module named 'tests'`` from
anywhere else. The helpers (``_vega``, ``_chartdata``, ``_exercise_checks``, ...) and a test module that
another one reuses are imported by their own names; ``tests/conftest.py`` puts this folder on the path,
once, for every import mode.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODULES = sorted(p for p in HERE.rglob("*.py") if "data" not in p.relative_to(HERE).parts)


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module or ""


def _edits_the_path(path):
    """The ``sys.path`` edits in a file: calls such as ``sys.path.insert(...)`` or ``sys.path.append(...)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [ast.unparse(n) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and ast.unparse(n.func.value) == "sys.path"]


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(HERE).as_posix() for p in MODULES])
def test_no_test_imports_the_tests_folder_as_a_package(path):
    bad = [name for name in _imports(path) if name == "tests" or name.startswith("tests.")]
    assert not bad, f"{path.name} imports {bad}: import the helper by its own name (from _vega import ...)"


@pytest.mark.parametrize("path", MODULES, ids=[p.relative_to(HERE).as_posix() for p in MODULES])
def test_only_the_conftest_files_put_folders_on_the_path(path):
    if path.name == "conftest.py":
        return
    assert _edits_the_path(path) == [], f"{path.name} edits sys.path: tests/conftest.py already puts tests/ on it"


def test_every_helper_a_test_imports_by_name_exists():
    local = {p.stem for p in HERE.glob("*.py")}
    wanted = {name.split(".")[0] for p in MODULES for name in _imports(p)
              if name.split(".")[0].startswith(("_", "test_")) and not name.startswith("__")}
    assert wanted <= local, f"imported but not in tests/: {sorted(wanted - local)}"


@pytest.mark.slow
def test_one_test_file_runs_from_another_folder(tmp_path):
    # Started in an unrelated folder, with the test files named by absolute path: the helpers still import.
    picks = [HERE / "test_exercises_mitigations.py::test_q1_lpt_by_hand", HERE / "test_charts_barrier_lab.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, picks)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "error" not in run.stdout.lower()
