"""No exercise's answer is printed above its question.

Each notebook's one run of the session (``tests/_notebook_runs.py``) is read, and the text
of every output above the cell that poses an exercise is searched for that
exercise's expected value (``straggle_edu.exercises.<topic>.qN.expected()``).

The rule, made exact:

- An exercise is *posed* by the first cell that names it: a markdown cell with
  ``**qN`` (the bold question) or a code cell calling ``qN.check(``. Its module is
  the one a code cell imports it from (``from straggle_edu.exercises.<topic> import qN``).
- Outputs searched: stream text, ``text/plain``, ``text/markdown`` and
  ``text/html`` (tags stripped) of the code cells above the posing cell. Chart
  specs and widget state are not read: they are data, not text the reader sees.
- The answer "appears" when a number printed there agrees with it to 3
  significant figures, in the usual renderings: the value (0.634, 353,894) or
  the value as a percentage (63.4%, 63.4). A printed number counts only if it
  shows at least 3 significant digits ("0.63" or "2" does not give 0.634 or 2.00 away).
- Answers that are not numbers (True/False, a name), and numbers with fewer than 3
  significant digits (6, 0.5, 98: parameters that any cell may print), are not checked.
"""

from __future__ import annotations

import ast
import html
import json
import math
import numbers
import re
from pathlib import Path

import pytest

import _notebook_runs
from _path import PENDING

# English notebooks only: this test executes every notebook, and a Chinese twin in notebooks/zh/ has
# the same code (tests/test_zh_notebooks.py checks the twin structure with check_twin), so
# checking the twins' structure is enough and their values are not checked twice.
NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+]?\d+))?(?:\s?([万亿]))?")
_WAN = {"万": 1e4, "亿": 1e8}  # the Chinese edition writes 10,000 and up in 万: 40.8万 is 408,000
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _executed(path):
    """The notebook's cells after its one run this session (tests/_notebook_runs.py)."""
    run = _notebook_runs.executed(path)
    assert run.error is None, f"{path.name} failed at {run.error}"
    return run.cells


def _significant_digits(text):
    """How many significant digits a printed number shows: '0.634' 3, '98,304' 5, '1000' 1, '2.00' 3."""
    mantissa = re.split(r"[eE]", text.replace(",", "").rstrip("万亿 "))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits if "." in mantissa else digits.rstrip("0"))


def _three(x):
    return float(f"{abs(x):.3g}")


def printed_numbers(text):
    """``[(token, value)]`` for every number printed in ``text``.

    Examples
    --------
    >>> printed_numbers("P = 63.4% of 1,000; S = 1.6e+03; 每 40.8万 步")
    [('63.4', 63.4), ('1,000', 1000.0), ('1.6e+03', 1600.0), ('40.8万', 408000.0)]
    """
    found = []
    for m in _NUMBER.finditer(text):
        token = m.group(0)
        scale = _WAN.get(m.group(4), 1.0)
        found.append((token.rstrip(), float(token.replace(",", "").rstrip("万亿 ")) * scale))
    return found


def gives_away(text, answer):
    """The printed tokens in ``text`` that show ``answer`` to 3 significant figures (as itself or as a percentage)."""
    targets = {_three(answer), _three(100 * answer)}
    return [tok for tok, x in printed_numbers(text) if _significant_digits(tok) >= 3 and _three(x) in targets]


def _checkable(answer):
    """The answer as a float when the rule applies to it (a number with 3+ significant digits), else None."""
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer) or answer == 0:
        return None
    return float(answer) if _significant_digits(f"{abs(float(answer)):.6g}") >= 3 else None


