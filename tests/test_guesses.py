"""A guess holds until the learner commits (issue 26 §1), in both languages.

The mechanism, one for every notebook (``docs/teaching.md``, "Guess first"):

    [markdown, tag guess]   ... *Guess first:* ...? Then run the next cell.     (zh: **先猜一猜**：…？猜完再运行下面的单元格。)
    [code, tag reveal]      computes the answer, no literal of it in its source, and shows it (reveal, say or show)
    [markdown, fragment]    the explanation
    [code, tag check,       claim(...) / calibrated(...) / cite(...): the literals the prose quotes, checked; it runs
     source hidden]         under Run All and fails the run when a number drifts, and prints its ✓ line after the reveal

Static rules (every notebook not in :data:`PENDING`):

- a markdown cell with a prompt ("Guess first", 先猜) is tagged ``guess``, and a cell tagged ``guess`` has one;
- the cell right after it is its ``reveal``: a code cell tagged ``reveal``, not hidden;
- every code cell that checks or cites a figure (``claim(``, ``timing(``, ``calibrated(``, ``cite(``) is a hidden check cell;
- no more than 50 cells that are not hidden check cells;
- a Chinese twin tags its prompts as the English notebook does.

Give-aways (the notebook's one run of the session; see ``tests/_notebook_runs.py``): the answer of a prompt is what
its reveal and the rest of its slide state — the reveal's "→" values, the figures its ✓ lines quote, the published
figures its ≈ lines were calibrated to, the figures its cited lines give, and the figures its prose sets in bold. No
answer may be visible before the commit:

- in the markdown above the prompt or in the prompt's own cell (a figure of at least 2 significant digits, or set in
  bold, stated to its precision: "63%" states 0.634; a number the prompt sentence names is a parameter);
- in the source of a visible code cell above the reveal, or of the reveal itself;
- in an output above the prompt: printed text, a readout (HTML and label widgets) or a chart's rendered text (its
  titles, labels and annotations, drawn offline with vl-convert: "50% at 69 workers").

In a lab that times real processes (10, 11, A4), an output's measured numbers change from run to run; there only the
figures an output quotes from the prose count (see :func:`given_away`).
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from pathlib import Path

import pytest

import _notebook_runs
from _path import PENDING, hidden_check, load, source, tags, visible_cells
from test_exercise_values import _output_text, _significant_digits, bold_figures, printed_numbers, quoted_figures

ROOT = Path(__file__).resolve().parent.parent
EN = sorted((ROOT / "notebooks").glob("*.ipynb"))
ZH = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))

CAP = 50

PROMPT = re.compile(r"\bGuess first\b|\bGuess\s*:|先猜")
_PROMPT_SENTENCE = re.compile(r"(?:\bGuess first\b|\bGuess\s*:|先猜)[^?？\n]*[?？]?")
_CHECKS = re.compile(r"\b(?:claim|timing|calibrated|cite|demo_figure)\(")
_REVEALED = re.compile(r"^→ (?P<label>.*)[:：] ?(?P<value>[^\n:：]*)$", re.M)
_CALIBRATED_TO = re.compile(r"^≈ .*?, calibrated to (?P<target>[^\n(]*)", re.M)
_CALIBRATED_ZH = re.compile(r"^≈ .*?，校准到 (?P<target>[^\n（(]*)", re.M)
_CITED = re.compile(r"^(?:cited|引用)[:：] .*? = (?P<figure>[^\n(（]*)", re.M)
_DEMO = re.compile(r"^(?:demo|演示)[:：] ?.*? = .*?[(（](?:quoted|文中)[:：] ?(?P<quoted>[^\n)）]*)[)）]$", re.M)
_NEW_SLIDE = ("slide", "subslide")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _converted(paths):
    return [p for p in paths if p.stem not in PENDING]


def _id(p):
    return p.relative_to(ROOT / "notebooks").as_posix()


def _slide(cell):
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def structure_problems(nb):
    """``[message]``: where ``nb`` (a notebook dict) breaks the static rules above.

    Examples
    --------
    >>> md = lambda s, *t: {"cell_type": "markdown", "source": s, "metadata": {"tags": list(t)}}
    >>> code = lambda s, *t, hidden=False: {"cell_type": "code", "source": s, "metadata": {"tags": list(t),
    ...     **({"jupyter": {"source_hidden": True}} if hidden else {})}}
    >>> good = [md("*Guess first:* n = 100? Then run the next cell.", "guess"), code("reveal('P', p)", "reveal"),
    ...         md("63.4%."), code("claim('P', p, 0.634)", "check", hidden=True)]
    >>> structure_problems({"cells": good})
    []
    >>> structure_problems({"cells": [md("*Guess first:* n?"), code("claim('P', p, 0.634)")]})  # doctest: +NORMALIZE_WHITESPACE
    ['cell 0: a prompt, not tagged guess', 'cell 0: its next cell is no reveal code cell',
     'cell 1: checks a figure in view (tag it check and hide its source)']
    """
    cells, found = nb["cells"], []
    for i, cell in enumerate(cells):
        text = source(cell)
        if cell["cell_type"] == "markdown":
            prompt, tagged = bool(PROMPT.search(text)), "guess" in tags(cell)
            if prompt and not tagged:
                found.append(f"cell {i}: a prompt, not tagged guess")
            elif tagged and not prompt:
                found.append(f"cell {i}: tagged guess, but no prompt (Guess first / 先猜)")
            if prompt or tagged:
                after = cells[i + 1] if i + 1 < len(cells) else None
                if after is None or after["cell_type"] != "code" or "reveal" not in tags(after):
                    found.append(f"cell {i}: its next cell is no reveal code cell")
                elif hidden_check(after):
                    found.append(f"cell {i + 1}: a reveal must be in view, not hidden")
        elif cell["cell_type"] == "code":
            if _CHECKS.search(text) and not hidden_check(cell):
                found.append(f"cell {i}: checks a figure in view (tag it check and hide its source)")
            if "check" in tags(cell) and not hidden_check(cell):
                found.append(f"cell {i}: tagged check, but its source is not hidden (metadata.jupyter.source_hidden)")
    shown = len(visible_cells(nb))
    if shown > CAP:
        found.append(f"{shown} cells besides the hidden check cells (at most {CAP})")
    return found


@pytest.mark.parametrize("path", _converted(EN + ZH), ids=_id)
def test_every_guess_has_its_reveal_and_every_check_is_hidden(path):
    found = structure_problems(load(path))
    assert not found, f"{_id(path)}:\n" + "\n".join(found)


@pytest.mark.parametrize("path", _converted(ZH), ids=_id)
def test_a_twin_tags_its_prompts_as_the_english_notebook(path):
    english, twin = load(ROOT / "notebooks" / path.name)["cells"], load(path)["cells"]
    guessed = lambda cells: [i for i, c in enumerate(cells) if "guess" in tags(c)]
    assert guessed(twin) == guessed(english), f"{_id(path)}: prompts at {guessed(twin)}, English at {guessed(english)}"


# ---------------------------------------------------------------------------------------------------------------
# Give-aways


def _figures(text, pattern, group):
    return [found for m in pattern.finditer(text) for found in printed_numbers(m.group(group))]


def answers(cells, i):
    """``[(token, value)]``: what the prompt of markdown cell ``i`` reveals: its reveal cell, the prose after it and
    its first run of check cells (the slide's reveal ends there, or at a new slide or prompt)."""
    found, j, checked = [], i + 1, False
    while j < len(cells) and "guess" not in tags(cells[j]):
        cell = cells[j]
        if checked and not hidden_check(cell):
            break
        if cell["cell_type"] == "markdown":
            if j > i + 1 and _slide(cell) in _NEW_SLIDE:
                break
            found += bold_figures(source(cell))
        else:
            checked = checked or hidden_check(cell)
            text = _output_text(cell)
            found += (_figures(text, _REVEALED, "value") + quoted_figures(text) + _figures(text, _CALIBRATED_TO, "target")
                      + _figures(text, _CALIBRATED_ZH, "target") + _figures(text, _CITED, "figure")
                      + _figures(text, _DEMO, "quoted"))
        j += 1
    return [(tok, v) for tok, v in found if v != 0]


def _decimals(token):
    mantissa = re.split(r"[eE]", token.replace(",", ""))[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def states(token, value, answer, strict=False):
    """Whether a printed ``token`` (worth ``value``) states ``answer`` to the token's precision, itself or in percent.

    A token states an answer when it rounds to it and its last digit is fine enough to tell (at most 10% of the
    answer: "1.0" does not state 0.967). ``strict`` (a literal in code, where numbers are mostly parameters): the
    token shows at least the answer's significant digits.

    Examples
    --------
    >>> states("63", 63.0, 0.634), states("63.4", 63.4, 0.634), states("0.634", 0.634, 63.4), states("64", 64.0, 0.634)
    (True, True, True, False)
    >>> states("1.3e-18", 1.3e-18, 1.324e-18), states("69", 69.0, 69.0), states("6.9", 6.9, 69.0), states("1.0", 1.0, 0.967)
    (True, True, False, False)
    >>> states("0.97", 0.97, 96.7), states("0.97", 0.97, 96.7, strict=True), states("0.967", 0.967, 96.7, strict=True)
    (True, False, True)
    """
    if value == 0:
        return False
    if strict and _significant_digits(token) < _significant_digits(f"{abs(answer):.6g}"):
        return False
    if "e" in token.lower():
        step = 10 ** (math.floor(math.log10(abs(value))) - (_significant_digits(token) - 1))
    else:
        step = 10.0 ** -_decimals(token)
    for a in (answer, 100 * answer, answer / 100):
        if a != 0 and abs(value - a) <= step / 2 * (1 + 1e-9) and step <= 0.1 * abs(a):
            return True
    return False


def _stated(text, named=()):
    """The figures a text states: 2+ significant digits, or set in bold; the numbers ``named`` are parameters."""
    long = [(t, v) for t, v in printed_numbers(text) if _significant_digits(t) >= 2]
    bold = [(t, v) for t, v in bold_figures(text) if (t, v) not in long]
    return [(t, v) for t, v in long + bold if v not in named]


def _widget_texts(state, model_id, seen):
    """The text of the readouts (HTML, label widgets) and the rendered text of the charts a widget view shows."""
    if model_id in seen or model_id not in state:
        return []
    seen.add(model_id)
    model = state[model_id]
    out = []
    if model.get("model_name") in ("HTMLModel", "LabelModel", "HTMLMathModel"):
        out.append(html.unescape(re.sub(r"<[^>]+>", " ", str(model["state"].get("value", "")))))
    spec = model.get("state", {}).get("spec")
    if isinstance(spec, dict):
        out.append(_chart_text(json.dumps(spec, sort_keys=True)))
    refs = re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(model.get("state", {})))
    for ref in refs:
        out += _widget_texts(state, ref, seen)
    return out


@functools.lru_cache(maxsize=None)
def _chart_text(spec_json):
    """The text a chart draws (titles, axis titles, legends, annotations), rendered offline to SVG.

    The axes' tick labels are left out: they are round numbers Vega picks for the scale (0.50, 1.00), and a tick
    at 1.00 says nothing of a ratio near 1 that a live run measures; an answer a chart gives away is a title, a
    legend or a text mark (02's "50% at 69 workers").
    """
    import vl_convert

    svg = vl_convert.vegalite_to_svg(json.loads(spec_json))
    svg = re.sub(r'<g class="mark-text role-axis-label"[^>]*>.*?</g>', "", svg, flags=re.S)
    return "\n".join(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg))


