"""Every notebook is stored clean, presents as slides, and links only to notebooks that exist or are planned.

The notebooks are found when the tests are collected, so a notebook added
later is covered with no change here. The Chinese twins in ``notebooks/zh/``
are held to the same rules (their twin structure is ``tests/test_zh_notebooks.py``'s).
Executing them is nbval's job (``pytest notebooks/``) and, in a fresh
environment, ``tests/test_binder.py``'s.
"""

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ENGLISH = sorted(NOTEBOOKS.glob("*.ipynb"))
PATHS = ENGLISH + sorted(NOTEBOOKS.glob("zh/*.ipynb"))
IDS = [p.relative_to(NOTEBOOKS).as_posix() for p in PATHS]

SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}

# Every notebook the project plans, by its fixed file name. A link to one of
# these is fine before it exists; a link to anything else must resolve.
PLANNED = [
    "00_start_here.ipynb",
    "01_restaurant.ipynb",
    "02_tail_probability.ipynb",
    "03_expected_maximum.ipynb",
    "03b_independence_and_your_numbers.ipynb",
    "04_cost_accounting.ipynb",
    "05_training_step.ipynb",
    "06_root_causes.ipynb",
    "06b_diagnose_and_act.ipynb",
    "07_mitigations.ipynb",
    "07b_backup_workers_and_hedging.ipynb",
    "07c_relaxed_sync.ipynb",
    "08_fact_check.ipynb",
    "09_debug_a_real_job.ipynb",
    "09b_questions_and_remedies.ipynb",
    "10_live_barrier_lab.ipynb",
    "11_backup_workers_for_real.ipynb",
    "12_detector_thresholds.ipynb",
    "13_the_fleet.ipynb",
]

_MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)


def _read(path):
    return nbformat.read(path, as_version=nbformat.NO_CONVERT)


def relative_links(nb):
    """The relative link targets (files, without #fragments) in a notebook's markdown cells, as written:
    markdown links and images, HTML ``href`` and ``src``."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for target in _MD_LINK.findall(cell.source) + _HTML_LINK.findall(cell.source):
            url = urlparse(target)
            if url.scheme or url.netloc or not url.path:
                continue
            found.append(unquote(url.path))
    return found


def notebook_links(nb):
    """Relative links to .ipynb files in a notebook's markdown cells, as written."""
    return [link for link in relative_links(nb) if link.endswith(".ipynb")]


def test_notebooks_exist():
    assert ENGLISH, f"no notebooks found in {NOTEBOOKS}"
    unexpected = sorted({p.name for p in PATHS} - set(PLANNED))
    assert not unexpected, f"notebooks not in the planned list (add them to PLANNED): {unexpected}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_is_valid_nbformat_4(path):
    nb = _read(path)
    assert nb.nbformat == 4
    nbformat.validate(nb)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_is_stored_without_outputs(path):
    nb = _read(path)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name}: code cells {dirty} have outputs or an execution count; clear them before committing"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_is_stored_without_widget_state(path):
    nb = _read(path)
    assert "widgets" not in nb.metadata, f"{path.name}: metadata.widgets holds saved widget state; remove it"
    cells = [i for i, c in enumerate(nb.cells) if "widgets" in c.get("metadata", {})]
    assert not cells, f"{path.name}: cells {cells} carry widget state in their metadata"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_kernel_is_python3(path):
    spec = _read(path).metadata.get("kernelspec", {})
    assert spec.get("name") == "python3" and spec.get("language") == "python", f"{path.name}: kernelspec is {spec}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_every_cell_has_a_slide_type(path):
    nb = _read(path)
    assert nb.cells, f"{path.name} has no cells"
    bad = [
        (i, c.get("metadata", {}).get("slideshow", {}).get("slide_type"))
        for i, c in enumerate(nb.cells)
        if c.get("metadata", {}).get("slideshow", {}).get("slide_type") not in SLIDE_TYPES
    ]
    assert not bad, f"{path.name}: cells without a valid slideshow.slide_type (index, value): {bad}"
    assert nb.cells[0].metadata.slideshow.slide_type == "slide", f"{path.name}: the first cell must be a slide"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_links_point_to_existing_or_planned_notebooks(path):
    broken = []
    for link in notebook_links(_read(path)):
        target = (path.parent / link).resolve()
        if target.exists():
            continue
        if target.parent in (NOTEBOOKS, NOTEBOOKS / "zh") and target.name in PLANNED:
            continue
        broken.append(link)
    assert not broken, f"{path.name} links to notebooks that neither exist nor are planned: {broken}"


def test_start_here_links_every_planned_notebook():
    path = NOTEBOOKS / "00_start_here.ipynb"
    links = {Path(link).name for link in notebook_links(_read(path))}
    missing = [name for name in PLANNED[1:] if name not in links]
    assert not missing, f"the map does not link {missing}"


def test_notebook_links_finds_markdown_and_html_links_only():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(
            "[a](01_restaurant.ipynb) [b](https://x.org/y.ipynb) [c](02_tail_probability.ipynb#the-curve) "
            '<a href="03_expected_maximum.ipynb">d</a> [e](docs/teaching.md)'),
        nbformat.v4.new_code_cell("# [f](99_not_a_link.ipynb)"),
    ])
    assert notebook_links(nb) == ["01_restaurant.ipynb", "02_tail_probability.ipynb", "03_expected_maximum.ipynb"]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_that_runs_real_processes_runs_alone(path):
    # A notebook whose code starts real processes (straggle_edu.instruments) compares measured seconds
    # with a prediction: it must say so, so that the site and the suite run it with nothing beside it.
    nb = _read(path)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    real = "straggle_edu.instruments" in code or "straggle_edu.explorers.barrier_lab" in code
    flagged = nb.metadata.get("straggle_edu", {}).get("runs_alone", False)
    assert flagged == real, f"{path.name}: metadata straggle_edu.runs_alone is {flagged}, but the notebook " + (
        "starts real processes" if real else "starts none")