def _output_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        data = out.get("data", {})
        for mime in ("text/plain", "text/markdown"):
            parts.append(data.get(mime, ""))
        if "text/html" in data:
            parts.append(html.unescape(_TAG.sub(" ", data["text/html"])))
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def _exercise_modules(sources):
    """``{name: module}`` for every ``from straggle_edu.exercises.<topic> import ...`` in the code, and for every
    module imported whole, ``from straggle_edu.exercises import <topic>`` (an appendix poses several notebooks'
    exercises as ``<topic>.qN``): ``{"<topic>.": "straggle_edu.exercises.<topic>"}``."""
    found = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("straggle_edu.exercises."):
                found.update({a.asname or a.name: node.module for a in node.names})
            elif isinstance(node, ast.ImportFrom) and node.module == "straggle_edu.exercises":
                found.update({f"{a.asname or a.name}.": f"straggle_edu.exercises.{a.name}" for a in node.names
                              if a.name != "____"})
    return found


def qualified_posed_at(cells, modules):
    """``{(module, qN): index of the code cell that checks it}`` for exercises checked as ``<topic>.qN.check(``.

    Examples
    --------
    >>> qualified_posed_at([{"cell_type": "code", "source": "tail.q3.check(____)\\ncost.q3.check(____)"}],
    ...                    {"tail.": "straggle_edu.exercises.tail", "cost.": "straggle_edu.exercises.cost"})
    {('straggle_edu.exercises.tail', 'q3'): 0, ('straggle_edu.exercises.cost', 'q3'): 0}
    """
    first = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        for alias, name in re.findall(r"\b(\w+)\.(q\d+)\.check\(", "".join(cell["source"])):
            if f"{alias}." in modules:
                first.setdefault((modules[f"{alias}."], name), i)
    return first


def posed_at(cells):
    """``{qN: index of the first cell that poses it}``.

    Examples
    --------
    >>> posed_at([{"cell_type": "code", "source": "x = 1"}, {"cell_type": "markdown", "source": "**q1.** Why?"},
    ...           {"cell_type": "code", "source": "q1.check(____)\\nq2.check(____)"}])
    {'q1': 1, 'q2': 2}
    """
    first = {}
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        pattern = r"\*\*(q\d+)\b" if cell["cell_type"] == "markdown" else r"\b(q\d+)\.check\("
        for name in re.findall(pattern, source):
            first.setdefault(name, i)
    return first


def test_gives_away_reads_the_usual_renderings():
    assert gives_away("P = 0.634", 0.63397) == ["0.634"]
    assert gives_away("P = 63.4%", 0.63397) == ["63.4"]
    assert gives_away("lost $353,894", 353_894.4) == ["353,894"]
    assert gives_away("S = 1.893", 1.8934) == ["1.893"]


def test_gives_away_ignores_other_numbers_and_short_ones():
    assert gives_away("P = 0.63 at n = 100", 0.634) == []
    assert gives_away("2 workers, 0.635", 0.634) == []
    assert gives_away("S = 2", 2.0004) == []


def test_checkable_skips_booleans_and_short_numbers():
    assert [_checkable(a) for a in (True, 6, 0.5, 98, "x", 0.634, 1.893)] == [None, None, None, None, None, 0.634, 1.893]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_answer_above_its_question(path):
    import importlib

    raw = json.loads(path.read_text(encoding="utf-8"))["cells"]
    modules = _exercise_modules("".join(c["source"]) for c in raw if c["cell_type"] == "code")
    posed = {(modules[name], name): i for name, i in posed_at(raw).items() if name in modules}
    posed.update(qualified_posed_at(raw, modules))
    if not posed:
        pytest.skip(f"{path.name} poses no exercise")
    cells = _executed(path)
    found = []
    for (module, name), index in sorted(posed.items(), key=lambda kv: kv[1]):
        answer = _checkable(getattr(importlib.import_module(module), name).expected())
        if answer is None:
            continue
        for i in range(index):
            shown = gives_away(_output_text(cells[i]), answer)
            if shown:
                found.append(f"{module.rsplit('.', 1)[-1]} {name} (answer {answer:.6g}, posed in cell {index}) appears in "
                             f"cell {i}'s output as {shown}")
    assert not found, f"{path.name}: exercise answers printed above their questions:\n" + "\n".join(found)


