"""The static site (``straggle-edu site``), opened in Chromium with the network blocked.

The site is built once for every notebook that exists, into a temporary
folder, and served from 127.0.0.1 by a local HTTP server (stopped after).
Every page must draw every chart with no CDN, and the bound sliders of the
closed-form charts must move their charts with no kernel: at least three
such charts across the site.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import labdriver

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = [p.name for p in labdriver.notebook_paths()]


@pytest.fixture(scope="session")
def built_site(site_build, figures, chromium_path):
    """The site for every collected notebook (built by conftest's ``site_build``)."""
    pages = site_build.pages
    print("\n".join(site_build.lines))
    figures["site"]["build_s"] = round(site_build.seconds, 1)
    figures["site"]["interactive_charts"] = sum(p.interactive_charts for p in pages)
    figures["site"]["charts"] = sum(p.charts for p in pages)
    return site_build.out, {p.name: p for p in pages}


@pytest.fixture(scope="session")
def site_server(built_site):
    with labdriver.StaticServer(built_site[0]) as server:
        yield server


def test_site_index_links_every_notebook(built_site, site_server, browser_context, blocked_requests):
    out, pages = built_site
    blocked_requests.clear()
    page = labdriver.open_site_page(browser_context, f"{site_server.base_url}/index.html", [])
    try:
        hrefs = page.eval_on_selector_all("ol li > a", "els => els.map((a) => a.getAttribute('href'))")
        shot = labdriver.SCREENSHOTS / "site-index.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        print(f"\nscreenshot of the site's index: {shot}")
    finally:
        page.close()
    assert hrefs == [Path(n).stem + ".html" for n in NOTEBOOKS]
    for href in hrefs:
        assert (out / href).is_file(), f"index links {href}, which was not written"
    assert (out / "static" / "vega-site.js").stat().st_size > 100_000, "the Vega bundle is missing"
    assert not blocked_requests, f"the index tried to reach the network: {blocked_requests}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_site_page_draws_every_chart_offline(name, built_site, site_server, browser_context, blocked_requests):
    out, pages = built_site
    info = pages[name]
    blocked_requests.clear()
    errors = []
    page = labdriver.open_site_page(browser_context, f"{site_server.base_url}/{Path(name).stem}.html", errors)
    try:
        charts = page.evaluate(labdriver.JS_SITE_CHARTS)
        text = page.evaluate("() => document.body.innerText")
        shot = labdriver.SCREENSHOTS / f"site-{Path(name).stem}.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        print(f"\nscreenshot of the site page for {name}: {shot}")
    finally:
        page.close()
    assert len(charts) == info.charts, f"{name}: {info.charts} charts written, {len(charts)} on the page"
    bad = [c for c in charts if c["state"] != "drawn" or not c["ok"]]
    assert not bad, f"{name}: charts not drawn on the static page: {bad[:3]}"
    assert not info.errors, f"{name}: cells failed while building the site: {info.errors}"
    assert "Traceback (most recent call last)" not in text, f"{name}: the page shows a traceback"
    assert "Error displaying widget" not in text and "Loading widget" not in text
    assert not errors, f"{name}: JavaScript errors on the static page: {errors[:3]}"
    assert not blocked_requests, f"{name}: the static page tried to reach the network: {blocked_requests[:5]}"


def test_site_typesets_math_offline(built_site, site_server, browser_context, blocked_requests):
    """The formula of 02 (1 - (1 - p)^n) is typeset by the site's own MathJax, with the network blocked."""
    blocked_requests.clear()
    page = labdriver.open_site_page(browser_context, f"{site_server.base_url}/02_tail_probability.html", [])
    try:
        page.wait_for_function(labdriver.JS_MATH_TYPESET, timeout=60_000, polling=250)
        typeset = page.evaluate("() => document.querySelectorAll('.MathJax, .MathJax_Display').length")
        raw = page.evaluate("() => document.body.innerText.includes('\\\\text{some worker slow}')")
    finally:
        page.close()
    print(f"\n02 on the static site: {typeset} typeset formulas")
    assert typeset > 0 and not raw, "the page shows TeX as written"
    assert not blocked_requests, f"typesetting reached for the network: {blocked_requests[:5]}"


def test_site_sliders_move_charts_without_a_kernel(built_site, site_server, browser_context, blocked_requests, figures):
    out, pages = built_site
    interactive = sum(p.interactive_charts for p in pages.values())
    assert interactive >= 3, f"only {interactive} charts on the site are interactive without a kernel"
    moved = {}
    for name, info in pages.items():
        if not info.interactive_charts:
            continue
        errors = []
        page = labdriver.open_site_page(browser_context, f"{site_server.base_url}/{Path(name).stem}.html", errors)
        try:
            # An explorer that answers a guess sits behind its "Reveal" (a closed <details>): open them all, as a reader
            # who has made the guesses would, so that its inputs can be reached.
            page.evaluate("() => document.querySelectorAll('details.se-reveal').forEach((d) => { d.open = true; })")
            inputs = page.evaluate(labdriver.JS_SITE_INPUTS)
            assert inputs, f"{name}: {info.interactive_charts} interactive charts but no bound input on the page"
            ranges = [i for i in inputs if i["type"] == "range"] or inputs
            control = ranges[0]
            latencies = []
            for step in range(5):
                charts = {"attr": "id", "ids": control["charts"]}
                page.evaluate(labdriver.JS_ARM, charts)
                loc = page.locator(f"#{control['id']}")
                if control["tag"] == "select":
                    loc.select_option(index=(step + 1) % max(control["options"], 1))
                elif control["type"] == "range":
                    loc.focus()
                    at_max = loc.evaluate("e => Number(e.value) >= Number(e.max)")
                    loc.press("ArrowLeft" if at_max or step % 2 else "ArrowRight")
                else:
                    loc.fill(str(float(loc.input_value() or 0) + 1))
                page.wait_for_function(labdriver.JS_CHANGED, arg=charts, timeout=10_000, polling="raf")
                latencies.append(page.evaluate("() => window.__seT1 - window.__seT0"))
            moved[name] = (control["label"], latencies)
        finally:
            page.close()
        assert not errors, f"{name}: JavaScript errors while moving {control['label']}: {errors[:3]}"
    for name, (label, latencies) in moved.items():
        print(f"site {name}: moving '{label}' redrew the chart with no kernel; latencies (ms) "
              f"{[round(v, 1) for v in latencies]}")
        figures["site"][f"{name} median ms"] = round(labdriver.median(latencies), 1)
    assert moved, "no page of the site has a bound input"
