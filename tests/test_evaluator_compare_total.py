"""The comparison is total (issue 35 item 1): nothing a program returns or prints makes
compare_functional / compare_stdio raise (the pool would report SE, never counted against the
model, so a policy would learn to return it), and the verdicts follow the rules in compare.py's
docstring. Property tests check both against small reference comparators written here from
those rules (exact rational arithmetic where a float cannot hold a number); the program values
go through the harness's own encoder, as in the box."""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sandbox_fixtures import SLOW_OK, evaluator_fixture, judge, needs_bwrap, sub

from microcoder.pipeline.evaluator.verdict.compare import (
    _matching,
    compare_functional,
    compare_stdio,
    numbers_close,
)
from microcoder.pipeline.schema import Checker, Problem, TestCase

INSIDE = Path(__file__).resolve().parents[1] / "pipeline" / "evaluator" / "inside"
MAX_FLOAT = 1.7976931348623157e308
PROPS = settings(max_examples=400, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@contextlib.contextmanager
def digit_limit(digits: int):
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(digits)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


def unlimited_digits():
    """As in the box (the harness lifts the limit); the comparison itself runs under the host's."""
    return digit_limit(0)


def _harness_child():
    sys.path.insert(0, str(INSIDE))  # the box imports it as a top-level module, next to harness_types
    try:
        import harness_child
    finally:
        sys.path.remove(str(INSIDE))
    return harness_child


harness_child = _harness_child()


def encode(value) -> tuple[str, bool]:
    """A return value as the session child sends it: (JSON text, converted)."""
    enc = harness_child.Encoder()
    with unlimited_digits():
        return json.dumps(enc.enc(value)), enc.converted


def decode(text: str):
    with unlimited_digits():
        return json.loads(text)


# --- the regression and its neighbours --------------------------------------------------------------
def test_an_int_beyond_float_range_against_an_expected_float_is_wa_not_an_error():
    """Was OverflowError out of compare_functional (float(10**400)): SE on demand."""
    cmp = compare_functional("1.5", "1" + "0" * 400)
    assert not cmp.ok and cmp.strategy is None and cmp.message.startswith("expected '1.5'")
    for checker in (None, Checker(kind="float"), Checker(kind="float", unordered=True)):
        for got in ("[1" + "0" * 400 + "]", '{"__set__": [1' + "0" * 400 + "]}", "-1" + "0" * 400):
            assert not compare_functional("[1.5]", got, checker, converted=True).ok
    assert not compare_functional("Infinity", "1" + "0" * 400).ok
    assert not compare_functional("NaN", "1" + "0" * 400).ok


def test_numbers_beyond_float_range_compare_exactly():
    assert numbers_close(2**1024, MAX_FLOAT, 1e-6, 1e-6)  # 2**971 apart: within 1e-6 relative
    assert not numbers_close(2**1025, MAX_FLOAT, 1e-6, 1e-6)
    assert not numbers_close(10**400, 1.5, 1e-6, 1e-6)
    assert not numbers_close(10**400, math.inf, 1e-6, 1e-6)
    assert numbers_close(10**400 + 1, 10**400, 1e-6, 1e-6)
    assert numbers_close(10**400, 10**400 + 10**390, math.inf, 0.0)  # as floats: diff <= inf
    assert compare_functional("1.7976931348623157e308", str(2**1024)).strategy == "numeric"
    assert not compare_functional("1.7976931348623157e308", str(2**1025)).ok
    assert compare_functional(str(10**400), str(10**400) + ".0").ok is False  # a float cannot hold it: inf


def test_stdio_numbers_beyond_float_range_compare_exactly():
    """float() of both was inf, and inf == inf: 5e400 passed for 1e400."""
    assert not compare_stdio("1e400", "5e400").ok
    assert compare_stdio("1e400", "1.0000001e400").strategy == "numeric"
    assert compare_stdio("1.5e400", "15" + "0" * 399).strategy == "numeric"
    assert not compare_stdio("1.5", "1" + "0" * 400).ok
    # exponents are never expanded (Fraction of these would not finish)
    assert compare_stdio("1e999999999", "1.0000001e999999999").ok
    assert not compare_stdio("1e999999999", "1.001e999999999").ok
    assert compare_stdio("2.5", "2.5" + "0" * 100 + "1e0").ok
    assert not compare_stdio("2.0", "1e-999999999999999999").ok
    # past Decimal's exponents: only the same text
    absurd = "1e99999999999999999999"
    assert compare_stdio(absurd, absurd).ok
    assert not compare_stdio(absurd, "1E99999999999999999999").ok
    assert not compare_stdio("2.5 " + absurd, "2.5 " + "0e99999999999999999999").ok
    assert not compare_stdio(absurd, "1.5", Checker(kind="float", unordered=True)).ok


def test_ints_over_the_digit_limit_compare_as_numbers():
    """Over `sys.get_int_max_str_digits()` json.loads raised ValueError: the actual value was
    'not valid JSON' and the expected one SE (bad test data) for every answer but the same text."""
    big = "1" + "0" * 5000
    with digit_limit(sys.int_info.default_max_str_digits):  # the host keeps the interpreter's limit
        assert compare_functional(big, big, converted=True).strategy == "structural"
        assert compare_functional(f"[{big}, 2]", f"[{big}, 2]", converted=True).strategy == "structural"
        assert compare_functional(f'{{"__set__": [{big}, 2]}}', f'{{"__set__": [2, {big}]}}', converted=True).ok
        assert not compare_functional(big, big[:-1] + "1").ok
        assert not compare_functional(big, "-" + big).ok
        assert not compare_functional("1.5", big).ok
        assert not compare_functional(big, "1e308").ok
        cmp = compare_functional("[1]", f"[{big}]")
        assert not cmp.ok and "<int of 5001 digits>" in cmp.message
        assert compare_functional(big, big, Checker(kind="float")).ok


def test_unordered_pairs_values_that_are_equal_in_another_spelling():
    """Sorted by their JSON text, 1e16 and 10**16 (or -0.0 and 0) fell at different places, and
    without tolerance the sorted pairing was final: WA for a right answer."""
    tokens = Checker(kind="tokens", unordered=True)
    assert compare_functional("[10000000000000000, 15]", "[1e16, 15]", tokens).ok
    assert compare_functional("[0, -1]", "[-0.0, -1]", tokens).ok
    assert compare_functional('{"__set__": [10000000000000000, 15]}', '{"__set__": [15, 1e16]}', converted=True).ok
    assert compare_functional('["a", "B"]', '["b", "A"]', Checker(kind="tokens", unordered=True,
                                                                  case_sensitive=False)).ok


def test_unordered_with_tolerance_finds_a_pairing_a_greedy_one_misses():
    """1.0 took 1.0000009 first, and 0.9999995 was left with 1.0000009 (1.4e-6 apart): WA."""
    loose = Checker(kind="float", unordered=True, rel_tol=0.0, abs_tol=1e-6)
    assert compare_functional("[1.0, 0.9999995]", "[1.0000009, 1.0]", loose).ok
    assert compare_stdio("1.0 0.9999995", "1.0000009 1.0", loose).ok
    assert not compare_functional("[1.0, 0.9999995]", "[1.0000009, 1.0000011]", loose).ok
    wide = "[" + ", ".join(f"{i}.0" for i in range(300)) + "]"
    shifted = "[" + ", ".join(f"{i}.0000005" for i in reversed(range(300))) + "]"
    assert compare_functional(wide, shifted, loose).ok


def test_deep_expected_data_is_a_data_error_and_deep_output_is_wa():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ValueError):
        compare_functional(deep, "[]")
    assert compare_functional("[]", deep).message == "return value nested too deeply"
    assert not compare_functional('{"__set__": [1]}', '{"__set__": [' + deep + "]}", converted=True).ok


