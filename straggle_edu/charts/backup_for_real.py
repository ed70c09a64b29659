"""Charts of the real SGD experiment (notebook 11): every scheme on both x-axes.

- :func:`sgd_curves_chart`: test loss against wall time and against
  gradients applied, one line per scheme (rows from
  :func:`straggle_edu.instruments.sgd.curve_rows`); a row with
  ``"kind": "predicted"`` is drawn dashed (the 07 model's prediction).
"""

from __future__ import annotations

import altair as alt

from .._validate import require
from ..i18n import N_, _
from . import _data  # noqa: F401  (importing it registers the charts' font theme)

__all__ = ["sgd_curves_chart"]

_FIELDS = ("scheme", "wall_s", "gradients_applied", "loss")
# The SGD experiment's schemes (straggle_edu.models.sgd_schedule.SCHEMES), as
# legend entries; other names are shown as given.
_SCHEMES = {"sync": N_("sync"), "backup": N_("backup"), "drop": N_("drop"), "local": N_("local"), "balanced": N_("balanced")}
_MODEL_SUFFIX = " (07 model)"


def _scheme_label(name):
    """A scheme's legend entry in the current language; ``"<scheme> (07 model)"`` too."""
    name = str(name)
    if name.endswith(_MODEL_SUFFIX) and name[: -len(_MODEL_SUFFIX)] in _SCHEMES:
        return _("{scheme} (07 model)").format(scheme=_(_SCHEMES[name[: -len(_MODEL_SUFFIX)]]))
    return _(_SCHEMES[name]) if name in _SCHEMES else name


def sgd_curves_chart(rows, width=300, height=220):
    """Loss against wall time (left) and against gradients applied (right).

    Parameters
    ----------
    rows : list of dict
        ``scheme``, ``wall_s`` (seconds), ``gradients_applied``, ``loss``
        (nats), and optionally ``kind`` (``"measured"`` or ``"predicted"``).

    Examples
    --------
    >>> rows = [{"scheme": "sync", "wall_s": t / 10, "gradients_applied": 8 * t, "loss": 1 / t} for t in (1, 2, 3)]
    >>> sgd_curves_chart(rows).to_dict()["hconcat"][0]["mark"]["type"]
    'line'
    """
    rows = [{"kind": "measured", **r} for r in rows]
    require(len(rows) > 0 and all(f in r for r in rows for f in _FIELDS), "rows", len(rows),
            f"rows with {', '.join(_FIELDS)}")
    require(len(rows) <= 5000, "rows", len(rows), "at most 5000 rows (thin the curves first)")
    rows = [{**r, "scheme": _scheme_label(r["scheme"]), "kind": _(r["kind"])} for r in rows]
    base = alt.Chart(alt.Data(values=rows)).mark_line().encode(
        y=alt.Y("loss:Q", title=_("test loss (nats)"), scale=alt.Scale(zero=False)),
        color=alt.Color("scheme:N", title=_("scheme")),
        strokeDash=alt.StrokeDash("kind:N", title="", scale=alt.Scale(domain=[_("measured"), _("predicted")],
                                                                      range=[[1, 0], [5, 3]])),
        tooltip=[alt.Tooltip("scheme:N", title=_("scheme")), alt.Tooltip("kind:N", title=_("kind")),
                 alt.Tooltip("wall_s:Q", title=_("wall time (s)")), alt.Tooltip("gradients_applied:Q", title=_("gradients applied")),
                 alt.Tooltip("loss:Q", title=_("test loss (nats)"))],
    ).properties(width=width, height=height)
    by_time = base.encode(x=alt.X("wall_s:Q", title=_("wall time (s)")))
    by_grads = base.encode(x=alt.X("gradients_applied:Q", title=_("gradients applied")))
    return by_time | by_grads
