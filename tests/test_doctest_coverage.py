"""At least 90% of the public functions and classes carry a runnable example.

Public means: named in some module's ``__all__`` and not starting with ``_``.
A name that a package re-exports (``from .tail import p_any_slow``, or a lazy
``_LAZY`` entry) is counted once, in the module that defines it; constants
are not functions or classes and are not counted. A function or class "has a
doctest" when its own docstring contains a ``>>>`` line (pytest
``--doctest-modules`` runs those). Modules are parsed, not imported, so the
count is fast and needs none of the optional libraries.

Run with ``-s`` to see the table per room::

    python -m pytest -s -q tests/test_doctest_coverage.py
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "straggle_edu"
THRESHOLD = 0.90
OTHER = "constant or submodule"
ROOMS = ("math", "models", "traces", "charts", "explorers",
         "instruments", "notebook", "exercises", "fleet", "app")


def _parse_package(package):
    """Module name -> (syntax tree, is a package) for every file under ``package``."""
    trees = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        trees[name] = (ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), is_package)
    return trees


def _literal_assignment(tree, target):
    """The literal value assigned to ``target`` at the top of a module, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == target for t in node.targets
        ):
            return ast.literal_eval(node.value)
    return None


def _source_module(module, is_package, node):
    """The absolute module that an ``ImportFrom`` node imports from."""
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _assigns(tree, name):
    """Whether a module assigns ``name`` at its top level (a constant or alias)."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
            isinstance(t, ast.Name) and t.id == name for t in targets
        ):
            return True
    return False


def _definition(trees, module, name):
    """Where ``name``, as seen from ``module``, is defined.

    (defining module, def/class node) for a function or class; ``OTHER`` for
    a constant or a submodule; None when it cannot be found.
    """
    tree, is_package = trees[module]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return module, node
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _source_module(module, is_package, node)
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    if f"{source}.{alias.name}" in trees:
                        return OTHER
                    if source in trees:
                        return _definition(trees, source, alias.name)
    lazy = _literal_assignment(tree, "_LAZY") or {}  # name -> submodule
    lazy.update({n: m for m, names in (_literal_assignment(tree, "_MODULES") or {}).items() for n in names})
    if name in lazy:
        return _definition(trees, f"{module}.{lazy[name]}", name)
    if _assigns(tree, name) or f"{module}.{name}" in trees:
        return OTHER
    return None


def _room(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else "top"


def public_examples(package):
    """(room, qualified name) -> whether its docstring has a ``>>>`` example."""
    trees = _parse_package(package)
    found = {}
    for module, (tree, _) in trees.items():
        for name in _literal_assignment(tree, "__all__") or []:
            hit = None if name.startswith("_") else _definition(trees, module, name)
            if hit not in (None, OTHER):
                where, node = hit
                found[(_room(where), f"{where}.{node.name}")] = ">>>" in (ast.get_docstring(node) or "")
    return found


def coverage_table(found):
    """Room -> (with an example, public), plus an ``overall`` row."""
    table = {}
    for (room, _), has_example in sorted(found.items()):
        done, total = table.get(room, (0, 0))
        table[room] = (done + has_example, total + 1)
    table["overall"] = (sum(found.values()), len(found))
    return table


def _print_table(table, found):
    print()
    for room, (done, total) in table.items():
        print(f"{room:12s} {done:4d} / {total:4d}  {done / total:6.1%}")
    print("without an example:", ", ".join(sorted(q for (_, q), ok in found.items() if not ok)))


def test_public_examples_counts_a_small_package(tmp_path):
    pkg = tmp_path / "straggle_edu"
    (pkg / "math").mkdir(parents=True)
    (pkg / "__init__.py").write_text('from .math import f, g\n__all__ = ["f", "g", "K"]\nK = 1\n')
    (pkg / "math" / "__init__.py").write_text(
        'from .m import f, g\n__all__ = ["f", "g"]\n'
    )
    (pkg / "math" / "m.py").write_text(
        '__all__ = ["f", "g", "_h"]\n'
        'def f():\n    """F.\n\n    >>> f()\n    """\n'
        "def g():\n    \"\"\"G, no example.\"\"\"\n"
        "def _h():\n    pass\n"
    )
    found = public_examples(pkg)
    assert found == {("math", "straggle_edu.math.m.f"): True, ("math", "straggle_edu.math.m.g"): False}
    assert coverage_table(found)["overall"] == (1, 2)


def test_public_examples_resolves_every_public_name():
    # A name in __all__ that the scanner cannot place would silently drop out of
    # the share: every one must be a def, a class, a constant or a submodule.
    trees = _parse_package(PACKAGE)
    lost = [
        f"{module}.{name}"
        for module, (tree, _) in trees.items()
        for name in _literal_assignment(tree, "__all__") or []
        if not name.startswith("_") and _definition(trees, module, name) is None
    ]
    assert lost == []


def test_doctest_coverage_overall_at_least_90_percent():
    found = public_examples(PACKAGE)
    table = coverage_table(found)
    _print_table(table, found)
    done, total = table["overall"]
    assert total > 250, f"only {total} public functions and classes found; is the scanner broken?"
    assert done / total >= THRESHOLD, f"{done}/{total} = {done / total:.1%} have a doctest, need {THRESHOLD:.0%}"


def test_no_example_repeats_an_import_line():
    # A doubled ">>> from scipy import stats" runs fine and shows twice in help(); the math layer had three.
    import doctest
    import importlib
    import pkgutil

    import straggle_edu

    finder, twice = doctest.DocTestFinder(exclude_empty=True), []
    for info in pkgutil.walk_packages(straggle_edu.__path__, "straggle_edu."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional part (torch) that is not installed
            continue
        for test in finder.find(module):
            sources = [ex.source.strip() for ex in test.examples if ex.source.lstrip().startswith(("import ", "from "))]
            twice += [f"{test.name}: {s}" for s in set(sources) if sources.count(s) > 1]
    assert not twice, "examples that import the same thing twice:\n" + "\n".join(sorted(twice))
