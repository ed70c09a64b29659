"""One way to put a chart on the screen, online or off.

Every chart a notebook or explorer shows goes through :func:`chart_widget`
(for a chart that widgets update) or :func:`show` (to display it).

- In a live kernel, a chart becomes an ``altair.JupyterChart`` widget whose
  JavaScript comes from the installed packages, not from a CDN, so it
  renders in a classroom with no internet. Sliders drive it through named
  params, so updates happen in place, with no re-render.
- When the static site is built (``straggle-edu site``, which runs every
  notebook with ``STRAGGLE_EDU_SITE=1``), the same calls make the same
  widgets, but skip the JavaScript bundle: no browser will load it. The site
  builder reads each chart's Vega-Lite spec and current params from the
  saved widget state and draws it with Vega in the page, and an
  :class:`~straggle_edu.explorers._base.Explorer` records which of its
  controls drive which chart params, so those controls become HTML inputs
  bound to the params (see :mod:`straggle_edu.app.site`).
"""

from __future__ import annotations

import os

from ..charts import skip_slow_optional_imports

skip_slow_optional_imports()

__all__ = ["chart_widget", "show", "enable_offline", "site_mode"]

_offline_enabled = False


def site_mode():
    """True while the static site is being built (``STRAGGLE_EDU_SITE=1``).

    Examples
    --------
    >>> import os
    >>> site_mode() == (os.environ.get("STRAGGLE_EDU_SITE") == "1")
    True
    """
    return os.environ.get("STRAGGLE_EDU_SITE", "") == "1"


def enable_offline():
    """Serve Altair's JupyterChart JavaScript from the installed packages.

    Idempotent; called for you by :func:`chart_widget`. While the static site
    is built (:func:`site_mode`) it does nothing: no browser runs the widget
    then, and leaving the 1 MB bundle out keeps the saved widget state small.
    """
    global _offline_enabled
    if not _offline_enabled and not site_mode():
        import altair as alt

        if not _load_cached_bundle(alt):
            alt.JupyterChart.enable_offline()
            _save_cached_bundle(alt)
        _offline_enabled = True


def _bundle_path(alt):
    """Where the offline bundle for these versions of Altair and vl-convert is cached.

    Building it (``JupyterChart.enable_offline``) costs about 2 s of CPU in
    every kernel; the result depends only on the two versions.
    """
    import hashlib

    import vl_convert

    from altair.jupyter import jupyter_chart

    key = f"{alt.__version__}|{vl_convert.__version__}|{jupyter_chart.load_js_src()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "straggle-edu", f"jupyterchart-offline-{digest}.js")


def _load_cached_bundle(alt):
    cls = alt.JupyterChart
    try:
        with open(_bundle_path(alt), encoding="utf-8") as f:
            src = f.read()
    except (OSError, ImportError, AttributeError):
        return False
    if len(src) < 100_000 or not hasattr(cls, "_is_offline"):  # not a whole bundle
        return False
    cls._esm = src
    cls._is_offline = True
    return True


def _save_cached_bundle(alt):
    """Keep the bundle for the next kernel; a failure only costs time later."""
    try:
        path = _bundle_path(alt)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(alt.JupyterChart._esm)
        os.replace(tmp, path)
    except (OSError, ImportError, AttributeError):
        pass


def chart_widget(chart, **kwargs):
    """An ``altair.JupyterChart`` for ``chart``, rendered offline, with the SVG renderer.

    Link a control to a named param with
    ``ipywidgets.dlink((slider, "value"), (widget.params, "name"))``
    (an :class:`~straggle_edu.explorers._base.Explorer` does this for you
    with :meth:`~straggle_edu.explorers._base.Explorer.link`).

    Examples
    --------
    >>> import altair as alt
    >>> p = alt.param(name="p", value=0.01)
    >>> c = alt.Chart(alt.Data(values=[{"n": 1}])).mark_point().encode(x="n:Q").add_params(p)
    >>> w = chart_widget(c)
    >>> w.params.p
    0.01
    """
    import altair as alt

    enable_offline()
    # SVG, not canvas: chart text stays text in the page, so it can be
    # selected, read by a screen reader, and checked for the font that drew
    # it (the Chinese edition's glyphs).
    kwargs.setdefault("embed_options", {"renderer": "svg"})
    return alt.JupyterChart(chart, **kwargs)


def show(obj):
    """Display a chart, a widget or an explorer in the notebook.

    A plain Altair chart becomes an offline :func:`chart_widget`. Anything
    else is passed to IPython's ``display``. Returns None, like ``display``,
    so ``show(x)`` as a cell's last line shows ``x`` once; keep your own
    reference to ``x`` to change it later.
    """
    import altair as alt
    from IPython.display import display

    if isinstance(obj, alt.TopLevelMixin):
        obj = chart_widget(obj)
    display(obj)
