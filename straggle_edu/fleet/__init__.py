"""The fleet: every job of a cluster analysed by the one what-if engine, on Dask, with the study's fleet figures.

Map of the room
---------------
:mod:`~straggle_edu.fleet.sources`
    SOURCE arguments (directories, globs, manifests, trace files) -> jobs.
:mod:`~straggle_edu.fleet.engine`
    one job -> its row (the same functions as ``straggle-edu analyze``);
    a fleet on a ``distributed`` cluster (a LocalCluster by default), large
    jobs cut into blocks of steps run as tasks of their own.
:mod:`~straggle_edu.fleet.cluster`
    which cluster (``--scheduler``, ``--scheduler-file``,
    ``DASK_SCHEDULER_ADDRESS``, a LocalCluster), the connection and its
    timeout, and each failure as one line; SIGINT kept from the
    LocalCluster's workers, SIGTERM turned into an exception.
:mod:`~straggle_edu.fleet._progress`
    a progress bar on a terminal, log lines elsewhere.
:mod:`~straggle_edu.fleet.store`
    rows written as each job finishes, resume by content hash,
    ``jobs.parquet`` and ``jobs.csv``.
:mod:`~straggle_edu.fleet.figures`
    the study's fleet figures from the rows (``fleet.json``).
:mod:`~straggle_edu.fleet.demo`
    a synthetic fleet to learn on, calibrated to the OSDI 2025 study's fleet
    figures, plus the artifact's three sample traces (``straggle-edu fleet-demo``); :func:`~straggle_edu.fleet.demo.demo_of`
    tells a run that it is the demo, so that its figures are labelled calibrated.
:mod:`~straggle_edu.fleet.remedies`
    what each remedy recovers over a fleet's rows: replacing slow hosts
    against rebalancing stages.
:mod:`~straggle_edu.fleet.cli`
    ``straggle-edu fleet SOURCE... --out DIR`` and ``straggle-edu fleet-demo DIR``.

Dask is imported only inside the functions that start or use a cluster, so
``import straggle_edu.fleet`` stays light and works without it (the fleet
then runs in this process only, ``workers=0``). The room never draws: the
charts (:mod:`straggle_edu.charts.fleet`) and the HTML report
(:mod:`straggle_edu.app.fleet_report`) take its rows and figures as plain
data. See ``docs/fleet.md``.
"""

__all__ = []
