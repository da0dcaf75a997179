"""Field mappings from Hub dataset rows to Problems (one function per dataset layout).

Each mapper takes (row, source name, hub Options) and returns a Problem or raises RowError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
from microcoder.pipeline.sources import livecodebench
from microcoder.pipeline.sources.base import Reject
from microcoder.pipeline.sources.normalize import (
    clean_text,
    content_id,
    entry_point_for,
    fix_math_delimiters,
    iso_date,
    slug,
    stable_id,
)
from microcoder.pipeline.sources.openr1_checker import generated_checker
from microcoder.pipeline.sources.pyliterals import NotLiteral, encode_args, parse_literal, to_json


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


def bytes_to_mb(value: Any) -> int | None:
    """Megabytes for a byte count as judges state it: 256000000 is Codeforces' "256 megabytes"
    (decimal), 268435456 is 256 MiB; anything else rounds to whole MiB."""
    n = _int(value)
    if not n or n < 2**20:
        return None
    if n % 1_000_000 == 0:
        return n // 1_000_000
    return round(n / 2**20)


_TAIL_CHARS = 400  # the limits tail DeepCoder appends; earlier mentions belong to the statement
_TIME_MS = re.compile(r"Time Limit:\s*([\d.]+)\s*ms\b", re.IGNORECASE)
_TIME_S = re.compile(r"Time Limit:\s*([\d.]+)\s*(?:s|sec|secs|seconds?)\b", re.IGNORECASE)
_TIME_PROTO = re.compile(r"Time Limit:\s*\{\s*['\"]seconds['\"]\s*:\s*(\d+)\s*,\s*['\"]nanos['\"]\s*:\s*(\d+)\s*\}",
                         re.IGNORECASE)
_MEMORY_MB = re.compile(r"Memory Limit:\s*([\d.]+)\s*(?:MB|megabytes?|MiB)\b", re.IGNORECASE)
_MEMORY_BYTES = re.compile(r"Memory Limit:\s*(\d+)\s*Bytes\b", re.IGNORECASE)


def stated_limits(statement: str) -> tuple[float | None, int | None]:
    """(seconds, megabytes) from a statement's `Time Limit: ... / Memory Limit: ...` tail, as
    DeepCoder writes it for its codeforces (`1000 ms`, `256 MB`) and code_contests
    (`{'seconds': 2, 'nanos': 0}`, `256000000 Bytes`) rows; None for what the tail does not state."""
    tail = statement[-_TAIL_CHARS:]
    seconds = None
    if m := _last(_TIME_PROTO, tail):
        seconds = int(m.group(1)) + int(m.group(2)) / 1e9
    elif m := _last(_TIME_MS, tail):
        seconds = float(m.group(1)) / 1000
    elif m := _last(_TIME_S, tail):
        seconds = float(m.group(1))
    megabytes = None
    if m := _last(_MEMORY_BYTES, tail):
        megabytes = bytes_to_mb(int(m.group(1)))
    elif m := _last(_MEMORY_MB, tail):
        megabytes = int(float(m.group(1)))
    return _seconds(seconds), _megabytes(megabytes)


def _last(pattern: re.Pattern, text: str) -> re.Match | None:
    found = None
    for found in pattern.finditer(text):  # noqa: B007 - the last one is wanted
        pass
    return found


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 600 else None


def _megabytes(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 16 <= value <= 65536 else None


def apply_limits(problem: Problem, seconds: float | None, megabytes: int | None) -> Problem:
    """Set the stated limits; keep the defaults and mark what the source does not state (see
    `schema`: validate derives an unstated time limit from the references)."""
    if seconds is not None:
        problem.time_limit_s = seconds
    else:
        problem.meta["time_limit_stated"] = False
    if megabytes is not None:
        problem.memory_limit_mb = megabytes
    else:
        problem.meta["memory_limit_stated"] = False
    return problem


# --- deepmind/code_contests -------------------------------------------------------------------
CC_SOURCES = ["unknown", "codechef", "codeforces", "hackerearth", "codejam", "atcoder", "aizu"]
# The dataset's ClassLabel order: 7 named levels, then Codeforces' problem letters A (7) ... V (28).
CC_DIFFICULTIES = ["unknown", "easy", "medium", "hard", "harder", "hardest", "external",
                   *[chr(c) for c in range(ord("A"), ord("V") + 1)]]
CC_LANGUAGES = {1: None, 2: "cpp", 3: "python", "PYTHON3": "python", "CPP": "cpp"}  # 1 = Python 2


def _label(value: Any, names: list[str]) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if 0 <= value < len(names) else None
    if not value:
        return None
    text = str(value).strip()
    by_name = {n.lower(): n for n in names} | {"unknown_difficulty": "unknown", "unknown_source": "unknown"}
    return by_name.get(text.lower(), text.lower())


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
    refs = [ReferenceSolution(lang, code) for lang, code in _cc_solutions(row.get("solutions"), opts.max_solutions)]
    wrong = [WrongSolution(lang, code, "incorrect")
             for lang, code in _cc_solutions(row.get("incorrect_solutions"), opts.max_wrong_solutions)]
    tl = row.get("time_limit") or {}
    seconds = (tl.get("seconds") or 0) + (tl.get("nanos") or 0) / 1e9 if isinstance(tl, dict) else 0
    problem = Problem(
        id=pid, source=source, source_id=name, title=name, statement=statement, platform=platform,
        style="stdio", tests=tests, reference_solutions=refs, wrong_solutions=wrong,
        url=f"https://codeforces.com/problemset/problem/{cid}/{index}" if platform == "codeforces" and _int(cid) else None,
        difficulty=_label(row.get("difficulty"), CC_DIFFICULTIES), rating=_int(row.get("cf_rating")),
        tags=[t for t in row.get("cf_tags") or [] if isinstance(t, str) and t],
        license="CC-BY-4.0",
        meta={"is_description_translated": row.get("is_description_translated"), "cf_points": row.get("cf_points")},
    )
    return apply_limits(problem, _seconds(seconds), _megabytes(bytes_to_mb(row.get("memory_limit_bytes"))))


def _cc_solutions(block: Any, per_language: int) -> list[tuple[str, str]]:
    """(language, code) pairs of a CodeContests solutions block, at most `per_language` each
    (Python 2 and Java are left out)."""
    out, count = [], {"python": 0, "cpp": 0}
    block = block if isinstance(block, dict) else {}
    for lang, code in zip(block.get("language") or [], block.get("solution") or [], strict=False):
        language = CC_LANGUAGES.get(lang)
        if language and isinstance(code, str) and code.strip() and count[language] < per_language:
            out.append((language, code))
            count[language] += 1
    return out


# --- BAAI/TACO and codeparrot/apps ------------------------------------------------------------
_CALLABLE = re.compile(r"^\s*(?:def|class)\s+\w+", re.MULTILINE)
_ASSIGNMENT_LINE = re.compile(r"^\s*[A-Za-z_]\w*\s*(?:\[\s*\])*\s*=\s*\S")


def check_driver(fn: str | None, starter: str, tests: list[TestCase], platform: str | None, pid: str | None) -> None:
    """A row without a function name is judged as a stdin/stdout program. GeeksforGeeks rows (a
    large share of TACO) have none, yet ship a `class Solution` starter and inputs such as
    `n = 5\\narr[] = {5,10,30}` that only GfG's hidden driver reads: neither a program nor a
    function call can pass them, so such rows are rejected (`no_driver`)."""
    if fn:
        return
    why = []
    if platform == "geeksforgeeks":
        why.append("a GeeksforGeeks problem")
    if starter and _CALLABLE.search(starter):
        why.append("the starter code declares a function/class")
    if tests and all(_assignment_input(t.input) for t in tests):
        why.append("every input is written as `name = value` assignments")
    if why:
        raise RowError("no_driver", f"{'; '.join(why)}, but the tests name no function: they need the platform's "
                       "hidden driver, which the dataset does not ship", pid)


def _assignment_input(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_ASSIGNMENT_LINE.match(line) for line in lines)


def _apps_like(row: dict, source: str, opts, pid: str, native: str, license: str) -> Problem:
    question = _str(row, "question")
    fn, tests, unwrapped = apps_tests(_json_field(row, "input_output", pid), "private", pid)
    starter = _str(row, "starter_code", required=False)
    difficulty = row.get("difficulty")
    platform = _platform_from_url(row.get("url")) or (str(row["source"]).lower() if row.get("source") else None)
    check_driver(fn, starter, tests, platform, pid)
    return Problem(
        id=pid, source=source, source_id=native, title=str(row.get("name") or native), statement=question,
        platform=platform,
        style="functional" if fn else "stdio", starter_code=starter or None,
        entry_point=entry_point_for(fn, starter), tests=tests,
        url=row.get("url") if isinstance(row.get("url"), str) and row.get("url") else None,
        reference_solutions=_solutions(row.get("solutions"), "python", opts.max_solutions),
        difficulty=str(difficulty).lower() if difficulty else None, license=license,
        meta={"output_wrapper_removed": unwrapped},
    )


def _platform_from_url(url: Any) -> str | None:
    """The site's name from its host: `practice.geeksforgeeks.org` -> geeksforgeeks."""
    m = re.match(r"\s*https?://([A-Za-z0-9.-]+)", str(url or ""))
    labels = [x for x in m.group(1).lower().split(".") if x] if m else []
    return labels[-2] if len(labels) >= 2 else None