def _shown(cell, state, charts):
    """What a code cell's outputs show: printed text, and (``charts``) its widgets' readouts and charts."""
    text = [_output_text(cell)]
    for out in cell.get("outputs", []):
        view = out.get("data", {}).get(WIDGET_VIEW)
        if view and charts:
            text += _widget_texts(state, view.get("model_id"), set())
    return "\n".join(text)


def _fixed_figures(text):
    """The figures of an output that no measurement moves: those its ✓, ≈, cited and demo lines quote from the prose."""
    return (quoted_figures(text) + _figures(text, _CALIBRATED_TO, "target") + _figures(text, _CALIBRATED_ZH, "target")
            + _figures(text, _CITED, "figure") + _figures(text, _DEMO, "quoted"))


def given_away(cells, state=None, charts=True, measured=False):
    """``[message]`` for every prompt whose answer shows before its commit (``cells``: executed, with outputs).

    ``measured``: the notebook times real processes (it runs alone, see ``tests/_notebook_runs.py``). Its outputs
    print measurements, which change from run to run and stray on a busy machine; one that lands on a later answer
    by chance is no give-away (zh/10 at load 13: cell 7's measured "error +1.6%" against S = 1.6, the answer of the
    prompt in cell 18). There an output counts only with the figures it quotes from the prose; its prose and code
    are read as everywhere else.
    """
    state = state or {}
    found = []
    shown = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown" or "guess" not in tags(cell):
            continue
        revealed = answers(cells, i)
        if not revealed:
            continue
        named = {v for s in _PROMPT_SENTENCE.findall(source(cell)) for _t, v in printed_numbers(s)}
        named |= {v / 100 for v in named}  # "lose 10%" in the prompt is the parameter 0.10 in code
        places = []
        for k in range(0, min(i + 2, len(cells))):
            c = cells[k]
            if c["cell_type"] == "markdown" and k <= i:
                text = _PROMPT_SENTENCE.sub(" ", source(c)) if k == i else source(c)
                places.append((f"cell {k}'s prose", _stated(text, named), False))
            elif c["cell_type"] == "code" and not hidden_check(c):
                places.append((f"cell {k}'s code", _stated(source(c), named), True))
            if c["cell_type"] == "code" and k < i:
                if k not in shown:
                    shown[k] = _shown(c, state, charts)
                figures = ([(t, v) for t, v in _fixed_figures(shown[k]) if _significant_digits(t) >= 2 and v not in named]
                           if measured else _stated(shown[k], named))
                places.append((f"cell {k}'s output", figures, False))
        for where, figures, strict in places:
            for token, value in figures:
                for answer_token, answer in revealed:
                    if states(token, value, answer, strict):
                        found.append(f"cell {i}: {where} states {token}, the answer {answer_token} its reveal gives")
    return list(dict.fromkeys(found))


