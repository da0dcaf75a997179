"""Normalisation helpers and the ast-only literal/assert conversion."""

from __future__ import annotations

import pytest

from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.leetcode import QuestionError, example_outputs, example_tests
from microcoder.pipeline.sources.normalize import (
    clean_text,
    content_id,
    entry_point_for,
    finalize,
    html_to_markdown,
    iso_date,
    slug,
    stable_id,
)
from microcoder.pipeline.sources.pyliterals import (
    NotLiteral,
    convert_asserts,
    find_signature,
    parse_call_text,
    parse_literal,
    to_json,
)


def test_html_to_markdown_keeps_math_and_structure():
    md = html_to_markdown("<h3>Input</h3><p>Given <var>N</var>, a_i and 10<sup>9</sup>, $$$x_1$$$.</p>"
                          "<pre>1 2\n3</pre><ul><li>one</li></ul><script>alert(1)</script>")
    assert md == "### Input\n\nGiven $N$, a_i and 10^{9}, $x_1$.\n\n```\n1 2\n3\n```\n\n- one"


def test_clean_text_and_ids():
    assert clean_text("a  \r\n\n\n\nb\xa0c \n") == "a\n\nb c"
    assert stable_id("humaneval", "HumanEval/0") == "humaneval/HumanEval-0"
    assert slug("Ünïcode name!") == "Unicode-name"
    with pytest.raises(ValueError):
        slug("!!!")
    assert content_id("a", "b") == content_id("a", "b") != content_id("ab", "")


def test_dates_and_finalize():
    assert iso_date("2023-08-21T00:00:00") == "2023-08-21"
    assert iso_date(1723732500) == "2024-08-15"
    assert iso_date("2024-01-20T21:00:00+09:00") == "2024-01-20"
    assert iso_date(None) is None
    with pytest.raises(ValueError):
        iso_date("last tuesday")
    p = finalize(Problem(id="a/b", source="a", statement=" x \n\n\n\ny ", style="stdio",
                         tests=[TestCase("1  \n", "2  \n")], contest_date="2024-05-01T10:00:00"))
    assert p.statement == "x\n\ny" and p.contest_date == "2024-05-01" and p.tests[0].input == "1  \n"


def test_literals():
    assert parse_literal("[1,null,true]") == [1, None, True]
    assert parse_literal("(1, 'a')") == (1, "a")
    assert parse_literal("[None, False]") == [None, False]
    for bad in ("foo()", "__import__('os')", "[1, 2"):
        with pytest.raises(NotLiteral):
            parse_literal(bad)
    with pytest.raises(NotLiteral):
        parse_literal("[" * 200_000 + "]" * 200_000)  # parser limits are a reject, not a crash
    assert to_json((1, [2, (3,)])) == "[1, [2, [3]]]"
    for bad in ({1, 2}, 1j, float("nan"), {1: "a"}, b"x"):
        with pytest.raises(NotLiteral):
            to_json(bad)


def test_call_arguments_follow_the_signature():
    assert parse_call_text("b = 2, a = [1]", ["a", "b"]) == [[1], 2]
    assert parse_call_text("[1], b = 2", ["a", "b"]) == [[1], 2]
    for bad, params in (("c = 1", ["a"]), ("a = 1", None), ("1, a = 2", ["a", "b"]), ("a = x", ["a"]),
                        ("*xs", ["a"])):
        with pytest.raises(NotLiteral):
            parse_call_text(bad, params)


def test_find_signature():
    src = "class Solution:\n    def f(self, a: List[int], b) -> TreeNode:\n        pass\n"
    sig = find_signature(src, "f", "Solution")
    assert sig.params == ["a", "b"] and sig.annotations == ["List[int]", "", "TreeNode"]
    assert find_signature(src, "g", "Solution") is None and find_signature("def (", "f") is None


def test_asserts():
    src = ("def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) is True\n"
           "    assert candidate(3) is 3\n    assert candidate(1) == candidate(1)\n    assert candidate(x) == 1\n")
    out = convert_asserts(src, ["a"])
    assert [(t.input, t.output) for t in out.tests] == [("1", "2"), ("2", "true")]
    assert out.skipped == {"not_equality": 2, "not_literal": 1}


def test_leetcode_example_outputs_both_layouts():
    old = "<pre><strong>Input:</strong> x = 1\n<strong>Output:</strong> true\n<strong>Explanation:</strong> ok</pre>"
    new = '<p><strong>Output:</strong> <span class="example-io">"ab"</span></p>'
    assert example_outputs(old) == ["true"] and example_outputs(new) == ['"ab"']
    with pytest.raises(QuestionError, match="example outputs"):
        example_tests("1\n2", ["x"], old)
    with pytest.raises(QuestionError, match="parameters"):
        example_tests("1\n2\n3", ["a", "b"], old)


def test_entry_point_names_the_solution_method_when_there_is_a_class():
    starter = "class Solution:\n    def merge(self, intervals: List[List[int]]) -> List[List[int]]:\n        "
    assert entry_point_for("merge", starter) == "Solution().merge"  # never heapq.merge from the prelude
    assert entry_point_for("add", "def add(a, b):\n    ") == "add"
    assert entry_point_for("add", None) == "add" and entry_point_for(None, starter) is None
    assert entry_point_for("Solution().merge", starter) == "Solution().merge"
