"""``straggle-edu site OUT_DIR``: every notebook as a static web page, charts live.

The site is for readers who never start a kernel (GitHub Pages, a docs site,
a link from the article). It works offline, typeset math included.
``straggle-edu site OUT --lang zh`` builds the Chinese site from the twins in
``notebooks/zh/`` (pages and index in Chinese, ``<html lang="zh-CN">``).

How a page is made:

1. Each notebook is executed in a temporary copy of its folder, with
   ``STRAGGLE_EDU_SITE=1`` in the kernel's environment (see
   :func:`straggle_edu.notebook.display.site_mode`). The notebooks in the repository
   are never modified.
2. Every widget output is rebuilt from the saved widget state (the final
   state after Run-All, which is also what JupyterLab shows):

   - a chart (an ``altair.JupyterChart``) becomes a ``<div>`` of its own and
     its Vega-Lite spec, with the params' current values; one Vega bundle
     per site (``static/vega-site.js``, from ``vl_convert.javascript_bundle``,
     no CDN) draws each chart with its own ``vegaEmbed`` call;
   - a control that an :class:`~straggle_edu.explorers._base.Explorer`
     linked to a chart param (:meth:`~straggle_edu.explorers._base.Explorer.link`)
     becomes an HTML input bound to that param (Vega-Lite's ``bind`` with
     ``element``), and the param follows it through an expression, so the
     chart moves with no kernel: closed-form charts stay interactive;
   - any other control is drawn greyed out at its value, with a note
     "run this notebook to use this control"; readouts and other widgets
     show their last value.
3. nbconvert's ``lab`` template makes the page, minus its CDN scripts
   (require.js, the widget manager, mermaid). Links between notebooks point
   to the pages; ``index.html`` links every page.

Typeset math needs no network either: MathJax 2.7 comes from the installed
``jupyter-server-mathjax`` package, and the files a page needs (about 2 MB:
the TeX input, the HTML-CSS output with its STIX web fonts, the menu) are
copied into ``OUT_DIR/static/mathjax/``; every page loads
``static/mathjax/MathJax.js`` (:data:`MATHJAX_URL`), never a CDN.
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..i18n import LANG_ENV, N_, _, get_language, ngettext

__all__ = ["build_site", "runs_alone", "bind_spec", "d3_format", "configure", "run", "SitePage", "NOTE", "MATHJAX_URL"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

# English here; a page shows _(NOTE...) in the site's language.
NOTE = N_("Run this notebook to use this control.")
NOTE_ALL = N_("Run this notebook to use these controls: this page shows the values the chart was drawn with.")
NOTE_SOME = N_("Controls in grey need a Python kernel: run this notebook to use them. "
               "The others work in this page.")
NOTE_READOUT = N_("The figures under the chart are as computed when this page was built.")
NOTE_WIDGET = N_("An interactive widget: run this notebook to use it.")

SCRIPT = "static/vega-site.js"
MATHJAX_DIR = "static/mathjax"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
#: Where every page loads MathJax from, relative to the page: a copy in the site, no CDN.
MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config={MATHJAX_CONFIG}"
# The parts of jupyter-server-mathjax's MathJax that the config above loads
# (glob patterns under its static/ folder). Left out: the SVG output, the
# accessibility explorer's speech rules (a11y, 3.7 MB) and other languages' menus.
MATHJAX_FILES = (
    "LICENSE", "MathJax.js", "config/TeX-AMS-MML_HTMLorMML-full.js", "config/Safe.js",
    "extensions/*.js", "extensions/HTML-CSS/**/*", "extensions/MathML/**/*", "extensions/TeX/**/*",
    "extensions/a11y/accessibility-menu.js", "jax/input/**/*", "jax/element/**/*", "jax/output/HTML-CSS/**/*",
    "fonts/HTML-CSS/STIX-Web/woff/*", "localization/en/**/*", "localization/zh-hans/**/*",
)
# The package ships STIX web fonts only (no TeX fonts): HTML-CSS must use them.
_MATHJAX_PRE = ('window.MathJax = {"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", '
                'imageFont: null}, menuSettings: {zoom: "None"}};')
_HTML_LANG = {"en": "en", "zh": "zh-CN"}


# ---------------------------------------------------------------- the command


def _default_notebooks(lang="en"):
    """``./notebooks`` (or the checkout's), or its ``<lang>/`` folder of twins for another language."""
    here = Path.cwd() / "notebooks"
    if not here.is_dir():
        source = Path(__file__).resolve().parents[2] / "notebooks"
        here = source if source.is_dir() else here
    return here if lang == "en" else here / lang


def configure(parser):
    """Add the ``site`` arguments to ``parser``."""
    parser.add_argument("out_dir", metavar="OUT_DIR", help="folder to write the site into (created if missing)")
    parser.add_argument("--notebooks", metavar="DIR", default=None,
                        help="folder of notebooks (default: ./notebooks, or ./notebooks/zh with --lang zh)")
    parser.add_argument("--only", metavar="GLOB", nargs="+", default=["*.ipynb"],
                        help="which notebooks, as file names or patterns (default: all)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S",
                        help="seconds a single cell may run (default: 600)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                        help="notebooks executed at once (default: 2, or 1 on one core)")
    parser.add_argument("--allow-errors", action="store_true",
                        help="write a page even when a cell fails (default: stop with an error)")


def run(args):
    """Build the site in the current language; print one line per page and a summary. Returns 0."""
    lang = get_language()
    notebooks = Path(args.notebooks) if args.notebooks else _default_notebooks(lang)
    pages = build_site(args.out_dir, notebooks, pattern=args.only, timeout=args.timeout, jobs=args.jobs,
                       allow_errors=args.allow_errors, lang=lang)
    charts = sum(p.charts for p in pages)
    live = sum(p.interactive_charts for p in pages)
    print(_("wrote {pages} pages to {index}: {charts} charts, {live} of them interactive with no kernel").format(
        pages=len(pages), index=Path(args.out_dir) / "index.html", charts=charts, live=live))
    return 0


# ---------------------------------------------------------------- building


@dataclass
class SitePage:
    """One notebook's page, and what it holds."""

    name: str
    title: str
    path: Path
    seconds: float = 0.0
    charts: int = 0
    interactive_charts: int = 0
    bound_controls: int = 0
    kernel_controls: int = 0
    summary: str = ""
    errors: list = field(default_factory=list)


def _title_and_summary(nb, fallback):
    title, summary = fallback, ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            line = line.strip()
            if not line:
                continue
            if line.startswith("#") and title == fallback:
                title = line.lstrip("#").strip()
            elif not line.startswith(("#", "<", "!", "|", "-", "*")) and not summary:
                summary = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line)  # [text](link) -> text
                summary = re.sub(r"\*\*|__|\*|`", "", summary)
        if title != fallback and summary:
            break
    return title, summary


def runs_alone(path):
    """True when the notebook at ``path`` times real processes and must not share the machine.

    Such a notebook says so in its metadata, ``"straggle_edu": {"runs_alone": true}``
    (the live barrier lab and real SGD compare measured seconds with a
    prediction); the site runs it after the others, with nothing beside it,
    whatever ``jobs`` is.

    Examples
    --------
    >>> from straggle_edu.app.launch import find_notebooks
    >>> runs_alone(find_notebooks() / "10_live_barrier_lab.ipynb"), runs_alone(find_notebooks() / "02_tail_probability.ipynb")
    (True, False)
    """
    import json

    meta = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata", {})
    return bool(meta.get("straggle_edu", {}).get("runs_alone", False))


def _execute(path, workdir, timeout, allow_errors, lang="en"):
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ, STRAGGLE_EDU_SITE="1", PYTHONDONTWRITEBYTECODE="1", **{LANG_ENV: lang})
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                                     store_widget_state=True, record_timing=False,
                                     resources={"metadata": {"path": str(workdir)}})
    # The kernel's own chatter (its TCP warning, say) goes to a log, not the terminal.
    with open(Path(workdir) / f".{path.stem}.kernel.log", "wb") as log:
        try:
            client.execute(env=env, cwd=str(workdir), stderr=log, stdout=log)
        except nbclient.exceptions.CellExecutionError as exc:
            lines = _ANSI.sub("", str(exc)).strip().splitlines()
            raise ValueError(f"{path.name} failed while building the site: {lines[-1] if lines else exc}") from None
    return nb


