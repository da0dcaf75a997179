"""LeetCodeDataset jsonl(.gz) rows (newfacade/LeetCodeDataset `data/` layout) as functional problems.

`input_output` items look like `{"input": "nums = [2,7,11,15], target = 9", "output": "[0,1]"}`:
keyword arguments in Python/JSON literal syntax. They are parsed with `ast` and reordered into
positional JSON by the method signature of the reference `completion`. Problems whose arguments
or result are LeetCode data structures (TreeNode, ListNode, Node) cannot be expressed as plain
JSON arguments and are rejected.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from pipeline.schema import Problem, ReferenceSolution, TestCase
from pipeline.sources.base import (
    FieldError,
    Item,
    Reject,
    SourceContext,
    expand_paths,
    guarded,
    iter_json_lines,
    need,
)
from pipeline.sources.normalize import clean_text, stable_id
from pipeline.sources.pyliterals import (
    NotLiteral,
    encode_args,
    find_signature,
    parse_call_text,
    parse_literal,
    to_json,
)

LICENSE = "MIT"
LICENSE_NOTE = "LeetCodeDataset code is MIT; problem statements are LeetCode's text (LeetCode terms apply)."
_STRUCTURE_TYPES = re.compile(r"\b(TreeNode|ListNode|Node|NestedInteger|Employee|ImmutableListNode)\b")
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
    except (FieldError, ValueError) as e:
        return Reject("bad_record", str(e), rec, rid)
    m = _ENTRY.match(entry.strip())
    if not m:
        return Reject("no_signature", f"entry_point {entry!r} is not `Solution().method`", rec, rid)
    method = m.group(1)
    starter = meta.get("lang_code") if isinstance(meta.get("lang_code"), str) else None
    sig = find_signature(prompt + "\n" + completion, method, "Solution")
    if sig is None and starter:
        sig = find_signature(starter + "\n        pass\n", method, "Solution")
    if sig is None:
        return Reject("no_signature", f"no `Solution.{method}` in completion or lang_code", rec, rid)
    structures = sorted({t for a in sig.annotations for t in _STRUCTURE_TYPES.findall(a)})
    if structures:
        return Reject("unsupported_types", f"signature uses {structures}: not expressible as JSON arguments",
                      rec, rid)
    tests, skipped = [], Counter()
    for item in items:
        try:
            if not isinstance(item, dict) or not isinstance(item.get("input"), str) or not isinstance(item.get("output"), str):
                raise NotLiteral("item is not {input: str, output: str}")
            args = parse_call_text(item["input"], sig.params)
            if len(args) != len(sig.params):
                raise NotLiteral(f"{len(args)} arguments for {len(sig.params)} parameters")
            tests.append(TestCase(encode_args(args), to_json(parse_literal(item["output"])), "public"))
        except NotLiteral as e:
            skipped[str(e).split(":")[0][:60]] += 1
    if not tests:
        return Reject("no_convertible_tests", f"none of {len(items)} input_output items converts ({dict(skipped)})",
                      rec, rid)
    difficulty = meta.get("difficulty")
    return Problem(
        id=rid,
        source=source,
        source_id=task_id,
        url=f"https://leetcode.com/problems/{task_id}/",
        title=task_id.replace("-", " ").title(),
        statement=_statement(rec, meta),
        platform="leetcode",
        style="functional",
        starter_code=starter,
        entry_point=method,
        tests=tests,
        reference_solutions=[ReferenceSolution("python", f"{prompt}\n{completion}".strip() + "\n")],
        difficulty=difficulty.lower() if isinstance(difficulty, str) else None,
        license=LICENSE,
        meta={"question_id": meta.get("question_id"), "license_note": LICENSE_NOTE,
              "skipped_tests": sum(skipped.values()), "skipped_test_kinds": dict(skipped)},
    )


def _statement(rec: dict, meta: dict) -> str:
    """`meta.question_title` holds the full statement (examples, constraints) in these files; `query`
    is the shorter statement plus an instruction, used when the former is absent."""
    full = meta.get("question_title")
    if isinstance(full, str) and "\n" in full.strip():
        return clean_text(full)
    query = rec.get("query") if isinstance(rec.get("query"), str) else ""
    return clean_text(_INSTRUCTION.sub("", query)) or clean_text(str(full or ""))
