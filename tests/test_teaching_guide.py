"""The instructor's guide (docs/teaching.md) against the notebooks and explorers.

The guide carries two machine-readable tables, each after an HTML comment:

- ``<!-- demo-moves -->``: every demo move. Each row names a notebook, an
  explorer call exactly as the notebook shows it, a control (its key and the
  label on screen), the move (``a → b``, or ``type b`` for a value typed into
  the slider's readout) and what the readout then shows. Rows with step 2, 3,
  ... continue on the same explorer as the row before.
- ``<!-- figures -->``: every figure the guide quotes from a notebook, with
  the label of the ``claim(...)`` cell that checks it there.

The tests build each explorer, check that the control exists with that
label, that the value is one a reader can reach (inside the range, on the
slider's grid, one of the options), set it, and check that the readout
shows what the guide says and that the chart moved (a linked param follows
the control, or the chart was redrawn). A figure that drifts from its
notebook's claim, a notebook without a section, or a session plan whose
timings do not add up fails too.
"""

from __future__ import annotations

import ast
import html
import math
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "teaching.md"
NOTEBOOKS = ROOT / "notebooks"


# --------------------------------------------------------------------------
# Reading the guide

def _guide():
    return GUIDE.read_text(encoding="utf-8")


def _table(marker):
    """Rows (dicts keyed by header) of the markdown table after ``<!-- marker -->``."""
    text = _guide()
    tag = f"<!-- {marker} -->"
    assert tag in text, f"docs/teaching.md has no {tag} table"
    lines = text.split(tag, 1)[1].strip().splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, rule, body = rows[0], rows[1], rows[2:]
    assert set("".join(rule)) <= set("-: "), f"{marker}: second line is not a table rule"
    return [dict(zip(header, r)) for r in body]


def _plain(cell):
    """A table cell without markdown code ticks or emphasis."""
    return cell.replace("`", "").replace("*", "").strip()


def _number(text):
    """'4,096' -> 4096, '10%' -> 0.1, '1e-5' -> 1e-05; None if not a number."""
    t = text.replace(",", "").replace("_", "").replace("−", "-").strip()
    scale = 1.0
    if t.endswith("%"):
        t, scale = t[:-1], 0.01
    try:
        v = float(t)
    except ValueError:
        return None
    v *= scale
    return int(v) if scale == 1.0 and v.is_integer() and "." not in t and "e" not in t.lower() else v


def _values(move):
    """'1 → 4,096' -> ['1', '4,096'] and whether the last value is typed."""
    move = _plain(move)
    typed = move.startswith("type ")
    if typed:
        move = move[len("type "):]
    parts = [p.strip() for p in move.split("→")]
    return [p.strip('"') for p in parts if p], typed


def _readout(ex):
    """The explorer's readout as the reader sees it: its HTML widgets' text, tags removed."""
    import ipywidgets as widgets

    parts = [getattr(ex, "readout", None)] + [w for w in ex.extra if isinstance(w, widgets.HTML)]
    seen, text = set(), []
    for w in parts:
        if w is not None and id(w) not in seen:
            seen.add(id(w))
            line = re.sub(r"<(br|/p|/div|/li|/tr)\b[^>]*>", " ", w.value)  # breaks become spaces,
            text.append(re.sub(r"<[^>]+>", "", line))  # inline tags (<b>) vanish as on screen
    return " ".join(html.unescape(" ".join(text)).split())


def _demo_rows():
    return _table("demo-moves")


def _demos():
    """Group the demo-move rows into demos: a step-1 row starts a new one."""
    demos = []
    for row in _demo_rows():
        step = int(_plain(row["Step"]))
        if step == 1:
            demos.append([])
        assert demos and step == len(demos[-1]) + 1, f"step {step} out of order: {row}"
        demos[-1].append(row)
    return demos


def _notebook_code(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def _squash(text):
    return re.sub(r"\s+", "", text)


# --------------------------------------------------------------------------
# Building an explorer from the guide's call and moving its controls

def _build(call):
    """Build the explorer from a call such as ``tail_explorer()`` or
    ``pipeline_explorer(target="one stage")`` (literal arguments only)."""
    import straggle_edu.explorers as explorers

    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), f"not a plain call: {call}"
    factory = getattr(explorers, node.func.id, None)
    assert factory is not None, f"straggle_edu.explorers has no {node.func.id}"
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    return factory(*args, **kwargs)


def _options(ctrl):
    """(label, value) pairs of a selection control, or None."""
    labels = getattr(ctrl, "_options_labels", None)
    values = getattr(ctrl, "_options_values", None)
    if labels is None or values is None:
        return None
    return list(zip(labels, values))


def _label_ok(ctrl, label):
    desc = (getattr(ctrl, "description", "") or "").strip()
    if desc:
        return desc == label
    opts = _options(ctrl)  # toggle buttons without a description: named by their options
    return opts is not None and label == " / ".join(lab for lab, _ in opts)


