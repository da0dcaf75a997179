"""The embedded seed corpus (data/seed): well-formed, planted cases as documented, io round-trips.

Fast checks only: nothing here runs a solution (the evaluator's tests do that)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from microcoder.pipeline.io import read_problems, write_problems
from microcoder.pipeline.schema import Problem, decode_functional_input, validate_problem

SEED_DIR = Path(__file__).resolve().parents[1] / "data" / "seed"
PROBLEMS = SEED_DIR / "problems.jsonl"
BENCHMARK = SEED_DIR / "benchmark.jsonl"
README = SEED_DIR / "README.md"
PLANTED_KINDS = ("near_duplicate", "wrong_output", "float_output", "multiple_answers", "multiple_answers_no_checker",
                 "malformed", "benchmark_copy")
EXPECTED_COUNTS = {"near_duplicate": 8, "wrong_output": 3, "float_output": 2, "multiple_answers": 1,
                   "multiple_answers_no_checker": 1, "malformed": 2, "benchmark_copy": 1}
BOILERPLATE = "The first line contains a single integer t (1 <= t <= 100), the number of test cases."


def _load(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{n}: blank line"
        rec = json.loads(line)
        assert isinstance(rec, dict), f"{path.name}:{n}: not a JSON object"
        rows.append(rec)
    return rows


@pytest.fixture(scope="module")
def seed() -> list[dict]:
    return _load(PROBLEMS)


@pytest.fixture(scope="module")
def bench() -> list[dict]:
    return _load(BENCHMARK)


def planted(rec: dict) -> str | None:
    return (rec.get("meta") or {}).get("planted")


@pytest.fixture(scope="module")
def valid(seed) -> list[dict]:
    return [r for r in seed if planted(r) != "malformed"]


def test_malformed_records_are_rejected_naming_the_field(seed):
    malformed = {r["id"]: r for r in seed if planted(r) == "malformed"}
    assert set(malformed) == {"seed/malformed-missing-tests", "seed/malformed-bad-style"}
    missing = malformed["seed/malformed-missing-tests"]
    assert "tests" not in missing
    assert validate_problem(missing) == ["tests: missing"]
    errs = validate_problem(malformed["seed/malformed-bad-style"])
    assert len(errs) == 1 and errs[0].startswith("style:") and "interactive-ish" in errs[0]


def test_every_other_record_is_valid(valid, bench):
    for rec in valid + bench:
        assert validate_problem(rec) == [], rec["id"]
        assert list(rec) == list(Problem.from_dict(rec).to_dict()), f"{rec['id']}: not in to_dict() shape"


def test_ids_unique_and_sources(seed, bench):
    ids = [r["id"] for r in seed + bench]
    assert len(ids) == len(set(ids)), [i for i, c in Counter(ids).items() if c > 1]
    for r in seed:
        assert r["source"] == "seed" and r["id"] == f"seed/{r['source_id']}", r["id"]
    for r in bench:
        assert r["source"] == "seed-bench" and r["id"] == f"seed-bench/{r['source_id']}", r["id"]
    for r in seed + bench:
        assert r["license"] == "Apache-2.0", r["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["contest_date"]), r["id"]


def test_seed_problems_are_complete(valid):
    assert len(valid) >= 44
    styles = Counter(r["style"] for r in valid)
    assert 0.5 <= styles["stdio"] / len(valid) <= 0.7, styles
    functional = [r for r in valid if r["style"] == "functional"]
    assert any(r["entry_point"].startswith("Solution().") for r in functional)
    assert any("." not in r["entry_point"] for r in functional)
    assert {r["difficulty"] for r in valid} == {"easy", "medium", "hard"}
    assert sum(any(s["language"] == "cpp" for s in r["reference_solutions"]) for r in valid) >= 10
    for r in valid:
        tests = r["tests"]
        kinds = [t["kind"] for t in tests]
        n_public = kinds.count("public")
        assert 1 <= n_public <= 2 and kinds[:n_public] == ["public"] * n_public, r["id"]
        assert len(tests) >= 6, r["id"]
        assert all(len(t["input"]) + len(t["output"]) < 2048 for t in tests), r["id"]
        assert any(s["language"] == "python" for s in r["reference_solutions"]), r["id"]
        assert "Example" in r["statement"], r["id"]


def test_public_examples_appear_in_statements(valid, bench):
    for r in valid + bench:
        for t in r["tests"]:
            if t["kind"] != "public":
                continue
            shown = t["input"].strip() if r["style"] == "stdio" else t["output"]
            assert shown in r["statement"], f"{r['id']}: public example not shown in the statement"


def test_functional_tests_are_json_and_entry_points_defined(valid, bench):
    for r in valid + bench:
        if r["style"] != "functional":
            continue
        name = r["entry_point"].removeprefix("Solution().")
        for t in r["tests"]:
            assert decode_functional_input(t["input"]), r["id"]
            json.loads(t["output"])
        for ref in r["reference_solutions"]:
            assert re.search(rf"^\s*def {re.escape(name)}\(", ref["code"], re.M), r["id"]
        if r["entry_point"].startswith("Solution()."):
            assert f"class Solution:\n    def {name}(self" in r["starter_code"], r["id"]


def _readme_plants() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {k: set() for k in PLANTED_KINDS}
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in found:
            found[cells[0]] |= set(re.findall(r"`(seed/[a-z0-9-]+)`", cells[1]))
    return found


def test_planted_cases_match_readme(seed):
    in_data: dict[str, set[str]] = {k: set() for k in PLANTED_KINDS}
    for r in seed:
        if planted(r) is not None:
            assert planted(r) in in_data, f"{r['id']}: unknown plant {planted(r)!r}"
            in_data[planted(r)].add(r["id"])
    assert in_data == _readme_plants()
    assert {k: len(v) for k, v in in_data.items()} == EXPECTED_COUNTS


def test_near_duplicates_are_symmetric_pairs(seed):
    by_id = {r["id"]: r for r in seed}
    for r in seed:
        if planted(r) == "near_duplicate":
            other = by_id[r["meta"]["pair"]]
            assert other["id"] != r["id"]
            assert planted(other) == "near_duplicate" and other["meta"]["pair"] == r["id"]


def test_wrong_outputs_are_single_private_tests(seed):
    for r in seed:
        if planted(r) == "wrong_output":
            i = r["meta"]["test_index"]
            assert r["tests"][i]["kind"] == "private", r["id"]
            assert len(r["tests"]) - 1 >= 6, f"{r['id']}: fewer than 6 good tests once the bad one is dropped"


def test_checkers_of_planted_problems(seed):
    for r in seed:
        if planted(r) == "float_output":
            c = r["checker"]
            assert (c["kind"], c["rel_tol"], c["abs_tol"]) == ("float", 1e-6, 1e-6), r["id"]
        elif planted(r) == "multiple_answers":
            c = r["checker"]
            assert (c["kind"], c["language"], c["protocol"]) == ("program", "python", "kattis")
            program = c["program"]
            compile(program, "checker.py", "exec")  # syntax only; it runs in the evaluator's sandbox
            assert "42" in program and "43" in program and "judgemessage.txt" in program
        else:
            assert r.get("checker") is None, f"{r['id']}: unexpected checker"


def test_benchmark_copy_points_at_a_benchmark_problem(seed, bench):
    bench_ids = {b["id"] for b in bench}
    copies = [r for r in seed if planted(r) == "benchmark_copy"]
    assert copies and all(r["meta"]["benchmark_id"] in bench_ids for r in copies)


def test_boilerplate_sharing_problems_exist(valid):
    sharing = [r["id"] for r in valid if BOILERPLATE in " ".join(r["statement"].split()) and planted(r) is None]
    assert len(sharing) >= 3, sharing


def test_benchmark_covers_platforms_and_difficulties(bench):
    assert len(bench) == 10
    assert {b["platform"] for b in bench} == {"atcoder", "codeforces", "leetcode"}
    assert {b["difficulty"] for b in bench} == {"easy", "medium", "hard"}
    easy = sum(b["difficulty"] == "easy" for b in bench)
    assert easy >= len(bench) / 2 - 1
    for b in bench:
        assert b["contest_date"].startswith("2025-"), b["id"]
        assert len(b["tests"]) >= 5, b["id"]
        assert any(s["language"] == "python" for s in b["reference_solutions"]), b["id"]


def test_corpus_stays_small():
    assert PROBLEMS.stat().st_size < 160_000
    assert BENCHMARK.stat().st_size < 40_000


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_io_round_trips_every_valid_problem(valid, bench, tmp_path, suffix):
    records = valid + bench
    path = tmp_path / f"seed{suffix}"
    assert write_problems(path, [Problem.from_dict(r) for r in records]) == len(records)
    back = read_problems(path)
    assert [p.to_dict() for p in back] == records
