"""The SGD sandbox explorer: controls follow the scheme; a run draws its curve."""

from straggle_edu.explorers.backup_for_real import real_sgd_explorer


def test_sgd_explorer_backups_only_for_backup_and_drop():
    ex = real_sgd_explorer(scheme="backup", workers=4, backups=1)
    assert not ex.controls["backups"].disabled and ex.controls["backups"].max == 3
    ex.controls["scheme"].value = "local"
    assert ex.controls["backups"].disabled
    ex.controls["scheme"].value = "drop"
    ex.controls["workers"].value = 2
    assert ex.controls["backups"].max == 1


def test_sgd_explorer_run_draws_measured_and_predicted():
    ex = real_sgd_explorer(scheme="backup", workers=2, backups=1, steps=20, base_step=0.005)
    result = ex.run()
    assert result is not None and ex.progress.value == 20 and ex.progress.bar_style == "success"
    spec = ex.charts["curves"].chart.to_dict()
    kinds = {v["kind"] for v in spec["data"]["values"]}
    assert kinds == {"measured", "predicted"} and "gradients applied" in ex.readout.value