def build_site(out_dir, notebooks="notebooks", pattern="*.ipynb", timeout=600.0, jobs=1, allow_errors=False,
               log=print, lang=None):
    """Execute every notebook and write the static site into ``out_dir``, in ``lang``.

    Parameters
    ----------
    out_dir : str or Path
        Folder for ``index.html``, one ``<notebook>.html`` per notebook and
        ``static/``; created if missing. Files of ours already there are
        replaced; nothing else is touched.
    notebooks : str or Path
        Folder of ``.ipynb`` files; it is copied, never written to.
    pattern : str or sequence of str
        File-name pattern(s) of the notebooks to include (exact names work too).
    timeout : float
        Seconds a single cell may run.
    jobs : int
        Notebooks executed at once, 1..16. A notebook that times real
        processes (:func:`runs_alone`) runs after the others, alone.
    allow_errors : bool
        Write a page even when a cell raises.
    log : callable
        Called with one progress line per notebook.
    lang : {"en", "zh"} or None
        The language of the index, the navigation and the notes, and of the
        kernels (``STRAGGLE_EDU_LANG``); None: the current one. The
        notebooks themselves are whatever ``notebooks`` holds (the Chinese
        twins are in ``notebooks/zh``).

    Returns
    -------
    list of SitePage
    """
    lang = get_language() if lang is None else lang
    from .cli import speaking

    with speaking(lang):
        return _build_site(out_dir, notebooks, pattern, timeout, jobs, allow_errors, log, lang)


