"""The fleet: every job of a cluster, analysed with the one what-if engine.

Map of the room
---------------
:mod:`~straggle_edu.fleet.demo`
    a synthetic fleet to learn on, calibrated to the OSDI 2025 study's fleet
    figures, plus the study's three public jobs (``straggle-edu fleet-demo``).
:mod:`~straggle_edu.fleet.remedies`
    what each remedy recovers over a fleet's rows: replacing slow hosts
    against rebalancing stages.
:mod:`~straggle_edu.fleet.cli`
    the ``fleet-demo`` subcommand.

This room imports math, models, traces, the input checker and the language
switch; never a chart or a widget, and dask only inside the functions that
run on it, so that ``import straggle_edu.fleet`` stays light.
"""
