"""What traces/ and models/ show a reader, in Chinese: the debugging answers, the remedy table, the lab's prediction line.

In ``zh`` the text is Chinese and every number is the one English prints; in
``en`` nothing changes; the keys code compares (verdicts, ``Diagnosis.answers``,
cause names, ``RestartChoice.choice``) stay English in both.
"""

import re
from pathlib import Path

import pytest

from straggle_edu.i18n import _, set_language
from straggle_edu.models.barrier_lab import Prediction
from straggle_edu.models.causes import straggler_scenario
from straggle_edu.models.osdi2025 import FINDINGS, STUDY
from straggle_edu.models.remedies import REMEDIES, remedy_for, restart_or_keep
from straggle_edu.traces import analyze, analyze_rank_times, example_trace
from straggle_edu.traces.diagnose import OP_QUESTIONS, QUESTIONS, answer, diagnose, diagnose_job
from straggle_edu.traces.optrace import ARTIFACT_DATA

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbers(text):
    """The numbers of a sentence, sorted: Chinese word order may put them in another order."""
    return sorted(NUMBER.findall(text))


@pytest.fixture(scope="module")
def slow_worker():
    return analyze(example_trace("slow-worker"))


def _both(fn):
    set_language("en")
    en = fn()
    set_language("zh")
    zh = fn()
    set_language("en")
    return en, zh


def test_diagnose_zh_questions_and_answers_are_chinese_with_the_same_numbers(slow_worker):
    en, zh = _both(lambda: diagnose(slow_worker))
    assert len(en) == len(zh) == len(OP_QUESTIONS)
    for (q_en, a_en), (q_zh, a_zh) in zip(en, zh):
        assert q_en in QUESTIONS.values() and CJK.search(q_zh), q_zh
        assert CJK.search(a_zh), a_zh
        assert _numbers(a_zh) == _numbers(a_en), (a_en, a_zh)
    assert zh[0][1].startswith("是：S = 1.560")


def test_diagnose_zh_rank_level_answers_are_chinese():
    result = analyze_rank_times([[2.0, 1.0, 1.0, 1.0]] * 3)
    en, zh = _both(lambda: diagnose(result))
    assert [q for q, __ in en] == [QUESTIONS[k] for k in ("straggling", "worker", "compute-or-comm", "persistence",
                                                          "same-worker")]
    for (__, a_en), (q_zh, a_zh) in zip(en, zh):
        assert CJK.search(q_zh) and CJK.search(a_zh)
        assert _numbers(a_zh) == _numbers(a_en)


def test_answer_zh_is_chinese_by_key_english_question_or_chinese_question(slow_worker):
    set_language("zh")
    by_key = answer(slow_worker, "worker")
    assert by_key.startswith("DP rank 1 的阶段 1") and "1.560" in by_key
    assert answer(slow_worker, "Which worker?") == by_key
    assert answer(slow_worker, _("Which worker?")) == by_key


def test_diagnosis_zh_keeps_english_keys_and_verdicts():
    set_language("zh")
    dx = diagnose_job(straggler_scenario("slow worker", rng=0))
    assert list(dx.answers) == list(OP_QUESTIONS)
    assert CJK.search(dx.answers["Which worker?"])
    assert dx.verdicts["kind"] == "compute" and dx.verdicts["persistence"] == "persistent"


def test_diagnose_en_is_unchanged(slow_worker):
    set_language("en")
    qa = dict(diagnose(slow_worker))
    assert qa["Is the job straggling?"].startswith("Yes: S = 1.560, so 35.9% of its time is waste")
    assert not any(CJK.search(q + a) for q, a in qa.items())


def test_remedy_table_zh_is_chinese_and_keeps_its_links():
    en, zh = _both(lambda: str(REMEDIES))
    assert zh.splitlines()[0] == "| 调试问题的答案是 | 对策 | 详见 |"
    assert all(CJK.search(line) for line in zh.splitlines()[2:])
    assert re.findall(r"\(\S+\.ipynb\)", zh) == re.findall(r"\(\S+\.ipynb\)", en)
    assert not CJK.search(en)


def test_remedy_fields_stay_english_and_str_translates():
    set_language("zh")
    row = remedy_for("slow-link")
    assert row.cause == "slow-communication" and row.remedy.startswith("Placement")
    assert str(row).startswith("调整放置")
    assert restart_or_keep(240, 1.1, restart=0.5, lost=1.0).choice == "replace"


def test_prediction_line_zh_is_chinese_with_the_same_numbers():
    p = Prediction(measured=0.0812, stderr=0.0004, predicted=0.0805, expected_max=0.08, overhead=0.0005,
                   drawn_max=0.0801, steps=20)
    en, zh = _both(lambda: str(p))
    assert en.startswith("measured 81.20 ± 0.40 ms per step")
    assert zh.startswith("实测每步 81.20 ± 0.40 ms")
    assert _numbers(zh) == _numbers(en)


def test_study_labels_and_findings_have_chinese_translations():
    set_language("zh")
    for text in [f.what for f in STUDY.values()] + list(FINDINGS.values()):
        assert CJK.search(_(text)), text
    assert STUDY["jobs"].what == "training jobs in the trace"


def test_a_note_is_english_in_the_analysis_and_with_json_and_chinese_in_the_zh_report(capsys):
    import pickle

    from straggle_edu.app import cli
    from straggle_edu.traces.cli import report

    trace = str(ARTIFACT_DATA / "trace-SE.parquet")
    a = analyze(trace)
    note = a.notes[0]
    assert note.startswith("8 collective or send/recv ops end before")
    assert cli.main(["--lang", "zh", "analyze", trace, "--json"]) == 0
    assert f"note: {note}" in capsys.readouterr().err  # --json stays English
    assert pickle.loads(pickle.dumps(note)).translated() == note.translated()
    en, zh = _both(lambda: report(a))
    assert "Note: 8 collective or send/recv ops" in en and "Attribution by_optype" in en
    zh_notes = [line for line in zh.splitlines() if line.startswith("注：")]
    assert zh_notes == ["注：有 8 个集合通信或 send/recv op 在最后一个对端到达之前就结束了（时钟偏差，或 eager send）；"
                        "它们的传输时间按 0 计。"]
    # the attribution tables' headings: no English key (by_optype, by_stage, by_dp_rank, by_worker) left in zh
    assert [line.strip() for line in zh.splitlines() if "归因（" in line] == [
        f"按{by}归因（S_X，从大到小）：" for by in (" op 类型", "阶段", " DP rank ", " worker ")]
    assert not re.search(r"\bby_\w+", zh)


def test_every_note_the_readers_write_has_a_chinese_template():
    """Each ``Note(N_(...))`` in traces/ is in the catalog, so a Chinese report never shows an English note."""
    import ast

    root = Path(__file__).resolve().parent.parent / "straggle_edu" / "traces"
    templates = [node.args[0].args[0].value for path in root.glob("*.py") for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Note" and node.args
                 and isinstance(node.args[0], ast.Call) and node.args[0].args]
    assert len(templates) >= 9, templates
    set_language("zh")
    untranslated = [t for t in templates if not CJK.search(_(t))]
    assert not untranslated, untranslated
