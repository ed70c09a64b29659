"""Notebook 13 tells the fleet as the reviews asked (issue 27 §1: reader review H3, M1-M3, M6-M8 and its low items).

The library's side of each item is held where the library is tested (test_fleet_figures, test_fleet_remedies,
test_fleet_demo, test_fleet_engine, test_fleet_report, test_charts_fleet); these hold the notebook's side: what
its cells show and say, read from its source, and what its one run of the session printed.
"""

import re
from pathlib import Path

import pytest

import _notebook_runs
from _path import load, source, tags

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT / "notebooks" / "13_the_fleet.ipynb"
TWIN = ROOT / "notebooks" / "zh" / "13_the_fleet.ipynb"


def _cells(path=NB):
    return load(path)["cells"]


def _prose(path=NB):
    return "\n".join(source(c) for c in _cells(path) if c["cell_type"] == "markdown")


def _code(path=NB):
    return "\n".join(source(c) for c in _cells(path) if c["cell_type"] == "code")


def test_the_median_job_is_not_the_aggregate():
    # M3: "10.4%: about what the median job wastes"; the median job wastes 7.8%, the aggregate more
    prose = _prose()
    assert "about what the median job wastes" not in prose
    assert re.search(r"More: 10\.4%.*a long tail pulls a mean above the median", prose, re.S)


def test_the_demo_figures_wear_no_check_mark_in_the_code():
    # M2: every figure of the synthetic fleet goes through demo_figure() or calibrated(), never claim()
    claims = re.findall(r"\bclaim\(\s*\"([^\"]+)\"", _code())
    assert claims, "13 checks no figure with claim() at all"
    for label in claims:  # only the artifact's sample traces and the engine's row against analyze are measured
        assert re.search(r"\bS of (?:ST|SE|AR)\b|ST job in the fleet's row", label), label
    assert _code().count("demo_figure(") >= 10 and "calibrated(" in _code()


def test_the_remedy_formula_states_its_cap():
    # M6: the formula without min(1, ...) claimed 32.6% where the code gave 28.5%; the cap bound for 80 of 89 jobs
    assert "min(1, (S_X − 1)/(S − 1))" in _prose() and "The cap binds for" in _prose()
    assert "min(1, (S_X − 1)/(S − 1))" in _prose(TWIN)


def test_where_the_bill_sits_is_a_curve_of_gpu_hours_not_a_second_cdf():
    # M8: the same CDF was drawn twice; the second is the cumulative share of GPU-hours lost
    code = _code()
    assert "lost_curve_chart(figures)" in code and "slowdown_cdf_chart" not in code
    assert code.count("waste_cdf_chart(") == 1


def test_the_sample_traces_are_not_called_real_production_jobs():
    # low item: AR was slowed on purpose; ST and AR are below the study's 128-GPU floor
    prose = _prose()
    assert "the artifact's three sample traces" in prose
    assert not re.search(r"\breal (?:jobs|traces)\b|real ones", prose)


def test_no_trivia_guess_and_the_notebook_ends_with_next():
    # issue 26: the "how long do 203 jobs take?" guess goes; 13 ends the track "your own job" and says what follows
    cells = _cells()
    assert not any("How long do 203 jobs take" in source(c) for c in cells)
    last = source(cells[-1])
    assert last.startswith("## Next") and "10_live_barrier_lab.ipynb" in last
    assert source(_cells(TWIN)[-1]).startswith("## 下一本")


def test_09b_reads_the_sample_traces_without_a_download():
    # low item: 09b cell 30 said to download AR and SE, which a checkout (and now the package) already has
    for path in (ROOT / "notebooks" / "09b_questions_and_remedies.ipynb",
                 ROOT / "notebooks" / "zh" / "09b_questions_and_remedies.ipynb"):
        cell = next(source(c) for c in load(path)["cells"] if "TRACE" in source(c) and c["cell_type"] == "markdown")
        assert not re.search(r"Download one|With internet access|下载一份|GitHub 上", cell), path.name
        assert "public_trace_path()" in cell and "fleet-demo" in cell


@pytest.mark.notebooks
@pytest.mark.parametrize("path", [NB, TWIN], ids=["en", "zh"])
def test_the_run_marks_the_demo_and_checks_only_measured_figures(path):
    run = _notebook_runs.executed(path)
    assert run.error is None, run.error
    printed = "\n".join("".join(o.get("text", "")) for c in run.cells if c["cell_type"] == "code"
                        for o in c.get("outputs", []) if o.get("output_type") == "stream")
    checked = re.findall(r"^✓ .*$", printed, re.M)
    assert len(checked) == 4, checked  # the ST row against analyze, and S of ST, SE and AR
    demo = re.findall(r"^(?:demo|演示)[:：] ?.*$", printed, re.M)
    assert len(demo) >= 10
    calibrated = re.findall(r"^≈ .*$", printed, re.M)
    assert len(calibrated) == 5
    # H3 in the notebook: the slowed jobs and the one worker among them, both by their count
    assert re.search(r"^→ .*[:：] ?87$", printed, re.M) and re.search(r"^→ .*[:：] ?2$", printed, re.M)
    hidden = [c for c in run.cells if "check" in tags(c)]
    assert all(c.get("metadata", {}).get("jupyter", {}).get("source_hidden") for c in hidden)
