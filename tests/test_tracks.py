"""The learner's path (issue 26 §2): tracks that Next leads through, and a core that fits an hour.

- The core, 00 → 01 → 02 → 03 → 04, comes to at most :data:`CORE_MINUTES` minutes by the formula of
  ``tests/_path.py`` and at most :data:`CORE_WORDS` English words; 00 states each core notebook's minutes and
  their sum, and the formula holds what it states.
- A track notebook (and an appendix) has at most 50 cells besides its hidden check cells.
- Every notebook of a track ends with a Next cell (``Next`` / ``下一本``) whose first link is the track's next
  notebook, in both languages; the last one's Next leads out of the track.
- 00, the README and both guides name the five tracks; 00's map links every notebook and every appendix.

The tracks other than the core are added here as their notebooks move to the path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _path import load, minutes, source, visible_cells, words

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CORE = ["00_start_here", "01_restaurant", "02_tail_probability", "03_expected_maximum", "04_cost_accounting"]
CORE_MINUTES = 60
CORE_WORDS = 3000
CAP = 50
APPENDICES = sorted(p.stem for p in NOTEBOOKS.glob("A[0-9]*_*.ipynb"))
# After the last notebook of a track, Next leads to one of these (the next track's first notebook, or the map).
AFTER = {"04_cost_accounting": {"05_training_step", "09_debug_a_real_job"}}
# The five tracks as 00, the README and the guides name them.
TRACK_NAMES = {"en": ("Core", "The training step", "Your own job", "Labs", "Extras"),
               "zh": ("核心", "训练的一步", "你自己的作业", "实验", "选读")}
_LINK = re.compile(r"\]\(([^)#\s]+\.ipynb)")
_NEXT = {"en": "Next", "zh": "下一本"}
_LANGS = pytest.mark.parametrize("lang", ["en", "zh"])


def _path(stem, lang):
    return (NOTEBOOKS / f"{stem}.ipynb") if lang == "en" else (NOTEBOOKS / "zh" / f"{stem}.ipynb")


def next_link(nb, word="Next"):
    """The notebook that a notebook's Next cell (its last markdown cell) leads to first, without ``.ipynb``.

    Examples
    --------
    >>> md = lambda s: {"cell_type": "markdown", "source": s, "metadata": {}}
    >>> next_link({"cells": [md("[map](00_start_here.ipynb)"), md("Done. Next: [the bill](04_cost_accounting.ipynb).")]})
    '04_cost_accounting'
    >>> next_link({"cells": [md("No way on from here.")]}) is None
    True
    """
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    if not cells or word not in source(cells[-1]):
        return None
    after = source(cells[-1]).split(word, 1)[1]
    found = _LINK.search(after)
    return Path(found.group(1)).stem if found else None


def stated_minutes(nb):
    """``({stem: minutes}, total)``: what 00's map states: a core table row per notebook, its last cell the
    minutes, and "about N minutes" (大约 N 分钟) for the whole core.

    Examples
    --------
    >>> md = {"cell_type": "markdown", "metadata": {}, "source": "Core: about 21 minutes.\\n\\n| Core | Idea | Minutes |\\n"
    ...       "|---|---|---|\\n| [00 Start](00_start_here.ipynb) | x | 10 |\\n| [01 Rest](01_restaurant.ipynb) | y | 11 |"}
    >>> stated_minutes({"cells": [md]})
    ({'00_start_here': 10, '01_restaurant': 11}, 21)
    """
    rows, total = {}, None
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = source(cell)
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
            link = _LINK.search(cells[0]) if cells else None
            if link and Path(link.group(1)).stem in CORE and cells[-1].isdigit():
                rows[Path(link.group(1)).stem] = int(cells[-1])
        found = re.search(r"about (\d+) minutes|大约 (\d+) 分钟", text)
        if found and rows:
            total = int(found.group(1) or found.group(2))
    return rows, total


def _core_minutes():
    return {stem: minutes(load(_path(stem, "en"))) for stem in CORE}


def test_the_core_fits_an_hour_and_3000_words():
    per = _core_minutes()
    assert sum(per.values()) <= CORE_MINUTES, f"the core takes {sum(per.values()):.1f} minutes: {per}"
    total = sum(words(load(_path(stem, "en"))) for stem in CORE)
    assert total <= CORE_WORDS, f"the core has {total} words, more than {CORE_WORDS}"


@_LANGS
def test_00_states_the_minutes_the_formula_gives(lang):
    per = _core_minutes()
    rows, total = stated_minutes(load(_path("00_start_here", lang)))
    assert set(rows) == set(CORE), f"00's map states minutes for {sorted(rows)}, not for every core notebook"
    for stem, stated in rows.items():
        assert abs(stated - per[stem]) <= 0.5, f"00 says {stem} takes {stated} minutes; the formula gives {per[stem]:.1f}"
    assert total is not None and abs(total - sum(per.values())) <= 0.5, (
        f"00 says the core takes about {total} minutes; the formula gives {sum(per.values()):.1f}")


@pytest.mark.parametrize("stem", CORE + APPENDICES)
@_LANGS
def test_at_most_50_cells_besides_the_hidden_checks(stem, lang):
    shown = len(visible_cells(load(_path(stem, lang))))
    assert shown <= CAP, f"{lang}/{stem}: {shown} cells besides the hidden check cells (at most {CAP})"


@_LANGS
def test_next_leads_through_the_core_and_on(lang):
    for here, there in zip(CORE, CORE[1:]):
        got = next_link(load(_path(here, lang)), _NEXT[lang])
        assert got == there, f"{lang}: {here}'s Next leads to {got}, not {there}"
    last = CORE[-1]
    got = next_link(load(_path(last, lang)), _NEXT[lang])
    assert got in AFTER[last], f"{lang}: the core ends at {last}, whose Next leads to {got}, not on to {sorted(AFTER[last])}"


# The track "your own job": Next leads from each notebook to the next (13 ends it and says what follows).
YOUR_JOB = ["09_debug_a_real_job", "09b_questions_and_remedies", "12_detector_thresholds", "13_the_fleet"]


@_LANGS
def test_next_leads_through_your_own_job(lang):
    for here, there in zip(YOUR_JOB, YOUR_JOB[1:]):
        got = next_link(load(_path(here, lang)), _NEXT[lang])
        assert got == there, f"{lang}: {here}'s Next leads to {got}, not {there}"
    assert next_link(load(_path(YOUR_JOB[-1], lang)), _NEXT[lang]) is not None, f"{lang}: the track ends without a Next"


# The labs, 10 → 11 (11 says what to read after them), and the extras, 03b and 08, each ending with a Next that says
# where to go; their word budgets (issue 26 §2: the labs at most 2,000 English words, the extras at most 1,800).
LABS = ["10_live_barrier_lab", "11_backup_workers_for_real"]
EXTRAS = ["03b_independence_and_your_numbers", "08_fact_check"]
BUDGETS = {"labs": (LABS, 2000), "extras": (EXTRAS, 1800)}


@_LANGS
def test_next_leads_through_the_labs_and_out_of_them_and_out_of_the_extras(lang):
    got = next_link(load(_path(LABS[0], lang)), _NEXT[lang])
    assert got == LABS[1], f"{lang}: {LABS[0]}'s Next leads to {got}, not {LABS[1]}"
    for stem in LABS[1:] + EXTRAS:
        got = next_link(load(_path(stem, lang)), _NEXT[lang])
        assert got not in (None, stem) and _path(got, lang).exists(), f"{lang}: {stem}'s Next leads to {got}"


@pytest.mark.parametrize("track", BUDGETS)
def test_the_labs_and_the_extras_keep_their_word_budgets(track):
    stems, budget = BUDGETS[track]
    total = sum(words(load(_path(stem, "en"))) for stem in stems)
    assert total <= budget, f"the {track} ({', '.join(stems)}) have {total} words, more than {budget}"


@pytest.mark.parametrize("stem", APPENDICES)
@_LANGS
def test_an_appendix_ends_with_next(stem, lang):
    assert next_link(load(_path(stem, lang)), _NEXT[lang]) is not None, f"{lang}/{stem} ends without a Next link"


@_LANGS
def test_00_maps_every_notebook_and_appendix_by_track(lang):
    nb = load(_path("00_start_here", lang))
    text = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    linked = {Path(m).stem for m in _LINK.findall(text)}
    missing = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb") if p.stem not in linked | {"00_start_here"})
    assert not missing, f"{lang}: 00's map does not link {missing}"
    for name in TRACK_NAMES[lang]:
        assert f"**{name}" in text, f"{lang}: 00's map does not name the track {name!r}"


@pytest.mark.parametrize("doc, lang", [("README.md", "en"), ("docs/teaching.md", "en"), ("docs/zh/teaching.md", "zh")])
def test_the_readme_and_the_guides_name_the_five_tracks(doc, lang):
    text = (ROOT / doc).read_text(encoding="utf-8")
    if doc == "README.md":
        text = text.split("## 中文版", 1)[0]
    for name in TRACK_NAMES[lang]:
        assert f"**{name}" in text, f"{doc} does not name the track {name!r} (in bold, as 00 does)"


# The training step, 05 → 06 → 06b → 07 → 07b → 07c (07c says what to read after it).
TRAINING_STEP = ["05_training_step", "06_root_causes", "06b_diagnose_and_act", "07_mitigations",
                 "07b_backup_workers_and_hedging", "07c_relaxed_sync"]


@_LANGS
def test_next_leads_through_the_training_step_and_out_of_it(lang):
    for here, there in zip(TRAINING_STEP, TRAINING_STEP[1:]):
        got = next_link(load(_path(here, lang)), _NEXT[lang])
        assert got == there, f"{lang}: {here}'s Next leads to {got}, not {there}"
    got = next_link(load(_path(TRAINING_STEP[-1], lang)), _NEXT[lang])
    assert got not in (None, TRAINING_STEP[-1]) and _path(got, lang).exists(), f"{lang}: the track ends at {got}"


# The path is the track notebooks; the appendices do not count (issue 26 §2: at most 16,000 English words).
PATH = CORE + TRAINING_STEP + YOUR_JOB + LABS + EXTRAS
PATH_WORDS = 16_000


def test_every_numbered_notebook_is_on_one_track():
    numbered = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))
    assert sorted(PATH) == numbered, f"on no track: {sorted(set(numbered) - set(PATH))}; not a notebook: " \
                                     f"{sorted(set(PATH) - set(numbered))}"


def test_the_path_holds_at_most_16000_words():
    per = {stem: words(load(_path(stem, "en"))) for stem in PATH}
    assert sum(per.values()) <= PATH_WORDS, f"the path has {sum(per.values())} words, more than {PATH_WORDS}: {per}"


# Each track asks open questions (issue 26 §6: "what would the trace not tell them?"), in both languages: at least
# two notebooks of every track end their exercises with one.
TRACKS = {"core": CORE, "the training step": TRAINING_STEP, "your own job": YOUR_JOB, "labs": LABS, "extras": EXTRAS}
_OPEN = {"en": re.compile(r"\bOpen questions?\b"), "zh": re.compile(r"开放问题")}


@pytest.mark.parametrize("track", TRACKS)
@_LANGS
def test_every_track_asks_open_questions(track, lang):
    asked = [stem for stem in TRACKS[track]
             if any(_OPEN[lang].search(source(c)) for c in load(_path(stem, lang))["cells"] if c["cell_type"] == "markdown")]
    assert len(asked) >= 2, f"{lang}: the track {track!r} asks open questions in {asked or 'no notebook'}, not in two"
