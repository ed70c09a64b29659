"""The tiers do what the README says: a plain run leaves the slow tests out, -m slow and --full bring them in,
and with STRAGGLE_EDU_BUDGETS=1 a run over its budget fails.

Each case runs pytest in a fresh folder holding this suite's conftest, its tier table and a
three-test file, so that what is checked is the real hook code, not a copy of its logic.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Each case starts a pytest process (a few seconds each): the slow tier.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent

SAMPLE = '''
import pytest

def test_quick():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.notebooks
def test_reads_runs():
    pass
'''

INI = """[pytest]
markers =
    slow: slow tier
    notebooks: reads notebook runs
    browser: browser
    torch: torch
"""


@pytest.fixture
def suite(tmp_path):
    for name in ("conftest.py", "_tiers.py", "_notebook_runs.py"):
        shutil.copy(HERE / name, tmp_path / name)
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text(INI)
    return tmp_path


def _pytest(folder, *args, env=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRAGGLE_EDU_")} | (env or {})
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *args], cwd=folder,
                          capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, done.stdout


@pytest.mark.parametrize("args, ran, tier", [
    ((), ["test_quick", "test_reads_runs"], "default"),
    (("-m", "slow"), ["test_slow"], "slow"),
    (("--full",), ["test_quick", "test_slow", "test_reads_runs"], "full"),
    (("-m", "not slow and not notebooks"), ["test_quick"], "loop"),
])
def test_each_tier_runs_its_tests_and_names_itself(suite, args, ran, tier):
    code, out = _pytest(suite, *args)
    assert code == 0, out
    passed = [line.split("::")[1].split()[0] for line in out.splitlines() if " PASSED" in line]
    assert sorted(passed) == sorted(ran), out
    assert f"tier: {tier} (" in out
    if ran[-1] == "test_reads_runs" and len(ran) > 1:
        assert passed[-1] == "test_reads_runs", "tests that read notebook runs go last"


def test_a_run_over_its_budget_fails_when_budgets_are_enforced(suite):
    tiers = suite / "_tiers.py"
    tiers.write_text(tiers.read_text().replace('"minutes": 8}', '"minutes": 0.00001}'))
    code, out = _pytest(suite, env={"STRAGGLE_EDU_BUDGETS": "1"})
    assert code == 1 and "more than 1.5 x its 1e-05 min budget" in out, out


def test_a_skip_fails_the_run_when_skips_are_forbidden(suite):
    (suite / "test_skip.py").write_text("import pytest\n\ndef test_skipped():\n    pytest.skip('needs X')\n")
    code, out = _pytest(suite, env={"STRAGGLE_EDU_FORBID_SKIPS": "1"})
    assert code == 1 and "1 test(s) skipped; CI must run everything" in out, out
