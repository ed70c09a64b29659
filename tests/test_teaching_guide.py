"""The instructor's guides (docs/teaching.md and docs/zh/teaching.md) against the notebooks and explorers.

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

The Chinese guide (docs/zh/teaching.md) links the Chinese twins in
notebooks/zh/, names its table headers, section parts and move words in
Chinese (``_ZH`` maps them), and carries the same rows: the same notebooks,
explorer calls, control keys, moves and claim labels as the English guide.
Its label, move and readout columns show the Chinese screen: its demo moves
run on explorers built after ``set_language("zh")``.
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
NOTEBOOKS = ROOT / "notebooks"

# Each guide: its file, the folder its notebooks are in (and the link to it),
# its language, and its words for what the tests read (English -> its own).
_EN = {
    "path": ROOT / "docs" / "teaching.md", "notebooks": NOTEBOOKS, "link": "../notebooks/", "lang": "en",
    "headers": {}, "words": {"type": "type", "press": "press"}, "by_notebook": "## Notebook by notebook",
    "parts": ("**The one idea.**", "**The demo move.**", "**Ask the class.**", "**The misconception it fixes.**"),
    "q": r"\*Q:\*", "a": r"\*A:\*",
}
_ZH = {
    "path": ROOT / "docs" / "zh" / "teaching.md", "notebooks": NOTEBOOKS / "zh", "link": "../../notebooks/zh/", "lang": "zh",
    "headers": {"笔记本": "Notebook", "步": "Step", "探索器": "Explorer", "控件": "Control", "标签": "Label", "操作": "Move",
                "读数显示": "The readout shows", "校验标签": "Claim", "数字": "Figure",
                "分钟": "Minutes", "时段": "Clock", "内容": "What", "做法": "How"},
    "words": {"type": "输入", "press": "按下"}, "by_notebook": "## 逐个笔记本",
    "parts": ("**核心观点。**", "**演示操作。**", "**向全班提问。**", "**它纠正的误解。**"),
    "q": r"\*\*问：\*\*", "a": r"\*\*答：\*\*",  # bold: italics do not show in CJK fonts
}
GUIDES = {"en": _EN, "zh": _ZH}
GUIDE = _EN["path"]


# --------------------------------------------------------------------------
# Reading the guide

def _guide(g=_EN):
    return g["path"].read_text(encoding="utf-8")


def _table(marker, g=_EN):
    """Rows (dicts keyed by the English header) of the markdown table after ``<!-- marker -->``."""
    text = _guide(g)
    tag = f"<!-- {marker} -->"
    assert tag in text, f"{g['path'].relative_to(ROOT)} has no {tag} table"
    lines = text.split(tag, 1)[1].strip().splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, rule, body = [g["headers"].get(h, h) for h in rows[0]], rows[1], rows[2:]
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


def _values(move, g=_EN):
    """'1 → 4,096' -> ['1', '4,096'] and whether the last value is typed ('type 4,096'; in Chinese '输入 4,096')."""
    move = _plain(move)
    word = g["words"]["type"] + " "
    typed = move.startswith(word)
    if typed:
        move = move[len(word):]
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


def _demo_rows(g=_EN):
    return _table("demo-moves", g)


def _demos(g=_EN):
    """Group the demo-move rows into demos: a step-1 row starts a new one."""
    demos = []
    for row in _demo_rows(g):
        step = int(_plain(row["Step"]))
        if step == 1:
            demos.append([])
        assert demos and step == len(demos[-1]) + 1, f"step {step} out of order: {row}"
        demos[-1].append(row)
    return demos


def _notebook_code(name, folder=NOTEBOOKS):
    nb = nbformat.read(folder / name, as_version=4)
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


def _do(ex, row, g=_EN):
    """Make the row's move on the explorer; return (control, value, before, after)."""
    import ipywidgets as widgets

    key = _plain(row["Control"])
    assert key in ex.controls, f"{_plain(row['Explorer'])} has no control {key!r}; it has {sorted(ex.controls)}"
    ctrl = ex.controls[key]
    label = _plain(row["Label"])
    assert _label_ok(ctrl, label), f"control {key!r} is labelled {ctrl.description!r}, the guide says {label!r}"
    if isinstance(ctrl, widgets.Button):
        press = g["words"]["press"]
        assert _plain(row["Move"]) == press, f"a button is pressed: the move for {key!r} must read {press!r}"
        before = _snapshot(ex)
        ctrl.click()
        return key, None, before, _snapshot(ex)
    texts, typed = _values(row["Move"], g)
    values = [_resolve(ctrl, t, typed and i == len(texts) - 1) for i, t in enumerate(texts)]
    for v in values[:-1]:
        ctrl.value = v
    before = _snapshot(ex)
    ctrl.value = values[-1]
    assert ctrl.value == pytest.approx(values[-1]) if isinstance(values[-1], float) else ctrl.value == values[-1]
    return key, values[-1], before, _snapshot(ex)


