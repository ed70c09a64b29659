"""Drive a real JupyterLab in a real Chromium, the way a reader would.

The browser tests use this module through the fixtures in ``conftest.py``;
``benchmarks/bench_browser.py`` reports the figures the tests record. It
holds no tests itself.

- :func:`find_chromium` finds Debian's chromium, or says how to install it;
  :func:`cjk_font` names an installed font with Chinese glyphs, if any.
- :class:`LabServer` runs ``python -m jupyterlab`` on 127.0.0.1, on a free
  port, with a random token, serving a temporary copy of the notebooks (the
  browser never saves into the repository), and always stops it.
- :func:`block_external` lets the page reach only localhost and records
  everything else it tried to load.
- :class:`LabNotebook` opens one notebook, runs all cells, checks what the
  reader sees, takes a screenshot and moves a control.

Playwright is imported lazily, so collecting this file needs nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
FIGURES = SCREENSHOTS / "figures.json"

# The notebooks whose controls must move a chart (issue 3's five core notebooks).
CORE_PREFIXES = ("00", "01", "02", "03", "04")

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def notebook_paths():
    """Every notebook in ``notebooks/``, sorted (the suite grows with it)."""
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def is_core(name):
    """True for the core notebooks 00..04."""
    return Path(name).name[:2] in CORE_PREFIXES


# ---------------------------------------------------------------- chromium


def find_chromium():
    """Return ``(path, None)`` for a usable chromium, or ``(None, reason)`` saying how to install it.

    Looks for ``chromium`` (Debian's package) on PATH and in /usr/bin.
    Playwright's own browser download cannot work offline, and a test run
    installs nothing: ``.ci/run`` installs Debian's package.
    """
    for candidate in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate, None
    return None, "chromium is not installed (Debian and Ubuntu: sudo apt install chromium)"


def cjk_font():
    """The family of a font with Chinese glyphs that fontconfig knows (``fc-list :lang=zh``), or None."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        out = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True, timeout=60).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    families = sorted({line.split(",")[0].strip() for line in out.splitlines() if line.strip()})
    return families[0] if families else None


def launch_browser(playwright, executable, user_data_dir, viewport=(1280, 900)):
    """A headless persistent Chromium context with a fresh profile in ``user_data_dir``."""
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=executable,
        headless=True,
        args=CHROMIUM_FLAGS,
        viewport={"width": viewport[0], "height": viewport[1]},
        device_scale_factor=1,
        service_workers="block",
    )


def block_external(context, blocked):
    """Abort every request that leaves localhost; append its URL to ``blocked``."""

    def handle(route):
        url = route.request.url
        if url.startswith(("data:", "blob:", "about:")):
            return route.continue_()
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme == "file" or parsed.hostname in LOCAL_HOSTS:
            return route.continue_()
        blocked.append(url)
        return route.abort("blockedbyclient")

    context.route("**/*", handle)


