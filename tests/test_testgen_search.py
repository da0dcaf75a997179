"""Testgen's strength measure and the wrong-solution-guided search, through the sandboxed
evaluator on tiny problems: TPR / TNR before and after (known-wrong solutions and mutants apart),
the search failing a known-wrong solution the first pass let through, outputs by the agreement of
the references that finish, input validators (authored and Kattis) dropping and counting inputs,
the tier of every test, and the stage on Ray."""

from __future__ import annotations

import json

import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
from microcoder.pipeline.testgen.space import parse_input
from microcoder.pipeline.testgen.stage import TestgenConfig, testgen_problems

STATEMENT = """Return the largest element of nums that is at most k, or -1.

Example 1:
Input: nums = [1,5,3], k = 4
Output: 3

Constraints:

1 <= nums.length <= 20
-50 <= nums[i] <= 50
-50 <= k <= 50
"""
STARTER = "class Solution:\n    def best(self, nums: List[int], k: int) -> int:\n"
REFERENCE = """from typing import *

class Solution:
    def best(self, nums: List[int], k: int) -> int:
        ans = -1
        for x in nums:
            if x <= k and x > ans:
                ans = x
        return ans
"""
# The same answers, another program: a second reference that agrees everywhere.
REFERENCE_ALT = """from typing import *

class Solution:
    def best(self, nums: List[int], k: int) -> int:
        return max([x for x in nums if x <= k], default=-1)
"""
# Wrong on arrays of 8 or more (the first pass's two smallest edge cases do not have one).
WRONG_ON_LONG = REFERENCE.replace("        return ans\n", "        return ans if len(nums) < 8 else -1\n")
ALWAYS_MINUS_ONE = "from typing import *\n\nclass Solution:\n    def best(self, nums: List[int], k: int) -> int:\n        return -1\n"
SHORT_ONLY = REFERENCE.replace("        return ans\n", "        return ans if len(nums) <= 3 else 999\n")
SLOW_ON_K50 = REFERENCE_ALT.replace("        return max(", "        while k == 50:\n            pass\n        return max(")

EV = EvaluatorConfig(workers=1)
TIERS = {"edge", "random", "max", "hack"}


def _best(nums, k):
    return max([x for x in nums if x <= k] + [-1])


def functional(pid: str, *refs: str, wrong=(), tests=None, difficulty=None) -> Problem:
    return Problem(id=pid, source="t", statement=STATEMENT, style="functional", starter_code=STARTER,
                   entry_point="Solution().best", difficulty=difficulty,
                   tests=tests if tests is not None else [TestCase("[1,5,3]\n4", "3")],
                   reference_solutions=[ReferenceSolution("python", r) for r in refs],
                   wrong_solutions=[WrongSolution("python", w, "wrong_answer") for w in wrong], time_limit_s=1.0)


def cfg(tmp_path, **kw) -> TestgenConfig:
    # nothing held out unless a test asks (test_testgen_heldout.py): these check the in-sample machinery
    base = {"target_tests": 12, "mutants": 0, "batch_size": 8, "held_out_folds": 0,
            "cache_path": str(tmp_path / "cache.sqlite")}
    return TestgenConfig(**{**base, **kw})


def report_of(result, pid: str) -> dict:
    return next(r for r in result.report if r["id"] == pid)


# --- the search -------------------------------------------------------------------------------------
def test_a_known_wrong_solution_the_first_pass_lets_through_is_failed_by_the_search(tmp_path):
    """Two generated tests (arrays of one element) let WRONG_ON_LONG through; round 1 of the
    search (random and hack tiers) finds an input that fails it and adds it, tier hack."""
    p = functional("long", REFERENCE, wrong=[WRONG_ON_LONG])
    without = testgen_problems([p], cfg(tmp_path, target_tests=3, search_rounds=0), evaluator=EV, progress=False)
    rep = report_of(without, "long")
    assert rep["strength"]["after"]["known_wrong"]["incorrect_failing"] == 0  # it survives the first pass
    assert rep["search"]["survivors_at_start"] == 1 and rep["search"]["rounds"] == []

    result = testgen_problems([p], cfg(tmp_path, target_tests=3, search_rounds=2), evaluator=EV, progress=False)
    rep = report_of(result, "long")
    before, after = rep["strength"]["before"]["known_wrong"], rep["strength"]["after"]["known_wrong"]
    assert (before["incorrect"], before["incorrect_failing"], before["tnr"]) == (1, 0, 0.0)
    assert (after["incorrect"], after["incorrect_failing"], after["tnr"]) == (1, 1, 1.0)
    assert after["correct"] == after["correct_passing"] == 1  # the reference passes the searched test
    assert rep["search"]["rounds"] == [{"round": 1, "survivors_before": 1, "killed": 1, "tests_added": 1,
                                        "candidates": rep["search"]["rounds"][0]["candidates"]}]
    assert rep["search"]["survivors_left"] == 0
    figures = result.stats.figures["search"]
    assert [(r["round"], r["survivors_before"], r["killed"], r["tests_added"]) for r in figures["rounds"]] == [(1, 1, 1, 1)]
    assert figures["survivors_left"] == 0
    assert result.stats.figures["strength"]["after"]["known_wrong"]["tnr"] == 1.0

    tests, prov = result.kept[0].tests, result.kept[0].meta["testgen"]["tests"]
    assert len(tests) == 3 + 1  # the searched test goes beyond target_tests
    found, found_prov = tests[-1], prov[-1]
    assert found_prov["tier"] == "hack" and found_prov["search_round"] == 1
    assert all("search_round" not in x for x in prov[:-1])
    nums, k = parse_input(found.input, 2)
    assert json.loads(found.output) == _best(nums, k) != -1 and len(nums) >= 8  # where WRONG_ON_LONG is wrong


