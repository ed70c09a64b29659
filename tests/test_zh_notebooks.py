"""The Chinese edition: every English notebook has a twin in ``notebooks/zh/``, and the twins' links resolve.

A twin (see :mod:`straggle_edu.app.translations`) has the English notebook's
cells in the same order, its code cells the English ones (the first starts
with the language line), and its markdown written in Chinese.

Because a twin's code is the English code, the tests that execute every
notebook and check the values it prints (``test_exercise_values.py``,
``test_claims_truth.py``) run on the English notebooks only: checking the
twin structure here is enough for the twins. ``test_notebooks.py`` checks that
the twins are stored clean, and ``test_binder.py`` runs them in a fresh
environment.

The twins live one folder deeper than the English notebooks, so a link to
the docs reads ``../../docs/glossary.md`` and a link to another notebook
``02_tail_probability.ipynb`` (its twin) or ``../02_tail_probability.ipynb``
(the English one).
"""

import sys
from pathlib import Path

import nbformat
import pytest

from straggle_edu.app.translations import LANGUAGE_LINE, check_twin, start_twin, twin_path
from test_notebooks import relative_links

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ENGLISH = sorted(NOTEBOOKS.glob("*.ipynb"))
IDS = [p.name for p in ENGLISH]

def broken_links(path):
    """The links of notebook ``path`` whose target does not exist (a notebook still to be translated is fine)."""
    nb = nbformat.read(path, as_version=4)
    broken = []
    for link in relative_links(nb):
        target = (path.parent / link).resolve()
        if target.exists():
            continue
        english = NOTEBOOKS / target.name
        if target.parent == path.parent.resolve() and target.suffix == ".ipynb" and english.exists():
            continue  # a twin not written yet: its English notebook exists
        broken.append(link)
    return sorted(set(broken))


def test_english_notebooks_exist():
    assert ENGLISH, f"no notebooks in {NOTEBOOKS}"


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_every_english_notebook_has_a_chinese_twin(english):
    found = check_twin(english)
    assert not found, "\n".join(found)


def test_every_twin_has_an_english_notebook():
    orphans = [p.name for p in sorted((NOTEBOOKS / "zh").glob("*.ipynb")) if not (NOTEBOOKS / p.name).exists()]
    assert not orphans, f"twins without an English notebook in notebooks/zh/: {orphans}"


# The link tests run per English notebook (never an empty, skipped, parameter
# set): a missing twin passes here, test_every_english_notebook_has_a_chinese_twin reports it.

@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_twin_links_resolve(english):
    twin = twin_path(english)
    if not twin.exists():
        return
    broken = broken_links(twin)
    assert not broken, (f"zh/{twin.name} links to missing files (a twin is one folder deeper: "
                        f"../../docs/..., not ../docs/...): {broken}")


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_twin_links_the_same_docs_as_the_english_notebook(english):
    """A link the English notebook has to a file outside notebooks/ leads to the same file from the twin.

    Where a document has a Chinese edition (``docs/zh/X`` beside ``docs/X``),
    the twin may link that instead.
    """
    twin = twin_path(english)
    if not twin.exists():
        return
    docs = NOTEBOOKS.parent / "docs"

    def outside(path):
        nb = nbformat.read(path, as_version=4)
        targets = {(path.parent / link).resolve() for link in relative_links(nb)
                   if not (path.parent / link).resolve().is_relative_to(NOTEBOOKS)}
        return {docs / t.relative_to(docs / "zh") if t.is_relative_to(docs / "zh") else t for t in targets}

    missing = sorted(str(p.relative_to(NOTEBOOKS.parent)) for p in outside(NOTEBOOKS / twin.name) - outside(twin))
    assert not missing, f"zh/{twin.name} does not link {missing}, which the English notebook links"


def test_broken_links_sees_a_link_written_for_the_wrong_folder(tmp_path, monkeypatch):
    notebooks = tmp_path / "notebooks"
    (notebooks / "zh").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "glossary.md").write_text("# Glossary")
    english = notebooks / "01_restaurant.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("[straggler](../docs/glossary.md#straggler) [next](02_tail_probability.ipynb)"),
        nbformat.v4.new_code_cell("x = 1"),
    ]), english)
    (notebooks / "02_tail_probability.ipynb").write_text("{}")
    monkeypatch.setattr(sys.modules[__name__], "NOTEBOOKS", notebooks)
    start_twin(english)
    twin = twin_path(english)
    nb = nbformat.read(twin, as_version=4)
    assert nb.cells[1].source == LANGUAGE_LINE + "\nx = 1"
    assert broken_links(twin) == ["../docs/glossary.md"]  # copied as is: one folder too shallow
    nb.cells[0].source = "[掉队者](../../docs/glossary.md#straggler)，[下一个](02_tail_probability.ipynb)"
    nbformat.write(nb, twin)
    assert broken_links(twin) == []
    assert check_twin(english) == []


def _stray_emphasis(markdown):
    """Asterisks left as text after rendering: an emphasis that did not open or close.

    In Chinese this happens when a closing ``**`` follows full-width
    punctuation and precedes a letter (``**先猜一猜：**一步``): CommonMark
    then does not close it. Write ``**先猜一猜**：一步``.
    """
    import re

    import mistune

    html = mistune.create_markdown()(markdown)
    text = re.sub(r"<code>.*?</code>|<[^>]+>|\$[^$]*\$", "", html, flags=re.S)
    return text.count("*")


def test_stray_emphasis_sees_a_bold_that_does_not_close():
    assert _stray_emphasis("**先猜一猜：**一步有多长？") > 0
    assert _stray_emphasis("**先猜一猜**：一步有多长？") == 0


@pytest.mark.parametrize("path", ENGLISH + sorted((NOTEBOOKS / "zh").glob("*.ipynb")),
                         ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_emphasis_renders_in_every_markdown_cell(path):
    nb = nbformat.read(path, as_version=4)
    bad = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown" and _stray_emphasis(cell.source)]
    assert not bad, f"{path.name}: cells {bad} show a literal * (an emphasis that does not open or close)"
