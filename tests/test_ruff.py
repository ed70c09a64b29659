"""The code passes ruff with the settings in pyproject.toml ([tool.ruff])."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff():
    """ruff's command: the module of this environment, else the one on PATH."""
    found = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    if found.returncode == 0:
        return [sys.executable, "-m", "ruff"]
    if shutil.which("ruff"):
        return [shutil.which("ruff")]
    pytest.skip("ruff is not installed (it comes with the test extra: pip install -e '.[test]')")


def test_ruff_check_is_clean():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise",
                           "straggle_edu", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"ruff found problems (fix them, or `ruff check --fix`):\n{done.stdout}{done.stderr}"


def _check_source(source):
    """ruff's findings for one source text, as if it were a module of the package."""
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise",
                           "--stdin-filename", "straggle_edu/_ruff_probe.py", "-"],
                          cwd=ROOT, input=source, capture_output=True, text=True, timeout=60)
    return done.stdout


def test_ruff_settings_limit_lines_to_140_characters():
    line = "x = " + repr("a" * 134)  # 140 characters
    assert len(line) == 140
    assert "E501" not in _check_source(line + "\n")
    assert "E501" in _check_source(line[:-1] + "a'\n")


def test_ruff_settings_find_unused_imports():
    assert "F401" in _check_source("import os\n")
