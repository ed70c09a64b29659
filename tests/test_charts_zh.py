"""The charts in Chinese: every public chart, built with ``set_language("zh")``, shows no English prose.

Each chart of ``straggle_edu.charts.__all__`` is built from small sample data
(as its doctest and its ``test_charts_*`` file build it). The test walks the
Vega-Lite spec (``to_dict()``) and its inline data and collects what a reader
sees: titles (chart, axis, legend, header, tooltip), text-mark literals, the
string literals of Vega expressions that write text, and the string values of
every field a nominal or ordinal encoding shows (legend entries, facet
labels, axis categories, tooltips). A text fails when it has a Latin word but
no CJK character, unless every word is on the small allowlist of symbols,
units and names that stay as they are in Chinese (n, p, E[max], p99, ms, GPU,
DP/PP/TP, rank, the trace's optype names, ...).

The English build must stay English (no CJK anywhere), and every chart names
the font list :data:`straggle_edu.i18n.FONT`.
"""

import json
import re

import numpy as np
import pytest
from _chartdata import all_rows
from scipy import stats

import straggle_edu.charts as charts
from straggle_edu.charts._data import rows_of
from straggle_edu.charts.barrier_lab import fixed_work_chart
from straggle_edu.i18n import FONT, _, set_language
from straggle_edu.models.hedging import tail_at_scale_latency
from straggle_edu.models.max_growth import normal_max_sigmas, step_time_dist
from straggle_edu.models.step_draws import draw_steps
from straggle_edu.traces.synthetic import cause_gallery

# Words that stay as they are in a Chinese chart: symbols, units, proper names
# and identifiers a reader greps for (one-letter symbols always pass).
ALLOWED_WORDS = {
    "max", "ms", "GPU", "GPUs", "DP", "PP", "TP", "dp", "SE", "nats", "ln", "rank", "LPT", "Karmarkar", "Karp", "GC",
    "OSDI", "SGD", "all", "reduce", "token", "symlog", "pp", "comm",
    # a command line the reader types, as it is typed (the fleet's worst jobs: straggle-edu analyze x.csv)
    "straggle", "edu", "analyze", "csv", "parquet",
    # terms the Chinese glossary (docs/zh/glossary.md) keeps in English, as the article does
    "worker", "microbatch", "op", "trace",
}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z]{2,}")


def _optype_words():
    from straggle_edu.traces.diagnose import COMM_OPTYPES
    from straggle_edu.traces.optrace import OPTYPES

    return {w for name in (*OPTYPES, *COMM_OPTYPES) for w in WORD.findall(name)}


def _english_words(text):
    """The Latin words of ``text`` a Chinese reader should not see (none if it has CJK)."""
    if CJK.search(text):
        return []
    allowed = ALLOWED_WORDS | _optype_words()
    return [w for w in WORD.findall(text) if w not in allowed]


# ------------------------------------------------------------ sample data ---


def _analysis():
    from straggle_edu.traces.synthetic import synthetic_trace
    from straggle_edu.traces.whatif import analyze_ops

    return analyze_ops(synthetic_trace(dp=2, pp=2, microbatches=2, steps=3, slow_worker=(1, 0, 3.0)))


def _diagnosis():
    from straggle_edu.models.causes import straggler_scenario
    from straggle_edu.traces.diagnose import diagnose_job

    return diagnose_job(straggler_scenario("slow worker", rng=0))


def _growth(shapes):
    from straggle_edu.models.max_growth import max_growth, step_time_dist

    if not shapes:
        return max_growth(stats.norm(), [1, 10, 100], size=50, rng=0)
    return {s: max_growth(step_time_dist(s, mean=1.0, std=0.1), [1, 10, 100], size=50, rng=0) for s in ("normal", "log-normal")}


def _hist():
    from straggle_edu.models.max_growth import max_histograms

    return max_histograms(stats.norm(), [1, 64], size=300, bins=8, rng=0)


def _scaling():
    from straggle_edu.models.step_time import StepTime
    from straggle_edu.models.training_step import data_parallel_scaling

    return data_parallel_scaling([1, 8, 64], StepTime(1.0, jitter=0.05))


