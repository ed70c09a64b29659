"""Tail explorers: controls drive chart params, readouts are the library's numbers."""

import pytest
from ipywidgets import FloatLogSlider, SelectionSlider

from straggle_edu import p_any_slow, per_worker_budget, workers_until
from straggle_edu.explorers import worker_counts
from straggle_edu.explorers.tail import budget_explorer, percentile_explorer, tail_explorer


def _sweep(ex):
    """Set every control to both ends of its range; nothing may raise."""
    for control in ex.controls.values():
        if isinstance(control, SelectionSlider):
            ends = control.options[-1][1], control.options[0][1]
        elif isinstance(control, FloatLogSlider):
            ends = control.base**control.max, control.base**control.min
        else:
            ends = control.max, control.min
        for value in ends:
            control.value = value
            assert control.value == pytest.approx(value)


def test_tail_explorer_controls_drive_the_params():
    ex = tail_explorer()
    params = ex.charts["tail"].params
    ex.controls["p"].value = 0.001
    ex.controls["n"].value = 2000
    ex.controls["target"].value = 0.9
    assert (params.p, params.n, params.target) == (0.001, 2000, 0.9)


def test_tail_explorer_sliders_are_logarithmic():
    ex = tail_explorer()
    p, n = ex.controls["p"], ex.controls["n"]
    assert isinstance(p, FloatLogSlider) and isinstance(n, SelectionSlider)
    assert (p.base**p.min, p.base**p.max) == pytest.approx((1e-5, 0.5))
    counts = [value for _, value in n.options]
    assert counts[0] == 1 and counts[-1] == 100_000
    assert {100, 2000, 4096, 69, 693} <= set(counts)
    assert all(1 < b / a <= 2 for a, b in zip(counts, counts[1:]))
    assert 30 <= len(counts) <= 120


def test_worker_counts_keeps_extra_counts():
    assert 3333 in worker_counts([3333.4]) and 3333 not in worker_counts()


def test_tail_explorer_readout_is_the_library():
    ex = tail_explorer()
    ex.controls["p"].value = 1e-4
    ex.controls["n"].value = 2000
    want_p = f"{p_any_slow(1e-4, 2000):.1%}"
    want_n = f"{workers_until(1e-4, 0.5):,}"
    assert want_p == "18.1%"
    assert f"<b>{want_p}</b> at n = 2,000" in ex.readout.value and f"<b>{want_n}</b> workers" in ex.readout.value


def test_tail_explorer_rounds_a_fractional_worker_count():
    ex = tail_explorer(n=99.6)
    assert ex.controls["n"].value == 100 and "at n = 100 " in ex.readout.value


def test_tail_explorer_every_control_range_is_safe():
    ex = tail_explorer()
    _sweep(ex)
    assert "workers" in ex.readout.value


def test_budget_explorer_controls_and_readout():
    ex = budget_explorer()
    ex.controls["n"].value = 1000
    ex.controls["target"].value = 0.1
    assert (ex.charts["budget"].params.n, ex.charts["budget"].params.target) == (1000, 0.1)
    b = per_worker_budget(1000, 0.1)
    assert f"<b>{b:.4g}</b>" in ex.readout.value and f"<b>{1 / b:,.0f}</b>" in ex.readout.value
    _sweep(ex)


def test_percentile_explorer_every_control_moves_a_param_only():
    ex = percentile_explorer()
    chart_before = ex.charts["percentiles"].chart
    params = ex.charts["percentiles"].params
    for name, value in [("n", 4096), ("jitter", 0.1), ("pause_prob", 0.05), ("pause", 1.5)]:
        ex.controls[name].value = value
        assert getattr(params, name) == value
    assert ex.charts["percentiles"].chart is chart_before  # no re-render
    assert ex.step_time().pause_prob == 0.05 and ex.step_time().pause == 1.5


def test_percentile_explorer_readout_is_the_library():
    ex = percentile_explorer()
    ex.controls["n"].value = 100
    worker = ex.step_time()
    level = 100 * (1 - per_worker_budget(100, 0.5))
    assert ex.readout.value == (f"worker p99 <b>{worker.ppf(0.99):.3f}</b> s · "
                                f"the job's median step = the worker's <b>p{level:.2f}</b>")
    ex.controls["n"].value = 100_000
    assert "<b>p99.99931</b>" in ex.readout.value


def test_percentile_explorer_every_control_range_is_safe():
    ex = percentile_explorer()
    _sweep(ex)
    assert "p" in ex.readout.value


@pytest.mark.parametrize(
    "make, kwargs, message",
    [
        (tail_explorer, dict(p=0.9), r"p must be in \[1e-05, 0.5\], got 0.9"),
        (budget_explorer, dict(n=0), r"n must be in \[1, 100000\], got 0"),
        (percentile_explorer, dict(jitter=0.5), r"jitter must be in \[0.02, 0.2\], got 0.5"),
    ],
)
def test_tail_explorers_bad_input(make, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(**kwargs)
