"""Binder's stand-in: a fresh environment built from ``binder/requirements.txt`` alone runs every notebook.

mybinder.org builds the image with repo2docker, which runs
``pip install -r binder/requirements.txt`` from the repository root, on the
newest patch release of the Python that ``binder/runtime.txt`` names. These
tests do the same in a fresh
virtual environment (no system site-packages, nothing from the development
environment), on a copy of the repository so the work tree is never touched,
and then run the student copy (``straggle-edu student-copies``) of every
notebook in ``notebooks/`` and of every Chinese twin in ``notebooks/zh/`` there
with a kernel of that environment (the twins run the same code in Chinese: this
is where a catalog that fails to load in an installed package would show).
A student copy is its notebook without the ``.solution()`` lines, run in
student mode, so one run checks both what Binder serves and what a class
gets (``tests/test_classroom.py`` checks that a copy drops nothing else).
Everything runs in a temporary copy; the notebooks themselves are never modified.

The interpreter: the newest patch release of runtime.txt's version among the
running Python, ``pythonX.Y`` on PATH and pyenv's versions (a stock Debian 12
has 3.11.2; the pins install on every 3.11.x, see the markers in the file).
Where there is none (a machine with only 3.10 or 3.12), the stand-in is
skipped and says which Python it needs.

How the copies run there: nbval, cell by cell, with a kernel of that
environment (a kernelspec written for its Python, ``--nbval-kernel-name``),
in two pytest processes at once; the notebooks that time real processes
(``runs_alone`` in their metadata) run after them, alone. This is the slow tier's
one run of each notebook; the default tier's is ``tests/test_notebook_runs.py``,
in the development environment.

The environment is built once per test session (pip's cache makes a rebuild
quick) and reused for every notebook. Marked slow; it runs in CI.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "notebooks" / "zh").glob("*.ipynb"))
IDS = [p.relative_to(REPO / "notebooks").as_posix() for p in NOTEBOOKS]

_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", "_site", ".pytest_cache",
    ".hypothesis", ".ipynb_checkpoints", "screenshots",
)

# Runs inside the fresh environment: prove that a kernel of the kernelspec is its own Python.
_PROBE = r"""
import nbformat
from nbclient import NotebookClient
probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")])
NotebookClient(probe, timeout=120, kernel_name="straggle-binder").execute()
print(probe.cells[0].outputs[0]["text"].strip())
"""
KERNEL = "straggle-binder"


def _requirements():
    """(every pinned requirement, markers kept; the local install lines)."""
    reqs, local = [], []
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-e ") or line in (".", "-e ."):
            local.append(line)
            continue
        reqs.append(Requirement(line))
    return reqs, local


def _runtime_version():
    major, minor = (int(x) for x in (BINDER / "runtime.txt").read_text().strip().removeprefix("python-").split("."))
    return major, minor


def _pins(python=None):
    """{name: requirement} of the pins that apply on Python `python` ("3.11.7"; default: the newest of runtime.txt's)."""
    python = python or "{}.{}.99".format(*_runtime_version())
    env = {"python_full_version": python, "python_version": ".".join(python.split(".")[:2])}
    reqs, local = _requirements()
    pins = {}
    for req in reqs:
        if req.marker is None or req.marker.evaluate(env):
            name = canonicalize_name(req.name)
            assert name not in pins, f"binder/requirements.txt pins {req.name} twice for Python {python}"
            pins[name] = req
    return pins, local


def test_binder_requirements_pin_everything_and_install_the_package():
    reqs, local = _requirements()
    loose = [str(r) for r in reqs if not re.fullmatch(r"==[^,*]+", str(r.specifier))]
    assert not loose, f"binder/requirements.txt must pin exact versions (==), found {loose}"
    assert local == ["-e ."], "binder/requirements.txt must install the package itself with '-e .' (from the repo root)"


def test_binder_pins_satisfy_the_package_and_the_slideshow_extension():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["lab"]]
    pins, _ = _pins()  # on the newest patch release: what Binder runs
    for req in wanted:
        name = canonicalize_name(req.name)
        assert name in pins, f"binder/requirements.txt does not pin {req.name}, which pyproject.toml requires"
        version = next(iter(pins[name].specifier)).version
        assert req.specifier.contains(version, prereleases=True), f"{req.name}=={version} does not satisfy {req}"


