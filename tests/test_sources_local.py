"""Local-format sources: our jsonl, HumanEval, LiveCodeBench rows, LeetCodeDataset, Kattis packages."""

from __future__ import annotations

import base64
import gzip
import json
import pickle
import zlib
from pathlib import Path

import pytest

from microcoder.pipeline.schema import Problem, decode_functional_input, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError

FIX = Path(__file__).parent / "fixtures" / "sources"


def run(kind: str, name: str | None = None, **options) -> tuple[list[Problem], list[Reject]]:
    items = list(read_source(kind, build_options(kind, options), SourceContext(name or kind)))
    problems = [i for i in items if isinstance(i, Problem)]
    rejects = [i for i in items if isinstance(i, Reject)]
    for p in problems:
        assert validate_problem(p) == [], p.id
    return problems, rejects


def by_id(items):
    return {i.id: i for i in items}


# --- our jsonl --------------------------------------------------------------------------------
def test_jsonl_keeps_valid_records_and_rejects_malformed_ones():
    problems, rejects = run("jsonl", path=str(FIX / "seed.jsonl"))
    assert [p.id for p in problems] == ["seed/add-two", "seed/max-of-list", "seed/echo"]
    assert problems[0].checker.kind == "tokens" and problems[0].reference_solutions[0].language == "python"
    assert problems[1].style == "functional" and problems[1].entry_point == "max_of"
    codes = sorted(r.code for r in rejects)
    assert codes == ["bad_json", "bad_json", "invalid_problem", "invalid_problem"]
    invalid = by_id(r for r in rejects if r.code == "invalid_problem")
    assert "style" in invalid["seed/bad-style"].detail
    assert "tests: empty" in invalid["seed/no-tests"].detail and "entry_point" in invalid["seed/no-tests"].detail
    assert any("expected a JSON object" in r.detail for r in rejects)


def test_jsonl_truncated_gzip_is_a_reject_not_a_crash(tmp_path):
    data = gzip.compress((FIX / "seed.jsonl").read_bytes())
    path = tmp_path / "seed.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    problems, rejects = run("jsonl", path=str(path))
    assert rejects and rejects[-1].code == "unreadable"
    assert "breaks after line" in rejects[-1].detail


def test_missing_file_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        run("jsonl", path=str(tmp_path / "absent.jsonl"))


def test_unknown_option_lists_valid_ones():
    with pytest.raises(SourceError, match="valid"):
        build_options("jsonl", {"pth": "x"})


# --- HumanEval --------------------------------------------------------------------------------
def test_humaneval_converts_literal_asserts_and_counts_the_rest():
    problems, rejects = run("humaneval", path=str(FIX / "humaneval_mini.jsonl"))
    add = by_id(problems)["humaneval/900"]
    assert add.style == "functional" and add.entry_point == "add" and add.license == "MIT"
    pairs = [(decode_functional_input(t.input), json.loads(t.output)) for t in add.tests]
    # keyword call reordered by the signature; reversed equality; float result kept
    assert pairs == [([0, 1], 1), ([5, 7], 12), ([2, 3], 5), ([1.5, 1.0], 2.5)]
    assert add.meta["skipped_asserts"] == 3  # abs(...) < tol, assert True, loop assert on locals
    assert add.reference_solutions[0].code.startswith("def add(") and "return x + y" in add.reference_solutions[0].code
    assert "Add two numbers" in add.statement and add.starter_code.startswith("def add(")
    # tuples become lists; set and complex results are skipped
    zipped = by_id(problems)["humaneval/901"]
    assert [json.loads(t.output) for t in zipped.tests] == [[[1, 2], [2, 3]], []]
    assert zipped.meta["skipped_asserts"] == 2
    reasons = {r.id: r.code for r in rejects}
    assert reasons == {"humaneval/902": "no_convertible_tests", "humaneval/903": "bad_tests",
                       "humaneval/904": "bad_record"}


def test_humaneval_default_path_reads_the_installed_package():
    problems, rejects = run("humaneval")
    assert len(problems) + len(rejects) == 164
    assert len(problems) >= 150
    assert all(r.code == "no_convertible_tests" for r in rejects)