def _die_with_parent():
    """In the child: get SIGTERM when the test process dies (Linux), so no server outlives it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- the server


class LabServer:
    """A JupyterLab server on 127.0.0.1 with a token, serving a copy of ``notebooks``.

    Use as a context manager, or call :meth:`start` and :meth:`stop`
    (``stop`` is safe to call twice and always reaps the process group).
    """

    def __init__(self, notebooks=NOTEBOOKS, startup_timeout=120):
        self.source = Path(notebooks)
        self.startup_timeout = startup_timeout
        self.tmp = None
        self.proc = None
        self.port = None
        self.token = secrets.token_hex(24)
        self.log_path = None

    @property
    def root(self):
        return Path(self.tmp) / "notebooks"

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def url(self, path, workspace):
        """The URL that opens ``path`` in a fresh workspace (no tabs restored)."""
        quoted = urllib.parse.quote(path)
        return f"{self.base_url}/lab/workspaces/{workspace}/tree/{quoted}?token={self.token}"

    def _write_settings(self, settings):
        def put(plugin, values):
            target = settings / plugin
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values))

        # Render every cell (no virtual scrolling), so a screenshot and the
        # checks see the whole notebook; no news or update checks (no network).
        put("@jupyterlab/notebook-extension/tracker.jupyterlab-settings",
            {"windowingMode": "none", "scrollPastEnd": False})
        put("@jupyterlab/apputils-extension/notification.jupyterlab-settings",
            {"fetchNews": "false", "checkForUpdates": False})

    def start(self):
        self.tmp = tempfile.mkdtemp(prefix="straggle-edu-lab-")
        tmp = Path(self.tmp)
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(self.source, self.root, ignore=ignore)
        settings = tmp / "settings"
        self._write_settings(settings)
        self.port = free_port()
        env = dict(os.environ)
        for key in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR"):
            env[key] = str(tmp / key.lower())
        env.pop("STRAGGLE_EDU_SITE", None)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        cmd = [
            sys.executable, "-m", "jupyterlab", "--no-browser",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.expose_app_in_browser=True",
            f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
            "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log_path = tmp / "server.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, env=env, cwd=self.root, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not answer within {self.startup_timeout} s")
                time.sleep(0.25)
        return self

    def log_tail(self, chars=4000):
        try:
            return Path(self.log_path).read_text(errors="replace")[-chars:]
        except (OSError, TypeError):
            return ""

    def api(self, path, method="GET"):
        req = urllib.request.Request(f"{self.base_url}{path}?token={self.token}", method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self):
        """Shut every kernel down through the REST API (kernels run in their own sessions)."""
        try:
            for kernel in self.api("/api/kernels"):
                try:
                    self.api(f"/api/kernels/{kernel['id']}", method="DELETE")
                except (urllib.error.URLError, OSError):
                    pass
        except (urllib.error.URLError, OSError, ValueError):
            pass

    def stop(self):
        """Stop kernels, then the server (SIGTERM, then SIGKILL to its process group)."""
        if self.proc is not None and self.proc.poll() is None:
            self.shutdown_kernels()
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------- page-side JavaScript

# Shared helpers, installed once per page: a cheap string hash, what a chart
# shows (its svg or canvas content), and whether it shows anything at all.
JS_HELPERS = r"""
() => {
  if (window.__se) return true;
  const hash = (s) => {
    let h = 2166136261 >>> 0;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    return s.length + ':' + h.toString(16);
  };
  const canvasInk = (c) => {
    if (!c.width || !c.height) return 0;
    try {
      const ctx = c.getContext('2d'); const d = ctx.getImageData(0, 0, c.width, c.height).data; let ink = 0;
      for (let i = 0; i < d.length; i += 4 * 7) { if (d[i + 3] > 0 && (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245)) ink++; }
      return ink;
    } catch (e) { return 1; }
  };
  const chartInfo = (embed) => {
    const svg = embed.querySelector('svg.marks');
    if (svg) {
      const r = svg.getBoundingClientRect();
      const marks = svg.querySelectorAll('.role-mark > *').length;
      return {kind: 'svg', width: r.width, height: r.height, marks, ok: r.width > 0 && r.height > 0 && marks > 0,
              signature: hash(svg.innerHTML)};
    }
    const canvas = embed.querySelector('canvas');
    if (canvas) {
      const ink = canvasInk(canvas);
      return {kind: 'canvas', width: canvas.width, height: canvas.height, marks: ink, ok: canvas.width > 0 && ink > 0,
              signature: canvas.width + 'x' + canvas.height + ':' + hash(canvas.toDataURL())};
    }
    return {kind: 'none', width: 0, height: 0, marks: 0, ok: false, signature: '', text: embed.textContent.slice(0, 200)};
  };
  window.__se = {hash, chartInfo};
  return true;
}
"""

JS_KERNEL_IDLE = r"""
() => {
  const app = window.jupyterapp; if (!app) return false;
  const panel = app.shell.currentWidget; if (!panel || !panel.sessionContext) return false;
  const ctx = panel.sessionContext;
  return !!(ctx.isReady && ctx.session && ctx.session.kernel && ctx.session.kernel.status === 'idle'
            && panel.context && panel.context.isReady);
}
"""

JS_RUN_ALL = r"""
() => {
  window.__seRunAll = undefined;
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    (r) => { window.__seRunAll = {done: true, ok: r !== false}; },
    (e) => { window.__seRunAll = {done: true, ok: false, error: String(e)}; });
  return true;
}
"""

# What the notebook model holds after Run All: errors, stderr, cells left unrun
# and the widget outputs, with what the DOM shows for each widget output.
JS_INSPECT = r"""
() => {
  const WIDGET = 'application/vnd.jupyter.widget-view+json';
  const panel = window.jupyterapp.shell.currentWidget;
  const res = {errors: [], stderr: [], unexecuted: [], widgetOutputs: 0, widgetIds: [], badWidgets: [],
               plainVega: 0, cells: 0};
  panel.content.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code') return;
    res.cells++;
    const tags = cell.model.getMetadata('tags') || [];
    const source = cell.model.sharedModel.getSource().trim();
    if (source && cell.model.executionCount == null) res.unexecuted.push(index);
    const outputs = cell.model.outputs;
    const views = cell.outputArea ? cell.outputArea.widgets : [];
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs.get(i).toJSON();
      if (o.output_type === 'error' && !tags.includes('raises-exception')) {
        res.errors.push(`cell ${index}: ${o.ename}: ${o.evalue}`);
      }
      if (o.output_type === 'stream' && o.name === 'stderr') res.stderr.push(`cell ${index}: ${o.text}`);
      const data = o.data || {};
      if (Object.keys(data).some((k) => k.startsWith('application/vnd.vegalite') || k.startsWith('application/vnd.vega.'))) res.plainVega++;
      if (data[WIDGET]) {
        res.widgetOutputs++;
        res.widgetIds.push(data[WIDGET].model_id);
        const child = views[i];
        const node = child ? child.node.querySelector('.jp-OutputArea-output') : null;
        const text = node ? node.textContent : '';
        let problem = null;
        if (!node) problem = 'no output node';
        else if (node.classList.contains('jp-RenderedText') || node.querySelector(':scope > .jp-RenderedText'))
          problem = 'shown as plain text: ' + text.slice(0, 120);
        else if (!node.firstElementChild) problem = 'empty';
        else if (text.includes('Loading widget')) problem = 'still "Loading widget..."';
        else if (text.includes('Error displaying widget')) problem = text.slice(0, 200);
        else if (text.includes('JavaScript Error')) problem = text.slice(0, 200);
        if (problem) res.badWidgets.push(`cell ${index}: ${problem}`);
      }
    }
  });
  const nodeText = panel.content.node.textContent;
  res.errorDisplaying = (nodeText.match(/Error displaying widget/g) || []).length;
  res.loading = (nodeText.match(/Loading widget\.\.\./g) || []).length;
  res.tracebackNodes = Array.from(panel.content.node.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], .jp-RenderedText'))
    .filter((n) => /Traceback \(most recent call last\)/.test(n.textContent)).length;
  return res;
}
"""

# The window height that shows the whole notebook (cells, not the blank
# "scroll past end" space), and a scroll back to its top with no cell selected.
JS_PAGE_HEIGHT = r"""
() => {
  const nb = window.jupyterapp.shell.currentWidget.content.node;
  const outer = nb.querySelector('.jp-WindowedPanel-outer') || nb;
  const inner = nb.querySelector('.jp-WindowedPanel-inner') || nb;
  return Math.ceil(inner.scrollHeight + (window.innerHeight - outer.clientHeight) + 40);
}
"""

JS_TO_TOP = r"""
() => {
  const content = window.jupyterapp.shell.currentWidget.content;
  content.activeCellIndex = 0;
  content.deselectAll();
  content.mode = 'command';
  const outer = content.node.querySelector('.jp-WindowedPanel-outer');
  if (outer) outer.scrollTop = 0;
  return true;
}
"""

JS_CHARTS = r"""
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const embeds = Array.from(panel.content.node.querySelectorAll('.vega-embed'));
  const altairDivs = Array.from(panel.content.node.querySelectorAll('div[id^="altair-viz"]'))
    .filter((d) => !d.querySelector('.vega-embed, svg, canvas'));
  return {charts: embeds.map((e) => window.__se.chartInfo(e)), emptyAltairDivs: altairDivs.length};
}
"""

# Counts, in the kernel, the JupyterChart views reachable from the notebook's
# widget outputs (through boxes and Output widgets): the charts that must show.
KERNEL_COUNT = r"""
def __se_count(ids):
    import json
    import ipywidgets as W
    try:
        from ipywidgets.widgets.widget import _instances as registry
    except ImportError:
        registry = W.Widget.widgets
    try:
        from altair import JupyterChart
    except Exception:
        JupyterChart = ()
    found = {"charts": 0, "views": 0, "missing": 0}
    def walk(w, depth):
        if depth > 40:
            return
        found["views"] += 1
        if JupyterChart and isinstance(w, JupyterChart):
            found["charts"] += 1
        for child in getattr(w, "children", None) or ():
            if isinstance(child, W.Widget):
                walk(child, depth + 1)
        if isinstance(w, W.Output):
            for out in w.outputs:
                mid = out.get("data", {}).get("application/vnd.jupyter.widget-view+json", {}).get("model_id")
                if mid in registry:
                    walk(registry[mid], depth + 1)
    for mid in ids:
        if mid in registry:
            walk(registry[mid], 0)
        else:
            found["missing"] += 1
    print(json.dumps(found))
