"""Student copies of the notebooks: ``straggle-edu student-copies OUT_DIR``.

A student copy is the same notebook with the exercise solutions taken out:

- cells tagged ``solution`` (cell metadata ``tags``) are removed;
- every line that calls ``.solution()`` is removed, while ``.check()`` and
  ``.hint()`` stay and keep working;
- a sentence of the prose that names ``solution()`` ("Uncomment `hint()` for a
  nudge, `solution()` for the answer") becomes one that says what the copy can
  do, in the notebook's language (:data:`STUDENT_EXERCISES`);
- outputs, execution counts and widget state are cleared;
- a marker file, :data:`MARKER`, is written beside the copies.

The Chinese twins in ``notebooks/zh/`` get the same treatment and land in
``OUT_DIR/zh/``, with a marker of their own (a kernel starts in its
notebook's folder, so each folder of copies needs one).

Solutions do not leak through the library either. ``Exercise.solution()``
(see :mod:`straggle_edu.exercises`) shows a solution only when
:func:`straggle_edu.exercises.solutions_visible` is true, which is false when
the kernel runs beside the marker file (a notebook's kernel starts in the
notebook's folder) or when ``STRAGGLE_EDU_STUDENT=1`` is set, as a JupyterHub
for students can do. ``check()`` then says "not yet" without the expected
value, and ``solution()`` points to the instructor's copy.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["student_copy", "student_copies", "MARKER", "STUDENT_EXERCISES"]

from .._validate import require
from ..exercises import STUDENT_MARKER as MARKER
from ..i18n import LANGUAGES, N_, _, translate
from .translations import LANGUAGE_LINE

_SOLUTION_CALL = re.compile(r"^\s*#?\s*[A-Za-z_][A-Za-z0-9_]*\.solution\(\s*\)\s*(#.*)?$")
# What a student copy's prose says where the instructor's copy names solution().
STUDENT_EXERCISES = N_("The exercises check your answer (`check()`) and give a nudge (`hint()`); this copy has no "
                       "solutions: your instructor has them.")
# Where a sentence ends: an English full stop before a space, or a Chinese one (code such as `q1.hint()` has none).
_BOUNDARY = re.compile(r"(?<=[.!?])(\s+)|(?<=[。！？])")


def _strip_solutions(source):
    lines = [ln for ln in source.splitlines() if not _SOLUTION_CALL.match(ln)]
    return "\n".join(lines)


def _student_prose(source, lang):
    """``source`` (markdown) with each sentence that names ``solution()`` replaced by :data:`STUDENT_EXERCISES`
    in ``lang``, once per paragraph line.

    Examples
    --------
    >>> out = _student_prose("Run it. Uncomment `hint()` for a nudge, `solution()` for the answer.", "en")
    >>> out == "Run it. " + STUDENT_EXERCISES
    True
    >>> _student_prose("`q1.hint()` gives a nudge, `q1.solution()` the answer. Then go on.", "en")[-30:]
    'structor has them. Then go on.'
    >>> _student_prose("No solutions named here.", "en")
    'No solutions named here.'
    """
    if "solution()" not in source:
        return source
    said = translate(STUDENT_EXERCISES, lang)
    lines = []
    for line in source.split("\n"):
        parts = [part or "" for part in _BOUNDARY.split(line)]  # sentence, space, sentence, ...
        sentences = [said if "solution()" in part else part for part in parts[::2]]
        kept = [sentences[0]]
        for space, sentence in zip(parts[1::2], sentences[1:]):
            if not (sentence == said and kept[-1] == said):  # two such sentences in a row say it once
                kept += [space, sentence]
        lines.append("".join(kept))
    return "\n".join(lines)


def _language(nb):
    """The language a notebook speaks: its first code cell's language line, else English."""
    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    return "zh" if first is not None and first.source.startswith(LANGUAGE_LINE) else "en"


def student_copy(nb, lang=None):
    """Return a student copy of a notebook (an ``nbformat.NotebookNode``).

    The input is not changed. ``lang`` is the language its prose is in (by
    default, read from its first code cell's language line).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("q1.check(____)\\n# q1.hint()\\n# q1.solution()"),
    ...     nbformat.v4.new_markdown_cell("The answer is 14.", metadata={"tags": ["solution"]}),
    ... ])
    >>> [c.source for c in student_copy(nb).cells]
    ['q1.check(____)\\n# q1.hint()']
    """
    import copy

    out = copy.deepcopy(nb)
    lang = _language(nb) if lang is None else lang
    cells = []
    for cell in out.cells:
        if "solution" in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "code":
            cell.source = _strip_solutions(cell.source)
            cell.outputs = []
            cell.execution_count = None
        elif cell.cell_type == "markdown":
            cell.source = _student_prose(cell.source, lang)
        cells.append(cell)
    out.cells = cells
    out.metadata.pop("widgets", None)
    out.metadata["straggle_edu"] = {"student_copy": True}
    return out


def student_copies(out_dir, notebooks=None):
    """Write a student copy of every notebook into ``out_dir``, and of its language twins into ``out_dir/<lang>/``.

    Returns the paths written, English first.

    Parameters
    ----------
    out_dir : str or Path
        Folder to write into; created if missing. It must not be the folder
        the notebooks come from: input files are never modified.
    notebooks : str or Path, optional
        Folder of the instructor's notebooks (default: the project's
        ``notebooks/``).
    """
    from .launch import find_notebooks

    src = Path(notebooks) if notebooks is not None else find_notebooks()
    require(src.is_dir(), "notebooks", str(src), "a folder of notebooks")
    out = Path(out_dir)
    require(not (out.exists() and out.resolve() == src.resolve()), "out_dir", str(out), "a folder other than the notebooks folder")
    require(out.parent.exists(), "out_dir", str(out), "in an existing folder")
    out.mkdir(exist_ok=True)
    written = _copy_folder(src, out)
    for lang in LANGUAGES[1:]:
        if any((src / lang).glob("*.ipynb")):
            (out / lang).mkdir(exist_ok=True)
            written += _copy_folder(src / lang, out / lang)
    return written


def _copy_folder(src, out):
    """Student copies of the notebooks in ``src`` (not its subfolders) into ``out``, and the marker."""
    import nbformat

    written = []
    for path in sorted(src.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        target = out / path.name
        nbformat.write(student_copy(nb), target)
        written.append(target)
    (out / MARKER).write_text(
        "This folder holds student copies of the straggle-edu notebooks.\n"
        "Exercise solutions are not shown here; the instructor's copy has them.\n"
    )
    return written


def configure(parser):
    parser.add_argument("out_dir", help="folder to write the student copies into")
    parser.add_argument("--from", dest="source", default=None, help="folder of the instructor's notebooks (default: notebooks/)")


def run(args):
    written = student_copies(args.out_dir, args.source)
    for path in written:
        print(path)
    print(_("{count} student copies written to {folder}").format(count=len(written), folder=args.out_dir))
    return 0
