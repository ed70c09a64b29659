"""The Chinese edition says what the English means: the fixes of the Chinese review (issue 22) no general rule holds.

A word that is wrong everywhere (标记水平, 评测, 动态规划切分 ...) is a 不写作 form in
``docs/zh/glossary.md`` and ``tests/test_zh_style.py`` finds it; so does English
left in a twin's prose. What is left are sentences and labels whose wrong
rendering is made of right words: a "tell" read as an opinion, one server in
100 where each server is slow on 1 request in 100, a step's time called its
expectation, a script and its output read as one file, 08's card titles in a
paraphrase instead of the article's words, and a twin naming a control by
another name than the control shows. Each is held here by its fixed wording,
quoted; the article's sentences the card titles take their words from are
quoted too (``shared/article-zh.txt`` is not part of the clone).

A twin's cell is found beside its English one (the twins have the same cells,
``tests/test_zh_notebooks.py``), so a cell moving keeps the test on it.
"""

import re
from pathlib import Path

import nbformat
import pytest

from straggle_edu.i18n import _, set_language

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(autouse=True)
def _zh():
    set_language("zh")
    yield
    set_language("en")


def zh_cell_beside(name, english):
    """The markdown of the zh twin's cell at the place of the English cell of ``name`` that holds ``english``."""
    cells = nbformat.read(NOTEBOOKS / name, as_version=4).cells
    places = [i for i, cell in enumerate(cells) if cell.cell_type == "markdown" and english in cell.source]
    assert len(places) == 1, f"{name}: {len(places)} English markdown cells hold {english!r}"
    twin = nbformat.read(NOTEBOOKS / "zh" / name, as_version=4).cells[places[0]]
    assert twin.cell_type == "markdown", f"zh/{name} cell {places[0]} is not markdown"
    return twin.source


def zh_markdown(name):
    """All the markdown of the zh twin ``name``, cell after cell."""
    return "\n\n".join(c.source for c in nbformat.read(NOTEBOOKS / "zh" / name, as_version=4).cells
                       if c.cell_type == "markdown")


# --------------------------------------------------------------------------
# Labels the catalogs show (what ``_`` gives in zh, from the compiled .mo)

# The article's sentences that 08's card titles take their words from (shared/article-zh.txt).
ARTICLE = {
    "backup": "一百块卡，只等最快的九十四份结果，最慢的六个不等了。代价是那六份钱照付。同步频繁、卡又贵的场景下，这个权衡不好做。",
    "5%": "一块卡慢 5%，未必只拖累系统 5%。它拖的比它自己慢得多。",
    "days": "十天变十一天，评估、检查点、微调、下一轮实验、部署，全往后顺一天。",
    "tail": "四成多的作业因为掉队至少慢一成，尾巴上有些作业浪费到四成半的分配资源。",
}

# 08's card titles (claim labels) and readings: (msgid, zh, the article's words it quotes, the article's sentence).
CARD_TITLES = [
    ("wait for the fastest 94 of 100; the six are still paid for; the trade-off is hard",
     "只等最快的九十四份；那六份钱照付；这个权衡不好做", ("只等最快的九十四份", "那六份钱照付", "这个权衡不好做"), "backup"),
    ("the six are still paid for: 6% of the compute thrown away", "那六份钱照付：6% 的算力白算了",
     ("那六份钱照付",), "backup"),
    ("the trade-off is hard: it pays with rare stalls, not with Gaussian jitter",
     "这个权衡不好做：罕见长卡顿时划算，高斯抖动时不划算", ("这个权衡不好做",), "backup"),
    ("5% slower drags far more than 5%", "一块卡慢 5%，拖累的远不止 5%", ("一块卡慢 5%", "拖累"), "5%"),
    ("ten days become eleven", "十天变十一天", ("十天变十一天",), "days"),
    ("some tail jobs waste about 45% or more (the p99 job)", "尾巴上有些作业浪费到约四成半（p99 的作业）",
     ("尾巴上有些作业浪费到", "四成半"), "tail"),
]


@pytest.mark.parametrize("msgid, zh, words, sentence", CARD_TITLES, ids=[row[0][:30] for row in CARD_TITLES])
def test_08_card_titles_are_in_the_article_s_words(msgid, zh, words, sentence):
    assert _(msgid) == zh
    for part in words:
        assert part in zh and part in ARTICLE[sentence], f"{part!r}: not in the title or not the article's words"


