"""Tail probabilities: reference values, exact arithmetic and properties."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from straggle_edu import p_any_slow, p_none_slow, per_worker_budget, workers_until

getcontext().prec = 60

probs = st.floats(0.0, 1.0)
open_probs = st.floats(1e-12, 1.0 - 1e-12)
counts = st.integers(1, 10**12)


def exact_none(p, n):
    """(1 - p)**n in 60-digit decimal arithmetic, from the exact binary value of p."""
    return float((1 - Decimal(p)) ** n)


def test_p_any_slow_article_value():
    # 1 - 0.99**100 = 0.6339676587267709...
    assert p_any_slow(0.01, 100) == pytest.approx(0.6339676587267709, rel=1e-14)
    assert p_any_slow(0.01, 100) == pytest.approx(1 - exact_none(0.01, 100), rel=1e-14)


def test_p_any_slow_tiny_p_huge_n_is_stable():
    # The naive 1 - (1 - p)**n gives 0 here: 1 - 1e-15 rounds badly.
    expected = -math.expm1(-0.001)  # 1 - e**-0.001 = 9.995001666e-4
    assert p_any_slow(1e-15, 10**12) == pytest.approx(expected, rel=1e-9)
    assert 1 - (1 - 1e-15) ** 10**12 != pytest.approx(expected, rel=1e-9)


def test_p_none_slow_4096_workers_accurately():
    exact = float(Decimal("0.99") ** 4096)  # 1.3236...e-18
    assert exact == pytest.approx(1.3236e-18, rel=1e-4)
    assert p_none_slow(0.01, 4096) == pytest.approx(exact, rel=1e-12)
    # Float64 cannot show it as 1 - p_any_slow: that rounds to exactly 0.
    assert 1.0 - p_any_slow(0.01, 4096) == 0.0


@pytest.mark.parametrize("p, n", [(0.01, 1), (0.3, 7), (1e-9, 10**9), (0.5, 1000), (1e-300, 10**12)])
def test_p_none_slow_matches_decimal_arithmetic(p, n):
    assert p_none_slow(p, n) == pytest.approx(exact_none(p, n), rel=1e-12)
    assert p_any_slow(p, n) == pytest.approx(float(1 - (1 - Decimal(p)) ** n), rel=1e-12)


def test_p_any_slow_edges():
    assert p_any_slow(0.0, 10**9) == 0.0
    assert p_any_slow(1.0, 3) == 1.0
    assert p_any_slow(0.25, 1) == 0.25
    assert p_none_slow(1.0, 1) == 0.0


def test_p_any_slow_scalar_returns_float_and_array_returns_array():
    assert type(p_any_slow(0.01, 100)) is float
    assert type(p_none_slow(np.float64(0.01), np.int64(100))) is float
    out = p_any_slow([0.01, 0.02], [[1], [100]])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert out[1, 0] == p_any_slow(0.01, 100)


@given(p=open_probs, n=counts, m=counts)
def test_p_any_slow_rises_with_n(p, n, m):
    lo, hi = sorted((n, m))
    assert p_any_slow(p, lo) <= p_any_slow(p, hi)


@given(p=probs, q=probs, n=counts)
def test_p_any_slow_rises_with_p(p, q, n):
    lo, hi = sorted((p, q))
    assert p_any_slow(lo, n) <= p_any_slow(hi, n)


@given(p=probs, n=counts)
def test_p_any_slow_and_p_none_slow_are_complements_and_never_nan(p, n):
    a, b = p_any_slow(p, n), p_none_slow(p, n)
    assert 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0
    assert a + b == pytest.approx(1.0, abs=1e-15)


def test_workers_until_article_values():
    assert workers_until(0.01, 0.5) == 69
    assert p_any_slow(0.01, 69) >= 0.5 > p_any_slow(0.01, 68)
    assert workers_until(0.01, 0.99) == 459
    assert workers_until(1.0, 0.999) == 1
    assert workers_until(0.3, 0.0) == 1
    assert type(workers_until(0.01, 0.5)) is int
    assert workers_until([0.01, 0.001], 0.5).tolist() == [69, 693]


@given(p=st.floats(1e-9, 1.0), target=st.floats(0.0, 0.999999))
def test_workers_until_is_the_smallest_n(p, target):
    n = workers_until(p, target)
    assert p_any_slow(p, n) >= target
    if n > 1:
        assert p_any_slow(p, n - 1) < target


def test_workers_until_refuses_an_unreachable_target():
    with pytest.raises(ValueError, match=r"^p must be large enough .* got 1e-300"):
        workers_until(1e-300, 0.5)
    with pytest.raises(ValueError, match=r"got 1e-300"):
        workers_until([0.1, 1e-300], 0.5)


def test_per_worker_budget_4096_gpus():
    p = per_worker_budget(4096, 0.01)
    assert p == pytest.approx(-math.expm1(math.log(0.99) / 4096), rel=1e-14)
    assert p_any_slow(p, 4096) <= 0.01
    assert per_worker_budget(1, 0.3) == 0.3


@given(n=counts, target=st.floats(1e-12, 0.999))
def test_per_worker_budget_is_the_largest_p(n, target):
    p = per_worker_budget(n, target)
    assert p_any_slow(p, n) <= target
    assert p_any_slow(p * (1 + 1e-9), n) > target * (1 - 1e-12)


bad_p = st.one_of(st.floats(max_value=-1e-300), st.floats(min_value=1.0000001), st.just(float("nan")))
bad_n = st.one_of(st.integers(max_value=0), st.floats(1.01, 1e6).filter(lambda x: x != int(x)),
                  st.just(float("nan")), st.just(float("inf")))


@given(p=bad_p)
def test_p_any_slow_bad_p_raises_clear_error(p):
    for f in (p_any_slow, p_none_slow):
        with pytest.raises(ValueError, match=r"^p must be in \[0, 1\].*, got "):
            f(p, 10)


@given(n=bad_n)
def test_p_any_slow_bad_n_raises_clear_error(n):
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1.*, got "):
        p_any_slow(0.01, n)
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1"):
        per_worker_budget(n, 0.1)


@pytest.mark.parametrize("target", [1.0, -0.1, float("nan")])
def test_workers_until_bad_target_raises(target):
    with pytest.raises(ValueError, match=r"^target must be in \[0, 1\)"):
        workers_until(0.01, target)


def test_p_any_slow_error_names_the_value():
    with pytest.raises(ValueError, match=r"^n must be a whole number >= 1, got 0$"):
        p_any_slow(0.01, 0)
    with pytest.raises(ValueError, match=r"^p must be in \[0, 1\], got 1.5$"):
        p_any_slow(1.5, 3)
    with pytest.raises(ValueError, match=r"not NaN"):
        p_any_slow([0.1, float("nan")], 3)
    with pytest.raises(ValueError, match=r"^p must be"):
        p_any_slow("0.1", 3)
    with pytest.raises(ValueError, match=r"^n must be"):
        p_any_slow(0.1, True)