def test_known_wrong_solutions_and_mutants_are_separate_records(tmp_path):
    """Known-wrong solutions and mutants each have their own TNR, per problem, per source, per
    difficulty; references failing the source's own (wrong) test lower the TPR before."""
    problems = [
        functional("kw", REFERENCE, wrong=[WRONG_ON_LONG, ALWAYS_MINUS_ONE], difficulty="easy"),
        functional("bad-own", REFERENCE, tests=[TestCase("[1,5,3]\n4", "3"), TestCase("[2]\n1", "7")],
                   difficulty="hard"),
    ]
    result = testgen_problems(problems, cfg(tmp_path, target_tests=4, mutants=3, search_rounds=1),
                              evaluator=EV, progress=False)
    kw = report_of(result, "kw")
    for side in ("before", "after"):
        assert kw["strength"][side]["known_wrong"]["incorrect"] == 2
        assert kw["strength"][side]["mutants"]["incorrect"] == kw["mutants"]["mutants"] == 3
    assert kw["strength"]["before"]["known_wrong"]["incorrect_failing"] == 1  # ALWAYS_MINUS_ONE fails the example
    assert kw["strength"]["before"]["mutants"]["incorrect_failing"] == kw["mutants"]["killed_by_examples"]
    assert kw["strength"]["after"]["mutants"]["incorrect_failing"] == kw["mutants"]["killed_with_generated"]

    bad = report_of(result, "bad-own")
    assert bad["strength"]["before"]["known_wrong"] == {"correct": 1, "correct_passing": 0, "tpr": 0.0,
                                                        "incorrect": 0, "incorrect_failing": 0, "tnr": None}
    figures = result.stats.figures["strength"]
    assert figures["before"]["known_wrong"]["correct"] == 2 and figures["before"]["known_wrong"]["correct_passing"] == 1
    assert figures["after"]["known_wrong"]["incorrect"] == 2 and figures["after"]["mutants"]["incorrect"] >= 3
    assert set(figures["by_difficulty"]) == {"easy", "hard"} and set(figures["by_source"]) == {"t"}
    assert figures["by_difficulty"]["easy"]["known_wrong"] == kw["strength"]["after"]["known_wrong"]
    assert figures["by_difficulty"]["hard"]["known_wrong"]["incorrect"] == 0
    assert result.stats.figures["mutants"]["mutants"] == sum(r["mutants"]["mutants"] for r in result.report)


# --- agreement ----------------------------------------------------------------------------------------
def test_outputs_by_agreement_of_the_references_that_finish(tmp_path):
    """Disagreeing references drop the input; a reference that runs out of time does not vote, so
    the test rests on one reference and says so; two agreeing references are counted."""
    problems = [functional("two", REFERENCE, REFERENCE_ALT), functional("disagree", REFERENCE, SHORT_ONLY),
                functional("one-slow", REFERENCE, SLOW_ON_K50), functional("one", REFERENCE)]
    result = testgen_problems(problems, cfg(tmp_path, target_tests=10, search_rounds=0), evaluator=EV, progress=False)
    by_id = {p.id: p for p in result.kept}

    def prov(pid):
        return by_id[pid].meta["testgen"]["tests"]

    assert prov("two") and all(x["references_agreeing"] == 2 and not x["single_reference"] for x in prov("two"))
    assert report_of(result, "disagree")["dropped"]["references disagree"] > 0
    assert all(len(parse_input(t.input, 2)[0]) <= 3 for t in by_id["disagree"].tests[1:])
    assert all(x["references_agreeing"] == 2 for x in prov("disagree"))
    slow = [(parse_input(t.input, 2)[1], x) for t, x in zip(by_id["one-slow"].tests[1:], prov("one-slow"), strict=True)]
    assert any(k == 50 for k, _ in slow)  # kept: SLOW_ON_K50 timed out there and did not vote
    assert all((x["references_agreeing"], x["single_reference"]) == ((1, True) if k == 50 else (2, False))
               for k, x in slow)
    assert all(x["single_reference"] for x in prov("one"))
    singles = sum(x["single_reference"] for pid in by_id for x in by_id[pid].meta.get("testgen", {}).get("tests", []))
    agreement = result.stats.figures["agreement"]
    assert agreement["single_reference"] == singles == agreement["tests_by_references"]["1"]
    assert sum(agreement["tests_by_references"].values()) == result.stats.figures["tests_added"]
    # the too-slow reference fails the k = 50 tests when judged: the TPR after says so
    assert report_of(result, "one-slow")["strength"]["after"]["known_wrong"]["correct_passing"] == 1


