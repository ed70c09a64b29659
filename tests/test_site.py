"""The static-site builder, without a browser: what it writes and what it refuses.

The browser half (pages opened in Chromium with the network blocked, a bound
slider moved) is ``tests/browser/test_static_site.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from straggle_edu.app import cli
from straggle_edu.app.site import MATHJAX_URL, NOTE_SOME, bind_spec, build_site, d3_format

EXPLORER_CELL = """\
import altair as alt, ipywidgets as widgets
from straggle_edu.notebook.display import show
from straggle_edu.explorers._base import Explorer
p = alt.param(name="p", value=0.01)
n = alt.param(name="n", value=100)
data = alt.Data(values=[{"k": k} for k in range(1, 50)])
line = (alt.Chart(data).mark_line().encode(x="k:Q", y="y:Q")
        .transform_calculate(y="1 - pow(1 - p, datum.k * n / 100)").add_params(p, n))
ex = Explorer({"p": widgets.FloatSlider(value=0.01, min=0.001, max=0.1, step=0.001, description="p per worker"),
               "n": widgets.FloatLogSlider(value=100, base=10, min=0, max=4, step=0.01, description="workers"),
               "seed": widgets.IntSlider(value=0, min=0, max=9, description="seed"),
               "again": widgets.Button(description="draw again")},
              {"tail": line}, extra=[widgets.HTML("<b>63%</b>")])
ex.link("p", "tail", "p")
ex.link("n", "tail", "n")
show(ex)
"""


def _notebook(path, cells, metadata=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}, **(metadata or {})}
    for kind, source in cells:
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        nb.cells.append(make(source))
    nbformat.write(nb, path)


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    src = tmp_path_factory.mktemp("notebooks")
    # The first page says it times real processes: with jobs=2 it runs after the second, alone.
    _notebook(src / "01_first.ipynb", metadata={"straggle_edu": {"runs_alone": True}}, cells=[
        ("md", "# First page\n\nThe job waits for the slowest. Next: [the second](02_second.ipynb#top)."),
        ("md", '<div class="remember" style="border-left: 4px solid #1f4e79">\n\n- the slowest sets the pace\n\n</div>'),
        ("code", EXPLORER_CELL),
        ("code", "show(alt.Chart(data).mark_point().encode(x='k:Q', y='k:Q'))"),
    ])
    _notebook(src / "02_second.ipynb", [("md", "# Second page\n\nBack to [the first](01_first.ipynb).\n\n"
                                               "![a figure](figures/fig.png)"),
                                        ("code", "print('hello')")])
    (src / "figures").mkdir()
    (src / "figures" / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    before = _digest(src)
    out = tmp_path_factory.mktemp("site")
    lines = []
    pages = build_site(out, src, jobs=2, log=lines.append)
    return src, before, out, pages, lines


def _specs(page_html):
    return [json.loads(m.replace("<\\/", "</")) for m in
            re.findall(r'<script[^>]*class="se-spec"[^>]*>(.*?)</script>', page_html, re.S)]


def test_build_site_writes_index_pages_and_one_bundle(small_site):
    src, before, out, pages, lines = small_site
    assert [p.name for p in pages] == ["01_first.ipynb", "02_second.ipynb"]
    index = (out / "index.html").read_text()
    assert 'href="01_first.html"' in index and 'href="02_second.html"' in index
    assert "First page" in index and "1 of 2 charts work without a kernel" in index
    assert "Back to the first." in index, "the summary shows a link's text, not its markdown"
    assert (out / "static" / "vega-site.js").stat().st_size > 100_000
    assert (out / ".nojekyll").exists()
    assert '<html lang="en">' in index and '<html lang="en">' in (out / "01_first.html").read_text()
    executed = [line for line in lines if "executed" in line]
    assert "02_second.ipynb" in executed[0] and "01_first.ipynb" in executed[1], "the notebook that runs alone runs last"
    assert _digest(src) == before, "the source notebooks must not change"


def test_build_site_binds_linked_controls_and_notes_the_rest(small_site):
    src, before, out, pages, lines = small_site
    page = (out / "01_first.html").read_text()
    first = pages[0]
    assert (first.charts, first.interactive_charts, first.bound_controls, first.kernel_controls) == (2, 1, 2, 2)
    specs = _specs(page)
    assert len(specs) == 2
    params = {p["name"]: p for p in specs[0]["params"]}
    assert params["p"] == {"name": "p", "expr": params["p"]["expr"]}
    assert re.fullmatch(r"toNumber\(se_in_\d+\)", params["p"]["expr"])
    assert re.fullmatch(r"pow\(10\.0, toNumber\(se_in_\d+\)\)", params["n"]["expr"])
    bound = [p for p in specs[0]["params"] if "bind" in p]
    assert len(bound) == 2
    for param in bound:
        element = param["bind"]["element"].lstrip("#")
        assert f'id="{element}"' in page, f"no input {element} for {param['name']}"
    assert "params" not in specs[1] or not any("bind" in p for p in specs[1]["params"])
    assert NOTE_SOME in page
    assert "draw again" in page and "disabled" in page


def test_build_site_pages_need_no_cdn_not_even_for_mathjax(small_site):
    src, before, out, pages, lines = small_site
    for page in ("01_first.html", "02_second.html"):
        text = (out / page).read_text()
        sources = re.findall(r'<script[^>]+src="([^"]+)"', text)
        assert sorted(sources) == sorted(["static/vega-site.js", MATHJAX_URL]), sources
        assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", text, re.I), "a script comes from the network"
        assert "require.js" not in text and "@jupyter-widgets/html-manager" not in text
        assert "application/vnd.jupyter.widget-state+json" not in text
        assert 'webFont: "STIX-Web"' in text


def test_build_site_copies_the_mathjax_it_loads(small_site):
    """The lead's browser test opens OUT/01_first.html offline; MathJax is OUT/static/mathjax/MathJax.js."""
    src, before, out, pages, lines = small_site
    mathjax = out / MATHJAX_URL.split("?")[0]
    assert mathjax.is_file() and mathjax.stat().st_size > 30_000
    config = MATHJAX_URL.split("config=")[1].split(",")
    for name in config:
        assert (mathjax.parent / "config" / f"{name}.js").is_file(), name
    assert (mathjax.parent / "jax" / "output" / "HTML-CSS" / "fonts" / "STIX-Web" / "fontdata.js").is_file()
    assert any((mathjax.parent / "fonts" / "HTML-CSS" / "STIX-Web" / "woff").glob("*.woff"))
    size = sum(p.stat().st_size for p in mathjax.parent.rglob("*") if p.is_file())
    assert size < 4_000_000, f"the site's MathJax copy is {size:,} bytes; copy only what the config loads"