# --- what the harness's encoder hands the comparison ------------------------------------------------------
class MyInt(int):
    pass


class MyFloat(float):
    pass


class MyStr(str):
    pass


class MyList(list):
    pass


class MyDict(dict):
    pass


class Opaque:
    def __repr__(self):
        return "<opaque>"


def test_encoded_return_values_of_every_kind_are_judged_without_error():
    cyclic = [1]
    cyclic.append(cyclic)
    values = [10**400, -(10**5000), 2**1024, MyInt(10**400), MyFloat("nan"), -0.0, math.inf, True,
              MyStr("1.5"), MyList([1, MyInt(2)]), MyDict({1: 10**400, "x": {frozenset({1, 2}), 3}}),
              {1.5: None, None: 1, True: 2}, (1, (2, [3])), {(1, 2), (3,)}, frozenset(), range(3),
              Opaque(), [Opaque(), {"__repr__": 1}], {"__set__": [1, [2]]}, b"bytes", 1 + 2j]
    for value in values:
        text, converted = encode(value)
        for expected in ("1.5", "[1.5]", "1", '{"__set__": [1.5]}', "[]", "null", text):
            for checker in (None, Checker(kind="float"), Checker(kind="tokens", unordered=True)):
                cmp = compare_functional(expected, text, checker, converted=converted)
                assert cmp.ok or cmp.message, (value, expected, checker)
    with pytest.raises((ValueError, RecursionError)):  # the child reports Unserialisable: WA
        encode(cyclic)


