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
              compared as usual. A returned set matches such a list as a multiset of its items (a
              set holds a value once: an expected list with duplicates matches it only where
              case or tolerance tells them apart); a set inside an item, like a set under any
              other checker, matches a list only of at most one element.
A problem whose inner order is free too needs a checker program. Items are paired by a matching
(augmenting paths), not greedily: tolerance and case make equality non-transitive.

Totality: nothing a program returns or prints makes a comparison raise (that would be SE, never
counted against the model). Numbers in float range compare as floats; a number float() cannot
hold (`10**400`, `1e400`) compares exactly, without expanding its exponent (`2**1024` is within
1e-6 of 1.7976931348623157e308, `5e400` is not `1e400`). A JSON integer over the interpreter's
digit limit (`sys.get_int_max_str_digits()`: int() of it is quadratic) is kept as its text and
compared as a number. A stdio number past float range whose exponent Decimal cannot hold either
(past 10**18) matches only its own text. Only the expected data raises (ValueError: not JSON, or nested too deeply).
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


class BigInt:
    """A JSON integer over the interpreter's digit limit, kept as its text: converting it is
    quadratic, and the limit is what stops a returned 10**10**7 from stalling the judge."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BigInt) and self.text == other.text  # JSON spells an int one way

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"<int of {len(self.text.lstrip('-'))} digits>"


def _parse_int(text: str) -> int | BigInt:
    try:
        return int(text)
    except ValueError:
        return BigInt(text)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an int over the digit limit (plain ValueError, not a decode error)
        return json.loads(text, parse_int=_parse_int)


def _as_float(x: Any) -> float | None:
    """float(x), or None for an int beyond float range."""
    if isinstance(x, BigInt):
        return None
    try:
        return float(x)
    except OverflowError:
        return None


def _as_decimal(x: Any) -> decimal.Decimal:
    return decimal.Decimal(x.text if isinstance(x, BigInt) else x)  # exact for ints and floats


def numbers_close(a: Any, b: Any, rel_tol: float, abs_tol: float) -> bool:
    """Kattis float semantics: accept if the absolute OR the relative error is within tolerance.
    `a`, `b`: ints (also `BigInt`) or floats of any size. Both in float range: float arithmetic;
    otherwise exact (an int beyond float range can still be close to a huge finite float)."""
    fa, fb = _as_float(a), _as_float(b)
    if fa is not None and fb is not None:
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if math.isinf(fa) or math.isinf(fb):
            return fa == fb
        diff = abs(fa - fb)
        return diff <= abs_tol or diff <= rel_tol * abs(fb)
    if (fa is not None and not math.isfinite(fa)) or (fb is not None and not math.isfinite(fb)):
        return False  # NaN or an infinity against a finite int
    return _close_exact(_as_decimal(a), _as_decimal(b), rel_tol, abs_tol)


def _digits(d: decimal.Decimal) -> int:
    return len(d.as_tuple().digits)


def _close_exact(a: decimal.Decimal, b: decimal.Decimal, rel_tol: float, abs_tol: float) -> bool:
    """numbers_close on exact finite values, |a - b| <= abs_tol or <= rel_tol * |b|, in time linear
    in their digits whatever their exponents. The difference is rounded up to `prec` digits; each
    bound has at most `prec` digits, and no number of `prec` digits lies strictly between the
    difference and its rounding up, so the comparison is exact."""
    if a == b:
        return True
    bounds = []
    for tol, scale in ((abs_tol, None), (rel_tol, b)):
        if math.isnan(tol):
            continue
        if math.isinf(tol):  # as in floats: diff <= inf, but inf * 0 is NaN
            if scale is None or scale != 0:
                return True
            continue
        bounds.append((decimal.Decimal(tol), scale))
    prec = 2 + max([_digits(t) + (0 if s is None else _digits(s)) for t, s in bounds], default=1)
    ctx = decimal.Context(prec=prec, rounding=decimal.ROUND_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                          traps=[])
    diff = ctx.subtract(a, b).copy_abs()
    return any(diff <= (t if s is None else ctx.multiply(t, s.copy_abs())) for t, s in bounds)


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
    return _tokens_close(got, exp, rel_tol, abs_tol)


def _tokens_close(got: str, exp: str, rel_tol: float, abs_tol: float) -> bool:
    g, e = float(got), float(exp)  # a number token never fails float(): past its range it is inf
    if not (math.isinf(g) or math.isinf(e)):
        return numbers_close(g, e, rel_tol, abs_tol)
    try:  # beyond float range: exactly (inf == inf would take 5e400 for 1e400)
        return _close_exact(decimal.Decimal(got), decimal.Decimal(exp), rel_tol, abs_tol)
    except decimal.InvalidOperation:  # an exponent Decimal cannot hold: only the same text matches
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

    def order(tok: str) -> tuple[int, float, str]:  # numbers by value: a close partner sorts near
        if _NUMBER.fullmatch(tok):
            return (0, float(tok), tok)
        return (1, 0.0, tok if checker.case_sensitive else tok.lower())

    exp, got = sorted(exp, key=order), sorted(got, key=order)
    if exp == got:
        return True
    return _matching(exp, got, lambda e, g: _token_equal(
        e, g, numeric=True, all_numbers=True, case_sensitive=checker.case_sensitive,
        rel_tol=checker.rel_tol, abs_tol=checker.abs_tol))


def _unseen(nxt: dict[int, int], p: int) -> int:
    """The first position at or after p not in `nxt` (union-find with path compression)."""
    root = p
    while root in nxt:
        root = nxt[root]
    while p != root:
        nxt[p], p = root, nxt[p]
    return root


def _matching(exp: list, got: list, equal: Any) -> bool:
    """Whether each expected item can have an actual item of its own that it `equal`s (lists of
    one length). A greedy pairing misses matchings that exist when tolerance makes `equal`
    non-transitive: augmenting paths (Kuhn), iterative. Both lists come sorted, so item i tries
    actual items from position i on (its partner, if any, is usually there), and items already
    on the path are skipped in O(1) (`nxt`), so a near-uniform list costs linear time."""
    n = len(got)
    owner: list[int | None] = [None] * n  # actual index -> the expected index it is paired with
    known: dict[tuple[int, int], bool] = {}

    def ok(i: int, j: int) -> bool:
        if (i, j) not in known:
            known[(i, j)] = equal(exp[i], got[j])
        return known[(i, j)]

    paired = [False] * n
    for i in range(n):  # the cheap pass: a free partner at or just after its own position
        for j in (i, (i + 1) % n, (i + 2) % n):
            if owner[j] is None and ok(i, j):
                owner[j], paired[i] = i, True
                break
    for start in range(n):
        if paired[start]:
            continue
        nxt: dict[int, int] = {}  # seen position -> a later position (see _unseen)
        stack = [[start, start, False]]  # frames: expected index, next position, wrapped around
        via: list[int] = []  # the actual item each frame below the top took
        while stack:
            frame = stack[-1]
            i, j, wrapped = frame
            while True:
                j = _unseen(nxt, j)
                if j >= n and not wrapped:
                    j, wrapped = 0, True
                    continue
                if wrapped and j >= i:  # every position tried
                    j = -1
                    break
                if ok(i, j):
                    break
                j += 1
            if j < 0:
                stack.pop()
                if via:
                    via.pop()
                continue
            frame[1:] = [j + 1, wrapped]
            nxt[j] = j + 1  # seen
            via.append(j)
            if owner[j] is None:  # a free item: shift every pair along the path
                for (ei, _, _), gj in zip(stack, via, strict=True):
                    owner[gj] = ei
                break
            stack.append([owner[j], owner[j], False])
        else:
            return False  # this item cannot be paired, whatever the others take
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


_NUMBERS = (int, float, BigInt)


def _key(v: Any, fold: bool = False) -> str:
    """A normal form: values that compare equal without tolerance have equal keys (1, 1.0 and
    1e0; -0.0 and 0; a set in any order; a set of at most one item and the list it matches).
    fold: strings lower-cased (equal ignoring case). Unlike json.dumps, total on decoded values."""
    if v is None or isinstance(v, bool):
        return {None: "n", True: "t", False: "f"}[v]
    if isinstance(v, str):
        return json.dumps(v.lower() if fold else v)
    if isinstance(v, BigInt):
        return "#" + v.text
    if isinstance(v, float):
        if not math.isfinite(v):
            return "#" + str(v)
        return "#" + (str(int(v)) if v.is_integer() else repr(v))  # at most 309 digits
    if isinstance(v, int):
        return "#" + str(v)  # decoded under the digit limit, so printable under it
    if _is_set(v):
        keys = ",".join(sorted(_key(x, fold) for x in v["__set__"]))
        return f"[{keys}]" if len(v["__set__"]) <= 1 else f"{{{keys}}}"
    if isinstance(v, list):
        return "[" + ",".join(_key(x, fold) for x in v) + "]"
    if isinstance(v, dict):
        return "(" + ",".join(json.dumps(k) + ":" + _key(x, fold) for k, x in sorted(v.items())) + ")"
    return repr(v)


def _order(v: Any, fold: bool) -> tuple[int, float, str]:
    """A sort key that keeps equal keys together and close numbers near each other."""
    if isinstance(v, _NUMBERS) and not isinstance(v, bool):
        f = _as_float(v)
        if f is None:  # an int beyond float range
            f = -math.inf if (v.text.startswith("-") if isinstance(v, BigInt) else v < 0) else math.inf
        return (0, math.inf if math.isnan(f) else f, _key(v))
    return (1, 0.0, _key(v, fold))


def _values_equal(exp: Any, got: Any, *, strict: bool, tol: tuple[float, float] | None,
                  case_sensitive: bool = True) -> bool:
    """Deep equality. strict: JSON types must match exactly. tol: float tolerance (rel, abs)."""
    if _is_set(got) and not strict:
        if _is_set(exp):  # set against set: order means nothing on either side
            return _unordered_equal(exp["__set__"], got["__set__"], tol=tol, case_sensitive=case_sensitive)
        if isinstance(exp, list) and len(got["__set__"]) <= 1:  # one order only: nothing is relaxed
            return _values_equal(exp, got["__set__"], strict=False, tol=tol, case_sensitive=case_sensitive)
        return False  # a list's order is the problem's unless its checker says `unordered`
    if isinstance(exp, bool) or isinstance(got, bool):
        return type(exp) is type(got) and exp == got
    if isinstance(exp, _NUMBERS) and isinstance(got, _NUMBERS):
        if strict and type(exp) is not type(got):
            return False
        if isinstance(exp, float) and isinstance(got, float) and math.isnan(exp) and math.isnan(got):
            return True
        if exp == got:  # exact, also between an int and a float of any size
            return True
        if tol is None or not isinstance(exp, float):  # an expected int: equal values only
            return False
        return numbers_close(got, exp, tol[0], tol[1])
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


def _unordered_equal(exp: list, got: list, *, tol: tuple[float, float] | None,
                     case_sensitive: bool = True) -> bool:
    """Items taken in any order: a pairing of the two lists, item with equal item (a set holds a
    value once, so it matches an expected list with duplicates only if they differ by case or
    tolerance where those are allowed)."""
    if len(exp) != len(got):
        return False
    fold = not case_sensitive
    exp_keyed = sorted(((_order(v, fold), v) for v in exp), key=lambda kv: kv[0])
    got_keyed = sorted(((_order(v, fold), v) for v in got), key=lambda kv: kv[0])
    exp, got = [v for _, v in exp_keyed], [v for _, v in got_keyed]
    if all(_values_equal(e, g, strict=False, tol=None, case_sensitive=case_sensitive)
           for e, g in zip(exp, got, strict=True)):
        return True
    if tol is None and [k for k, _ in exp_keyed] != [k for k, _ in got_keyed]:
        return False  # equal items have equal keys: no pairing exists
    # tolerance, or equal keys that are not equal values (an expected set of one item against a
    # returned list of it; duplicates in an expected set): pair by a matching
    return _matching(exp, got, lambda e, g: _values_equal(e, g, strict=False, tol=tol, case_sensitive=case_sensitive))


def _show(v: Any) -> str:
    return json.dumps(v, sort_keys=True, allow_nan=True, default=repr)  # repr: a BigInt, briefly


def value_diff(expected: Any, actual: Any) -> str:
    return f"expected {_clip(_show(expected), 100)}, got {_clip(_show(actual), 100)}"


def compare_functional(expected_json: str, actual_json: str, checker: Checker | None = None, *,
                       converted: bool = False) -> Comparison:
    """Judge a functional return value (both as JSON text). Raises ValueError if the *expected*
    JSON is invalid or nested too deeply to judge (a problem-data error, not the submission's);
    nothing in the actual JSON makes it raise."""
    if (checker is None and not converted and actual_json == expected_json and "__repr__" not in actual_json
            and is_json(expected_json)):
        return Comparison(True, "exact")  # the same (valid) text: the same values of the same types
    try:
        expected = _loads(expected_json)
    except RecursionError:
        raise ValueError("expected value nested too deeply") from None
    try:
        actual = _loads(actual_json)
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
        if checker.unordered and isinstance(expected, list) and (isinstance(actual, list) or _is_set(actual)):
            items = actual if isinstance(actual, list) else actual["__set__"]
            ok = _unordered_equal(expected, items, tol=tol, case_sensitive=checker.case_sensitive)
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
