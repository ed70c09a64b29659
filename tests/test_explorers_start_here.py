"""The map's live demo: the workers slider moves the chart param and the readout."""

import pytest
from scipy import stats

from straggle_edu import expected_max
from straggle_edu.explorers.start_here import START_HERE_STEP_TIME, start_here_explorer


def test_start_here_explorer_numbers_are_exact_expected_maxima():
    ex = start_here_explorer(max_workers=256, n=256)
    assert list(ex.ns) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert ex.job[-1] == pytest.approx(expected_max(START_HERE_STEP_TIME, 256), rel=1e-12)
    assert ex.average == pytest.approx(1.005)


def test_start_here_explorer_slider_moves_the_param_and_readout():
    ex = start_here_explorer(max_workers=1024, n=1024)
    ex.controls["n"].value = 16
    assert ex.charts["steps"].params.n == 16
    t = ex.job[4]
    assert f"job <b>{t:.3f}</b> s" in ex.readout.value
    assert f"16 workers do the work of <b>{16 * 1.005 / t:.1f}</b>" in ex.readout.value


def test_start_here_explorer_every_position_is_safe():
    ex = start_here_explorer(stats.norm(1.0, 0.1), max_workers=64, n=1)
    for _, value in ex.controls["n"].options:
        ex.controls["n"].value = value
    assert "64 workers" in ex.readout.value


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_workers=100), "max_workers must be a power of two, got 100"),
        (dict(n=3), "n must be a power of two, got 3"),
        (dict(n=8192), "n must be a whole number in 1..4096, got 8192"),
        (dict(step_time=stats.poisson(2)), "step_time must be a continuous distribution"),
    ],
)
def test_start_here_explorer_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        start_here_explorer(**kwargs)
