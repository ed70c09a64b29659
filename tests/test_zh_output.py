"""The Chinese twins' output speaks Chinese: no English sentence left in what a reader sees.

Three quick, representative twins run here (a restaurant with explorers, the
training step's charts and widgets, the fact-check tables, the claims and
remedies of 09b); :mod:`tests._zh_output` runs any twin by hand and lists
its leftovers. What stays English on purpose (code, op names, units,
citation titles and affiliations) is in its ``ALLOW`` list.
"""

import shutil
import sys
from pathlib import Path

import pytest

import _zh_output

pytest.importorskip("nbclient")

TWINS = ["01_restaurant.ipynb", "08_fact_check.ipynb", "09b_questions_and_remedies.ipynb"]


def test_english_runs_finds_sentences_and_spares_what_stays_english():
    assert _zh_output.english_runs("the job ran 1.59x as long") == ["the job ran", "x as long"]
    assert _zh_output.english_runs("✓ 作业用时 (s) = 6.77（文中：6.77）") == []
    assert _zh_output.english_runs('Lin et al., "Understanding Stragglers in Large Model Training"') == []
    assert _zh_output.english_runs("all-reduce reduce-scatter all-gather") == []
    assert _zh_output.english_runs("引用：发现 = 持续存在 the slowdown persists across steps") == ["the slowdown persists across steps"]


@pytest.mark.skipif(shutil.which("jupyter") is None and not Path(sys.executable).with_name("jupyter").exists(),
                    reason="no Jupyter kernel")
@pytest.mark.parametrize("name", TWINS)
def test_twin_output_has_no_english_sentence(name):
    nb = _zh_output.run(_zh_output.ZH / name)
    errors = [f"{c.id}: {o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors
    found = _zh_output.leftovers(nb)
    assert _zh_output.texts(nb), "nothing collected from the notebook's output"
    assert not found, "\n".join(f"[{where} {kind}] {english!r} <- {text!r}" for where, kind, english, text in found)