def test_build_site_keeps_markdown_inside_html_boxes(small_site):
    src, before, out, pages, lines = small_site
    page = (out / "01_first.html").read_text()
    assert re.search(r'<div class="remember"[^>]*>\s*<ul>\s*<li>the slowest sets the pace</li>', page)


def test_build_site_points_notebook_links_at_pages(small_site):
    src, before, out, pages, lines = small_site
    assert 'src="figures/fig.png"' in (out / "02_second.html").read_text()
    assert (out / "figures" / "fig.png").read_bytes() == (src / "figures" / "fig.png").read_bytes()
    assert 'href="02_second.html#top"' in (out / "01_first.html").read_text()
    assert 'href="01_first.html"' in (out / "02_second.html").read_text()


def test_bound_spec_compiles_to_vega(small_site):
    vlc = pytest.importorskip("vl_convert")
    src, before, out, pages, lines = small_site
    spec = _specs((out / "01_first.html").read_text())[0]
    vega = vlc.vegalite_to_vega(spec)
    signals = {s["name"]: s for s in vega.get("signals", [])}
    assert "bind" in next(s for name, s in signals.items() if name.startswith("se_in_"))
    assert signals["p"]["update"].startswith("toNumber(")


def test_build_site_stops_on_a_failing_cell(tmp_path):
    src = tmp_path / "nbs"
    src.mkdir()
    _notebook(src / "bad.ipynb", [("code", "raise ValueError('n must be a whole number >= 1, got 0')")])
    with pytest.raises(ValueError, match="bad.ipynb failed while building the site: .*n must be a whole number"):
        build_site(tmp_path / "out", src, log=lambda line: None)


