"""Installed as users install it: the wheel, and docs/teaching.md's two install recipes run as written.

The commands come from the guide itself (its code blocks, comments left out), so the guide and
these tests cannot drift; ``docs/zh/teaching.md`` runs the same commands.

- The offline classroom: on a "connected machine" (a copy of the checkout) the guide's lines build
  the wheelhouse; in the "room" (another copy, with that wheelhouse) the last line installs from it
  with pip pointed at the wheelhouse alone: no index, no configuration, and a proxy that refuses
  every connection, so any attempt to reach the network fails the install.
- The JupyterHub: the guide's ``python -m pip install "/path/to/straggle-edu[lab]"``, a regular
  (non-editable) install, which builds the wheel, into a fresh environment outside the checkout.
  Then the checkout is moved away, and the installed package alone runs ``straggle-edu fleet-demo``
  (203 jobs: the three public ones are package data) and notebooks 09, 11 and 13 from a copy of
  ``notebooks/``, with a kernel of that environment (their Chinese twins run the same code: the
  Chinese catalog is read from the installed package instead); ``STRAGGLE_EDU_STUDENT=1`` as the
  guide's ``jupyterhub_config.py`` sets it hides the solutions, and ``straggle-edu lab`` outside
  a checkout says in one line that the notebooks come with one.

The fast checks (the default tier) hold what the slow ones rely on: the package data lists every
kind of file in ``straggle_edu/``, the wheelhouse saves the build backend, and the Chinese guide's
commands are the English ones. The installs are the slow tier's (they need the network, like
the Binder stand-in, and take minutes).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
import types
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "straggle_edu"
GUIDE = ROOT / "docs" / "teaching.md"
ZH_GUIDE = ROOT / "docs" / "zh" / "teaching.md"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The notebooks the installed package runs: 09 opens the packaged ST trace, 11 times real processes,
# 13 builds the demo fleet from the packaged public traces and runs it on Dask.
NOTEBOOKS = ["09_debug_a_real_job.ipynb", "11_backup_workers_for_real.ipynb", "13_the_fleet.ipynb"]
# What the Chinese guide adds to the English commands: its lab opens in Chinese, its hub's kernels start in Chinese.
ZH_ADDS = (" --lang zh", ', "STRAGGLE_EDU_LANG": "zh"')
HUB_HEADINGS = {GUIDE: "### On a JupyterHub", ZH_GUIDE: "### 在 JupyterHub 上"}

_IGNORE = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", "wheelhouse", "_site",
                                 ".pytest_cache", ".hypothesis", ".ruff_cache", ".ipynb_checkpoints", "screenshots")


# ---------------------------------------------------------------------------
# the guide's commands


def code_blocks(text):
    """``[(language, code)]`` of the fenced blocks of a Markdown text, indented ones (in a list) dedented.

    Examples
    --------
    >>> code_blocks("1. Run:\\n\\n   ```bash\\n   echo hi   # a comment\\n   ```\\n")
    [('bash', 'echo hi   # a comment\\n')]
    """
    return [(m["lang"], textwrap.dedent(m["body"]))
            for m in re.finditer(r"^(?P<indent> *)```(?P<lang>\w+)\n(?P<body>.*?)^(?P=indent)```", text, flags=re.M | re.S)]


def commands(code):
    """The lines of a shell block without their comments: what a reader copies and runs.

    Examples
    --------
    >>> commands('pip wheel -w wheelhouse ".[lab]"   # on a connected machine\\n\\npython3 -m venv .venv\\n')
    ['pip wheel -w wheelhouse ".[lab]"', 'python3 -m venv .venv']
    """
    return [line for line in (re.sub(r"(^|\s+)#.*$", "", raw).strip() for raw in code.splitlines()) if line]


def section(text, heading):
    """The part of a Markdown text under ``heading`` (a line such as ``### On a JupyterHub``), up to the next heading."""
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1:]
    following = re.search(r"^#{1,3} ", rest, flags=re.M)
    return rest[: following.start()] if following else rest