def _build_site(out_dir, notebooks, pattern, timeout, jobs, allow_errors, log, lang):
    from .._validate import positive, require, whole

    src = Path(notebooks)
    if not src.is_dir():
        raise NotADirectoryError(f"notebooks folder not found: {src}")
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    paths = sorted({p for pat in patterns for p in src.glob(pat) if p.is_file() and p.suffix == ".ipynb"})
    if not paths:
        raise ValueError(f"no notebooks match {pattern!r} in {src}")
    jobs = whole("jobs", jobs, low=1, high=16)
    timeout = positive("timeout", timeout)
    out = Path(out_dir)
    require(out.resolve() != src.resolve(), "out_dir", str(out), "a folder other than the notebooks folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / "static").mkdir(exist_ok=True)
    (out / SCRIPT).write_text(page_script(), encoding="utf-8")
    copy_mathjax(out)
    (out / ".nojekyll").write_text("")

    names = {p.name: p.stem + ".html" for p in paths}
    with tempfile.TemporaryDirectory(prefix="straggle-edu-site-") as tmp:
        work = Path(tmp) / src.name
        shutil.copytree(src, work, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        start = time.monotonic()

        def one(path):
            t0 = time.monotonic()
            nb = _execute(work / path.name, work, timeout, allow_errors, lang)
            return path, nb, time.monotonic() - t0

        alone = [p for p in paths if runs_alone(p)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            # Notebooks that time real processes run after the others, one at a time.
            results = list(pool.map(one, [p for p in paths if p not in alone])) + [one(p) for p in alone]
        for k, (path, nb, seconds) in enumerate(results, 1):
            log(_("[{k}/{n}] executed {name} in {seconds:.1f} s").format(k=k, n=len(paths), name=path.name,
                                                                           seconds=seconds))
        done = sorted(results, key=lambda r: paths.index(r[0]))
        pages = []
        for i, (path, nb, seconds) in enumerate(done):
            prev = done[i - 1][0] if i else None
            nxt = done[i + 1][0] if i + 1 < len(done) else None
            page = _write_page(nb, path, out, names, prev, nxt, lang)
            page.seconds = seconds
            pages.append(page)
        (out / "index.html").write_text(_index_html(pages, lang), encoding="utf-8")
        _copy_images(src, out)
        log(_("site written to {index} in {seconds:.1f} s").format(index=out / "index.html",
                                                                    seconds=time.monotonic() - start))
    return pages


def _mathjax_source():
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).resolve().parent / "static"


def copy_mathjax(out):
    """Copy the MathJax files the pages load (:data:`MATHJAX_FILES`) into ``out/static/mathjax``; return their number.

    Raises FileNotFoundError when a needed file is missing from the package.
    """
    src = _mathjax_source()
    files = sorted({p for pattern in MATHJAX_FILES for p in src.glob(pattern) if p.is_file()})
    for needed in ("MathJax.js", "config/TeX-AMS-MML_HTMLorMML-full.js", "jax/output/HTML-CSS/fonts/STIX-Web/fontdata.js"):
        if not (src / needed).is_file():
            raise FileNotFoundError(f"MathJax file missing from jupyter-server-mathjax: {src / needed}")
    target = Path(out) / MATHJAX_DIR
    for path in files:
        dest = target / path.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    return len(files)


_IMAGES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}


def _copy_images(src, out):
    """Copy the images next to the notebooks, so relative image links keep working."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and path.suffix.lower() in _IMAGES and not any(
                part.startswith(".") or part == "__pycache__" for part in rel.parts):
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


# ---------------------------------------------------------------- number formats


_D3 = re.compile(r"^(?P<comma>,)?(?:\.(?P<precision>\d+))?(?P<type>[efgdrs%])?$")


def _to_precision(value, p):
    """JavaScript's ``Number.prototype.toPrecision`` (which d3's "g" uses)."""
    if value == 0:
        return f"{0:.{max(p - 1, 0)}f}"
    exponent = math.floor(math.log10(abs(float(f"{value:.{p - 1}e}"))))
    if exponent < -6 or exponent >= p:
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.{p - 1}e}")
    return f"{value:.{max(p - 1 - exponent, 0)}f}"


def _trim(text):
    mantissa, __, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + ("e" + exponent if exponent else "")


def _group(text):
    sign = "-" if text.startswith("-") else ""
    whole, dot, rest = text.lstrip("-").partition(".")
    return sign + f"{int(whole):,}" + dot + rest if whole.isdigit() else text


def d3_format(value, spec):
    """Format a number like d3-format, for the subset ipywidgets readouts use.

    The page's JavaScript formats the bound sliders' readouts the same way.

    Examples
    --------
    >>> d3_format(4096, ",.0f"), d3_format(0.0123, ".1%"), d3_format(0.01, ".2"), d3_format(3.14159, ".3g")
    ('4,096', '1.2%', '0.01', '3.14')
    >>> d3_format(7, "d"), d3_format(2.5e-6, ".2e"), d3_format(12.0, ""), d3_format(100000, ".3g")
    ('7', '2.50e-6', '12', '1.00e+5')
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    m = _D3.match(spec or "")
    if not m or not math.isfinite(value):
        return str(value) if not math.isfinite(value) else f"{value:g}"
    p = m["precision"]
    p = None if p is None else int(p)
    kind = m["type"] or ""
    if kind == "f":
        s = f"{value:.{6 if p is None else p}f}"
    elif kind == "%":
        s = f"{value * 100:.{6 if p is None else p}f}"
    elif kind == "e":
        s = re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.{6 if p is None else p}e}")
    elif kind == "d":
        s = f"{round(value):d}"
    elif kind in ("g", "r"):
        s = _to_precision(value, 6 if p is None else max(p, 1))
    else:  # none, or "s": significant digits, trailing zeros trimmed
        s = _trim(_to_precision(value, 12 if p is None else max(p, 1)))
    if m["comma"] and "e" not in s:
        s = _group(s)
    return s + "%" if kind == "%" else s


# ---------------------------------------------------------------- binding a spec


def _param_lists(spec):
    """Every ``params`` list in a Vega-Lite spec, the top level first."""
    found = []

    def walk(node, depth):
        if not isinstance(node, dict) or depth > 20:
            return
        if isinstance(node.get("params"), list):
            found.append(node["params"])
        for key in ("layer", "hconcat", "vconcat", "concat"):
            for child in node.get(key, []) or []:
                walk(child, depth + 1)
        if isinstance(node.get("spec"), dict):
            walk(node["spec"], depth + 1)

    walk(spec, 0)
    return found


def bind_spec(spec, values=None, bindings=()):
    """A copy of a Vega-Lite ``spec`` with param values set and params bound to inputs.

    Parameters
    ----------
    spec : dict
        The chart's Vega-Lite spec.
    values : dict, optional
        ``{param: value}``: current values of variable params (a JupyterChart's
        ``_params``); None values are ignored.
    bindings : iterable of dict
        ``{"param": name, "signal": aux, "element": "#id", "expr": expression}``:
        the page's input ``#id`` drives a new param ``aux`` (its string value)
        and ``name`` follows ``expr`` (an expression of ``aux``).

    Returns
    -------
    (dict, list of str)
        The new spec and the names of the params that were bound.

    Examples
    --------
    >>> spec = {"params": [{"name": "p", "value": 0.01}, {"name": "k", "value": 1}], "mark": "point"}
    >>> new, bound = bind_spec(spec, {"k": 3},
    ...     [{"param": "p", "signal": "se_in_1", "element": "#se-in-1", "expr": "toNumber(se_in_1)"}])
    >>> new["params"]
    [{'name': 'p', 'expr': 'toNumber(se_in_1)'}, {'name': 'k', 'value': 3},
     {'name': 'se_in_1', 'value': '', 'bind': {'element': '#se-in-1'}}]
    >>> bound, spec["params"][0]
    (['p'], {'name': 'p', 'value': 0.01})
    """
    new = copy.deepcopy(spec)
    lists = _param_lists(new)
    values = dict(values or {})
    bound = []
    by_param = {b["param"]: b for b in bindings}
    for params in lists:
        for i, param in enumerate(params):
            name = param.get("name")
            if not isinstance(name, str) or "select" in param:
                continue
            if name in by_param:
                params[i] = {"name": name, "expr": by_param[name]["expr"]}
                bound.append(name)
            elif values.get(name) is not None and "expr" not in param:
                params[i] = {**param, "value": values[name]}
    if bound:
        top = new.setdefault("params", [])
        seen = set()
        for b in bindings:
            if b["param"] in bound and b["signal"] not in seen:
                seen.add(b["signal"])
                top.append({"name": b["signal"], "value": "", "bind": {"element": b["element"]}})
    return new, bound