__se_count(%s)
del __se_count
"""

JS_KERNEL_EXEC = r"""
async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const future = kernel.requestExecute({code, silent: false, store_history: false, allow_stdin: false});
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === 'stream') out += msg.content.text;
    if (t === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
  };
  // A reply that never comes fails the call (the caller retries once), instead of
  // waiting forever: page.evaluate itself has no timeout.
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('the kernel did not answer within 90 s')), 90000);
  });
  try { await Promise.race([future.done, late]); } finally { clearTimeout(timer); }
  return out;
}
"""

# The controls a reader can move (sliders first, then each other kind, in
# document order), each with the charts of
# the closest widget box that holds both it and a chart. Marks each control
# with a data attribute so Playwright can find it again.
JS_CONTROLS = r"""
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const root = panel.content.node;
  const embeds = Array.from(root.querySelectorAll('.vega-embed'));
  embeds.forEach((e, i) => e.setAttribute('data-se-chart', String(i)));
  const found = [];
  const selectors = [
    ['slider', '.widget-slider .noUi-handle, .widget-hslider .noUi-handle'],
    ['toggle', '.widget-toggle-buttons'],
    ['dropdown', '.widget-dropdown select'],
    ['checkbox', '.widget-checkbox input[type=checkbox]'],
    ['number', '.widget-inline-hbox.widget-text input[type=number]'],
  ];
  let k = 0;
  for (const [kind, sel] of selectors) {
    for (const el of root.querySelectorAll(sel)) {
      let box = el.parentElement; let charts = [];
      while (box && box !== root) {
        if (box.classList && box.classList.contains('widget-box')) {
          const inside = Array.from(box.querySelectorAll('.vega-embed'));
          if (inside.length) { charts = inside.map((e) => Number(e.getAttribute('data-se-chart'))); break; }
        }
        box = box.parentElement;
      }
      if (!charts.length) continue;
      el.setAttribute('data-se-control', String(k));
      const widget = el.closest('.widget-slider, .widget-toggle-buttons, .widget-dropdown, .widget-checkbox, .widget-text') || el;
      const label = widget.querySelector('.widget-label');
      const info = {id: k, kind, charts, label: label ? label.textContent.trim() : '',
                    top: el.getBoundingClientRect().top};
      if (kind === 'slider') {
        info.now = Number(el.getAttribute('aria-valuenow'));
        info.min = Number(el.getAttribute('aria-valuemin'));
        info.max = Number(el.getAttribute('aria-valuemax'));
      }
      found.push(info);
      k++;
    }
  }
  return found;
}
"""

# Arm a one-shot listener that timestamps the reader's input (keydown, click
# or change), and remember the charts' signatures before it. The charts are
# named by ``arg.ids``, values of attribute ``arg.attr``.
JS_ARM = r"""
(arg) => {
  window.__seT0 = undefined; window.__seT1 = undefined;
  const stamp = () => { if (window.__seT0 === undefined) window.__seT0 = performance.now(); };
  for (const type of ['keydown', 'pointerdown', 'change', 'input']) document.addEventListener(type, stamp, {capture: true, once: true});
  window.__seBefore = arg.ids.map((i) => {
    const e = document.querySelector(`[${arg.attr}="${i}"]`);
    return e ? window.__se.chartInfo(e).signature : '';
  });
  return window.__seBefore;
}
"""

JS_CHANGED = r"""
(arg) => {
  if (window.__seT0 === undefined) return false;
  const now = arg.ids.map((i) => {
    const e = document.querySelector(`[${arg.attr}="${i}"]`);
    return e ? window.__se.chartInfo(e).signature : '';
  });
  if (now.some((s, j) => s && s !== window.__seBefore[j])) { window.__seT1 = performance.now(); return true; }
  return false;
}
"""


# ---------------------------------------------------------------- one notebook


@dataclass
class RunReport:
    """What a reader would see after Run All in one notebook."""

    name: str
    seconds_open: float = 0.0
    seconds_run: float = 0.0
    inspect: dict = field(default_factory=dict)
    charts: list = field(default_factory=list)
    expected_charts: int = 0
    empty_altair_divs: int = 0
    blocked: list = field(default_factory=list)
    screenshot: str = ""
    console_errors: list = field(default_factory=list)

    def problems(self):
        """Every reason a reader would see something wrong (empty when all is well)."""
        out = []
        i = self.inspect
        out += [f"error output: {e}" for e in i.get("errors", [])]
        out += [f"stderr traceback: {s[:300]}" for s in i.get("stderr", []) if "Traceback" in s]
        if i.get("tracebackNodes"):
            out.append(f"{i['tracebackNodes']} output(s) show a Traceback")
        if i.get("unexecuted"):
            out.append(f"code cells not executed by Run All: {i['unexecuted']}")
        out += [f"widget not rendered: {w}" for w in i.get("badWidgets", [])]
        if i.get("errorDisplaying"):
            out.append(f"'Error displaying widget' shown {i['errorDisplaying']} time(s)")
        if i.get("loading"):
            out.append(f"'Loading widget...' still shown {i['loading']} time(s)")
        bad = [c for c in self.charts if not c["ok"]]
        if bad:
            out.append(f"{len(bad)} of {len(self.charts)} charts blank: {bad[:3]}")
        if len(self.charts) < self.expected_charts + i.get("plainVega", 0):
            out.append(f"{len(self.charts)} charts drawn, expected at least "
                       f"{self.expected_charts + i.get('plainVega', 0)} (JupyterChart views + plain Vega outputs)")
        if self.empty_altair_divs:
            out.append(f"{self.empty_altair_divs} Altair HTML output(s) never drew (a CDN renderer?)")
        if self.blocked:
            out.append(f"the page tried to reach the network: {self.blocked[:5]}")
        return out


class LabNotebook:
    """One notebook open in JupyterLab, in its own page and workspace."""

    def __init__(self, context, server, name, blocked, timeout_s=240):
        self.context = context
        self.server = server
        self.name = name
        self.blocked = blocked
        self.timeout_ms = timeout_s * 1000
        self.page = None
        self.report = RunReport(name=name)
        self.console_errors = []

    # -- opening and running

    def open(self):
        t0 = time.monotonic()
        self.page = self.context.new_page()
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"))
        workspace = "se-" + secrets.token_hex(4)
        self.page.goto(self.server.url(self.name, workspace), wait_until="domcontentloaded", timeout=self.timeout_ms)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=self.timeout_ms)
        self.page.wait_for_function(JS_KERNEL_IDLE, timeout=self.timeout_ms, polling=200)
        self.page.evaluate(JS_HELPERS)
        # The file browser is not what a reader looks at: give the notebook the width.
        self.page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); "
                           "if (!s.rightCollapsed) s.collapseRight(); }")
        self.report.seconds_open = time.monotonic() - t0
        return self

    def _on_console(self, msg):
        if msg.type == "error":
            self.console_errors.append(msg.text[:300])

    def run_all(self):
        t0 = time.monotonic()
        self.page.evaluate(JS_RUN_ALL)
        self.page.wait_for_function("() => window.__seRunAll && window.__seRunAll.done",
                                    timeout=self.timeout_ms, polling=250)
        self.page.wait_for_function(JS_KERNEL_IDLE, timeout=self.timeout_ms, polling=200)
        self.report.seconds_run = time.monotonic() - t0
        return self

    def expected_chart_count(self, widget_ids):
        if not widget_ids:
            return 0
        try:
            out = self.page.evaluate(JS_KERNEL_EXEC, KERNEL_COUNT % json.dumps(widget_ids))
        except Exception:  # playwright's Error: the reply was lost once; ask again
            out = self.page.evaluate(JS_KERNEL_EXEC, KERNEL_COUNT % json.dumps(widget_ids))
        try:
            return int(json.loads(out.strip().splitlines()[-1])["charts"])
        except (ValueError, IndexError, KeyError) as exc:
            raise AssertionError(f"could not count the notebook's charts in its kernel: {out!r}") from exc

    def settle(self, timeout_s=60):
        """Wait until every chart the kernel made is drawn (or the timeout), then inspect."""
        inspect = self.page.evaluate(JS_INSPECT)
        expected = self.expected_chart_count(inspect["widgetIds"])
        want = expected + inspect["plainVega"]
        deadline = time.monotonic() + timeout_s
        while True:
            charts = self.page.evaluate(JS_CHARTS)
            drawn = sum(c["ok"] for c in charts["charts"])
            inspect = self.page.evaluate(JS_INSPECT)
            ready = drawn >= want and not inspect["loading"] and len(charts["charts"]) == drawn
            if ready or time.monotonic() > deadline:
                break
            self.page.wait_for_timeout(250)
        # One more frame for late layout (widths that depend on the container).
        self.page.wait_for_timeout(300)
        charts = self.page.evaluate(JS_CHARTS)
        self.report.inspect = self.page.evaluate(JS_INSPECT)
        self.report.charts = charts["charts"]
        self.report.empty_altair_divs = charts["emptyAltairDivs"]
        self.report.expected_charts = expected
        self.report.blocked = list(self.blocked)
        self.report.console_errors = list(self.console_errors)
        return self.report

    # -- the screenshot

    def screenshot(self, path, max_height=16000):
        """A PNG of the whole notebook: the window grows to the notebook's height.

        A notebook taller than ``max_height`` pixels is saved in parts
        (``name.png``, ``name-2.png``, ...). Returns the first path.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"{path.stem}-[0-9]*.png"):
            old.unlink()
        height = self.page.evaluate(JS_PAGE_HEIGHT)
        viewport = self.page.viewport_size
        self.page.set_viewport_size({"width": viewport["width"], "height": int(min(max(height, 600), max_height))})
        self.page.evaluate(JS_TO_TOP)
        self.page.wait_for_timeout(600)
        self.page.screenshot(path=str(path), full_page=False)
        parts = [str(path)]
        if height > max_height:
            for k in range(2, 50):
                moved = self.page.evaluate(
                    "() => { const o = window.jupyterapp.shell.currentWidget.content.node"
                    ".querySelector('.jp-WindowedPanel-outer'); const before = o.scrollTop; "
                    "if (before + o.clientHeight >= o.scrollHeight - 5) return false; "
                    "o.scrollTop = before + o.clientHeight - 60; return o.scrollTop > before; }")
                if not moved:
                    break
                self.page.wait_for_timeout(400)
                part = path.with_name(f"{path.stem}-{k}.png")
                self.page.screenshot(path=str(part), full_page=False)
                parts.append(str(part))
        self.page.set_viewport_size(viewport)
        self.page.wait_for_timeout(300)
        self.report.screenshot = ", ".join(parts)
        return path

    # -- moving a control

    def controls(self):
        return self.page.evaluate(JS_CONTROLS)

    def _act(self, control, step):
        loc = self.page.locator(f'[data-se-control="{control["id"]}"]')
        loc.scroll_into_view_if_needed()
        kind = control["kind"]
        if kind == "slider":
            now = float(loc.get_attribute("aria-valuenow"))
            hi = float(loc.get_attribute("aria-valuemax"))
            lo = float(loc.get_attribute("aria-valuemin"))
            key = "ArrowRight" if (step % 2 == 0 and now < hi) or now <= lo else "ArrowLeft"
            loc.focus()
            loc.press(key)
        elif kind == "toggle":
            buttons = loc.locator("button")
            count = buttons.count()
            current = next((i for i in range(count) if "mod-active" in (buttons.nth(i).get_attribute("class") or "")), 0)
            buttons.nth((current + 1) % count).click()
        elif kind == "dropdown":
            options = loc.locator("option")
            count = options.count()
            index = loc.evaluate("e => e.selectedIndex")
            loc.select_option(index=(index + 1) % count)
        elif kind == "checkbox":
            loc.click()
        elif kind == "number":
            value = float(loc.input_value() or 0)
            loc.fill(str(int(value + 1) if value.is_integer() else value * 1.1))
            loc.press("Enter")

    def move_control(self, control, moves=5, timeout_ms=10_000):
        """Move ``control`` ``moves`` times; return the latencies (ms) until a chart changed.

        A move whose chart does not change within ``timeout_ms`` gives None.
        """
        latencies = []
        for step in range(moves):
            charts = {"attr": "data-se-chart", "ids": control["charts"]}
            self.page.evaluate(JS_ARM, charts)
            self._act(control, step)
            try:
                self.page.wait_for_function(JS_CHANGED, arg=charts, timeout=timeout_ms, polling="raf")
            except Exception:  # playwright's TimeoutError
                latencies.append(None)
                break
            latencies.append(self.page.evaluate("() => window.__seT1 - window.__seT0"))
            self.page.wait_for_timeout(150)  # let the kernel's echo settle before the next move
        return latencies

    def close(self):
        if self.page is None:
            return
        try:
            self.page.evaluate("() => { const p = window.jupyterapp && window.jupyterapp.shell.currentWidget; "
                               "return p && p.sessionContext ? p.sessionContext.shutdown() : null; }")
        except Exception:
            pass
        try:
            self.page.close(run_before_unload=False)
        except Exception:
            pass
        self.page = None


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