def test_encoder_keeps_a_decimal_result_exact():
    """A float would round 100000000000000000001 to the expected 1e20: a whole Decimal or Fraction
    is the int it is; any other, the nearest float."""
    text, converted = encode(Decimal("100000000000000000001"))
    assert not compare_functional("100000000000000000000", text, converted=converted).ok
    assert compare_functional("100000000000000000001", text, converted=converted).ok
    assert encode(Fraction(10**30 + 1, 1))[0] == str(10**30 + 1) and encode(Fraction(1, 4))[0] == "0.25"
    assert encode(Decimal("1e100000"))[0] == "Infinity"  # not expanded to 100,000 digits


def test_encoder_does_not_drop_colliding_dict_keys():
    """{1: 'x', '1': 'b'} would read as {'1': 'b'}: colliding keys are unserialisable (WA)."""
    for value in ({1: "x", "1": "b"}, {True: 1, "true": 2}, {None: 1, "null": 2}):
        with pytest.raises(ValueError, match="collide"):
            encode(value)


# --- reference comparators (from compare.py's docstring) -----------------------------------------------------
def is_set(v) -> bool:
    return isinstance(v, dict) and list(v) == ["__set__"] and isinstance(v["__set__"], list)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ref_close(got, exp, rel, abs_) -> bool:
    """Kattis: |got - exp| <= abs or <= rel * |exp|; as floats, exactly where float() cannot hold one."""
    nan = [isinstance(x, float) and math.isnan(x) for x in (got, exp)]
    if any(nan):
        return all(nan)
    if any(isinstance(x, float) and math.isinf(x) for x in (got, exp)):
        return got == exp
    try:
        g, e = float(got), float(exp)
    except OverflowError:
        diff = abs(Fraction(got) - Fraction(exp))
        return diff <= Fraction(abs_) or diff <= Fraction(rel) * abs(Fraction(exp))
    return abs(g - e) <= abs_ or abs(g - e) <= rel * abs(e)


def ref_pairing(exp: list, got: list, equal) -> bool:
    """Some pairing of all items, each expected item with an actual item it equals."""
    if len(exp) != len(got):
        return False

    def go(i: int, used: frozenset) -> bool:
        return i == len(exp) or any(j not in used and equal(exp[i], got[j]) and go(i + 1, used | {j})
                                    for j in range(len(got)))

    return go(0, frozenset())


def ref_equal(exp, got, *, strict: bool, tol=None, case: bool = True) -> bool:
    def eq(e, g):
        return ref_equal(e, g, strict=strict, tol=tol, case=case)

    if not strict and is_set(got):
        if is_set(exp):
            return ref_pairing(exp["__set__"], got["__set__"], eq)
        return isinstance(exp, list) and len(got["__set__"]) <= 1 and eq(exp, got["__set__"])
    if isinstance(exp, bool) or isinstance(got, bool):
        return type(exp) is type(got) and exp == got
    if is_number(exp) and is_number(got):
        if strict and type(exp) is not type(got):
            return False
        if isinstance(exp, float) and isinstance(got, float) and math.isnan(exp) and math.isnan(got):
            return True
        if exp == got:
            return True
        return tol is not None and isinstance(exp, float) and ref_close(got, exp, *tol)
    if isinstance(exp, str) and isinstance(got, str):
        return exp == got or (not case and exp.lower() == got.lower())
    if isinstance(exp, list) and isinstance(got, list):
        return len(exp) == len(got) and all(map(eq, exp, got))
    if isinstance(exp, dict) and isinstance(got, dict):
        return exp.keys() == got.keys() and all(eq(exp[k], got[k]) for k in exp)
    return exp is None and got is None


