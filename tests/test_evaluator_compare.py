"""Comparator unit tests: the stdio / functional cascades and the exact / tokens / float checkers."""

from __future__ import annotations

import json

import pytest

from microcoder.pipeline.evaluator.verdict.compare import compare_functional, compare_stdio, numbers_close
from microcoder.pipeline.schema import Checker


@pytest.mark.parametrize(
    ("expected", "actual", "strategy"),
    [
        ("1 2\n3", "1 2\n3", "exact"),
        ("1 2\n3", "1 2\n3\n\n", "exact"),
        ("1 2\r\n3\r\n", "1 2\n3", "exact"),
        ("1 2\n3", "1 2   \n  3\n", "lines"),
        ("\n1 2\n3\n", "1 2\n3", "lines"),
        ("1 2 3", "1\n2\n3", "tokens"),
        ("0.3333333", "0.33333334", "numeric"),
        ("2.5 x", "2.5000000001 x", "numeric"),
        ("5", "5.0000000", "numeric"),
        ("1000000007", "1000000007.0", "numeric"),  # an equal value in another spelling
        ("1000000007 2.5", "1.000000007e9 2.5000001", "numeric"),
    ],
)
def test_stdio_cascade_accepts_and_names_the_step(expected, actual, strategy):
    cmp = compare_stdio(expected, actual)
    assert cmp.ok and cmp.strategy == strategy


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("3", "4"),
        ("YES", "yes"),  # case matters unless the checker says otherwise
        ("1 2 3", "1 2"),
        ("50000000000000000", "50000000000000001"),  # integers never get a tolerance
        ("0011", "11"),
        ("0.5", "0.6"),
        ("1 2", "2 1"),  # order matters unless the checker says otherwise
        ("nan", "inf"),
        ("3", ""),
        # an expected integer takes no tolerance, whatever the actual token looks like (issue 11)
        ("1000000007", "1e9"),
        ("1000000007", "1000000500.0"),
        ("1000000007", "1000000007.0000001"),
        ("0", "0.0000001"),
        ("1", "1e999999999"),
        ("7 1000000007", "7.0 1e9"),
    ],
)
def test_stdio_cascade_rejects(expected, actual):
    cmp = compare_stdio(expected, actual)
    assert not cmp.ok and cmp.message


def test_stdio_diff_points_at_the_first_difference():
    cmp = compare_stdio("1\n2\n3", "1\n5\n3")
    assert cmp.message == "line 2: expected '2', got '5'"
    assert compare_stdio("1", "").message == "empty output"
    assert "expected 2 lines, got 1" in compare_stdio("1\n2", "1").message


def test_exact_checker():
    ck = Checker(kind="exact")
    assert compare_stdio("a b\n", "a b", ck).ok
    assert not compare_stdio("a b", "a  b", ck).ok
    assert compare_stdio("A", "a", Checker(kind="exact", case_sensitive=False)).ok


def test_tokens_checker_case_and_order_flags():
    assert compare_stdio("YES\n1 2", "YES 1\n2", Checker(kind="tokens")).strategy == "tokens"
    assert not compare_stdio("YES", "yes", Checker(kind="tokens")).ok
    assert compare_stdio("YES", "yes", Checker(kind="tokens", case_sensitive=False)).ok
    assert not compare_stdio("1 2 3", "3 2 1", Checker(kind="tokens")).ok
    assert compare_stdio("1 2 3", "3 2 1", Checker(kind="tokens", unordered=True)).ok
    assert compare_stdio("a b\nc d\n", "c d\na  b\n", Checker(kind="tokens", unordered=True)).ok
    assert not compare_stdio("1 2 3", "3 2 2", Checker(kind="tokens", unordered=True)).ok