# ---------------------------------------------------------------- widgets -> HTML


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BOXES = {"VBoxModel": "column", "HBoxModel": "row", "BoxModel": "row", "GridBoxModel": "row"}
_SLIDERS = {"IntSliderModel", "FloatSliderModel", "FloatLogSliderModel"}
_NUMBERS = {"BoundedIntTextModel", "BoundedFloatTextModel", "IntTextModel", "FloatTextModel"}
_SELECTIONS = {"DropdownModel", "ToggleButtonsModel", "RadioButtonsModel", "SelectModel", "SelectionSliderModel"}
_BOOLS = {"CheckboxModel", "ToggleButtonModel"}
_TEXTS = {"HTMLModel", "HTMLMathModel", "LabelModel"}


def _esc(text):
    return html.escape(str(text), quote=True)


def _ref(value):
    if isinstance(value, str) and value.startswith("IPY_MODEL_"):
        return value[len("IPY_MODEL_"):]
    return None


def _json_script(data):
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


class _WidgetPage:
    """Turns the widget outputs of one executed notebook into static HTML."""

    def __init__(self, state):
        self.state = state or {}
        self.counter = 0
        self.charts = 0
        self.interactive_charts = 0
        self.bound_controls = 0
        self.kernel_controls = 0
        self._pending = {}  # element id -> (control state, model name) of a bound control

    def _next(self, prefix):
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def model(self, mid):
        entry = self.state.get(mid)
        return entry if isinstance(entry, dict) else None

    def hidden(self, st):
        layout = self.model(_ref(st.get("layout")) or "")
        ls = (layout or {}).get("state", {})
        return ls.get("display") == "none" or ls.get("visibility") == "hidden"

    # -- the entry point

    def output(self, view):
        mid = (view or {}).get("model_id")
        if not mid or self.model(mid) is None:
            return f'<div class="se-widget-missing se-note">{_esc(_(NOTE_WIDGET))}</div>'
        return f'<div class="se-widgets">{self.render(mid, {})}</div>'

    def render(self, mid, ctx, depth=0):
        entry = self.model(mid)
        if entry is None or depth > 40:
            return ""
        st = entry.get("state", {})
        name = entry.get("model_name", st.get("_model_name", ""))
        if self.hidden(st):
            return ""
        if isinstance(st.get("_site_links"), list):
            return self.explorer(mid, st, ctx, depth)
        if "spec" in st and "_params" in st:
            return self.chart(mid, st, ctx)
        if name in _BOXES or name in ("TabModel", "AccordionModel", "StackModel"):
            return self.box(st, name, ctx, depth)
        if name in _TEXTS:
            return self.text(st, name, ctx)
        if name in ("FloatProgressModel", "IntProgressModel"):
            return self.progress(st)
        if name == "OutputModel":
            return self.outputs(st.get("outputs", []), ctx, depth)
        return self.control(mid, st, name, ctx)

    # -- containers

    def box(self, st, name, ctx, depth):
        children = [c for c in (_ref(v) for v in st.get("children", [])) if c]
        titles = st.get("titles") or []
        parts = []
        for i, child in enumerate(children):
            inner = self.render(child, ctx, depth + 1)
            if not inner:
                continue
            if name in ("TabModel", "AccordionModel") and i < len(titles) and titles[i]:
                inner = f'<div class="se-tab-title">{_esc(titles[i])}</div>{inner}'
            parts.append(inner)
        direction = "row" if _BOXES.get(name) == "row" else "column"
        return f'<div class="se-box se-{direction}">{"".join(parts)}</div>'

    def explorer(self, mid, st, ctx, depth):
        links = [x for x in st.get("_site_links", []) if isinstance(x, dict) and "unsupported" not in x]
        inputs = {}  # control model id -> (element id, expression maker)
        chart_bindings = {}
        for link in links:
            control = self.model(link.get("control", ""))
            chart = self.model(link.get("chart", ""))
            if control is None or chart is None:
                continue
            if link["control"] not in inputs:
                made = self.input_for(control.get("state", {}), control.get("model_name", ""), link)
                if made is None:
                    continue
                inputs[link["control"]] = made
            element, signal, expr = inputs[link["control"]]
            expression = expr(link)
            if expression is None:
                continue
            chart_bindings.setdefault(link["chart"], []).append(
                {"param": link["param"], "signal": signal, "element": "#" + element, "expr": expression})
        inner_ctx = {"inputs": inputs, "bindings": chart_bindings, "unbound": [], "readouts": 0}
        body = self.box(st, "VBoxModel", inner_ctx, depth)
        notes = []
        if inner_ctx["unbound"]:
            notes.append(_(NOTE_SOME) if inputs else _(NOTE_ALL))
        if inputs and inner_ctx["readouts"]:
            notes.append(_(NOTE_READOUT))
        note = f'<div class="se-note">{_esc(" ".join(notes))}</div>' if notes else ""
        live = " se-live" if inputs else ""
        return f'<div class="se-explorer{live}">{body}{note}</div>'

    # -- charts

    def chart(self, mid, st, ctx):
        spec = st.get("spec")
        if not isinstance(spec, dict):
            return f'<div class="se-note">{_esc(_(NOTE_WIDGET))}</div>'
        bindings = ctx.get("bindings", {}).get(mid, [])
        spec, bound = bind_spec(spec, st.get("_params") or {}, bindings)
        div = self._next("se-chart")
        self.charts += 1
        live = bool(bound)
        self.interactive_charts += live
        attrs = f' data-interactive="{int(live)}"' + (f' data-params="{_esc(",".join(bound))}"' if live else "")
        return (f'<div class="se-chart" id="{div}"{attrs}></div>'
                f'<script type="application/json" class="se-spec" data-chart="{div}">{_json_script(spec)}</script>')

    # -- controls

    def input_for(self, st, name, link):
        """(element id, signal name, expression maker) for a bound control, or None."""
        element = self._next("se-in")
        signal = element.replace("-", "_")
        lookup = link.get("lookup")

        def table(values, index):
            return f"{_json_script(values)}[{index}]"

        if name in _SLIDERS:
            lo, hi, step = float(st.get("min", 0)), float(st.get("max", 1)), float(st.get("step", 1) or 1)
            if name == "FloatLogSliderModel":
                base = float(st.get("base", 10))
                value = math.log(float(st.get("value", base**lo)), base)
                kind = "log"
            else:
                base, value, kind = None, float(st.get("value", lo)), "linear"
            st = {**st, "_se": {"kind": kind, "min": lo, "max": hi, "step": step, "value": value, "base": base}}
            position = f"round((toNumber({signal}) - {lo!r}) / {step!r})"
            plain = f"pow({base!r}, toNumber({signal}))" if kind == "log" else f"toNumber({signal})"

            def expr(link):
                return table(lookup, position) if lookup else plain
        elif name in _NUMBERS:
            if lookup:
                return None
            st = {**st, "_se": {"kind": "number"}}

            def expr(link):
                return f"toNumber({signal})"
        elif name in _SELECTIONS:
            if not lookup or st.get("index") is None:
                return None
            st = {**st, "_se": {"kind": "index"}}

            def expr(link):
                return table(link.get("lookup"), f"toNumber({signal})")
        elif name in _BOOLS:
            st = {**st, "_se": {"kind": "bool"}}

            def expr(link):
                return table(link.get("lookup") or [False, True], f"toNumber({signal})")
        else:
            return None
        self._pending[element] = (st, name)
        return element, signal, expr

    def control(self, mid, st, name, ctx):
        inputs = ctx.get("inputs", {})
        if mid in inputs:
            element = inputs[mid][0]
            st, name = self._pending[element]
            self.bound_controls += 1
            return self.live_control(element, st, name)
        if name in ("LayoutModel", "DescriptionStyleModel") or name.endswith("StyleModel"):
            return ""
        self.kernel_controls += 1
        ctx.setdefault("unbound", []).append(mid)
        return self.replica(st, name, bool(ctx.get("inputs")) or "inputs" in ctx)

    def _label(self, st, for_id=None):
        text = st.get("description") or ""
        if not text:
            return ""
        target = f' for="{for_id}"' if for_id else ""
        return f'<label class="se-label"{target}>{_esc(text)}</label>'

    def live_control(self, element, st, name):
        se = st["_se"]
        kind = se["kind"]
        label = self._label(st, element)
        if kind in ("linear", "log"):
            labels = ""
            fmt = st.get("readout_format") or (".3g" if kind == "log" else ("d" if name == "IntSliderModel" else ".2f"))
            shown = se["base"] ** se["value"] if kind == "log" else se["value"]
            base = f' data-base="{se["base"]!r}"' if kind == "log" else ""
            return (f'<div class="se-control se-bound">{label}<input type="range" class="se-input" id="{element}" '
                    f'min="{se["min"]!r}" max="{se["max"]!r}" step="{se["step"]!r}" value="{se["value"]!r}" '
                    f'data-kind="{kind}"{base} data-format="{_esc(fmt)}"{labels}>'
                    f'<output class="se-readout" for="{element}">{_esc(d3_format(shown, fmt))}</output></div>')
        if kind == "number":
            return (f'<div class="se-control se-bound">{label}<input type="number" class="se-input" id="{element}" '
                    f'min="{_esc(st.get("min", ""))}" max="{_esc(st.get("max", ""))}" step="{_esc(st.get("step", 1) or 1)}" '
                    f'value="{_esc(st.get("value", 0))}"></div>')
        labels = list(st.get("_options_labels") or [])
        if kind == "index" and name == "SelectionSliderModel":
            index = int(st.get("index") or 0)
            return (f'<div class="se-control se-bound">{label}<input type="range" class="se-input" id="{element}" '
                    f'min="0" max="{max(len(labels) - 1, 0)}" step="1" value="{index}" data-kind="index" '
                    f'data-labels="{_esc(json.dumps(labels))}"><output class="se-readout" for="{element}">'
                    f'{_esc(labels[index] if index < len(labels) else "")}</output></div>')
        if kind == "index":
            index = int(st.get("index") or 0)
            options = "".join(f'<option value="{i}"{" selected" if i == index else ""}>{_esc(t)}</option>'
                              for i, t in enumerate(labels))
            return (f'<div class="se-control se-bound">{label}<select class="se-input" id="{element}">{options}'
                    f'</select></div>')
        checked = bool(st.get("value"))
        options = "".join(f'<option value="{i}"{" selected" if i == int(checked) else ""}>{t}</option>'
                          for i, t in enumerate((_("off"), _("on"))))
        return (f'<div class="se-control se-bound">{label}<select class="se-input" id="{element}">{options}'
                f'</select></div>')

    def replica(self, st, name, in_explorer):
        """A greyed-out copy of a control that needs the kernel."""
        title = f' title="{_esc(_(NOTE))}"'
        label = self._label(st)
        value = st.get("value")
        if name in _SLIDERS:
            shown = value
            if name == "FloatLogSliderModel":
                base = float(st.get("base", 10))
                pos = math.log(float(value), base) if value else 0
            else:
                pos = value
            fmt = st.get("readout_format") or ("d" if name == "IntSliderModel" else ".2f")
            widget = (f'<input type="range" disabled min="{_esc(st.get("min", 0))}" max="{_esc(st.get("max", 1))}" '
                      f'step="{_esc(st.get("step", 1))}" value="{_esc(pos)}"><output class="se-readout">'
                      f'{_esc(d3_format(shown, fmt))}</output>')
        elif name in _SELECTIONS:
            labels = st.get("_options_labels") or []
            index = st.get("index")
            shown = labels[index] if isinstance(index, int) and index < len(labels) else ""
            widget = f'<select disabled><option>{_esc(shown)}</option></select>'
        elif name in _BOOLS:
            widget = f'<input type="checkbox" disabled{" checked" if value else ""}>'
        elif name == "ButtonModel":
            return (f'<div class="se-control se-kernel"{title}><button disabled>{_esc(st.get("description", ""))}'
                    f'</button></div>')
        elif name in _NUMBERS or name in ("TextModel", "TextareaModel"):
            widget = f'<input type="text" disabled value="{_esc(value if value is not None else "")}">'
        elif name.endswith("RangeSliderModel"):
            widget = f'<output class="se-readout">{_esc(value)}</output>'
        else:
            return f'<div class="se-control se-kernel se-note"{title}>{_esc(_(NOTE_WIDGET))}</div>'
        note = "" if in_explorer else f'<span class="se-note">{_esc(_(NOTE))}</span>'
        return f'<div class="se-control se-kernel"{title}>{label}{widget}{note}</div>'

    # -- other widgets

    def text(self, st, name, ctx):
        value = st.get("value") or ""
        if "readouts" in ctx and value:
            ctx["readouts"] += 1
        body = _esc(value) if name == "LabelModel" else str(value)
        label = self._label(st)
        return f'<div class="se-text">{label}<span>{body}</span></div>' if body or label else ""

    def progress(self, st):
        lo, hi, value = st.get("min", 0), st.get("max", 100), st.get("value", 0)
        return (f'<div class="se-control">{self._label(st)}<progress max="{_esc(hi - lo)}" '
                f'value="{_esc(value - lo)}"></progress></div>')

    def outputs(self, outs, ctx, depth):
        parts = []
        for out in outs or []:
            kind = out.get("output_type")
            if kind == "stream":
                parts.append(f'<pre class="se-stream">{_esc(_ANSI.sub("", "".join(out.get("text", ""))))}</pre>')
            elif kind == "error":
                tb = _ANSI.sub("", "\n".join(out.get("traceback", [])))
                parts.append(f'<pre class="se-error">{_esc(tb)}</pre>')
            else:
                data = out.get("data", {})
                if WIDGET_VIEW in data and _ref("IPY_MODEL_" + str(data[WIDGET_VIEW].get("model_id"))):
                    parts.append(self.render(data[WIDGET_VIEW]["model_id"], ctx, depth + 1))
                elif "text/html" in data:
                    parts.append("".join(data["text/html"]) if isinstance(data["text/html"], list) else data["text/html"])
                elif "image/png" in data:
                    parts.append(f'<img src="data:image/png;base64,{_esc(data["image/png"])}" alt="">')
                elif "text/plain" in data:
                    text = data["text/plain"]
                    parts.append(f'<pre>{_esc("".join(text) if isinstance(text, list) else text)}</pre>')
        return "".join(parts)


