"""Suite-wide settings.

Set ``STRAGGLE_EDU_FORBID_SKIPS=1`` (as ``.ci/run`` does) to turn every skip
into a failure of the run: CI has everything, so a skip there is a defect.
"""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# The tests' helpers (_vega, _chartdata, _exercise_checks, ...) are imported by their own names, never as
# ``tests._x``: this folder is on the path wherever pytest starts and whatever its import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# The suite runs in English whatever the shell says; a test or a notebook
# that wants Chinese asks for it.
os.environ.pop("STRAGGLE_EDU_LANG", None)

# Statistical and property tests never flake: hypothesis is derandomized.
settings.register_profile("straggle", derandomize=True, deadline=None, max_examples=60)
settings.load_profile("straggle")


@pytest.fixture(autouse=True)
def _english_unless_asked():
    """Every test starts in the default language, and none leaks its language into the next."""
    from straggle_edu.i18n import set_language

    set_language(None)
    yield
    set_language(None)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if os.environ.get("STRAGGLE_EDU_FORBID_SKIPS") != "1":
        return
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.write_line(
            f"STRAGGLE_EDU_FORBID_SKIPS=1: {len(skipped)} test(s) skipped; CI must run everything.",
            red=True,
        )


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("STRAGGLE_EDU_FORBID_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and reporter.stats.get("skipped") and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