def test_float_checker_uses_its_tolerances():
    loose = Checker(kind="float", rel_tol=1e-3, abs_tol=1e-3)
    assert compare_stdio("1.000", "1.0009", loose).ok
    assert not compare_stdio("1.000", "1.002", loose).ok
    # with a float checker, integers get the tolerance too (the problem asked for it)
    assert compare_stdio("1000000", "1000001", loose).ok
    assert compare_stdio("Yes 2.0", "yes 2", Checker(kind="float", case_sensitive=False)).ok
    assert compare_stdio("1.0 2.0", "2.0000001 1.0", Checker(kind="float", unordered=True)).ok


def test_numbers_close_is_absolute_or_relative():
    assert numbers_close(1e-7, 0.0, 1e-6, 1e-6)
    assert numbers_close(1e9 + 1, 1e9, 1e-6, 1e-6)
    assert not numbers_close(1.1, 1.0, 1e-6, 1e-6)
    assert not numbers_close(float("nan"), 1.0, 1e-6, 1e-6)
    assert numbers_close(float("inf"), float("inf"), 1e-6, 1e-6)


@pytest.mark.parametrize(
    ("expected", "actual", "converted", "strategy"),
    [
        ("[1, 2]", "[1,2]", False, "exact"),
        ("[1, 2]", "[1, 2]", True, "structural"),  # a tuple was returned
        ("3", "3.0", False, "structural"),
        ("1000000007", "1000000007.0", False, "structural"),
        ('{"a": [1, 2]}', '{"a": [1.0, 2]}', False, "structural"),
        ('{"__set__": [1, 2, 3]}', '{"__set__": [3, 1, 2]}', True, "structural"),  # set against set
        ("[5]", '{"__set__": [5]}', True, "structural"),  # one element: one order, nothing relaxed
        ("0.1", "0.10000000001", False, "numeric"),
        ("[[0.5, 1]]", "[[0.5000000001, 1]]", False, "numeric"),
        ("null", "null", False, "exact"),
        ('"abc"', '"abc"', False, "exact"),
    ],
)
def test_functional_cascade(expected, actual, converted, strategy):
    cmp = compare_functional(expected, actual, converted=converted)
    assert cmp.ok and cmp.strategy == strategy


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("true", "1"),  # bool is not int (LeetCode prints true vs 1)
        ("1", "true"),
        ("[1, 2]", "[2, 1]"),
        ("[1, 1, 2]", '{"__set__": [1, 2]}'),  # a set cannot hold the duplicate
        ("[3, 2, 1]", '{"__set__": [3, 1, 2]}'),  # a set is not re-ordered to match a list (issue 24)
        ("[1, 2, 3]", '{"__set__": [1, 2, 3]}'),  # nor taken in its (arbitrary) iteration order
        ('"5"', "5"),
        ("12345678901234567890", "12345678901234567891"),
        ('"abc"', '"ABC"'),
        ("[1]", '{"__repr__": "<object>", "__type__": "Foo"}'),
        ("1", "not json"),
        ("1000000007", "1e9"),  # an expected int is matched by an equal value only (issue 11)
        ("1000000007", "1000000500.0"),
        ("[0, 1]", "[1e-9, 1]"),
    ],
)
def test_functional_cascade_rejects(expected, actual):
    cmp = compare_functional(expected, actual)
    assert not cmp.ok and cmp.message


def test_functional_checkers():
    assert compare_functional("[1, 2, 3]", "[3, 1, 2]", Checker(kind="tokens", unordered=True)).ok
    assert not compare_functional("[1, 2, 3]", "[3, 1, 2]", Checker(kind="tokens")).ok
    assert compare_functional("[1.0, 2.0]", "[1.01, 2.0]", Checker(kind="float", rel_tol=0.1, abs_tol=0)).ok
    assert compare_functional('"Yes"', '"yes"', Checker(kind="exact", case_sensitive=False)).ok
    assert compare_functional("[[1, 2], [3]]", "[[3], [1, 2]]", Checker(kind="exact", unordered=True)).ok


