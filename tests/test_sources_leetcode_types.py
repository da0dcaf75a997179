"""LeetCode linked lists / trees as JSON lists, any-order results, and the evaluator agreeing with both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, Submission
from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext
from microcoder.pipeline.sources.leetcode import question_to_problem
from microcoder.pipeline.sources.leetcode_types import (
    Shape,
    Unrepresentable,
    annotation_shape,
    canonical_result,
    check_argument,
    level_order,
    signature_shapes,
)
from microcoder.pipeline.sources.pyliterals import NotLiteral, parse_call_text

FIX = Path(__file__).parent / "fixtures" / "sources"
LIST, TREE = Shape("ListNode"), Shape("TreeNode")


def convert(path: Path, name: str = "lcd") -> tuple[dict[str, Problem], dict[str, Reject]]:
    items = list(read_source("leetcodedataset", build_options("leetcodedataset", {"path": str(path)}),
                             SourceContext(name)))
    problems = {i.id: i for i in items if isinstance(i, Problem)}
    for p in problems.values():
        assert validate_problem(p) == [], p.id
    return problems, {i.id: i for i in items if isinstance(i, Reject)}


@pytest.mark.parametrize(("text", "shape"), [
    ("", Shape()), ("List[int]", Shape()), ("Dict[str, List[int]]", Shape()),
    ("TreeNode", TREE), ("Optional[TreeNode]", TREE), ("'TreeNode'", TREE), ("TreeNode | None", TREE),
    ("typing.Optional[ListNode]", LIST), ("Union[None, ListNode]", LIST), ("'Optional[ListNode]'", LIST),
    ("List[Optional[ListNode]]", Shape("ListNode", many=True)), ("list[TreeNode]", Shape("TreeNode", many=True)),
])
def test_annotation_shapes(text, shape):
    assert annotation_shape(text) == shape


@pytest.mark.parametrize(("text", "why"), [
    ("Optional[Node]", "type Node"), ("'Node'", "type Node"), ("List[NestedInteger]", "type NestedInteger"),
    ("MountainArray", "type MountainArray"), ("Dict[int, TreeNode]", "deeper"), ("List[List[TreeNode]]", "deeper"),
    ("Tuple[TreeNode, ListNode]", "mixes"),
])
def test_unrepresentable_annotations(text, why):
    with pytest.raises(Unrepresentable, match=why):
        annotation_shape(text)


def test_signature_shapes_and_in_place_results():
    shapes = signature_shapes(["head", "k"], ["Optional[ListNode]", "int", "Optional[ListNode]"])
    assert shapes.params == [LIST, Shape()] and shapes.result == LIST and not shapes.returns_list
    assert shapes.structures(["head", "k"]) == {"head": "ListNode", "return": "ListNode"}
    flatten = signature_shapes(["root"], ["Optional[TreeNode]", "None"])  # modifies root in place
    assert flatten.result == TREE
    assert signature_shapes(["nums"], ["List[int]", "List[List[int]]"]).returns_list
    with pytest.raises(Unrepresentable, match="parameter 'head': type Node"):
        signature_shapes(["head"], ["'Optional[Node]'", "'Optional[Node]'"])


def test_tree_level_order_is_canonical():
    assert level_order([1, None, 2, 3]) == [1, None, 2, 3]
    assert level_order([3, 2, None, 1, None, None, None]) == [3, 2, None, 1]  # trailing nulls dropped
    assert level_order([1, None, 2, None, 3, None, 4, None, None]) == [1, None, 2, None, 3, None, 4]
    assert level_order([]) == [] and level_order([None]) == []
    assert canonical_result(None, TREE) == [] and canonical_result(None, LIST) == []
    assert canonical_result([[1, 2, None], None], Shape("TreeNode", many=True)) == [[1, 2], []]
    with pytest.raises(NotLiteral, match="after the last node"):
        canonical_result([1, None, None, 5], TREE)


def test_arguments_must_be_lists_of_plain_values():
    assert check_argument([1, None, 2], TREE, "root") == [1, None, 2]
    assert check_argument(None, LIST, "head") is None
    with pytest.raises(Unrepresentable, match="reference to a node"):
        check_argument(5, TREE, "p")
    with pytest.raises(NotLiteral, match="nested data"):
        check_argument([[7, None], [13, 0]], LIST, "head")
    with pytest.raises(NotLiteral, match="after the last node"):
        check_argument([1, None, None, 4], TREE, "root")
    assert parse_call_text("head = list_node([1,2]), root = tree_node([1,None,2])", ["root", "head"]) == \
        [[1, None, 2], [1, 2]]


def test_leetcodedataset_structures_any_order_and_rejects():
    problems, rejects = convert(FIX / "leetcodedataset.jsonl")
    tree = problems["lcd/binary-tree-inorder-traversal"]
    assert [(t.input, t.output) for t in tree.tests] == [("[1, null, 2, 3]", "[1, 3, 2]"), ("[]", "[]"), ("[1]", "[1]")]
    assert tree.meta["structures"] == {"root": "TreeNode"} and tree.entry_point == "Solution().inorderTraversal"
    trim = problems["lcd/trim-a-binary-search-tree"]
    assert [t.output for t in trim.tests] == ["[1, null, 2]", "[3, 2, null, 1]", "[]"]  # canonical; null -> []
    rev = problems["lcd/reverse-linked-list-ii"]
    assert [t.input for t in rev.tests] == ["[1, 2, 3, 4, 5]\n2\n4", "[5]\n1\n1"]  # list_node(...) unwrapped
    lonely = problems["lcd/find-all-lonely-numbers-in-the-array"]
    assert lonely.checker is not None and lonely.checker.kind == "exact" and lonely.checker.unordered
    assert problems["lcd/find-the-difference-of-two-arrays"].checker is None  # only the inner order is free
    assert problems["lcd/merge-intervals"].entry_point == "Solution().merge"
    assert rejects["lcd/lowest-common-ancestor-of-a-binary-tree"].code == "unsupported_types"
    assert "'p' (TreeNode) is given as int 5" in rejects["lcd/lowest-common-ancestor-of-a-binary-tree"].detail
    assert "type Node" in rejects["lcd/copy-list-with-random-pointer"].detail


PREORDER = """class Solution:
    def inorderTraversal(self, root: Optional[TreeNode]) -> List[int]:
        return [] if root is None else [root.val] + self.inorderTraversal(root.left) + self.inorderTraversal(root.right)
