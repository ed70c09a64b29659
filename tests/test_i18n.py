"""The Chinese edition's catalogs: complete, compiled, and switched per test.

- Every string the library marks for translation (``_()``/``N_()``) and every
  label a notebook passes to ``claim()``, ``cite()`` or ``calibrated()`` has
  a Chinese translation in ``straggle_edu/i18n/zh/<room>.po``, and the
  compiled ``.mo`` holds it (:func:`straggle_edu.i18n.catalog.problems`).
- No module that imports ``_`` also binds ``_`` (``for _ in ...`` would make
  ``_("...")`` fail inside that function).
"""

import ast
import pathlib

import pytest

from straggle_edu import i18n
from straggle_edu.i18n import catalog

PACKAGE = pathlib.Path(i18n.__file__).resolve().parents[1]


def test_catalogs_are_complete_and_compiled():
    found = catalog.problems()
    assert not found, f"{len(found)} catalog problem(s):\n" + "\n".join(found[:60])


def _binds_underscore(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, ast.Store):
            return node.lineno
        if isinstance(node, ast.arg) and node.arg == "_":
            return node.lineno
    return None


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_that_translates_never_rebinds_underscore(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_it = any(isinstance(n, ast.ImportFrom) and n.module and n.module.endswith("i18n")
                     and any(a.name == "_" for a in n.names) for n in ast.walk(tree))
    if imports_it:
        assert _binds_underscore(tree) is None, f"{path.name}:{_binds_underscore(tree)} binds _, which shadows the translator"


def test_the_language_comes_from_the_environment_until_set(monkeypatch):
    monkeypatch.setenv(i18n.LANG_ENV, "zh_CN.UTF-8")
    assert i18n.get_language() == "zh"
    i18n.set_language("en")
    assert i18n.get_language() == "en"
    i18n.set_language(None)
    assert i18n.get_language() == "zh"


def test_an_unknown_language_is_refused_naming_the_parameter(monkeypatch):
    with pytest.raises(ValueError, match=r"lang must be one of 'en', 'zh', got 'de'"):
        i18n.set_language("de")
    monkeypatch.setenv(i18n.LANG_ENV, "de")
    with pytest.raises(ValueError, match="got 'de'"):
        i18n.get_language()


def test_numbers_follow_cldr_not_the_os_locale():
    i18n.set_language("zh")
    assert i18n.format_count(983_040) == "98.3万"
    assert i18n.format_count(1_234_567_890) == "12.3亿"
    assert i18n.format_count(9_999) == "9999"
    i18n.set_language("en")
    assert i18n.format_count(983_040) == "983,040" and i18n.format_count(9_999) == "9,999"


def test_chinese_numbers_have_no_separator_below_ten_thousand_and_wan_from_it_up():
    # README, 中文版: 4096, not 4,096; 万 from 10,000 up (the zh review's S1, S3)
    i18n.set_language("zh")
    assert [i18n.format_int(n) for n in (0, 4096, 9_999, 10_000, 16_384, 100_000, 417_920)] == [
        "0", "4096", "9999", "1万", "1.6384万", "10万", "41.792万"]
    assert [i18n.format_number(x, ".1f") for x in (2.27, 4096.04, 12_345.6, float("nan"))] == [
        "2.3", "4096.0", "1.2万", "nan"]
    assert i18n.format_number(-25_000.0, ".0f") == "-2.5万" and i18n.format_money(2_048) == "2048 美元"
    i18n.set_language("en")
    assert [i18n.format_int(n) for n in (4096, 16_384)] == ["4,096", "16,384"]
    assert i18n.format_number(12_345.6, ".1f") == "12,345.6" and i18n.format_money(2_048) == "$2,048"


def test_chinese_counts_carry_the_exact_figure_in_full_width_parentheses_and_money_reads_in_wan():
    i18n.set_language("zh")
    assert i18n.format_count_exact(407_549) == "40.8万（407,549）"
    assert i18n.format_count_exact(983_040, "983,040.0") == "98.3万（983,040.0）"
    assert i18n.format_count_exact(9_999) == "9999"
    # four significant figures, so 196,608 does not read as a rounded 19.7万 beside the article's 十九万六千
    assert [i18n.format_money(x) for x in (196_608, 353_894.4, 491_520, 1_234_567_890, 3)] == [
        "19.66万美元", "35.39万美元", "49.15万美元", "12.35亿美元", "3 美元"]
    i18n.set_language("en")
    assert i18n.format_count_exact(407_549) == "407,549" and i18n.format_money(196_608) == "$196,608"


def test_processes_started_after_set_language_speak_it(monkeypatch):
    import subprocess
    import sys

    monkeypatch.delenv(i18n.LANG_ENV, raising=False)
    i18n.set_language("zh")
    code = "from straggle_edu.i18n import get_language; print(get_language())"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "zh"
    i18n.set_language(None)
    import os

    assert i18n.LANG_ENV not in os.environ and i18n.get_language() == "en"
