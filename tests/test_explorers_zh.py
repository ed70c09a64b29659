"""The explorers in Chinese: every label, option, button and readout a reader sees.

With ``set_language("zh")`` each public explorer is built and its widget tree
walked: descriptions, option labels, button texts, tooltips, placeholders and
the text of HTML/Label widgets. A text with Latin words and no CJK character
fails, unless every Latin word in it is a symbol or unit on ``ALLOWED``.
The charts inside an explorer are the charts room's (tests/test_charts_zh.py).

The barrier lab and the real SGD sandbox start processes only when Run is
pressed, so building them here starts none.
"""

from __future__ import annotations

import re

import ipywidgets as widgets
import numpy as np
import pytest

from straggle_edu import explorers
from straggle_edu.i18n import set_language
from test_zh_style import number_slips

# Symbols, units and proper names that stay as they are in the Chinese edition: phrases first, then words.
PHRASES = ("1F1B", "E[max]", "p99.9", "p99", "all-reduce", "p2p", "Karmarkar-Karp")
ALLOWED = {"n", "p", "s", "ms", "min", "GPU", "DP", "PP", "TP", "GB", "CSV", "x", "rank", "dp", "GPipe", "LPT",
           "Gumbel", "GC", "sigma", "token", "L", "N", "b", "S", "CV",
           # terms the Chinese glossary (docs/zh/glossary.md) keeps in English, as the article does
           "worker", "microbatch", "op", "trace"}
_CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
_LATIN = re.compile(r"[A-Za-z]+")
_TAG = re.compile(r"<[^>]+>")

_TIMES = " ".join(f"{x:.4f}" for x in np.random.default_rng(0).normal(1.0, 0.05, 64))

# Arguments that keep a build quick (or give a readout something to show); every other explorer is built bare.
KWARGS = {
    "expected_max_explorer": {"size": 200},
    "max_histogram_explorer": {"size": 2000},
    "scale_up_explorer": {"text": _TIMES, "n": 8},
    "barrier_lab_explorer": {"workers": 2, "steps": 2, "step_seconds": 0.01},
    "sgd_explorer": {"wall_time": 10.0},
}

EXPLORERS = sorted(name for name in explorers.__all__ if name.endswith("_explorer"))


def _build(name):
    return getattr(explorers, name)(**KWARGS.get(name, {}))


def _texts(widget, where="explorer"):
    """Every (place, text) a reader sees in ``widget`` and the widgets inside it."""
    for attr in ("description", "tooltip", "placeholder"):
        value = getattr(widget, attr, None)
        if isinstance(value, str) and value.strip():
            yield f"{where}.{attr}", value
    for i, tip in enumerate(getattr(widget, "tooltips", None) or ()):
        yield f"{where}.tooltips[{i}]", tip
    for i, label in enumerate(getattr(widget, "_options_labels", None) or ()):
        yield f"{where}.options[{i}]", label
    if isinstance(widget, (widgets.HTML, widgets.Label, widgets.HTMLMath)) and widget.value.strip():
        yield f"{where}.value", _TAG.sub(" ", widget.value)
    for i, child in enumerate(getattr(widget, "children", None) or ()):
        yield from _texts(child, f"{where}[{i}]:{type(child).__name__}")


def untranslated(text):
    """True when ``text`` has a Latin word outside ``ALLOWED`` and no CJK character.

    >>> untranslated("p2p (s)"), untranslated("延迟 (ms)"), untranslated("workers")
    (False, False, True)
    """
    if _CJK.search(text):
        return False
    for phrase in PHRASES:
        text = text.replace(phrase, " ")
    return any(word not in ALLOWED for word in _LATIN.findall(text))


def _values(ex):
    return {name: list(getattr(c, "_options_values", ())) for name, c in ex.controls.items()}


def test_the_allowlist_check_reads_a_text_as_a_reader_would():
    assert not untranslated("1,024") and not untranslated("30 s") and not untranslated("1F1B")
    assert not untranslated("all-reduce (s)") and not untranslated("E[max] 1.2 s")
    assert untranslated("jitter") and untranslated("Run") and untranslated("dp 1 · stage 2")
    assert not untranslated("dp 1 · 第 2 级")


@pytest.mark.parametrize("name", EXPLORERS)
def test_every_explorer_speaks_chinese_and_keeps_its_values(name):
    english = _values(_build(name))
    set_language("zh")
    ex = _build(name)
    found = list(_texts(ex))
    assert found, f"{name} shows no text"
    bad = [(where, text) for where, text in found if untranslated(text)]
    assert not bad, f"{name}: {len(bad)} text(s) left in English:\n" + "\n".join(f"  {w}: {t!r}" for w, t in bad)
    assert _values(ex) == english, f"{name}: option values changed with the language"
    # README 中文版: 4096 with no separator, 万 from 10,000 up (a slider's stops read 1.6384万)
    slips = [(where, text, number_slips(text)) for where, text in found if number_slips(text)]
    assert not slips, f"{name}: numbers against the Chinese rule:\n" + "\n".join(f"  {w}: {t!r}: {n}" for w, t, n in slips)