def ref_functional(exp, got, checker, converted) -> tuple[bool, str | None]:
    if isinstance(got, dict) and "__repr__" in got:
        return False, None
    if checker is not None:
        tol = (checker.rel_tol, checker.abs_tol) if checker.kind == "float" else None
        case = checker.case_sensitive
        if checker.unordered and isinstance(exp, list) and (isinstance(got, list) or is_set(got)):
            items = got if isinstance(got, list) else got["__set__"]
            ok = ref_pairing(exp, items, lambda e, g: ref_equal(e, g, strict=False, tol=tol, case=case))
        else:
            ok = ref_equal(exp, got, strict=False, tol=tol, case=case)
        return ok, checker.kind if ok else None
    if not converted and ref_equal(exp, got, strict=True):
        return True, "exact"
    if ref_equal(exp, got, strict=False):
        return True, "structural"
    if ref_equal(exp, got, strict=False, tol=(1e-6, 1e-6)):
        return True, "numeric"
    return False, None


REF_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE]([+-]?[0-9]+))?")
REF_INTEGER = re.compile(r"[+-]?[0-9]+")


def ref_value(tok: str) -> Fraction | None:
    """The exact value of a number token; None where its exponent is past 10**18 (not comparable)."""
    m = REF_NUMBER.fullmatch(tok)
    if m.group(4) is not None and abs(int(m.group(4))) > 10**18:
        return None
    return Fraction(tok)


def ref_token(exp: str, got: str, *, numeric: bool, all_numbers: bool, case: bool, rel: float, abs_: float) -> bool:
    if exp == got or (not case and exp.lower() == got.lower()):
        return True
    if not (numeric and REF_NUMBER.fullmatch(exp) and REF_NUMBER.fullmatch(got)):
        return False
    e, g = ref_value(exp), ref_value(got)
    if not all_numbers and REF_INTEGER.fullmatch(exp):  # an expected integer: equal values, and not as integer text
        return not REF_INTEGER.fullmatch(got) and g is not None and e == g
    fe, fg = float(exp), float(got)
    if not (math.isinf(fe) or math.isinf(fg)):
        return abs(fg - fe) <= abs_ or abs(fg - fe) <= rel * abs(fe)
    if e is None or g is None:
        return False  # past float range and past 10**18 in the exponent: the same text only
    return abs(g - e) <= Fraction(abs_) or abs(g - e) <= Fraction(rel) * abs(e)


def ref_lines(s: str) -> list[str]:
    lines = [ln.strip() for ln in s.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def ref_stdio(exp: str, got: str, checker) -> tuple[bool, str | None]:
    def norm(s):
        return s.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")

    if checker is None:
        if norm(exp) == norm(got):
            return True, "exact"
        if ref_lines(exp) == ref_lines(got):
            return True, "lines"
        if exp.split() == got.split():
            return True, "tokens"
        e, g = exp.split(), got.split()
        ok = len(e) == len(g) and all(ref_token(a, b, numeric=True, all_numbers=False, case=True, rel=1e-6, abs_=1e-6)
                                      for a, b in zip(e, g))
        return ok, "numeric" if ok else None
    kw = dict(numeric=checker.kind == "float", all_numbers=True, case=checker.case_sensitive,
              rel=checker.rel_tol, abs_=checker.abs_tol)
    if checker.unordered:
        lines = ref_lines(exp), ref_lines(got)
        e, g = (ls[0].split() if len(ls) == 1 else [" ".join(ln.split()) for ln in ls] for ls in lines)
        if checker.kind == "float":
            ok = ref_pairing(e, g, lambda a, b: ref_token(a, b, **{**kw, "numeric": True}))
        else:
            fold = (lambda u: u) if checker.case_sensitive else str.lower
            ok = sorted(map(fold, e)) == sorted(map(fold, g))
    elif checker.kind == "exact":
        ok = norm(exp) == norm(got) or (not checker.case_sensitive and norm(exp).lower() == norm(got).lower())
    else:
        e, g = exp.split(), got.split()
        ok = len(e) == len(g) and all(ref_token(a, b, **kw) for a, b in zip(e, g))
    return ok, checker.kind if ok else None


# --- generators ---------------------------------------------------------------------------------------------
def _ints():
    return st.one_of(
        st.integers(-3, 3),
        st.integers(),
        st.integers(290, 420).map(lambda k: 10**k),  # past float range (10**309 up)
        st.sampled_from([2**1024, 2**1024 + 2**1000, 2**1025, -(2**1024), 2**53 + 1, 10**16]),
        st.sampled_from([4290, 4301, 5000]).map(lambda k: 10**k + 7),  # about the host's digit limit
    )


def _floats():
    return st.one_of(st.floats(), st.floats(-1e3, 1e3),
                     st.sampled_from([MAX_FLOAT, -MAX_FLOAT, 1e16, 0.1, 1.5, -0.0, 1e-7]))


SCALARS = st.one_of(_ints(), _floats(), st.booleans(), st.none(),
                    st.sampled_from(["", "a", "A", "1", "1.5", "__set__", "__repr__", "\ud800", "NaN"]))
HASHABLE = st.recursive(SCALARS.filter(lambda v: not (isinstance(v, float) and math.isnan(v))),
                        lambda inner: st.one_of(st.tuples(inner, inner), st.frozensets(inner, max_size=2)),
                        max_leaves=4)


def _containers(inner):
    return st.one_of(
        st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
        st.sets(HASHABLE, max_size=4), st.frozensets(HASHABLE, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(["a", "b", "1"]), st.integers(0, 2)), inner, max_size=3),
        st.lists(inner, max_size=3).map(MyList), st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(MyDict),
        st.lists(inner, max_size=3).map(lambda items: {"__set__": items}),  # a program's own "set"
    )


