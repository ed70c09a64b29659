"""Student copies: solutions removed, checks and hints intact, still runnable."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from straggle_edu.app import classroom
from straggle_edu.exercises import Exercise, solutions_visible

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _exercise():
    return Exercise("q9", expected=lambda: 14.0, hint="The table waits for the last dish.", solution="max(times)")


def test_student_copy_removes_solution_cells_and_calls():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("q1.check(____)\n# q1.hint()\n# q1.solution()\nq2.solution()  # reveal"),
            nbformat.v4.new_markdown_cell("Answer: 14", metadata={"tags": ["solution"]}),
            nbformat.v4.new_markdown_cell("Keep me"),
        ]
    )
    out = classroom.student_copy(nb)
    assert [c.source for c in out.cells] == ["q1.check(____)\n# q1.hint()", "Keep me"]
    assert len(nb.cells) == 3  # the input is untouched


def test_student_copies_refuses_to_overwrite_the_source(tmp_path):
    (tmp_path / "a.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    with pytest.raises(ValueError, match="out_dir must be a folder other than the notebooks folder"):
        classroom.student_copies(tmp_path, tmp_path)


def test_student_copies_refuses_a_missing_parent(tmp_path):
    with pytest.raises(ValueError, match="existing folder"):
        classroom.student_copies(tmp_path / "no" / "such", NOTEBOOKS)


def test_solution_is_hidden_beside_the_marker(tmp_path, monkeypatch, capsys):
    q = _exercise()
    monkeypatch.delenv("STRAGGLE_EDU_STUDENT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert solutions_visible()
    q.solution()
    assert "max(times)" in capsys.readouterr().out
    (tmp_path / classroom.MARKER).write_text("student")
    assert not solutions_visible()
    q.solution()
    text = capsys.readouterr().out
    assert "max(times)" not in text and "instructor" in text
    q.check(10.5)  # a wrong answer must not reveal the expected value either
    assert "14" not in capsys.readouterr().out
    assert q.is_correct(14.0)


def test_an_exercise_repr_gives_nothing_away():
    q = _exercise()
    assert "max(times)" not in repr(q) and "14" not in repr(q)


def test_solution_is_hidden_with_the_environment_variable(monkeypatch, capsys):
    monkeypatch.setenv("STRAGGLE_EDU_STUDENT", "1")
    _exercise().solution()
    assert "max(times)" not in capsys.readouterr().out


def _notebooks():
    """The English notebooks, then the Chinese twins (the order student_copies writes them in)."""
    return sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("zh/*.ipynb"))


def test_student_copies_copy_the_chinese_twins_into_their_own_folder(tmp_path, capsys):
    src = tmp_path / "notebooks"
    (src / "zh").mkdir(parents=True)
    for folder, words in ((src, "The answer is 14."), (src / "zh", "答案是 14。")):
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_code_cell("q1.check(____)\n# q1.hint()\n# q1.solution()"),
            nbformat.v4.new_markdown_cell(words, metadata={"tags": ["solution"]}),
        ])
        nbformat.write(nb, folder / "01_restaurant.ipynb")
    from straggle_edu.app.cli import main

    out = tmp_path / "students"
    assert main(["student-copies", str(out), "--from", str(src), "--lang", "zh"]) == 0
    printed = capsys.readouterr().out
    assert str(out / "zh" / "01_restaurant.ipynb") in printed
    for folder in (out, out / "zh"):
        assert (folder / classroom.MARKER).exists(), "each folder of copies needs its own marker"
        nb = json.loads((folder / "01_restaurant.ipynb").read_text())
        assert ["".join(c["source"]) for c in nb["cells"]] == ["q1.check(____)\n# q1.hint()"]


@pytest.mark.skipif(not _notebooks(), reason="no notebooks yet")
def test_student_copies_of_the_project_notebooks(tmp_path):
    out = tmp_path / "students"
    written = classroom.student_copies(out, NOTEBOOKS)
    assert [p.relative_to(out) for p in written] == [p.relative_to(NOTEBOOKS) for p in _notebooks()]
    assert (out / classroom.MARKER).exists()
    assert not (NOTEBOOKS / "zh").is_dir() or (out / "zh" / classroom.MARKER).exists()
    for path in written:
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            src = "".join(cell["source"])
            assert "solution" not in cell.get("metadata", {}).get("tags", []), path.name
            if cell["cell_type"] == "code":
                assert ".solution()" not in src, path.name
                assert cell["outputs"] == [] and cell["execution_count"] is None
        assert "widgets" not in nb["metadata"]
    # Originals are untouched: they still carry their (commented) solution calls.
    assert any(".solution()" in p.read_text() for p in _notebooks())


@pytest.mark.slow
@pytest.mark.skipif(not _notebooks(), reason="no notebooks yet")
def test_student_copies_execute_under_nbval(tmp_path):
    out = tmp_path / "students"
    classroom.student_copies(out, NOTEBOOKS)
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
        "--nbval-lax", "--nbval-current-env", "--rootdir", str(out),
        # The English copies only: a Chinese copy is its twin's code (tests/test_zh_notebooks.py)
        # stripped the same way, so running it too would double a long run for nothing new.
        *sorted(str(p) for p in out.glob("*.ipynb")),
    ]
    run = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