# ----------------------------------------------------------------------------------------------------------------
# "Guess first" prompts: the answer comes after the prompt, never with it or before it.
#
# The rule, made exact:
#
# - A *prompt* is a sentence of a markdown cell that begins with "Guess" ("Guess first: ...?", "Guess: ...?"): from
#   "Guess" to its question mark (or the end of its line). The numbers it names are its parameters.
# - Its *reveal* is what comes right after that markdown cell: what the code cells up to the next markdown cell print,
#   and the markdown cells after them that go on on the same slide (slide type "fragment"; up to the next code cell or
#   prompt). The reveal states the figures that its ✓ lines quote ("✓ label = value (quoted: FIGURE)"), the
#   published figures that its ≈ lines were calibrated to ("≈ label = value, calibrated to FIGURE (source)"), and
#   the figures its prose sets in bold ("the step is **shortest with 4 backups**").
# - The *lead-in* is the prompt's markdown cell without its prompt sentences, and the markdown cells between the
#   previous code cell and it on the prompt's slide: what the reader reads just before guessing, or in the same
#   breath. (A slide before it is what came before: 05's "efficiency of 57%" closes the last reveal, and the next
#   slide's prompt asks what the jitter and the pauses cost apart.)
# - The answer is given away when the lead-in states a figure that the reveal states, itself or as a percentage (the
#   ✓ or ≈ line checks the prose's figure, so the prose that gives it away quotes it digit for digit: 9.8% in the
#   prose is 0.098 on the line). The lead-in states the figures of at least 2 significant digits and the figures it
#   sets in bold, however short: bold is how the prose states a result (07b's "the step was **shortest with 4
#   backups**", above a ≈ line calibrated to 4), where a plain "at 50, 3" or "2x" is a parameter. The number of a
#   numbered paragraph ("**2 · N, the gradients you need.**") is no figure. The reveal's prose also restates the
#   givens of the lead-in, so against it only the lead-in's bold figures are read. A number the prompt names is a
#   parameter wherever the lead-in repeats it.
#
# Every notebook keeps to it, in both languages (the Chinese twins move their cells alike): there is no list of exceptions.
_PROMPT = re.compile(r"\bGuess\b[^?\n]*\??")
_CHECKED = re.compile(r"^✓ (?P<label>[^\n]*) = (?P<value>[^\n]*?)(?: \((?:quoted|against): (?P<quoted>[^\n]*)\))?$", re.M)
_CALIBRATED = re.compile(r"^≈ (?P<label>[^\n]*?) = (?P<value>[^\n]*?), calibrated to (?P<target>[^\n]*?) \([^\n]*\)$",
                         re.M)
_BOLD = re.compile(r"\*\*(?P<text>.+?)\*\*", re.S)
_PARAGRAPH_NUMBER = re.compile(r"^\s*\d+\s*·")
_NEW_SLIDE = ("slide", "subslide")


def quoted_figures(text):
    """``[(token, value)]``: the figures that the ✓ lines of ``text`` quote (the prose's figures they check).

    Examples
    --------
    >>> quoted_figures("✓ S of one 2x rank among 4 = 1.6 (quoted: 1.6)\\n✓ waste = 35.94% (quoted: 35.9%)\\nplain 7")
    [('1.6', 1.6), ('35.9', 35.9)]
    """
    return [found for m in _CHECKED.finditer(text) for found in printed_numbers(m.group("quoted") or "")]