def _plan():
    from straggle_edu.models.backup import backup_workers, inception_50_setup

    return backup_workers(**inception_50_setup(), max_backups=4)


def _tradeoff():
    from straggle_edu.models.hedging import hedging_tradeoff, tail_at_scale_latency

    return hedging_tradeoff(tail_at_scale_latency(), [0.005, 0.010, 0.050], q=0.999, fanout=1000)


def _sgd():
    from straggle_edu.models import StepTime
    from straggle_edu.models.sgd import compare_sgd, make_problem

    return compare_sgd(StepTime(1.0, jitter=0.1, pause_prob=0.05, pause=1.0), make_problem(rng=0), 2, 20.0)


def _worker_ops():
    from straggle_edu.traces.whatif import worker_timeline

    return charts.worker_ops_chart(worker_timeline(_analysis(), 1, 0, 0), title="")


def _pipeline(**kwargs):
    from straggle_edu.models.pipeline import simulate_pipeline

    return simulate_pipeline(2, 2, forward=1.0, backward=2.0, **kwargs)


def _balance(kind):
    from straggle_edu.models.balance import greedy_lpt, partition_layers, split_in_order, split_layers_evenly

    if kind == "packing":
        return charts.packing_chart(split_in_order([8, 7, 1, 1], 2), greedy_lpt([8, 7, 1, 1], 2))
    return charts.stage_partition_chart(split_layers_evenly([1] * 8, 4, last_stage_extra=1.5),
                                        partition_layers([1] * 8, 4, last_stage_extra=1.5))


def _backup_tails():
    from straggle_edu.models.backup import backup_workers
    from straggle_edu.models.step_time import StepTime

    tails = {"rare stalls: 3% of steps, +0.55 s": StepTime(1.1, jitter=0.02, pause_prob=0.03, pause=0.55),
             "Gaussian jitter, σ = 5%": StepTime(1.1, jitter=0.05)}
    return charts.backup_tails_chart({k: backup_workers(d, 20, 3, sync=0.1, sync_per_worker=0.012) for k, d in tails.items()})


def _scale_prediction():
    from straggle_edu.models.empirical import predict_at_scale

    return charts.scale_prediction_chart(predict_at_scale(np.linspace(0.9, 1.1, 50), 64, boot=20, rng=0))


def _tail_percentile():
    from straggle_edu.models.step_time import StepTime

    return charts.tail_percentile_chart(StepTime(0.1, jitter=0.05), n=100, points=60)


def _sequence_lengths():
    from straggle_edu.models.causes import sequence_lengths

    return charts.sequence_lengths_chart(sequence_lengths(500, rng=0))


def _stage_costs():
    from straggle_edu.models.causes import stage_imbalance

    return charts.stage_costs_chart(stage_imbalance(32, 4, 8, output_layers=2.3))


def _grid():
    from straggle_edu.models.barriers import grid_waits

    return charts.grid_chart(grid_waits(2, 2, 2, slow=(1, 0, 1), factor=2.0, microbatches=2))


def _step_barriers():
    from straggle_edu.models.barriers import step_barriers

    return step_barriers(2, 2, 2, microbatches=2, layers_per_stage=2)


def _barrier():
    from straggle_edu.models.restaurant import run_with_barrier

    return charts.barrier_chart(run_with_barrier([[1.0, 1.5], [2.0, 1.0]]))


def _alarms(kind):
    from straggle_edu.models.detector import simulate_reports

    if kind == "n":
        sim = charts.simulated_rows(simulate_reports(4, 1, stats.expon(), 50, [0.5], rng=0), 300)
        return charts.alarms_vs_n_chart(charts.alarm_rows([2, 4, 8], [0.5, 0.7], 1, stats.expon(), 300), sim)
    return charts.alarms_vs_threshold_chart(charts.threshold_rows(4, 1, stats.expon(), 300, [0.5, 0.6, 0.7]), pick=0.55)


def _barrier_overhead():
    from straggle_edu.models.barriers import barrier_overhead_rows

    return charts.barrier_overhead_chart(barrier_overhead_rows(8, 0.05, 8), barriers=8)


