"""Mitigation explorers: controls drive params or rebuild charts; readouts are the library's numbers."""

import json

import numpy as np
import pytest
from ipywidgets import Checkbox, FloatLogSlider

from straggle_edu.explorers.mitigations import (
    backup_explorer,
    hedging_explorer,
    packing_explorer,
    partition_explorer,
    sgd_explorer,
)
from straggle_edu.models.backup import backup_workers
from straggle_edu.models.balance import pack_sequences, partition_layers
from straggle_edu.models.causes import sequence_cost, sequence_lengths, stage_imbalance
from straggle_edu.models.hedging import HedgedLatency, fanout_quantile, tail_at_scale_latency
from straggle_edu.models.step_time import StepTime


def _sweep(ex):
    """Set every control to both ends of its range; nothing may raise."""
    for control in ex.controls.values():
        if isinstance(control, Checkbox):
            ends = (True, False)
        elif isinstance(control, FloatLogSlider):
            ends = control.base**control.max, control.base**control.min
        else:
            ends = control.max, control.min
        for value in ends:
            control.value = value
            assert ex.readout.value


def _rows(jchart):
    spec = jchart.spec  # what the browser draws (explorers swap rows into it)
    out = [row for rows in spec.get("datasets", {}).values() for row in rows]

    def walk(s):
        data = s.get("data")
        if isinstance(data, dict) and "values" in data:
            out.extend(data["values"])
        for key in ("layer", "hconcat", "vconcat"):
            for sub in s.get(key, []):
                walk(sub)

    walk(spec)
    return out


def test_packing_explorer_readout_is_the_library():
    ex = packing_explorer()
    ex.controls["workers"].value = 8
    ex.controls["per_worker"].value = 10
    ex.controls["sigma"].value = 1.5
    ex.controls["seed"].value = 7
    costs = sequence_cost(sequence_lengths(80, sigma=1.5, rng=7))
    want = [pack_sequences(costs, 8, m).makespan for m in ("in_order", "lpt", "karmarkar_karp")]
    for value in want:
        assert f"{value:.3f} s" in ex.readout.value
    loads = [r["load"] for r in _rows(ex.charts["packing"]) if "worker" in r]
    assert len(loads) == 24
    np.testing.assert_allclose(loads[:8], pack_sequences(costs, 8, "in_order").loads)


def test_partition_explorer_readout_uses_the_simulator():
    ex = partition_explorer()
    ex.controls["layers"].value = 24
    ex.controls["stages"].value = 6
    ex.controls["output_layers"].value = 3.0
    best = partition_layers(np.ones(24), 6, last_stage_extra=3.0)
    t_even = stage_imbalance(24, 6, 8, output_layers=3.0)
    t_best = stage_imbalance(24, 6, 8, output_layers=3.0, layers_per_stage=best.layers_per_stage)
    assert f"<b>{t_even.step_time:.1f}</b>" in ex.readout.value
    assert f"<b>{t_best.step_time:.1f}</b>" in ex.readout.value
    assert t_best.step_time < t_even.step_time
    drawn = ex.charts["stages"].spec["datasets"]
    assert drawn["stage_label_1"][0]["y"] == best.bottleneck
    assert {r["stage"] for r in drawn["stage_bars_1"]} == set(range(6))


def test_partition_explorer_shows_the_shortest_step_split():
    # 4 microbatches: the fill and drain weigh more, and 9/6/6/3 beats the smallest bottleneck (6/7/7/4), 45 vs 48.
    ex = partition_explorer(layers=24, stages=4, output_layers=3.0, microbatches=4)
    assert "shortest step <b>45.0</b>" in ex.readout.value and "with 9/6/6/3" in ex.readout.value
    ex.controls["layers"].value = 96
    ex.controls["stages"].value = 8
    assert "shortest-step search: too many splits" in ex.readout.value


def test_partition_explorer_more_stages_than_layers_is_safe():
    ex = partition_explorer()
    ex.controls["stages"].value = 16
    ex.controls["layers"].value = 4
    assert ex.splits()[0].stages == 4


def test_backup_explorer_costs_drive_params_without_recomputing():
    ex = backup_explorer()
    ex.controls["sync_per_worker"].value = 0.0
    ex.controls["price"].value = 0.5
    for chart in ("step", "margin"):
        assert ex.charts[chart].params.sync_per_worker == 0.0
        assert ex.charts[chart].params.price == 0.5
    fresh = backup_workers(StepTime(1.1, 0.02, 0.03, 0.55), 50, 10, sync=0.1, sync_per_worker=0.0, price=0.5)
    np.testing.assert_allclose(ex.plan().normalized_speedup, fresh.normalized_speedup, rtol=1e-12)
    assert f"b = {fresh.best_step}</b>" in ex.readout.value