# --- LiveCodeBench ----------------------------------------------------------------------------
def _compressed(obj) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(obj))).decode()


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_livecodebench_rows(tmp_path):
    rows = [json.loads(line) for line in (FIX / "livecodebench.jsonl").read_text().splitlines()]
    private = [{"input": "2\n1 1\n5 5\n", "output": "Draw\n", "testtype": "stdin"}]
    good = dict(rows[1], question_id="abc337_a2", private_test_cases=_compressed(json.dumps(private)))
    not_str = dict(rows[1], question_id="abc337_a3", private_test_cases=_compressed(private))
    evil = dict(rows[1], question_id="abc337_a4", private_test_cases=_compressed(Evil()))
    path = tmp_path / "lcb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + [good, not_str, evil]))
    problems, rejects = run("livecodebench", name="lcb", path=str(path))
    got = by_id(problems)
    func = got["lcb/3001"]
    assert func.style == "functional" and func.entry_point == "Solution().countPairs" and "class Solution" in func.starter_code
    assert [t.kind for t in func.tests] == ["public", "private"] and func.contest_date == "2024-01-06"
    stdio = got["lcb/abc337_a2"]
    assert stdio.style == "stdio" and stdio.tests[-1].output == "Draw\n" and stdio.platform == "atcoder"
    reasons = by_id(rejects)
    assert reasons["lcb/1900A"].code == "bad_tests" and "base64" in reasons["lcb/1900A"].detail
    assert reasons["lcb/1900B"].code == "bad_record"
    assert "only a str" in reasons["lcb/abc337_a3"].detail
    assert "refused global" in reasons["lcb/abc337_a4"].detail


# --- LeetCodeDataset --------------------------------------------------------------------------
def test_leetcodedataset_keyword_inputs_become_positional_json():
    problems, rejects = run("leetcodedataset", name="lcd", path=str(FIX / "leetcodedataset.jsonl"))
    two = by_id(problems)["lcd/two-sum"]
    assert two.entry_point == "Solution().twoSum" and two.starter_code.startswith("class Solution")
    assert [decode_functional_input(t.input) for t in two.tests] == [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6]]
    assert [t.output for t in two.tests] == ["[0, 1]", "[1, 2]", "[0, 1]"]
    assert two.meta["skipped_tests"] == 1  # the set literal has no JSON form
    assert "from typing import *" in two.reference_solutions[0].code and "def twoSum" in two.reference_solutions[0].code
    assert "Example 1" in two.statement and two.license == "MIT" and "LeetCode" in two.meta["license_note"]
    pal = by_id(problems)["lcd/palindrome-number"]
    assert [t.output for t in pal.tests] == ["true", "false"]  # JSON spellings accepted
    reasons = {r.id: r.code for r in rejects}
    assert reasons == {"lcd/lowest-common-ancestor-of-a-binary-tree": "unsupported_types",
                       "lcd/copy-list-with-random-pointer": "unsupported_types",
                       "lcd/no-convertible": "no_convertible_tests", "lcd/missing-completion": "bad_record"}


@pytest.mark.parametrize("version", ["v0.1.0-test", "v0.2.0-test"])
def test_leetcodedataset_real_files(bench_data, version):
    path = bench_data / "leetcodedataset" / f"LeetCodeDataset-{version}.jsonl.gz"
    problems, rejects = run("leetcodedataset", path=str(path))
    assert len(problems) + len(rejects) in (175, 200)
    assert not rejects  # ListNode / TreeNode problems convert too


# --- Kattis -----------------------------------------------------------------------------------
def test_kattis_packages():
    problems, rejects = run("kattis", path=str(FIX / "kattis"))
    got = by_id(problems)
    hello = got["kattis/hello"]
    assert [t.kind for t in hello.tests] == ["public", "private"] and hello.meta["skipped_tests"] == 1
    assert hello.time_limit_s == 1.5 and hello.memory_limit_mb == 512 and hello.license == "cc by-sa"
    assert hello.checker.kind == "tokens" and hello.checker.case_sensitive is False
    assert sorted(r.language for r in hello.reference_solutions) == ["cpp", "python"]  # wrong_answer/ is not a reference
    assert hello.meta["time_multiplier"] == 3 and "$a+b$" in hello.statement
    floaty = got["kattis/floaty"]
    assert floaty.title == "Half It" and "## Input" in floaty.statement and "comment" not in floaty.statement
    assert (floaty.checker.kind, floaty.checker.rel_tol, floaty.checker.abs_tol) == ("float", 1e-4, 0.0)
    assert floaty.checker.case_sensitive is True and floaty.time_limit_s == 2.0
    anyorder = got["kattis/anyorder"]
    assert anyorder.checker.kind == "program" and anyorder.checker.protocol == "kattis"
    assert anyorder.checker.language == "cpp" and "inline void accept()" in anyorder.checker.program
    assert '#include "validate.h"' not in anyorder.checker.program and "10^{5}" in anyorder.statement
    assert {r.id: r.code for r in rejects} == {"kattis/guess": "bad_validator", "kattis/broken": "bad_package",
                                               "kattis/notests": "no_tests"}


def test_kattis_validator_with_two_sources_is_a_bundle(tmp_path):
    """A validator folder of several sources is a program directory (built and run as the format
    says), no longer a reject."""
    import shutil

    pkg = tmp_path / "anyorder"
    shutil.copytree(FIX / "kattis" / "anyorder", pkg)
    (pkg / "output_validators" / "checker" / "extra.py").write_text("print(1)\n")
    problems, rejects = run("kattis", path=str(pkg))
    assert not rejects and problems[0].checker.language == "bundle"
