"""The one input-checking helper: messages that name parameter, value and range."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu import _validate as v


def test_require_message_shape():
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1, got 0$"):
        v.require(False, "n", 0, "a whole number >= 1")
    v.require(True, "n", 0, "anything")


def test_whole_scalar_int_and_array_int64():
    assert v.whole("n", 4096) == 4096 and type(v.whole("n", 4096.0)) is int
    arr = v.whole("n", [1, 2, 3])
    assert arr.dtype == np.int64 and arr.tolist() == [1, 2, 3]
    assert v.whole("k", 3, low=1, high=3) == 3
    with pytest.raises(ValueError, match=r"^k must be a whole number in 1\.\.3, got 4$"):
        v.whole("k", 4, low=1, high=3)
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1, got 0$"):
        v.whole("n", [1, 0])


@pytest.mark.parametrize("value", [0, -1, 2.5, math.nan, math.inf, "3", True, None, [1, 2.5], 1 + 2j])
def test_whole_rejects_everything_that_is_not_a_count(value):
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1"):
        v.whole("n", value)


def test_in_range_messages_name_the_interval():
    assert v.in_range("x", 0.5, 0, 1) == 0.5
    cases = [
        (dict(low=0, high=1, high_open=True), 1.0, r"^x must be in \[0, 1\), got 1.0$"),
        (dict(low=0, low_open=True), 0.0, r"^x must be > 0, got 0.0$"),
        (dict(low=0), -1, r"^x must be >= 0, got -1$"),
        (dict(high=5), 6, r"^x must be <= 5, got 6$"),
        (dict(), math.nan, r"^x must be a real number \(not NaN\), got nan$"),
        (dict(low=0), math.inf, r"^x must be >= 0, got inf$"),
    ]
    for kwargs, value, message in cases:
        with pytest.raises(ValueError, match=message):
            v.in_range("x", value, **kwargs)


@given(x=st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.none(), st.booleans()))
def test_probability_accepts_exactly_the_unit_interval(x):
    if isinstance(x, float) and 0.0 <= x <= 1.0:
        assert v.probability("p", x) == x
    else:
        with pytest.raises(ValueError, match=r"^p must be in \[0, 1\]"):
            v.probability("p", x)


def test_as_rng_accepts_generator_seed_none_and_rejects_the_rest():
    g = np.random.default_rng(1)
    assert v.as_rng(g) is g
    assert v.as_rng(5).integers(1000) == np.random.default_rng(5).integers(1000)
    assert isinstance(v.as_rng(None), np.random.Generator)
    for bad in ("1", 1.5, True, np.random.RandomState(0)):
        with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator, an int seed or None"):
            v.as_rng(bad)
    with pytest.raises(ValueError, match=r"^rng must be a seed >= 0, got -3$"):
        v.as_rng(-3)


def test_as_output_scalar_float_array_array():
    assert type(v.as_output(np.float64(2.0), 1, 2.0)) is float
    out = v.as_output([1.0, 2.0], [1, 2], 3)
    assert isinstance(out, np.ndarray) and out.dtype == float


def test_check_memory_and_budget():
    v.check_memory(v.memory_budget(), "exactly the budget")
    with pytest.raises(ValueError, match=r"^sampling needs about 1024 MiB, more than the memory budget of 512 MiB"):
        v.check_memory(2**30, "sampling")
    old = v.set_memory_budget(2**31)
    try:
        v.check_memory(2**30, "sampling")
    finally:
        assert v.set_memory_budget(old) == 2**31
    with pytest.raises(ValueError, match=r"^nbytes must be a whole number >= 1, got 0$"):
        v.set_memory_budget(0)


def test_require_fix_follows_a_semicolon():
    with pytest.raises(ValueError, match=r"^out must be a file, got 'x/'; drop the slash$"):
        v.require(False, "out", "x/", "a file", fix="drop the slash")


def test_scalar_returns_a_single_value_and_refuses_an_array():
    assert v.scalar("base", 1.5) == 1.5 and v.scalar("count", np.int64(3)) == 3
    with pytest.raises(ValueError, match=r"^base must be a single number, got \[1\.0, 2\.0\] \(an array\)$"):
        v.scalar("base", np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"^count must be a single whole number >= 1, got \[\[1\]\] \(an array\)$"):
        v.scalar("count", [[1]], "a single whole number >= 1")


@pytest.mark.parametrize("bad", ["sleep", None, 3, ["compute"], np.array(["compute", "wait"])])
def test_one_of_names_every_option(bad):
    assert v.one_of("phase", "wait", ("compute", "wait")) == "wait"
    with pytest.raises(ValueError, match=r"^phase must be one of 'compute', 'wait', got "):
        v.one_of("phase", bad, ("compute", "wait"))


def test_instance_shows_the_type_it_got():
    assert v.instance("rng", 3, int) == 3
    with pytest.raises(ValueError, match=r"^cluster must be a Cluster, got NoneType$"):
        v.instance("cluster", None, dict, "a Cluster")
    with pytest.raises(ValueError, match=r"^x must be a float, got str$"):
        v.instance("x", "1.0", float)


def test_described_shows_text_unquoted():
    assert repr(v.described("an array of shape (5,)")) == "an array of shape (5,)"
    with pytest.raises(ValueError, match=r"^dist must be continuous, got a discrete one$"):
        v.require(False, "dist", v.described("a discrete one"), "continuous")


def test_no_hand_typed_must_be_got_messages_below_traces():
    # Messages of the form "<name> must be <valid>, got <value>" come from the
    # checkers above, never from a hand-typed f-string, in the rooms that own no
    # domain-specific error type (the trace readers format their own file errors).
    import ast
    from pathlib import Path

    root = Path(v.__file__).parent
    typed = []
    for room in ("math", "models", "charts", "instruments", "app", "notebook", "exercises"):
        for path in sorted((root / room).rglob("*.py")):
            text = path.read_text()
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    source = ast.get_source_segment(text, node)
                    if " must " in source and " got " in source:
                        typed.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not typed, f"use straggle_edu._validate's checkers instead: {typed}"