LABELS = {
    # 02's claim lines: each server is slow on 1 request in 100 (Dean & Barroso), not 1 server in 100
    "slow requests, 1-in-100 servers, fan-out 100": "慢请求：每台服务器每 100 次慢 1 次，扇出 100 台",
    "slow requests, 1-in-10,000 servers, fan-out 2,000": "慢请求：每台服务器万分之一的请求慢，扇出 2000 台",
    # 04's chart: a way of counting the days lost (held or planned), not an algorithm
    "framing": "口径",
    # 02's slider: the line the chart marks, not a 'level' (水平)
    "mark level": "标记线",
    # the article's 评估、检查点、微调、下一轮实验、部署
    "evaluation": "评估",
    "next experiment on the same GPUs": "同一批卡上的下一轮实验",
    # 07's split of the layers: DP is data parallel everywhere else
    "linear-partition DP": "线性划分（动态规划）",
    # 01's counter is the bar the twin's prose sits at (吧台), not a service window (窗口, the zh review's M4)
    "average wait at a counter (min)": "坐吧台的平均等待（分钟）",
    # the jitter at which the slow card is the slowest on half the steps: 领先 (runs ahead) said it backwards (M3)
    "jitter where the slow card is the slowest on half the steps, 4096 GPUs": "慢卡恰在一半的步里最慢时的抖动，4096 块卡",
    # 04's milestones: the run is deployed (部署, as the prose and the chart say), and what waits for it is a 环节;
    # 阶段 is a pipeline stage (the review's T7)
    "deployment, planned end (day)": "部署，计划结束（第几天）",
    "what waits": "环节",
    # one name for the Pareto tail in the prose, the menu and the charts (the review's T8)
    "pareto": "帕累托",
    # the zh review of 2026-12-05 (issue 26 §7)
    # M2: 09's op legend: the optimizer, GC and layernorm ops are local ops, not local SGD (the SGD legend's "local")
    "local op": "本地 op（不通信）",
    "local": "本地 SGD（local）",
    # T11: analyze's first line names the format in words, not by its key
    "op-level": "op 级",
    "per-rank": "按 rank",
    # S10: 12's axis
    "ranks (symlog scale)": "rank 数（对称对数刻度）",
    # S13: the fleet CLI's worst jobs
    "Worst jobs, by GPU-hours lost (open one with the command after it):": "损失卡时最多的作业（每行末尾是打开它的命令）：",
    "waste = 1 - 1/S = {waste}% of its time and GPU-hours.": "浪费 = 1 − 1/S = {waste}%（时间和卡时都按这个比例浪费）。",
}


@pytest.mark.parametrize("msgid", LABELS)
def test_labels_the_review_found_shifted_read_as_fixed(msgid):
    assert _(msgid) == LABELS[msgid]


def test_the_partition_readout_names_the_split_as_the_chart_does():
    readout = _("1F1B step: even split <b>{even:.1f}</b> layer-times ({even_slowdown:.3f}× the ideal) · "
                "DP split <b>{best:.1f}</b> ({best_slowdown:.3f}×)")
    assert _("linear-partition DP") in readout and not re.search(r"\bDP\b", readout), readout


def test_no_claim_line_or_twin_says_one_server_in_n_is_slow():
    one_server_in_n = re.compile(r"每\s*[\d,]+\s*台服务器")
    for name in ("02_tail_probability.ipynb", "A1_core_in_depth.ipynb"):
        assert not one_server_in_n.search(zh_markdown(name))
    assert "一台服务器每 100 次有 1 次响应慢" in zh_cell_beside("A1_core_in_depth.ipynb", "A server answers slowly")
    catalog = (ROOT / "straggle_edu" / "i18n" / "zh" / "notebooks.po").read_text(encoding="utf-8")
    assert not one_server_in_n.search(catalog)


# --------------------------------------------------------------------------
# Sentences of the twins


def test_09_the_practitioner_s_tell_is_a_giveaway_sign_not_an_opinion():
    heading = zh_cell_beside("09_debug_a_real_job.ipynb", "### The practitioner's tell")
    assert heading.startswith("### 老手的门道：一眼认出掉队者"), heading[:40]
    after = zh_cell_beside("09_debug_a_real_job.ipynb", "The tell points at stage 3")
    assert "这个迹象指向阶段 3" in after
    assert "看法" not in zh_markdown("09_debug_a_real_job.ipynb")
    means = zh_cell_beside("A3_your_job_in_depth.ipynb", "the tell narrows the suspects to stages 0 and 3")
    assert "这个迹象只能把嫌疑缩小到阶段 0 和 3" in means