# --------------------------------------------------------------------------
# The tests

_LANGS = pytest.mark.parametrize("lang", list(GUIDES))


@_LANGS
def test_guide_exists_and_names_every_notebook(lang):
    g = GUIDES[lang]
    assert g["path"].exists(), f"no {g['path'].relative_to(ROOT)}"
    text = _guide(g)
    link = re.escape(g["link"])
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):  # every English notebook, through its twin in this language
        assert f"({g['link']}{path.name})" in text, f"{g['path'].relative_to(ROOT)} has no section linking {g['link']}{path.name}"
    for name in re.findall(rf"\]\({link}([^)/]+\.ipynb)\)", text):
        assert (g["notebooks"] / name).exists(), f"{g['path'].relative_to(ROOT)} links a missing notebook: {g['link']}{name}"
    for target in re.findall(r"\]\((\.\./[^)#]+)", text):  # every relative link, docs included, resolves
        assert (g["path"].parent / target).resolve().exists(), f"{g['path'].relative_to(ROOT)} links a missing file: {target}"


@_LANGS
def test_every_notebook_has_a_demo_move(lang):
    named = {_plain(r["Notebook"]) for r in _demo_rows(GUIDES[lang])}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        assert path.name in named, f"no demo move for {path.name} in {GUIDES[lang]['path'].relative_to(ROOT)}"


@_LANGS
def test_every_section_has_the_four_parts(lang):
    """Each notebook's section: the idea, the demo move, two questions with answers, the misconception."""
    g = GUIDES[lang]
    text = _guide(g)
    assert g["by_notebook"] in text, f"no {g['by_notebook']!r} heading"
    sections = re.split(r"\n### ", text.split(g["by_notebook"], 1)[1])[1:]
    assert sections, f"no notebook sections under {g['by_notebook']!r}"
    for sec in sections:
        title = sec.splitlines()[0]
        sec = sec.split("\n## ", 1)[0]
        for part in g["parts"]:
            assert part in sec, f"section {title!r} lacks {part}"
        questions = re.findall(rf"^\d\. {g['q']}.+?\n\s+{g['a']} ?.+", sec, flags=re.M)
        assert len(questions) >= 2, f"section {title!r} needs two questions with model answers, found {len(questions)}"


def test_zh_guide_has_a_section_for_every_english_one():
    """The two guides walk the same notebooks in the same order."""
    def sections(g):
        return re.findall(rf"^### .*?\({re.escape(g['link'])}([^)]+\.ipynb)\)", _guide(g), flags=re.M)

    assert sections(_ZH) == sections(_EN)


@_LANGS
@pytest.mark.parametrize("plan,total", [("plan-45", 45), ("plan-90", 90)])
def test_session_plan_adds_up(lang, plan, total):
    g = GUIDES[lang]
    rows = _table(plan, g)
    minutes = [int(_plain(r["Minutes"])) for r in rows]
    assert sum(minutes) == total, f"{plan}: {minutes} add up to {sum(minutes)}, not {total}"
    for r in rows:
        for name in re.findall(r"\d\d[a-z]?_[a-z_]+\.ipynb", r["What"]):
            assert (g["notebooks"] / name).exists(), f"{plan} names a missing notebook {name}"
    assert [_plain(r["Minutes"]) for r in rows] == [_plain(r["Minutes"]) for r in _table(plan, _EN)], \
        f"{plan}: the {lang} plan's blocks differ from the English plan's"


