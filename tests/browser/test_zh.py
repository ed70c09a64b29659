"""The Chinese edition in a real browser: Chinese charts, real CJK glyphs, math offline.

- Chinese notebooks from ``notebooks/zh/`` are run in JupyterLab like the
  English ones (no error, every widget and chart drawn, a screenshot in
  ``tests/browser/screenshots/``), and their charts carry Chinese text.
- No tofu: for every chart text element with Chinese characters, Chromium's
  DevTools protocol (``CSS.getPlatformFontsForNode``) says which installed
  font drew its glyphs; every Chinese glyph must come from a font that has
  CJK glyphs (``document.fonts.check()`` cannot tell: it is true even for
  fonts that are absent). Charts draw with the SVG renderer so that their
  text is in the DOM.
- The Chinese static site draws its charts and typesets its math with the
  MathJax copy the site ships (no network), in both languages.
"""

from __future__ import annotations

import re

import pytest

import labdriver

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# One notebook per part of the story: the core idea, the expected maximum
# with its explorer, the training step's mesh, and a real trace.
ZH_NOTEBOOKS = ["zh/01_restaurant.ipynb", "zh/03_expected_maximum.ipynb", "zh/05_training_step.ipynb",
                "zh/09_debug_a_real_job.ipynb"]

_CJK = re.compile(r"[\u3400-\u9fff]")
# Font families that carry CJK glyphs, as Chromium names the platform font.
_CJK_FAMILY = re.compile(r"CJK|Han Sans|Han Serif|WenQuanYi|PingFang|Hiragino|YaHei|SimHei|SimSun|Noto Sans SC|"
                         r"Noto Serif SC|Droid Sans Fallback|AR PL", re.I)

# Marks each chart text node (SVG <text>) that holds Chinese, so that the
# DevTools protocol can find it; returns the texts.
JS_MARK_CJK_TEXT = r"""
() => {
  const out = [];
  document.querySelectorAll('svg text').forEach((el, i) => {
    const t = el.textContent || '';
    if (/[\u3400-\u9fff]/.test(t)) { el.setAttribute('data-se-cjk', String(i)); out.push(t); }
  });
  return out;
}
"""


def chinese_glyph_fonts(page, context, limit=40):
    """For each marked chart text: its text, and {font family: glyph count} as Chromium drew it."""
    texts = page.evaluate(JS_MARK_CJK_TEXT)
    cdp = context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]["nodeId"]
        ids = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-se-cjk]"})["nodeIds"]
        out = []
        for text, node in list(zip(texts, ids))[:limit]:
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            out.append((text, {f["familyName"]: f["glyphCount"] for f in fonts}))
        return out
    finally:
        cdp.detach()


def tofu(fonts_by_text):
    """The chart texts some of whose Chinese glyphs no CJK font drew (shown as boxes)."""
    bad = []
    for text, fonts in fonts_by_text:
        cjk_glyphs = sum(count for family, count in fonts.items() if _CJK_FAMILY.search(family))
        if cjk_glyphs < len(_CJK.findall(text)):
            bad.append(f"{text!r} drawn with {fonts}")
    return bad


@pytest.fixture(scope="session")
def cjk_font():
    """A CJK font that fontconfig knows (Chromium draws with fontconfig's fonts), or a skip saying how to get one."""
    family = labdriver.cjk_font()
    if family is None:
        pytest.skip("no CJK font is installed (fc-list :lang=zh is empty), so Chinese would draw as boxes: "
                    "sudo apt install fonts-noto-cjk")
    return family


@pytest.mark.parametrize("lab_notebook", ZH_NOTEBOOKS, indirect=True)
def test_zh_notebook_draws_chinese_charts(lab_notebook, browser_context):
    report = lab_notebook.report
    problems = report.problems()
    assert not problems, f"{report.name} after Run All in JupyterLab:\n- " + "\n- ".join(problems)
    assert report.charts, f"{report.name}: no chart drawn"
    fonts = chinese_glyph_fonts(lab_notebook.page, browser_context)
    print(f"{report.name}: {len(fonts)} chart texts in Chinese; first: {fonts[:3]}; screenshot {report.screenshot}")
    assert fonts, f"{report.name}: no chart text in Chinese (is the language line there, are the charts translated?)"
    prose = lab_notebook.page.evaluate("() => document.querySelector('.jp-Notebook').innerText")
    assert len(_CJK.findall(prose)) > 200, f"{report.name}: the page shows little Chinese"