# ---------------------------------------------------------------- pages


_CSS = """
.se-nav { display: flex; gap: 1.2em; align-items: baseline; padding: 0.6em 1em; margin: 0 0 1em 0;
  border-bottom: 1px solid #ddd; font-family: var(--jp-ui-font-family); font-size: 14px; }
.se-nav .se-home { font-weight: 600; }
.se-nav .se-hint { color: #666; margin-left: auto; }
.se-widgets { padding: 2px 0; }
.se-box { display: flex; gap: 4px 18px; }
.se-row { flex-flow: row wrap; align-items: center; }
.se-column { flex-direction: column; }
.se-explorer { border-left: 3px solid #e0e0e0; padding-left: 10px; }
.se-explorer.se-live { border-left-color: #4c78a8; }
.se-control { display: flex; align-items: center; gap: 8px; min-height: 28px; font-size: 13px; }
.se-label { min-width: 4em; }
.se-control input[type=range] { width: 160px; }
.se-control input[type=number] { width: 7em; }
.se-readout { min-width: 4em; font-variant-numeric: tabular-nums; }
.se-kernel { opacity: 0.55; }
.se-note { color: #555; font-size: 12px; font-style: italic; margin: 4px 0; }
.se-chart { margin: 4px 0; min-height: 20px; }
.se-chart[data-state=error] { color: #b00; }
.se-text { font-size: 13px; }
.se-tab-title { font-weight: 600; margin-top: 6px; }
.se-stream, .se-error { font-size: 12px; }
.se-error { color: #b00; }
.vega-bindings { display: none; }
details.se-reveal { border-left: 3px solid #f2a33a; padding-left: 8px; margin: 6px 0; }
details.se-reveal > summary { cursor: pointer; color: #8a5300; font-weight: 600; padding: 4px 0; }
"""

