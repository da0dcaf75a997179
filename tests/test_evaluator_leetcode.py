"""LeetCode-style functional calls: node types nested in lists / optionals (arguments and results),
in-place methods on empty structures, and which callable a bare entry point names. The shape
logic is tested directly (`harness_types` is stdlib only); the rest by real sandboxed runs."""

from __future__ import annotations

import textwrap
import typing
from typing import List, Optional, Union  # noqa: UP035 - the annotations LeetCode code uses

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.inside.harness_types import (
    annotation_shape,
    build_argument,
    empty_nodes_as_lists,
)
from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.leetcode_types import Shape, canonical_result


class ListNode:
    def __init__(self, val=0, next=None):
        self.val, self.next = val, next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val, self.left, self.right = val, left, right


LIST = ("node", "ListNode")
TREE = ("node", "TreeNode")


# --- annotation shapes (no sandbox) ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("annotation", "shape"),
    [
        (ListNode, LIST),
        (Optional[ListNode], LIST),  # noqa: UP045
        (List[Optional[ListNode]], ("list", LIST)),  # noqa: UP006, UP045
        (Optional[List[TreeNode]], ("list", TREE)),  # noqa: UP006, UP045
        (list[ListNode | None], ("list", LIST)),
        (typing.Sequence[TreeNode], ("list", TREE)),
        (List[List[Optional[TreeNode]]], ("list", ("list", TREE))),  # noqa: UP006, UP045
        (List["TreeNode"], ("list", TREE)),  # noqa: UP006 - a ForwardRef inside
        (Union[None, ListNode], LIST),  # noqa: UP007
        # strings: `from __future__ import annotations`, quoted names, module prefixes
        ("Optional[ListNode]", LIST),
        ("List[Optional[ListNode]]", ("list", LIST)),
        ("typing.List[typing.Optional[solution.ListNode]]", ("list", LIST)),
        ("list[ListNode | None]", ("list", LIST)),
        ("None | TreeNode", TREE),
        ("Union[TreeNode, None]", TREE),
        ("List['TreeNode']", ("list", TREE)),
        ("'Optional[List[TreeNode]]'", ("list", TREE)),
        # plain JSON
        (int, None), (List[int], None), (Optional[int], None), ("List[List[int]]", None),  # noqa: UP006, UP045
        (Union[ListNode, TreeNode], None), ("ListNode | TreeNode", None),  # noqa: UP007 - ambiguous
        ("Dict[int, ListNode]", None), (None, None), ("None", None), ("", None), ("List[", None),
        ("x" * 5000, None),
    ],
)
def test_annotation_shapes(annotation, shape):
    assert annotation_shape(annotation) == shape


def test_annotation_objects_that_fail_inspection_are_plain():
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError(name)

    assert annotation_shape(Hostile()) is None


def test_arguments_are_built_to_their_shape():
    classes = {"ListNode": ListNode, "TreeNode": TreeNode}
    lists = build_argument([[1, 4], [], None, [2]], ("list", LIST), classes)
    assert [node and node.val for node in lists] == [1, None, None, 2]
    assert lists[0].next.val == 4 and lists[0].next.next is None
    forest = build_argument([[[1, None, 2]], []], ("list", ("list", TREE)), classes)
    assert forest[0][0].right.val == 2 and forest[0][0].left is None and forest[1] == []
    assert build_argument(5, LIST, classes) == 5  # a value that does not fit stays as it is
    assert build_argument([1, 2], LIST, {"ListNode": None}) == [1, 2]  # no class to build with
    assert build_argument([1, 2], None, classes) == [1, 2]


def test_missing_structures_in_results_read_as_empty_lists():
    """The same rule as the expected values (`leetcode_types.canonical_result`): None -> []."""
    many = Shape("ListNode", many=True)
    assert empty_nodes_as_lists([None, [1], None], ("list", LIST)) == [[], [1], []] == \
        canonical_result([None, [1], None], many)
    assert empty_nodes_as_lists(None, TREE) == [] == canonical_result(None, Shape("TreeNode"))
    assert empty_nodes_as_lists((None,), ("list", TREE)) == ([],)  # a tuple stays a tuple
    assert empty_nodes_as_lists(None, ("list", LIST)) is None  # no list at all is not an empty one
    assert empty_nodes_as_lists(None, None) is None


# --- sandboxed runs ---------------------------------------------------------------------------------------
def functional(pid: str, entry: str, pairs) -> Problem:
    return Problem(id=pid, source="test", statement="", style="functional", entry_point=entry,
                   tests=[TestCase(i, o) for i, o in pairs], time_limit_s=1.0)


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=2, config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as e:
        yield e


def judge_all(ev, cases):
    """cases: [(problem, code, expected status)]; one batch, every test run."""
    subs = [Submission(p.id, f"s{i}", "python", textwrap.dedent(code)) for i, (p, code, _) in enumerate(cases)]
    verdicts = ev.evaluate_batch([p for p, _, _ in cases], subs, mode="all")
    got = [(v.status, v.reason) for v in verdicts]
    assert [s for s, _ in got] == [want for _, _, want in cases], got


MERGE_K = functional("merge-k", "Solution().mergeKLists", [
    ("[[1,4,5],[1,3,4],[2,6]]", "[1,1,2,3,4,4,5,6]"), ("[]", "[]"), ("[[]]", "[]"), ("[[],[1]]", "[1]")])