@pytest.mark.parametrize("lab_notebook", ZH_NOTEBOOKS, indirect=True)
def test_zh_notebook_chinese_glyphs_come_from_a_cjk_font(lab_notebook, browser_context, cjk_font):
    fonts = chinese_glyph_fonts(lab_notebook.page, browser_context)
    assert fonts, f"{lab_notebook.report.name}: no chart text in Chinese"
    bad = tofu(fonts)
    assert not bad, f"{lab_notebook.report.name}: Chinese glyphs without a CJK font ({cjk_font} is installed):\n- " + "\n- ".join(bad)


# ---------------------------------------------------------------- the Chinese static site

ZH_SITE = ["01_restaurant.ipynb", "02_tail_probability.ipynb"]


@pytest.fixture(scope="module")
def zh_site(chromium_path, tmp_path_factory):
    """``straggle-edu site OUT --lang zh`` for two Chinese notebooks, served from 127.0.0.1."""
    from straggle_edu.app.site import build_site

    out = tmp_path_factory.mktemp("zh-site")
    pages = build_site(out, labdriver.NOTEBOOKS / "zh", pattern=ZH_SITE, lang="zh", jobs=2, log=lambda line: None)
    with labdriver.StaticServer(out) as server:
        yield server, {p.name: p for p in pages}


@pytest.fixture(scope="module")
def zh_site_view(zh_site, browser_context, blocked_requests):
    """``view(name)``: what a reader's browser shows of a zh site page (opened once per page)."""
    server, pages = zh_site
    seen = {}

    def view(name):
        if name not in seen:
            blocked_requests.clear()
            errors = []
            page = labdriver.open_site_page(browser_context, f"{server.base_url}/{name.replace('.ipynb', '.html')}", errors)
            try:
                # the charts that answer a guess sit behind a "Reveal" (揭晓): open them, as a reader who guessed would
                page.evaluate("() => document.querySelectorAll('details.se-reveal').forEach((d) => { d.open = true; })")
                charts = page.evaluate(labdriver.JS_SITE_CHARTS)
                lang = page.evaluate("() => document.documentElement.lang")
                if name.startswith("02"):  # the page with math
                    page.wait_for_function(labdriver.JS_MATH_TYPESET, timeout=60_000, polling=250)
                fonts = chinese_glyph_fonts(page, browser_context)
                shot = labdriver.SCREENSHOTS / f"site-zh-{name.replace('.ipynb', '')}.png"
                shot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shot), full_page=True)
                print(f"\nzh site {name}: {len(charts)} charts, {len(fonts)} Chinese chart texts; screenshot {shot}")
            finally:
                page.close()
            seen[name] = {"charts": charts, "lang": lang, "fonts": fonts, "errors": errors,
                          "blocked": list(blocked_requests), "page": pages[name]}
        return seen[name]

    return view


@pytest.mark.parametrize("name", ZH_SITE)
def test_zh_site_page_draws_chinese_charts_and_math_offline(name, zh_site_view):
    v = zh_site_view(name)
    assert v["lang"] == "zh-CN"
    assert v["charts"] and all(c["state"] == "drawn" and c["ok"] for c in v["charts"]), f"{name}: charts not drawn: {v['charts'][:3]}"
    assert not v["page"].errors, f"{name}: cells failed while building the site: {v['page'].errors}"
    assert v["fonts"], f"{name}: no chart text in Chinese on the zh site"
    assert not v["errors"], f"{name}: JavaScript errors: {v['errors'][:3]}"
    assert not v["blocked"], f"{name}: the zh page tried to reach the network: {v['blocked'][:5]}"


@pytest.mark.parametrize("name", ZH_SITE)
def test_zh_site_chinese_glyphs_come_from_a_cjk_font(name, zh_site_view, cjk_font):
    bad = tofu(zh_site_view(name)["fonts"])
    assert not bad, f"{name}: Chinese glyphs without a CJK font ({cjk_font} is installed):\n- " + "\n- ".join(bad)