_TEMPLATE = """{%- extends 'index.html.j2' -%}
{% from 'mathjax.html.j2' import mathjax %}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}<script>{{ resources.se_mathjax_pre }}</script>
{{ mathjax(resources.mathjax_url) }}{%- endblock html_head_js_mathjax -%}
{% block extra_css %}<style type="text/css">{{ resources.se_css }}</style>{% endblock extra_css %}
{%- block body_header -%}{{ super() }}{{ resources.se_nav }}{%- endblock body_header -%}
{%- block any_cell scoped -%}
{%- if cell.metadata.get("straggle_site", {}).get("open") -%}
<details class="se-reveal"><summary>{{ resources.se_reveal }}</summary>
{%- endif -%}
{{ super() }}
{%- if cell.metadata.get("straggle_site", {}).get("close") -%}</details>{%- endif -%}
{%- endblock any_cell -%}
{% block body_footer %}{{ resources.se_nav }}<script src="{{ resources.se_script }}" defer></script>
{{ super() }}{% endblock body_footer %}
"""

# The page's own code, bundled with Vega, Vega-Lite and vega-embed by
# vl_convert (no CDN): readouts for the bound inputs, then one vegaEmbed per chart.
_PAGE_JS = r"""
window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;
(function () {
  function group(s) { const [i, f] = s.split('.'); return i.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (f !== undefined ? '.' + f : ''); }
  function trim(s) {
    const [m, e] = s.split('e'); const t = m.includes('.') ? m.replace(/0+$/, '').replace(/\.$/, '') : m;
    return e === undefined ? t : t + 'e' + e;
  }
  function fmt(v, spec) {
    const m = /^(,)?(?:\.(\d+))?([efgdrs%])?$/.exec(spec || '');
    if (!m || !isFinite(v)) return String(v);
    const p = m[2] === undefined ? null : Number(m[2]); const t = m[3] || ''; let s;
    if (t === 'f') s = v.toFixed(p === null ? 6 : p);
    else if (t === '%') s = (v * 100).toFixed(p === null ? 6 : p);
    else if (t === 'e') s = v.toExponential(p === null ? 6 : p);
    else if (t === 'd') s = String(Math.round(v));
    else if (t === 'g' || t === 'r') s = v.toPrecision(p === null ? 6 : Math.max(p, 1));
    else s = trim(v.toPrecision(p === null ? 12 : Math.max(p, 1)));
    if (m[1] && !/e/.test(s)) { const neg = s[0] === '-'; s = (neg ? '-' : '') + group(neg ? s.slice(1) : s); }
    return t === '%' ? s + '%' : s;
  }
  function readout(input) {
    const out = document.querySelector('output[for="' + input.id + '"]');
    if (!out) return;
    let v = Number(input.value);
    if (input.dataset.labels) { const labels = JSON.parse(input.dataset.labels); out.textContent = labels[Math.round(v)] || ''; return; }
    if (input.dataset.kind === 'log') v = Math.pow(Number(input.dataset.base), v);
    out.textContent = fmt(v, input.dataset.format || '');
  }
  function start() {
    document.querySelectorAll('.se-input').forEach((el) => { readout(el); el.addEventListener('input', () => readout(el)); });
    const jobs = [];
    document.querySelectorAll('script.se-spec').forEach((script) => {
      const target = document.getElementById(script.dataset.chart);
      if (!target) return;
      let spec;
      try { spec = JSON.parse(script.textContent); } catch (e) {
        target.dataset.state = 'error'; target.textContent = 'This chart could not be read: ' + e; return;
      }
      jobs.push(vegaEmbed(target, spec, {renderer: 'svg', mode: 'vega-lite',
                                         actions: {export: true, source: false, compiled: false, editor: false}})
        .then((res) => { target.seView = res.view; target.dataset.state = 'drawn'; })
        .catch((err) => { target.dataset.state = 'error'; target.textContent = 'This chart could not be drawn: ' + err; }));
    });
    Promise.all(jobs).then(() => { document.documentElement.dataset.seCharts = 'done'; });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})();
"""