def taco(row: dict, source: str, opts) -> Problem:
    question = _str(row, "question")
    native = content_id(question)
    pid = stable_id(source, native)
    problem = _apps_like(row, source, opts, pid, native, "Apache-2.0")
    apply_limits(problem, _seconds(_limits(row.get("time_limit"), "second")),
                 _megabytes(_limits(row.get("memory_limit"), "megabyte")))
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
    split = row.get("split") or opts.split  # the original folders say it; Hub rows come from one split
    native = f"{split}-{int(row['problem_id']):04d}"  # ids restart at 0 in every split
    return apply_limits(_apps_like(row, source, opts, stable_id(source, native), native, "MIT"), None, None)


# --- open-r1/codeforces -----------------------------------------------------------------------
def openr1_codeforces(row: dict, source: str, opts) -> Problem:
    native = _str(row, "id")
    pid = stable_id(source, native)
    if row.get("interaction_format"):
        # The card's columns (default and verifiable configs) hold no interactor, only
        # `generated_checker`, which judges one output file: without an interactor such a problem
        # cannot be judged, and its examples are transcripts, not stdin/stdout pairs.
        raise RowError("interactive", "interactive problem: the row has no interactor program", pid)
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
    start = row.get("contest_start")
    checker_source = row.get("generated_checker")
    checker_source = checker_source if isinstance(checker_source, str) and checker_source.strip() else None
    problem = Problem(
        id=pid, source=source, source_id=native, title=str(row.get("title") or native),
        statement=fix_math_delimiters("\n\n".join(parts)), platform="codeforces", style="stdio",
        tests=public + private, checker=generated_checker(checker_source) if checker_source else None,
        url=f"https://codeforces.com/contest/{row.get('contest_id')}/problem/{row.get('index')}",
        rating=_int(row.get("rating")),
        tags=[t for t in row.get("tags") or [] if isinstance(t, str)],
        contest_date=iso_date(start) if _int(start) else None, license="CC-BY-4.0",
        meta={"contest_name": row.get("contest_name"), "official_tests_complete": row.get("official_tests_complete"),
              "needs_checker": bool(checker_source),
              **({"checker_from": "generated_checker"} if checker_source else {})},
    )
    return apply_limits(problem, _seconds(row.get("time_limit")), _megabytes(row.get("memory_limit")))


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
    check_driver(fn, starter, tests, None, pid)
    style = "functional" if fn else "stdio"
    problem = Problem(id=pid, source=source, source_id=native, title=native, statement=clean_text(statement),
                      style=style, starter_code=starter or None, entry_point=entry_point_for(fn, starter), tests=tests,
                      license="MIT",
                      meta={"deepcoder_metadata": metadata, "config": opts.config})
    return apply_limits(problem, *stated_limits(statement))


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
