"""Charts for notebook 03b: correlated slowness, and a scale-up prediction.

- :func:`independence_chart`: P(some worker slow) and E[max] in σ against n,
  independent (thin) and correlated (thick), side by side.
- :func:`scale_prediction_chart`: one bar per way of predicting the slowest
  of n from your sample, the bootstrap range as a band, and the sample's
  own maximum as a rule.
"""

from __future__ import annotations

import altair as alt

from ..i18n import N_, _
from ._data import inline_rows, quoted

__all__ = ["independence_chart", "scale_prediction_chart"]

_MODELS = (N_("independent"), N_("correlated"))


def independence_chart(rows):
    """Two panels against n: P(some worker slow), and E[slowest] in σ.

    Parameters
    ----------
    rows : list of dict
        ``{"n", "model", "p_any", "max_sigma"}``, one per n and model
        (``"independent"`` or ``"correlated"``), as the explorer builds them.

    Examples
    --------
    >>> rows = [{"n": n, "model": m, "p_any": 0.1, "max_sigma": 1.0} for n in (1, 8) for m in ("independent", "correlated")]
    >>> independence_chart(rows).to_dict()["hconcat"][0]["mark"]["type"]
    'line'
    """
    rows = [{**r, "model": _(r["model"]) if r["model"] in _MODELS else r["model"]} for r in rows]
    correlated = quoted(_("correlated"))
    base = alt.Chart(inline_rows(rows)).encode(
        x=alt.X("n:Q", scale=alt.Scale(type="log"), title=_("workers n")),
        color=alt.Color("model:N", title=None),
        strokeWidth=alt.condition(f"datum.model == {correlated}", alt.value(3), alt.value(1)),
    )
    tail = base.mark_line().encode(y=alt.Y("p_any:Q", title=_("P(some worker slow)"), scale=alt.Scale(domain=[0, 1])))
    grow = base.mark_line().encode(y=alt.Y("max_sigma:Q", title=_("E[slowest], σ above the mean")))
    return (tail.properties(width=260, height=200) | grow.properties(width=260, height=200))


def scale_prediction_chart(pred):
    """The slowest of n predicted three ways, with the bootstrap range.

    Parameters
    ----------
    pred : ScalePrediction

    Examples
    --------
    >>> import numpy as np
    >>> from straggle_edu.models.empirical import predict_at_scale
    >>> pred = predict_at_scale(np.linspace(0.9, 1.1, 50), 64, boot=20, rng=0)
    >>> len(scale_prediction_chart(pred).to_dict()["layer"])
    3
    """
    bars = [{"way": way, "seconds": value} for way, value in
            ((_("resample your data"), pred.empirical), (_("normal fit"), pred.normal),
             (_("exponential tail"), pred.exponential_tail))]
    base = alt.Chart(inline_rows(bars)).encode(y=alt.Y("way:N", title=None, sort=None))
    points = base.mark_point(filled=True, size=90).encode(x=alt.X("seconds:Q", title=_("E[slowest of {n}] (s)").format(n=f"{pred.n:,}"),
                                                                   scale=alt.Scale(zero=False)),
                                                           tooltip=[alt.Tooltip("way:N", title=_("way")),
                                                                    alt.Tooltip("seconds:Q", title=_("seconds"), format=".4f")])
    band = alt.Chart(inline_rows([{"low": pred.low, "high": pred.high}])).mark_rect(opacity=0.15).encode(
        x="low:Q", x2="high:Q")
    rule = alt.Chart(inline_rows([{"seconds": pred.sample_max}])).mark_rule(strokeDash=[4, 3]).encode(x="seconds:Q")
    return (band + rule + points).properties(width=420, height=120)