def _demo_ids(g=_EN):
    try:
        return [f"{_plain(d[0]['Notebook'])}:{'+'.join(_plain(r['Control']) for r in d)}" for d in _demos(g)]
    except (AssertionError, OSError, IndexError, KeyError, ValueError):
        return None


_SAME = ("Notebook", "Step", "Explorer", "Control")


def test_zh_demo_moves_are_the_english_ones():
    """Row by row, the zh table makes the English moves: same notebook, explorer call, control key and step,
    and the same values (a number as the English row has it; an option named in Chinese stands for the same option)."""
    en, zh = _demo_rows(_EN), _demo_rows(_ZH)
    assert len(zh) == len(en), f"the zh guide has {len(zh)} demo moves, the English one {len(en)}"
    for e, z in zip(en, zh):
        assert [_plain(z[k]) for k in _SAME] == [_plain(e[k]) for k in _SAME], f"zh row {z} is not English row {e}"
        ev, et = _values(e["Move"], _EN)
        zv, zt = _values(z["Move"], _ZH)
        assert (len(zv), zt) == (len(ev), et), f"zh move {z['Move']!r} is not English move {e['Move']!r}"
        for a, b in zip(ev, zv):
            if _number(a) is not None:
                assert _number(b) == _number(a), f"zh move {z['Move']!r} is not English move {e['Move']!r}"


@pytest.mark.parametrize("lang,index", [(lang, i) for lang in GUIDES for i in range(len(_demo_ids(GUIDES[lang]) or [0]))],
                         ids=[f"{lang}:{i}" for lang in GUIDES for i in (_demo_ids(GUIDES[lang]) or ["?"])])
def test_demo_move(lang, index):
    from straggle_edu.i18n import set_language

    g = GUIDES[lang]
    set_language(g["lang"])  # labels are fixed when the explorer is built; conftest sets the language back
    demo = _demos(g)[index]
    first = demo[0]
    notebook, call = _plain(first["Notebook"]), _plain(first["Explorer"])
    assert (g["notebooks"] / notebook).exists(), f"the guide's demo names a missing notebook {notebook}"
    assert _squash(call) in _squash(_notebook_code(notebook, g["notebooks"])), f"{notebook} does not show {call}"
    ex = _build(call)
    for row in demo:
        assert _plain(row["Explorer"]) == call, "a continued demo must use the same explorer"
        key, value, (text0, charts0), (text1, charts1) = _do(ex, row, g)
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


def _claims(notebook, folder=NOTEBOOKS):
    """{label: expected} for every claim(...), timing(...), calibrated(...) or demo_figure(...) call with literal arguments."""
    found = {}
    nb = nbformat.read(folder / notebook, as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    # IPython-only lines (!shell, %magic) are not Python: leave them out.
    code = "\n".join(ln for src in cells for ln in src.splitlines() if not ln.lstrip().startswith(("!", "%")))
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("claim", "timing", "calibrated", "demo_figure") \
                and len(node.args) >= 3:
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


@_LANGS
def test_figures_match_the_notebooks_claims(lang):
    g = GUIDES[lang]
    rows = _table("figures", g)
    assert rows, "the figures table is empty"
    if lang != "en":  # the same figures as the English guide, checked against this language's twins
        assert [[_plain(r[k]) for k in ("Notebook", "Claim", "Figure")] for r in rows] == \
            [[_plain(r[k]) for k in ("Notebook", "Claim", "Figure")] for r in _table("figures", _EN)]
    for row in rows:
        notebook, label, quoted = _plain(row["Notebook"]), _plain(row["Claim"]), _plain(row["Figure"])
        claims = _claims(notebook, g["notebooks"])
        assert label in claims, f"{notebook} has no claim labelled {label!r}; it has {sorted(claims)}"
        want = claims[label]
        if isinstance(want, bool):
            assert quoted.lower() == str(want).lower(), f"{notebook} {label!r}: {quoted} vs {want}"
            continue
        got = _number(quoted)
        assert got is not None, f"figure {quoted!r} is not a number"
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (
            f"the guide quotes {quoted} for {label!r}, {notebook} checks {want}")
