"""Small pieces: no function body in the package is over 80 lines (docstrings not counted)."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "straggle_edu"
LIMIT = 80


def body_lines(node):
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_body_over_80_lines(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [f"{node.name} ({body_lines(node)} lines, line {node.lineno})" for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > LIMIT]
    assert not long, f"{path.name}: split these: {long}"
