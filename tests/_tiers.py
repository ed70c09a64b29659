"""The test tiers: the command that runs each and its budget, in minutes on 2 cores.

``tests/conftest.py`` says which tier a run is and, with ``STRAGGLE_EDU_BUDGETS=1``
(as ``.ci/run`` sets), fails a run that takes more than :data:`BUDGET_SLACK`
times its budget; ``tests/test_readme.py`` holds the README's table of tiers to
this one.
"""

TIERS = {
    "default": {"command": "pytest", "minutes": 8},
    "slow": {"command": "pytest -m slow", "minutes": 20},
    "full": {"command": "pytest --full", "minutes": 26},
    "loop": {"command": 'pytest -m "not slow and not notebooks" -x -n auto', "minutes": 2},
}
# A run over its budget by more than this factor fails when STRAGGLE_EDU_BUDGETS=1.
BUDGET_SLACK = 1.5
