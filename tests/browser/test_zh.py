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

pytestmark = pytest.mark.browser

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


@pytest.mark.parametrize("lab_notebook", ZH_NOTEBOOKS, indirect=True)
def test_zh_notebook_draws_chinese_charts_with_real_glyphs(lab_notebook, browser_context):
    report = lab_notebook.report
    problems = report.problems()
    assert not problems, f"{report.name} after Run All in JupyterLab:\n- " + "\n- ".join(problems)
    assert report.charts, f"{report.name}: no chart drawn"
    fonts = chinese_glyph_fonts(lab_notebook.page, browser_context)
    print(f"{report.name}: {len(fonts)} chart texts in Chinese; first: {fonts[:3]}; screenshot {report.screenshot}")
    assert fonts, f"{report.name}: no chart text in Chinese (is the language line there, are the charts translated?)"
    assert not tofu(fonts), f"{report.name}: Chinese glyphs without a CJK font:\n- " + "\n- ".join(tofu(fonts))
    prose = lab_notebook.page.evaluate("() => document.querySelector('.jp-Notebook').innerText")
    assert len(_CJK.findall(prose)) > 200, f"{report.name}: the page shows little Chinese"


# ---------------------------------------------------------------- the Chinese static site

ZH_SITE = ["01_restaurant.ipynb", "02_tail_probability.ipynb"]


@pytest.fixture(scope="module")
def zh_site(chromium_path, tmp_path_factory):
    """``straggle-edu site OUT --lang zh`` for two Chinese notebooks, served from 127.0.0.1."""
    from straggle_edu.app.site import build_site

    out = tmp_path_factory.mktemp("zh-site")
    pages = build_site(out, labdriver.NOTEBOOKS / "zh", pattern=ZH_SITE, lang="zh", log=lambda line: None)
    with labdriver.StaticServer(out) as server:
        yield server, {p.name: p for p in pages}


@pytest.mark.parametrize("name", ZH_SITE)
def test_zh_site_page_draws_chinese_charts_and_math_offline(name, zh_site, browser_context, blocked_requests):
    server, pages = zh_site
    blocked_requests.clear()
    errors = []
    page = labdriver.open_site_page(browser_context, f"{server.base_url}/{name.replace('.ipynb', '.html')}", errors)
    try:
        charts = page.evaluate(labdriver.JS_SITE_CHARTS)
        lang = page.evaluate("() => document.documentElement.lang")
        has_math = name.startswith("02")
        if has_math:
            page.wait_for_function(labdriver.JS_MATH_TYPESET, timeout=60_000, polling=250)
        fonts = chinese_glyph_fonts(page, browser_context)
        shot = labdriver.SCREENSHOTS / f"site-zh-{name.replace('.ipynb', '')}.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        print(f"\nzh site {name}: {len(charts)} charts, {len(fonts)} Chinese chart texts; screenshot {shot}")
    finally:
        page.close()
    assert lang == "zh-CN"
    assert charts and all(c["state"] == "drawn" and c["ok"] for c in charts), f"{name}: charts not drawn: {charts[:3]}"
    assert not pages[name].errors, f"{name}: cells failed while building the site: {pages[name].errors}"
    assert fonts, f"{name}: no chart text in Chinese on the zh site"
    assert not tofu(fonts), f"{name}: Chinese glyphs without a CJK font:\n- " + "\n- ".join(tofu(fonts))
    assert not errors, f"{name}: JavaScript errors: {errors[:3]}"
    assert not blocked_requests, f"{name}: the zh page tried to reach the network: {blocked_requests[:5]}"
