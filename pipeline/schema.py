"""The Problem record: one Arrow schema for the shards and a typed Python view of it.

Every stage reads and writes problems in this shape. Later stages add their own columns
(dedup cluster, validation report, pass rate, difficulty); `PROBLEM_SCHEMA` is the core that
every shard carries, and `Problem.from_dict` ignores columns it does not know (kept in `extra`).

Functional tests use LiveCodeBench's encoding: `input` holds newline-separated JSON values, one
per positional argument; `output` is the JSON of the return value.

Limits a source does not state: the adapter still fills `time_limit_s` / `memory_limit_mb` with a
default and records `meta["time_limit_stated"] = False` (or `meta["memory_limit_stated"] = False`);
validate then derives the time limit from the references' measured times. An absent key means the
limit was stated (or chosen by the author of our own jsonl).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import functools
import json
import json.scanner
import math
from dataclasses import dataclass, field
from typing import Any

STYLES = ("stdio", "functional")
TEST_KINDS = ("public", "private", "generated")
# "interactor": a program that talks with the submission over two pipes and gives the verdict
# (Kattis interactive output validators, testlib interactors); "program": a checker of one output.
CHECKER_KINDS = ("exact", "tokens", "float", "program", "interactor")
PROGRAM_KINDS = ("program", "interactor")
LANGUAGES = ("python", "cpp")
# A checker or interactor may also be a program directory as the Kattis format gives it (several
# source files, or `build` + `run` scripts): language "bundle", program = its files as JSON
# (pipeline/program_bundle.py; the evaluator builds it: pipeline/evaluator/verdict/bundle.py).
CHECKER_LANGUAGES = (*LANGUAGES, "bundle")
CHECKER_PROTOCOLS = ("kattis", "testlib")
# Known-wrong solutions shipped by a source (Kattis `submissions/wrong_answer`, ...,
# CodeContests `incorrect_solutions`): validate runs them to measure how strong the tests are.
WRONG_LABELS = ("wrong_answer", "time_limit_exceeded", "run_time_error", "memory_limit_exceeded", "incorrect")

# The Arrow types (TEST_CASE_TYPE, CHECKER_TYPE, REFERENCE_TYPE, WRONG_SOLUTION_TYPE, PROBLEM_SCHEMA,
# ALIAS_TYPE, EXTRA_COLUMN_TYPES) are built on first use (module __getattr__): importing pyarrow,
# and numpy under it, costs ~0.15 s of CPU that a process which only judges code (`microcoder
# evaluate` on jsonl) does not need. CORE_COLUMNS and CHECKER_FIELDS name their columns.
CORE_COLUMNS = ("id", "source", "source_id", "url", "title", "statement", "platform", "style", "starter_code",
                "entry_point", "tests", "checker", "time_limit_s", "memory_limit_mb", "reference_solutions",
                "wrong_solutions", "difficulty", "rating", "tags", "contest_date", "license", "meta")
CHECKER_FIELDS = ("kind", "rel_tol", "abs_tol", "case_sensitive", "unordered", "program", "language", "protocol")


def _arrow_types() -> dict[str, Any]:
    import pyarrow as pa

    TEST_CASE_TYPE = pa.struct(
        [("input", pa.string()), ("output", pa.string()), ("kind", pa.string()), ("group", pa.string())]
    )
    CHECKER_TYPE = pa.struct(
        [
            ("kind", pa.string()),
            ("rel_tol", pa.float64()),
            ("abs_tol", pa.float64()),
            ("case_sensitive", pa.bool_()),
            ("unordered", pa.bool_()),
            ("program", pa.string()),
            ("language", pa.string()),
            ("protocol", pa.string()),
        ]
    )
    REFERENCE_TYPE = pa.struct([("language", pa.string()), ("code", pa.string())])
    WRONG_SOLUTION_TYPE = pa.struct([("language", pa.string()), ("code", pa.string()), ("label", pa.string())])

    PROBLEM_SCHEMA = pa.schema(
        [
            ("id", pa.string()),
            ("source", pa.string()),
            ("source_id", pa.string()),
            ("url", pa.string()),
            ("title", pa.string()),
            ("statement", pa.string()),
            ("platform", pa.string()),
            ("style", pa.string()),
            ("starter_code", pa.string()),
            ("entry_point", pa.string()),
            ("tests", pa.list_(TEST_CASE_TYPE)),
            ("checker", CHECKER_TYPE),
            ("time_limit_s", pa.float64()),
            ("memory_limit_mb", pa.int64()),
            ("reference_solutions", pa.list_(REFERENCE_TYPE)),
            ("wrong_solutions", pa.list_(WRONG_SOLUTION_TYPE)),
            ("difficulty", pa.string()),
            ("rating", pa.int64()),
            ("tags", pa.list_(pa.string())),
            ("contest_date", pa.string()),
            ("license", pa.string()),
            ("meta", pa.string()),
        ]
    )
    assert tuple(PROBLEM_SCHEMA.names) == CORE_COLUMNS and tuple(CHECKER_TYPE.names) == CHECKER_FIELDS

    # Columns that later stages add, with fixed types so that shards agree even when a batch's values
    # cannot tell the type (e.g. every `aliases` list empty). Unknown extra columns are inferred.
    ALIAS_TYPE = pa.list_(pa.struct([("id", pa.string()), ("source", pa.string()), ("similarity", pa.float64())]))
    EXTRA_COLUMN_TYPES: dict[str, pa.DataType] = {
        "cluster_id": pa.string(),
        "aliases": ALIAS_TYPE,
    }
    return {"TEST_CASE_TYPE": TEST_CASE_TYPE, "CHECKER_TYPE": CHECKER_TYPE, "REFERENCE_TYPE": REFERENCE_TYPE,
            "WRONG_SOLUTION_TYPE": WRONG_SOLUTION_TYPE, "PROBLEM_SCHEMA": PROBLEM_SCHEMA, "ALIAS_TYPE": ALIAS_TYPE,
            "EXTRA_COLUMN_TYPES": EXTRA_COLUMN_TYPES}


_ARROW: dict[str, Any] | None = None
_ARROW_NAMES = frozenset(("TEST_CASE_TYPE", "CHECKER_TYPE", "REFERENCE_TYPE", "WRONG_SOLUTION_TYPE", "PROBLEM_SCHEMA",
                          "ALIAS_TYPE", "EXTRA_COLUMN_TYPES"))


def __getattr__(name: str) -> Any:
    global _ARROW
    if name in _ARROW_NAMES:
        if _ARROW is None:
            _ARROW = _arrow_types()
        return _ARROW[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class TestCase:
    input: str
    output: str
    kind: str = "public"
    # The test group it belongs to where the source groups its tests (Kattis `data/secret/<group>`,
    # a Code Jam test set): "sample", "secret/subtask1", ...; the groups' points and ranges are in
    # meta["test_groups"]. A problem is solved only when every test of every group passes.
    group: str | None = None

    __test__ = False  # not a pytest test class


@dataclass
class Checker:
    """How an output is judged. `kind=None` in a Problem means: use the tolerant cascade."""

    kind: str = "tokens"
    rel_tol: float = 1e-6
    abs_tol: float = 1e-6
    case_sensitive: bool = True
    unordered: bool = False  # order-insensitive at the outermost level only (items / lines); see evaluator/verdict/compare.py
    program: str | None = None  # source of a checker program (kind == "program")
    language: str | None = None  # python | cpp | bundle, for the checker program
    protocol: str | None = None  # kattis | testlib, for the checker program or interactor


@dataclass
class ReferenceSolution:
    language: str
    code: str


@dataclass
class WrongSolution:
    """A solution the source says must fail (label says how: wrong_answer, time_limit_exceeded, ...)."""

    language: str
    code: str
    label: str = "wrong_answer"


@dataclass
class Problem:
    id: str
    source: str
    statement: str
    style: str
    tests: list[TestCase] = field(default_factory=list)
    source_id: str = ""
    url: str | None = None
    title: str = ""
    platform: str | None = None
    starter_code: str | None = None
    entry_point: str | None = None
    checker: Checker | None = None
    time_limit_s: float = 2.0
    memory_limit_mb: int = 256
    reference_solutions: list[ReferenceSolution] = field(default_factory=list)
    wrong_solutions: list[WrongSolution] = field(default_factory=list)
    difficulty: str | None = None
    rating: int | None = None
    tags: list[str] = field(default_factory=list)
    contest_date: str | None = None
    license: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # Columns added by later stages (cluster, validation, pass rate...): carried through untouched.
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Problem:
        """Build from a plain dict (a jsonl line or a parquet row). Raises on wrong shapes;
        call `validate_problem` first to get every violation at once."""
        d = dict(d)
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        extra = {k: d.pop(k) for k in list(d) if k not in known}
        extra.update(d.pop("extra", None) or {})
        tests = [TestCase(**_only(t, TestCase)) for t in d.pop("tests", None) or []]
        refs = [ReferenceSolution(**_only(r, ReferenceSolution)) for r in d.pop("reference_solutions", None) or []]
        wrong = [WrongSolution(**_only(w, WrongSolution)) for w in d.pop("wrong_solutions", None) or []]
        checker = d.pop("checker", None)
        checker = Checker(**{k: v for k, v in _only(checker, Checker).items() if v is not None}) if checker else None
        meta = d.pop("meta", None)
        if isinstance(meta, str):
            meta = json.loads(meta) if meta else {}
        d = {k: v for k, v in d.items() if v is not None}
        return cls(tests=tests, reference_solutions=refs, wrong_solutions=wrong, checker=checker, meta=meta or {}, extra=extra, **d)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict in our jsonl format (meta as an object, extra columns flattened)."""
        d = dataclasses.asdict(self)
        for t in d["tests"]:
            if t["group"] is None:  # most sources do not group their tests: their records stay as they were
                del t["group"]
        extra = d.pop("extra")
        d.update(extra)
        return d

    def to_row(self) -> dict[str, Any]:
        """A row for the Arrow schema: meta serialised to JSON, every core column present."""
        d = self.to_dict()
        d["meta"] = json.dumps(self.meta, sort_keys=True, ensure_ascii=False)
        if d["checker"] is not None:
            d["checker"] = {name: d["checker"].get(name) for name in CHECKER_FIELDS}
        return d