def test_09_the_op_legend_calls_the_optimizer_and_gc_local_ops_not_local_sgd():
    # the review's M2: the msgid "local" is also 11's local-SGD scheme, so the legend read 「本地 SGD」
    from straggle_edu.charts.debug_job import _OP_KINDS

    assert "local" not in _OP_KINDS and "local op" in _OP_KINDS
    assert _("local op") == "本地 op（不通信）"
    assert "SGD" not in _("local op")


def test_09_and_12_say_one_word_and_one_unit_for_one_thing():
    # the zh review: 09's prose and chart say 重放 and its claim line said 回放 (T4); 12's axis named "symlog" and its
    # interval menu went from "600 s" to "1 小时" (S7, S10)
    assert "重放" in _("replay error with the recorded durations") and "回放" not in zh_markdown("09_debug_a_real_job.ipynb")
    assert _("ranks (symlog scale)") == "rank 数（对称对数刻度）"
    from straggle_edu.explorers.detector import _INTERVALS

    assert all(_(label).endswith(" s") for label, _seconds in _INTERVALS)


def test_09_the_study_s_script_and_its_result_are_two_files_of_one_trace():
    cell = zh_cell_beside("09_debug_a_real_job.ipynb", "The study's own analyzer")
    assert "研究自己的分析器（它的 `wia.py`）对同一份 trace 的分析结果 `result-ST.json` 给出 S = 1.179" in cell
    assert "同一个文件" not in cell


def test_00_a_step_takes_the_maximum_and_its_average_is_the_expected_maximum():
    cell = zh_cell_beside("00_start_here.ipynb", "each step waits for the slowest of them")
    assert "这一步的耗时是它们中的最大值，平均下来就是[期望最大值]" in cell
    assert not re.search(r"这一步的耗时是它们的期望最大值", cell)


def test_00_the_legend_names_the_marks_as_the_claim_lines_print_them():
    cell = zh_cell_beside("00_start_here.ipynb", "a mark says what it was checked against")
    cited = _("cited: {label} = {figure} ({source})")
    calibrated = _("≈ {label} = {value}, calibrated to {target} ({source})")
    assert cited.startswith("引用：") and "，校准到 " in calibrated
    assert "**「引用：…」**" in cell and "**「≈ …，校准到 …」**" in cell
    assert not re.search(r"\bcited\b|\bcalibrated\b", cell)


def test_01_the_sandbox_names_the_button_and_the_slider_by_their_chinese_labels():
    cell = zh_cell_beside("A1_core_in_depth.ipynb", "press *new random draw*")
    assert f"多按几次「{_('new random draw')}」" in cell
    assert f"把{_('spread')}调大" in cell


def test_02_the_sandbox_names_p_and_the_marked_line_as_the_sliders_show_them():
    cell = zh_cell_beside("02_tail_probability.ipynb", "Set p to 1 in 100,000")
    assert f"把 p 设成{_('1 in 100,000')}" in cell
    assert f"把{_('mark level')}挪到 90%" in cell
    q5 = zh_cell_beside("A1_core_in_depth.ipynb", "**q5 (design).** You run a 2,048-GPU job")
    assert "、".join(_(f"1 in {n}") for n in ("1,000", "10,000", "100,000")) in q5


# --------------------------------------------------------------------------
# Two sentences whose halves read alike, and one counting word

def test_08_names_the_two_means_apart():
    # "the slowest worker's mean instead of the mean of the slowest": in Chinese the two halves read alike
    # unless each is spelled out (the review's 08 cell 18).
    cell = zh_cell_beside("08_fact_check.ipynb", "instead of the mean of the slowest")
    assert "「均值最大的那个 worker 的均值」（max E）" in cell, cell
    assert "「每步最慢者用时的均值」（E[max]" in cell, cell


def test_12_counts_false_alarms_per_report():
    # P(a report is a false alarm): 每次报告, as the prose and the explorer say, never 每份.
    sources = [zh_markdown("12_detector_thresholds.ipynb"), *(p.read_text(encoding="utf-8")
               for p in (ROOT / "straggle_edu" / "i18n" / "zh").glob("*.po"))]
    assert not [s for s in sources if "每份报告" in s]
    assert "每次报告" in zh_markdown("12_detector_thresholds.ipynb")


def test_03_the_slow_card_is_the_slowest_never_the_leader():
    # 领先 (to lead, run ahead) and 领慢 (not a word) said the slow card's crossover backwards (the review's M3)
    for name in ("03_expected_maximum.ipynb", "A1_core_in_depth.ipynb"):
        assert not re.search(r"领先|领慢", zh_markdown(name))
    cell = zh_cell_beside("A1_core_in_depth.ipynb", "### The slow card, and where it hides")
    assert "低于这个抖动，多数步里最慢的就是这块慢卡；高于它，最慢的是其他卡偶尔的尖峰" in cell


