"""Charts of the real SGD experiment (notebook 11): every scheme on both x-axes.

- :func:`sgd_curves_chart`: test loss against wall time and against
  gradients applied, one line per scheme (rows from
  :func:`straggle_edu.instruments.sgd.curve_rows`); a row with
  ``"kind": "predicted"`` is drawn dashed (the 07 model's prediction).
"""

from __future__ import annotations

import altair as alt

from .._validate import require

__all__ = ["sgd_curves_chart"]

_FIELDS = ("scheme", "wall_s", "gradients_applied", "loss")


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
    base = alt.Chart(alt.Data(values=rows)).mark_line().encode(
        y=alt.Y("loss:Q", title="test loss (nats)", scale=alt.Scale(zero=False)),
        color=alt.Color("scheme:N", title="scheme"),
        strokeDash=alt.StrokeDash("kind:N", title="", scale=alt.Scale(domain=["measured", "predicted"],
                                                                      range=[[1, 0], [5, 3]])),
        tooltip=["scheme:N", "kind:N", "wall_s:Q", "gradients_applied:Q", "loss:Q"],
    ).properties(width=width, height=height)
    by_time = base.encode(x=alt.X("wall_s:Q", title="wall time (s)"))
    by_grads = base.encode(x=alt.X("gradients_applied:Q", title="gradients applied"))
    return by_time | by_grads