MERGE_K_CODE = """
    {future}
    class Solution:
        def mergeKLists(self, lists: {annotation}) -> Optional[ListNode]:
            heap = [(node.val, i, node) for i, node in enumerate(lists) if node]
            heapify(heap)
            dummy = tail = ListNode()
            while heap:
                _, i, node = heappop(heap)
                tail.next = tail = node
                if node.next:
                    heappush(heap, (node.next.val, i, node.next))
            return dummy.next{wrong}
"""


@pytest.mark.parametrize(
    ("future", "annotation"),
    [
        ("", "List[Optional[ListNode]]"),
        ("", "list[ListNode | None]"),
        ("", "Optional[List[Optional[ListNode]]]"),
        ("from __future__ import annotations", "List[Optional[ListNode]]"),
        ("", "'List[Optional[ListNode]]'"),
    ],
)
def test_lists_of_linked_lists_are_built(ev, future, annotation):
    right = MERGE_K_CODE.format(future=future, annotation=annotation, wrong="")
    wrong = MERGE_K_CODE.format(future=future, annotation=annotation, wrong=".next if dummy.next else None")
    judge_all(ev, [(MERGE_K, right, "AC"), (MERGE_K, wrong, "WA")])


def test_nested_node_results_are_lists_with_empty_parts_as_empty_lists(ev):
    split = functional("split", "Solution().splitListToParts", [
        ("[1,2,3]\n5", "[[1],[2],[3],[],[]]"), ("[]\n2", "[[],[]]"), ("[1,2,3,4]\n3", "[[1,2],[3],[4]]")])
    split_code = """
        class Solution:
            def splitListToParts(self, head: Optional[ListNode], k: int) -> List[Optional[ListNode]]:
                vals = []
                while head:
                    vals.append(head.val)
                    head = head.next
                q, r = divmod(len(vals), k)
                parts, i = [], 0
                for j in range(k):
                    n = q + (j < r)
                    dummy = tail = ListNode()
                    for v in vals[i:i + n]:
                        tail.next = tail = ListNode(v)
                    parts.append(dummy.next)
                    i += n
                return parts
    """
    trees = functional("trees", "Solution().generateTrees", [("1", "[[1]]"), ("2", "[[1,null,2],[2,1]]")])
    trees_code = """
        class Solution:
            def generateTrees(self, n: int) -> List[Optional[TreeNode]]:
                def build(lo, hi):
                    if lo > hi:
                        return [None]
                    return [TreeNode(v, left, right) for v in range(lo, hi + 1)
                            for left in build(lo, v - 1) for right in build(v + 1, hi)]
                return build(1, n)
    """
    judge_all(ev, [(split, split_code, "AC"), (trees, trees_code, "AC")])


def test_in_place_methods_on_empty_structures_report_empty_lists(ev):
    flatten = functional("flatten", "Solution().flatten", [
        ("[1,2,5,3,4,null,6]", "[1,null,2,null,3,null,4,null,5,null,6]"), ("[]", "[]"), ("[0]", "[0]")])
    flatten_code = """
        class Solution:
            def flatten(self, root: Optional[TreeNode]) -> None:
                order = []
                def walk(node):
                    if node:
                        order.append(node)
                        walk(node.left)
                        walk(node.right)
                walk(root)
                for a, b in zip(order, order[1:] + [None]):
                    a.left, a.right = None, b
    """
    reorder = functional("reorder", "Solution().reorderList", [("[1,2,3,4]", "[1,4,2,3]"), ("[]", "[]")])
    reorder_code = """
        from __future__ import annotations
        class Solution:
            def reorderList(self, head: Optional[ListNode]) -> None:
                nodes = []
                while head:
                    nodes.append(head)
                    head = head.next
                i, j = 0, len(nodes) - 1
                order = []
                while i <= j:
                    order.append(nodes[i])
                    if i != j:
                        order.append(nodes[j])
                    i, j = i + 1, j - 1
                for a, b in zip(order, order[1:] + [None]):
                    a.next = b
    """
    judge_all(ev, [(flatten, flatten_code, "AC"), (reorder, reorder_code, "AC")])


MERGE = functional("merge", "merge", [("[[1,3],[2,6],[8,10]]", "[[1,6],[8,10]]"), ("[[1,4]]", "[[1,4]]")])
MERGE_METHOD = """
    class Solution:
        def merge(self, intervals: List[List[int]]) -> List[List[int]]:
            out = []
            for a, b in sorted(intervals):
                if out and a <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], b)
                else:
                    out.append([a, b])
            return out
"""
MERGE_FUNCTION = """class Solution:
    pass


def merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
"""


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("from heapq import *\n" + textwrap.dedent(MERGE_METHOD), "AC"),  # not heapq.merge
        (textwrap.dedent(MERGE_METHOD), "AC"),  # the prelude's `from heapq import *` neither
        # the Solution method wins over a module-level function of the same name
        ("def merge(intervals):\n    return []\n" + textwrap.dedent(MERGE_METHOD), "AC"),
        # no such method: the submission's own function, not the prelude's heapq.merge
        (MERGE_FUNCTION, "AC"),
        ("class Solution:\n    pass\n", "WA"),  # only heapq.merge is left: judged, and wrong
        ("class Solution:\n    merge = 3\n", "WA"),  # not callable: heapq.merge again
    ],
)
def test_bare_entry_point_resolution(ev, code, status):
    judge_all(ev, [(MERGE, code, status)])