def _resolve(ctrl, text, typed):
    """The value a reader sets by this move, checked to be reachable."""
    import ipywidgets as widgets

    opts = _options(ctrl)
    if opts is not None:
        for lab, val in opts:
            if lab == text:
                return val
        num = _number(text)
        for lab, val in opts:
            if num is not None and isinstance(val, (int, float)) and not isinstance(val, bool) and math.isclose(val, num):
                return val
        raise AssertionError(f"{text!r} is not an option of {ctrl.description!r}: {[lab for lab, _ in opts]}")
    if isinstance(ctrl, widgets.Checkbox):
        assert text in ("on", "off", "ticked", "unticked"), f"a checkbox is 'on' or 'off', got {text!r}"
        return text in ("on", "ticked")
    num = _number(text)
    assert num is not None, f"{text!r} is not a number for {ctrl.description!r}"
    if isinstance(ctrl, widgets.FloatLogSlider):
        lo, hi = ctrl.base ** ctrl.min, ctrl.base ** ctrl.max
        assert lo * (1 - 1e-9) <= num <= hi * (1 + 1e-9), f"{ctrl.description}: {num} outside [{lo:g}, {hi:g}]"
        if typed:
            return float(num)
        # A drag lands on base ** (min + k * step): the guide quotes that value as displayed.
        k = round((math.log(num, ctrl.base) - ctrl.min) / ctrl.step)
        grid = ctrl.base ** (ctrl.min + k * ctrl.step)
        assert math.isclose(grid, num, rel_tol=5e-3, abs_tol=0.5), (
            f"{ctrl.description}: a drag cannot land on {num}; nearest is {grid:.6g} (or say 'type {text}')")
        return grid
    lo, hi = getattr(ctrl, "min", None), getattr(ctrl, "max", None)
    if lo is not None:
        assert lo - 1e-9 <= num <= hi + 1e-9, f"{ctrl.description}: {num} outside [{lo}, {hi}]"
    step = getattr(ctrl, "step", None)
    if step and not typed and isinstance(ctrl, (widgets.FloatSlider, widgets.IntSlider)):
        k = (num - lo) / step
        assert abs(k - round(k)) < 1e-6, f"{ctrl.description}: {num} is not on the slider's {step} grid"
    return num


def _snapshot(ex):
    """What a reader sees change: the readout, and each chart's Vega-Lite spec
    (what the browser draws; explorers may edit it in place) with its params."""
    import json

    charts = {}
    for name, jchart in ex.charts.items():
        params = {k: getattr(jchart.params, k) for k in jchart.params.trait_names() if not k.startswith("_")} \
            if hasattr(jchart.params, "trait_names") else {}
        charts[name] = (json.dumps(jchart.spec, sort_keys=True, default=str), repr(sorted(params.items())))
    return _readout(ex), charts


def _do(ex, row):
    """Make the row's move on the explorer; return (control, value, before, after)."""
    import ipywidgets as widgets

    key = _plain(row["Control"])
    assert key in ex.controls, f"{_plain(row['Explorer'])} has no control {key!r}; it has {sorted(ex.controls)}"
    ctrl = ex.controls[key]
    label = _plain(row["Label"])
    assert _label_ok(ctrl, label), f"control {key!r} is labelled {ctrl.description!r}, the guide says {label!r}"
    if isinstance(ctrl, widgets.Button):
        assert _plain(row["Move"]) == "press", f"a button is pressed: the move for {key!r} must read 'press'"
        before = _snapshot(ex)
        ctrl.click()
        return key, None, before, _snapshot(ex)
    texts, typed = _values(row["Move"])
    values = [_resolve(ctrl, t, typed and i == len(texts) - 1) for i, t in enumerate(texts)]
    for v in values[:-1]:
        ctrl.value = v
    before = _snapshot(ex)
    ctrl.value = values[-1]
    assert ctrl.value == pytest.approx(values[-1]) if isinstance(values[-1], float) else ctrl.value == values[-1]
    return key, values[-1], before, _snapshot(ex)


# --------------------------------------------------------------------------
# The tests

def test_guide_exists_and_names_every_notebook():
    text = _guide()
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        assert f"(../notebooks/{path.name})" in text, f"docs/teaching.md has no section linking {path.name}"
    for link in re.findall(r"\(\.\./notebooks/([^)]+\.ipynb)\)", text):
        assert (NOTEBOOKS / link).exists(), f"docs/teaching.md links a missing notebook: {link}"


def test_every_notebook_has_a_demo_move():
    named = {_plain(r["Notebook"]) for r in _demo_rows()}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        assert path.name in named, f"no demo move for {path.name} in docs/teaching.md"