def _decimals(token):
    mantissa = re.split(r"[eE]", token.replace(",", ""))[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def agrees_as_printed(token, value, revealed):
    """Whether the prose token ``token`` (worth ``value``) states ``revealed``, itself or as a percentage, at its precision.

    Examples
    --------
    >>> agrees_as_printed("1.56", 1.56, 1.5596), agrees_as_printed("36", 36.0, 0.359), agrees_as_printed("0", 0.0, 0.06)
    (True, True, False)
    """
    if "e" in token.lower():
        return math.isclose(value, revealed, rel_tol=10 ** -(_significant_digits(token) - 1) / 2)
    places = _decimals(token)
    return any(round(r, places) == round(value, places) and (value != 0 or r == 0) for r in (revealed, 100 * revealed))


def calibrated_figures(text):
    """``[(token, value)]``: the published figures that the ≈ lines of ``text`` were calibrated to.

    Examples
    --------
    >>> calibrated_figures("≈ shortest step: backups = 4, calibrated to 4 (Abadi et al., OSDI 2016, figure 8c)\\n"
    ...                    "≈ a 5th backup makes the step slower: yes, calibrated to Abadi et al., OSDI 2016, figure 8c")
    [('4', 4.0)]
    """
    return [found for m in _CALIBRATED.finditer(text) for found in printed_numbers(m.group("target"))]


def bold_figures(text):
    """``[(token, value)]``: the figures that the markdown ``text`` sets in bold, less the numbers of numbered paragraphs.

    Examples
    --------
    >>> bold_figures("**2 · N, the workers.** At 50, 3: the step is **shortest with 4 backups**, **1.109** times faster.")
    [('4', 4.0), ('1.109', 1.109)]
    """
    return [found for m in _BOLD.finditer(text) for found in printed_numbers(_PARAGRAPH_NUMBER.sub(" ", m.group("text")))]


def stated_figures(text):
    """``[(token, value)]``: the figures that the prose ``text`` states: 2+ significant digits, or set in bold.

    Examples
    --------
    >>> stated_figures("At 56, 3; the step is **shortest with 4 backups**; 2x faster; 1.6 on **2 · N**.")
    [('56', 56.0), ('1.6', 1.6), ('4', 4.0)]
    """
    long = [(tok, v) for tok, v in printed_numbers(text) if _significant_digits(tok) >= 2]
    return long + [(tok, v) for tok, v in bold_figures(text) if (tok, v) not in long]


def _same_figure(value, revealed):
    """Whether a prose figure is a revealed one, itself or as a percentage (9.8 and 0.098)."""
    return any(math.isclose(value, r, rel_tol=1e-9, abs_tol=1e-12) for r in (revealed, 100 * revealed))


def _slide_type(cell):
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def lead_in(cells, index):
    """The text a reader reads just before the prompt of markdown cell ``index``, or with it, on its slide (prompts cut out)."""
    start = index
    while start > 0 and cells[start - 1]["cell_type"] == "markdown" and _slide_type(cells[start]) not in _NEW_SLIDE:
        start -= 1
    return "\n".join(_PROMPT.sub(" ", "".join(cells[i]["source"])) for i in range(start, index + 1))


def prompt_parameters(cells, index):
    """The numbers that the prompt sentences of markdown cell ``index`` name (its parameters, not its answer)."""
    return {v for prompt in _PROMPT.findall("".join(cells[index]["source"])) for _tok, v in printed_numbers(prompt)}


def reveal(cells, index):
    """``[(j, what, figures)]``: what each cell of the reveal of markdown cell ``index``'s prompt states (see above)."""
    found, j = [], index + 1
    while j < len(cells) and cells[j]["cell_type"] == "code":
        text = _output_text(cells[j])
        found.append((j, "✓ and ≈ lines", quoted_figures(text) + calibrated_figures(text)))
        j += 1
    while (j < len(cells) and cells[j]["cell_type"] == "markdown" and _slide_type(cells[j]) == "fragment"
           and not _PROMPT.search("".join(cells[j]["source"]))):
        found.append((j, "bold prose", bold_figures("".join(cells[j]["source"]))))
        j += 1
    return found


def guesses_given_away(cells):
    """``[message]`` for every prompt whose answer the lead-in gives (``cells``: executed, with outputs).

    Examples
    --------
    >>> md = lambda s, slide="subslide": {"cell_type": "markdown", "source": s,
    ...                                   "metadata": {"slideshow": {"slide_type": slide}}}
    >>> out = lambda s: {"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": s}]}
    >>> guesses_given_away([md("Guess first: S for one 2x rank of 4?\\nIt is 1.6."), out("✓ S = 1.6 (quoted: 1.6)")])
    ["cell 0: the lead-in states 1.6, which cell 1's ✓ and ≈ lines reveal"]
    >>> guesses_given_away([md("One 2x rank of 4. Guess first: S?"), out("✓ S = 1.6 (quoted: 1.6)")])
    []
    >>> calibrated = out("≈ shortest step: backups = 4, calibrated to 4 (TensorFlow, figure 8c)")
    >>> guesses_given_away([md("The step is **shortest with 4 backups**. Guess first: how many?"), calibrated])
    ["cell 0: the lead-in states 4, which cell 1's ✓ and ≈ lines reveal"]
    >>> guesses_given_away([md("50 workers, 3% stalls. Guess first: how many?"), calibrated, md("**4**.", "fragment")])
    []
    >>> guesses_given_away([md("It is **4**. Guess first: how many?"), out(""), md("Yes, **4**.", "fragment")])
    ["cell 0: the lead-in states 4, which cell 2's bold prose reveal"]
    """
    found = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown" or not _PROMPT.search("".join(cell["source"])):
            continue
        text, named = lead_in(cells, i), prompt_parameters(cells, i)
        stated = {"✓ and ≈ lines": [(tok, v) for tok, v in stated_figures(text) if v not in named],
                  "bold prose": [(tok, v) for tok, v in bold_figures(text) if v not in named]}
        for j, what, figures in reveal(cells, i):
            for token, value in stated[what]:
                if any(_same_figure(value, r) for _tok, r in figures):
                    found.append(f"cell {i}: the lead-in states {token}, which cell {j}'s {what} reveal")
    return list(dict.fromkeys(found))


def _md(source, slide="subslide"):
    return {"cell_type": "markdown", "source": source, "metadata": {"slideshow": {"slide_type": slide}}}


def _printed(text):
    return {"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": text}]}


