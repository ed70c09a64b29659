"""The test tiers: the command that runs each and its budget, in minutes on 2 cores.

``tests/conftest.py`` says which tier a run is and, with ``STRAGGLE_EDU_BUDGETS=1``
(as ``.ci/run`` sets), fails a run that takes more than :data:`BUDGET_SLACK`
times its budget; ``tests/test_readme.py`` holds the README's table of tiers to
this one.
"""

TIERS = {
    "default": {"command": "pytest", "minutes": 8},
    "slow": {"command": "pytest -m slow", "minutes": 23},
    "full": {"command": "pytest --full", "minutes": 29},
    "loop": {"command": 'pytest -m "not slow and not notebooks" -x -n auto', "minutes": 2},
}
# The named parts of a tier's budget, in minutes on 2 cores: each is stated in its tier's README row.
SHARES = {
    # tests/test_traces_ddp_truth.py: ten live 2-rank torchrun jobs (about 8 s of CPU each, mostly importing torch
    # in torchrun and both ranks) and one stopped with Ctrl-C.
    # tests/test_install.py: the wheelhouse built, two fresh environments installed (one offline from it, the hub's
    # from the index, side by side), then fleet-demo and notebooks 09, 11 and 13 run from the installed wheel.
    # tests/test_lab_timings.py: notebooks 10, 11 and A4, each run alone.
    "slow": {"the live DDP ground truth": 1.5, "the install recipes": 5, "held strictly": 0.7},
}
# A run over its budget by more than this factor fails when STRAGGLE_EDU_BUDGETS=1.
BUDGET_SLACK = 1.5
