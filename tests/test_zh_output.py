"""The Chinese twins' output speaks Chinese: no English sentence left in what a reader sees.

The twins in ``TWINS`` are scanned, from the session's one run of each
(``tests/_notebook_runs.py``); ``_zh_output`` (tests/_zh_output.py) runs any twin by hand
and lists its leftovers. What stays English on purpose (code, op names, units,
citation titles and affiliations) is in its ``ALLOW`` list.
"""

import pytest

import _notebook_runs
import _zh_output

TWINS = ["01_restaurant.ipynb", "08_fact_check.ipynb", "09b_questions_and_remedies.ipynb"]


def test_english_runs_finds_sentences_and_spares_what_stays_english():
    assert _zh_output.english_runs("the job ran 1.59x as long") == ["the job ran", "x as long"]
    assert _zh_output.english_runs("✓ 作业用时 (s) = 6.77（文中：6.77）") == []
    assert _zh_output.english_runs('Lin et al., "Understanding Stragglers in Large Model Training"') == []
    assert _zh_output.english_runs("all-reduce reduce-scatter all-gather") == []
    assert _zh_output.english_runs("引用：发现 = 持续存在 the slowdown persists across steps") == ["the slowdown persists across steps"]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", [_zh_output.ZH / name for name in TWINS], ids=TWINS)
def test_twin_output_has_no_english_sentence(path):
    run = _notebook_runs.executed(path)
    assert run.error is None, f"{path.name} failed at {run.error}"
    nb = run.nb
    found = _zh_output.leftovers(nb)
    assert _zh_output.texts(nb), "nothing collected from the notebook's output"
    assert not found, "\n".join(f"[{where} {kind}] {english!r} <- {text!r}" for where, kind, english, text in found)
