"""The layers stay honest: lower rooms never import higher ones."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["straggle_edu.math", "straggle_edu", "straggle_edu.models"])
def test_math_and_models_import_no_charts_or_widgets(module):
    code = (
        f"import sys, {module}; "
        "bad = [m for m in ('altair', 'ipywidgets', 'anywidget', 'IPython') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_charts_import_no_widgets():
    code = (
        "import sys, straggle_edu.charts; "
        "print(','.join(m for m in ('ipywidgets', 'anywidget') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
