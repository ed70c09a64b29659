"""One way to put a chart on the screen, online or off.

Every chart a notebook or explorer shows goes through :func:`chart_widget`
(for a chart that widgets update) or :func:`show` (to display it).

- In a live kernel, a chart becomes an ``altair.JupyterChart`` widget whose
  JavaScript comes from the installed packages, not from a CDN, so it
  renders in a classroom with no internet. Sliders drive it through named
  params, so updates happen in place, with no re-render.
- When the static site is built (``straggle-edu site``), the same call emits
  the chart's Vega-Lite spec instead, so a page with no kernel can still draw
  it, and closed-form charts stay interactive through their bound params.
"""

from __future__ import annotations

import os

__all__ = ["chart_widget", "show", "enable_offline", "site_mode"]

_offline_enabled = False


def site_mode():
    """True while the static site is being built (``STRAGGLE_EDU_SITE=1``)."""
    return os.environ.get("STRAGGLE_EDU_SITE", "") == "1"


def enable_offline():
    """Serve Altair's JupyterChart JavaScript from the installed packages.

    Idempotent; called for you by :func:`chart_widget`.
    """
    global _offline_enabled
    if not _offline_enabled:
        import altair as alt

        alt.JupyterChart.enable_offline()
        _offline_enabled = True


def chart_widget(chart, **kwargs):
    """An ``altair.JupyterChart`` for ``chart``, rendered offline.

    Link a control to a named param with
    ``ipywidgets.dlink((slider, "value"), (widget.params, "name"))``.
    """
    import altair as alt

    enable_offline()
    return alt.JupyterChart(chart, **kwargs)


def show(obj):
    """Display a chart, a widget or an explorer in the notebook.

    A plain Altair chart becomes an offline :func:`chart_widget`. Anything
    else is passed to IPython's ``display``. Returns what was displayed.
    """
    import altair as alt
    from IPython.display import display

    if isinstance(obj, alt.TopLevelMixin):
        obj = chart_widget(obj)
    display(obj)
    return obj
