"""The shape every explorer shares: controls on top, charts below.

An :class:`Explorer` is an ``ipywidgets.VBox`` that keeps its parts by name,
so tests and the static-site builder can reach them:

- ``explorer.controls``: ``{name: widget}``; a test sets ``.value`` on these.
- ``explorer.charts``: ``{name: altair.JupyterChart}``.
- ``explorer.links``: the (control, chart, param, transform) tuples made with
  :meth:`Explorer.link`: a control that drives a named Vega-Lite param, so the
  chart updates in place with no re-render. The static site turns these into
  params bound to HTML inputs, so closed-form charts stay interactive
  without a kernel.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..display import chart_widget

__all__ = ["Explorer"]


class Explorer(widgets.VBox):
    """Controls and charts, wired together.

    Parameters
    ----------
    controls : dict
        ``{name: ipywidgets control}``, shown in a row (or rows) above the charts.
    charts : dict
        ``{name: altair.Chart or altair.JupyterChart}``; Altair charts are
        wrapped with :func:`straggle_edu.display.chart_widget`.
    extra : list, optional
        More widgets (an ``HTML`` readout, an ``Output``) shown under the charts.
    """

    def __init__(self, controls, charts, extra=(), **kwargs):
        import altair as alt

        self.controls = dict(controls)
        self.charts = {
            name: chart_widget(c) if isinstance(c, alt.TopLevelMixin) else c
            for name, c in dict(charts).items()
        }
        self.extra = list(extra)
        self.links = []
        box = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([box, *self.charts.values(), *self.extra], **kwargs)

    def link(self, control, chart, param, transform=None):
        """Drive the Vega-Lite param ``param`` of chart ``chart`` from control
        ``control`` (both given by name); return the ``ipywidgets.dlink``."""
        ctrl = self.controls[control]
        jchart = self.charts[chart]
        pair = ((ctrl, "value"), (jchart.params, param))
        link = widgets.dlink(*pair, transform) if transform else widgets.dlink(*pair)
        self.links.append((control, chart, param, transform))
        return link
