"""The rooms stay honest: each imports only the rooms it is allowed to.

Checks:

- statically (by parsing every module), each room of ``straggle_edu``
  imports only the rooms listed for it in ``ALLOWED``, and none of the
  libraries listed for it in ``FORBIDDEN_LIBS``. altair 6 itself imports
  anywidget and ipywidgets when they are installed, so the charts rule is
  checked on the charts' own imports;
- nothing but the rooms below (and a few infrastructure modules) sits loose
  at the top of the package;
- at run time, importing the math and models layers (and the package) loads
  no plotting or widget library.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "straggle_edu"

# The five layers, bottom up; each may import the ones below it.
LAYERS = ["math", "models", "traces", "charts", "explorers"]
_BELOW = {room: set(LAYERS[: i + 1]) for i, room in enumerate(LAYERS)}

# For each room: the rooms of straggle_edu it may import ("_validate" is the
# shared input checker, a module at the top; "i18n" is the language switch and
# its catalogs, which every room that shows text to a reader may use).
ALLOWED = {
    "math": _BELOW["math"] | {"_validate", "i18n"},
    "models": _BELOW["models"] | {"_validate", "i18n"},
    "traces": _BELOW["traces"] | {"_validate", "i18n"},
    "charts": _BELOW["charts"] | {"_validate", "i18n"},
    # The notebook helpers show charts; they never build widgets of their own.
    "notebook": _BELOW["charts"] | {"_validate", "i18n", "notebook", "_cache"},
    # Instruments run real processes; what they predict comes from models.
    "instruments": _BELOW["traces"] | {"_validate", "i18n", "instruments"},
    "exercises": _BELOW["traces"] | {"_validate", "i18n", "instruments", "exercises", "fleet"},
    # The barrier-lab explorer starts the instrument, the fleet sandbox draws its fleet from the demo;
    # explorers show through the notebook helpers.
    "explorers": _BELOW["explorers"] | {"_validate", "i18n", "instruments", "notebook", "fleet"},
    # The fleet runs the one what-if engine over many jobs; Dask only inside functions.
    "fleet": _BELOW["traces"] | {"_validate", "i18n", "fleet"},
    "app": set(LAYERS) | {"_validate", "i18n", "instruments", "notebook", "exercises", "fleet", "app", "_cache"},
    # The language switch imports nothing of the package.
    "i18n": set(),
}

_NO_PLOTS = ("altair", "ipywidgets", "anywidget", "IPython")
FORBIDDEN_LIBS = {
    "math": _NO_PLOTS, "models": _NO_PLOTS, "traces": _NO_PLOTS, "instruments": _NO_PLOTS,
    "exercises": _NO_PLOTS, "charts": ("ipywidgets", "anywidget"), "notebook": ("ipywidgets", "anywidget"),
    "explorers": (), "app": (), "i18n": _NO_PLOTS, "fleet": _NO_PLOTS,
}

# Loose at the top: the package, ``python -m``, the input checker, the cache of
# the JavaScript bundles that the notebook helpers and the app build (one place
# for both rooms), and a shim that keeps ``torchrun -m straggle_edu.probe`` working.
TOP_LEVEL = {"__init__.py", "__main__.py", "_validate.py", "_cache.py", "probe.py"}

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
            parts = name.split(".")
            if parts[0] == "straggle_edu" and len(parts) > 1 and parts[1] not in ALLOWED[room]:
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
            if parts[0] in FORBIDDEN_LIBS[room]:
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return bad


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_layers_each_room_imports_only_what_it_may(room):
    assert _violations(room) == []


def test_layers_every_room_is_listed():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(ALLOWED)


def test_layers_nothing_loose_at_the_top():
    loose = {p.name for p in PACKAGE.glob("*.py")}
    assert loose <= TOP_LEVEL, sorted(loose - TOP_LEVEL)


def test_layers_probe_shim_stays_a_shim():
    body = (PACKAGE / "probe.py").read_text(encoding="utf-8")
    assert len(body.splitlines()) <= 15


def test_layers_checker_flags_an_upward_import(tmp_path, monkeypatch):
    fake = tmp_path / "straggle_edu" / "math"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("from ..charts import tail\nimport altair\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "straggle_edu")
    assert _violations("math") == [
        "straggle_edu/math/bad.py imports straggle_edu.charts",
        "straggle_edu/math/bad.py imports straggle_edu.charts.tail",
        "straggle_edu/math/bad.py imports altair",
    ]


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


def test_package_and_cli_import_no_heavy_libraries():
    # Every CLI call pays for what `import straggle_edu` and the parser load: scipy.stats and
    # scipy.optimize alone cost about a second, scipy.special 0.19 s, torch and pyarrow more.
    # They load on use.
    code = (
        "import sys, straggle_edu; from straggle_edu.app import cli; cli._parser(); "
        "heavy = ('scipy', 'pandas', 'altair', 'ipywidgets', 'torch', 'pyarrow'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("blocks", [[], ["--block-steps", "2"]], ids=["whole", "in-blocks"])
def test_analyze_of_a_parquet_trace_imports_neither_scipy_nor_pandas(tmp_path, blocks):
    # `analyze` of the artifact's SE trace takes about 0.3 s of CPU, most of it imports: pandas
    # (which pyarrow's to_numpy and pa.array load) and scipy would add 0.35 s that the analysis never
    # uses. In blocks, the program's sample is also read (traces._kept.KeptRows).
    from straggle_edu.traces.optrace import ARTIFACT_DATA

    trace = ARTIFACT_DATA / "trace-SE.parquet"
    code = "\n".join([
        "import contextlib, io, runpy, sys",
        f"sys.argv = ['straggle-edu', 'analyze', {str(trace)!r}, '--json', *{blocks!r}]",
        "report = io.StringIO()",
        "with contextlib.redirect_stdout(report), contextlib.suppress(SystemExit):",
        "    runpy.run_module('straggle_edu', run_name='__main__')",
        "print(round(__import__('json').loads(report.getvalue())['slowdown'], 4))",
        "print(','.join(m for m in ('scipy', 'pandas') if m in sys.modules))",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    slowdown, loaded = out.stdout.split("\n")[:2]
    assert slowdown == "1.5399", "the analysis did not run to its answer"
    assert loaded == "", f"analyze imported {loaded}"


def test_fleet_room_and_cli_parser_import_no_dask():
    # dask and distributed load only when a fleet starts or joins a cluster: the package, the
    # fleet room and the CLI parser (which configures the fleet subcommand) never import them.
    code = (
        "import sys, straggle_edu, straggle_edu.fleet, straggle_edu.fleet.cli, straggle_edu.fleet.engine; "
        "from straggle_edu.app import cli; cli._parser(); "
        "print(','.join(m for m in ('dask', 'distributed', 'tqdm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_fleet_extra_is_in_lab_and_test():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    extras = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("dask[distributed]") for r in extras["fleet"])
    assert set(extras["fleet"]) <= set(extras["lab"])
    assert set(extras["fleet"]) <= set(extras["test"])
def _module_name(path, package=None):
    """The dotted name of a module file of the package (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to((package or PACKAGE).parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package=None):
    """``{module: the package's modules it imports}``, at any depth (an import inside a function counts too).

    ``from x import y`` points at ``x.y`` when that is a module of the package, else at ``x``.
    """
    package = package or PACKAGE
    paths = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                targets |= {f"{mod}.{a.name}" if f"{mod}.{a.name}" in paths else mod for a in node.names}
        graph[name] = {t for t in targets if t in paths} - {name}
    return graph


def import_cycles(graph):
    """The strongly connected parts of ``graph`` with more than one module, each sorted: its import cycles.

    Examples
    --------
    >>> import_cycles({"a": {"b"}, "b": {"a", "c"}, "c": set()})
    [['a', 'b']]
    """
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm; the package is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
                on.discard(part[-1])
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_module_of_the_package_imports_itself_back():
    # A cycle works only by the order in which its modules happen to load (instruments/sgd.py and sgd_procs.py
    # once imported each other; the shared settings, plan and result now live in sgd_plan.py, below both).
    assert import_cycles(import_graph()) == []


def test_import_cycles_are_found_through_a_lazy_import(tmp_path):
    fake = tmp_path / "straggle_edu" / "instruments"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "front.py").write_text("def run():\n    from .back import work\n    return work()\n")
    (fake / "back.py").write_text("from .front import run\n\ndef work():\n    return 1\n")
    (fake / "alone.py").write_text("from . import back\n")
    graph = import_graph(tmp_path / "straggle_edu")
    assert graph["straggle_edu.instruments.alone"] == {"straggle_edu.instruments.back"}
    assert import_cycles(graph) == [["straggle_edu.instruments.back", "straggle_edu.instruments.front"]]
