"""Tests for the root-cause explorers: set a control's value, check what changed."""

import math

import pytest
from _chartdata import layer_rows

from straggle_edu.explorers.root_causes import (
    MYSTERY,
    debug_checklist_explorer,
    gc_explorer,
    sequence_imbalance_explorer,
    stage_imbalance_explorer,
)
from straggle_edu.models.causes import CAUSES, gc_expected_step_time, output_layer_cost
from straggle_edu.traces.diagnose import OP_QUESTIONS


def _rows(jchart, layer=0):
    """What the browser draws: the JupyterChart's spec (explorers patch it in place)."""
    return layer_rows(jchart.spec, layer)


def test_sequence_imbalance_explorer_packing_and_bounds():
    ex = sequence_imbalance_explorer(workers=16, seed=1)
    whole = ex.result().slowdown
    ex.controls["batching"].value = "packed"
    assert ex.controls["sequences"].disabled and not ex.controls["token_budget"].disabled
    assert ex.result().token_spread == 1.0
    assert ex.result().slowdown < whole
    assert "attention is" in ex.readout.value
    ex.controls["attention"].value = 0.0
    assert ex.result().slowdown == pytest.approx(1.0)
    ex.controls["sigma"].value = 0.0
    ex.controls["batching"].value = "whole sequences"
    assert ex.result().slowdown == pytest.approx(1.0)
    for name in ("workers", "median", "token_budget"):
        slider = ex.controls[name]
        slider.value = slider.base ** slider.max  # a log slider's max is an exponent
    ex.controls["sigma"].value = 2.0
    assert len(_rows(ex.charts["load"])) == 1024


def test_stage_imbalance_explorer_moving_layers():
    ex = stage_imbalance_explorer()
    assert "2.29 layers" in ex.readout.value
    before = ex.result().slowdown
    ex.controls["moved"].value = 2
    assert ex.result().layers_per_stage.tolist() == [9, 9, 8, 6]
    assert ex.result().slowdown < before
    assert ex.charts["stages"].spec["title"] == f"slowdown {ex.result().slowdown:.3f}x"
    assert sorted(r["layers"] for r in _rows(ex.charts["stages"]) if r["part"] == "layers") == [6, 8, 9, 9]
    ex.controls["vocab"].value = 32000
    assert math.isclose(ex.result().extra_costs[-1], output_layer_cost(4096, 32000, 4096))
    # no range errors: the most stages on the fewest layers, every move
    ex.controls["layers"].value = 4
    ex.controls["stages"].value = 16
    for k in range(ex.controls["moved"].max + 1):
        ex.controls["moved"].value = k
        assert ex.result().layers_per_stage.sum() == 4


def test_gc_explorer_gain_matches_closed_form():
    ex = gc_explorer(workers=64, pause=0.3, interval=10)
    want = gc_expected_step_time(64, pause=0.3, interval=10) / gc_expected_step_time(64, pause=0.3, interval=10, planned=True) - 1
    assert ex.gain() == pytest.approx(want)
    assert "planned GC gives" in ex.readout.value
    ex.controls["pause"].value = 0.0
    assert ex.gain() == pytest.approx(0.0)
    ex.controls["interval"].value = 1.0
    ex.controls["pause"].value = 2.0
    assert ex.gain() == pytest.approx(0.0)  # everyone collects every step either way
    modes = {r["mode"] for r in _rows(ex.charts["steps"])}
    assert modes == {"random GC", "planned GC"}


def test_debug_checklist_reveals_answers_only_when_ticked():
    ex = debug_checklist_explorer(cause="slow worker", seed=0)
    assert all(ex.answers[q].value == "" for q in OP_QUESTIONS)
    ex.checks["Which worker?"].value = True
    assert "DP rank 1, stage 0" in ex.answers["Which worker?"].value
    ex.checks["cause"].value = True
    assert "slow worker" in ex.answers["cause"].value
    ex.controls["cause"].value = "last stage"
    assert "no single worker" in ex.answers["Which worker?"].value
    assert "last stage" in ex.answers["cause"].value
    stage_s = {r["id"]: r["S"] for r in layer_rows(ex.charts["attribution"].spec) if r["group"] == "stage"}
    assert max(stage_s, key=stage_s.get) == "3"
    assert len(_rows(ex.charts["steps"])) == 20


def test_debug_checklist_mystery_is_seeded_and_every_choice_works():
    ex = debug_checklist_explorer(cause=MYSTERY, seed=3)
    first = ex.scenario().cause
    assert first in CAUSES and first != "none"
    ex.controls["seed"].value = 4
    ex.controls["seed"].value = 3
    assert ex.scenario().cause == first
    for cause in [MYSTERY, *CAUSES]:
        ex.controls["cause"].value = cause
        for q in ex.checks:
            ex.checks[q].value = True
        assert all(ex.answers[q].value for q in ex.checks)
    ex.controls["severity"].value = 0.0
    assert ex.diagnosis().slowdown == pytest.approx(1.0, abs=0.05)


def test_sequence_imbalance_explorer_defaults_match_the_notebook_and_waste_is_never_negative_zero():
    from straggle_edu.models.causes import sequence_imbalance

    # 06_root_causes.ipynb quotes sequence_imbalance(64, sequences=8, rng=0): the explorer's defaults are that setup
    ex = sequence_imbalance_explorer()
    notebook = sequence_imbalance(64, sequences=8, rng=0)
    assert ex.result().slowdown == pytest.approx(notebook.slowdown)
    assert "S = <b>3.69x</b>" in ex.readout.value and "2.64x the mean tokens" in ex.readout.value
    # equal tokens and no attention: S is 1 up to rounding (waste -2e-16 at 1024 workers), shown as 0%
    ex = sequence_imbalance_explorer(workers=1024, packed=True, attention=0.0)
    assert ex.result().waste <= 0.0
    assert "waste 0%" in ex.readout.value and "-0%" not in ex.readout.value


@pytest.mark.parametrize("make, kwargs, message", [
    (sequence_imbalance_explorer, {"workers": 4096}, r"workers must be in \[2, 1024\], got 4096"),
    (stage_imbalance_explorer, {"hidden": 3000}, r"hidden must be one of 1024, .*, got 3000"),
    (gc_explorer, {"pause": -1}, r"pause must be in \[0, 2\], got -1"),
    (debug_checklist_explorer, {"cause": "gremlins"}, r"cause must be one of 'mystery job', .*, got 'gremlins'"),
])
def test_root_cause_explorers_refuse_bad_starting_values(make, kwargs, message):
    # They once clamped them silently (4096 workers became 1024); now they raise.
    with pytest.raises(ValueError, match=message):
        make(**kwargs)
