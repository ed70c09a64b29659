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

        from altair.jupyter import jupyter_chart
        import vl_convert

        from .._cache import cached_text

        def build():
            alt.JupyterChart.enable_offline()
            return alt.JupyterChart._esm

        # About 2 s of CPU in every kernel; the bundle depends only on these versions.
        key = f"{alt.__version__}|{vl_convert.__version__}|{jupyter_chart.load_js_src()}"
        alt.JupyterChart._esm = cached_text("jupyterchart-offline", key, build)
        alt.JupyterChart._is_offline = True
        _offline_enabled = True


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
