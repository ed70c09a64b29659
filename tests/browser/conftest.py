"""Fixtures for the real-browser tests: one Chromium, one JupyterLab, per session.

- Chromium is Debian's package (``/usr/bin/chromium``). When it is missing,
  every browser test is skipped with the install line (``.ci/run`` installs it).
- JupyterLab listens on 127.0.0.1 with a random token and serves a temporary
  copy of ``notebooks/``; it is always stopped, kernels included.
- The page may reach localhost only; anything else is aborted and recorded,
  and a notebook that tried is reported.
- Each notebook is opened and run once (a module-scoped fixture), then every
  test about that notebook uses the same page.

- The static site is built once, two notebooks at a time, when its tests
  start; the notebooks that time real work (``runs_alone`` in their metadata:
  the live barrier lab, real SGD) run after the others, alone.
  ``STRAGGLE_EDU_BROWSER_OVERLAP=1`` builds it in a background thread while
  JupyterLab is tested instead (shorter run, noisier latency figures and timings).

The figures (Run-All times, slider-to-chart latencies, the suite's time) are
printed at the end of the run and written to ``tests/browser/screenshots/figures.json``;
``benchmarks/bench_browser.py`` runs this suite and reports them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import labdriver  # noqa: E402

_FIGURES = {"notebooks": {}, "site": {}}
_DURATIONS = {"seconds": 0.0, "tests": 0}


class SiteBuild:
    """The static site for ``names``, built into a temporary folder, in a thread or now."""

    def __init__(self, names):
        self.names = list(names)
        self.out = Path(tempfile.mkdtemp(prefix="straggle-edu-site-test-"))
        self.lines = []
        self.pages = None
        self.error = None
        self.seconds = None
        self.thread = None

    def run(self, jobs=2):
        from straggle_edu.app.site import build_site

        t0 = time.monotonic()
        try:
            self.pages = build_site(self.out, labdriver.NOTEBOOKS, pattern=self.names, jobs=jobs,
                                    log=self.lines.append)
        except BaseException as exc:  # reported by wait(), in the test that needs the site
            self.error = exc
        finally:
            self.seconds = time.monotonic() - t0

    def start(self):
        self.thread = threading.Thread(target=self.run, name="site-build", daemon=True)
        self.thread.start()
        return self

    def wait(self):
        if self.thread is None and self.pages is None and self.error is None:
            self.run()
        elif self.thread is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error
        return self.pages

    def cleanup(self):
        if self.thread is not None:
            self.thread.join()
        shutil.rmtree(self.out, ignore_errors=True)


_SITE = {}


def pytest_collection_finish(session):
    site_items = [item for item in session.items if "test_static_site.py" in item.nodeid]
    if not site_items or "site" in _SITE:
        return
    # Exactly the notebooks the site tests were collected for (more may appear during the run).
    names = list(getattr(site_items[0].module, "NOTEBOOKS", None) or [p.name for p in labdriver.notebook_paths()])
    if not names:
        return
    _SITE["site"] = SiteBuild(names)


def _start_site_build():
    """With ``STRAGGLE_EDU_BROWSER_OVERLAP=1``, start the site build now, in the background."""
    build = _SITE.get("site")
    overlap = os.environ.get("STRAGGLE_EDU_BROWSER_OVERLAP") == "1"
    if build is not None and build.thread is None and build.pages is None and overlap:
        build.start()


def pytest_sessionfinish(session, exitstatus):
    build = _SITE.pop("site", None)
    if build is not None:
        build.cleanup()


@pytest.fixture(scope="session")
def site_build():
    """The static site (see :class:`SiteBuild`); waits for the background build."""
    build = _SITE.get("site")
    if build is None:
        build = _SITE["site"] = SiteBuild([p.name for p in labdriver.notebook_paths()])
    build.wait()
    return build


def pytest_runtest_logreport(report):
    if "tests/browser/" in report.nodeid.replace(os.sep, "/"):
        _DURATIONS["seconds"] += report.duration
        if report.when == "call":
            _DURATIONS["tests"] += 1


def _figures_lines():
    lines = []
    nbs = _FIGURES["notebooks"]
    if nbs:
        lines.append(f"{'notebook':34} {'open s':>7} {'run s':>7} {'charts':>6} {'median ms':>10}  control moved")
        for name in sorted(nbs):
            f = nbs[name]
            med = f.get("median_ms")
            med_s = f"{med:10.0f}" if med is not None else f"{'-':>10}"
            lines.append(f"{name:34} {f.get('open_s', 0):7.1f} {f.get('run_s', 0):7.1f} {f.get('charts', 0):6d} "
                         f"{med_s}  {f.get('control', '')}")
        for name in sorted(nbs):
            if nbs[name].get("screenshot"):
                lines.append(f"screenshot: {nbs[name]['screenshot']}")
    site = _FIGURES["site"]
    for key in sorted(site):
        lines.append(f"site {key}: {site[key]}")
    if _DURATIONS["tests"]:
        lines.append(f"browser suite: {_DURATIONS['tests']} tests in {_DURATIONS['seconds']:.1f} s "
                     f"(setup, calls and teardown)")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = _figures_lines()
    if not lines:
        return
    terminalreporter.section("browser figures (latency target <= 300 ms; never asserted)")
    for line in lines:
        terminalreporter.write_line(line)
    _FIGURES["suite_seconds"] = round(_DURATIONS["seconds"], 1)
    _FIGURES["suite_tests"] = _DURATIONS["tests"]
    try:
        labdriver.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        labdriver.FIGURES.write_text(json.dumps(_FIGURES, indent=2, sort_keys=True))
        terminalreporter.write_line(f"figures: {labdriver.FIGURES}")
    except OSError:
        pass


@pytest.fixture(scope="session")
def figures():
    """The figures this run records (printed and saved at the end)."""
    return _FIGURES


@pytest.fixture(scope="session")
def chromium_path():
    path, reason = labdriver.find_chromium()
    if path is None:
        pytest.skip(f"browser tests need Debian's chromium: {reason}")
    return path


@pytest.fixture(scope="session")
def playwright_api(chromium_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright (pip install playwright)")
    pw = sync_api.sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="session")
def blocked_requests():
    """URLs the page tried to load beyond localhost (aborted), in order."""
    return []


@pytest.fixture(scope="session")
def browser_context(playwright_api, chromium_path, blocked_requests):
    """One headless Chromium (a fresh profile) whose pages reach localhost only."""
    with tempfile.TemporaryDirectory(prefix="straggle-edu-chromium-") as profile:
        context = labdriver.launch_browser(playwright_api, chromium_path, profile)
        context.set_default_timeout(60_000)
        labdriver.block_external(context, blocked_requests)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="session")
def lab_server(chromium_path):
    """A real JupyterLab on 127.0.0.1 with a token, over a temp copy of notebooks/."""
    _start_site_build()
    server = labdriver.LabServer()
    try:
        server.start()
    except RuntimeError as exc:
        pytest.fail(f"JupyterLab did not start: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def lab_notebook(request, lab_server, browser_context, blocked_requests, figures):
    """The notebook named by the test's parameter, opened and run (Run All) once.

    Yields a :class:`labdriver.LabNotebook` whose ``report`` says what the
    reader sees; its screenshot is saved to ``tests/browser/screenshots/``.
    """
    name = request.param
    blocked_requests.clear()
    nb = labdriver.LabNotebook(browser_context, lab_server, name, blocked_requests)
    try:
        nb.open().run_all()
        nb.settle()
        shot = nb.screenshot(labdriver.SCREENSHOTS / f"lab-{Path(name).with_suffix('').as_posix().replace('/', '-')}.png")
        print(f"\nscreenshot of {name} after Run All: {shot}")
        rec = figures["notebooks"].setdefault(name, {})
        rec.update(open_s=round(nb.report.seconds_open, 1), run_s=round(nb.report.seconds_run, 1),
                   charts=len(nb.report.charts), screenshot=str(shot))
        yield nb
    finally:
        nb.close()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/browser/" in item.nodeid.replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)
