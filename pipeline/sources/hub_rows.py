"""Field mappings from Hub dataset rows to Problems (one function per dataset layout).

Each mapper takes (row, source name, hub Options) and returns a Problem or raises RowError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pipeline.schema import Problem, ReferenceSolution, TestCase
from pipeline.sources import livecodebench
from pipeline.sources.base import Reject
from pipeline.sources.normalize import (
    clean_text,
    content_id,
    entry_point_for,
    fix_math_delimiters,
    iso_date,
    slug,
    stable_id,
)
from pipeline.sources.pyliterals import NotLiteral, encode_args, parse_literal, to_json


class RowError(ValueError):
    def __init__(self, code: str, detail: str, id: str | None = None):
        super().__init__(detail)
        self.code = code
        self.id = id


def _str(row: dict, key: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None or value == "":
        if required:
            raise RowError("bad_record", f"{key}: missing")
        return ""
    if not isinstance(value, str):
        raise RowError("bad_record", f"{key}: expected a string, got {type(value).__name__}")
    return value


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) and value == value and value > 0:
        return int(value)
    return None


def _json_field(row: dict, key: str, pid: str | None) -> Any:
    value = row.get(key)
    if isinstance(value, (list, dict)):
        return value
    if not isinstance(value, str) or not value.strip():
        raise RowError("no_tests", f"{key}: missing or empty", pid)
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as e:
        raise RowError("bad_tests", f"{key}: not JSON ({e})", pid) from e


def _solutions(codes: Any, language: str, limit: int) -> list[ReferenceSolution]:
    if isinstance(codes, str):
        try:
            codes = json.loads(codes) if codes.strip() else []
        except ValueError:
            return []
    if not isinstance(codes, list):
        return []
    return [ReferenceSolution(language, c) for c in codes if isinstance(c, str) and c.strip()][:limit]


# --- APPS-style tests: {"inputs": [...], "outputs": [...], "fn_name"?} -------------------------
def _join(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise NotLiteral(f"stdio test value is a {type(value).__name__}")


def apps_tests(io: Any, kind: str, pid: str | None) -> tuple[str | None, list[TestCase], bool]:
    """(fn_name or None, tests, output wrapper removed) from an APPS/TACO `input_output` object.

    Call-based outputs are usually wrapped in a one-element list (APPS' harness accepts either
    `out` or `out[0]`); when every output of a problem has that shape the wrapper is removed."""
    if not isinstance(io, dict):
        raise RowError("bad_tests", f"input_output is a {type(io).__name__}, not an object", pid)
    inputs, outputs, fn = io.get("inputs"), io.get("outputs"), io.get("fn_name")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise RowError("bad_tests", "input_output needs equal-length lists `inputs` and `outputs`", pid)
    if not inputs:
        raise RowError("no_tests", "input_output has no test cases", pid)
    tests, wrapped = [], False
    try:
        if fn:
            if not isinstance(fn, str):
                raise RowError("bad_tests", f"fn_name is a {type(fn).__name__}", pid)
            wrapped = all(isinstance(o, list) and len(o) == 1 for o in outputs)  # APPS' `[answer]` convention
            for args, out in zip(inputs, outputs, strict=True):
                args = args if isinstance(args, list) else [args]
                tests.append(TestCase(encode_args(args), to_json(out[0] if wrapped else out), kind))
        else:
            tests = [TestCase(_join(i), _join(o), kind) for i, o in zip(inputs, outputs, strict=True)]
    except NotLiteral as e:
        raise RowError("bad_tests", f"test values: {e}", pid) from e
    return fn or None, tests, bool(fn) and wrapped


def _limits(text: Any, unit: str) -> float | None:
    m = re.search(rf"([\d.]+)\s*{unit}", str(text or ""))
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


# --- deepmind/code_contests -------------------------------------------------------------------
CC_SOURCES = ["unknown", "codechef", "codeforces", "hackerearth", "codejam", "atcoder", "aizu"]
CC_DIFFICULTIES = ["unknown", "easy", "medium", "hard", "harder", "hardest", "external"]
CC_LANGUAGES = {1: None, 2: "cpp", 3: "python", "PYTHON3": "python", "CPP": "cpp"}  # 1 = Python 2


def _label(value: Any, names: list[str]) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if 0 <= value < len(names) else None
    return str(value).lower() if value else None


def _cc_tests(block: Any, kind: str, pid: str) -> list[TestCase]:
    if block is None:
        return []
    if not isinstance(block, dict) or not isinstance(block.get("input"), list) or not isinstance(block.get("output"), list):
        raise RowError("bad_tests", f"{kind}_tests must be {{input: [...], output: [...]}}", pid)
    if len(block["input"]) != len(block["output"]):
        raise RowError("bad_tests", f"{kind}_tests: {len(block['input'])} inputs, {len(block['output'])} outputs", pid)
    if not all(isinstance(x, str) for x in block["input"] + block["output"]):
        raise RowError("bad_tests", f"{kind}_tests: non-string values", pid)
    return [TestCase(i, o, kind) for i, o in zip(block["input"], block["output"], strict=True)]


def codecontests(row: dict, source: str, opts) -> Problem:
    name = _str(row, "name")
    platform = _label(row.get("source"), CC_SOURCES)
    cid, index = row.get("cf_contest_id"), row.get("cf_index")
    native = f"{cid}{index}" if platform == "codeforces" and _int(cid) and index else slug(name)[:80]
    pid = stable_id(source, native)
    statement = _str(row, "description")
    if row.get("input_file") or row.get("output_file"):
        raise RowError("file_io", "reads/writes named files instead of stdin/stdout", pid)
    tests = _cc_tests(row.get("public_tests"), "public", pid) + _cc_tests(row.get("private_tests"), "private", pid)
    if opts.include_generated:
        tests += _cc_tests(row.get("generated_tests"), "generated", pid)
    if not tests:
        raise RowError("no_tests", "no public, private or generated tests", pid)
    refs, per_lang = [], {"python": 0, "cpp": 0}
    sols = row.get("solutions") or {}
    for lang, code in zip(sols.get("language") or [], sols.get("solution") or [], strict=False):
        language = CC_LANGUAGES.get(lang)
        if language and isinstance(code, str) and code.strip() and per_lang[language] < opts.max_solutions:
            refs.append(ReferenceSolution(language, code))
            per_lang[language] += 1
    tl = row.get("time_limit") or {}
    seconds = (tl.get("seconds") or 0) + (tl.get("nanos") or 0) / 1e9 if isinstance(tl, dict) else 0
    memory = _int(row.get("memory_limit_bytes"))
    return Problem(
        id=pid, source=source, source_id=name, title=name, statement=statement, platform=platform,
        style="stdio", tests=tests, reference_solutions=refs,
        url=f"https://codeforces.com/problemset/problem/{cid}/{index}" if platform == "codeforces" and _int(cid) else None,
        time_limit_s=seconds if 0 < seconds <= 600 else 2.0,
        memory_limit_mb=memory // 2**20 if memory and memory >= 2**24 else 256,
        difficulty=_label(row.get("difficulty"), CC_DIFFICULTIES), rating=_int(row.get("cf_rating")),
        tags=[t for t in row.get("cf_tags") or [] if isinstance(t, str) and t],
        license="CC-BY-4.0",
        meta={"is_description_translated": row.get("is_description_translated"), "cf_points": row.get("cf_points")},
    )


# --- BAAI/TACO and codeparrot/apps ------------------------------------------------------------
def _apps_like(row: dict, source: str, opts, pid: str, native: str, license: str) -> Problem:
    question = _str(row, "question")
    fn, tests, unwrapped = apps_tests(_json_field(row, "input_output", pid), "private", pid)
    starter = _str(row, "starter_code", required=False)
    difficulty = row.get("difficulty")
    return Problem(
        id=pid, source=source, source_id=native, title=str(row.get("name") or native), statement=question,
        platform=_platform_from_url(row.get("url")) or (str(row["source"]).lower() if row.get("source") else None),
        style="functional" if fn else "stdio", starter_code=starter or None,
        entry_point=entry_point_for(fn, starter), tests=tests,
        url=row.get("url") if isinstance(row.get("url"), str) and row.get("url") else None,
        reference_solutions=_solutions(row.get("solutions"), "python", opts.max_solutions),
        difficulty=str(difficulty).lower() if difficulty else None, license=license,
        meta={"output_wrapper_removed": unwrapped},
    )


def _platform_from_url(url: Any) -> str | None:
    m = re.search(r"https?://(?:www\.)?([a-z]+)\.(?:com|jp|org|net)", str(url or ""))
    return m.group(1) if m else None


def taco(row: dict, source: str, opts) -> Problem:
    question = _str(row, "question")
    native = content_id(question)
    pid = stable_id(source, native)
    problem = _apps_like(row, source, opts, pid, native, "Apache-2.0")
    seconds, megabytes = _limits(row.get("time_limit"), "second"), _limits(row.get("memory_limit"), "megabyte")
    if seconds and 0 < seconds <= 600:
        problem.time_limit_s = seconds
    if megabytes and 16 <= megabytes <= 65536:
        problem.memory_limit_mb = int(megabytes)
    try:
        tags = parse_literal(row["raw_tags"]) if isinstance(row.get("raw_tags"), str) else row.get("raw_tags")
    except NotLiteral:
        tags = None
    problem.tags = [t for t in tags or [] if isinstance(t, str)] if isinstance(tags, list) else []
    try:
        problem.contest_date = iso_date(row.get("date"))
    except ValueError:
        problem.contest_date = None
    problem.meta.update({k: row.get(k) for k in ("skill_types", "Expected Time Complexity", "Expected Auxiliary Space",
                                                  "picture_num") if row.get(k) is not None})
    return problem


def apps(row: dict, source: str, opts) -> Problem:
    if _int(row.get("problem_id")) is None and row.get("problem_id") != 0:
        raise RowError("bad_record", "problem_id: missing or not an integer")
    native = f"{opts.split}-{int(row['problem_id']):04d}"  # ids restart at 0 in every split
    return _apps_like(row, source, opts, stable_id(source, native), native, "MIT")


# --- open-r1/codeforces -----------------------------------------------------------------------
def openr1_codeforces(row: dict, source: str, opts) -> Problem:
    native = _str(row, "id")
    pid = stable_id(source, native)
    if row.get("interaction_format"):
        raise RowError("interactive", "interactive problem (needs an interactor)", pid)
    if row.get("input_mode") not in (None, "", "stdio"):
        raise RowError("file_io", f"input_mode {row.get('input_mode')!r}", pid)
    parts = [_str(row, "description")]
    for title, key in (("Input", "input_format"), ("Output", "output_format"), ("Note", "note")):
        if row.get(key):
            parts.append(f"## {title}\n\n{row[key]}")
    examples = row.get("examples") or []
    public = [TestCase(e["input"], e["output"], "public") for e in examples
              if isinstance(e, dict) and isinstance(e.get("input"), str) and isinstance(e.get("output"), str)]
    if public:
        parts.insert(-1 if row.get("note") else len(parts), "## Examples\n\n" + "\n\n".join(
            f"Input\n\n```\n{t.input.strip()}\n```\n\nOutput\n\n```\n{t.output.strip()}\n```" for t in public))
    private = [TestCase(t["input"], t["output"], "private") for t in row.get("official_tests") or []
               if isinstance(t, dict) and isinstance(t.get("input"), str) and isinstance(t.get("output"), str)]
    if not public and not private:
        raise RowError("no_tests", "no examples or official tests", pid)
    tl, ml = row.get("time_limit"), _int(row.get("memory_limit"))
    start = row.get("contest_start")
    return Problem(
        id=pid, source=source, source_id=native, title=str(row.get("title") or native),
        statement=fix_math_delimiters("\n\n".join(parts)), platform="codeforces", style="stdio",
        tests=public + private, url=f"https://codeforces.com/contest/{row.get('contest_id')}/problem/{row.get('index')}",
        time_limit_s=float(tl) if isinstance(tl, (int, float)) and 0 < tl <= 600 else 2.0,
        memory_limit_mb=ml if ml and 16 <= ml <= 65536 else 256, rating=_int(row.get("rating")),
        tags=[t for t in row.get("tags") or [] if isinstance(t, str)],
        contest_date=iso_date(start) if _int(start) else None, license="CC-BY-4.0",
        meta={"contest_name": row.get("contest_name"), "official_tests_complete": row.get("official_tests_complete"),
              "generated_checker": row.get("generated_checker") or None,
              "needs_checker": bool(row.get("generated_checker"))},
    )


# --- agentica-org/DeepCoder-Preview-Dataset ---------------------------------------------------
def deepcoder(row: dict, source: str, opts) -> Problem:
    statement = _str(row, "problem")
    native = content_id(statement)
    pid = stable_id(source, native)
    tests_obj = _json_field(row, "tests", pid)
    metadata = row.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata) if metadata.strip() else {}
        except ValueError:
            metadata = {"raw": metadata}
    metadata = metadata if isinstance(metadata, dict) else {}
    starter = _str(row, "starter_code", required=False)
    fn = None
    if isinstance(tests_obj, dict):  # taco subset
        fn, tests, _ = apps_tests(tests_obj, "private", pid)
    elif isinstance(tests_obj, list) and tests_obj and all(isinstance(t, dict) for t in tests_obj):
        first = tests_obj[0]
        if "testtype" in first:  # lcbv5 subset: LiveCodeBench test objects
            fn = (first.get("metadata") or {}).get("func_name") or metadata.get("func_name")
            style = "functional" if first["testtype"] == "functional" else "stdio"
            try:
                tests = livecodebench._tests(tests_obj, "private", style)
            except livecodebench.BadTests as e:
                raise RowError("bad_tests", str(e), pid) from e
        elif first.get("type") == "function_call" or first.get("fn_name"):  # primeintellect, call-based
            fn, tests, _ = apps_tests({"inputs": [t.get("input") for t in tests_obj],
                                       "outputs": [t.get("output") for t in tests_obj],
                                       "fn_name": first.get("fn_name")}, "private", pid)
        else:  # primeintellect stdin_stdout and codeforces subsets
            fn, tests, _ = apps_tests({"inputs": [t.get("input") for t in tests_obj],
                                       "outputs": [t.get("output") for t in tests_obj]}, "private", pid)
    else:
        raise RowError("bad_tests", f"tests is a {type(tests_obj).__name__} with no test objects", pid)
    if fn is not None and not isinstance(fn, str):
        raise RowError("no_signature", f"function name is a {type(fn).__name__}", pid)
    style = "functional" if fn else "stdio"
    return Problem(id=pid, source=source, source_id=native, title=native, statement=clean_text(statement),
                   style=style, starter_code=starter or None, entry_point=entry_point_for(fn, starter), tests=tests,
                   license="MIT",
                   meta={"deepcoder_metadata": metadata, "config": opts.config})


def lcb(row: dict, source: str, opts) -> Problem:
    item = livecodebench.convert(row, source)
    if isinstance(item, Reject):
        raise RowError(item.code, item.detail, item.id)
    return item


ADAPTERS: dict[str, Callable[[dict, str, Any], Problem]] = {
    "codecontests": codecontests,
    "taco": taco,
    "apps": apps,
    "open-r1-codeforces": openr1_codeforces,
    "deepcoder": deepcoder,
    "livecodebench": lcb,
}