# 07b's cell 3 before issue 22 (its answer above its prompt, on ≈ lines and one digit long), and what its two
# code cells print.
_OLD_07B_LEAD_IN = _md(
    "TensorFlow measured it on 50 workers training Inception-v3 with parameter servers\n"
    "(Abadi et al., \"TensorFlow: A system for large-scale machine learning\", OSDI 2016, figure 8c):\n"
    "the median step was **shortest with 4 backups**, the **normalized speedup** t(0)/t(b) · N/(N + b) was "
    "**best with 3**,\nand a **5th backup made steps slower**.\n\n"
    "The model below has that shape in its expected step time (the paper plots medians): 50 workers, 1.1 s of compute "
    "with 2% jitter,\na 0.55 s stall on 3% of steps, and communication of 0.1 s plus 12 ms for every worker that talks "
    "to the parameter servers.\n\n*Guess first:* how many backups give the shortest step? Then run the cell.")
_07B_REVEAL = [_printed("<altair.jupyter.jupyter_chart.JupyterChart object>"), _printed(
    "≈ shortest step: backups = 4, calibrated to 4 (Abadi et al., OSDI 2016, figure 8c)\n"
    "≈ best normalized speedup: backups = 3, calibrated to 3 (Abadi et al., OSDI 2016, figure 8c)\n"
    "≈ a 5th backup makes the step slower: yes, calibrated to Abadi et al., OSDI 2016, figure 8c\n"
    "✓ normalized speedup with 3 backups = 1.10939 (quoted: 1.109)\n")]


