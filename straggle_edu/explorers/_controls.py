"""The controls every explorer builds: one style, one factory per kind of control.

Each factory checks its starting value (through :mod:`straggle_edu._validate`)
and raises a readable ``ValueError`` when it is out of range, instead of
clamping it silently, and returns an ipywidgets control with the house style:

- :func:`int_slider`, :func:`float_slider`, :func:`log_slider`: sliders over a
  range (``continuous=False`` for updates that sample or simulate, so they run
  on release);
- :func:`n_slider`: the workers slider, a selection slider over
  :func:`worker_counts` (round numbers and powers of two) or over given counts;
- :func:`dropdown`: a menu whose starting value must be one of its options;
- :func:`choices`: ``(label, value)`` pairs whose labels are translated and
  whose values stay the stable English keys.

Labels are shown as given: an explorer passes ``_("text")``, built when the
explorer is, so a language change applies to explorers built after it.

``STYLE`` (labels at their natural width) and ``ROW`` (a fixed-width slider,
for explorers with many controls) are the only style objects explorers use.
"""

from __future__ import annotations

import ipywidgets as widgets

from .._validate import in_range, require, whole
from ..i18n import _, format_int

__all__ = ["STYLE", "ROW", "N_MAX", "worker_counts", "int_slider", "float_slider", "log_slider", "n_slider",
           "dropdown", "choices"]

STYLE = {"description_width": "initial"}
ROW = widgets.Layout(width="300px")
#: The most workers any n slider offers.
N_MAX = 100_000


def _layout(layout):
    return {} if layout is None else {"layout": layout}


def worker_counts(extra=()):
    """The worker counts the n sliders stop at: about 10 per decade from 1 to 100,000.

    Round numbers (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9 per decade), the
    powers of two (GPU clusters come in them), the coin-flip counts 69 and
    693, and any ``extra`` counts (rounded). A log slider would step in
    exponents and miss 4096 (10**3.61 is 4,074).

    Examples
    --------
    >>> counts = worker_counts()
    >>> counts[:12], 4096 in counts, counts[-1]
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15], True, 100000)
    >>> 3333 in worker_counts([3333.4])
    True
    """
    decade = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9)
    counts = {int(round(m * 10**k)) for k in range(5) for m in decade}
    counts |= {2**j for j in range(17)} | {69, 693, N_MAX} | {max(1, round(v)) for v in extra}
    return sorted(c for c in counts if 1 <= c <= N_MAX)


def int_slider(name, value, lo, hi, label, *, step=1, continuous=True, layout=None):
    """An ``IntSlider`` over ``lo..hi`` starting at ``value`` (checked: a whole number in range).

    Parameters
    ----------
    name : str
        The explorer's parameter, as error messages name it.
    value, lo, hi, step : int
        Start, bounds and step.
    label : str
        The text beside the slider.
    continuous : bool
        False: report the value on release only (for slow updates).
    layout : ipywidgets.Layout, optional
        ``ROW`` for a fixed width.

    Examples
    --------
    >>> int_slider("workers", 16, 2, 32, "workers").value
    16
    >>> int_slider("workers", 64, 2, 32, "workers")
    Traceback (most recent call last):
    ...
    ValueError: workers must be a whole number in 2..32, got 64
    """
    return widgets.IntSlider(value=whole(name, value, lo, hi), min=lo, max=hi, step=step, description=label,
                             style=STYLE, continuous_update=continuous, **_layout(layout))


def float_slider(name, value, lo, hi, step, label, fmt=".2f", *, continuous=True, layout=None):
    """A ``FloatSlider`` over ``[lo, hi]`` starting at ``value`` (checked: in range).

    ``fmt`` is the readout's format (``".1%"`` for a share). Other parameters
    as in :func:`int_slider`.

    Examples
    --------
    >>> float_slider("jitter", 0.05, 0.0, 0.2, 0.005, "jitter", ".1%").readout_format
    '.1%'
    >>> float_slider("jitter", 0.5, 0.0, 0.2, 0.005, "jitter")
    Traceback (most recent call last):
    ...
    ValueError: jitter must be in [0, 0.2], got 0.5
    """
    return widgets.FloatSlider(value=in_range(name, value, lo, hi), min=lo, max=hi, step=step, description=label,
                               readout_format=fmt, style=STYLE, continuous_update=continuous, **_layout(layout))


