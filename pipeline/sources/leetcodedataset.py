"""LeetCodeDataset jsonl(.gz) rows (newfacade/LeetCodeDataset `data/` layout) as functional problems.

`input_output` items look like `{"input": "nums = [2,7,11,15], target = 9", "output": "[0,1]"}`:
keyword arguments in Python/JSON literal syntax. They are parsed with `ast` and reordered into
positional JSON by the method signature of the reference `completion`. Linked lists and binary
trees appear there as LeetCode writes them (`head = [1,2,3]`, `root = [1,null,2]`; the `test`
field's `list_node(...)` / `tree_node(...)` wrappers are accepted too) and stay JSON lists, which
the evaluator turns into ListNode / TreeNode by the annotations (see `leetcode_types`). Other
node types and node references cannot be expressed as JSON arguments and are rejected.

A statement that lets the result be returned in any order ("You may return the answer in any
order") gets an unordered checker when the method returns a list.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from microcoder.pipeline.schema import Checker, Problem, ReferenceSolution, TestCase, iso_date
from microcoder.pipeline.sources.base import (
    FieldError,
    Item,
    Reject,
    SourceContext,
    expand_paths,
    guarded,
    iter_json_lines,
    need,
    unstated_limits,
)
from microcoder.pipeline.sources.judging import returns_any_order
from microcoder.pipeline.sources.leetcode_outputs import (
    AmbiguousOutput,
    ResultType,
    assert_outputs,
    expected_output,
    old_string_convention,
)
from microcoder.pipeline.sources.leetcode_types import (
    SignatureShapes,
    Unrepresentable,
    canonical_result,
    check_argument,
    signature_shapes,
)
from microcoder.pipeline.sources.normalize import clean_text, stable_id
from microcoder.pipeline.sources.pyliterals import (
    NotLiteral,
    encode_args,
    find_signature,
    parse_call_text,
    parse_literal,
    to_json,
)

LICENSE = "MIT"
LICENSE_NOTE = "LeetCodeDataset code is MIT; problem statements are LeetCode's text (LeetCode terms apply)."
_ENTRY = re.compile(r"^Solution\(\)\.(\w+)$")
_INSTRUCTION = re.compile(r"\n*Please complete the following python code precisely:.*\Z", re.DOTALL)


@dataclass
class Options:
    path: str = field(default="", metadata={"help": "LeetCodeDataset jsonl(.gz) file or folder."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    for path in expand_paths(opts.path, ("*.jsonl", "*.jsonl.gz")):
        for _, rec, reject in iter_json_lines(path):
            yield reject if reject is not None else guarded(convert, rec, ctx.name)


def convert(rec: dict, source: str) -> Item:
    rid = None
    try:
        task_id = need(rec, "task_id")
        rid = stable_id(source, task_id)
        prompt = need(rec, "prompt", allow_empty=True)
        completion = need(rec, "completion")
        entry = need(rec, "entry_point")
        items = need(rec, "input_output", list)
        meta = rec.get("meta") or {}
        if not isinstance(meta, dict):
            raise FieldError(f"meta: expected an object, got {type(meta).__name__}")
        date = _estimated_date(rec, meta)
        tags = _tags(rec, meta)
    except (FieldError, ValueError) as e:
        return Reject("bad_record", str(e), rec, rid)
    m = _ENTRY.match(entry.strip())
    if not m:
        return Reject("no_signature", f"entry_point {entry!r} is not `Solution().method`", rec, rid)
    method = m.group(1)
    starter = next((v for v in (meta.get("lang_code"), rec.get("starter_code")) if isinstance(v, str) and v.strip()),
                   None)  # v0.1/v0.2 keep it in meta.lang_code, v0.3 at the top level
    sig = find_signature(prompt + "\n" + completion, method, "Solution")
    if sig is None and starter:
        sig = find_signature(starter + "\n        pass\n", method, "Solution")
    if sig is None:
        return Reject("no_signature", f"no `Solution.{method}` in completion or lang_code", rec, rid)
    try:
        shapes = signature_shapes(sig.params, sig.annotations)
    except Unrepresentable as e:
        return Reject("unsupported_types", f"Solution.{method}: {e}", rec, rid)
    result = ResultType.parse(_return_annotation(sig, starter, method))
    reading = Reading(result, old_string_convention([i.get("output") for i in items if isinstance(i, dict)], result),
                      assert_outputs(rec.get("test"), sig.params))
    tests, skipped = [], Counter()
    for n, item in enumerate(items, 1):
        try:
            tests.append(_test_case(item, sig.params, shapes, reading))
        except Unrepresentable as e:
            return Reject("unsupported_types", f"input_output[{n}]: {e}", rec, rid)
        except AmbiguousOutput as e:
            return Reject("ambiguous_output", f"input_output[{n}]: {e}", rec, rid)
        except NotLiteral as e:
            skipped[str(e).split(":")[0][:60]] += 1
    if not tests:
        return Reject("no_convertible_tests", f"none of {len(items)} input_output items converts ({dict(skipped)})",
                      rec, rid)
    statement = _statement(rec, meta)
    structures = shapes.structures(sig.params)
    difficulty = meta.get("difficulty") or rec.get("difficulty")
    return Problem(
        id=rid,
        source=source,
        source_id=task_id,
        url=f"https://leetcode.com/problems/{task_id}/",
        title=task_id.replace("-", " ").title(),
        statement=statement,
        platform="leetcode",
        style="functional",
        starter_code=starter,
        entry_point=f"Solution().{method}",  # not the bare name: `merge` would find heapq.merge first
        tests=tests,
        checker=_any_order_checker(statement, shapes, tests),
        reference_solutions=[ReferenceSolution("python", f"{prompt}\n{completion}".strip() + "\n")],
        difficulty=difficulty.lower() if isinstance(difficulty, str) else None,
        tags=tags,
        contest_date=date,
        license=LICENSE,
        meta={"question_id": meta.get("question_id", rec.get("question_id")), "license_note": LICENSE_NOTE,
              "skipped_tests": sum(skipped.values()), "skipped_test_kinds": dict(skipped),
              **({"date_source": "estimated_date"} if date else {}),
              "string_outputs": {True: "quoted", False: "bare", None: None}[reading.old_strings],
              "outputs_from_asserts": reading.from_asserts, **unstated_limits(),
              **({"structures": structures} if structures else {})},
    )


def _estimated_date(rec: dict, meta: dict) -> str | None:
    """v0.3's `estimated_date` (LeetCodeDataset's estimate of the problem's release; an ISO string,
    a datetime from parquet, or epoch milliseconds as pandas writes jsonl) as YYYY-MM-DD. v0.1/v0.2
    ship no date: None there. A present value that is not a date is an error (the row is rejected)."""
    value = rec.get("estimated_date", meta.get("estimated_date"))
    try:
        return iso_date(value)
    except (ValueError, OverflowError, OSError) as e:
        raise FieldError(f"estimated_date: {e}") from None


def _tags(rec: dict, meta: dict) -> list[str]:
    """v0.3's topic `tags` (`["Array", "Hash Table"]`), as given; absent in v0.1/v0.2."""
    value = rec.get("tags", meta.get("tags"))
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise FieldError(f"tags: expected a list of strings, got {value!r:.80}")
    return [t.strip() for t in value if t.strip()]


