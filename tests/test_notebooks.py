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
    "A1_core_in_depth.ipynb",
    "A2_more_on_the_step.ipynb",
    "A3_your_job_in_depth.ipynb",
    "A4_labs_in_depth.ipynb",
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
def exercise_numbering_gaps(nb):
    """The exercise numbers a notebook skips without saying where they are: ``[qN]``.

    A notebook poses its exercises with ``**qN`` in markdown. When they are not q1, q2, ..., qk, a missing qN is
    explained when a markdown cell names it (``qN``) next to a link to a notebook (``.ipynb``): "numbered across
    07, 07b and 07c: q4 and q7 in [07c](07c_relaxed_sync.ipynb)".

    Examples
    --------
    >>> md = lambda s: nbformat.v4.new_markdown_cell(s)
    >>> exercise_numbering_gaps(nbformat.v4.new_notebook(cells=[md("**q1.** x"), md("**q5.** y")]))
    ['q2', 'q3', 'q4']
    >>> exercise_numbering_gaps(nbformat.v4.new_notebook(cells=[md("q2-q4 are in [9b](09b.ipynb).\\n\\n**q1.** x"),
    ...                                                           md("**q5.** y")]))
    []
    """
    sources = [c.source for c in nb.cells if c.cell_type == "markdown"]
    posed = {int(n) for s in sources for n in re.findall(r"\*\*q(\d+)\b", s)}
    if not posed:
        return []
    missing = [n for n in range(1, max(posed) + 1) if n not in posed]
    explained = set()
    for s in sources:
        for paragraph in re.split(r"\n\s*\n", s):
            if ".ipynb" in paragraph:
                named = {int(a) for a in re.findall(r"(?<!\*)\bq(\d+)\b", paragraph)}
                ranges = re.findall(r"\bq(\d+)\s*[-–]\s*q(\d+)\b", paragraph)
                named |= {n for a, b in ranges for n in range(int(a), int(b) + 1)}
                explained |= named
    return [f"q{n}" for n in missing if n not in explained]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_exercise_numbers_skip_only_where_the_notebook_says_why(path):
    gaps = exercise_numbering_gaps(_read(path))
    assert not gaps, f"{path.name} skips {gaps} without saying which notebook poses them"


def _statements(text):
    """Paragraphs, with each list item and table row on its own."""
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.splitlines()
        if any(ln.lstrip().startswith(("|", "- ", "* ", ">")) for ln in lines):
            yield from lines
        else:
            yield paragraph


def unqualified_bias_claims(text):
    """Statements that a dropped persistent straggler biases the model (or its data stops counting) without saying
    when: only when each worker owns a fixed shard of the data. With random batches a backup just wastes its work.

    Examples
    --------
    >>> unqualified_bias_claims("A persistent straggler is dropped every step, and its data stops counting.")
    ['A persistent straggler is dropped every step, and its data stops counting.']
    >>> unqualified_bias_claims("A persistent straggler that owns a shard is dropped every step: its shard stops counting.")
    []
    """
    found = []
    for s in _statements(text):
        low = s.lower()
        english = "persistent" in low and re.search(r"\bbias|stops? counting|drops? out of training", low) and "shard" not in low
        chinese = "持续" in s and re.search(r"偏差|不算数|不再起作用|退出了训练", s) and "分片" not in s
        if english or chinese:
            found.append(s.strip())
    return found


_GUIDES = [NOTEBOOKS.parent / "docs" / "teaching.md", NOTEBOOKS.parent / "docs" / "zh" / "teaching.md"]


@pytest.mark.parametrize("path", PATHS + _GUIDES, ids=IDS + ["docs/teaching.md", "docs/zh/teaching.md"])
def test_a_dropped_persistent_straggler_biases_only_through_its_shard(path):
    # 11 shows that a backup hides a persistent straggler without bias when batches are random; 07c's bias comes
    # from fixed per-worker shards. No text may say the first without the condition of the second.
    if path.suffix == ".ipynb":
        text = "\n\n".join(c.source for c in _read(path).cells if c.cell_type == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    assert unqualified_bias_claims(text) == []