def test_every_section_has_the_four_parts():
    """Each notebook's section: the idea, the demo move, two questions with answers, the misconception."""
    text = _guide()
    sections = re.split(r"\n### ", text.split("## Notebook by notebook", 1)[1])[1:]
    assert sections, "no notebook sections under '## Notebook by notebook'"
    for sec in sections:
        title = sec.splitlines()[0]
        sec = sec.split("\n## ", 1)[0]
        for part in ("**The one idea.**", "**The demo move.**", "**Ask the class.**", "**The misconception it fixes.**"):
            assert part in sec, f"section {title!r} lacks {part}"
        questions = re.findall(r"^\d\. \*Q:\*.+?\n\s+\*A:\* .+", sec, flags=re.M)
        assert len(questions) >= 2, f"section {title!r} needs two questions with model answers, found {len(questions)}"


@pytest.mark.parametrize("plan,total", [("plan-45", 45), ("plan-90", 90)])
def test_session_plan_adds_up(plan, total):
    rows = _table(plan)
    minutes = [int(_plain(r["Minutes"])) for r in rows]
    assert sum(minutes) == total, f"{plan}: {minutes} add up to {sum(minutes)}, not {total}"
    for r in rows:
        for name in re.findall(r"\d\d[a-z]?_[a-z_]+\.ipynb", r["What"]):
            assert (NOTEBOOKS / name).exists(), f"{plan} names a missing notebook {name}"


def _demo_ids():
    try:
        return [f"{_plain(d[0]['Notebook'])}:{'+'.join(_plain(r['Control']) for r in d)}" for d in _demos()]
    except (AssertionError, OSError):
        return None


@pytest.mark.parametrize("index", range(len(_demo_ids() or [0])), ids=_demo_ids())
def test_demo_move(index):
    demo = _demos()[index]
    first = demo[0]
    notebook, call = _plain(first["Notebook"]), _plain(first["Explorer"])
    assert (NOTEBOOKS / notebook).exists(), f"the guide's demo names a missing notebook {notebook}"
    assert _squash(call) in _squash(_notebook_code(notebook)), f"{notebook} does not show {call}"
    ex = _build(call)
    for row in demo:
        assert _plain(row["Explorer"]) == call, "a continued demo must use the same explorer"
        key, value, (text0, charts0), (text1, charts1) = _do(ex, row)
        want = " ".join(_plain(row["The readout shows"]).split())
        if want in ("", "—"):
            continue  # a set-up move: its effect shows after a later step (a Run button)
        assert want in text1, f"{notebook}: after {key} = {value!r} the readout says {text1!r}, not {want!r}"
        # The picture moves too: a param linked to this control follows it, or a chart is redrawn.
        linked = [(chart, param, tf) for c, chart, param, tf in ex.links if c == key]
        for chart, param, tf in linked:
            got = getattr(ex.charts[chart].params, param)
            want_param = tf(value) if tf else value
            assert got == pytest.approx(want_param), f"{chart}.{param} = {got}, expected {want_param}"
        redrawn = any(charts0[n][0] != charts1[n][0] for n in charts0)
        assert linked or redrawn, f"{notebook}: moving {key} changed no chart"
        assert text1 != text0, f"{notebook}: moving {key} left the readout as it was: {text1!r}"


def _claims(notebook):
    """{label: expected} for every claim(...) or calibrated(...) call with literal arguments in a notebook."""
    found = {}
    nb = nbformat.read(NOTEBOOKS / notebook, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    # IPython-only lines (!shell, %magic) are not Python: leave them out.
    code = "\n".join(ln for src in cells for ln in src.splitlines() if not ln.lstrip().startswith(("!", "%")))
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("claim", "calibrated") and len(node.args) >= 3:
            try:
                label, expected = ast.literal_eval(node.args[0]), ast.literal_eval(node.args[2])
            except ValueError:
                continue
            found[label] = expected
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "cite" and len(node.args) >= 2:
            try:  # a cited figure: cite(label, STUDY[...].value, source) quotes the study's constant
                found[ast.literal_eval(node.args[0])] = _cited(node.args[1])
            except ValueError:
                continue
    return found


def _cited(node):
    """The figure a cite(...) quotes: a literal, or STUDY["name"].value read from the study's table."""
    from straggle_edu.models.osdi2025 import STUDY

    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript):
        return STUDY[ast.literal_eval(node.value.slice)].value
    return ast.literal_eval(node)


def test_figures_match_the_notebooks_claims():
    rows = _table("figures")
    assert rows, "the figures table is empty"
    for row in rows:
        notebook, label, quoted = _plain(row["Notebook"]), _plain(row["Claim"]), _plain(row["Figure"])
        claims = _claims(notebook)
        assert label in claims, f"{notebook} has no claim labelled {label!r}; it has {sorted(claims)}"
        want = claims[label]
        if isinstance(want, bool):
            assert quoted.lower() == str(want).lower(), f"{notebook} {label!r}: {quoted} vs {want}"
            continue
        got = _number(quoted)
        assert got is not None, f"figure {quoted!r} is not a number"
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (
            f"the guide quotes {quoted} for {label!r}, {notebook} checks {want}")