@dataclass
class Reading:
    """How one problem's outputs are read (see `leetcode_outputs`)."""

    result: ResultType
    old_strings: bool | None
    asserted: dict[str, str]
    from_asserts: int = 0


def _return_annotation(sig, starter: str | None, method: str) -> str:
    """The return annotation: the starter code's (what the model is asked to implement), else the
    reference's."""
    if starter:
        declared = find_signature(starter + "\n        pass\n", method, "Solution")
        if declared is not None and declared.annotations[-1].strip():
            return declared.annotations[-1]
    return sig.annotations[-1] if sig.annotations else ""


def _test_case(item: object, params: list[str], shapes: SignatureShapes, reading: Reading) -> TestCase:
    if not isinstance(item, dict) or not isinstance(item.get("input"), str) or not isinstance(item.get("output"), str):
        raise NotLiteral("item is not {input: str, output: str}")
    args = parse_call_text(item["input"], params)
    if len(args) != len(params):
        raise NotLiteral(f"{len(args)} arguments for {len(params)} parameters")
    args = [check_argument(a, shape, name) for a, shape, name in zip(args, shapes.params, params, strict=True)]
    encoded = encode_args(args)
    if shapes.result.structure is not None:  # ListNode / TreeNode: a list (or null) in either release
        expected = canonical_result(parse_literal(item["output"]), shapes.result)
    else:
        expected, how = expected_output(item["output"], reading.result, reading.old_strings,
                                        reading.asserted.get(encoded))
        reading.from_asserts += how == "asserts"
    return TestCase(encoded, to_json(expected), "public")


def _any_order_checker(statement: str, shapes: SignatureShapes, tests: list[TestCase]) -> Checker | None:
    """Unordered comparison where the statement allows any order and the result is a list. Float
    results keep a tolerance (an `exact` checker would compare them exactly).

    A result that is always a pair of lists (`[critical, pseudo_critical]`) is two different
    answers whose *contents* may come in any order ("return the indices of the edges in any
    order"): swapping the pair must stay wrong, so it is not marked."""
    if not shapes.returns_list or not returns_any_order(statement):
        return None
    outputs = [json.loads(t.output) for t in tests]
    if not all(isinstance(o, list) for o in outputs):
        return None
    if all(len(o) == 2 and all(isinstance(x, list) for x in o) for o in outputs):
        return None
    kind = "float" if any(_has_float(o) for o in outputs) else "exact"
    return Checker(kind=kind, unordered=True)


def _has_float(value: object) -> bool:
    if isinstance(value, float):
        return True
    return isinstance(value, list) and any(_has_float(v) for v in value)


def _statement(rec: dict, meta: dict) -> str:
    """`meta.question_title` holds the full statement (examples, constraints) in these files; `query`
    is the shorter statement plus an instruction, used when the former is absent."""
    full = meta.get("question_title") or rec.get("problem_description")  # v0.3: top-level problem_description
    if isinstance(full, str) and "\n" in full.strip():
        return clean_text(full)
    query = rec.get("query") if isinstance(rec.get("query"), str) else ""
    return clean_text(_INSTRUCTION.sub("", query)) or clean_text(str(full or ""))