def test_unordered_relaxes_the_outer_order_only():
    """As documented in compare.py: items / lines are a multiset, each compared in order."""
    ck = Checker(kind="exact", unordered=True)
    assert not compare_functional("[[1, 2], [3]]", "[[3], [2, 1]]", ck).ok
    assert compare_functional("[[1, 2], [3]]", "[[3], [1, 2]]", ck).ok
    assert not compare_functional('{"a": [1, 2]}', '{"a": [2, 1]}', ck).ok  # not a list: as usual
    tokens = Checker(kind="tokens", unordered=True)
    assert compare_stdio("1 2\n3 4\n", "3  4\n1 2\n", tokens).ok
    assert not compare_stdio("1 2\n3 4\n", "2 1\n3 4\n", tokens).ok  # order inside a line holds


def test_a_returned_set_matches_a_list_only_where_the_checker_says_unordered():
    """Issue 24 item 4: `return set(nums)` was AC for "return nums sorted descending". A set's
    iteration order is arbitrary, so only `Checker.unordered` lets it match a list of two or more."""
    got = '{"__set__": [3, 1, 2]}'
    assert not compare_functional("[3, 2, 1]", got, converted=True).ok
    for plain in (Checker(kind="exact"), Checker(kind="tokens"), Checker(kind="float")):
        cmp = compare_functional("[3, 2, 1]", got, plain, converted=True)
        assert not cmp.ok and cmp.message, plain
    unordered = Checker(kind="tokens", unordered=True)
    assert compare_functional("[3, 2, 1]", got, unordered, converted=True).strategy == "tokens"
    assert not compare_functional("[3, 2, 2, 1]", got, unordered, converted=True).ok  # duplicates
    assert not compare_functional("[3, 2]", got, unordered, converted=True).ok
    loose = Checker(kind="float", unordered=True, rel_tol=1e-3, abs_tol=0)
    assert compare_functional("[2.0, 1.0]", '{"__set__": [1.0001, 2.0]}', loose, converted=True).ok
    # `unordered` relaxes the outermost list only: a set inside an item is still not re-ordered
    assert not compare_functional("[[1, 2], [3]]", '[{"__set__": [2, 1]}, [3]]', unordered, converted=True).ok
    assert compare_functional("[[3], [1]]", '[{"__set__": [1]}, {"__set__": [3]}]', unordered, converted=True).ok
    # set against set (the expected value is a set too) is equality of sets, with or without a checker
    assert compare_functional('{"__set__": [1, 2, 3]}', got, converted=True).ok
    assert compare_functional('[{"__set__": [1, 2, 3]}]', f"[{got}]", Checker(kind="exact"), converted=True).ok
    assert not compare_functional('{"__set__": [1, 2]}', got, converted=True).ok
    assert compare_functional("[]", '{"__set__": []}', converted=True).ok


def test_functional_bad_expected_json_raises():
    with pytest.raises(json.JSONDecodeError):
        compare_functional("not json", "1")


def test_identical_text_shortcut_keeps_the_cascade_rules():
    """A return value whose JSON text equals the expected text is accepted without decoding it,
    but only where the full cascade would say `exact`: broken test data still raises (SE), an
    unsupported return type is still WA, a converted value or a checker takes the full path."""
    assert compare_functional("[1, 2]", "[1, 2]").strategy == "exact"
    assert compare_functional("NaN", "NaN").strategy == "exact"
    with pytest.raises(json.JSONDecodeError):  # the same broken text from a program: still the data's error
        compare_functional("[1, 2", "[1, 2")
    with pytest.raises(json.JSONDecodeError):
        compare_functional("", "")
    unsupported = '{"__repr__": "<object>", "__type__": "Foo"}'
    assert not compare_functional(unsupported, unsupported).ok
    assert compare_functional("[1, 2]", "[1, 2]", converted=True).strategy == "structural"
    assert compare_functional("[1, 2]", "[1, 2]", Checker(kind="exact")).strategy == "exact"


def test_program_checker_is_not_a_comparator_kind():
    with pytest.raises(ValueError):
        compare_stdio("1", "1", Checker(kind="program", program="x", language="python"))
