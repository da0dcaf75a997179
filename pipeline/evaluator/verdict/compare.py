"""Output comparison: the problem's checker when it has one, otherwise the MicroCoder cascade.

stdio cascade (first step that accepts is recorded as the strategy):
  exact    identical, up to line endings (CRLF) and trailing newlines at the end
  lines    line by line, each line stripped, blank lines at the start and end ignored
  tokens   whitespace-insensitive (line breaks anywhere)
  numeric  token by token. An expected float (a fraction or exponent) matches a number within
           rel/abs tolerance (1e-6). An expected integer matches only a number of exactly its
           value (`1000000007.0` for `1000000007`, never `1e9` or `1000000500.0`: answers modulo
           1e9+7 would otherwise accept near misses), and another integer token only as equal
           text (a tolerance on integers would accept 50000000000000001 for 50000000000000000).
functional cascade (values decoded from JSON; the harness maps tuples, sets, numpy values,
linked lists and trees to JSON and marks the result `converted`):
  exact       same JSON value: int vs float and bool vs int differ, no type was mapped
  structural  tuples = lists, 1 == 1.0, a returned set equals an expected set with the same
              elements (in any order) but a list only of at most one element: a set's iteration
              order is arbitrary, so it is never re-ordered to match a list of two or more
  numeric     structural with float tolerance where the expected value is a float (an expected
              int is matched by an equal value only, as in the stdio cascade)
Case is never ignored and order never relaxed by the cascade: only a checker says so
(`case_sensitive=False`, `unordered=True`), because both are false-positive risks otherwise.

`Checker.unordered` relaxes one level of order only, the outermost:
  stdio       a one-line output is a multiset of tokens; a longer output is a multiset of lines,
              each line compared with its tokens in order (whitespace runs normalised)
  functional  a list result is a multiset of its items; each item is compared in order
              (`[[1, 2], [3]]` matches `[[3], [1, 2]]`, not `[[2, 1], [3]]`). A non-list result is
              compared as usual. A returned set matches such a list as a set of its items (an
              expected list with duplicates cannot match); a set inside an item, like a set
              under any other checker, matches a list only of at most one element.
A problem whose inner order is free too needs a checker program.
"""

from __future__ import annotations

import decimal
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from microcoder.pipeline.schema import PROGRAM_KINDS, Checker, is_json

DEFAULT_REL_TOL = 1e-6
DEFAULT_ABS_TOL = 1e-6
# Possessive quantifiers: the tokens are the program's output, and a backtracking pattern takes
# quadratic time on a long digit run that does not end as a number ("111...1x").
_NUMBER = re.compile(r"[+-]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?")
_INTEGER = re.compile(r"[+-]?\d++")
_SHOW = 60


@dataclass
class Comparison:
    ok: bool
    strategy: str | None = None  # the step / checker kind that accepted
    message: str | None = None  # why not, short (the diff shown in TestResult.diff)


def _clip(s: str, n: int = _SHOW) -> str:
    s = repr(s)
    return s if len(s) <= n else s[: n - 3] + "..."


