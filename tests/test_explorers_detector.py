"""The detector sandbox: each control changes what it should."""

import pytest
from _chartdata import layer_rows

from straggle_edu.explorers.detector import detector_explorer, detector_readout
from straggle_edu.math.detector import alarms_per_day, lognormal_timing, p_false_alarm


@pytest.fixture(scope="module")
def ex():
    return detector_explorer()


def _threshold_rows(ex):
    return layer_rows(ex.charts["per_threshold"].spec, 0)


def test_detector_explorer_readout_follows_controls(ex):
    ex.controls["threshold"].value = 0.75
    assert ex.readout.value == detector_readout(4096, 30, 0.2, 0.75, 300)
    per_day = alarms_per_day(p_false_alarm(4096, 0.75, 30, lognormal_timing(0.2)), 300)
    assert f"<b>{per_day:.3g}</b> false alarms a day" in ex.readout.value


def test_detector_explorer_window_redraws_curve(ex):
    before = [r["per_day"] for r in _threshold_rows(ex)]
    ex.controls["window"].value = 60
    after = [r["per_day"] for r in _threshold_rows(ex)]
    assert all(a <= b for a, b in zip(after, before)) and after != before


def test_detector_explorer_interval_scales_alarms(ex):
    ex.controls["window"].value = 30
    at_300 = [r["per_day"] for r in _threshold_rows(ex)]
    ex.controls["interval"].value = 60
    at_60 = [r["per_day"] for r in _threshold_rows(ex)]
    assert at_60 == pytest.approx([5 * v for v in at_300], rel=1e-12)


def test_detector_explorer_n_changes_title(ex):
    ex.controls["n"].value = 512
    assert ex.charts["per_threshold"].spec["title"] == "at n = 512"


def test_detector_explorer_rejects_bad_start():
    with pytest.raises(ValueError, match=r"cv must be in \[0.01, 0.5\], got 0.9"):
        detector_explorer(cv=0.9)