def _lost_fraction():
    from straggle_edu.models.step_time import StepTime
    from straggle_edu.models.waste import lost_fraction_curves

    scenarios = {"3% jitter": StepTime(1.0, jitter=0.03), "1% jitter": StepTime(1.0, jitter=0.01)}
    return charts.lost_fraction_chart(lost_fraction_curves(2 ** np.arange(6), scenarios), n_mark=16)


def _fleet_figures():
    # job ids are identifiers, shown as they are: these have no Latin word
    worst = [{"job_id": f"{i:04d}", "slowdown": 2.0 - i / 10, "waste": 0.5 - i / 20, "gpu_hours_lost": 100.0 - i,
              "analyze": f"straggle-edu analyze {i}.csv"} for i in range(3)]
    return {"slowdown_cdf": [[1.0, 0.5], [1.2, 0.8], [2.0, 1.0]], "waste_cdf": [[0.0, 0.5], [0.17, 0.8], [0.5, 1.0]],
            "share_slowed_10pct": 0.5, "gpu_hours_lost": 300.0, "worst": worst,
            "gpu_hours_lost_by_class": {"compute": 200.0, "communication": 80.0, "none": 20.0},
            "gpu_hours_lost_by_where": {"last-stage": 150.0, "single-dp-rank": 50.0, "single-worker": 40.0, "spread": 60.0},
            "lost_curve": {"by_lost": [[0.0, 0.0], [0.5, 0.8], [1.0, 1.0]], "by_waste": [[0.0, 0.0], [0.5, 0.6], [1.0, 1.0]]}}


def _profiler_analysis():
    from straggle_edu.traces.syncpoints import _demo_trace, analyze_profiler

    return analyze_profiler(_demo_trace([[1.0, 1.5]] * 3))


_GAINS = {"lost": 300.0, "replace": {"jobs": 1, "gpu_hours": 40.0, "share": 0.13},
          "rebalance": {"jobs": 2, "gpu_hours": 120.0, "share": 0.4}}

