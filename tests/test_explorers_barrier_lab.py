"""The live barrier lab explorer: controls, a real run, progress, charts, errors."""

import pytest
from ipywidgets import Button

from straggle_edu.instruments.barrier_lab import cpu_cores
from straggle_edu.explorers.barrier_lab import LAB_MAX_WORKERS, barrier_lab_explorer
from test_barrier_lab import read_trace, spawned_children


def test_barrier_lab_explorer_runs_the_lab_and_draws_it(tmp_path):
    out = tmp_path / "lab.csv"
    ex = barrier_lab_explorer(workers=3, steps=4, step_seconds=0.02, slow_rank=2, out=out)
    seen = []
    ex.progress.observe(lambda change: seen.append(change["new"]), names="value")
    result = ex.run()
    assert result is ex.result and result.complete and result.settings.workers == 3
    assert seen == [1, 2, 3, 4] and ex.progress.max == 4 and ex.progress.bar_style == "success"
    gantt = ex.charts["gantt"].chart.to_dict()
    assert len(gantt["hconcat"][0]["layer"][0]["data"]["values"]) == 4 * 3 * 2
    parts = ex.charts["prediction"].chart.to_dict()["layer"][0]["data"]["values"]
    assert parts[0]["end"] == pytest.approx(1e3 * ex.prediction.expected_max)
    assert "measured" in ex.readout.value and "rank <b>2</b>" in ex.readout.value
    rows, complete = read_trace(out)
    assert complete and len(rows) == 4 * 3 * 2
    assert not ex.controls["run_button"].disabled and spawned_children() == []


def test_barrier_lab_explorer_controls_set_the_run(tmp_path):
    ex = barrier_lab_explorer(workers=4, steps=10, out=tmp_path / "lab.csv")
    c = ex.controls
    c["workers"].value, c["steps"].value, c["step_ms"].value = 2, 3, 10
    c["slow_rank"].value, c["slow_factor"].value, c["seed"].value = 0, 3.0, 7
    r = ex.run()
    s = r.settings
    assert (s.workers, s.steps, s.step_seconds, s.slow_rank, s.slow_factor, s.seed) == (2, 3, 0.01, 0, 3.0, 7)
    assert r.slowest_rank == 0


def test_barrier_lab_explorer_keeps_every_control_valid(tmp_path):
    ex = barrier_lab_explorer(workers=4, out=tmp_path / "lab.csv")
    c = ex.controls
    c["slow_rank"].value = 3
    c["workers"].value = 2  # rank 3 no longer exists
    assert c["slow_rank"].value == -1 and [v for _, v in c["slow_rank"].options] == [-1, 0, 1]
    c["workers"].value = LAB_MAX_WORKERS
    c["work"].value = "compute"  # one worker per core
    assert c["workers"].max == min(LAB_MAX_WORKERS, cpu_cores()) and c["workers"].value <= cpu_cores()
    c["work"].value = "sleep"
    assert c["workers"].max == LAB_MAX_WORKERS
    # Every control at its extremes gives valid lab settings (no run needed).
    from straggle_edu.instruments.barrier_lab import LabSettings

    for name, control in c.items():
        if isinstance(control, Button) or hasattr(control, "options"):
            continue
        for value in (control.min, control.max):
            control.value = value
            rank = c["slow_rank"].value
            LabSettings(workers=c["workers"].value, steps=c["steps"].value, step_seconds=c["step_ms"].value / 1e3,
                        jitter=c["jitter"].value, pause_prob=c["pause_prob"].value,
                        pause_seconds=c["pause_ms"].value / 1e3, slow_rank=None if rank == -1 else rank,
                        slow_factor=c["slow_factor"].value, work=c["work"].value, seed=c["seed"].value)


def test_barrier_lab_explorer_shows_errors_instead_of_raising(tmp_path):
    ex = barrier_lab_explorer(workers=2, steps=2, step_seconds=0.01, out=tmp_path / "missing" / "lab.csv")
    assert ex.run() is None
    assert "Error" in ex.readout.value and "folder that exists" in ex.readout.value
    assert ex.progress.bar_style == "danger" and not ex.controls["run_button"].disabled


def test_barrier_lab_explorer_stop_button_draws_the_partial_run(tmp_path):
    out = tmp_path / "lab.csv"
    ex = barrier_lab_explorer(workers=2, steps=50, step_seconds=0.02, out=out)

    def stop(change):
        if change["new"] == 3:
            raise KeyboardInterrupt  # what the kernel's stop button does

    ex.progress.observe(stop, names="value")
    with pytest.raises(KeyboardInterrupt):
        ex.run()
    assert ex.progress.bar_style == "warning" and "Interrupted" in ex.readout.value
    assert ex.result.steps_done == 3 and not ex.result.complete
    assert len(ex.charts["gantt"].chart.to_dict()["hconcat"][0]["layer"][0]["data"]["values"]) == 3 * 2 * 2
    assert not read_trace(out)[1] and spawned_children() == []
    ex.progress.unobserve(stop, names="value")
    ex.controls["run_button"].click()  # the button swallows nothing else and runs again
    assert ex.result.complete


def test_barrier_lab_explorer_fixed_work_ignores_the_drawn_knobs(tmp_path):
    ex = barrier_lab_explorer(workers=1, steps=3, step_seconds=0.01, jitter=0.2, slow_rank=None, out=tmp_path / "lab.csv")
    c = ex.controls
    assert "fixed" in [v for __, v in c["work"].options] and not c["jitter"].disabled
    c["work"].value = "fixed"
    assert c["jitter"].disabled and c["pause_prob"].disabled and c["pause_ms"].disabled
    assert c["workers"].max == min(LAB_MAX_WORKERS, cpu_cores())
    r = ex.run()  # the jitter slider still reads 0.2; fixed work draws nothing, so the run uses 0
    assert r.complete and r.settings.work == "fixed" and r.settings.jitter == 0.0 and r.settings.work_units >= 1
    assert ex.prediction.drawn_max == pytest.approx(r.busy.max(axis=1).mean())
    c["work"].value = "sleep"
    assert not c["jitter"].disabled


def test_barrier_lab_explorer_starts_in_fixed_work(tmp_path):
    ex = barrier_lab_explorer(workers=1, work="fixed", slow_rank=None, out=tmp_path / "lab.csv")
    assert ex.controls["jitter"].value == 0.0 and ex.controls["jitter"].disabled