@functools.cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def _only(d: Any, cls: type) -> dict[str, Any]:
    names = _field_names(cls)  # cached: once per test of every problem loaded
    return {k: v for k, v in dict(d).items() if k in names}


def validate_problem(d: Any) -> list[str]:
    """Every violation of a raw record (dict), as 'field: message' strings; [] means valid."""
    if isinstance(d, Problem):
        d = d.to_dict()
    if not isinstance(d, dict):
        return [f"record: expected an object, got {type(d).__name__}"]
    errs: list[str] = []

    def need_str(name: str, *, allow_empty: bool = False) -> None:
        v = d.get(name)
        if v is None:
            errs.append(f"{name}: missing")
        elif not isinstance(v, str):
            errs.append(f"{name}: expected a string, got {type(v).__name__}")
        elif not allow_empty and not v.strip():
            errs.append(f"{name}: empty")

    def opt(name: str, types: tuple[type, ...], what: str) -> None:
        v = d.get(name)
        if v is not None and (not isinstance(v, types) or isinstance(v, bool) and bool not in types):
            errs.append(f"{name}: expected {what}, got {type(v).__name__}")

    need_str("id")
    need_str("source")
    need_str("statement")
    style = d.get("style")
    if style not in STYLES:
        errs.append(f"style: must be one of {list(STYLES)}, got {style!r}")
    for name in ("source_id", "url", "title", "platform", "starter_code", "entry_point", "difficulty",
                 "contest_date", "license"):
        opt(name, (str,), "a string")
    opt("time_limit_s", (int, float), "a number")
    opt("memory_limit_mb", (int,), "an integer")
    opt("rating", (int,), "an integer")
    tl = d.get("time_limit_s")
    if isinstance(tl, (int, float)) and not isinstance(tl, bool) and not (0 < tl <= 600 and math.isfinite(tl)):
        errs.append(f"time_limit_s: must be in (0, 600], got {tl}")
    ml = d.get("memory_limit_mb")
    if isinstance(ml, int) and not isinstance(ml, bool) and not 16 <= ml <= 65536:
        errs.append(f"memory_limit_mb: must be in [16, 65536], got {ml}")
    if style == "functional" and not (isinstance(d.get("entry_point"), str) and d["entry_point"].strip()):
        errs.append("entry_point: required for functional problems")

    tests = d.get("tests")
    if tests is None:
        errs.append("tests: missing")
    elif not isinstance(tests, list):
        errs.append(f"tests: expected a list, got {type(tests).__name__}")
    else:
        if not tests:
            errs.append("tests: empty (at least one test case is needed)")
        for i, t in enumerate(tests):
            if not isinstance(t, dict):
                errs.append(f"tests[{i}]: expected an object, got {type(t).__name__}")
                continue
            for key in ("input", "output"):
                if not isinstance(t.get(key), str):
                    errs.append(f"tests[{i}].{key}: expected a string, got {type(t.get(key)).__name__}")
            if t.get("group") is not None and not isinstance(t.get("group"), str):
                errs.append(f"tests[{i}].group: expected a string, got {type(t.get('group')).__name__}")
            if t.get("kind", "public") not in TEST_KINDS:
                errs.append(f"tests[{i}].kind: must be one of {list(TEST_KINDS)}, got {t.get('kind')!r}")
            if style == "functional" and isinstance(t.get("input"), str) and isinstance(t.get("output"), str):
                errs.extend(_functional_test_errors(i, t))

    checker = d.get("checker")
    if checker is not None:
        if not isinstance(checker, dict):
            errs.append(f"checker: expected an object, got {type(checker).__name__}")
        else:
            kind = checker.get("kind")
            if kind not in CHECKER_KINDS:
                errs.append(f"checker.kind: must be one of {list(CHECKER_KINDS)}, got {kind!r}")
            for tol in ("rel_tol", "abs_tol"):
                v = checker.get(tol)
                if v is not None and (not isinstance(v, (int, float)) or v < 0):
                    errs.append(f"checker.{tol}: must be a non-negative number, got {v!r}")
            if kind in PROGRAM_KINDS:
                if not isinstance(checker.get("program"), str) or not checker["program"].strip():
                    errs.append(f"checker.program: required when checker.kind is {kind!r}")
                if checker.get("language") not in CHECKER_LANGUAGES:
                    errs.append(f"checker.language: must be one of {list(CHECKER_LANGUAGES)}, "
                                f"got {checker.get('language')!r}")
                if checker.get("protocol", "kattis") not in CHECKER_PROTOCOLS:
                    errs.append(f"checker.protocol: must be one of {list(CHECKER_PROTOCOLS)}, got {checker.get('protocol')!r}")

    errs.extend(_solution_errors("reference_solutions", d.get("reference_solutions")))
    errs.extend(_solution_errors("wrong_solutions", d.get("wrong_solutions"), WRONG_LABELS))
    tags = d.get("tags")
    if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
        errs.append("tags: expected a list of strings")
    meta = d.get("meta")
    if meta is not None and not isinstance(meta, (dict, str)):
        errs.append(f"meta: expected an object, got {type(meta).__name__}")
    return errs


