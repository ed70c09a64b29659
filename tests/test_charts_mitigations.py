"""Mitigation charts: valid specs, and the in-browser formulas agree with the models."""

import json
import re

import numpy as np
import pytest
import vl_convert as vlc
from _vega import drawn_texts, with_params

from straggle_edu.charts.mitigations import (
    backup_margin_chart,
    backup_step_chart,
    backup_tails_chart,
    hedging_chart,
    hedging_tradeoff_chart,
    packing_chart,
    sgd_loss_chart,
    stage_partition_chart,
)
from straggle_edu.models.backup import backup_workers, inception_50_setup
from straggle_edu.models.balance import pack_sequences, partition_layers, split_layers_evenly
from straggle_edu.models.hedging import HedgedLatency, fanout_quantile, hedging_tradeoff, tail_at_scale_latency
from straggle_edu.models.sgd import compare_sgd, make_problem
from straggle_edu.models.step_time import StepTime

PLAN = backup_workers(**inception_50_setup(), max_backups=8)


def _all_values(spec, datasets=None):
    """Every data row of a (possibly nested) chart spec, inline or named (each named set once)."""
    out = []
    datasets = spec.get("datasets", {}) if datasets is None else datasets
    data = spec.get("data")
    if isinstance(data, dict) and "values" in data:
        out.extend(data["values"])
    if isinstance(data, dict) and data.get("name") in datasets:
        out.extend(datasets.pop(data["name"]))
    for key in ("layer", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            out.extend(_all_values(sub, datasets))
    return out


def _params(spec):
    found = {}
    for p in spec.get("params", []):
        found[p["name"]] = p.get("value")
    for key in ("layer", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            found.update(_params(sub))
    return found


def test_packing_chart_shows_every_load_and_the_makespans():
    costs = np.random.default_rng(0).pareto(2.0, 64) + 1
    packs = [pack_sequences(costs, 8, m) for m in ("in_order", "lpt", "karmarkar_karp")]
    spec = packing_chart(*packs).to_dict()
    loads = [r["load"] for r in _all_values(spec) if "worker" in r]
    np.testing.assert_allclose(loads, np.concatenate([p.loads for p in packs]))
    texts = drawn_texts(packing_chart(*packs))
    for p, name in zip(packs, ("in order", "greedy LPT", "Karmarkar-Karp")):
        assert name in texts
        assert f"makespan {p.makespan:.3g} s, {100 * (p.imbalance - 1):.1f}% over the mean" in texts


def test_stage_partition_chart_segments_add_up_to_stage_costs():
    parts = [split_layers_evenly(np.ones(32), 4, last_stage_extra=2.3),
             partition_layers(np.ones(32), 4, last_stage_extra=2.3)]
    rows = [r for r in _all_values(stage_partition_chart(*parts).to_dict()) if "stage" in r]
    assert len(rows) == 2 * 33  # per panel: 32 layer segments and the output layer
    for p, panel in zip(parts, (rows[:33], rows[33:])):
        tops = {}
        for r in panel:
            tops[r["stage"]] = max(tops.get(r["stage"], 0), r["hi"])
        np.testing.assert_allclose([tops[s] for s in range(4)], p.stage_costs)
    texts = drawn_texts(stage_partition_chart(*parts))
    assert "even split" in texts and "linear-partition DP" in texts
    assert "8/8/8/8 layers: slowest stage 10.3 s" in texts
    assert "8/9/9/6 layers: slowest stage 9 s" in texts


def test_backup_step_chart_marks_the_tensorflow_optima():
    spec = backup_step_chart(PLAN).to_dict()
    assert _params(spec) == {"sync_per_worker": 0.012, "price": 1.0}
    texts = drawn_texts(backup_step_chart(PLAN))
    assert "shortest step: b = 4" in texts and "least GPU-time: b = 3" in texts


@pytest.mark.parametrize("per, price", [(0.0, 0.0), (0.002, 1.0), (0.03, 1.0), (0.012, 0.3), (0.0, 2.0)])
def test_backup_step_chart_formulas_match_backup_workers(per, price):
    setup = dict(inception_50_setup(), sync_per_worker=per)
    plan = backup_workers(**setup, max_backups=8, price=price)
    texts = drawn_texts(with_params(backup_step_chart(PLAN), sync_per_worker=per, price=price))
    assert f"shortest step: b = {plan.best_step}" in texts
    assert f"least GPU-time: b = {plan.best_normalized}" in texts


@pytest.mark.parametrize("per, price", [(0.012, 1.0), (0.0, 0.0), (0.05, 1.0), (0.004, 0.2)])
def test_backup_margin_chart_verdicts_match_the_plan(per, price):
    plan = backup_workers(**dict(inception_50_setup(), sync_per_worker=per), max_backups=8, price=price)
    want = ["saves GPU-time" if cost else "faster, costs more" if speed else "slower"
            for cost, speed in zip(plan.pays_in_cost, plan.pays_in_speed)]
    # Each bar's accessible label names its verdict, computed in the browser.
    svg = vlc.vegalite_to_svg(json.dumps(with_params(backup_margin_chart(PLAN), sync_per_worker=per, price=price).to_dict()))
    got = re.findall(r"this backup: ([^;]+);", svg)
    assert got == want


def test_backup_tails_chart_rows():
    plans = {"a": PLAN, "b": backup_workers(StepTime(1.0, 0.05), 50, 8)}
    rows = _all_values(backup_tails_chart(plans).to_dict())
    assert len([r for r in rows if "tail" in r]) == 18


def _ms(texts, who):
    for t in texts:
        m = re.fullmatch(rf"{who} p99\.9: ([\d,]+) ms", t)
        if m:
            return float(m.group(1).replace(",", ""))
    raise AssertionError(f"no {who} label in {texts}")


@pytest.mark.parametrize("delay_ms, fanout", [(10.0, 1000), (5.0, 100), (20.0, 1), (50.0, 5000)])
def test_hedging_chart_quantiles_match_the_model(delay_ms, fanout):
    lat = tail_at_scale_latency()
    texts = drawn_texts(with_params(hedging_chart(lat), delay_ms=delay_ms, fanout=fanout))
    plain = 1e3 * fanout_quantile(lat, 0.999, fanout)
    hedged = 1e3 * fanout_quantile(HedgedLatency(lat, delay_ms / 1e3), 0.999, fanout)
    assert _ms(texts, "plain") == pytest.approx(plain, rel=0.01, abs=1)
    assert _ms(texts, "hedged") == pytest.approx(hedged, rel=0.01, abs=1)


def test_hedging_chart_tail_at_scale_figures():
    texts = drawn_texts(hedging_chart(tail_at_scale_latency()))
    assert _ms(texts, "plain") == pytest.approx(1800, rel=0.005)
    assert _ms(texts, "hedged") == pytest.approx(74, abs=1)


def test_hedging_tradeoff_chart_rows_and_param():
    tr = hedging_tradeoff(tail_at_scale_latency(), np.geomspace(0.001, 0.1, 20), 0.999, 1000)
    spec = hedging_tradeoff_chart(tr, delay_ms=20).to_dict()
    assert _params(spec)["delay_ms"] == 20
    rows = [r for r in _all_values(spec) if "tail_ms" in r]
    np.testing.assert_allclose([r["tail_ms"] for r in rows[:20]], 1e3 * tr.tail)
    assert "no hedging" in drawn_texts(hedging_tradeoff_chart(tr))


def test_sgd_loss_chart_rows():
    c = compare_sgd(StepTime(1.0, 0.1, 0.05, 1.0), make_problem(workers=4, rng=0), 1, 20.0)
    rows = _all_values(sgd_loss_chart(c, points=30).to_dict())
    assert len(rows) == 90 and all(r["loss"] > 0 for r in rows)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: packing_chart(), "packings must be one or more Packing objects"),
        (lambda: packing_chart([1, 2]), "packings must be one or more Packing objects"),
        (lambda: stage_partition_chart(PLAN), "partitions must be one or more StagePartition objects"),
        (lambda: backup_step_chart("plan"), "plan must be a BackupPlan"),
        (lambda: backup_step_chart(PLAN, price=-1), "price must be >= 0, got -1"),
        (lambda: backup_margin_chart(backup_workers(StepTime(1.0), 4, 0)), "plan must be a BackupPlan with max_backups >= 1"),
        (lambda: backup_tails_chart({}), "plans must be a dict of"),
        (lambda: hedging_chart(StepTime(1.0)), "latency must be a RequestLatency"),
        (lambda: hedging_chart(tail_at_scale_latency(), fanout=0), "fanout must be a whole number >= 1, got 0"),
        (lambda: hedging_chart(tail_at_scale_latency(), delay_ms=-1), "delay_ms must be >= 0, got -1"),
        (lambda: hedging_tradeoff_chart(None), "tradeoff must be a HedgingTradeoff"),
        (lambda: sgd_loss_chart(None), "comparison must be an SGDComparison"),
    ],
)
def test_mitigation_charts_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