"""
REVERSED_LONELY = """class Solution:
    def findLonely(self, nums: List[int]) -> List[int]:
        cnt = Counter(nums)
        return [x for x, v in cnt.items() if v == 1 and cnt[x - 1] == 0 and cnt[x + 1] == 0][::-1]
"""
SWAPPED_DIFFERENCE = """class Solution:
    def findDifference(self, nums1: List[int], nums2: List[int]) -> List[List[int]]:
        s1, s2 = set(nums1), set(nums2)
        return [sorted(s2 - s1), sorted(s1 - s2)]
"""


def test_evaluator_judges_converted_problems():
    """The references pass on the converted tests (the harness builds the nodes from our lists and
    reports returned nodes in the same notation); wrong answers still fail; any order is honoured
    only where the statement allows it."""
    problems, _ = convert(FIX / "leetcodedataset.jsonl")
    subs = [Submission(p.id, "ref", "python", p.reference_solutions[0].code) for p in problems.values()]
    subs += [Submission("lcd/binary-tree-inorder-traversal", "preorder", "python", PREORDER),
             Submission("lcd/find-all-lonely-numbers-in-the-array", "reversed", "python", REVERSED_LONELY),
             Submission("lcd/find-the-difference-of-two-arrays", "swapped", "python", SWAPPED_DIFFERENCE)]
    with Evaluator(workers=2) as ev:
        verdicts = {(v.problem_id, v.submission_id): v for v in ev.evaluate(list(problems.values()), subs,
                                                                            mode="all", progress=False)}
    refs = {pid: v.status for (pid, sid), v in verdicts.items() if sid == "ref"}
    assert refs == dict.fromkeys(problems, "AC"), {k: verdicts[(k, "ref")].reason for k, s in refs.items() if s != "AC"}
    preorder = verdicts[("lcd/binary-tree-inorder-traversal", "preorder")]
    assert (preorder.status, preorder.passed) == ("WA", 2)  # [1, 2, 3] instead of [1, 3, 2]
    assert verdicts[("lcd/find-all-lonely-numbers-in-the-array", "reversed")].status == "AC"
    assert verdicts[("lcd/find-the-difference-of-two-arrays", "swapped")].status == "WA"


REVERSE_LIST = """class Solution:
    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
        prev = None
        while head:
            head.next, prev, head = prev, head, head.next
        return prev
"""


def test_live_leetcode_linked_list_is_judged_by_the_evaluator():
    q = json.loads((FIX / "leetcode" / "question_reverse-linked-list.json").read_text())["data"]["question"]
    problem = question_to_problem(q, "leetcode", "https://leetcode.com")
    assert problem.entry_point == "Solution().reverseList"
    with Evaluator(workers=1) as ev:
        subs = [Submission(problem.id, "good", "python", REVERSE_LIST),
                Submission(problem.id, "identity", "python", REVERSE_LIST.replace("return prev", "return None"))]
        verdicts = {v.submission_id: v for v in ev.evaluate([problem], subs, mode="all", progress=False)}
    assert verdicts["good"].status == "AC" and verdicts["good"].passed == 3
    assert (verdicts["identity"].status, verdicts["identity"].passed) == ("WA", 1)  # only head = [] passes


def test_real_train_file_converts_every_structure_problem(bench_data):
    problems, rejects = convert(bench_data / "leetcodedataset" / "LeetCodeDataset-v0.2.0-train.jsonl.gz")
    assert len(problems) + len(rejects) == 1890 and not rejects
    structured = [p for p in problems.values() if p.meta.get("structures")]
    assert len(structured) == 121
    trees = [json.loads(t.output) for p in structured if p.meta["structures"].get("return") == "TreeNode"
             for t in p.tests]
    assert trees and all(not o or o[-1] is not None for o in trees)  # canonical level order
