"""The layers stay honest: lower rooms never import higher ones.

Two checks:

- at run time, importing the math and models layers (and the package) loads
  no plotting or widget library;
- statically (by parsing every module), no module imports from a layer above
  its own. altair 6 itself imports anywidget and ipywidgets when they are
  installed, so the charts rule is checked on the charts' own imports.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "straggle_edu"

# For each room: the modules it must never import (prefix match).
FORBIDDEN = {
    "math": ("altair", "ipywidgets", "anywidget", "IPython", "straggle_edu.models", "straggle_edu.traces",
             "straggle_edu.charts", "straggle_edu.explorers", "straggle_edu.exercises"),
    "models": ("altair", "ipywidgets", "anywidget", "IPython", "straggle_edu.charts", "straggle_edu.explorers",
               "straggle_edu.exercises"),
    "traces": ("altair", "ipywidgets", "anywidget", "IPython", "straggle_edu.charts", "straggle_edu.explorers",
               "straggle_edu.exercises"),
    "charts": ("ipywidgets", "anywidget", "straggle_edu.explorers", "straggle_edu.exercises"),
}


def imported_modules(path):
    """Absolute names of every module that the file imports (at any depth)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names.append(mod)
            names += [f"{mod}.{alias.name}" for alias in node.names]
    return names


def _violations(room):
    bad = []
    for path in sorted((PACKAGE / room).rglob("*.py")):
        for name in imported_modules(path):
            for forbidden in FORBIDDEN[room]:
                if name == forbidden or name.startswith(forbidden + "."):
                    bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return bad


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_layers_no_module_imports_a_higher_room(room):
    assert _violations(room) == []


def test_layers_checker_resolves_relative_imports():
    path = PACKAGE / "models" / "samplers.py"
    names = imported_modules(path)
    assert "straggle_edu.math.order_stats" in names and "straggle_edu._validate" in names


@pytest.mark.parametrize("module", ["straggle_edu.math", "straggle_edu", "straggle_edu.models"])
def test_math_and_models_import_no_charts_or_widgets(module):
    code = (
        f"import sys, {module}; "
        "bad = [m for m in ('altair', 'ipywidgets', 'anywidget', 'IPython') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