@lru_cache(maxsize=1)
def page_script():
    """Vega, Vega-Lite, vega-embed and the page code, as one classic script (about 1 MB)."""
    from importlib.metadata import version

    from .._cache import cached_text

    def build():
        import vl_convert as vlc

        try:
            from altair.utils._importers import vl_version_for_vl_convert

            vl = vl_version_for_vl_convert()
        except Exception:  # an altair without the helper: vl-convert's newest Vega-Lite
            vl = None
        return vlc.javascript_bundle(_PAGE_JS, vl_version=vl)

    # About 1.3 s of CPU for each site and fleet report; it depends only on these versions (Altair's sets the
    # Vega-Lite it speaks), which are read without importing either: a cached bundle costs no Altair import.
    return cached_text("page-script", f"{version('vl-convert-python')}|altair {version('altair')}|{_PAGE_JS}", build)


def _nav(names, prev, nxt):
    # (the _() calls stay out of f-strings, where the catalog's extractor would not see them)
    home, hint = _esc(_("straggle-edu: all notebooks")), _esc(_("Charts are live; controls in grey need a kernel."))
    parts = [f'<nav class="se-nav"><a class="se-home" href="index.html">{home}</a>']
    if prev is not None:
        parts.append(f'<a href="{_esc(names[prev.name])}">&larr; {_esc(prev.stem)}</a>')
    if nxt is not None:
        parts.append(f'<a href="{_esc(names[nxt.name])}">{_esc(nxt.stem)} &rarr;</a>')
    parts.append(f'<span class="se-hint">{hint}</span></nav>')
    return "".join(parts)


def _rewrite_links(text, names):
    def repl(m):
        target = m.group(2)
        return f'{m.group(1)}"{names[target]}{m.group(3) or ""}"' if target in names else m.group(0)

    return re.sub(r'(href=)"(?:\./)?([^"/:#?]+\.ipynb)(#[^"]*)?"', repl, text)


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def _hidden_check(cell):
    meta = cell.get("metadata", {})
    return "check" in _tags(cell) and meta.get("jupyter", {}).get("source_hidden") is True


