"""The notebook helpers and the exercises in Chinese: claim lines, fact-check cards, hints and feedback.

English output stays exactly as it was (the doctests hold it); these tests
switch to Chinese and check what a reader of the Chinese edition sees.
"""

import re
import string

import pytest

import _notebook_runs
from straggle_edu.i18n import set_language
from straggle_edu.notebook import calibrated, cite, claim, say, timing
from straggle_edu.notebook.factcheck import verdict_table

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_claim_in_chinese_reads_big_counts_as_prose_with_the_exact_figure(capsys):
    set_language("zh")
    claim("GPU-hours", 983_040, 983_040)
    assert capsys.readouterr().out == "✓ 卡时 = 98.3万（983,040）（文中：98.3万）\n"


def test_claim_in_chinese_keeps_small_numbers_and_units(capsys):
    set_language("zh")
    claim("P(at least one of 100 slow)", 0.63397, 0.634, abs_tol=5e-4, unit="%")
    assert capsys.readouterr().out == "✓ P(100 块卡里至少一块慢) = 63.397%（文中：63.4%）\n"


def test_claim_in_english_is_unchanged(capsys):
    claim("GPU-hours", 983_040, 983_040)
    claim("layers on stage {stage}", 8, 8, values={"stage": 2})
    assert capsys.readouterr().out == "✓ GPU-hours = 983,040 (quoted: 983,040)\n✓ layers on stage 2 = 8 (quoted: 8)\n"


def test_claim_in_chinese_says_which_figure_it_checks_against(capsys):
    # 文中: the prose quotes the figure; 对照: a reference computed another way; 是/否: a statement's truth
    set_language("zh")
    claim("GPU-hours", 100.0, against=100.2, rel_tol=0.01)
    claim("GPU-hours", 1 > 0, True)
    claim("GPU-hours", 1 < 0, False)
    assert capsys.readouterr().out == "✓ 卡时 = 100（对照：100.2）\n✓ 卡时：是\n✓ 卡时：否\n"


def test_claim_template_is_translated_then_filled(capsys):
    set_language("zh")
    claim("layers on stage {stage}", 8, 8, values={"stage": 2})
    assert capsys.readouterr().out == "✓ 阶段 2 上的层数 = 8（文中：8）\n"


def test_timing_that_strays_says_why_in_chinese(capsys):
    set_language("zh")
    timing("layers on stage {stage}", 7, 8, abs_tol=0.5, values={"stage": 3})
    out = capsys.readouterr().out
    assert out.startswith("⚠ 阶段 3 上的层数 = 7，本次运行超出 8 ± 0.5。\n  ")
    assert CJK.search(out.splitlines()[1]) and "busy" not in out


def test_claim_failure_stays_english_with_the_label_filled():
    set_language("zh")
    with pytest.raises(AssertionError, match=r"✗ layers on stage 3: computed 7, but the text says 8"):
        claim("layers on stage {stage}", 7, 8, values={"stage": 3})


def test_cite_and_calibrated_in_chinese(capsys):
    set_language("zh")
    cite("DistBelief, machines", "thousands", "Dean et al., NIPS 2012", where="abstract")
    calibrated("p99.9 of 1,000 requests, hedged (ms)", 74.2, 74, "The Tail at Scale")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "引用：DistBelief，机器数 = 数千台（Dean et al., NIPS 2012, 摘要）"
    assert out[1] == "≈ 1000 个请求的 p99.9，对冲（ms） = 74.2，校准到 74（The Tail at Scale）"


def test_say_translates_then_formats(capsys):
    say("planned steps in all: sync {sync:.2f} s, backup {backup:.2f} s, local {local:.2f} s", sync=12.061, backup=5.12,
        local=12.06)
    set_language("zh")
    say("planned steps in all: sync {sync:.2f} s, backup {backup:.2f} s, local {local:.2f} s", sync=12.061, backup=5.12,
        local=12.06)
    assert capsys.readouterr().out.splitlines() == ["planned steps in all: sync 12.06 s, backup 5.12 s, local 12.06 s",
                                                    "计划的各步耗时合计：sync 12.06 s，backup 5.12 s，local 12.06 s"]


def _card():
    return claim(6, "900,000 GPU-hours; 98,000 lost; $196,000 / $490,000", figures={"GPU-hours": 983_040.0},
                 readings={"over 900,000 GPU-hours": True}, verdict="right",
                 precise="4096 × 10 × 24 = {gpu_hours:,.0f} GPU-hours; 10% = {lost:,.0f} = ${usd_2:,.0f} at $2, "
                         "${usd_5:,.0f} at $5",
                 values={"gpu_hours": 983_040, "lost": 98_304, "usd_2": 196_608, "usd_5": 491_520})


def test_fact_check_card_in_english_formats_the_precise_template():
    assert str(_card()).splitlines()[-1] == "  Precisely: 4096 × 10 × 24 = 983,040 GPU-hours; 10% = 98,304 = $196,608 at $2, $491,520 at $5"


