"""Suite-wide settings: the language, the tiers, the shared notebook runs, and the budgets.

The tiers (the README's "Tests" section states them, and ``tests/test_readme.py``
holds it to ``tests/_tiers.py``):

- ``pytest``: the default tier, a newcomer's whole verdict: unit and property
  tests, doctests, and every notebook in both languages executed once. Tests
  marked ``slow`` are left out (deselected, not skipped).
- ``pytest -m slow``: the slow tier only: the browser suite and the static
  site, the Binder stand-in, the install recipes and the wheel, the student
  copies, the JupyterLab server, real processes that time themselves (alone:
  nothing runs beside a slow test), torchrun.
- ``pytest --full``: both, as CI runs them (``.ci/run`` runs the default tier
  with the README's command, then the slow tier).
- ``pytest -m "not slow and not notebooks" -x -n auto``: the quick loop while editing
  (no notebook runs).

Set ``STRAGGLE_EDU_FORBID_SKIPS=1`` (as ``.ci/run`` does) to turn every skip
into a failure of the run: CI has everything, so a skip there is a defect.
Set ``STRAGGLE_EDU_BUDGETS=1`` (as ``.ci/run`` does) to fail a run that takes
more than 1.5 times its tier's budget.
"""

import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import settings

# The tests' helpers (_vega, _chartdata, _exercise_checks, ...) are imported by their own names, never as
# ``tests._x``: this folder is on the path wherever pytest starts and whatever its import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _notebook_runs  # noqa: E402
from _tiers import BUDGET_SLACK, TIERS  # noqa: E402

# The suite runs in English whatever the shell says; a test or a notebook
# that wants Chinese asks for it.
os.environ.pop("STRAGGLE_EDU_LANG", None)

# Statistical and property tests never flake: hypothesis is derandomized.
settings.register_profile("straggle", derandomize=True, deadline=None, max_examples=60)
settings.load_profile("straggle")

_SESSION = {"start": time.monotonic(), "tier": "default", "by_file": defaultdict(float)}


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="run every tier: the default tests and the slow ones (as CI does)")


def tier(config):
    """The tier a run is: "default", "slow", "full", "loop" or "custom" (any other -m)."""
    if config.getoption("--full"):
        return "full"
    expr = " ".join(config.getoption("markexpr", "").split())
    return {"": "default", "slow": "slow", "not slow and not notebooks": "loop"}.get(expr, "custom")


def pytest_configure(config):
    _SESSION["tier"] = tier(config)


@pytest.fixture(autouse=True)
def _english_unless_asked():
    """Every test starts in the default language, and none leaks its language into the next."""
    from straggle_edu.i18n import set_language

    set_language(None)
    yield
    set_language(None)


def pytest_collection_modifyitems(config, items):
    # The default tier leaves the slow tests out; -m or --full chooses otherwise.
    if _SESSION["tier"] == "default":
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    # Tests that read notebook runs go last, so the runs happen while the rest of the suite does.
    readers = [item for item in items if item.get_closest_marker("notebooks")]
    if readers:
        others = [item for item in items if not item.get_closest_marker("notebooks")]
        items[:] = others + readers


def _notebooks_of(item):
    params = getattr(getattr(item, "callspec", None), "params", {})
    return [v for v in params.values() if isinstance(v, Path) and v.suffix == ".ipynb"]


def pytest_collection_finish(session):
    wanted = [path for item in session.items if item.get_closest_marker("notebooks") for path in _notebooks_of(item)]
    if wanted:
        _notebook_runs.start(dict.fromkeys(wanted))


def pytest_runtest_logreport(report):
    _SESSION["by_file"][report.nodeid.split("::", 1)[0]] += report.duration


def _elapsed_minutes():
    return (time.monotonic() - _SESSION["start"]) / 60


def _over_budget():
    budget = TIERS.get(_SESSION["tier"], {}).get("minutes")
    return budget is not None and _elapsed_minutes() > BUDGET_SLACK * budget


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    name = _SESSION["tier"]
    budget = TIERS.get(name, {}).get("minutes")
    spent = f"{_elapsed_minutes():.1f} min" + (f" of a {budget} min budget" if budget else "")
    terminalreporter.section(f"tier: {name} ({spent})")
    top = sorted(_SESSION["by_file"].items(), key=lambda kv: -kv[1])[:12]
    for path, seconds in top:
        terminalreporter.write_line(f"{seconds:8.1f} s  {path}")
    if os.environ.get("STRAGGLE_EDU_BUDGETS") == "1" and _over_budget():
        terminalreporter.write_line(
            f"STRAGGLE_EDU_BUDGETS=1: the {name} tier took {_elapsed_minutes():.1f} min, "
            f"more than {BUDGET_SLACK} x its {budget} min budget.", red=True)
    if os.environ.get("STRAGGLE_EDU_FORBID_SKIPS") == "1":
        skipped = terminalreporter.stats.get("skipped", [])
        if skipped:
            terminalreporter.write_line(
                f"STRAGGLE_EDU_FORBID_SKIPS=1: {len(skipped)} test(s) skipped; CI must run everything.", red=True)


def pytest_sessionfinish(session, exitstatus):
    _notebook_runs.shutdown()
    if session.exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get("STRAGGLE_EDU_FORBID_SKIPS") == "1" and reporter is not None and reporter.stats.get("skipped"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if os.environ.get("STRAGGLE_EDU_BUDGETS") == "1" and _over_budget():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
