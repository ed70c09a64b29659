"""Exercises with self-checks: ``q.check(answer)``, ``q.hint()``, ``q.solution()``.

Each notebook's exercises live in a module of this package named after the
notebook (``exercises.restaurant`` for ``01_restaurant.ipynb``). An
:class:`Exercise` declares its expected answer as a function of the library,
so that the answer is computed, never typed, and a hint and a solution.

- Leaving the placeholder ``____`` in place is "not attempted", which is a
  different outcome from a wrong answer.
- A number is right to 3 significant figures (``digits=3``): 9.77e-7 for
  9.7705e-7, 0.467 for 7/15. An answer near a bound (a percentile near 100,
  a ratio near 1) asks for more digits with ``digits=`` and its question
  says how many. ``rel_tol``/``abs_tol`` may widen that window (never to a
  near miss 1% off: a test holds that).
- An exercise whose answer is a fraction (``fraction=True``) also takes a
  percent, ``28.1`` or ``"28.1%"``, and says that it read it as one.
- A word answer takes its synonyms in both languages (:data:`SYNONYMS`):
  "keep" and "keep running", 继续跑; "replace", 更换, 替换.
- A wrong answer says "not yet"; only ``solution()`` shows the answer.
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

__all__ = ["Exercise", "____", "solutions_visible", "STUDENT_ENV", "SYNONYMS", "same_word", "close_enough"]


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


# Each word answer and the ways a careful person writes it, in both languages.
SYNONYMS = {
    "keep": ("keep", "keep running", "keep it", "keep it running", "keep going", "继续跑", "继续运行", "继续", "保留"),
    "replace": ("replace", "replace it", "replace the node", "replace the worker", "更换", "替换", "换掉"),
}
_CANONICAL = {form: word for word, forms in SYNONYMS.items() for form in forms}


def _words(text):
    return " ".join(text.strip().lower().replace("-", " ").replace("_", " ").rstrip(".!。！").split())


def same_word(answer, want):
    """Whether the word answer ``answer`` says ``want``: case, spacing, hyphens and the synonyms aside.

    Examples
    --------
    >>> same_word("Keep running", "keep"), same_word("继续跑", "keep running"), same_word("替换", "replace")
    (True, True, True)
    >>> same_word("GC pauses", "gc-pauses"), same_word("keep", "replace"), same_word(3, "keep")
    (True, False, False)
    """
    if not isinstance(answer, str) or not isinstance(want, str):
        return False
    said, meant = _words(answer), _words(want)
    return _CANONICAL.get(said, said) == _CANONICAL.get(meant, meant)


def close_enough(got, want, digits=3, rel_tol=0.0, abs_tol=0.0):
    """Whether ``got`` is ``want`` to ``digits`` significant figures (or within the given tolerances).

    The window is half a unit in the last of those figures: 0.281 and
    0.2815 are 0.28125 to 3 figures; 0.284, 1% off, is not.

    Examples
    --------
    >>> close_enough(9.77e-7, 9.770506e-7), close_enough(0.467, 7 / 15), close_enough(23.5, 23.5294)
    (True, True, True)
    >>> close_enough(0.28125 * 1.01, 0.28125), close_enough(0.28, 0.28125), close_enough(99.93, 99.9307, digits=4)
    (False, False, True)
    """
    if math.isclose(got, want, rel_tol=rel_tol, abs_tol=abs_tol):
        return True
    if want == 0 or not math.isfinite(want) or not math.isfinite(got):
        return False
    half = 0.5 * 10.0 ** (math.floor(math.log10(abs(want))) - (digits - 1))
    return abs(got - want) <= half * (1 + 1e-9)


def _number(answer):
    """``(value, as_percent)`` for a number or a numeric string ("28.1%", "1,234", "9.77e-7"); None otherwise."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, str):
        text = answer.strip().replace(",", "").replace("，", "")
        percent = text.endswith(("%", "％"))
        try:
            return float(text.rstrip("%％").strip()), percent
        except ValueError:
            return None
    try:
        return float(answer), False
    except (TypeError, ValueError):
        return None


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
    digits : int
        Significant figures a numeric answer must get right (3; more only
        where the question says so, near a bound).
    rel_tol, abs_tol : float
        Extra room for numeric answers, as in ``math.isclose`` (never a
        near miss 1% off).
    fraction : bool
        The answer is a fraction (a share, a probability): a percent is
        taken too, with a note.
    compare : callable, optional
        ``compare(answer, expected) -> bool`` for answers that are not numbers.

    Examples
    --------
    >>> q = Exercise("q0", expected=lambda: 14.0, hint="The table waits.",
    ...              solution="max(times)")
    >>> q.check(____)
    Not attempted yet: replace ____ with your answer, then run the cell again.
    >>> q.check(10.5)
    ✗ q0: not yet, got 10.5. Try q0.hint().
    >>> q.check(14)
    ✓ q0: correct.
    >>> q.is_correct(14)
    True
    >>> share = Exercise("q1", expected=lambda: 0.28125, fraction=True)
    >>> share.check(0.281), share.check("28.1%")
    ✓ q1: correct.
    ✓ q1: correct (read as a percent: 28.1% = 0.281).
    (None, None)
    """

    def __init__(self, name, expected, hint="", solution="", *, digits=3, rel_tol=0.0, abs_tol=0.0, fraction=False,
                 compare=None):
        self.name = name
        self.expected = expected
        self.hint_text = hint
        self.solution_text = solution
        self.digits = digits
        self.rel_tol = rel_tol
        self.abs_tol = abs_tol
        self.fraction = fraction
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
            return self._read(answer, float(want)) is not None
        if isinstance(want, str):
            return same_word(answer, want)
        return answer == want

    def _read(self, answer, want):
        """How ``answer`` matches the number ``want``: "as is", "percent", or None when it does not."""
        found = _number(answer)
        if found is None:
            return None
        got, percent = found
        close = lambda x: close_enough(x, want, self.digits, self.rel_tol, self.abs_tol)
        if not percent and close(got):
            return "as is"
        if (percent or self.fraction) and close(got / 100):
            return "percent"
        return None

    def check(self, answer):
        """Print whether ``answer`` is right.

        Returns None, so a notebook cell shows only the message; use
        :meth:`is_correct` for the verdict as a bool.
        """
        if isinstance(answer, _Blank):
            print(_("Not attempted yet: replace ____ with your answer, then run the cell again."))
        elif self.is_correct(answer):
            want = self.expected()
            numeric = isinstance(want, (int, float)) and not isinstance(want, bool) and self.compare is None
            if numeric and self._read(answer, float(want)) == "percent":
                got = _number(answer)[0]
                print(_("✓ {name}: correct (read as a percent: {percent}% = {fraction}).").format(
                    name=self.name, percent=f"{got:g}", fraction=f"{got / 100:g}"))
            else:
                print(_("✓ {name}: correct.").format(name=self.name))
        else:
            # Never the expected value: that is what solution() is for (and a student copy hides it).
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
