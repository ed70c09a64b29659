"""A ✓ means checked: no notebook's ``claim(label, value, expected)`` checks a constant.

``claim`` prints ✓ when ``value`` agrees with the figure the prose quotes. That
is a check only when ``value`` was *computed* (a closed form, a simulation, a
model run). A cited figure compared with itself (``claim(..., STUDY["x"].value,
0.425)``) wears a ✓ it has not earned: such figures go through ``cite()``, and
hand-calibrated models through ``calibrated()``.

The rule, applied to every code cell of every notebook, read with ``ast`` (never run):

- Only the number form is judged: ``claim(label, value, expected, ...)``. The
  fact-check form (``readings=`` or ``verdict=`` given) grades a statement of the
  article; its value is the statement's text.
- ``value`` (the second positional argument, or ``value=``) is *constant* when
  it involves no computation:
  * a literal (``0.425``, ``"x"``, ``True``), or arithmetic, containers and
    comparisons made only of constants (``4096 * 24``);
  * a module constant: a name in UPPER_CASE (``STUDY``, ``CITATION``) or ending
    in ``_PAPER``, and anything read from one (``STUDY["jobs"].value``,
    ``float(STUDY["jobs"])``);
  * a name the notebook bound, earlier in its cells, to a constant expression
    (``figure = {k: STUDY[k].value for k in ...}``, then ``figure["x"]``), and
    attributes or items of such a name;
  * ``float``/``int``/``round``/``abs`` (and the like) of constants.
- Anything else is *computed*: a call into the library or to a function the
  notebook defined, or a name bound to such a result (``p = se.p_any_slow(...)``).
  Names the notebook never binds (imports, the kernel's builtins) are not
  constants unless they are UPPER_CASE or ``*_PAPER``.

A violation is reported as ``notebook cell N: claim(...)`` with the value's source text.

The line tells the truth about its reference, too. ``claim(label, value, expected)`` prints "(quoted: expected)",
so ``expected`` must be a figure the prose quotes: a constant by the rule above (``0.634``, ``6 / 100``, a loop
variable over a typed list). A reference the notebook computes (``p_07``, ``real.culprit("by_stage")``,
``public_result("ST")[...]``) goes through ``against=`` and prints "(against: ...)"; a constant given as
``against=`` is a quoted figure, and goes back to ``expected``.

Statements are read in order, the way the kernel runs them: a ``for`` binds its target before its body runs
(``for b, saved in enumerate([175, 129])`` binds ``saved`` to a constant and ``b`` to the index), and ``zip`` or
``enumerate`` bind each target to its own argument.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

# English notebooks only: this test reads every notebook's code, and a Chinese twin in notebooks/zh/ has
# the same code (tests/test_zh_notebooks.py checks the twin structure with check_twin), so
# checking the twins' structure is enough and their values are not checked twice.
NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
#: Calls that only convert or round: constant when their arguments are.
_PURE = {"float", "int", "round", "abs", "min", "max", "sum", "len", "dict", "list", "tuple", "set", "sorted", "str"}
#: Calls whose items a ``for`` target unpacks one per argument.
_PAIRWISE = {"zip", "enumerate"}


def _is_module_constant(name):
    return name.endswith("_PAPER") or (name.isupper() and any(ch.isalpha() for ch in name))


def _bound_names(target):
    """The plain names an assignment target binds."""
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


class _Env:
    """Which names the notebook has bound to constants so far (cells share one namespace)."""

    def __init__(self):
        self.constant = {}

    def is_constant(self, node, local=frozenset()):
        """Whether ``node`` involves no computation (see the module docstring)."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            if node.id in local or _is_module_constant(node.id):
                return True
            return self.constant.get(node.id, False)
        if isinstance(node, ast.Call):
            pure = isinstance(node.func, ast.Name) and node.func.id in _PURE
            return pure and all(self.is_constant(a, local) for a in [*node.args, *(k.value for k in node.keywords)])
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(local)
            for gen in node.generators:
                if not self.is_constant(gen.iter, frozenset(inner)):
                    return False
                inner.update(_bound_names(gen.target))
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            parts += [cond for gen in node.generators for cond in gen.ifs]
            return all(self.is_constant(p, frozenset(inner)) for p in parts)
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            return self.is_constant(node.value, local)
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.List, ast.Set,
                             ast.Dict, ast.IfExp, ast.JoinedStr, ast.FormattedValue, ast.keyword)):
            children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
            return all(self.is_constant(c, local) for c in children)
        return False

    def bind(self, stmt):
        """Record what an assignment, loop or definition binds."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) and \
                        len(target.elts) == len(stmt.value.elts):
                    for t, v in zip(target.elts, stmt.value.elts):
                        self._set(_bound_names(t), self.is_constant(v))
                else:
                    self._set(_bound_names(target), self.is_constant(stmt.value))
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
            keep = isinstance(stmt, ast.AugAssign) and self.is_constant(stmt.target)
            self._set(_bound_names(stmt.target), self.is_constant(stmt.value) and (keep or isinstance(stmt, ast.AnnAssign)))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for target, constant in self._loop_targets(stmt.target, stmt.iter):
                self._set(_bound_names(target), constant)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._set([stmt.name], False)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self._set([(a.asname or a.name).split(".")[0] for a in stmt.names], False)

    def _loop_targets(self, target, it):
        """``[(target, constant)]`` for a ``for`` target over ``it``: per argument of ``zip``/``enumerate``."""
        pairwise = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in _PAIRWISE
        if pairwise and isinstance(target, ast.Tuple) and not it.keywords:
            parts = [True, *it.args[:1]] if it.func.id == "enumerate" else list(it.args)
            if len(parts) == len(target.elts):
                return [(t, p is True or self.is_constant(p)) for t, p in zip(target.elts, parts)]
        return [(target, self.is_constant(it))]

    def _set(self, names, constant):
        for name in names:
            self.constant[name] = constant


def _claim_value(call):
    """The value a number-form ``claim(...)`` (or ``timing(...)``, its form for a measured number) checks, or None."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    keywords = {k.arg: k.value for k in call.keywords}
    if name not in ("claim", "timing") or "readings" in keywords or "verdict" in keywords:
        return None
    return call.args[1] if len(call.args) >= 2 else keywords.get("value")


