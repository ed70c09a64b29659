"""The SGD curves chart: both x-axes, measured solid and predicted dashed."""

import pytest

from straggle_edu.charts.backup_for_real import sgd_curves_chart


def test_sgd_curves_chart_two_panels_and_kinds():
    rows = [{"scheme": "sync", "wall_s": 0.1 * t, "gradients_applied": 8 * t, "loss": 1.0 / t} for t in (1, 2)]
    rows += [{**r, "kind": "predicted"} for r in rows]
    spec = sgd_curves_chart(rows).to_dict()
    assert [p["encoding"]["x"]["field"] for p in spec["hconcat"]] == ["wall_s", "gradients_applied"]
    values = spec["hconcat"][0]["data"]["values"] if "data" in spec["hconcat"][0] else spec["data"]["values"]
    assert {v["kind"] for v in values} == {"measured", "predicted"}


def test_sgd_curves_chart_rejects_rows_without_loss():
    with pytest.raises(ValueError, match="rows must be rows with scheme, wall_s, gradients_applied, loss"):
        sgd_curves_chart([{"scheme": "sync", "wall_s": 1.0, "gradients_applied": 1}])
