"""Suite-wide settings.

Set ``STRAGGLE_EDU_FORBID_SKIPS=1`` (as ``.ci/run`` does) to turn every skip
into a failure of the run: CI has everything, so a skip there is a defect.
"""

import os

import pytest
from hypothesis import settings

# Statistical and property tests never flake: hypothesis is derandomized.
settings.register_profile("straggle", derandomize=True, deadline=None, max_examples=60)
settings.load_profile("straggle")


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