def test_binder_pins_one_version_of_each_package_on_every_patch_release():
    # Binder takes the newest patch release of runtime.txt's version; a user may
    # have an older one (Debian 12: 3.11.2). Markers may split a package's pin by
    # patch release, but every release gets exactly one version of every package.
    major, minor = _runtime_version()
    names = {canonicalize_name(r.name) for r in _requirements()[0]}
    for patch in range(0, 100):
        pins, _ = _pins(f"{major}.{minor}.{patch}")
        assert set(pins) == names, f"Python {major}.{minor}.{patch} gets no pin for {sorted(names - set(pins))}"


def test_binder_python_is_the_newest_patch_release_of_runtime(monkeypatch):
    major, minor = _runtime_version()
    found = {"/a/python": (major, minor, 2), "/b/python": (major, minor, 9), "/c/python": (major, minor + 1, 12)}
    monkeypatch.setattr(sys.modules[__name__], "_interpreters", lambda: list(found))
    monkeypatch.setattr(sys.modules[__name__], "_version_of", found.get)
    assert _runtime_python() == "/b/python"
    del found["/b/python"], found["/a/python"]
    with pytest.raises(pytest.skip.Exception, match=rf"needs Python {major}\.{minor}"):
        _runtime_python()


def test_binder_runtime_names_a_supported_python():
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", text)
    assert match, f"binder/runtime.txt must read like 'python-3.11', got {text!r}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert Requirement(f"python{project['requires-python']}").specifier.contains(f"{match[1]}.{match[2]}")


def _interpreters():
    """Paths of the Pythons this machine offers: this one, pythonX.Y on PATH, pyenv's."""
    major, minor = _runtime_version()
    paths = [sys.executable, shutil.which(f"python{major}.{minor}")]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    paths += sorted(str(p) for p in pyenv.glob(f"{major}.{minor}.*/bin/python{major}.{minor}"))
    return [p for p in paths if p]


def _version_of(python):
    """(major, minor, micro) of an interpreter, or None where it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return tuple(int(x) for x in out.stdout.split()) if out.returncode == 0 else None


def _runtime_python():
    """The newest patch release of runtime.txt's Python found here, as Binder takes the newest."""
    major, minor = _runtime_version()
    found = [(v, p) for p in _interpreters() if (v := _version_of(p)) and v[:2] == (major, minor)]
    if not found:
        pytest.skip(f"the Binder stand-in needs Python {major}.{minor} (binder/runtime.txt), which is not installed here "
                    f"(e.g. pyenv install {major}.{minor})")
    return max(found, key=lambda vp: vp[0])[1]


@pytest.fixture(scope="session")
def binder_env(tmp_path_factory):
    """A fresh virtual environment with binder/requirements.txt installed, and a copy of the repo."""
    python = _runtime_python()
    root = tmp_path_factory.mktemp("binder")
    repo = root / "repo"
    shutil.copytree(REPO, repo, ignore=_IGNORE)
    venv = root / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "STRAGGLE_EDU"))}
    env["JUPYTER_DATA_DIR"] = str(root / "jupyter-data")  # no kernelspecs from the user's folders
    env["JUPYTER_CONFIG_DIR"] = str(root / "jupyter-config")
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", "binder/requirements.txt"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert done.returncode == 0, f"pip install -r binder/requirements.txt failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    # A kernelspec for the fresh Python, where only this session's Jupyter looks.
    jupyter_path = root / "jupyter-path"
    subprocess.run([str(python), "-m", "ipykernel", "install", "--name", KERNEL, "--prefix", str(jupyter_path)],
                   env=env, check=True, capture_output=True, timeout=120)
    env["JUPYTER_PATH"] = str(jupyter_path / "share" / "jupyter")
    return {"python": python, "prefix": str(venv), "repo": repo, "env": env, "out": root / "executed"}