def test_guess_check_catches_the_old_07b_cell_3():
    assert guesses_given_away([_OLD_07B_LEAD_IN, *_07B_REVEAL]) == [
        "cell 0: the lead-in states 4, which cell 2's ✓ and ≈ lines reveal",
        "cell 0: the lead-in states 3, which cell 2's ✓ and ≈ lines reveal"]


def test_guess_check_passes_07b_with_the_figures_below_the_reveal():
    lead = _md("TensorFlow measured how the step time moves with the number of backups, on 50 workers (OSDI 2016, "
               "figure 8c): 1.1 s of compute with 2% jitter, a 0.55 s stall on 3% of steps, 12 ms per worker.\n"
               "*Guess first:* how many backups give the shortest step? Then run the cells.")
    after = _md("TensorFlow measured the same shape: the median step was **shortest with 4 backups**, the normalized "
                "speedup was **best with 3**, and a **5th backup made steps slower**.", "fragment")
    assert guesses_given_away([lead, *_07B_REVEAL, after]) == []
    assert guesses_given_away([_md("It is **4**. " + lead["source"]), *_07B_REVEAL, after]) != []


def test_guess_check_reads_a_percentage_as_the_lines_fraction_and_leaves_earlier_slides_alone():
    line = _printed("✓ P(some worker slow) = 0.633968 (quoted: 0.634)")
    assert guesses_given_away([_md("*Guess first:* what share?\n\nOn 63.4% of steps."), line]) == [
        "cell 0: the lead-in states 63.4, which cell 1's ✓ and ≈ lines reveal"]
    earlier = [_md("A scaling efficiency of 63.4%.", "fragment"), _md("## Next\n\n*Guess first:* what share?", "slide")]
    assert guesses_given_away([*earlier, line]) == []


def test_every_notebook_is_on_the_guess_mechanism():
    # The old rule (guesses_given_away, above) held the notebooks not yet moved to the guess mechanism; every
    # notebook has moved, and tests/test_guesses.py holds them all. A notebook put back on PENDING fails here.
    assert not PENDING, f"notebooks not on the guess mechanism of tests/test_guesses.py: {sorted(PENDING)}"


# ----------------------------------------------------------------------------------------------------------------
# Exercises that copy a worked example. Two more exact rules, for the answers the 3-digit rule above cannot see
# (0.06, 23, 0: short numbers that any cell may print):
#
# - *Answered by a ✓ line*: a ✓ line above the question states the answer as its value (at the precision it prints),
#   and every number of that line's label is a number of the question. The label then names the question's own case
#   ("✓ 94 of 100: share discarded = 0.06" above "100 GPUs ... the fastest 94 ... what fraction?"). A label without
#   numbers names no case, and is not read.
# - *The same data*: the question lists four or more numbers ("20, 21, 19, 80, ...") that a code cell above already
#   holds, in the same order.
_LIST = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:,\s+\d+(?:\.\d+)?){3,}")


def _question_text(cells, index):
    """The markdown that poses the exercise of cell ``index``: that cell, or the markdown right above a code cell."""
    while index > 0 and cells[index]["cell_type"] == "code":
        index -= 1
    return "".join(cells[index]["source"])


def _numbers_of(text):
    return {v for _tok, v in printed_numbers(text)}


def answered_by_a_check(cells, index, answer):
    """``[message]`` for each ✓ line above cell ``index`` that states ``answer`` for the question's own numbers.

    Examples
    --------
    >>> md = lambda s: {"cell_type": "markdown", "source": s}
    >>> out = lambda s: {"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": s}]}
    >>> cells = [out("✓ 94 of 100: share discarded = 0.06 (quoted: 0.06)"), md("**q1.** 100 GPUs wait for 94: share?")]
    >>> answered_by_a_check(cells, 1, 0.06), answered_by_a_check(cells, 1, 0.07)
    (["cell 0: '✓ 94 of 100: share discarded = 0.06'"], [])
    """
    asked = _numbers_of(_question_text(cells, index))
    found = []
    for i in range(index):
        for m in _CHECKED.finditer(_output_text(cells[i]) if cells[i]["cell_type"] == "code" else ""):
            named = _numbers_of(m.group("label"))
            if not named or not named <= asked:
                continue
            if any(agrees_as_printed(tok, v, answer) for tok, v in printed_numbers(m.group("value"))):
                found.append(f"cell {i}: '✓ {m.group('label')} = {m.group('value')}'")
    return found