# ---------------------------------------------------------------- the static site


class StaticServer:
    """Serve a folder over HTTP on 127.0.0.1 (a free port) from a thread; always stopped."""

    def __init__(self, root):
        self.root = Path(root)
        self.httpd = None
        self.thread = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self):
        import functools
        import http.server
        import threading

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        handler = functools.partial(Quiet, directory=str(self.root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="static-site", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join(timeout=10)
            self.httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# What a site page shows: its charts (drawn or not), and which are interactive.
JS_SITE_CHARTS = r"""
() => Array.from(document.querySelectorAll('.se-chart')).map((div) => {
  const info = window.__se.chartInfo(div);
  return {id: div.id, state: div.dataset.state || '', interactive: div.dataset.interactive === '1',
          params: div.dataset.params || '', ok: info.ok, marks: info.marks, kind: info.kind,
          text: div.dataset.state === 'error' ? div.textContent.slice(0, 200) : ''};
})
"""

# Bound inputs of a site page, each with the live charts of its explorer.
JS_SITE_INPUTS = r"""
() => Array.from(document.querySelectorAll('.se-explorer .se-input')).map((el) => {
  const box = el.closest('.se-explorer');
  const charts = Array.from(box.querySelectorAll('.se-chart[data-interactive="1"]')).map((c) => c.id);
  const label = document.querySelector(`label[for="${el.id}"]`);
  return {id: el.id, tag: el.tagName.toLowerCase(), type: el.type || '', charts, label: label ? label.textContent : '',
          value: el.value, min: el.min, max: el.max, step: el.step, options: el.tagName === 'SELECT' ? el.options.length : 0};
}).filter((x) => x.charts.length)
"""


# Typeset math on a static page: MathJax (the site's own copy) has finished and drew something.
JS_MATH_TYPESET = """
() => window.MathJax && window.MathJax.Hub && window.MathJax.Hub.queue.pending === 0
      && document.querySelectorAll('.MathJax, .MathJax_Display').length > 0
"""


def open_site_page(context, url, errors):
    """Open a static-site page and wait until its charts are drawn; JavaScript errors go to ``errors``."""
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url, wait_until="load")
    page.evaluate(JS_HELPERS)
    page.wait_for_function("() => !document.querySelector('.se-chart') || document.documentElement.dataset.seCharts === 'done'",
                           timeout=60_000)
    return page