def offline_recipe(guide=GUIDE):
    """(the connected machine's commands, the room's command) of the guide's offline classroom."""
    blocks = [commands(code) for lang, code in code_blocks(guide.read_text()) if "--find-links wheelhouse" in code]
    assert len(blocks) == 1, "docs/teaching.md has one offline recipe (a block with --find-links wheelhouse)"
    lines = blocks[0]
    room = [line for line in lines if "--no-index" in line]
    assert len(room) == 1 and lines[-1] == room[0], "the offline recipe ends with the room's line, the one with --no-index"
    return lines[:-1], room[0]


def hub_recipe(guide=GUIDE):
    """(the install command, the ``jupyterhub_config.py`` code) of the guide's JupyterHub section."""
    blocks = code_blocks(section(guide.read_text(), HUB_HEADINGS[guide]))
    install = [commands(code) for lang, code in blocks if lang == "bash"]
    config = [code for lang, code in blocks if lang == "python"]
    assert len(install) == 1 and len(install[0]) == 1 and len(config) == 1, "the hub section: one install line, one config"
    return install[0][0], config[0]


def test_package_data_lists_every_kind_of_file_the_package_holds():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["*"]
    files = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc")]
    assert files, "straggle_edu/ holds data files (the catalogs, the public traces)"
    left_out = [str(p.relative_to(ROOT)) for p in files if not any(fnmatch.fnmatch(p.name, pat) for pat in patterns)]
    assert not left_out, f"pyproject.toml's package-data lists no pattern for {left_out}: a wheel would leave them out"


def test_the_wheelhouse_saves_the_build_backend_and_the_room_reads_it_alone():
    connected, room = offline_recipe()
    for requirement in PYPROJECT["build-system"]["requires"]:
        saved = any("pip download" in c and "-d wheelhouse" in c and requirement in shlex.split(c) for c in connected)
        assert saved, f"the offline recipe does not save the build backend {requirement!r}: pip wheel leaves it out"
    assert shlex.split(room)[-5:] == ["--no-index", "--find-links", "wheelhouse", "-e", ".[lab]"]


def test_the_zh_guide_runs_the_english_commands():
    english, chinese = (code_blocks(p.read_text()) for p in (GUIDE, ZH_GUIDE))
    assert [lang for lang, _ in chinese] == [lang for lang, _ in english], "the two guides have the same code blocks"

    def plain(code):
        for added in ZH_ADDS:
            code = code.replace(added, "")
        return commands(code)

    for (lang, en), (_, zh) in zip(english, chinese):
        assert plain(zh) == commands(en), f"docs/zh/teaching.md runs {commands(zh)}, the English guide {commands(en)}"
    assert offline_recipe(ZH_GUIDE) == offline_recipe() and hub_recipe(ZH_GUIDE)[0] == hub_recipe()[0]


# ---------------------------------------------------------------------------
# running them


def _python():
    """The interpreter this suite runs on, as a venv would start from it (the one the wheels are built for)."""
    return os.path.realpath(sys.executable)


def _env(**extra):
    """This process's environment without what would reach into the checkout or this suite's Jupyter."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "STRAGGLE_EDU", "PIP_REQUIRE"))}
    return keep | extra


def _offline_env(**extra):
    """No index, no pip configuration, and every connection refused: pip can read the wheelhouse and nothing else."""
    env = {k: v for k, v in _env().items() if not k.startswith("PIP_") and k.lower() not in ("http_proxy", "https_proxy",
                                                                                                "all_proxy", "no_proxy")}
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens there
    return env | {"PIP_CONFIG_FILE": os.devnull, "http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead,
                  "HTTPS_PROXY": dead} | extra


def _bash(command, cwd, env, timeout=1200, label=None):
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    label = label or command
    assert done.returncode == 0, f"`{label}` failed in {cwd} (rc {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    print(f"{time.monotonic() - started:6.1f} s  {label}")
    return done.stdout


def _checkout_copy(dst):
    shutil.copytree(ROOT, dst, ignore=_IGNORE)
    return dst


def _same_python_first_on_path(folder):
    """A folder whose ``python3`` is this suite's interpreter: the room's venv must match the wheels' Python."""
    folder.mkdir()
    (folder / "python3").symlink_to(_python())
    return str(folder) + os.pathsep + os.environ.get("PATH", "")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("install")


