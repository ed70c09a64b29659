"""Instruments: code that runs real processes and measures them.

``barrier_lab``
    real worker processes that meet at a real ``multiprocessing.Barrier``
    (``straggle-edu barrier``).
``probe``
    the same measurement on a real cluster under ``torchrun``, with
    ``torch.distributed`` (``torchrun -m straggle_edu.instruments.probe``).
``sgd``, ``sgd_plan``, ``sgd_procs``, ``sgd_torch``
    real data-parallel SGD with real processes: sync, backup workers, drop,
    local SGD and balanced work (``straggle-edu sgd``; the torch backend
    under ``torchrun -m straggle_edu.instruments.sgd_torch``).
``rank_csv``
    the writer of the per-rank trace CSV that both of them produce and that
    ``straggle-edu analyze`` reads.

Instruments may import every layer below the charts (math, models, traces).
What they predict comes from :mod:`straggle_edu.models`, which takes plain
arrays and never imports an instrument. Nothing is imported here, so that
``import straggle_edu.instruments.probe`` inside a torchrun worker stays lean.
"""