def mark_reveals(cells):
    """Mark what a page folds behind a "Reveal": each ``reveal`` cell, the prose after it and its first check cells.

    A guess holds on the static site too: the prompt stays in view, and its
    answer (the reveal cell's output, the explanation, the ✓ lines) opens on
    a click. The source of a hidden check cell is left out of the page, as
    JupyterLab hides it. Marks go in ``metadata.straggle_site`` (``open``,
    ``close``) and ``metadata.transient.remove_source``; the cells are changed
    in place.

    Examples
    --------
    >>> cell = lambda kind, *tags, hidden=False: {"cell_type": kind, "metadata": {"tags": list(tags), **(
    ...     {"jupyter": {"source_hidden": True}} if hidden else {})}}
    >>> cells = [cell("markdown", "guess"), cell("code", "reveal"), cell("markdown"), cell("code", "check", hidden=True),
    ...          cell("markdown")]
    >>> mark_reveals(cells)
    >>> [c["metadata"].get("straggle_site") for c in cells], cells[3]["metadata"]["transient"]
    ([None, {'open': True}, None, {'close': True}, None], {'remove_source': True})
    """
    group_at = None
    for i, cell in enumerate(cells):
        meta = cell.setdefault("metadata", {})
        if _hidden_check(cell):
            meta.setdefault("transient", {})["remove_source"] = True
        if "reveal" in _tags(cell):
            meta.setdefault("straggle_site", {})["open"] = True
            group_at = i
            continue
        if group_at is None:
            continue
        after = cells[i + 1] if i + 1 < len(cells) else None
        new_slide = meta.get("slideshow", {}).get("slide_type") in ("slide", "subslide") or "guess" in _tags(cell)
        if new_slide and i > group_at + 1:  # no check came: the group ends before this cell
            cells[i - 1]["metadata"].setdefault("straggle_site", {})["close"] = True
            group_at = None
        elif _hidden_check(cell) and (after is None or not _hidden_check(after)):
            meta.setdefault("straggle_site", {})["close"] = True
            group_at = None
    if group_at is not None:
        cells[-1]["metadata"].setdefault("straggle_site", {})["close"] = True


def _write_page(nb, path, out, names, prev, nxt, lang="en"):
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    widgets = _WidgetPage(state)
    errors = []
    for cell in nb.cells:
        for out_ in cell.get("outputs", []):
            if out_.get("output_type") == "error":
                errors.append(f"{out_.get('ename')}: {out_.get('evalue')}")
            data = out_.get("data")
            if data and WIDGET_VIEW in data:
                out_["data"] = {"text/html": widgets.output(data[WIDGET_VIEW])}
                out_.get("metadata", {}).pop(WIDGET_VIEW, None)
    nb.metadata.pop("widgets", None)
    mark_reveals(nb.cells)
    title, summary = _title_and_summary(nb, path.stem)
    nb.metadata["title"] = f"{title} · straggle-edu"
    # embed_images stays off: nbconvert's image embedding re-parses each markdown
    # cell and empties a "What to remember" <div> box whose list follows a blank line.
    exporter = HTMLExporter(template_name="lab", extra_loaders=[DictLoader({"straggle_site.html.j2": _TEMPLATE})],
                            template_file="straggle_site.html.j2", embed_images=False, mathjax_url=MATHJAX_URL,
                            language_code=lang)
    resources = {"metadata": {"name": path.stem, "path": str(path.parent)}, "se_mathjax_pre": _MATHJAX_PRE,
                 "se_css": _CSS, "se_nav": _nav(names, prev, nxt), "se_script": SCRIPT,
                 "se_reveal": _("Reveal (your guess first)")}
    body, __ = exporter.from_notebook_node(nb, resources=resources)
    body = _rewrite_links(body, names)
    # nbconvert takes an ISO 639-1 code only ("zh"); the page says which Chinese: zh-CN.
    body = body.replace(f'<html lang="{lang}">', f'<html lang="{_HTML_LANG[lang]}">', 1)
    target = out / names[path.name]
    target.write_text(body, encoding="utf-8")
    return SitePage(name=path.name, title=title, path=target, charts=widgets.charts,
                    interactive_charts=widgets.interactive_charts, bound_controls=widgets.bound_controls,
                    kernel_controls=widgets.kernel_controls, summary=summary, errors=errors)


def _index_row(p):
    if p.interactive_charts:
        live = _("{live} of {charts} charts work without a kernel").format(live=p.interactive_charts, charts=p.charts)
    else:
        live = ngettext("{charts} chart", "{charts} charts", p.charts).format(charts=p.charts)
    return (f'<li><a href="{_esc(p.path.name)}">{_esc(p.title)}</a> <span class="file">{_esc(p.name)}</span>'
            f'<div class="summary">{_esc(p.summary)}</div><div class="meta">{_esc(live)}</div></li>')


_INDEX_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif;
  max-width: 52em; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.5; }
h1 { margin-bottom: 0.2em; }
ol { padding-left: 1.4em; }
li { margin: 0.9em 0; }
li a { font-size: 1.1em; font-weight: 600; }
.file { color: #888; font-size: 0.85em; margin-left: 0.4em; }
.summary { color: #333; }
.meta { color: #777; font-size: 0.85em; }
.run { background: #f5f7fa; border-left: 3px solid #4c78a8; padding: 0.6em 1em; }
code { background: #eee; padding: 0 0.3em; }
"""


def _index_html(pages, lang="en"):
    lab = "straggle-edu lab" + ("" if lang == "en" else f" --lang {lang}")
    intro = _esc(_("In a synchronous job every worker meets at a barrier each step, so the job runs at the speed "
                   "of its slowest worker, not the average one. These pages are the notebooks, run once, with "
                   "their outputs."))
    run_it = _esc(_("The charts are live in these pages. Sliders next to a closed-form chart move it with no kernel; "
                    "controls in grey need Python: run the notebook in JupyterLab ({command}) to use them."))
    run_it = run_it.replace("{command}", f"<code>{_esc(lab)}</code>")
    title = _esc(_("straggle-edu: the notebooks"))
    return f"""<!DOCTYPE html>
<html lang="{_HTML_LANG[lang]}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title}</title>
<style>{_INDEX_CSS}</style>
</head>
<body>
<h1>straggle-edu</h1>
<p>{intro}</p>
<p class="run">{run_it}</p>
<ol>
{"".join(_index_row(p) for p in pages)}
</ol>
</body>
</html>
"""


def main(argv=None):  # pragma: no cover - the CLI dispatcher is the way in
    parser = argparse.ArgumentParser(prog="straggle-edu site")
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