BUILDERS = {
    "sgd_curves_chart": lambda: charts.sgd_curves_chart(
        [{"scheme": s, "wall_s": t / 10, "gradients_applied": 8 * t, "loss": 1 / t} for s in ("sync", "backup") for t in (1, 2, 3)]
        + [{"scheme": "sync (07 model)", "wall_s": t / 10, "gradients_applied": 8 * t, "loss": 1 / t, "kind": "predicted"}
           for t in (1, 2)]),
    "lab_gantt_chart": lambda: charts.lab_gantt_chart([[0.05, 0.10], [0.05, 0.10]], [[0.05, 0.0], [0.05, 0.0]]),
    "lab_prediction_chart": lambda: charts.lab_prediction_chart(0.061, 0.001, 0.060, 0.0004),
    "bill_chart": lambda: charts.bill_chart(),
    "lost_dollars_chart": lambda: charts.lost_dollars_chart(),
    "delay_framings_chart": lambda: charts.delay_framings_chart(),
    "milestones_chart": lambda: charts.milestones_chart(),
    "lost_fraction_chart": _lost_fraction,
    "trace_heatmap_chart": lambda: charts.trace_heatmap_chart(_analysis(), max_rows=6),
    "trace_attribution_chart": lambda: charts.trace_attribution_chart(_analysis(), "by_optype"),
    "worker_ops_chart": _worker_ops,
    "cause_gallery_chart": lambda: charts.cause_gallery_chart(cause_gallery(steps=2)),
    "collective_tell_chart": lambda: charts.collective_tell_chart({0: 0.063, 1: 0.054}, culprit=1),
    "arrival_chart": lambda: charts.arrival_chart(_profiler_analysis()),
    "report_scores_chart": lambda: charts.report_scores_chart([1.0, 0.9, 0.8], bins=4),
    "alarms_vs_n_chart": lambda: _alarms("n"),
    "alarms_vs_threshold_chart": lambda: _alarms("threshold"),
    "expected_max_chart": lambda: charts.expected_max_chart(_growth(shapes=True)),
    "max_histograms_chart": lambda: charts.max_histograms_chart(_hist()),
    "max_vs_one_chart": lambda: charts.max_vs_one_chart(_hist(), n=64),
    "speedup_chart": lambda: charts.speedup_chart(np.array([1, 2, 4]), normal_max_sigmas(np.array([1, 2, 4, 2, 4, 8])), n_mark=2),
    "step_draws_chart": lambda: charts.step_draws_chart(draw_steps(step_time_dist("normal", 1.0, 0.1), 64, 5, bins=10, rng=0), k=3),
    "bill_sentence_chart": lambda: charts.bill_sentence_chart(),
    "slow_card_chart": lambda: charts.slow_card_chart(
        [{"n": n, "jitter": j, "job_slowdown": 0.05 / (1 + 10 * j * n)} for n in (1, 2) for j in (0.0, 0.02)], n_mark=2),
    "independence_chart": lambda: charts.independence_chart(
        [{"n": n, "model": m, "p_any": 0.1, "max_sigma": 1.0} for n in (1, 8) for m in ("independent", "correlated")]),
    "scale_prediction_chart": _scale_prediction,
    "backup_margin_chart": lambda: charts.backup_margin_chart(_plan(), price=2.0),
    "backup_step_chart": lambda: charts.backup_step_chart(_plan()),
    "backup_tails_chart": _backup_tails,
    "hedging_chart": lambda: charts.hedging_chart(tail_at_scale_latency(), points=60),
    "hedging_tradeoff_chart": lambda: charts.hedging_tradeoff_chart(_tradeoff()),
    "packing_chart": lambda: _balance("packing"),
    "sgd_loss_chart": lambda: charts.sgd_loss_chart(_sgd(), points=20),
    "stage_partition_chart": lambda: _balance("stages"),
    "restaurant_chart": lambda: charts.restaurant_chart(),
    "barrier_chart": _barrier,
    "attribution_chart": lambda: charts.attribution_chart(_diagnosis()),
    "gc_chart": lambda: charts.gc_chart([1.0, 1.5, 1.0], [1.1, 1.1, 1.1]),
    "per_step_chart": lambda: charts.per_step_chart(_diagnosis()),
    "sequence_lengths_chart": _sequence_lengths,
    "stage_costs_chart": _stage_costs,
    "study_waste_chart": lambda: charts.study_waste_chart(),
    "worker_heatmap_chart": lambda: charts.worker_heatmap_chart(_diagnosis()),
    "worker_load_chart": lambda: charts.worker_load_chart([1.0, 1.2, 0.8]),
    "job_vs_average_chart": lambda: charts.job_vs_average_chart([1, 10, 100], [1.0, 1.5, 1.9], 1.0, n=10),
    "tail_probability_chart": lambda: charts.tail_probability_chart(n_max=1000),
    "tail_budget_chart": lambda: charts.tail_budget_chart(n=1000, target=0.01),
    "tail_percentile_chart": _tail_percentile,
    "barrier_overhead_chart": _barrier_overhead,
    "grid_chart": _grid,
    "grid_barriers_chart": lambda: charts.grid_barriers_chart(_step_barriers()),
    "grid_step_chart": lambda: charts.grid_step_chart(_step_barriers(), _pipeline(dp=2, allreduce=1.0)),
    "delay_response_chart": lambda: charts.delay_response_chart([0.0, 1.0, 2.0], [0.0, 0.0, 0.5], slack=1.5),
    "dp_breakdown_chart": lambda: charts.dp_breakdown_chart(_scaling()),
    "dp_scaling_chart": lambda: charts.dp_scaling_chart({"5% jitter": _scaling(), "your setting": _scaling()}, n=8),
    "pipeline_gantt_chart": lambda: charts.pipeline_gantt_chart(_pipeline(dp=2)),
    "pipeline_gantt_chart[op]": lambda: charts.pipeline_gantt_chart(_pipeline(), color="op"),
    "expected_max_chart[one]": lambda: charts.expected_max_chart(_growth(shapes=False), n_mark=10),
    "fixed_work_chart": lambda: fixed_work_chart([[0.010, 0.011], [0.012, 0.010]], max_n=8),
    "slowdown_cdf_chart": lambda: charts.slowdown_cdf_chart(_fleet_figures()),
    "waste_cdf_chart": lambda: charts.waste_cdf_chart(_fleet_figures()),
    "lost_by_culprit_chart": lambda: charts.lost_by_culprit_chart(_fleet_figures()),
    "worst_jobs_chart": lambda: charts.worst_jobs_chart(_fleet_figures()),
    "remedy_chart": lambda: charts.remedy_chart(_GAINS),
    "lost_curve_chart": lambda: charts.lost_curve_chart(_fleet_figures()),
}