def test_fact_check_card_and_table_in_chinese():
    set_language("zh")
    card = _card()
    lines = str(card).splitlines()
    assert lines[0] == "说法 6：九十多万卡时；九万八千多卡时没了；十九万六千美元 / 四十九万多美元"
    assert lines[1] == "  卡时 = 98.3万（983,040）"
    # the precise template's grouped fields follow the Chinese rule: no separator below 10,000, 万 from it up
    assert lines[3:] == ["  结论：对", "  准确地说：4096 × 10 × 24 = 98.304万卡时；10% = 9.8304万卡时 = "
                                       "19.6608万美元（每卡时 2 美元）、49.152万美元（每卡时 5 美元）"]
    html = card._repr_html_()
    assert "说法 6" in html and "对" in html
    assert str(verdict_table([card])).splitlines()[-1] == "对 1 条，对但不严谨 0 条，错 0 条"


def test_exercise_feedback_hint_and_solution_in_chinese(capsys):
    from straggle_edu.exercises import ____
    from straggle_edu.exercises.expected_max import q1

    set_language("zh")
    q1.check(____)
    q1.check(3)
    q1.check(q1.expected())
    q1.hint()
    q1.solution()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "还没作答：把 ____ 换成你的答案，再运行这个单元格。"
    assert out[1] == "✗ q1：还不对，得到 3。试试 q1.hint()。"  # never the expected value: solution() gives it
    assert out[2] == "✓ q1：正确。"
    assert out[3].startswith("提示：用标准正态")
    assert out[4] == "答案：se.expected_max(stats.norm(), 1000)  # 约 3.24 σ"


def test_exercise_in_a_student_copy_says_so_in_chinese(capsys, monkeypatch):
    from straggle_edu.exercises import STUDENT_ENV
    from straggle_edu.exercises.expected_max import q1

    monkeypatch.setenv(STUDENT_ENV, "1")
    set_language("zh")
    q1.solution()
    q1.check(3)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("学生版不包含答案")
    assert out[1] == "✗ q1：还不对，得到 3。试试 q1.hint()。"


def _placeholders(text):
    return sorted((name, spec or "") for _lit, name, spec, _conv in string.Formatter().parse(text) if name is not None)


@pytest.mark.parametrize("room", ["notebook", "exercises", "notebooks"])
def test_translations_keep_the_placeholders_of_their_msgid(room):
    from babel.messages.pofile import read_po

    from straggle_edu.i18n.catalog import PO_DIR

    with open(PO_DIR / f"{room}.po", "rb") as fh:
        catalog = read_po(fh)
    wrong = []
    for message in catalog:
        if not message.id or not message.string or "{" not in message.id:
            continue
        try:
            if _placeholders(message.id) != _placeholders(message.string):
                wrong.append(message.id)
        except ValueError:
            wrong.append(message.id)
    assert not wrong, wrong


def _stream_text(run):
    return [o.get("text", "") for c in run.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "stream"]


# The Chinese twins of 02 and 08, from the session's one run of each (tests/_notebook_runs.py).
@pytest.mark.notebooks
@pytest.mark.parametrize("path", [_notebook_runs.NOTEBOOKS / "zh" / name for name in ("02_tail_probability.ipynb", "08_fact_check.ipynb")],
                         ids=["02_tail_probability.ipynb", "08_fact_check.ipynb"])
def test_a_notebook_run_in_chinese_shows_chinese_check_lines(path):
    name = path.name
    run = _notebook_runs.executed(path)
    assert run.error is None, run.error
    lines = [line for text in _stream_text(run) for line in text.splitlines()]
    checks = [line for line in lines if line.startswith(("✓", "引用：", "≈"))]
    assert checks, f"{name}: no ✓ line in the output"
    english = [line for line in checks if not CJK.search(line)]
    assert len(english) <= len(checks) // 10, f"{name}: check lines without Chinese: {english[:10]}"


def test_fact_check_card_in_chinese_quotes_in_corner_brackets_shows_units_and_code():
    # the zh review's S11: 08's cards had “...” hard-coded, a dollar figure without its unit, literal backticks
    set_language("zh")
    card = claim(11, "「GPU 翻倍、训练就该翻倍快」从一开始就不成立", figures={"the bill": (196_608, "$"), "GPUs": 4096},
                 readings={"r": True}, verdict="right", precise="`drop` keeps {n:,} of them", values={"n": 4096})
    html = card._repr_html_()
    assert "「『GPU 翻倍、训练就该翻倍快』从一开始就不成立」" in html and "“" not in html
    assert "19.66万美元（196,608 美元）" in html and ">4096<" in html and "<code>drop</code>" in html
    assert "`" not in html and "4,096" not in str(card)
    set_language("en")
    html = card._repr_html_()
    assert "“「GPU" in html and "$196,608" in html and "4,096" in html
