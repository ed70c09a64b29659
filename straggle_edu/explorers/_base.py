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

While the static site is built (:func:`straggle_edu.notebook.display.site_mode`), each
link also records what only the kernel knows (the widget ids, and the param
value for each position of the control when the values are not plain
numbers on the control, or go through a transform) in the synced trait
``_site_links``, which the site builder reads from the saved widget state.
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import traitlets

from .._validate import one_of
from ..notebook.display import chart_widget, site_mode

__all__ = ["Explorer"]

# A control whose transformed values would need a longer lookup table than
# this stays kernel-only on the static site (a note says so).
_MAX_POSITIONS = 2001


class Explorer(widgets.VBox):
    """Controls and charts, wired together.

    Parameters
    ----------
    controls : dict
        ``{name: ipywidgets control}``, shown in a row (or rows) above the charts.
    charts : dict
        ``{name: altair.Chart or altair.JupyterChart}``; Altair charts are
        wrapped with :func:`straggle_edu.notebook.display.chart_widget`.
    extra : list, optional
        More widgets (an ``HTML`` readout, an ``Output``) shown under the charts.

    Examples
    --------
    >>> import altair as alt, ipywidgets as widgets
    >>> p = alt.param(name="p", value=0.01)
    >>> chart = alt.Chart(alt.Data(values=[{"n": 1}])).mark_point().encode(x="n:Q").add_params(p)
    >>> ex = Explorer({"p": widgets.FloatSlider(value=0.01, min=0.001, max=0.1, step=0.001)}, {"tail": chart})
    >>> _ = ex.link("p", "tail", "p")
    >>> ex.controls["p"].value = 0.05
    >>> ex.charts["tail"].params.p
    0.05
    >>> ex.links
    [('p', 'tail', 'p', None)]
    """

    # Filled only while the static site is built; see the module docstring.
    _site_links = traitlets.List().tag(sync=True)

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
        if site_mode():
            self._site_links = [*self._site_links, site_link(ctrl, jchart, param, transform)]
        return link

    def set(self, **values):
        """Move controls by name, in the order given, as a reader would; returns the explorer.

        For a scripted demo (the teaching guide's demo moves) and for
        examples: ``tail_explorer().set(n=4096)``.

        Examples
        --------
        >>> import ipywidgets as widgets
        >>> ex = Explorer({"a": widgets.IntSlider(1), "b": widgets.IntSlider(2)}, {}).set(b=7, a=3)
        >>> ex.controls["a"].value, ex.controls["b"].value
        (3, 7)
        >>> ex.set(c=1)
        Traceback (most recent call last):
        ...
        ValueError: control must be one of 'a', 'b', got 'c'
        """
        for name, value in values.items():
            self.controls[one_of("control", name, self.controls)].value = value
        return self

    def on_change(self, update, *names, now=True):
        """Call ``update(change)`` whenever a control's value changes; then ``update()`` once.

        The one ending every explorer shares. ``names`` picks the controls
        (all of them by default; controls without a value, such as buttons,
        are skipped). ``now=False`` skips the first call, for a second
        callback on other controls. Returns the explorer, so an explorer can
        end with ``return ex.on_change(update)``.

        Examples
        --------
        >>> import ipywidgets as widgets
        >>> ex = Explorer({"a": widgets.IntSlider(1), "b": widgets.IntSlider(2)}, {})
        >>> seen = []
        >>> _ = ex.on_change(lambda change=None: seen.append(change and change["name"]), "a")
        >>> ex.controls["a"].value, ex.controls["b"].value = 5, 6
        >>> seen
        [None, 'value']
        """
        for name in names or self.controls:
            control = self.controls[name]
            if control.has_trait("value"):
                control.observe(update, "value")
        if now:
            update()
        return self


def _json_value(value):
    """``value`` as a plain JSON scalar, or raise TypeError."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise TypeError(f"a param value must be a finite number, a string, a bool or None, got {value!r}")


def _positions(lo, hi, step):
    count = int(round((hi - lo) / step)) + 1
    if count > _MAX_POSITIONS:
        raise ValueError(f"{count} slider positions, more than {_MAX_POSITIONS}")
    return [lo + i * step for i in range(count)]


def site_link(control, jchart, param, transform=None):
    """What the static site needs to bind ``control`` to ``param`` of ``jchart``.

    Returns ``{"control": model_id, "chart": model_id, "param": name}`` plus,
    when the page cannot compute the param from the control's own state,
    ``"lookup"``: the param's value at each position of the control (each
    option of a selection; each step of a slider, or of a log slider's
    exponent, when ``transform`` is given; ``[False, True]`` for a checkbox).
    A control the page cannot reproduce gets ``"unsupported"`` (a reason)
    and stays kernel-only, with a note.

    Examples
    --------
    >>> import altair as alt, ipywidgets as widgets
    >>> p = alt.param(name="k", value=2)
    >>> c = chart_widget(alt.Chart(alt.Data(values=[{"n": 1}])).mark_point().encode(x="n:Q").add_params(p))
    >>> pick = widgets.Dropdown(options=[("two", 2), ("four", 4)], value=2)
    >>> site_link(pick, c, "k")["lookup"]
    [2, 4]
    >>> slider = widgets.IntSlider(value=2, min=1, max=4)
    >>> "lookup" in site_link(slider, c, "k"), site_link(slider, c, "k", lambda v: v * 10)["lookup"]
    (False, [10, 20, 30, 40])
    >>> site_link(widgets.Text(), c, "k")["unsupported"]
    'Text is not a control the static site can bind'
    """
    from ipywidgets.widgets.widget_selection import _Selection

    entry = {"control": control.model_id, "chart": jchart.model_id, "param": param}
    f = transform if transform is not None else (lambda v: v)
    try:
        if isinstance(control, widgets.FloatLogSlider):
            if transform is not None:
                exps = _positions(control.min, control.max, control.step)
                entry["lookup"] = [_json_value(f(control.base**e)) for e in exps]
        elif isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
            if transform is not None:
                entry["lookup"] = [_json_value(f(v)) for v in _positions(control.min, control.max, control.step)]
        elif isinstance(control, (widgets.BoundedIntText, widgets.BoundedFloatText, widgets.IntText, widgets.FloatText)):
            if transform is not None:
                raise ValueError("a number box with a transform")
        elif isinstance(control, _Selection):
            entry["lookup"] = [_json_value(f(v)) for v in control._options_values]
        elif isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
            entry["lookup"] = [_json_value(f(False)), _json_value(f(True))]
        else:
            raise ValueError(f"{type(control).__name__} is not a control the static site can bind")
    except (TypeError, ValueError) as exc:
        entry.pop("lookup", None)
        entry["unsupported"] = str(exc)
    return entry