def _nbval(binder_env, notebooks, xml):
    root = binder_env["students"]
    """Start pytest + nbval (the development environment's) on ``notebooks`` with the fresh environment's kernel."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-o", "junit_family=xunit1",
           "--nbval-lax", "--nbval-kernel-name", KERNEL, "--nbval-cell-timeout", "600",
           "--rootdir", str(root), f"--junitxml={xml}", *map(str, notebooks)]
    env = dict(binder_env["env"], PATH=os.environ.get("PATH", ""))
    return subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _cells(xml):
    """``{notebook under notebooks/: [cells run, [failing cell: message, ...]]}`` from nbval's junit XML."""
    import xml.etree.ElementTree as ET

    found = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        entry = found.setdefault(case.get("file"), [0, []])
        entry[0] += 1
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            entry[1].append(f"{case.get('name')}: {(bad.get('message') or '')[:500]}")
    return found


def _run_batch(binder_env, groups, tag):
    """Run the groups of notebooks at the same time, one nbval process each; merge their cells."""
    procs, found, logs = [], {}, []
    try:
        for i, group in enumerate(groups):
            xml = binder_env["out"] / f"nbval-{tag}-{i}.xml"
            procs.append((_nbval(binder_env, group, xml), xml))
        for proc, xml in procs:
            logs.append(proc.communicate(timeout=3600)[0][-3000:])
            if xml.exists():
                found.update(_cells(xml))
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return found, logs


@pytest.fixture(scope="session")
def binder_runs(binder_env):
    """The student copy of every notebook run cell by cell by nbval in the fresh environment.

    Returns ``({notebook under notebooks/: [cells run, failures]}, nbval's output)``.
    Two nbval processes share the notebooks; the solo ones (real-process
    timing) run afterwards, alone.
    """
    import time

    import _notebook_runs

    from straggle_edu.app import classroom

    binder_env["students"] = binder_env["repo"] / "students"
    classroom.student_copies(binder_env["students"], binder_env["repo"] / "notebooks")
    copies = [binder_env["students"] / rel for rel in IDS]
    pooled = [p for p in copies if not _notebook_runs.solo(p)]
    solo = [p for p in copies if _notebook_runs.solo(p)]
    binder_env["out"].mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    found, logs = _run_batch(binder_env, [pooled[0::2], pooled[1::2]], "pool")
    more, more_logs = _run_batch(binder_env, [solo], "solo")
    found.update(more)
    print(f"Binder stand-in: {len(copies)} student copies run by nbval in {time.monotonic() - t0:.0f} s")
    return found, "\n".join(logs + more_logs)


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
def test_binder_kernel_is_the_fresh_environment(binder_env):
    out = subprocess.run([str(binder_env["python"]), "-c", _PROBE], env=binder_env["env"], capture_output=True, text=True,
                         cwd=binder_env["repo"], timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == binder_env["prefix"], "the kernel did not run in the fresh environment"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_binder_runs_the_student_copy_of_every_notebook(binder_runs, notebook):
    rel = notebook.relative_to(REPO / "notebooks").as_posix()
    before = notebook.read_bytes()
    found, log = binder_runs
    cells, failures = found.get(rel, (0, []))
    assert cells, f"nbval ran no cell of the student copy of {rel} in the Binder environment:\n{log[-3000:]}"
    assert not failures, f"the student copy of {rel} failed in the Binder environment:\n" + "\n".join(failures)
    assert notebook.read_bytes() == before, "the original notebook was modified"