LEAVES = st.one_of(SCALARS, st.builds(Opaque), _ints().map(MyInt), st.sampled_from(["x", "Y"]).map(MyStr))
VALUES = st.one_of(_floats(), _floats(), SCALARS, st.recursive(LEAVES, _containers, max_leaves=8),
                   st.lists(_floats(), min_size=2, max_size=4), st.sets(_floats(), min_size=2, max_size=4))
OPS = {  # per mode, what may happen to a leaf (or a container's shape)
    "respell": ["keep", "spell", "spell", "shape"],
    "perturb": ["keep", "off", "off", "spell"],
    "wrong": ["keep", "off", "spell", "shape", "other"],
}


def stable(x) -> str:
    """An order for a set's items that does not depend on how the set was built (draws must not)."""
    if isinstance(x, frozenset):
        return "f(" + ",".join(sorted(map(stable, x))) + ")"
    if isinstance(x, tuple):
        return "t(" + ",".join(map(stable, x)) + ")"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"i{x.bit_length()}:{x % 1000000007}"  # repr of 10**5000 is over the digit limit
    return type(x).__name__ + repr(x)


def mutate(data, v, mode, depth=0):
    """A value like `v` for the program to return: `respell` keeps its value (int / float,
    tuple, set); `perturb` moves numbers a little (inside or outside tolerance); `wrong` also
    puts anything anywhere."""
    op = data.draw(st.sampled_from(OPS[mode]))
    if op == "other":
        return data.draw(st.one_of(VALUES, st.sampled_from([10**400, -(10**400), 1.5, None, Opaque()])))
    if op == "keep" and not isinstance(v, (list, tuple, set, frozenset, dict)):
        return v
    if isinstance(v, bool) or v is None or isinstance(v, Opaque):
        return v
    if isinstance(v, int):
        choices = [v]
        with contextlib.suppress(OverflowError):
            if float(v) == v or op == "off":
                choices.append(float(v))
        if op == "off":
            choices += [v + 1, -v, 10**400]
        return data.draw(st.sampled_from(choices))
    if isinstance(v, float):
        choices = [v, int(v)] if v.is_integer() else [v]
        if op == "off":
            d = data.draw(st.sampled_from([1e-9, 5e-7, 2e-6, 1e-3, -5e-7]))
            choices = [v * (1 + d), v + d, -v] if math.isfinite(v) else [-v, MAX_FLOAT]
        return data.draw(st.sampled_from(choices))
    if isinstance(v, str):
        return data.draw(st.sampled_from([v.swapcase(), v + "x"])) if op == "off" else v
    if isinstance(v, dict):
        return {k: mutate(data, x, mode, depth + 1) for k, x in v.items()}
    items = [mutate(data, x, mode, depth + 1) for x in (sorted(v, key=stable) if isinstance(v, (set, frozenset)) else v)]
    if op != "shape":
        with contextlib.suppress(TypeError):  # a set whose items became unhashable: a tuple
            return type(v)(items)
        return tuple(items)
    shape = data.draw(st.sampled_from(["list", "tuple", "set", "reversed", "shorter"]))
    if shape in ("reversed", "shorter") and mode == "respell":
        shape = "tuple"
    if shape == "set":
        with contextlib.suppress(TypeError):
            return set(items)
    return {"list": items, "tuple": tuple(items), "set": items, "reversed": items[::-1], "shorter": items[:-1]}[shape]