# ------------------------------------------------------- reading the spec ---

_TEXT_CHANNELS = ("text",)


def _titles(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _titles(v)
    elif isinstance(value, dict):
        for key in ("text", "subtitle"):
            yield from _titles(value.get(key))


def _expression_texts(expr):
    """The string literals of a Vega expression, except those compared with ``==``/``!=`` (internal keys)."""
    out, i = [], 0
    while i < len(expr):
        quote = expr[i]
        if quote not in "'\"":
            i += 1
            continue
        j = i + 1
        while j < len(expr) and expr[j] != quote:
            j += 2 if expr[j] == "\\" else 1
        if not re.search(r"[=!]=\s*$", expr[:i]):
            out.append(expr[i + 1:j])
        i = j + 1
    return out


def visible_texts(spec):
    """``(where, text)`` for every text a reader of the chart sees (see the module docstring)."""
    found, fields = [], set()

    def encoding(channel, enc):
        for e in enc if isinstance(enc, list) else [enc]:
            if not isinstance(e, dict):
                continue
            for t in _titles(e.get("title")):
                found.append((f"{channel} title", t))
            if isinstance(e.get("value"), str) and channel in _TEXT_CHANNELS:
                found.append((f"{channel} value", e["value"]))
            if e.get("type") in ("nominal", "ordinal") and isinstance(e.get("field"), str):
                fields.add(e["field"])
            for key in ("axis", "legend", "header"):
                if isinstance(e.get(key), dict):
                    for t in _titles(e[key].get("title")):
                        found.append((f"{channel} {key} title", t))
                    if "labelExpr" in e[key]:
                        found.extend((f"{channel} labelExpr", t) for t in _expression_texts(e[key]["labelExpr"]))

    def walk(node):
        if isinstance(node, dict):
            if "title" in node and ("mark" in node or "layer" in node or "hconcat" in node or "vconcat" in node
                                    or "facet" in node or "spec" in node):
                found.extend(("chart title", t) for t in _titles(node["title"]))
            mark = node.get("mark")
            if isinstance(mark, dict) and isinstance(mark.get("text"), str):
                found.append(("text mark", mark["text"]))
            for channel, enc in (node.get("encoding") or {}).items():
                encoding(channel, enc)
            if isinstance(node.get("facet"), dict):
                for channel, enc in node["facet"].items():
                    encoding(f"facet {channel}", enc) if isinstance(enc, dict) and "field" in enc else None
                if "field" in node["facet"]:
                    encoding("facet", node["facet"])
            for t in node.get("transform") or []:
                if "calculate" in t:
                    found.extend((f"calculate {t['as']}", s) for s in _expression_texts(t["calculate"]))
            for key, value in node.items():
                if key not in ("data", "datasets", "config"):
                    walk(value)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    for row in all_rows(spec):
        for field in fields & set(row):
            if isinstance(row[field], str):
                found.append((f"data {field}", row[field]))
    return found


def _build(name):
    return BUILDERS[name]()


# ------------------------------------------------------------------ tests ---


def test_every_public_chart_has_a_builder():
    public = {name for name in charts.__all__ if name.endswith("_chart")}
    assert public <= {name.split("[")[0] for name in BUILDERS}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_chart_in_chinese_shows_no_english_prose(name):
    set_language("zh")
    assert _("workers n") != "workers n", "the zh catalog is not compiled: python -m straggle_edu.i18n.catalog compile"
    spec = _build(name).to_dict()
    texts = visible_texts(spec)
    assert texts, "found no text at all: the walk is broken"
    english = sorted({(where, text) for where, text in texts if _english_words(text)})
    assert not english, f"{name} shows English in Chinese: {english[:12]}"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_chart_in_english_stays_english_with_the_font_list(name):
    spec = _build(name).to_dict()
    dumped = json.dumps({k: v for k, v in spec.items() if k != "config"}, ensure_ascii=False)
    assert not CJK.search(dumped), CJK.search(dumped)
    config = spec["config"]
    assert config["font"] == FONT
    assert config["axis"]["labelFont"] == config["legend"]["titleFont"] == config["title"]["font"] == FONT
    assert config["header"]["labelFont"] == config["text"]["font"] == FONT


def test_english_text_is_unchanged():
    spec = charts.bill_chart().to_dict()
    assert [r["label"] for r in spec["data"]["values"]][:2] == ["GPU-hours allocated", "GPU-hours lost to waiting"]
    spec = charts.lab_prediction_chart(0.061, 0.001, 0.060, 0.0004).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["title"] == "mean step time (ms)"


def test_chinese_text_uses_the_catalog():
    set_language("zh")
    spec = charts.lab_prediction_chart(0.061, 0.001, 0.060, 0.0004).to_dict()
    assert sorted(r["what"] for r in rows_of(spec, spec["layer"][0]["data"])) == sorted(["E[max]（模型）", "屏障开销（实测）"])
    assert spec["config"]["font"] == FONT
    labels = [t for where, t in visible_texts(charts.job_vs_average_chart([1, 10], [1.0, 1.5], 1.0).to_dict())
              if where.startswith("calculate label")]
    assert any("个 worker 只干了" in t for t in labels), labels


def test_known_categories_are_translated_and_a_readers_own_are_kept():
    set_language("zh")
    rows = [{"n": 1, "scenario": "3% jitter", "lost": 0.0}, {"n": 1, "scenario": "my cluster", "lost": 0.1}]
    spec = charts.lost_fraction_chart(rows).to_dict()
    assert {r["scenario"] for r in rows_of(spec, spec["layer"][0]["data"])} == {"3% 抖动", "my cluster"}


def test_a_cached_skeleton_follows_the_language():
    english = visible_texts(_build("trace_heatmap_chart").to_dict())
    set_language("zh")
    chinese = visible_texts(_build("trace_heatmap_chart").to_dict())
    assert ("chart title", "worker slowdown per step (slowest workers)") in english
    assert ("chart title", "每步各 worker 的减速比（仅最慢的 worker）") in chinese


def test_english_words_allows_symbols_units_and_optypes():
    assert _english_words("E[max of n] (ms)") == ["of"]
    assert _english_words("p99 作业") == []
    assert _english_words("DP rank 3") == []
    assert _english_words("forward-compute") == _english_words("backward-pp-comm") == []
    assert _expression_texts("""datum.key == 'job' ? "整个作业" : format(datum.x, '.1f') + ' ms'""") == ["整个作业", ".1f", " ms"]
    assert _english_words("slowest of n") == ["slowest", "of"]


def test_chinese_charts_write_numbers_as_the_prose_does():
    # README 中文版 (the zh review's S3, S4): no separator below 10,000, 万 from 10,000 up, in what a chart draws
    from _vega import drawn_texts

    set_language("zh")
    bill = drawn_texts(charts.bill_chart(gpus=4096, days=10, lost_fraction=0.1, usd_per_gpu_hour=2.0))
    assert ["98.3万", "9.83万", "19.66万美元"] == [t for t in bill if "万" in t]
    dollars = drawn_texts(charts.lost_dollars_chart(gpus=4096, days=10, lost_fraction=0.1, usd_per_gpu_hour=2.0))
    assert "20万美元" in dollars and not [t for t in dollars if "$" in t or "," in t]
    assert charts.bill_chart().to_dict()["config"]["locale"]["number"]["thousands"] == ""  # tooltips: 4096
    set_language("en")
    assert ["983,040", "98,304", "$196,608"] == [t for t in drawn_texts(
        charts.bill_chart(gpus=4096, days=10, lost_fraction=0.1, usd_per_gpu_hour=2.0)) if re.search(r"\d,\d", t)]
