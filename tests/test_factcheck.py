"""Tests for the fact-check verdicts (straggle_edu.notebook.factcheck), checked through the one
notebook name for every checked statement, ``claim`` (straggle_edu.notebook.claims)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu import p_any_slow
from straggle_edu.notebook import claim
from straggle_edu.notebook.factcheck import VERDICTS, ClaimCheck, verdict_from_readings, verdict_table


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_verdict_from_readings_all_some_none(values):
    readings = {f"reading {i}": v for i, v in enumerate(values)}
    want = "right" if all(values) else "right but loose" if any(values) else "wrong"
    assert verdict_from_readings(readings) == want


@pytest.mark.parametrize("verdict", VERDICTS)
def test_claim_verdict_accepts_only_the_supported_verdict(verdict):
    cases = {
        "right": {"a": True, "b": True},
        "right but loose": {"a": True, "b": False},
        "wrong": {"a": False, "b": False},
    }
    for supported, readings in cases.items():
        if supported == verdict:
            c = claim(1, "x", figures={}, readings=readings, verdict=verdict, precise="p")
            assert isinstance(c, ClaimCheck) and c.verdict == verdict
        else:
            with pytest.raises(AssertionError, match=f"stated verdict '{verdict}', but the computed readings say"):
                claim(1, "x", figures={}, readings=readings, verdict=verdict, precise="p")


def test_a_wrong_library_fails_the_check():
    # If p_any_slow were off, "over 60%" would flip and the stated verdict fail.
    p = p_any_slow(0.01, 100)
    claim(2, "over 60%", figures={"P": p}, readings={"P > 60%": p > 0.6}, verdict="right", precise="63.4%")
    with pytest.raises(AssertionError, match="claim 2"):
        claim(2, "over 60%", figures={"P": p / 2}, readings={"P > 60%": p / 2 > 0.6}, verdict="right",
              precise="")


def test_claim_check_renders_text_and_escaped_html():
    c = claim(9, "<over> 40% & more", figures={"share": 0.425, "jobs": 3079, "usd": 196608.0, "tiny": 1.3e-18},
              readings={"over 40%": True, "about 45% for <all>": False}, verdict="right but loose",
              precise="42.5% of jobs")
    text = str(c)
    assert "Claim 9: <over> 40% & more" in text
    assert "jobs = 3,079" in text and "usd = 196,608" in text and "tiny = 1.3e-18" in text
    assert "✓ over 40%" in text and "✗ about 45% for <all>" in text and "Verdict: RIGHT BUT LOOSE" in text
    h = c._repr_html_()
    assert "&lt;over&gt; 40% &amp; more" in h and "<over>" not in h
    assert "RIGHT BUT LOOSE" in h and "#b26a00" in h
    assert repr(c) == text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"number": 0}, "number must be a whole number >= 1, got 0"),
        ({"claim": " "}, "claim must be a non-empty string"),
        ({"verdict": "mostly right"}, "verdict must be 'right', 'right but loose' or 'wrong', got 'mostly right'"),
        ({"readings": {}}, "readings must be a dict of \\{reading: bool\\} with at least one entry"),
        ({"figures": [1, 2]}, "figures must be a dict of \\{label: value\\}"),
        ({"precise": None}, "precise must be a string, got None"),
    ],
)
def test_claim_verdict_bad_input(kwargs, match):
    args = {"number": 1, "claim": "x", "figures": {}, "readings": {"r": True}, "verdict": "right", "precise": "p",
            **kwargs}
    with pytest.raises(ValueError, match=match):
        claim(args.pop("number"), args.pop("claim"), **args)


def test_verdict_table_sorts_counts_and_renders():
    checks = [claim(n, f"claim {n}", figures={}, readings=r, verdict=v, precise="")
              for n, r, v in [(3, {"a": False}, "wrong"), (1, {"a": True}, "right"), (2, {"a": True, "b": False}, "right but loose")]]
    table = verdict_table(checks)
    assert [c.number for c in table.checks] == [1, 2, 3]
    assert table.counts == {"right": 1, "right but loose": 1, "wrong": 1}
    assert "1 right, 1 right but loose, 1 wrong" in str(table)
    assert table._repr_html_().count("<tr>") == 4
    with pytest.raises(ValueError, match="checks must be one or more ClaimCheck results"):
        verdict_table([])


def test_claim_a_number_prints_a_check_and_returns_none(capsys):
    assert claim("P(at least one of 100 slow)", p_any_slow(0.01, 100), 0.634, abs_tol=5e-4) is None
    assert capsys.readouterr().out == "✓ P(at least one of 100 slow) = 0.633968 (quoted: 0.634)\n"
    with pytest.raises(AssertionError, match="✗ P: computed 0.5, but the text says 0.634"):
        claim("P", 0.5, 0.634, abs_tol=5e-4)


def test_claim_is_a_number_or_a_verdict_never_both():
    with pytest.raises(ValueError, match="expected must be the figure the prose quotes"):
        claim("P", 0.634)
    with pytest.raises(ValueError, match="expected must be left out for a fact-check claim"):
        claim(2, "over 60%", 0.634, readings={"P > 60%": True}, verdict="right")


def test_readings_from_cited_figures_wear_their_own_mark_not_a_tick():
    # The reader's review (Low): "✓ over 40% of jobs..." computed only from the study's constants was a second
    # meaning of ✓. Such readings read "cited, holds/fails"; computed ones keep ✓/✗.
    c = claim(9, "x", figures={"share": (0.425, "%"), "bill": (196_608.0, "$")},
              readings={"over 40%": True, "about 45%": False, "computed here": True}, verdict="right but loose",
              precise="", cited=["over 40%", "about 45%"])
    text = str(c)
    assert "cited, holds: over 40%" in text and "cited, fails: about 45%" in text and "✓ computed here" in text
    assert "✓ over 40%" not in text and "✗ about 45%" not in text
    assert "share = 42.5%" in text and "bill = $196,608" in text
    h = c._repr_html_()
    assert "cited, holds: over 40%" in h and "<li>✓ computed here</li>" in h
    every = claim(16, "y", figures={}, readings={"a": True, "b": True}, verdict="right", precise="", cited=True)
    assert every.cited == ("a", "b") and "✓" not in str(every).split("Verdict")[0]
    with pytest.raises(ValueError, match="cited must be True, False, or names of the readings"):
        claim(1, "z", figures={}, readings={"a": True}, verdict="right", precise="", cited=["no such reading"])


def test_a_card_in_chinese_quotes_the_claim_in_corner_brackets_and_shows_dollars_with_their_unit():
    from straggle_edu.i18n import set_language

    set_language("zh")
    try:
        c = claim(6, "ten days become eleven", figures={"$ at $2/h": (196_608.0, "$")}, readings={"a": True},
                  verdict="right", precise="", cited=True)
        h = c._repr_html_()
        assert "「十天变十一天」" in h and "“" not in h
        assert "19.66万美元（196,608 美元）" in h
        assert "引用，成立：" in h
    finally:
        set_language("en")