FUNCTIONAL_CHECKERS = st.sampled_from([
    None, None, None, None,
    Checker(kind="float", rel_tol=1e-3, abs_tol=0.0),
    Checker(kind="tokens", unordered=True),
    Checker(kind="exact", case_sensitive=False),
    Checker(kind="float", unordered=True),
    Checker(kind="tokens", unordered=True, case_sensitive=False),
])


@PROPS
@given(data=st.data(), value=VALUES, checker=FUNCTIONAL_CHECKERS)
def test_functional_comparison_is_total_and_follows_the_rules(data, value, checker):
    expected_json, _ = encode(value)  # reference outputs come out of the same harness
    returned = mutate(data, value, data.draw(st.sampled_from(list(OPS))))
    actual_json, converted = encode(returned)
    cmp = compare_functional(expected_json, actual_json, checker, converted=converted)
    want = ref_functional(decode(expected_json), decode(actual_json), checker, converted)
    event(f"{checker.kind if checker else 'cascade'}: {want[1] or 'WA'}")
    assert (cmp.ok, cmp.strategy) == want, (expected_json[:300], actual_json[:300])
    assert cmp.ok or cmp.message


# stdio tokens: integers (also long digit runs), floats in many spellings (also past float range),
# words; joined by any whitespace
def _number_token(mantissa_digits: int, exponents):
    digits = st.text("0123456789", min_size=1, max_size=mantissa_digits)
    return st.builds(lambda sign, a, b, e: f"{sign}{a}{'.' + b if b is not None else ''}{'e' + str(e) if e is not None else ''}",
                     st.sampled_from(["", "-", "+"]), digits, st.none() | st.text("0123456789", max_size=6),
                     st.none() | exponents)


TOKENS = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.integers(1, 400).map(lambda n: "9" * n),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6).map(lambda f: f"{f:.6f}"),
    _number_token(30, st.integers(-400, 400)),
    _number_token(400, st.integers(-1000, 1000)),
    _number_token(20, st.integers(290, 330)),  # about the end of float range
    st.sampled_from(["1.7976931348623157e308", "1.7976931348623159e308", "179769313486231580" + "0" * 291]),
    _number_token(3, st.sampled_from([10**20, -(10**20), 99999999999999999999999])),
    st.sampled_from(["1e400", "1.7976931348623157e308", "2e308", ".5", "5.", "-0", "-0.0", "0e0"]),
    st.sampled_from(["YES", "yes", "No", "x", "inf", "nan", "1e", "-", ".", "1.2.3", "0x1F"]),
)
SPACE = st.sampled_from([" ", " ", "\n", "\t", "\r\n", "  \n ", "\n\n"])


TOKEN_OPS = {"respell": ["same", "value"], "perturb": ["off"], "wrong": ["same", "value", "off", "case", "other"]}


def respell(data, tok: str, mode: str) -> str:
    """A token like `tok`: `respell` keeps its value, `perturb` moves a number a little, `wrong`
    also changes case or puts another token."""
    how = data.draw(st.sampled_from(TOKEN_OPS[mode]))
    if how == "case":
        return tok.swapcase()
    if how == "other":
        return data.draw(TOKENS)
    if how == "same" or not REF_NUMBER.fullmatch(tok) or ref_value(tok) is None:
        return tok
    value = Decimal(tok)
    if how == "off":
        d = data.draw(st.sampled_from(["1e-9", "5e-7", "2e-6", "1e-3", "-5e-7"]))
        value += value * Decimal(d) if value else Decimal(d)
    choices = [str(value), f"{value:e}", f"{value:E}"]
    if value == value.to_integral_value() and value.adjusted() < 500:
        choices += [f"{value:f}".split(".")[0], f"{value:.1f}"]
    return data.draw(st.sampled_from(choices))


def join(data, tokens: list[str]) -> str:
    out = data.draw(st.sampled_from(["", "\n", " "]))
    for i, tok in enumerate(tokens):
        out += (data.draw(SPACE) if i else "") + tok
    return out + data.draw(st.sampled_from(["", "\n", "\r\n", " \n\n"]))