@pytest.fixture(scope="module")
def hub(work):
    """The guide's JupyterHub install, started now in a fresh environment and waited for by the hub's test.

    It runs while the wheelhouse is built and the room installs (two installs at once keep both cores busy:
    about a minute saved); its output goes to a file, which the test shows if the install fails.
    """
    root = work / "hub"
    source = _checkout_copy(root / "straggle-edu")
    venv = root / "venv"
    subprocess.run([_python(), "-m", "venv", str(venv)], check=True, timeout=300)
    install, config = hub_recipe()
    assert install.startswith("python -m pip install ") and "/path/to/straggle-edu" in install, install
    command = install.replace("python", str(venv / "bin" / "python"), 1).replace("/path/to/straggle-edu", str(source))
    env = _env(JUPYTER_DATA_DIR=str(root / "jupyter-data"), JUPYTER_CONFIG_DIR=str(root / "jupyter-config"))
    log = root / "install.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", "-c", command], cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    hub = types.SimpleNamespace(root=root, source=source, venv=venv, env=env, config=config, command=command, log=log,
                                proc=proc, started=time.monotonic())
    try:
        yield hub
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _installed(hub, timeout=1800):
    """Wait for the hub's install; fail with its output when it failed."""
    code = hub.proc.wait(timeout=timeout)
    assert code == 0, f"`{hub.command}` failed (rc {code}):\n{hub.log.read_text()[-4000:]}"
    print(f"{time.monotonic() - hub.started:6.1f} s  {hub.command} (started beside the wheelhouse and the room)")


@pytest.fixture(scope="module")
def wheelhouse(work, hub):
    """The guide's connected-machine lines, run in a copy of the checkout whose ``.venv`` is this suite's environment.

    The hub's install (``hub``) starts first and runs meanwhile.
    """
    connected = _checkout_copy(work / "connected")
    venv = connected / ".venv"
    if sys.prefix != sys.base_prefix:
        venv.symlink_to(sys.prefix, target_is_directory=True)
    else:  # not a virtual environment: a .venv/bin/python that is this interpreter
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").symlink_to(sys.executable)
    for command in offline_recipe()[0]:
        _bash(command, connected, _env())
    return connected / "wheelhouse"