def same_data_above(cells, index):
    """``[message]`` for each list of 4+ numbers in the question of cell ``index`` that a code cell above holds.

    Examples
    --------
    >>> code = lambda s: {"cell_type": "code", "source": s, "outputs": []}
    >>> md = lambda s: {"cell_type": "markdown", "source": s}
    >>> same_data_above([code("t = [[20, 21, 19, 80, 22]]"), md("**q2.** Times 20, 21, 19, 80, 22: the step?")], 1)
    ["cell 0 holds '20, 21, 19, 80, 22'"]
    """
    found = []
    for listed in _LIST.findall(_question_text(cells, index)):
        values = [tok for tok, _v in printed_numbers(listed)]
        pattern = re.compile(r"(?<![\w.])" + r"\.?0*,\s*".join(map(re.escape, values)) + r"(?![\d])")
        found += [f"cell {i} holds {listed!r}" for i in range(index)
                  if cells[i]["cell_type"] == "code" and pattern.search("".join(cells[i]["source"]))]
    return found


def _numeric(answer):
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer):
        return None
    return float(answer)


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_exercise_copies_a_worked_example(path):
    import importlib

    raw = json.loads(path.read_text(encoding="utf-8"))["cells"]
    modules = _exercise_modules("".join(c["source"]) for c in raw if c["cell_type"] == "code")
    posed = {(modules[name], name): i for name, i in posed_at(raw).items() if name in modules}
    posed.update(qualified_posed_at(raw, modules))
    if not posed:
        pytest.skip(f"{path.name} poses no exercise")
    cells = _executed(path)
    found = []
    for (module, name), index in sorted(posed.items(), key=lambda kv: kv[1]):
        found += [f"{name} (posed in cell {index}): the same data: {m}" for m in same_data_above(cells, index)]
        answer = _numeric(getattr(importlib.import_module(module), name).expected())
        if answer is not None:
            found += [f"{name} (answer {answer:g}, posed in cell {index}) is answered by {m}"
                      for m in answered_by_a_check(cells, index, answer)]
    assert not found, f"{path.name}: exercises that a cell above already works out:\n" + "\n".join(found)


# ----------------------------------------------------------------------------------------------------------------
# A solution states its answer truthfully. A solution's comment that opens with a number ("# 23 ms, not 80",
# "# about 0.367: ...") states the answer: that number must agree with the checker's expected value at the
# precision it is printed (11's q2 said 22 ms, and its own checker expected 23). So does a comment that opens with a
# formula and ends its first clause with its result ("# 3 / (10 / 8) = 2.4", "# (P - 1) / (M + P - 1) = 7/15 =
# 0.467"): the reader found three of those that their own checkers rejected (05 q3's 0.467, 09b q4's 1.14, 10 q3's
# 1.78). A formula left open ("# = 20 / (1 - 0.15), about 23.53 days"), a list ("# 7 | 6 | 5; then ...") or words
# state no single number, and are not read; nor is what follows the first clause ("# 0.367: close to exp(-1) = 0.368").
_NUMBER_TOKEN = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?"
_STATED = re.compile(rf"#\s*(?:about\s+)?(?P<num>{_NUMBER_TOKEN})(?=\s*$|[:,;]|\s*\(|\s+[^\W\d_]|%|\s*\$)")
# The result a formula's first clause ends with: "= 0.467", "= $353,894.40", "= 25.5 s", with no number after it.
_RESULT = re.compile(rf"=\s*\$?(?P<num>{_NUMBER_TOKEN})[^\d=*/+()^]*$")
_CLAUSE_END = re.compile(r"[:;,](?:\s|$)")


