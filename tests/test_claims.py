"""claim, cite and calibrated: the three marks a notebook's numbers wear; timing, claim's form for a measured number."""

import pytest

from straggle_edu.notebook import calibrated, cite, claim, timing


def test_claim_unit_percent_shows_the_prose_unit(capsys):
    claim("jobs that straggle", 0.425, 0.425, unit="%")
    assert capsys.readouterr().out == "✓ jobs that straggle = 42.5% (quoted: 42.5%)\n"


@pytest.mark.parametrize("unit, shown", [("x", "1.6x"), ("ms", "1.6 ms"), ("$", "$1.6"), (None, "1.6")])
def test_claim_unit_suffixes_and_prefix(capsys, unit, shown):
    claim("S", 1.6, 1.6, unit=unit)
    assert capsys.readouterr().out == f"✓ S = {shown} (quoted: {shown})\n"


def test_claim_mismatch_names_both_in_the_unit():
    with pytest.raises(AssertionError, match=r"computed 63.4%, but the text says 70%"):
        claim("P", 0.634, 0.70, unit="%")


def test_claim_against_a_computed_reference_says_against_not_quoted(capsys):
    claim("P by simulation", 0.6352, against=0.63397, abs_tol=0.005)
    assert capsys.readouterr().out == "✓ P by simulation = 0.6352 (against: 0.63397)\n"
    with pytest.raises(AssertionError, match=r"computed 0.7, but the reference gives 0.63397"):
        claim("P by simulation", 0.7, against=0.63397, abs_tol=0.005)


def test_claim_of_a_statement_reads_yes_or_no_never_true_quoted_true(capsys):
    claim("every backup lowers the step", 2 > 1, True)
    claim("same weights for two timing seeds", 1 == 2, False)
    out = capsys.readouterr().out
    assert out == "✓ every backup lowers the step: yes\n✓ same weights for two timing seeds: no\n"
    assert "True" not in out and "quoted" not in out
    with pytest.raises(AssertionError, match=r"computed True, but the text says False"):
        claim("x", True, False)


def test_claim_takes_a_quoted_figure_or_a_reference_not_both():
    with pytest.raises(ValueError, match="against must be left out when expected is given"):
        claim("P", 0.5, 0.5, against=0.5)
    with pytest.raises(ValueError, match="expected must be the figure the prose quotes, a computed reference as against="):
        claim("P", 0.5)


def test_cite_is_marked_cited_with_source_and_place(capsys):
    cite("share of jobs", 0.425, "OSDI 2025 straggler study", where="Fig. 3", unit="%")
    assert capsys.readouterr().out == "cited: share of jobs = 42.5% (OSDI 2025 straggler study, Fig. 3)\n"


def test_cite_without_source_is_refused():
    with pytest.raises(ValueError, match="source must be the work the figure comes from"):
        cite("x", 1.0, "  ")


def test_calibrated_wears_no_check_mark(capsys):
    calibrated("p99.9", 74.2, 74, "The Tail at Scale", unit="ms")
    out = capsys.readouterr().out
    assert out.startswith("≈ p99.9 = 74.2 ms, calibrated to 74 ms") and "✓" not in out


def test_calibrated_statement_reads_yes_not_true_calibrated_to_true(capsys):
    calibrated("a 5th backup makes the step slower", 2 > 1, True, "Abadi et al., OSDI 2016", where="figure 8c")
    assert capsys.readouterr().out == "≈ a 5th backup makes the step slower: yes, calibrated to Abadi et al., OSDI 2016, figure 8c\n"
    with pytest.raises(AssertionError, match="the model gives False, but it was calibrated to True"):
        calibrated("a 5th backup makes the step slower", False, True, "Abadi et al., OSDI 2016")


def test_calibrated_drift_fails_the_run():
    with pytest.raises(AssertionError, match="calibrated to 74"):
        calibrated("p99.9", 80, 74, "The Tail at Scale", rel_tol=0.05)


def test_cite_shows_a_text_figure_as_written(capsys):
    cite("DistBelief, machines", "thousands", "Dean et al., NIPS 2012", where="abstract")
    assert capsys.readouterr().out == "cited: DistBelief, machines = thousands (Dean et al., NIPS 2012, abstract)\n"


WHY = ("  Other programs share this machine: when they keep it busy, sleeps end late and processes wake late. "
       "Run the cell again when it is quieter.\n")


def test_timing_that_holds_prints_claims_line(capsys):
    timing("measured / predicted", 1.04, 1.0, abs_tol=0.1)
    timing("replaced, measured", 1.9, against=1.95, rel_tol=0.15, unit="x")
    claim("measured / predicted", 1.04, 1.0, abs_tol=0.1)
    claim("replaced, measured", 1.9, against=1.95, rel_tol=0.15, unit="x")
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == out[2:] == ["✓ measured / predicted = 1.04 (quoted: 1)", "✓ replaced, measured = 1.9x (against: 1.95x)"]


@pytest.mark.parametrize("kwargs, line", [
    (dict(value=1.35, expected=1.0, abs_tol=0.1), "⚠ S = 1.35, outside 1 ± 0.1 on this run.\n"),
    (dict(value=0.776, expected=1.0, rel_tol=0.2), "⚠ S = 0.776, outside 1 ± 20% on this run.\n"),
    (dict(value=0.442, expected=0.5, abs_tol=0.05, unit="%"), "⚠ S = 44.2%, outside 50% ± 5% on this run.\n"),
    (dict(value=2, expected=1), "⚠ S = 2, not 1 on this run.\n"),
    (dict(value=1.2, against=1.6, rel_tol=0.15, unit="x"), "⚠ S = 1.2x, outside 1.6x ± 15% on this run.\n"),
])
def test_timing_that_strays_says_why_and_does_not_raise(capsys, kwargs, line):
    timing("S", **kwargs)
    assert capsys.readouterr().out == line + WHY


def test_timing_takes_a_quoted_figure_or_a_reference_not_both():
    with pytest.raises(ValueError, match="against"):
        timing("S", 1.6, 1.6, against=1.6)
    with pytest.raises(ValueError, match="expected"):
        timing("S", 1.6)