@pytest.mark.slow
def test_the_wheel_holds_every_file_of_the_package(wheelhouse):
    wheels = sorted(wheelhouse.glob("straggle_edu-*.whl"))
    assert len(wheels) == 1, f"the wheelhouse holds no straggle-edu wheel: {sorted(p.name for p in wheelhouse.iterdir())}"
    held = set(zipfile.ZipFile(wheels[0]).namelist())
    files = [p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    missing = [f for f in files if f not in held]
    assert not missing, f"the wheel leaves out {missing}"
    assert "straggle_edu/traces/data/osdi2025/LICENSE" in held and "straggle_edu/traces/data/LICENSE.txt" in held


@pytest.mark.slow
def test_the_offline_recipe_installs_from_the_wheelhouse_alone(wheelhouse, work):
    room = _checkout_copy(work / "room")
    (room / "wheelhouse").symlink_to(wheelhouse, target_is_directory=True)
    env = _offline_env(PATH=_same_python_first_on_path(work / "room-bin"))
    _bash(offline_recipe()[1], room, env)
    python = room / ".venv" / "bin" / "python"
    code = "import distributed, jupyterlab, jupyterlab_rise, pyarrow, straggle_edu; print(straggle_edu.__file__)"
    where = _bash(f"{python} -c {shlex.quote(code)}", room, env).strip()
    assert Path(where).is_relative_to(room / "straggle_edu"), f"the room imports straggle_edu from {where}, not its checkout"
    out = _bash(f"{room / '.venv' / 'bin' / 'straggle-edu'} fleet-demo demo --jobs 5", room, env)
    assert _public_jobs(room / "demo") == (8, ["osdi-AR", "osdi-SE", "osdi-ST"]), out


def _public_jobs(demo):
    """(jobs in a demo fleet's manifest, the ids of the artifact's sample traces among them)."""
    rows = (demo / "manifest.csv").read_text().splitlines()[1:]
    return len(rows), sorted(row.split(",")[0] for row in rows if row.startswith("osdi-"))


def _run_notebooks(python, folder, names, env):
    """Execute the notebooks in ``folder`` with the kernel of ``python``'s environment; ``{name: errors}`` and its prefix."""
    runner = textwrap.dedent("""
        import json, sys
        import nbformat
        from nbclient import NotebookClient
        found = {}
        for path in sys.argv[1:]:
            nb = nbformat.read(path, as_version=4)
            nb.cells.append(nbformat.v4.new_code_cell("import sys, straggle_edu; print(sys.prefix); print(straggle_edu.__file__)"))
            NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}).execute()
            errors = [f"cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells) if c.cell_type == "code"
                      for o in c.get("outputs", []) if o.get("output_type") == "error"]
            probe = "".join(o.get("text", "") for o in nb.cells[-1].outputs).split()
            found[path] = {"errors": errors, "probe": probe}
        print(json.dumps(found))
    """)
    paths = [str(folder / name) for name in names]
    out = _bash(f"{python} -c {shlex.quote(runner)} " + " ".join(map(shlex.quote, paths)), folder, env, timeout=1800,
                label=f"execute {', '.join(names)}")
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_hub_recipe_installs_a_wheel_that_works_without_the_checkout(hub):
    _installed(hub)
    hub.source.rename(hub.root / "moved-away")  # from here on, nothing can read the checkout
    venv, env, folder, python = hub.venv, hub.env, hub.root, hub.venv / "bin" / "python"

    installed = _bash(f"{python} -c 'import straggle_edu; print(straggle_edu.__file__)'", folder, env).strip()
    assert Path(installed).is_relative_to(venv), f"straggle_edu comes from {installed}, not the environment"

    out = _bash(f"{venv / 'bin' / 'straggle-edu'} fleet-demo demo", folder, env)
    assert _public_jobs(folder / "demo") == (203, ["osdi-AR", "osdi-SE", "osdi-ST"]), out
    assert (folder / "demo" / "public" / "LICENSE.txt").is_file()

    notebooks = shutil.copytree(ROOT / "notebooks", folder / "notebooks", ignore=_IGNORE)
    runs = _run_notebooks(python, notebooks, NOTEBOOKS, env)
    for name in NOTEBOOKS:
        run = runs[str(notebooks / name)]
        assert not run["errors"], f"{name} fails under the installed wheel: {run['errors']}"
        assert run["probe"][0] == str(venv) and Path(run["probe"][1]).is_relative_to(venv), f"{name} ran in {run['probe']}"

    # The Chinese twins run the same code; what they add is the catalog, read from the installed package.
    zh = _bash(f"{python} -c 'import straggle_edu as se; se.set_language(\"zh\"); from straggle_edu.i18n import _; "
               f"print(_(\"slowdown\"))'", folder, env).strip()
    assert zh == "减速比", f"the installed package's catalog gives {zh!r} for 'slowdown'"

    spawner = types.SimpleNamespace(Spawner=types.SimpleNamespace())
    exec(hub.config, {"c": spawner})  # the guide's jupyterhub_config.py lines
    student = _bash(f"{python} -c 'from straggle_edu.exercises.tail import q1; q1.solution()'", folder,
                    env | spawner.Spawner.environment)
    assert "Solutions are not part of the student copy" in student, student

    empty = folder / "empty"
    empty.mkdir()
    lab = subprocess.run([str(venv / "bin" / "straggle-edu"), "lab", "--no-browser"], cwd=empty, env=env,
                         capture_output=True, text=True, timeout=120)
    assert lab.returncode == 2 and "a checkout of straggle-edu" in lab.stderr and len(lab.stderr.splitlines()) == 1, lab
