"""Live platforms against a local HTTP server serving fixtures in the real response formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from werkzeug import Response

from microcoder.pipeline.evaluator import Submission, compare_stdio
from microcoder.pipeline.evaluator.verdict.judge import bad_input_reason
from microcoder.pipeline.schema import Problem, decode_functional_input, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError
from microcoder.pipeline.sources.codeforces import parse_problem_page
from microcoder.pipeline.sources.http import HttpClient, HttpConfig
from microcoder.pipeline.sources.leetcode import metadata_shape
from microcoder.pipeline.sources.leetcode_types import Shape, Unrepresentable
from microcoder.pipeline.sources.normalize import parse_since

FIX = Path(__file__).parent / "fixtures" / "sources"


def run(kind: str, tmp_path, since: str | None = None, **options):
    clients = []

    def factory():
        clients.append(HttpClient(HttpConfig(min_interval_s=0, cache_dir=str(tmp_path / "http"), max_retries=1),
                                  sleep=lambda s: None))
        return clients[-1]

    ctx = SourceContext(kind, since=parse_since(since), http_factory=factory)
    items = list(read_source(kind, build_options(kind, options), ctx))
    problems = [i for i in items if isinstance(i, Problem)]
    for p in problems:
        assert validate_problem(p) == [], p.id
    return problems, [i for i in items if isinstance(i, Reject)], ctx, clients


def serve(httpserver, route: str, path: Path, method: str = "GET") -> None:
    httpserver.expect_request(route, method=method).respond_with_data(
        path.read_text(encoding="utf-8"), content_type="application/json" if path.suffix == ".json" else "text/html")


# --- Codeforces -------------------------------------------------------------------------------
@pytest.fixture
def codeforces(httpserver):
    d = FIX / "codeforces"
    serve(httpserver, "/api/contest.list", d / "contest.list.json")
    serve(httpserver, "/api/problemset.problems", d / "problemset.problems.json")
    serve(httpserver, "/problemset/problem/2000/A", d / "problem_2000_A.html")
    serve(httpserver, "/problemset/problem/2000/B", d / "problem_2000_B.html")
    serve(httpserver, "/problemset/problem/1/A", d / "problem_1_A.html")
    serve(httpserver, "/problemset/problem/1999/G2", d / "problem_1999_G2.html")
    httpserver.expect_request("/problemset/problem/1999/Z").respond_with_data("Not Found", status=404)
    return {"api_url": httpserver.url_for("/api"), "base_url": httpserver.url_for("/")}


def test_codeforces_since(codeforces, tmp_path):
    problems, rejects, ctx, _ = run("codeforces", tmp_path, since="2024-08-01", **codeforces)
    assert [p.id for p in problems] == ["codeforces/2000A", "codeforces/1999G2"]
    p = problems[0]
    assert p.contest_date == "2024-08-15" and p.rating == 800 and p.tags == ["implementation", "math", "strings"]
    assert [(t.input, t.output) for t in p.tests] == [("3\n100\n1010\n105\n", "NO\nYES\nYES\n")]
    assert "$t$" in p.statement and "$$$" not in p.statement and "## " not in p.title
    assert "Input" in p.statement and "Note" in p.statement and p.time_limit_s == 1.0 and p.memory_limit_mb == 256
    assert "interactive" not in p.meta and "time_limit_stated" not in p.meta  # the page states its limits
    assert {r.id: r.code for r in rejects} == {"codeforces/2000B": "bad_page", "codeforces/1999Z": "http_error"}
    assert ctx.skipped == {"contest not finished": 1, "before since": 1}


def test_codeforces_any_case_answers_get_a_case_insensitive_checker(codeforces, tmp_path):
    problems, _, _, _ = run("codeforces", tmp_path, since="2024-08-01", **codeforces)
    yes_no = {p.id: p for p in problems}["codeforces/2000A"]
    assert "in any case" in yes_no.statement
    assert (yes_no.checker.kind, yes_no.checker.case_sensitive) == ("tokens", False)
    assert compare_stdio("NO\nYES\nYES\n", "no\nYes\nyEs\n", yes_no.checker).ok
    assert not compare_stdio("NO\nYES\nYES\n", "no\nno\nyes\n", yes_no.checker).ok
    theatre = {p.id: p for p in run("codeforces", tmp_path, **codeforces)[0]}["codeforces/1A"]
    assert theatre.checker is None  # nothing said about letter case: the default cascade


def test_codeforces_interactive_problems_are_marked_for_the_evaluator(codeforces, tmp_path):
    problems, _, _, _ = run("codeforces", tmp_path, since="2024-08-01", **codeforces)
    ruler = {p.id: p for p in problems}["codeforces/1999G2"]
    assert ruler.meta["interactive"] is True and ruler.tags == ["binary search", "interactive"]
    assert ruler.checker is None and "### Interaction" in ruler.statement and ruler.tests
    status, reason = bad_input_reason(ruler, Submission(ruler.id, "s", "python", "print(1)"))
    assert status == "SE" and "interactive" in reason
    _, rejects, _, _ = run("codeforces", tmp_path, since="2024-08-01", interactive="reject", **codeforces)
    assert {r.id: r.code for r in rejects}["codeforces/1999G2"] == "interactive"


def test_codeforces_interaction_section_alone_marks_a_problem():
    html = (FIX / "codeforces" / "problem_1999_G2.html").read_text()
    assert parse_problem_page(html)["interactive"] is True  # no listing tag needed
    untagged = html.replace("This is an interactive problem.", "Read carefully.")
    assert parse_problem_page(untagged)["interactive"] is True  # the Interaction section is enough
    assert parse_problem_page((FIX / "codeforces" / "problem_2000_A.html").read_text())["interactive"] is False


def test_codeforces_old_page_layout_and_cache(codeforces, tmp_path, httpserver):
    problems, _, _, clients = run("codeforces", tmp_path, **codeforces)
    theatre = {p.id: p for p in problems}["codeforces/1A"]
    assert theatre.tests[0].input == "6 6 4\n" and theatre.tests[0].output == "4\n"
    assert "10^{9}" in theatre.statement and theatre.contest_date == "2010-02-19"
    served = len(httpserver.log)
    again, _, _, clients = run("codeforces", tmp_path, **codeforces)  # rerun: everything from the cache
    assert [p.id for p in again] == [p.id for p in problems]
    assert clients[0].stats["requests"] == 1  # only the 404 page is asked again (errors are not cached)
    assert len(httpserver.log) == served + 1


def test_codeforces_api_failure_is_a_source_error(httpserver, tmp_path):
    httpserver.expect_request("/api/contest.list").respond_with_json({"status": "FAILED", "comment": "Call limit"})
    with pytest.raises(SourceError, match="Call limit"):
        run("codeforces", tmp_path, api_url=httpserver.url_for("/api"), base_url=httpserver.url_for("/"))


# --- AtCoder ----------------------------------------------------------------------------------
def test_atcoder_archive_tasks_and_pages(httpserver, tmp_path):
    d = FIX / "atcoder"
    serve(httpserver, "/contests/archive", d / "archive_page1.html")
    serve(httpserver, "/contests/abc337/tasks", d / "tasks_abc337.html")
    serve(httpserver, "/contests/abc337/tasks/abc337_a", d / "task_abc337_a.html")
    serve(httpserver, "/contests/abc337/tasks/abc337_b", d / "task_abc337_b.html")
    httpserver.expect_request("/contests/arc170/tasks").respond_with_data("gone", status=404)
    problems, rejects, ctx, _ = run("atcoder", tmp_path, since="2024-01-15", base_url=httpserver.url_for("/"))
    assert [p.id for p in problems] == ["atcoder/abc337_a"]
    a = problems[0]
    assert a.title == "Scoreboard" and a.contest_date == "2024-01-20" and a.meta["points"] == 100
    assert [(t.input, t.output) for t in a.tests] == [("4\n10 2\n10 1\n10 2\n3 2\n", "Takahashi\n"),
                                                      ("6\n5 4\n4 5\n2 4\n1 6\n7 1\n3 2\n", "Draw\n")]
    assert "$1\\leq N\\leq 100$" in a.statement and "チーム" not in a.statement and "Editorial" not in a.title
    assert a.time_limit_s == 2.0 and a.memory_limit_mb == 1024 and "memory_limit_stated" not in a.meta
    assert sorted(r.code for r in rejects) == ["http_error", "interactive"]
    assert "no sample pairs" in next(r.detail for r in rejects if r.code == "interactive")
    assert ctx.skipped == {"contest prefix not selected": 1}
    pages = [e[0].args.get("page") for e in httpserver.log if e[0].path == "/contests/archive"]
    assert pages == ["1"]  # abc331 is older than since: paging stops


def test_atcoder_interactive_tasks(httpserver, tmp_path):
    """AtCoder's interactive pages usually have no sample pairs (nothing to keep: rejected); one
    that has them is kept and marked, or rejected with `interactive: reject`."""
    d = FIX / "atcoder"
    page = (d / "task_abc337_b.html").read_text()
    with_samples = page.replace("</section></div>\n</span>", "</section></div>"
                                "<div class=\"part\"><section><h3>Sample Input 1</h3><pre>3\n</pre></section></div>"
                                "<div class=\"part\"><section><h3>Sample Output 1</h3><pre>? 1\n! 2\n</pre></section></div>\n</span>")
    assert with_samples != page
    serve(httpserver, "/contests/abc337/tasks", d / "tasks_abc337.html")
    serve(httpserver, "/contests/abc337/tasks/abc337_a", d / "task_abc337_a.html")
    httpserver.expect_request("/contests/abc337/tasks/abc337_b").respond_with_data(with_samples, content_type="text/html")
    opts = {"base_url": httpserver.url_for("/"), "contests": ["abc337"]}
    problems, rejects, _, _ = run("atcoder", tmp_path, **opts)
    marked = {p.id: p for p in problems}["atcoder/abc337_b"]
    assert marked.meta["interactive"] is True and marked.tags == ["interactive"] and marked.checker is None
    assert {p.id: p for p in problems}["atcoder/abc337_a"].tags == [] and not rejects
    _, rejects, _, _ = run("atcoder", tmp_path, interactive="reject", **opts)
    assert [(r.id, r.code) for r in rejects] == [("atcoder/abc337_b", "interactive")]
    with pytest.raises(SourceError, match="interactive must be one of"):
        run("atcoder", tmp_path, interactive="maybe", **opts)


# --- LeetCode ---------------------------------------------------------------------------------
def graphql(fixtures: Path):
    def handler(request):
        body = json.loads(request.data)
        query, variables = body["query"], body["variables"]
        if "questionList" in query:
            name = "questionList.json"
        elif "pastContests" in query:
            name = f"pastContests_page{variables['pageNo']}.json"
        else:
            name = f"question_{variables['titleSlug']}.json"
        path = fixtures / name
        if not path.exists():
            return Response(json.dumps({"errors": [{"message": "not found"}], "data": None}), 200)
        return Response(path.read_text(), 200, content_type="application/json")

    return handler


def test_leetcode_problemset(httpserver, tmp_path):
    d = FIX / "leetcode"
    httpserver.expect_request("/graphql/", method="POST").respond_with_handler(graphql(d))
    problems, rejects, ctx, _ = run("leetcode", tmp_path, graphql_url=httpserver.url_for("/graphql/"),
                                    base_url=httpserver.url_for("/"))
    got = {p.id: p for p in problems}
    assert sorted(got) == ["leetcode/binary-tree-inorder-traversal", "leetcode/maximum-area-of-longest-diagonal-rectangle",
                           "leetcode/reverse-linked-list", "leetcode/two-sum"]
    two = got["leetcode/two-sum"]
    assert two.style == "functional" and two.entry_point == "Solution().twoSum"
    assert two.starter_code.startswith("class Solution") and "structures" not in two.meta
    assert [(decode_functional_input(t.input), t.output) for t in two.tests] == [([[2, 7, 11, 15], 9], "[0, 1]"),
                                                                               ([[3, 2, 4], 6], "[1, 2]")]
    assert two.difficulty == "easy" and two.tags == ["Array", "Hash Table"] and "10^{4}" in two.statement
    diag = got["leetcode/maximum-area-of-longest-diagonal-rectangle"]  # new example-block layout
    assert [t.output for t in diag.tests] == ["48", "12"] and diag.source_id == "3000"
    tree = got["leetcode/binary-tree-inorder-traversal"]  # trees and linked lists stay in list notation
    assert [(t.input, t.output) for t in tree.tests] == [("[1, null, 2, 3]", "[1, 3, 2]")]
    assert tree.meta["structures"] == {"root": "TreeNode"}
    rev = got["leetcode/reverse-linked-list"]
    assert [(t.input, t.output) for t in rev.tests] == [("[1, 2, 3, 4, 5]", "[5, 4, 3, 2, 1]"), ("[1, 2]", "[2, 1]"),
                                                        ("[]", "[]")]
    assert rev.meta["structures"] == {"head": "ListNode", "return": "ListNode"}
    assert {r.id: r.code for r in rejects} == {"leetcode/copy-list-with-random-pointer": "unsupported_types",
                                               "leetcode/lru-cache": "design_problem"}
    assert "'Node'" in {r.id: r for r in rejects}["leetcode/copy-list-with-random-pointer"].detail
    assert ctx.skipped == {"paid-only": 1}


@pytest.mark.parametrize(("type_name", "shape"), [
    ("integer", Shape()), ("list<list<integer>>", Shape()), ("string[]", Shape()), ("TreeNode", Shape("TreeNode")),
    ("ListNode[]", Shape("ListNode", many=True)), ("list<ListNode>", Shape("ListNode", many=True)),
])
def test_leetcode_metadata_types(type_name, shape):
    assert metadata_shape(type_name) == shape


@pytest.mark.parametrize("type_name", ["Node", "NestedInteger", "list<Node>", "list<list<TreeNode>>", "MountainArray"])
def test_leetcode_metadata_types_without_json_form(type_name):
    with pytest.raises(Unrepresentable):
        metadata_shape(type_name)


def test_leetcode_contests_since(httpserver, tmp_path):
    d = FIX / "leetcode"
    httpserver.expect_request("/graphql/", method="POST").respond_with_handler(graphql(d))
    serve(httpserver, "/contest/api/info/weekly-contest-380/", d / "contest_weekly-contest-380.json")
    serve(httpserver, "/contest/api/info/biweekly-contest-122/", d / "contest_biweekly-contest-122.json")
    problems, rejects, _, _ = run("leetcode", tmp_path, since="2024-01-10", graphql_url=httpserver.url_for("/graphql/"),
                                  base_url=httpserver.url_for("/"), page_size=2)
    dates = {p.id: (p.contest_date, p.meta["contest"]) for p in problems}
    assert dates == {"leetcode/maximum-area-of-longest-diagonal-rectangle": ("2024-01-14", "weekly-contest-380"),
                     "leetcode/two-sum": ("2024-01-13", "biweekly-contest-122")}
    assert [r.code for r in rejects] == ["design_problem"]


def test_leetcode_since_needs_contest_mode(tmp_path):
    with pytest.raises(SourceError, match="no dates"):
        run("leetcode", tmp_path, since="2024-01-01", mode="problemset", graphql_url="http://127.0.0.1:9/graphql")
