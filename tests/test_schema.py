from __future__ import annotations

import dataclasses
import json

import pytest

from microcoder.pipeline.schema import (
    PROBLEM_SCHEMA,
    Checker,
    Problem,
    TestCase,
    TestResult,
    Verdict,
    decode_functional_input,
    encode_functional_input,
    validate_problem,
)


def good_record(**over):
    rec = {
        "id": "seed/add",
        "source": "seed",
        "statement": "Add two numbers.",
        "style": "functional",
        "entry_point": "add",
        "tests": [{"input": "1\n2", "output": "3", "kind": "public"}],
        "reference_solutions": [{"language": "python", "code": "def add(a, b):\n    return a + b\n"}],
    }
    rec.update(over)
    return rec


def test_valid_record_has_no_violations():
    assert validate_problem(good_record()) == []


def test_every_violation_is_reported_with_its_field():
    rec = good_record(style="interactive-ish", time_limit_s=-1, memory_limit_mb="big", rating=True)
    del rec["tests"]
    rec["reference_solutions"] = [{"language": "java", "code": ""}]
    errs = validate_problem(rec)
    fields = [e.split(":")[0] for e in errs]
    assert "style" in fields
    assert "tests" in fields
    assert "time_limit_s" in fields
    assert "memory_limit_mb" in fields
    assert "rating" in fields
    assert "reference_solutions[0].language" in fields
    assert "reference_solutions[0].code" in fields
    assert any("tests: missing" == e for e in errs)


def test_functional_tests_must_be_json_per_line():
    rec = good_record(tests=[{"input": "[1, 2\n3", "output": "not json", "kind": "public"}])
    errs = validate_problem(rec)
    assert any(e.startswith("tests[0].input: line 1") for e in errs)
    assert any(e.startswith("tests[0].output") for e in errs)


def test_stdio_tests_are_free_text_but_need_strings():
    rec = good_record(style="stdio", entry_point=None, tests=[{"input": 5, "output": "x", "kind": "hidden"}])
    errs = validate_problem(rec)
    assert "tests[0].input: expected a string, got int" in errs
    assert any(e.startswith("tests[0].kind") for e in errs)


def test_program_checker_needs_source_and_language():
    errs = validate_problem(good_record(checker={"kind": "program"}))
    assert any(e.startswith("checker.program") for e in errs)
    assert any(e.startswith("checker.language") for e in errs)
    errs = validate_problem(good_record(checker={"kind": "fuzzy"}))
    assert errs == ["checker.kind: must be one of ['exact', 'tokens', 'float', 'program', 'interactor'], got 'fuzzy'"]


def test_non_object_record():
    assert validate_problem([1, 2]) == ["record: expected an object, got list"]


def test_problem_round_trips_through_dict_and_keeps_extra_columns():
    rec = good_record(checker={"kind": "float", "rel_tol": 1e-4, "abs_tol": 1e-4}, meta={"a": 1}, cluster_id="c1")
    p = Problem.from_dict(rec)
    assert p.checker == Checker(kind="float", rel_tol=1e-4, abs_tol=1e-4)
    assert p.tests == [TestCase("1\n2", "3", "public")]
    assert p.extra == {"cluster_id": "c1"}
    again = Problem.from_dict(p.to_dict())
    assert again == p
    row = p.to_row()
    assert json.loads(row["meta"]) == {"a": 1}
    assert set(PROBLEM_SCHEMA.names) <= set(row)


def test_functional_encoding_round_trip():
    args = [[1, 2, 3], "a\nb", {"k": [None, True]}, 2.5]
    assert decode_functional_input(encode_functional_input(args)) == args


@pytest.mark.parametrize("field,value", [("time_limit_s", 0), ("time_limit_s", 1e9), ("memory_limit_mb", 1)])
def test_limits_out_of_range(field, value):
    errs = validate_problem(good_record(**{field: value}))
    assert len(errs) == 1 and errs[0].startswith(field)


def test_verdict_to_dict_is_asdict_and_copies_nested_values():
    v = Verdict("p", "s", "WA", passed=1, total=2, time_s=0.5, reason="test 2: WA",
                tests=[TestResult("AC", 0.1, 3.0, "exact"), TestResult("WA", 0.2, diff="x", output="y")],
                meta={"judge_s": 1.0, "nested": {"a": [1, 2]}})
    d = v.to_dict()
    assert d == dataclasses.asdict(v)
    assert list(d) == list(dataclasses.asdict(v)) and list(d["tests"][0]) == list(dataclasses.asdict(v.tests[0]))
    d["meta"]["nested"]["a"].append(3)
    assert v.meta["nested"]["a"] == [1, 2]


@pytest.mark.parametrize("text", ["1", " 1 ", "\t[1,2]\r", "\x0c1", "1 2", "", " ", "[1,", '"a"', '"a', "NaN",
                                  "-Infinity", "1e999", "[" * 5000 + "]" * 5000, "\u00a01", "1\u00a0", '{"a": 1}',
                                  "nul", "truex", "01", "-", "1.", ".5", "[1,]", "9" * 5000, "\ufeff1"])
def test_functional_json_check_agrees_with_json_loads(text):
    """validate_problem's fast JSON check of every functional test says what json.loads does
    (a value too deep to parse is not JSON, not a crash of the loader)."""
    from microcoder.pipeline.schema import is_json

    try:
        json.loads(text)
        expected = True
    except (ValueError, RecursionError):
        expected = False
    assert is_json(text) is expected
