"""LeetCode through its GraphQL API: question list (or past contests), then each question's content,
example inputs (`exampleTestcases`) and `metaData` (the function signature).

Expected outputs are read from the examples in the statement. Linked lists and binary trees stay
in LeetCode's list notation (see `leetcode_types`; the evaluator builds the nodes). Paid-only
questions, design (class) problems and other node types (`Node`, `NestedInteger`...) are rejected.
Question lists carry no dates: with `since` set (or `mode: contests`) past contests are walked
instead, and each problem gets its contest's start date.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bs4 import BeautifulSoup

from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.base import (
    RECORD_ERRORS,
    Item,
    Reject,
    SourceContext,
    SourceError,
    unstated_limits,
)
from microcoder.pipeline.sources.http import HttpError
from microcoder.pipeline.sources.leetcode_types import (
    PLAIN,
    STRUCTURES,
    Shape,
    SignatureShapes,
    Unrepresentable,
    canonical_result,
    check_argument,
)
from microcoder.pipeline.sources.normalize import html_to_markdown, iso_date, stable_id
from microcoder.pipeline.sources.pyliterals import parse_literal, to_json

LIST_QUERY = """query problemsetQuestionList($categorySlug: String, $limit: Int, $skip: Int, $filters: QuestionListFilterInput) {
  problemsetQuestionList: questionList(categorySlug: $categorySlug, limit: $limit, skip: $skip, filters: $filters) {
    total: totalNum
    questions: data { questionFrontendId title titleSlug difficulty isPaidOnly topicTags { name slug } }
  }
}"""
QUESTION_QUERY = """query questionData($titleSlug: String!) {
  question(titleSlug: $titleSlug) {
    questionId questionFrontendId title titleSlug content isPaidOnly difficulty
    exampleTestcases sampleTestCase metaData
    codeSnippets { lang langSlug code }
    topicTags { name slug }
  }
}"""
CONTESTS_QUERY = """query pastContests($pageNo: Int, $numPerPage: Int) {
  pastContests(pageNo: $pageNo, numPerPage: $numPerPage) {
    pageNum currentPage totalNum numPerPage
    data { title titleSlug startTime }
  }
}"""
# metaData type names that a JSON value stands for; `list<T>` and `T[]` wrap them.
_PLAIN_TYPES = frozenset({"integer", "int", "long", "double", "float", "string", "boolean", "bool", "character",
                          "char", "void"})
_LIST_TYPE = re.compile(r"^\s*list\s*<\s*(.*?)\s*>\s*$|^\s*(.*?)\s*\[\s*\]\s*$", re.IGNORECASE)


@dataclass
class Options:
    graphql_url: str = field(default="https://leetcode.com/graphql/", metadata={"help": "GraphQL endpoint."})
    base_url: str = field(default="https://leetcode.com", metadata={"help": "Site base URL."})
    mode: str = field(default="auto", metadata={
        "help": "problemset | contests | auto (contests when `since` is set, else problemset)."})
    page_size: int = field(default=50, metadata={"help": "Questions or contests per listing request."})
    filters: dict[str, Any] = field(default_factory=dict, metadata={"help": "questionList filters (problemset mode)."})
    contests: list[str] = field(default_factory=list, metadata={"help": "Explicit contest slugs (contests mode)."})
    listing_ttl_s: float = field(default=86400.0, metadata={"help": "How long cached listings stay fresh."})


def _graphql(ctx: SourceContext, opts: Options, query: str, variables: dict[str, Any], ttl_s: float | None) -> dict:
    data = ctx.http.post_json(opts.graphql_url, {"query": query, "variables": variables}, ttl_s=ttl_s)
    if not isinstance(data, dict) or data.get("errors") or not isinstance(data.get("data"), dict):
        raise HttpError(opts.graphql_url, 200, f"GraphQL error: {str(data.get('errors') if isinstance(data, dict) else data)[:300]}")
    return data["data"]


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    mode = opts.mode if opts.mode != "auto" else ("contests" if ctx.since or opts.contests else "problemset")
    if mode == "problemset":
        if ctx.since:
            raise SourceError("LeetCode question lists have no dates: use mode 'contests' with since")
        for entry in _question_list(opts, ctx):
            yield fetch_question(entry, None, opts, ctx)
    elif mode == "contests":
        for slug, date in _contests(opts, ctx):
            for entry in _contest_questions(slug, opts, ctx):
                yield fetch_question(entry, date, opts, ctx, contest=slug)
    else:
        raise SourceError(f"unknown LeetCode mode {opts.mode!r} (problemset | contests | auto)")


def _question_list(opts: Options, ctx: SourceContext) -> Iterator[dict]:
    skip = 0
    while True:
        try:
            data = _graphql(ctx, opts, LIST_QUERY, {"categorySlug": "", "skip": skip, "limit": opts.page_size,
                                                    "filters": opts.filters}, opts.listing_ttl_s)
        except HttpError as e:
            raise SourceError(f"LeetCode question list: {e}") from e
        block = data.get("problemsetQuestionList") or {}
        questions = block.get("questions") or []
        for q in questions:
            if isinstance(q, dict) and q.get("isPaidOnly"):
                ctx.skip("paid-only")
            elif isinstance(q, dict):
                yield q
            else:
                ctx.skip("malformed listing entry")
        skip += len(questions)
        if not questions or skip >= int(block.get("total") or 0):
            return


def _contests(opts: Options, ctx: SourceContext) -> Iterator[tuple[str, str | None]]:
    if opts.contests:
        yield from ((slug, None) for slug in opts.contests)
        return
    page = 1
    while True:
        try:
            data = _graphql(ctx, opts, CONTESTS_QUERY, {"pageNo": page, "numPerPage": opts.page_size},
                            opts.listing_ttl_s)
        except HttpError as e:
            raise SourceError(f"LeetCode past contests: {e}") from e
        block = data.get("pastContests") or {}
        contests = block.get("data") or []
        for c in contests:
            date = iso_date(c.get("startTime")) if isinstance(c.get("startTime"), int) else None
            if ctx.since and (date is None or date < ctx.since.isoformat()):
                return  # newest first
            yield c.get("titleSlug"), date
        if not contests or page >= int(block.get("pageNum") or 0):
            return
        page += 1


def _contest_questions(slug: str, opts: Options, ctx: SourceContext) -> Iterator[dict]:
    try:
        info = ctx.http.get_json(f"{opts.base_url.rstrip('/')}/contest/api/info/{slug}/", ttl_s=opts.listing_ttl_s)
    except HttpError as e:
        raise SourceError(f"LeetCode contest {slug}: {e}") from e
    for q in (info or {}).get("questions") or []:
        if isinstance(q, dict) and q.get("title_slug"):
            yield {"titleSlug": q["title_slug"], "title": q.get("title")}


def fetch_question(entry: dict, date: str | None, opts: Options, ctx: SourceContext, contest: str | None = None) -> Item:
    slug = entry.get("titleSlug")
    record = {"listing": entry, "contest": contest, "contest_date": date}
    if not isinstance(slug, str) or not slug:
        return Reject("bad_record", "listing entry has no titleSlug", record)
    pid = stable_id(ctx.name, slug)
    try:
        q = _graphql(ctx, opts, QUESTION_QUERY, {"titleSlug": slug}, None).get("question")
    except HttpError as e:
        return Reject("http_error", str(e), record, pid)
    if not isinstance(q, dict):
        return Reject("bad_record", "no question in the response", record, pid)
    record["question"] = q
    if q.get("isPaidOnly") or not q.get("content"):
        return Reject("paid_only", "paid-only question (no content)", record, pid)
    try:
        problem = question_to_problem(q, ctx.name, opts.base_url)
    except QuestionError as e:
        return Reject(e.code, str(e), record, pid)
    except RECORD_ERRORS as e:
        return Reject("bad_record", f"{type(e).__name__}: {e}", record, pid)
    problem.contest_date = date
    if contest:
        problem.meta["contest"] = contest
    return problem


class QuestionError(ValueError):
    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code


def question_to_problem(q: dict, source: str, base_url: str) -> Problem:
    try:
        meta = json.loads(q.get("metaData") or "")
    except ValueError as e:
        raise QuestionError("no_signature", f"metaData is not JSON: {e}") from e
    if not isinstance(meta, dict) or meta.get("systemdesign") or "classname" in meta:
        raise QuestionError("design_problem", "class-design problem (a sequence of method calls)")
    params = meta.get("params")
    if not isinstance(meta.get("name"), str) or not isinstance(params, list):
        raise QuestionError("no_signature", "metaData lacks name/params")
    if not all(isinstance(p, dict) for p in params):
        raise QuestionError("no_signature", "metaData params are not objects")
    names = [str(p.get("name", f"arg{i}")) for i, p in enumerate(params)]
    try:
        shapes = [metadata_shape(str(p.get("type", ""))) for p in params]
        returns = str((meta.get("return") or {}).get("type", ""))
        result = metadata_shape(returns)
    except Unrepresentable as e:
        raise QuestionError("unsupported_types", f"{e}: not expressible as JSON arguments") from e
    if returns == "void" and shapes and shapes[0].structure:
        result = shapes[0]  # modified in place: LeetCode judges the argument
    tests = example_tests(q.get("exampleTestcases") or q.get("sampleTestCase") or "", names, q["content"],
                          shapes, result)
    snippet = next((s.get("code") for s in q.get("codeSnippets") or [] if isinstance(s, dict)
                    and s.get("langSlug") == "python3"), None)
    slug = q["titleSlug"]
    difficulty = q.get("difficulty")
    return Problem(
        id=stable_id(source, slug), source=source, source_id=str(q.get("questionFrontendId") or slug),
        url=f"{base_url.rstrip('/')}/problems/{slug}/", title=str(q.get("title") or slug),
        statement=html_to_markdown(q["content"]), platform="leetcode", style="functional",
        starter_code=snippet, entry_point=f"Solution().{meta['name']}", tests=tests,
        difficulty=difficulty.lower() if isinstance(difficulty, str) else None,
        tags=[t["name"] for t in q.get("topicTags") or [] if isinstance(t, dict) and isinstance(t.get("name"), str)],
        meta={"question_id": q.get("questionId"), "metaData": meta, **unstated_limits(),
              **({"structures": structures} if (structures := SignatureShapes(shapes, result).structures(names))
                 else {})},
    )


def metadata_shape(type_name: str) -> Shape:
    """The Shape of a metaData type (`integer[]`, `list<ListNode>`, `TreeNode`); Unrepresentable for
    node types other than ListNode / TreeNode, deeper nesting of them, and unknown classes."""
    inner, depth = type_name.strip(), 0
    while (m := _LIST_TYPE.match(inner)) is not None:
        inner, depth = (m.group(1) if m.group(1) is not None else m.group(2)), depth + 1
    if inner in STRUCTURES:
        if depth > 1:
            raise Unrepresentable(f"type {type_name!r} nests {inner} deeper than a list of them")
        return Shape(inner, many=depth == 1)
    if inner.lower() not in _PLAIN_TYPES:
        raise Unrepresentable(f"type {type_name!r}")
    return Shape()


def example_outputs(content_html: str) -> list[str]:
    """The text after each `Output:` label in the statement's examples (old `<pre>` and new
    `example-block` layouts)."""
    soup = BeautifulSoup(content_html, "html.parser")
    outputs = []
    for strong in soup.find_all(["strong", "b"]):
        if strong.get_text(strip=True).rstrip(":").strip().lower() != "output":
            continue
        span = strong.find_next_sibling("span", class_="example-io")
        if span is not None:
            outputs.append(span.get_text().strip())
            continue
        chunks = []
        for sib in strong.next_siblings:
            if getattr(sib, "name", None) in ("strong", "b"):
                break
            text = sib.get_text() if hasattr(sib, "get_text") else str(sib)
            chunks.append(text)
            if "\n" in text:
                break
        outputs.append("".join(chunks).split("\n")[0].strip())
    return outputs


def example_tests(example_inputs: str, names: list[str], content_html: str, shapes: list[Shape] | None = None,
                  result: Shape = PLAIN) -> list[TestCase]:
    n_params = len(names)
    shapes = shapes or [PLAIN] * n_params
    lines = [line for line in example_inputs.split("\n") if line.strip()]
    if n_params <= 0 or not lines or len(lines) % n_params:
        raise QuestionError("bad_tests", f"{len(lines)} example input lines for {n_params} parameters")
    outputs = example_outputs(content_html)
    n = len(lines) // n_params
    if len(outputs) != n:
        raise QuestionError("bad_tests", f"{n} example inputs but {len(outputs)} example outputs in the statement")
    tests = []
    for i in range(n):
        try:
            values = [json.loads(line) for line in lines[i * n_params:(i + 1) * n_params]]
            args = [to_json(check_argument(v, shape, name)) for v, shape, name in zip(values, shapes, names, strict=True)]
            expected = to_json(canonical_result(parse_literal(outputs[i]), result))
        except Unrepresentable as e:
            raise QuestionError("unsupported_types", f"example {i + 1}: {e}") from e
        except (ValueError, RecursionError) as e:
            raise QuestionError("bad_tests", f"example {i + 1}: {e}") from e
        tests.append(TestCase("\n".join(args), expected, "public"))
    return tests