def _solution_errors(name: str, items: Any, labels: tuple[str, ...] | None = None) -> list[str]:
    """Violations of a list of {language, code} solutions (and a `label` in `labels` when given)."""
    if items is None:
        return []
    if not isinstance(items, list):
        return [f"{name}: expected a list, got {type(items).__name__}"]
    errs = []
    for i, r in enumerate(items):
        if not isinstance(r, dict):
            errs.append(f"{name}[{i}]: expected an object, got {type(r).__name__}")
            continue
        if r.get("language") not in LANGUAGES:
            errs.append(f"{name}[{i}].language: must be one of {list(LANGUAGES)}, got {r.get('language')!r}")
        if not isinstance(r.get("code"), str) or not r["code"].strip():
            errs.append(f"{name}[{i}].code: empty or not a string")
        if labels is not None and r.get("label", labels[0]) not in labels:
            errs.append(f"{name}[{i}].label: must be one of {list(labels)}, got {r.get('label')!r}")
    return errs


_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # what json.loads runs, minus its wrappers
_JSON_SPACE = " \t\n\r"


def is_json(text: str) -> bool:
    """Whether `json.loads(text)` would succeed (checked for every test of every functional
    problem a stage loads: the scanner without the wrappers is ~3x faster)."""
    text = text.strip(_JSON_SPACE)
    try:
        return _scan_json(text, 0)[1] == len(text)
    except (StopIteration, ValueError, RecursionError):
        return False


