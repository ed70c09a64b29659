"""Exercises with self-checks: ``q.check(answer)``, ``q.hint()``, ``q.solution()``.

Each notebook's exercises live in a module of this package named after the
notebook (``exercises.restaurant`` for ``01_restaurant.ipynb``). An
:class:`Exercise` declares its expected answer as a function of the library,
so that the answer is computed, never typed, and a hint and a solution.

- Leaving the placeholder ``____`` in place is "not attempted", which is a
  different outcome from a wrong answer.
- Numbers are compared with ``math.isclose(..., rel_tol=1e-6)`` unless the
  exercise says otherwise.
- Solutions stay hidden until ``solution()`` is called, and a student copy
  never shows them: see :func:`solutions_visible`.
- Hints, solutions and feedback speak the reader's language
  (:mod:`straggle_edu.i18n`): an exercise module writes its hint and solution
  as plain English strings in the ``Exercise(...)`` call, the catalog's
  extractor (:func:`straggle_edu.i18n.catalog.extract_exercises`) picks them
  up from there, and :class:`Exercise` translates them when it prints them. A
  solution's code stays code; only its prose and comments are translated.
"""

from __future__ import annotations

import math
import os

from ..i18n import _

__all__ = ["Exercise", "____", "solutions_visible", "STUDENT_ENV"]


class _Blank:
    """The placeholder a learner replaces with an answer."""

    def __repr__(self):
        return "____"


____ = _Blank()

STUDENT_ENV = "STRAGGLE_EDU_STUDENT"
STUDENT_MARKER = ".straggle-edu-student"  # written by straggle_edu.app.classroom


def solutions_visible():
    """Whether ``solution()`` may show a solution here.

    False in a student copy: when the kernel runs in a folder that holds the
    student-copy marker (see :mod:`straggle_edu.app.classroom`), or when
    ``STRAGGLE_EDU_STUDENT=1`` is set. True otherwise: the notebooks in the
    project are the instructor's and the self-learner's copy.

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {STUDENT_ENV: "1"}):   # a student copy
    ...     solutions_visible()
    False
    """
    if os.environ.get(STUDENT_ENV, "") == "1":
        return False
    return not os.path.exists(os.path.join(os.getcwd(), STUDENT_MARKER))


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.6g}"
    return repr(x)


class Exercise:
    """One exercise.

    Parameters
    ----------
    name : str
        Short id, such as ``"q1"``.
    expected : callable
        Returns the right answer, computed with the library.
    hint : str
        A nudge that does not give the answer away (English, written as a
        string literal in the call so that the catalog extracts it; translated
        when shown).
    solution : str
        Code (or a sentence) that produces the answer (the same).
    rel_tol, abs_tol : float
        Tolerances for numeric answers.
    compare : callable, optional
        ``compare(answer, expected) -> bool`` for answers that are not numbers.

    Examples
    --------
    >>> q = Exercise("q0", expected=lambda: 14.0, hint="The table waits.",
    ...              solution="max(times)")
    >>> q.check(____)
    Not attempted yet: replace ____ with your answer, then run the cell again.
    >>> q.check(10.5)
    ✗ q0: expected 14, got 10.5. Try q0.hint().
    >>> q.check(14)
    ✓ q0: correct.
    >>> q.is_correct(14)
    True
    """

    def __init__(self, name, expected, hint="", solution="", *, rel_tol=1e-6, abs_tol=0.0, compare=None):
        self.name = name
        self.expected = expected
        self.hint_text = hint
        self.solution_text = solution
        self.rel_tol = rel_tol
        self.abs_tol = abs_tol
        self.compare = compare

    def __repr__(self):
        # Never show the solution or the expected value: typing q1 in a cell
        # must not give the answer away.
        return f"<exercise {self.name}: {self.name}.check(answer), {self.name}.hint(), {self.name}.solution()>"

    def is_correct(self, answer):
        """True when ``answer`` matches the expected answer (never for ``____``)."""
        if isinstance(answer, _Blank):
            return False
        want = self.expected()
        if self.compare is not None:
            return bool(self.compare(answer, want))
        if isinstance(want, bool) or isinstance(answer, bool):
            return answer is want or answer == want
        if isinstance(want, (int, float)):
            try:
                got = float(answer)
            except (TypeError, ValueError):
                return False
            return math.isclose(got, float(want), rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        if isinstance(want, str) and isinstance(answer, str):
            return answer.strip().lower() == want.strip().lower()
        return answer == want

    def check(self, answer):
        """Print whether ``answer`` is right.

        Returns None, so a notebook cell shows only the message; use
        :meth:`is_correct` for the verdict as a bool.
        """
        if isinstance(answer, _Blank):
            print(_("Not attempted yet: replace ____ with your answer, then run the cell again."))
        elif self.is_correct(answer):
            print(_("✓ {name}: correct.").format(name=self.name))
        elif solutions_visible():
            print(_("✗ {name}: expected {expected}, got {answer}. Try {name}.hint().").format(
                name=self.name, expected=_fmt(self.expected()), answer=_fmt(answer)))
        else:
            print(_("✗ {name}: not yet, got {answer}. Try {name}.hint().").format(name=self.name, answer=_fmt(answer)))

    def hint(self):
        """Print the hint."""
        print(_("Hint: {hint}").format(hint=_(self.hint_text) if self.hint_text else ""))

    def solution(self):
        """Print the solution (in a student copy, where to find it instead)."""
        if not solutions_visible():
            print(_("Solutions are not part of the student copy. "
                    "Ask your instructor, who has the instructor's copy of this notebook."))
            return
        print(_("Solution: {solution}").format(solution=_(self.solution_text) if self.solution_text else ""))
