"""Explorers of 03b: set .value on a control and check what changed."""

from __future__ import annotations

import numpy as np

from straggle_edu.explorers.independence import independence_explorer, scale_up_explorer, step_times_from


def test_independence_explorer_full_sharing_by_the_job_gives_p():
    ex = independence_explorer(p=0.01, shared=0.5, group=8, rho=0.3, n=4096)
    before = ex.charts["independence"].chart
    ex.controls["group"].value = 4096
    ex.controls["shared"].value = 1.0
    assert "<b>1.0%</b>" in ex.readout.value
    assert ex.charts["independence"].chart is not before


def test_scale_up_explorer_flags_extrapolation_and_errors():
    text = " ".join(f"{x:.4f}" for x in np.random.default_rng(0).normal(1.0, 0.05, 64))
    ex = scale_up_explorer(text, n=8)
    assert "beyond" not in ex.readout.value
    ex.controls["n"].value = 4096
    assert "beyond your 64 measurements" in ex.readout.value
    ex.controls["text"].value = "1.0, 2.0, x"
    assert "got 'x' (item 3)" in ex.readout.value


def test_step_times_from_reads_a_rank_csv(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("step,rank,duration_s\n0,0,1.0\n0,1,1.1\n1,0,0.9\n1,1,1.2\n")
    assert sorted(step_times_from(csv_path=str(path)).tolist()) == [0.9, 1.0, 1.1, 1.2]