def stated_answers(solution):
    """The numbers that a solution's comments open with, or that their opening formula comes to, as printed.

    Examples
    --------
    >>> stated_answers("step_times(t, 8)  # 22 ms, not 80")
    ['22']
    >>> stated_answers("f(x)  # about 0.367: close to exp(-1) = 0.368"), stated_answers("g()  # 3 / (10 / 8) = 2.4")
    (['0.367'], ['2.4'])
    >>> stated_answers("h()  # (P - 1) / (M + P - 1) = 7/15 = 0.467"), stated_answers("d(20)  # = 20 / (1 - 0.15), about 23.5")
    (['0.467'], [])
    >>> stated_answers("next(k for k in ks if t(k) <= 1.05)  # k = 16 gives 1.054 s, k = 32 gives 1.033 s: choose 32")
    []
    """
    found = []
    for line in solution.splitlines():
        opening = _STATED.search(line)
        if opening:
            found.append(opening.group("num"))
        elif "#" in line:
            result = _RESULT.search(_CLAUSE_END.split(line.split("#", 1)[1], 1)[0])
            found += [result.group("num")] if result else []
    return found


def _every_exercise():
    import importlib
    import pkgutil

    import straggle_edu.exercises as package
    from straggle_edu.exercises import Exercise

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        yield from ((f"{info.name}.{name}", q) for name, q in vars(module).items() if isinstance(q, Exercise))


def test_every_solution_states_the_answer_its_checker_expects():
    wrong = []
    for name, q in _every_exercise():
        want = _numeric(q.expected())
        if want is None:
            continue
        for token in stated_answers(q.solution_text):
            if not agrees_as_printed(token, float(token.replace(",", "")), want):
                wrong.append(f"{name}: the solution says {token}, the checker expects {want:g}")
            elif not (q.is_correct(token) or q.is_correct(token + "%")):
                wrong.append(f"{name}: the solution says {token}, which its own checker rejects")
    assert not wrong, "\n".join(wrong)


def test_stated_answers_catches_the_old_q2_of_notebook_11():
    old = "step_times(np.array([[20, 21, 19, 80, 22, 20, 18, 80, 21, 23]]), 8)  # 22 ms, not 80"
    assert stated_answers(old) == ["22"] and not agrees_as_printed("22", 22.0, 23.0)


def test_stated_answers_catches_a_rounded_result_the_old_checkers_rejected():
    # 05 q3 before issue 26: the solution said "7/15 = 0.467", and a checker that wanted 7 significant figures
    # (the old default, rel_tol=1e-6) rejected it; today's checker takes it, and this test reads it.
    from straggle_edu.exercises import Exercise

    solution = "1 - simulate_pipeline(8, 8, 1.0, 2.0).utilization  # (P - 1) / (M + P - 1) = 7/15 = 0.467"
    assert stated_answers(solution) == ["0.467"]
    assert not Exercise("q3", expected=lambda: 7 / 15, digits=7).is_correct("0.467")
    assert Exercise("q3", expected=lambda: 7 / 15, fraction=True).is_correct("0.467")


# ----------------------------------------------------------------------------------------------------------------
# numpy 2 prints a scalar as np.float64(12.06): in a reader's text that is noise ("{'sync': np.float64(12.06), ...}
# seconds of planned steps" in 11). What a cell prints formats its numbers.
_NUMPY_REPR = re.compile(r"\bnp\.(?:float|int|uint|bool|complex|str)\w*\(")


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_numpy_scalar_repr_in_what_a_reader_sees(path):
    cells = _executed(path)
    found = [f"cell {i}: {m.group(0)}" for i, c in enumerate(cells) if c["cell_type"] == "code"
             for m in _NUMPY_REPR.finditer(_output_text(c))]
    assert not found, f"{path.name} prints numpy reprs:\n" + "\n".join(found)