def constant_claims(sources):
    """``[(cell index, source of the offending claim)]`` for the code cells ``sources`` (in order).

    Examples
    --------
    >>> constant_claims(["x = 0.5\\nclaim('a', x, 0.5)", "claim('b', se.f(x), 0.5)"])
    [(0, "claim('a', x, 0.5)")]
    """
    found = []
    for index, source, call, env in _claim_calls(sources):
        value = _claim_value(call)
        if value is not None and env.is_constant(value):
            found.append((index, ast.get_source_segment(source, call)))
    return found


def mislabelled_claims(sources):
    """``[(cell index, source, why)]``: number claims whose line would call a computed reference quoted, or the reverse.

    Examples
    --------
    >>> mislabelled_claims(["p = se.f(1)\\nclaim('a', se.g(), p)\\nclaim('b', se.g(), 0.5)\\nclaim('c', se.g(), against=0.5)"])
    [(0, "claim('a', se.g(), p)", 'a computed reference: give it as against='), (0, "claim('c', se.g(), against=0.5)", \
'a quoted figure: give it as expected')]
    """
    found = []
    for index, source, call, env in _claim_calls(sources):
        if _claim_value(call) is None:
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        expected = call.args[2] if len(call.args) >= 3 else keywords.get("expected")
        against = keywords.get("against")
        text = ast.get_source_segment(source, call)
        if expected is not None and not env.is_constant(expected):
            found.append((index, text, "a computed reference: give it as against="))
        if against is not None and env.is_constant(against):
            found.append((index, text, "a quoted figure: give it as expected"))
    return found


def _claim_calls(sources):
    """``(cell index, source, call, env)`` for every call in the code cells, with the names bound before it runs."""
    env = _Env()
    for index, source in enumerate(sources):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: not Python, and not claims
            continue
        for call in _run(env, tree.body):
            yield index, source, call, env


def _run(env, body):
    """The calls of ``body`` in the order the kernel meets them, binding names as it goes."""
    for stmt in body:
        blocks = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        yield from _own_calls(stmt)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env.bind(stmt)
        for block in blocks:
            yield from _run(env, block)
        if not isinstance(stmt, (ast.For, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env.bind(stmt)


def _own_calls(stmt):
    """The calls in a statement's own expressions (not in the statements nested in it)."""
    stack = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, (ast.stmt, ast.excepthandler))]
    while stack:
        node = stack.pop(0)
        if isinstance(node, ast.Call):
            yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))


