"""bench/heldout_strength.py's own pieces: the docstring's examples as tests, the hidden half, the
time-limit rules. The benchmark itself is not run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from microcoder.pipeline.schema import Problem

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_heldout_strength", ROOT / "bench" / "heldout_strength.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PROMPT = '''def pick(xs: list, k: int) -> list:
    """Pick things.
    >>> pick([1, 2, 3], 2)
    [1, 2]
    >>> pick([], 0) == []
    True
    pick([5], 1) ➞ [5]
    pick([7, 8], 1) == [7].
    For example pick(xs, k) returns the first k.
    """
'''


def test_the_docstring_examples_become_asserts_and_tests(bench):
    asserts = bench.docstring_asserts(PROMPT, "pick")
    assert asserts == ["assert pick([1, 2, 3], 2) == [1, 2]", "assert pick([], 0) == []",
                       "assert pick([5], 1) == [5]", "assert pick([7, 8], 1) == [7]"]
    p = Problem(id="he/x", source="humaneval", statement="", style="functional", starter_code=PROMPT, entry_point="pick")
    tests = bench.docstring_tests(p)
    assert [(t.input, t.output, t.kind) for t in tests][0] == ("[1, 2, 3]\n2", "[1, 2]", "public")
    assert len(tests) == 4


def test_the_hidden_half_is_seeded_per_label_and_order_free(bench):
    sols = [bench.ts.Solution(f"p#s{i}", "p", "samples", f"print({i})", i % 3 == 0) for i in range(12)]
    hidden = bench.hidden_half(36, "p", sols)
    assert bench.hidden_half(36, "p", sols[::-1]) == hidden
    assert sum(s.sid in hidden for s in sols if s.correct) == 2 and sum(s.sid in hidden for s in sols if not s.correct) == 4


def test_time_limit_rules(bench):
    assert bench.rule_limit(0.01, "5:whole:1") == 1.0  # problemtools: rounded to whole seconds, at least 1
    assert bench.rule_limit(0.31, "5:whole:1") == 2.0
    assert bench.rule_limit(0.31, "2:tenth:0.1") == 0.7  # 0.62 up to a tenth
    assert bench.rule_limit(0.01, "3:tenth:0.5") == 0.5