def _functional_test_errors(i: int, t: dict[str, str]) -> list[str]:
    from microcoder.pipeline import checked_tests

    digest = checked_tests.digest(t)
    if checked_tests.is_checked(digest):  # checked before: by this process, or the stage that wrote it
        return []
    errs = []
    for n, line in enumerate(t["input"].split("\n")):
        if line.strip() and not is_json(line):
            errs.append(f"tests[{i}].input: line {n + 1} is not JSON (functional tests hold one JSON value per argument)")
    if not is_json(t["output"]):
        errs.append(f"tests[{i}].output: not JSON (functional tests hold the JSON of the return value)")
    if not errs:
        checked_tests.mark_checked(digest)
    return errs


def decode_functional_input(text: str) -> list[Any]:
    """Positional arguments from a functional test input (one JSON value per non-empty line)."""
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def encode_functional_input(args: list[Any]) -> str:
    return "\n".join(json.dumps(a) for a in args)


# --- Verdicts ---------------------------------------------------------------------------------
STATUSES = ("AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "SE")


@dataclass
class TestResult:
    status: str
    time_s: float = 0.0
    memory_mb: float = 0.0
    strategy: str | None = None  # which comparison accepted (cascade), or the checker kind
    diff: str | None = None  # short diff or message on WA / RE / SE
    output: str | None = None  # actual output (truncated), kept when asked for (validation)

    __test__ = False


@dataclass
class Verdict:
    problem_id: str
    submission_id: str
    status: str
    passed: int = 0
    total: int = 0
    time_s: float = 0.0
    tests: list[TestResult] = field(default_factory=list)
    reason: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """`dataclasses.asdict`, written out: its generic walk over every test result cost
        ~0.1 s per 12,000 tests, serially after judging (`microcoder evaluate`)."""
        d = {name: getattr(self, name) for name in _VERDICT_FIELDS}
        d["tests"] = [{name: getattr(t, name) for name in _TEST_RESULT_FIELDS} for t in self.tests]
        d["meta"] = copy.deepcopy(self.meta)
        return d


_VERDICT_FIELDS = tuple(f.name for f in dataclasses.fields(Verdict))
_TEST_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(TestResult))


def iso_date(value: object) -> str | None:
    """An ISO date (YYYY-MM-DD) from a date, datetime, ISO string or unix seconds / milliseconds; None if absent.
    Raises ValueError on a value that is present but not a date."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a date: {value!r}")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (int, float)):  # unix seconds, or milliseconds (pandas' jsonl dates): 1e11 s is year 5138
        seconds = value / 1000 if abs(value) >= 1e11 else value
        return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).date().isoformat()
    if isinstance(value, str):
        text = value.strip()
        try:
            return iso_date(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            pass
        try:
            return dt.date.fromisoformat(text[:10]).isoformat()
        except ValueError:
            raise ValueError(f"not a date: {value!r}") from None
    raise ValueError(f"not a date: {value!r}")