# A reference computing in floats on some inputs (LeetCodeDataset's `from math import *` makes `pow` math.pow)
FLOAT_ON_POSITIVE_K = REFERENCE.replace("        return ans\n", "        return ans if k <= 0 else float(ans)\n")


def test_a_float_from_a_function_declared_int_is_no_expected_output(tmp_path):
    result = testgen_problems([functional("floats", FLOAT_ON_POSITIVE_K)], cfg(tmp_path, target_tests=10, search_rounds=0),
                              evaluator=EV, progress=False)
    kept = {p.id: p for p in result.kept}["floats"]
    assert report_of(result, "floats")["dropped"]["reference returned a float from a function declared to return int"] > 0
    generated = kept.tests[1:]
    assert generated and all(parse_input(t.input, 2)[1] <= 0 and "." not in t.output for t in generated)


# --- validity -------------------------------------------------------------------------------------------
STDIO_STATEMENT = "Read n, then n integers; print their sum.\n\nConstraints: 1 <= n <= 100, |a_i| <= 1000."
GENERATOR = """import random
tier, seed = input().split()
rng = random.Random(int(seed))
n = {"small": rng.randint(1, 5), "large": rng.randint(50, 100), "edge": rng.choice([0, 1, 100])}[tier]
print(n)
print(*[rng.randint(-1000, 1000) for _ in range(n)])
"""
AUTHORED_VALIDATOR = """import sys
data = sys.stdin.read().split()
n = int(data[0])
sys.exit(0 if 1 <= n <= 100 and len(data) == n + 1 else 1)
"""
# A Kattis input validator (exit 42: valid, 43: invalid) stricter than the generator: n <= 60.
KATTIS_VALIDATOR = """import sys
data = sys.stdin.read().split()
n = int(data[0])
sys.exit(42 if 1 <= n <= 60 and len(data) == n + 1 else 43)
"""
SUM_PY = "input()\nprint(sum(map(int, input().split())))\n"


def stdio(pid: str, validators=()) -> Problem:
    meta = {"input_validators": [{"name": f"kattis:{name}", "language": "python", "code": code}
                                 for name, code in validators]} if validators else {}
    return Problem(id=pid, source="t", statement=STDIO_STATEMENT, style="stdio", tests=[TestCase("2\n1 2\n", "3\n")],
                   reference_solutions=[ReferenceSolution("python", SUM_PY)], meta=meta)


def test_input_validators_drop_and_count_what_they_reject(tmp_path):
    """Every kept stdio input passes the generator's validator and the problem's Kattis ones; the
    rest are dropped and counted by why; a validator that rejects the problem's own test is unusable."""
    malformed = stdio("malformed")
    malformed.meta = {"input_validators": [{"name": "kattis:v.py", "language": "python"}]}  # no code
    problems = [stdio("kattis", [("validate.py", KATTIS_VALIDATOR)]),
                stdio("broken", [("reject_all.py", "import sys\nsys.exit(43)\n")]), malformed]
    gens = tmp_path / "generators.jsonl"
    gens.write_text("".join(json.dumps({"id": p.id, "generator": GENERATOR, "validator": AUTHORED_VALIDATOR}) + "\n"
                            for p in problems))
    result = testgen_problems(problems, cfg(tmp_path, target_tests=10, stdio_generators=str(gens)),
                              evaluator=EV, progress=False)
    kattis, broken, unread = result.kept
    assert unread.tests == malformed.tests and "lacks ['code']" in report_of(result, "malformed")["info"]["input_validators_unreadable"]
    dropped = report_of(result, "kattis")["dropped"]
    assert dropped["input validator rejected the input"] > 0  # n = 0 (both) and n > 60 (Kattis)
    assert len(kattis.tests) > 1
    for t in kattis.tests[1:]:
        n, *rest = t.input.split()
        assert 1 <= int(n) <= 60 and int(n) == len(rest) and int(t.output) == sum(map(int, rest))
    prov = kattis.meta["testgen"]["tests"]
    assert {x["tier"] for x in prov} <= {"random", "max", "edge"} and all(x["single_reference"] for x in prov)
    assert len(broken.tests) == 1  # nothing confirmed valid, nothing added
    rep = report_of(result, "broken")
    assert rep["candidates"] == 0 and rep["dropped"]["input validator unusable"] > 0
    assert "input validator rejected the input" not in rep["dropped"]  # unusable, not a verdict on the inputs
    assert result.stats.figures["inputs_dropped_by_reason"]["input validator unusable"] > 0