STDIO_CHECKERS = st.sampled_from([
    None, None, None, None,
    Checker(kind="float", rel_tol=1e-3, abs_tol=0.0),
    Checker(kind="float"),
    Checker(kind="tokens", case_sensitive=False),
    Checker(kind="exact", case_sensitive=False),
    Checker(kind="float", unordered=True),
    Checker(kind="tokens", unordered=True),
])


@PROPS
@given(data=st.data(), tokens=st.lists(TOKENS, min_size=0, max_size=7), checker=STDIO_CHECKERS)
def test_stdio_comparison_is_total_and_follows_the_rules(data, tokens, checker):
    expected = join(data, tokens)
    mode = data.draw(st.sampled_from(list(TOKEN_OPS)))
    shape = data.draw(st.sampled_from(["keep", "keep", "keep", "drop", "add"] if mode == "wrong" else ["keep"]))
    numbers = [i for i, t in enumerate(tokens) if REF_NUMBER.fullmatch(t)] or [0]
    off = data.draw(st.sampled_from(numbers))  # perturb: one number only
    got = [respell(data, t, mode if mode != "perturb" or i == off else "respell") for i, t in enumerate(tokens)]
    if shape == "drop" and got:
        got.pop(data.draw(st.integers(0, len(got) - 1)))
    elif shape == "add":
        got.insert(data.draw(st.integers(0, len(got))), data.draw(TOKENS))
    if checker is not None and checker.unordered and data.draw(st.booleans()):
        got = data.draw(st.permutations(got))
    actual = join(data, got)
    cmp = compare_stdio(expected, actual, checker)
    want = ref_stdio(expected, actual, checker)
    event(f"{checker.kind if checker else 'cascade'}: {want[1] or 'WA'}")
    assert (cmp.ok, cmp.strategy) == want, (expected[:300], actual[:300])
    assert cmp.ok or cmp.message


@PROPS
@given(edges=st.integers(1, 8).flatmap(lambda n: st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                                                          min_size=n, max_size=n)))
def test_the_pairing_finds_a_matching_whenever_one_exists(edges):
    """The matching behind `unordered` and sets, on any relation (tolerance makes it non-transitive)."""
    n = len(edges)
    got = _matching(list(range(n)), list(range(n)), lambda i, j: edges[i][j])
    assert got == ref_pairing(list(range(n)), list(range(n)), lambda i, j: edges[i][j])


# --- end to end, through the real sandbox ------------------------------------------------------------------
ev = evaluator_fixture("ev", 1, **SLOW_OK)
HALF = Problem(id="half", source="test", statement="", style="functional", entry_point="half", time_limit_s=2.0,
               tests=[TestCase("3", "1.5"), TestCase("5", "2.5")])


@needs_bwrap
def test_a_huge_int_returned_for_a_float_answer_is_wa_not_se(ev):
    right, huge, bigger = ev.evaluate_batch([HALF], [
        sub(HALF, "def half(x):\n    return x / 2\n", sid="right"),
        sub(HALF, "def half(x):\n    return 10**400\n", sid="huge"),
        sub(HALF, "import sys\nsys.set_int_max_str_digits(0)\ndef half(x):\n    return [10**5000]\n", sid="bigger"),
    ])
    assert right.status == "AC", right
    assert huge.status == "WA" and huge.tests[0].status == "WA", huge
    assert huge.tests[0].diff.startswith("expected '1.5', got '1000"), huge.tests[0].diff
    assert bigger.status == "WA" and "<int of 5001 digits>" in bigger.tests[0].diff, bigger
    assert judge(ev, HALF, sub(HALF, "def half(x):\n    return x / 2 * (1 + 1e-9)\n")).status == "AC"


def test_a_value_whose_own_methods_raise_is_wa_not_re(ev):
    """The encoder runs the program's methods (__getattr__ through hasattr, tolist, __repr__): one
    that raises makes the value unserialisable, a wrong answer, and the session goes on."""
    code = """
    class Sly:
        def __getattr__(self, name):
            raise RuntimeError("no")
        def __repr__(self):
            raise RuntimeError("no")
    def half(x):
        return Sly()
    """
    v = judge(ev, HALF, sub(HALF, code))
    assert v.status == "WA" and v.tests[0].status == "WA" and "cannot be serialised" in v.tests[0].diff, v