def log_slider(name, value, lo_exp, hi_exp, label, fmt=".2", *, base=10, step=0.01, limits=None, continuous=True,
               layout=None):
    """A ``FloatLogSlider`` over ``base**lo_exp .. base**hi_exp`` starting at ``value`` (checked).

    ``limits`` is the ``(low, high)`` range the check allows, when the ends
    are round numbers the exponents only approximate (0.5 for ``-0.30103``).

    Examples
    --------
    >>> log_slider("p", 0.01, -5, -1, "p per worker").value
    0.01
    >>> log_slider("median", 64, 6, 13, "median length", ".0f", base=2, step=0.5).max
    13.0
    >>> log_slider("p", 0.5, -5, -1, "p per worker")
    Traceback (most recent call last):
    ...
    ValueError: p must be in [1e-05, 0.1], got 0.5
    """
    low, high = (base**lo_exp, base**hi_exp) if limits is None else limits
    value = in_range(name, value, low, high)
    return widgets.FloatLogSlider(value=value, base=base, min=lo_exp, max=hi_exp, step=step, description=label,
                                  readout_format=fmt, style=STYLE, continuous_update=continuous, **_layout(layout))


def n_slider(value, options=None, *, name="n", label=None, continuous=True, layout=None):
    """The workers slider: a ``SelectionSlider`` whose value is the int n.

    Parameters
    ----------
    value : int or float
        Starting count. With ``options`` it must be one of them; without, any
        count in [1, 100,000] (rounded, and added to the stops).
    options : sequence of int, optional
        The counts to offer (powers of two read best); default
        :func:`worker_counts`.
    name, label : str
        The parameter's name in error messages, and the slider's text
        (default: "workers n", translated).
    continuous, layout
        As in :func:`int_slider`.

    Examples
    --------
    >>> n_slider(4096).value, n_slider(3000.4).value
    (4096, 3000)
    >>> n_slider(64, options=(1, 2, 4, 8, 16, 32, 64)).label
    '64'
    >>> n_slider(5, options=(1, 2, 4, 8))
    Traceback (most recent call last):
    ...
    ValueError: n must be one of 1, 2, ..., 8, got 5
    """
    if options is None:
        value = max(1, round(in_range(name, value, 1, N_MAX)))
        options = worker_counts([value])
    else:
        value = whole(name, value)
        require(value in options, name, value, f"one of {options[0]}, {options[1]}, ..., {options[-1]}")
    label = _("workers n") if label is None else label
    return widgets.SelectionSlider(options=[(format_int(m), m) for m in options], value=value, description=label,
                                   style=STYLE, continuous_update=continuous, **_layout(layout))


def dropdown(name, value, options, label, **kwargs):
    """A ``Dropdown`` over ``options`` starting at ``value`` (checked: one of the options' values).

    ``options`` is a list of values or of ``(text, value)`` pairs; ``kwargs``
    go to the widget.

    Examples
    --------
    >>> dropdown("op", "forward", ["forward", "backward"], "op").value
    'forward'
    >>> dropdown("op", "sideways", ["forward", "backward"], "op")
    Traceback (most recent call last):
    ...
    ValueError: op must be one of 'forward', 'backward', got 'sideways'
    """
    values = [o[1] if isinstance(o, tuple) else o for o in options]
    require(value in values, name, value, "one of " + ", ".join(map(repr, values)))
    return widgets.Dropdown(options=list(options), value=value, description=label, style=STYLE, **kwargs)


def choices(values):
    """``(label, value)`` pairs for a menu: each label is ``_(str(value))``, each value stays the key.

    The English option names are the catalog's msgids (marked with ``N_``
    where the explorer lists them); a value the catalog does not know, such
    as a number, shows as it is.

    Examples
    --------
    >>> from straggle_edu.i18n import set_language
    >>> set_language("en"); choices(["normal", 4096])
    [('normal', 'normal'), ('4096', 4096)]
    """
    return [(_(str(v)), v) for v in values]