def test_backup_explorer_tail_knobs_rebuild_the_charts():
    ex = backup_explorer()
    before = _rows(ex.charts["step"])
    ex.controls["pause_prob"].value = 0.0  # no pauses: only 2% jitter, backups barely help
    after = _rows(ex.charts["step"])
    assert before != after
    drawn = [r["compute"] for r in ex.charts["step"].spec["datasets"]["backup_plan"]]
    np.testing.assert_allclose(drawn, ex.plan().compute)
    margin = [r["gain"] for r in ex.charts["margin"].spec["datasets"]["backup_margin"]]
    np.testing.assert_allclose(margin, ex.plan().compute_gain)
    assert ex.plan().best_normalized == 0
    ex.controls["price"].value = 0.25  # the new chart is still linked
    assert ex.charts["step"].params.price == 0.25


def test_hedging_explorer_readout_and_links():
    ex = hedging_explorer()
    ex.controls["delay_ms"].value = 20.0
    assert ex.charts["ccdf"].params.delay_ms == 20.0
    assert ex.charts["tradeoff"].params.delay_ms == 20.0
    ex.controls["fanout"].value = 99.6
    assert ex.charts["ccdf"].params.fanout == 100.0
    unhedged = ex.charts["tradeoff"].spec["datasets"]["hedging_unhedged"][0]["y"]
    assert unhedged == pytest.approx(1e3 * fanout_quantile(tail_at_scale_latency(), 0.999, 100))
    lat = tail_at_scale_latency()
    hedged = HedgedLatency(lat, 0.020)
    assert f"<b>{1e3 * fanout_quantile(lat, 0.999, 100):,.0f} ms</b> plain" in ex.readout.value
    assert f"<b>{1e3 * fanout_quantile(hedged, 0.999, 100):,.0f} ms</b> hedged" in ex.readout.value
    assert f"<b>{100 * hedged.extra_load:.1f}%</b>" in ex.readout.value


def test_sgd_explorer_clamps_backups_and_reports_every_run():
    ex = sgd_explorer()
    ex.controls["workers"].value = 2
    ex.controls["backups"].value = 8
    summary = {s["mode"]: s for s in ex.comparison().summary()}
    drawn = ex.charts["loss"].spec["datasets"]["sgd_runs"]
    assert {r["mode"] for r in drawn} == {"sync", "drop", "async"}
    assert summary["drop"]["gradients_dropped"] == summary["drop"]["updates"]  # 1 of 2 dropped
    assert ex.readout.value.count("updates") == 3


@pytest.mark.parametrize("make", [packing_explorer, partition_explorer, backup_explorer, hedging_explorer])
def test_mitigation_explorers_every_control_range_is_safe(make):
    _sweep(make())


def test_sgd_explorer_every_control_range_is_safe():
    ex = sgd_explorer(wall_time=20.0)
    _sweep(ex)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: packing_explorer(workers=64), "workers must be a whole number in 2..32, got 64"),
        (lambda: partition_explorer(output_layers=-1), "output_layers must be in \\[0, 8\\], got -1"),
        (lambda: backup_explorer(n=2), "n must be a whole number in 4..512, got 2"),
        (lambda: hedging_explorer(delay_ms=0.0), "delay_ms must be in \\[0.1, 1000\\], got 0.0"),
        (lambda: sgd_explorer(lr_scale=3.0), "lr_scale must be in \\[0.05, 1.95\\], got 3.0"),
    ],
)
def test_mitigation_explorers_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _params_read_back(jchart):
    """The param values the browser reads back when it re-embeds the chart:
    those in the spec the kernel sends it, as JSON."""
    spec = json.loads(json.dumps(jchart.spec))
    return {p["name"]: p["value"] for p in spec.get("params", []) if "value" in p}


@pytest.mark.parametrize("make, chart, param, value, other, other_value", [
    (backup_explorer, "margin", "price", 0.3, "n", 64),
    (backup_explorer, "step", "sync_per_worker", 0.05, "jitter", 0.1),
    (hedging_explorer, "tradeoff", "delay_ms", 50.0, "fanout", 100),
])
def test_swap_data_keeps_the_param_the_reader_moved(make, chart, param, value, other, other_value):
    # Regression: the data swap once skipped keep_params, so a slider snapped
    # back in the browser (price 0.3 -> 1.0, delay_ms 50 -> 10) after another control moved.
    ex = make()
    ex.controls[param].value = value
    before = ex.charts[chart].spec
    ex.controls[other].value = other_value  # new rows for the chart
    assert ex.charts[chart].spec["datasets"] != before["datasets"]
    assert _params_read_back(ex.charts[chart])[param] == pytest.approx(value)