def test_a_percent_the_prompt_names_is_a_parameter_in_the_code_too():
    # 04: "how much jitter does it take to lose 10%?"; the reveal solves for 0.10 and shows the simulated 10% beside
    # the answer, 3.06%. The 0.10 in its source is the prompt's 10%, no give-away; a 3.06 would be one.
    md = {"cell_type": "markdown", "metadata": {"tags": ["guess"]},
          "source": "*Guess first:* how much jitter loses 10%: 10%? 3%? 1%? Then run the next cell."}
    out = [{"output_type": "stream", "name": "stdout", "text": "→ simulated: lost fraction: 10%\n→ jitter: 3.06%\n"}]
    reveal_cell = lambda src: {"cell_type": "code", "metadata": {"tags": ["reveal"]}, "source": src, "outputs": out}
    assert given_away([md, reveal_cell("j = solve(4096, 0.10)\nreveal('jitter', j)")]) == []
    assert given_away([md, reveal_cell("j = 0.0306\nreveal('jitter', j)")]) == [
        "cell 0: cell 1's code states 0.0306, the answer 3.06 its reveal gives"]


def test_a_measurement_that_lands_on_a_later_answer_is_no_give_away_in_a_lab():
    # zh/10 at load 13 (the README's test command beside a second run): the measured step printed "error +1.6%" above
    # the prompt whose answer is S = 1.6. A lab's measurements stray from run to run; what its outputs quote from the
    # prose still counts.
    md = {"cell_type": "markdown", "metadata": {"tags": ["guess"]}, "source": "*Guess first:* what S? Then run the next cell."}
    printed = lambda text: {"cell_type": "code", "metadata": {}, "source": "print(prediction)",
                            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    measured = printed("measured 81.30 ± 0.41 ms per step; predicted 80.02 ms; error +1.6%\n")
    reveal_cell = {"cell_type": "code", "metadata": {"tags": ["reveal"]}, "source": "reveal('S', analysis.slowdown)",
                   "outputs": [{"output_type": "stream", "name": "stdout", "text": "→ S: 1.6\n✓ S = 1.6 (quoted: 1.6)\n"}]}
    assert given_away([measured, md, reveal_cell]) == ["cell 1: cell 0's output states 1.6, the answer 1.6 its reveal gives"]
    assert given_away([measured, md, reveal_cell], measured=True) == []
    quoted = printed("✓ the slowdown of one slow rank = 1.62 (quoted: 1.6)\n")
    assert given_away([quoted, md, reveal_cell], measured=True) == [
        "cell 1: cell 0's output states 1.6, the answer 1.6 its reveal gives"]


def _executed(path):
    run = _notebook_runs.executed(path)
    assert run.error is None, f"{_id(path)} failed at {run.error}"
    return run


@pytest.mark.notebooks
@pytest.mark.parametrize("path", _converted(EN + ZH), ids=_id)
def test_no_answer_shows_before_its_guess_is_committed(path):
    run = _executed(path)
    state = run.nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    # The twins' charts draw the English ones' numbers (their code cells are the same): rendered once, for English.
    found = given_away(run.cells, state, charts=path.parent.name != "zh", measured=_notebook_runs.solo(path))
    assert not found, f"{_id(path)}: an answer shows before its guess is committed:\n" + "\n".join(found)