def test_01_the_counter_is_the_bar_in_prose_and_check_line():
    assert "坐吧台" in zh_cell_beside("01_restaurant.ipynb", "At a counter the average diner waits")
    assert not re.search(r"窗口", zh_markdown("01_restaurant.ipynb"))


def test_fleet_the_one_worker_share_is_a_share_of_the_slowed_jobs():
    # the Chinese review's M1: 「有 67.9% 的多出时间主要由一个 worker 造成」 set the figure on the excess time,
    # where the English counts jobs
    from types import SimpleNamespace

    from straggle_edu.fleet.cli import summary

    figures = {"errors": 0, "share_slowed_10pct": 0.43, "analysed": 203, "share_slowed_10pct_gpu_hours": 0.41,
               "slowdown_quantiles": {"p50": 1.08, "p90": 1.29, "p99": 1.97, "max": 3.17}, "gpu_hours_lost": 169_640.4,
               "gpu_hours": 1_867_187.2, "slowed_jobs": 87, "slowed_single_worker": 2, "share_slowed_single_worker": 2 / 87,
               "slowed_single_dp_rank": 5, "share_slowed_single_dp_rank": 5 / 87, "worst": []}
    run = SimpleNamespace(figures=figures, jobs=203, seconds=5.0, analysed=203, cached=0, out="out", tables=["t"])
    text = summary(run)
    assert "在 87 个变慢的作业中，有 2 个（2.3%）多出的时间大部分可由一个 worker 解释" in text
    # the review's other fleet line: 万 and the sentence the other way round, not 「889203.2 中的 90689.1」
    assert "掉队者浪费了 17万卡时，占全部 186.7万卡时的 9.1%。" in text
    assert text.startswith("作业集：203 个作业")


def test_13_fleet_is_a_set_of_jobs_and_a_cluster_is_machines():
    # the Chinese review's T1: 集群 meant the jobs (fleet), the Dask cluster and the GPU cluster in one paragraph
    twin = nbformat.read(NOTEBOOKS / "zh" / "13_the_fleet.ipynb", as_version=4).cells
    prose = "\n".join(c.source for c in twin if c.cell_type == "markdown")
    assert "演示作业集" in prose and "Dask 集群" in prose and "演示集群" not in prose
    assert "集群层面的数字" in (ROOT / "docs" / "zh" / "glossary.md").read_text(encoding="utf-8")
    assert _("fleet") == "作业集" and _("Fleet report: {jobs} jobs") == "作业集报告：{jobs} 个作业"


def test_00_the_legend_names_the_demo_mark_as_its_lines_print_it():
    cell = zh_cell_beside("00_start_here.ipynb", "a mark says what it was checked against")
    assert _("demo: {label} = {value} (quoted: {expected})").startswith("演示：") and "**「演示：…」**" in cell


def test_the_op_legend_and_the_sgd_legend_label_local_apart():
    # M2: one msgid served both charts, so 09's op chart called the optimizer and GC 「本地 SGD」
    from straggle_edu.charts.debug_job import _op_kind

    assert _op_kind("optimizer") == "local op" and _op_kind("gc") == "local op" and _(_op_kind("gc")) == "本地 op（不通信）"


def test_the_ops_table_header_is_chinese():
    # S10: 09's ops_table printed 「optype  mb  start (s)  duration (s)」 in a Chinese run
    from straggle_edu.traces.optrace import ops_table
    from straggle_edu.traces.synthetic import synthetic_trace

    head, first = ops_table(synthetic_trace(2, 1, 1, 1), 0, 0, 0, rows=1).splitlines()
    assert head.split() == ["op", "类型", "mb", "开始（s）", "时长（s）"]
    # the columns stay aligned: a CJK character takes two terminal columns
    assert len(head) + sum(ord(c) >= 0x1100 for c in head) == len(first)


def test_the_fleet_progress_bar_reads_as_chinese(capsys):
    # S5: 「集群: 100%」 with a half-width colon and 「37.81个作业/s」
    from straggle_edu.fleet._progress import progress

    bar = progress("bar", 2)
    bar.update()
    bar.update()
    bar.close()
    err = capsys.readouterr().err
    assert "作业集：100%" in err and " 个作业/s]" in err and "作业集: " not in err
