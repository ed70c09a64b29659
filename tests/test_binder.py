"""Binder's stand-in: a fresh environment built from ``binder/requirements.txt`` alone runs every notebook.

mybinder.org builds the image with repo2docker, which runs
``pip install -r binder/requirements.txt`` from the repository root, on the
Python that ``binder/runtime.txt`` names. These tests do the same in a fresh
virtual environment (no system site-packages, nothing from the development
environment), on a copy of the repository so the work tree is never touched,
and then execute every notebook in ``notebooks/`` there with a kernel of that
environment. Executed copies go to a temporary folder; the notebooks
themselves are never modified.

The environment is built once per test session (pip's cache makes a rebuild
quick) and reused for every notebook. Marked slow; it runs in CI.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", "_site", ".pytest_cache",
    ".hypothesis", ".ipynb_checkpoints", "screenshots",
)

# Runs inside the fresh environment: execute one notebook with nbclient, save
# the executed copy, and report as JSON. The first check proves that the
# kernel is the fresh environment's own Python.
_RUNNER = r"""
import json, sys, time
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

src, dst, prefix = sys.argv[1:4]
probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")])
NotebookClient(probe, timeout=120, kernel_name="python3").execute()
kernel_prefix = probe.cells[0].outputs[0]["text"].strip()
nb = nbformat.read(src, as_version=4)
start = time.perf_counter()
error = None
try:
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[4]}}).execute()
except CellExecutionError as exc:
    error = str(exc)[-3000:]
nbformat.write(nb, dst)
print(json.dumps({"kernel_prefix": kernel_prefix, "seconds": time.perf_counter() - start, "error": error}))
"""


def _pins():
    pins, local = {}, []
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-e ") or line in (".", "-e ."):
            local.append(line)
            continue
        req = Requirement(line)
        pins[canonicalize_name(req.name)] = req
    return pins, local


def test_binder_requirements_pin_everything_and_install_the_package():
    pins, local = _pins()
    loose = [str(r) for r in pins.values() if not re.fullmatch(r"==[^,*]+", str(r.specifier))]
    assert not loose, f"binder/requirements.txt must pin exact versions (==), found {loose}"
    assert local == ["-e ."], "binder/requirements.txt must install the package itself with '-e .' (from the repo root)"


def test_binder_pins_satisfy_the_package_and_the_slideshow_extension():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["lab"]]
    pins, _ = _pins()
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pins, f"binder/requirements.txt does not pin {req.name}, which pyproject.toml requires"
        version = next(iter(pins[name].specifier)).version
        assert req.specifier.contains(version, prereleases=True), f"{req.name}=={version} does not satisfy {req}"


def test_binder_runtime_names_a_supported_python():
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", text)
    assert match, f"binder/runtime.txt must read like 'python-3.11', got {text!r}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert Requirement(f"python{project['requires-python']}").specifier.contains(f"{match[1]}.{match[2]}")


def _runtime_python():
    major, minor = (int(x) for x in (BINDER / "runtime.txt").read_text().strip().removeprefix("python-").split("."))
    if sys.version_info[:2] == (major, minor):
        return sys.executable
    found = shutil.which(f"python{major}.{minor}")
    if found is None:
        pytest.skip(f"binder/runtime.txt asks for Python {major}.{minor}, which is not installed here")
    return found


@pytest.fixture(scope="session")
def binder_env(tmp_path_factory):
    """A fresh virtual environment with binder/requirements.txt installed, and a copy of the repo."""
    root = tmp_path_factory.mktemp("binder")
    repo = root / "repo"
    shutil.copytree(REPO, repo, ignore=_IGNORE)
    venv = root / "venv"
    subprocess.run([_runtime_python(), "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "STRAGGLE_EDU"))}
    env["JUPYTER_DATA_DIR"] = str(root / "jupyter-data")  # no kernelspecs from the user's folders
    env["JUPYTER_CONFIG_DIR"] = str(root / "jupyter-config")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", "binder/requirements.txt"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert done.returncode == 0, f"pip install -r binder/requirements.txt failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return {"python": python, "prefix": str(venv), "repo": repo, "env": env, "out": root / "executed"}


@pytest.mark.slow
def test_binder_environment_is_fresh_and_complete(binder_env):
    code = "import sys, straggle_edu, altair, anywidget, vl_convert, ipywidgets, jupyterlab_rise; print(sys.prefix, straggle_edu.__file__)"
    out = subprocess.run([str(binder_env["python"]), "-c", code], env=binder_env["env"], capture_output=True, text=True,
                         cwd=binder_env["repo"])
    assert out.returncode == 0, out.stderr
    prefix, package = out.stdout.split()
    assert prefix == binder_env["prefix"]
    assert Path(package).is_relative_to(binder_env["repo"]), "the package must come from the checkout (-e .)"
    extra = subprocess.run([str(binder_env["python"]), "-c", "import pytest"], env=binder_env["env"], capture_output=True)
    assert extra.returncode != 0, "pytest is importable: the environment is not built from binder/requirements.txt alone"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_binder_runs_notebook(binder_env, notebook):
    binder_env["out"].mkdir(exist_ok=True)
    before = notebook.read_bytes()
    src = binder_env["repo"] / "notebooks" / notebook.name
    dst = binder_env["out"] / notebook.name
    done = subprocess.run(
        [str(binder_env["python"]), "-c", _RUNNER, str(src), str(dst), binder_env["prefix"], str(src.parent)],
        env=binder_env["env"], cwd=src.parent, capture_output=True, text=True, timeout=1200,
    )
    assert done.returncode == 0, f"the runner failed:\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["kernel_prefix"] == binder_env["prefix"], "the kernel did not run in the fresh environment"
    assert report["error"] is None, f"{notebook.name} failed in the Binder environment:\n{report['error']}"
    print(f"{notebook.name}: Run-All {report['seconds']:.1f} s in the Binder environment")
    assert notebook.read_bytes() == before, "the original notebook was modified"
