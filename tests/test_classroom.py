"""Student copies: solutions removed, checks and hints intact, still runnable."""

import json
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


def _removed_lines(original, copy):
    """The code lines of ``original`` that its student copy ``copy`` leaves out, cell by cell."""
    kept = {c.id: c for c in copy.cells}
    removed = []
    for cell in original.cells:
        if cell.id not in kept:
            removed.append((cell.cell_type, cell.source))
        elif cell.cell_type == "code":
            left = set(kept[cell.id].source.splitlines())
            removed += [("code", line) for line in cell.source.splitlines() if line not in left]
    return removed


@pytest.mark.skipif(not _notebooks(), reason="no notebooks yet")
def test_student_copies_run_wherever_their_originals_run():
    # A copy leaves out only `.solution()` calls, each a statement that binds no name, so every cell
    # of the copy runs as it did in the original's run (tests/test_notebook_runs.py). The copies
    # themselves run, in student mode, as the Binder stand-in (tests/test_binder.py).
    import ast

    for path in _notebooks():
        original = nbformat.read(path, as_version=4)
        for kind, text in _removed_lines(original, classroom.student_copy(original)):
            assert kind == "code", f"{path.name}: the copy drops a {kind} cell"
            code = text.strip().lstrip("#").strip()
            tree = ast.parse(code)
            assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), f"{path.name}: {text!r}"
            call = tree.body[0].value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "solution", text


def test_a_student_copy_says_what_it_can_do_in_its_own_language():
    # The instructor's copy says "Uncomment `hint()` for a nudge, `solution()` for the answer"; a copy has no
    # solutions, so its prose says what it can do instead, in the notebook's language.
    from straggle_edu.i18n import translate

    en = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from straggle_edu.exercises import ____"),
        nbformat.v4.new_markdown_cell("## Exercises\n\nReplace `____` and run the cell. "
                                      "Uncomment `hint()` for a nudge, `solution()` for the answer.\n\n**q1.** How many?"),
    ])
    zh = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('import straggle_edu; straggle_edu.set_language("zh")\nx = 1'),
        nbformat.v4.new_markdown_cell("把 `____` 换成你的答案，运行单元格。`q1.hint()` 给提示，`q1.solution()` 给答案。"),
    ])
    said_en = translate(classroom.STUDENT_EXERCISES, "en")
    assert classroom.student_copy(en).cells[1].source == (
        f"## Exercises\n\nReplace `____` and run the cell. {said_en}\n\n**q1.** How many?")
    said_zh = translate(classroom.STUDENT_EXERCISES, "zh")
    assert said_zh != said_en and "hint()" in said_zh
    assert classroom.student_copy(zh).cells[1].source == f"把 `____` 换成你的答案，运行单元格。{said_zh}"
    assert "solution()" in en.cells[1].source  # the input is untouched


@pytest.mark.skipif(not _notebooks(), reason="no notebooks yet")
def test_no_student_copy_of_the_project_notebooks_offers_solution():
    from straggle_edu.i18n import translate

    for path in _notebooks():
        original = nbformat.read(path, as_version=4)
        lang = "zh" if path.parent.name == "zh" else "en"
        said = translate(classroom.STUDENT_EXERCISES, lang)
        copied = {cell.id: cell for cell in classroom.student_copy(original).cells}
        for before in original.cells:
            after = copied.get(before.id)
            if before.cell_type != "markdown" or after is None:
                continue
            assert "solution()" not in after.source, f"{path.name}: {after.source[:80]!r}"
            assert ("solution()" in before.source) == (said in after.source), f"{path.name}: {after.source[:80]!r}"