def test_readouts_write_4096_and_wan_in_chinese():
    set_language("zh")
    ex = explorers.tail_explorer()
    ex.controls["n"].value = 4096
    assert "n = 4096" in ex.readout.value and "4,096" not in ex.readout.value
    labels = dict(ex.controls["n"].options)
    assert labels["4096"] == 4096 and labels["1.6384万"] == 16_384 and labels["10万"] == 100_000
    set_language("en")
    assert "4,096" in dict(explorers.tail_explorer().controls["n"].options) and "16,384" in dict(
        explorers.tail_explorer().controls["n"].options)


def test_a_language_change_applies_to_explorers_built_after_it():
    set_language("en")
    en = explorers.tail_explorer()
    set_language("zh")
    zh = explorers.tail_explorer()
    assert en.controls["p"].description == "p per worker" and en.readout.value.startswith("P(at least one slow)")
    assert zh.controls["p"].description == "每个 worker 的 p" and "至少一个慢" in zh.readout.value
    # The explorer built first keeps its labels; a control's value drives the same param in both.
    assert en.controls["p"].description == "p per worker"
    for ex in (en, zh):
        ex.controls["n"].value = 4096
        assert ex.charts["tail"].params.n == 4096
    set_language("en")
    assert explorers.tail_explorer().controls["target"].description == "mark level"


def test_menus_translate_labels_but_keep_the_english_keys():
    set_language("zh")
    ex = explorers.expected_max_explorer(size=200)
    shape = ex.controls["shape"]
    assert dict(shape.options)["正态"] == "normal" and shape.value == "normal"
    shape.value = "exponential"
    assert shape.label == "指数" and round(float(ex.growth.exact[-1]), 3) == 1.928
    pipe = explorers.pipeline_explorer(dp=1, stages=2, microbatches=2, target="nothing")
    assert pipe.controls["target"].label == "不减速" and pipe.run().step_time == 10.5
    lab = explorers.barrier_lab_explorer(workers=2, steps=2, step_seconds=0.01)
    assert [v for __, v in lab.controls["work"].options] == ["sleep", "compute", "fixed"]
    assert lab.controls["slow_rank"].options[0] == ("无", -1) and lab.result is None


def test_a_readout_updated_after_a_change_stays_chinese():
    set_language("zh")
    ex = explorers.lost_fraction_explorer()
    ex.controls["pause_prob"].value = 1e-3
    assert "的时间耗在屏障前" in ex.readout.value and "卡时" in ex.readout.value
    scenarios = {r["scenario"] for r in ex.rows()}
    assert scenarios == {"this cluster", "same jitter, no pauses"}  # the keys stay English
    shown = {r["scenario"] for r in ex.charts["curve"].spec["datasets"][ex.charts["curve"].spec["layer"][0]["data"]["name"]]}
    assert shown == {"这个集群", "同样抖动，没有停顿"}


def test_the_barrier_labs_run_readout_is_chinese_without_starting_processes():
    from straggle_edu.explorers.barrier_lab import _prediction_text
    from straggle_edu.models.barrier_lab import Prediction

    p = Prediction(measured=0.05, stderr=0.001, predicted=0.049, expected_max=0.045, overhead=0.004, drawn_max=0.046, steps=20)
    assert _prediction_text(p) == str(p)  # English: the model's own line
    set_language("zh")
    assert _prediction_text(p).startswith("实测每步 50.00 ± 1.00 ms") and "屏障开销 4.00 ms" in _prediction_text(p)


@pytest.mark.parametrize("clicked", ["dp 2 · stage 0", "dp 2 · 阶段 0"])
def test_a_click_on_the_heatmap_finds_the_worker_in_either_language(clicked):
    set_language("zh")
    ex = explorers.debug_job_explorer()
    assert ex.controls["worker"].label.startswith("dp ") and "阶段" in ex.controls["worker"].label
    ex.charts["heatmap"]._vl_selections = {"worker": {"value": {"vlPoint": {"or": [{"worker": clicked}]}}, "store": []}}
    assert ex.controls["worker"].value == (2, 0)
    assert ex.charts["ops"].spec["title"] == "dp 2 · 阶段 0，第 {} 步：记录值与理想值".format(ex.controls["step"].value)


# Explorers whose every control can be moved to its far end in well under a second.
QUICK = ["backup_explorer", "barrier_explorer", "barriers_explorer", "budget_explorer", "cost_explorer",
         "detector_explorer", "dp_scaling_explorer", "gc_explorer", "hedging_explorer", "independence_explorer",
         "lost_fraction_explorer", "packing_explorer", "partition_explorer", "percentile_explorer", "pipeline_explorer",
         "restaurant_explorer", "slow_card_explorer", "speedup_explorer", "stage_imbalance_explorer",
         "start_here_explorer", "tail_explorer"]


def _far_end(control):
    """Move ``control`` to its last option or its maximum (controls without a range stay)."""
    if getattr(control, "_options_values", None):
        control.value = control._options_values[-1]
    elif control.has_trait("max") and control.has_trait("value") and not control.disabled:
        control.value = control.max if not isinstance(control, widgets.FloatLogSlider) else control.base**control.max


@pytest.mark.parametrize("name", QUICK)
def test_readouts_stay_chinese_after_every_control_moves(name):
    set_language("zh")
    ex = _build(name)
    for control in ex.controls.values():
        _far_end(control)
    bad = [(where, text) for where, text in _texts(ex) if untranslated(text)]
    assert not bad, f"{name}: {bad}"