# --- stdio --------------------------------------------------------------------------------------
def _norm_newlines(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\r", "\n")


def _lines(s: str) -> list[str]:
    lines = [ln.strip() for ln in _norm_newlines(s).split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    start = 0
    while start < len(lines) and not lines[start]:
        start += 1
    return lines[start:]


def _is_float_token(tok: str) -> bool:
    return bool(_NUMBER.fullmatch(tok)) and not _INTEGER.fullmatch(tok)


def numbers_close(a: float, b: float, rel_tol: float, abs_tol: float) -> bool:
    """Kattis float semantics: accept if the absolute OR the relative error is within tolerance."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    diff = abs(a - b)
    return diff <= abs_tol or diff <= rel_tol * abs(b)


def _same_value(exp: str, got: str) -> bool:
    """Exact decimal equality (`1000000007.0` == `1000000007`); Decimal compares huge exponents
    without expanding them, so `1e999999999` costs nothing."""
    try:
        return decimal.Decimal(got) == decimal.Decimal(exp)
    except (decimal.InvalidOperation, ValueError):
        return False


def _token_equal(exp: str, got: str, *, numeric: bool, all_numbers: bool, case_sensitive: bool,
                 rel_tol: float, abs_tol: float) -> bool:
    if exp == got:
        return True
    if not case_sensitive and exp.lower() == got.lower():
        return True
    if not numeric or not (_NUMBER.fullmatch(exp) and _NUMBER.fullmatch(got)):
        return False
    if not all_numbers and _INTEGER.fullmatch(exp):
        # an expected integer: two integers by text only; a float token by exact value only
        return _is_float_token(got) and _same_value(exp, got)
    try:
        return numbers_close(float(got), float(exp), rel_tol, abs_tol)
    except OverflowError:
        return False


def _first_token_diff(exp: list[str], got: list[str], **kw: Any) -> str | None:
    for i, (e, g) in enumerate(zip(exp, got, strict=False)):
        if not _token_equal(e, g, **kw):
            return f"token {i + 1}: expected {_clip(e)}, got {_clip(g)}"
    if len(exp) != len(got):
        return f"expected {len(exp)} tokens, got {len(got)}"
    return None


def stdio_diff(expected: str, actual: str) -> str:
    """A short, human-readable first difference (line based)."""
    exp, got = _lines(expected), _lines(actual)
    if not got:
        return "empty output" if exp else "unexpected output"
    for i, (e, g) in enumerate(zip(exp, got, strict=False)):
        if e != g:
            return f"line {i + 1}: expected {_clip(e)}, got {_clip(g)}"
    return f"expected {len(exp)} lines, got {len(got)}"


def _unordered_units(s: str) -> list[str]:
    lines = _lines(s)
    return lines[0].split() if len(lines) == 1 else [" ".join(ln.split()) for ln in lines]


def compare_stdio(expected: str, actual: str, checker: Checker | None = None) -> Comparison:
    """Judge a stdio output. `checker` None = the cascade; kind 'program' is handled elsewhere."""
    if checker is None:
        return _stdio_cascade(expected, actual)
    kind = checker.kind
    case = checker.case_sensitive
    if checker.unordered:
        exp, got = _unordered_units(expected), _unordered_units(actual)
        key = (lambda u: u) if case else (lambda u: u.lower())
        if kind == "float":
            ok = _match_unordered_tokens(exp, got, checker)
        else:
            ok = sorted(map(key, exp)) == sorted(map(key, got))
        return Comparison(ok, kind if ok else None, None if ok else "output differs (any order accepted)")
    if kind == "exact":
        ok = _norm_newlines(expected).rstrip("\n") == _norm_newlines(actual).rstrip("\n")
        if not ok and not case:
            ok = _norm_newlines(expected).rstrip("\n").lower() == _norm_newlines(actual).rstrip("\n").lower()
        return Comparison(ok, kind if ok else None, None if ok else stdio_diff(expected, actual))
    if kind in ("tokens", "float"):
        kw = dict(numeric=kind == "float", all_numbers=True, case_sensitive=case,
                  rel_tol=checker.rel_tol, abs_tol=checker.abs_tol)
        diff = _first_token_diff(expected.split(), actual.split(), **kw)
        return Comparison(diff is None, kind if diff is None else None, diff)
    raise ValueError(f"compare_stdio cannot apply checker kind {kind!r}")


def _match_unordered_tokens(exp: list[str], got: list[str], checker: Checker) -> bool:
    if len(exp) != len(got):
        return False
    remaining = list(got)
    for e in exp:
        for i, g in enumerate(remaining):
            if _token_equal(e, g, numeric=True, all_numbers=True, case_sensitive=checker.case_sensitive,
                            rel_tol=checker.rel_tol, abs_tol=checker.abs_tol):
                del remaining[i]
                break
        else:
            return False
    return True


def _stdio_cascade(expected: str, actual: str) -> Comparison:
    if _norm_newlines(expected).rstrip("\n") == _norm_newlines(actual).rstrip("\n"):
        return Comparison(True, "exact")
    if _lines(expected) == _lines(actual):
        return Comparison(True, "lines")
    exp, got = expected.split(), actual.split()
    if exp == got:
        return Comparison(True, "tokens")
    kw = dict(numeric=True, all_numbers=False, case_sensitive=True,
              rel_tol=DEFAULT_REL_TOL, abs_tol=DEFAULT_ABS_TOL)
    if len(exp) == len(got) and _first_token_diff(exp, got, **kw) is None:
        return Comparison(True, "numeric")
    return Comparison(False, None, stdio_diff(expected, actual))


# --- functional -----------------------------------------------------------------------------------
def _is_set(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"__set__"} and isinstance(v["__set__"], list)


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, allow_nan=True)


def _values_equal(exp: Any, got: Any, *, strict: bool, tol: tuple[float, float] | None,
                  case_sensitive: bool = True) -> bool:
    """Deep equality. strict: JSON types must match exactly. tol: float tolerance (rel, abs)."""
    if _is_set(got) and not strict:
        if _is_set(exp):  # set against set: order means nothing on either side
            return _set_equal(exp["__set__"], got["__set__"], tol=tol, case_sensitive=case_sensitive)
        if isinstance(exp, list) and len(got["__set__"]) <= 1:  # one order only: nothing is relaxed
            return _values_equal(exp, got["__set__"], strict=False, tol=tol, case_sensitive=case_sensitive)
        return False  # a list's order is the problem's unless its checker says `unordered`
    if isinstance(exp, bool) or isinstance(got, bool):
        return type(exp) is type(got) and exp == got
    if isinstance(exp, (int, float)) and isinstance(got, (int, float)):
        if strict and type(exp) is not type(got):
            return False
        if isinstance(exp, float) and isinstance(got, float) and math.isnan(exp) and math.isnan(got):
            return True
        if exp == got:
            return True
        if tol is None or isinstance(exp, int):  # an expected int: equal values only
            return False
        return numbers_close(float(got), float(exp), tol[0], tol[1])
    if isinstance(exp, str) and isinstance(got, str):
        return exp == got or (not case_sensitive and exp.lower() == got.lower())
    if isinstance(exp, list) and isinstance(got, list):
        return len(exp) == len(got) and all(
            _values_equal(e, g, strict=strict, tol=tol, case_sensitive=case_sensitive)
            for e, g in zip(exp, got, strict=True))
    if isinstance(exp, dict) and isinstance(got, dict):
        return exp.keys() == got.keys() and all(
            _values_equal(exp[k], got[k], strict=strict, tol=tol, case_sensitive=case_sensitive) for k in exp)
    return exp is None and got is None


def _set_equal(exp: list, got: list, *, tol: tuple[float, float] | None, case_sensitive: bool = True) -> bool:
    """A returned set's items against expected items taken in any order (an expected set, or a
    list under an `unordered` checker)."""
    if len(set(map(_canon, exp))) != len(exp):
        return False  # the expected list has duplicates: a set cannot match it
    return _unordered_equal(exp, got, tol=tol, case_sensitive=case_sensitive)


def _unordered_equal(exp: list, got: list, *, tol: tuple[float, float] | None,
                     case_sensitive: bool = True) -> bool:
    if len(exp) != len(got):
        return False
    pairs = zip(sorted(exp, key=_canon), sorted(got, key=_canon), strict=True)
    if all(_values_equal(e, g, strict=False, tol=None, case_sensitive=case_sensitive) for e, g in pairs):
        return True
    if tol is None and case_sensitive:
        return False
    remaining = list(got)  # tolerance breaks sort order: greedy matching (small lists in practice)
    for e in exp:
        for i, g in enumerate(remaining):
            if _values_equal(e, g, strict=False, tol=tol, case_sensitive=case_sensitive):
                del remaining[i]
                break
        else:
            return False
    return True


def value_diff(expected: Any, actual: Any) -> str:
    return f"expected {_clip(_canon(expected), 100)}, got {_clip(_canon(actual), 100)}"


def compare_functional(expected_json: str, actual_json: str, checker: Checker | None = None, *,
                       converted: bool = False) -> Comparison:
    """Judge a functional return value (both as JSON text). Raises ValueError if the *expected*
    JSON is invalid (a problem-data error, not the submission's)."""
    if (checker is None and not converted and actual_json == expected_json and "__repr__" not in actual_json
            and is_json(expected_json)):
        return Comparison(True, "exact")  # the same (valid) text: the same values of the same types
    expected = json.loads(expected_json)
    try:
        actual = json.loads(actual_json)
    except ValueError:
        return Comparison(False, None, "return value is not valid JSON")
    except RecursionError:  # the program writes this JSON: it must not make the judge fail
        return Comparison(False, None, "return value nested too deeply")
    try:
        return _compare_values(expected, actual, checker, converted)
    except RecursionError:
        return Comparison(False, None, "return value nested too deeply")


def _compare_values(expected: Any, actual: Any, checker: Checker | None, converted: bool) -> Comparison:
    if isinstance(actual, dict) and "__repr__" in actual:  # any value: a program can return such a dict
        return Comparison(False, None, f"unsupported return type {str(actual.get('__type__'))[:40]}: "
                                       f"{str(actual['__repr__'])[:80]}")
    if checker is not None:
        if checker.kind in PROGRAM_KINDS:
            raise ValueError(f"compare_functional cannot apply a {checker.kind} (a program judges those)")
        tol = (checker.rel_tol, checker.abs_tol) if checker.kind == "float" else None
        if checker.unordered and isinstance(expected, list) and isinstance(actual, list):
            ok = _unordered_equal(expected, actual, tol=tol, case_sensitive=checker.case_sensitive)
        elif checker.unordered and isinstance(expected, list) and _is_set(actual):
            ok = _set_equal(expected, actual["__set__"], tol=tol, case_sensitive=checker.case_sensitive)
        else:
            ok = _values_equal(expected, actual, strict=False, tol=tol, case_sensitive=checker.case_sensitive)
        return Comparison(ok, checker.kind if ok else None, None if ok else value_diff(expected, actual))
    if not converted and _values_equal(expected, actual, strict=True, tol=None):
        return Comparison(True, "exact")
    if _values_equal(expected, actual, strict=False, tol=None):
        return Comparison(True, "structural")
    if _values_equal(expected, actual, strict=False, tol=(DEFAULT_REL_TOL, DEFAULT_ABS_TOL)):
        return Comparison(True, "numeric")
    return Comparison(False, None, value_diff(expected, actual))