WRONG_ON_30 = "n = int(input())\nprint(sum(map(int, input().split())) if n < 30 else 0)\n"


def test_the_search_on_stdio_reruns_the_generator_and_validates_what_it_proposes(tmp_path):
    """The first pass keeps one small input, so WRONG_ON_30 survives; the search runs the generator
    with new seeds, drops what the Kattis validator rejects (n > 60) and keeps an input that fails it."""
    p = stdio("sum", [("validate.py", KATTIS_VALIDATOR)])
    p.wrong_solutions = [WrongSolution("python", WRONG_ON_30, "wrong_answer")]
    gens = tmp_path / "generators.jsonl"
    gens.write_text(json.dumps({"id": "sum", "generator": GENERATOR}) + "\n")
    result = testgen_problems([p], cfg(tmp_path, target_tests=2, stdio_generators=str(gens)), evaluator=EV,
                              progress=False)
    rep = report_of(result, "sum")
    assert rep["strength"]["before"]["known_wrong"]["incorrect_failing"] == 0
    assert rep["strength"]["after"]["known_wrong"]["incorrect_failing"] == 1
    killed_in = [r["round"] for r in rep["search"]["rounds"] if r["killed"]]
    assert len(killed_in) == 1 and rep["search"]["survivors_left"] == 0
    assert rep["search"]["inputs_dropped_by_reason"]["input validator rejected the input"] > 0
    tests, prov = result.kept[0].tests, result.kept[0].meta["testgen"]["tests"]
    assert [x.get("search_round") for x in prov] == [None, killed_in[0]]
    assert prov[1]["tier"] == "hack" and prov[1]["generator"].startswith("authored:generators.jsonl:")
    n, *rest = tests[-1].input.split()
    assert 30 <= int(n) <= 60 and int(tests[-1].output) == sum(map(int, rest)) != 0


# --- executor -------------------------------------------------------------------------------------------
def test_testgen_on_ray_gives_the_local_tests(ray_cluster, tmp_path, caplog):
    """executor=ray judges on the session's Ray cluster and generates exactly what local does
    (the search included: the same seed, the same search)."""
    problems = [functional("long", REFERENCE, wrong=[WRONG_ON_LONG])]

    def run(executor: str):
        c = cfg(tmp_path, target_tests=3, mutants=2, executor=executor, cache_path=str(tmp_path / f"{executor}.sqlite"))
        res = testgen_problems(problems, c, evaluator=EV, progress=False)
        return [(p.tests, p.meta) for p in res.kept], [r["strength"] for r in res.report]

    local = run("local")
    with caplog.at_level("INFO", logger="microcoder.pipeline.evaluator.ray_pool"):
        on_ray = run("ray")
    assert "executor: ray (" in caplog.text
    assert on_ray == local


PRELUDE = """from typing import *
inf = float('inf')

class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

def list_node(values: list):
    if not values:
        return None
    return ListNode(values[0] + 0)

"""


def test_mutants_stay_inside_the_solution_class():
    """LeetCode-style references ship helpers before `class Solution`; a mutant of an unused helper
    is equivalent (it survives every test), so only the Solution class is mutated."""
    from microcoder.pipeline.testgen.mutants import make_mutants

    code = PRELUDE + REFERENCE.split("\n", 1)[1]
    first = code.splitlines().index("class Solution:") + 1
    ms = make_mutants(code, 50, seed=0)
    assert ms and all(int(m.label.rsplit(" ", 1)[1]) > first for m in ms)
    assert len(ms) == len(make_mutants(REFERENCE, 50, seed=0))  # the same sites as without the prelude


def test_config_checks_the_new_knobs():
    with pytest.raises(ValueError, match="executor must be one of"):
        TestgenConfig(executor="slurm")
    with pytest.raises(ValueError, match="max_problem_bytes"):
        TestgenConfig(max_input_bytes=10, max_problem_bytes=5)
    with pytest.raises(ValueError, match="search_rounds"):
        TestgenConfig(search_rounds=-1)
