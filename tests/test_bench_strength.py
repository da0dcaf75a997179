"""bench/test_strength.py's own pieces: the quadratic variant (same answers, too slow at 10^5), the
MBPP conversion, the sample labelling and the figures' helpers. The benchmark itself is not run."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase
from microcoder.pipeline.sources.pyliterals import find_signature

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_test_strength", ROOT / "bench" / "test_strength.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def evaluator():
    from microcoder.pipeline.evaluator import EvaluatorConfig
    from microcoder.pipeline.evaluator.factory import make_evaluator

    with make_evaluator(EvaluatorConfig(workers=2)) as ev:
        yield ev


TWO_SUM = '''"""A module docstring stays first."""
from __future__ import annotations
from typing import List


class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
        return []
'''


def test_quadratic_variant_keeps_the_signature_and_burns_once(bench):
    slow = bench.quadratic_variant(TWO_SUM, "Solution().twoSum")
    assert slow is not None
    assert slow.startswith('"""A module docstring stays first."""\nfrom __future__ import annotations\n')
    original = find_signature(TWO_SUM, "twoSum", "Solution")
    variant = find_signature(slow, "twoSum", "Solution")
    assert (variant.params, variant.annotations) == (original.params, original.annotations)
    assert "_strength_burn(nums, target)" in slow  # `self` is not an argument to size
    recursive = bench.quadratic_variant("def f(xs, *rest, k=1):\n    return f(xs[1:]) if xs else 0\n", "f")
    assert "_strength_burn(xs, rest, k)" in recursive and "if _strength_depth[0] == 1" in recursive
    assert bench.quadratic_variant(TWO_SUM, "Solution().missing") is None
    assert bench.quadratic_variant("def f(:\n", "f") is None


def test_quadratic_variant_answers_alike_and_is_too_slow_at_max_size(bench, evaluator):
    """Same outputs on small inputs; at 10^5 elements the burn is 10^10 steps, far over 1 s of CPU
    on any machine (not a timing assertion: the margin is four orders of magnitude)."""
    from microcoder.pipeline.testgen.runner import judge

    small = [TestCase("[2,7,11,15]\n9", "[0,1]"), TestCase("[3,3]\n6", "[0,1]")]
    large = [TestCase(json.dumps(list(range(10**5))) + "\n3", "[1,2]")]
    problems = {name: Problem(id=name, source="t", statement="", style="functional", entry_point="Solution().twoSum",
                              tests=tests, time_limit_s=1.0) for name, tests in (("small", small), ("large", large))}
    slow = bench.quadratic_variant(TWO_SUM, "Solution().twoSum")
    got = judge(evaluator, problems, [("ref-small", "small", "python", TWO_SUM), ("slow-small", "small", "python", slow),
                                      ("ref-large", "large", "python", TWO_SUM), ("slow-large", "large", "python", slow)])
    assert got == {"ref-small": "AC", "slow-small": "AC", "ref-large": "AC", "slow-large": "TLE"}


def test_label_samples_leaves_out_code_that_compiles_only_with_the_check_appended(bench, evaluator):
    check = "def check(candidate):\n    assert candidate(2) == 4\n"
    samples = {"right": "def double(x):\n    return 2 * x\n", "wrong": "def double(x):\n    return x + 1\n",
               "loops": "def double(x):\n    while True:\n        pass\n",
               # a dangling decorator: a SyntaxError alone, but `@points(...) def check` once the check follows
               "dangling": "def double(x):\n    return 2 * x\n\n\n@points('6.string_functions')\n"}
    candidates = [(bench.Solution(name, "p", "samples", code, False), f"{code}\n\n{check}\ncheck(double)\n")
                  for name, code in samples.items()]
    dropped = Counter()
    labelled = bench.label_samples(candidates, evaluator, 1.0, dropped)
    assert {s.sid: s.correct for s in labelled} == {"right": True, "wrong": False, "loops": False}
    assert dropped == {"samples: does not compile": 1}


def test_mbpp_rows_become_functional_problems_or_a_reason(bench):
    row = {"task_id": 2, "text": "Find the similar elements from the given two tuple lists.",
           "code": "def similar_elements(a, b):\r\n  return tuple(set(a) & set(b))",
           "test_setup_code": "", "test_list": ["assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
                                                "assert set(similar_elements((1, 2), (2, 3))) == {2}"]}
    p = bench.mbpp_problem(row)
    assert isinstance(p, Problem)
    assert (p.id, p.entry_point, p.meta["skipped_asserts"]) == ("mbpp/2", "similar_elements", 1)
    assert p.tests == [TestCase("[3, 4, 5, 6]\n[5, 7, 4, 10]", "[4, 5]")]
    assert "\r" not in p.reference_solutions[0].code and p.meta["time_limit_stated"] is False
    assert bench.mbpp_problem({**row, "test_setup_code": "x = 1"}).startswith("test_setup_code")
    assert bench.mbpp_problem({**row, "code": "def other(a):\n  return a"}) == "no tested function defined in code"


def test_mbpp_every_row_is_a_problem_or_a_counted_reject(bench, bench_data, tmp_path):
    rows = sum(1 for _ in open(bench_data / "mbpp" / "mbpp.jsonl"))
    problems, rejects = bench.load_mbpp(bench_data, tmp_path)
    assert len(problems) + sum(rejects.values()) == rows
    assert len(problems) > 900 and all(p.reference_solutions and p.tests for p in problems)


def test_sizes_tiers_and_cells(bench):
    assert bench.input_size("[[1,2],[3,4,5]]\n\"abcdef\"\n7", "functional") == 6
    assert bench.input_size("3\n1 2 3\n", "stdio") == 4
    assert bench.has_sized_argument(Problem(id="a", source="t", statement="", style="functional",
                                            tests=[TestCase("5\n[1]", "1")]))
    assert not bench.has_sized_argument(Problem(id="b", source="t", statement="", style="functional",
                                                tests=[TestCase("5\n6", "11")]))
    from microcoder.pipeline import strength
    from microcoder.pipeline.io import content_hash

    p = Problem(id="c", source="t", statement="", style="functional", tests=[TestCase("1", "1"), TestCase("9", "9")],
                meta={"testgen": {"tests": [{"input_sha": content_hash("9")[:16], "method": "random", "tier": "max"}]}})
    assert bench.test_tiers(p.tests, bench.generated_tiers(p), {"1"}) == Counter({"own": 1, "max": 1})
    assert bench.cell(strength.record(incorrect=4, incorrect_failing=3)) == "TNR 75.0% (3/4)"
    assert bench.cell(strength.record(correct=2, correct_passing=2, incorrect=1)) == "TPR 100.0% (2/2), TNR 0.0% (0/1)"


def test_mutants_drawn_by_testgen_are_not_held_out(bench):
    one_site = Problem(id="m", source="t", statement="", style="functional", entry_point="f",
                       reference_solutions=[ReferenceSolution("python", "def f(a, b):\n    return a < b\n")])
    shared = bench.draw_mutants(one_site, 4, seed=25, testgen_cfg=SimpleNamespace(seed=0, mutants=8))
    alone = bench.draw_mutants(one_site, 4, seed=25, testgen_cfg=SimpleNamespace(seed=0, mutants=0))
    assert [m.held_out for m in shared] == [False] and [m.held_out for m in alone] == [True]
    assert all(m.kind == "mutants" and not m.correct for m in shared + alone)


def test_the_c_speed_quadratic_variant_keeps_the_answers(bench):
    slow = bench.quadratic_variant(TWO_SUM, "Solution().twoSum", c_speed=True)
    assert "_STRENGTH_C_SPEED = True" in slow
    ns: dict = {}
    exec(compile(slow, "<variant>", "exec"), ns)  # our own test fixture, not dataset code
    assert ns["Solution"]().twoSum([2, 7, 11, 15], 9) == [0, 1]