def _code_cells(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "code"]


@pytest.mark.parametrize("source", [
    "claim('jobs', STUDY['jobs'].value, 3079)",
    "claim('jobs', float(STUDY['jobs']), 3079)",
    "claim('share', 0.425, 0.425, unit='%')",
    "claim('share', value=0.425, expected=0.425)",
    "claim('p99', TAIL_AT_SCALE_PAPER['p99'], 0.01)",
    "claim('hours', 4096 * 24, 98_304)",
    "claim('x', -1.5, -1.5)",
    "se.notebook.claim('jobs', STUDY['jobs'].value, 3079)",
])
def test_constant_claims_catches_a_constant_value(source):
    assert constant_claims([source]) == [(0, source)]


def test_constant_claims_follows_names_across_cells():
    cells = ["figure = {k: STUDY[k].value for k in ('a', 'b')}\nj = 0.05",
             "claim('a', figure['a'], 0.4)\nclaim('j', j, 0.05)\nclaim('k', j * 2, 0.1)"]
    assert [i for i, _ in constant_claims(cells)] == [1, 1, 1]


@pytest.mark.parametrize("source", [
    "p = se.p_any_slow(0.01, 100)\nclaim('P', p, 0.634, abs_tol=5e-4)",
    "claim('P', se.p_any_slow(0.01, 100), 0.634, abs_tol=5e-4)",
    "table = serve_table(dish_times(8, 10.0, 14.0))\nclaim('served', table.served_at, 14)",
    "a, b = f(1), f(2)\nclaim('a', a.x, 1)\nclaim('b', b.x / a.x, 2)",
    "claim('right', scorecard.counts['right'], 10)",
    "claim(9, 'text', figures={'x': STUDY['x'].value}, readings={'r': True}, verdict='right')",
    "cite('jobs', STUDY['jobs'].value, CITATION)",
    "%matplotlib inline",
])
def test_constant_claims_passes_a_computed_value(source):
    assert constant_claims([source]) == []


def test_constant_claims_rebinding_to_a_computation_clears_the_name():
    assert constant_claims(["x = 0.5\nx = se.f(x)\nclaim('x', x, 0.5)"]) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_claims_check_computed_values(path):
    cells = _code_cells(path)
    found = constant_claims([source for _, source in cells])
    shown = [f"{path.name} cell {cells[i][0]}: {text}" for i, text in found]
    assert not shown, ("these claims put a ✓ on a constant (use cite() for a quoted figure, calibrated() for a "
                       "hand-fitted model, or compute the value):\n" + "\n".join(shown))


@pytest.mark.parametrize("source", [
    "claim('P', se.p(0.01), 0.634, abs_tol=5e-4)",
    "claim('share', se.f(), 6 / 100)",
    "for stage, layers in enumerate([8, 9]):\n    claim('stage {stage}', int(best[stage]), layers)",
    "for (name, p), b in zip(by_n.items(), [0, 3]):\n    claim('{name}', p.best, b)",
    "p = se.f(1)\nclaim('sim', se.g(), against=p, rel_tol=0.1)",
    "claim('ok', se.f() > 1, True)",
])
def test_mislabelled_claims_passes_a_quoted_figure_and_a_computed_reference(source):
    assert mislabelled_claims([source]) == []


@pytest.mark.parametrize("source, why", [
    ("p = se.f(1)\nclaim('sim', se.g(), p, rel_tol=0.1)", "against="),
    ("claim('culprit', min(clip, key=clip.get), real.culprit('by_stage'))", "against="),
    ("for (name, p), b in zip(by_n.items(), [0, 3]):\n    claim('{name}', p.best, p.other)", "against="),
    ("claim('P', se.p(0.01), against=0.634)", "expected"),
])
def test_mislabelled_claims_catches_the_wrong_label(source, why):
    assert [w.split()[-1] for _i, _s, w in mislabelled_claims([source])] == [why]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_claims_say_quoted_only_for_what_the_prose_quotes(path):
    cells = _code_cells(path)
    found = mislabelled_claims([source for _, source in cells])
    shown = [f"{path.name} cell {cells[i][0]}: {text}: {why}" for i, text, why in found]
    assert not shown, "these claims' lines would mislabel their reference:\n" + "\n".join(shown)