def test_build_site_refuses_bad_input(tmp_path):
    with pytest.raises(NotADirectoryError, match="notebooks folder not found"):
        build_site(tmp_path / "out", tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no notebooks match"):
        build_site(tmp_path / "out", tmp_path / "empty")
    _notebook(tmp_path / "empty" / "a.ipynb", [("md", "# A")])
    with pytest.raises(ValueError, match="jobs must be a whole number in 1..16, got 0"):
        build_site(tmp_path / "out", tmp_path / "empty", jobs=0)
    with pytest.raises(ValueError, match="out_dir must be a folder other than the notebooks folder"):
        build_site(tmp_path / "empty", tmp_path / "empty")


def test_cli_site_reports_a_missing_folder_in_one_line(tmp_path, capsys):
    assert cli.main(["site", str(tmp_path / "out"), "--notebooks", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "notebooks folder not found" in err


def test_bind_spec_reaches_nested_params_and_leaves_selections():
    spec = {"layer": [{"params": [{"name": "n", "value": 1}, {"name": "pick", "select": "point"}], "mark": "line"}]}
    new, bound = bind_spec(spec, {"pick": [1]}, [{"param": "n", "signal": "s", "element": "#e", "expr": "toNumber(s)"}])
    assert bound == ["n"]
    assert new["layer"][0]["params"] == [{"name": "n", "expr": "toNumber(s)"}, {"name": "pick", "select": "point"}]
    assert new["params"] == [{"name": "s", "value": "", "bind": {"element": "#e"}}]
    assert spec["layer"][0]["params"][0] == {"name": "n", "value": 1}


def test_bind_spec_without_bindings_sets_current_values_only():
    spec = {"params": [{"name": "n", "value": 1}, {"name": "m", "value": 2}], "mark": "point"}
    new, bound = bind_spec(spec, {"n": 64, "m": None})
    assert bound == [] and new["params"] == [{"name": "n", "value": 64}, {"name": "m", "value": 2}]


@pytest.mark.parametrize("value, spec, expected", [
    (4096, ",.0f", "4,096"), (1234567.891, ",.2f", "1,234,567.89"), (0.634, ".1%", "63.4%"),
    (0.01, ".2", "0.01"), (100000, ".3g", "1.00e+5"), (0.01, ".3g", "0.0100"), (8, "d", "8"), (0.5, ".2f", "0.50"),
    (2.454e-06, ".4g", "0.000002454"), (1.2e-9, ".2", "1.2e-9"), (-1234.5, ",.1f", "-1,234.5"), (0, ".3g", "0.00"),
    (float("nan"), ".2f", "nan"), ("x", ".2f", "x"),
])
def test_d3_format_covers_widget_readouts(value, spec, expected):
    assert d3_format(value, spec) == expected


def test_build_site_in_chinese(tmp_path):
    """``--lang zh``: the index, the navigation and the notes in Chinese, ``lang="zh-CN"``, math still local."""
    import straggle_edu
    from straggle_edu.i18n import _

    src = tmp_path / "zh"
    src.mkdir()
    _notebook(src / "01_first.ipynb", [("md", "# 第一页\n\n作业要等最慢的卡：$1 - (1 - p)^n$。"),
                                       ("code", 'import straggle_edu; straggle_edu.set_language("zh")\n'
                                                'import os; print(os.environ["STRAGGLE_EDU_LANG"])')])
    out = tmp_path / "site"
    assert cli.main(["site", str(out), "--notebooks", str(src), "--lang", "zh", "--jobs", "1"]) == 0
    index = (out / "index.html").read_text()
    page = (out / "01_first.html").read_text()
    assert '<html lang="zh-CN">' in index and '<html lang="zh-CN">' in page
    assert "第一页" in index and "straggle-edu lab --lang zh" in index
    assert "zh\n" in page or ">zh<" in page or "zh</pre>" in page, "the kernel ran with STRAGGLE_EDU_LANG=zh"
    assert MATHJAX_URL in page and (out / MATHJAX_URL.split("?")[0]).is_file()
    straggle_edu.set_language("zh")
    if _("straggle-edu: all notebooks") != "straggle-edu: all notebooks":  # the catalog is compiled
        assert _("straggle-edu: all notebooks") in page and _("straggle-edu: the notebooks") in index
    straggle_edu.set_language(None)
