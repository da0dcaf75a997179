"""The dedup stage end to end: outputs, accounting, representative, decontamination, CLI, seed corpus."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.dedup import Dedup, DedupConfig
from microcoder.pipeline.dedup.outputs import ALIAS_TYPE
from microcoder.pipeline.inputs import DUPLICATE
from microcoder.pipeline.io import read_jsonl, read_problems, read_table, write_problems
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, validate_problem

ROOT = Path(__file__).resolve().parents[1]
BOILERPLATE = "The first line contains a single integer t (1 <= t <= 100), the number of test cases."

ROBOT_PLAIN = (
    "A robot stands at cell (0, 0) of an infinite grid and receives a string of commands U, D, L and R, "
    "each moving it by one cell. Some commands may be deleted, but the remaining ones keep their order. "
    "Find the minimum number of deletions after which the robot finishes exactly at cell (x, y).\n\n"
    "Input\n" + BOILERPLATE + " Each test case contains two integers x and y (-10^9 <= x, y <= 10^9) and "
    "then the command string s (1 <= |s| <= 2 * 10^5).\n\nOutput\nFor each test case print the minimum "
    "number of deletions, or -1 if the robot can never reach the cell."
)
ROBOT_MARKDOWN = (
    "A robot stands at cell $(0, 0)$ of an infinite grid and receives a string of commands `U`, `D`, `L` "
    "and `R`, each moving it by one cell. Some commands may be **deleted**, but the remaining ones keep "
    "their order. Find the minimum number of deletions after which the robot finishes exactly at cell "
    "$(x, y)$.\n\n## Input\nThe first line contains a single integer $t$ ($1 \\le t \\le 100$), the number "
    "of test cases. Each test case contains two integers $x$ and $y$ ($-10^{9} \\le x, y \\le 10^{9}$) and "
    "then the command string $s$ ($1 \\le |s| \\le 2 \\cdot 10^{5}$).\n\n## Output\nFor each test case "
    "print the minimum number of deletions, or $-1$ if the robot can never reach the cell."
)
ARRAY = (
    "You are given an array a of n positive integers. In one operation you choose an index i (1 <= i < n) "
    "and replace both a_i and a_{i+1} by their greatest common divisor. Your task is to make all elements of "
    "the array equal using the minimum possible number of operations. It can be shown that this is always "
    "possible. Input: the first line contains n (2 <= n <= 2 * 10^5), the second line contains the n "
    "integers a_1, a_2, ..., a_n (1 <= a_i <= 10^9). Output: print one integer, the minimum number of "
    "operations. Example: for the array 4 6 8 the answer is 2, and for the array 5 5 5 the answer is 0."
)
ARRAY_REWORDED = (
    "You are given an array a of n positive integers. In one operation you choose an index i (1 <= i < n) "
    "and replace both a_i and a_{i+1} by their greatest common divisor. Your goal is to make all elements of "
    "the array equal using the minimum possible number of operations. It can be shown that this is always "
    "possible. Input: the first line contains n (2 <= n <= 2 * 10^5), the second line contains the n "
    "integers a_1, a_2, ..., a_n (1 <= a_i <= 10^9). Output: print one integer, the minimum number of "
    "operations. Example: for the array 6 9 12 the answer is 2, and for the array 7 7 7 the answer is 0."
)
STAMPS = (
    "Bob collects rare stamps and keeps them in m albums. The j-th album has b_j pages and every page "
    "holds up to four stamps. " + BOILERPLATE + " For every test case you are given m and the page counts; "
    "output the largest number of stamps Bob can store if no album may be completely full."
)
PALINDROME = (
    "A string is called almost a palindrome if it becomes a palindrome after changing at most one "
    "character. " + BOILERPLATE + " Each test case is a string s of lowercase letters. Print YES if s is "
    "almost a palindrome and NO otherwise."
)
GARDEN = (
    "Alice has a garden with n flower beds arranged in a row; the i-th bed holds a_i tulips. Every morning "
    "she may pick any two adjacent beds and move one tulip from the fuller bed to the emptier one. She wants "
    "every bed to hold the same number of tulips as soon as possible. " + BOILERPLATE + " Each test case "
    "consists of the number n followed by the n counts. For each test case print the minimum number of "
    "mornings she needs, or -1 if the beds can never be balanced."
)


def _tests(*pairs: tuple[str, str], kind: str = "public") -> list[TestCase]:
    return [TestCase(i, o, kind) for i, o in pairs]


def corpus() -> list[Problem]:
    ref = [ReferenceSolution("python", "print(0)")]
    return [
        Problem(id="cf/robot", source="codeforces", statement=ROBOT_PLAIN, style="stdio",
                tests=_tests(("1\n1 0\nR", "0")), contest_date="2023-03-01"),
        Problem(id="taco/robot", source="taco", statement=ROBOT_MARKDOWN, style="stdio",
                tests=_tests(("1\n1 0\nR", "0"), ("1\n0 1\nR", "-1"), ("1\n0 0\nU", "0")), reference_solutions=ref),
        Problem(id="cc/array", source="code_contests", statement=ARRAY, style="stdio",
                tests=_tests(("3\n4 6 8", "2"), ("3\n5 5 5", "0")) + _tests(("2\n1 1", "0"), kind="private"),
                reference_solutions=ref),
        Problem(id="cf/array", source="codeforces", statement=ARRAY_REWORDED, style="stdio",
                tests=_tests(("3\n4 6 8", "2"), ("3\n6 9 12", "2")) + _tests(("2\n2 3", "1"), kind="private"),
                reference_solutions=ref),
        Problem(id="cf/stamps", source="codeforces", statement=STAMPS, style="stdio", tests=_tests(("1\n1\n1", "3"))),
        Problem(id="cf/palindrome", source="codeforces", statement=PALINDROME, style="stdio",
                tests=_tests(("1\naba", "YES"))),
        Problem(id="taco/garden", source="taco", statement="# Garden\n\n" + GARDEN.replace("a_i", "$a_i$"),
                style="stdio", tests=_tests(("1\n2\n1 3", "1"))),
        Problem(id="cf/stamps", source="codeforces", statement="A different problem reusing the id.",
                style="stdio", tests=_tests(("1", "1"))),
        Problem(id="x/markup-only", source="x", statement="$$ ** $$", style="stdio", tests=_tests(("1", "1"))),
    ]


def _bench(tmp_path: Path) -> Path:
    path = tmp_path / "benchmark.jsonl"
    path.write_text(json.dumps({"id": "bench/garden", "source": "bench", "statement": GARDEN, "style": "stdio",
                                "tests": [{"input": "1\n2\n1 3", "output": "1"}]}) + "\n")
    return path


def _run(tmp_path: Path, name: str = "out", problems: list[Problem] | None = None, **cfg) -> tuple[Path, dict]:
    inp = tmp_path / "raw.parquet"
    if not inp.exists() or problems is not None:
        write_problems(inp, problems if problems is not None else corpus())
    cfg.setdefault("benchmarks", [{"name": "bench", "path": str(_bench(tmp_path))}])
    out = tmp_path / name
    return out, Dedup().run(DedupConfig(**cfg), inp, out, progress=False)


def _outputs(out: Path):
    kept = read_problems(out / "problems.parquet")
    clusters = read_table(out / "clusters.parquet").to_pylist()
    rejects = [r for _, r, _ in read_jsonl(out / "rejects.jsonl")]
    return kept, clusters, rejects


def test_outputs_partition_the_input_and_stats_add_up(tmp_path):
    out, stats = _run(tmp_path)
    kept, clusters, rejects = _outputs(out)
    kept_ids = [p.id for p in kept]
    alias_ids = [m for c in clusters for m in c["member_ids"][1:]]
    reject_ids = [r["id"] for r in rejects]
    # Every input row is exactly one of: kept or rejected (a folded duplicate is a reject too).
    assert sorted(kept_ids + reject_ids) == sorted(p.id for p in corpus())
    assert not set(kept_ids) & set(alias_ids)
    assert {c["kept_id"] for c in clusters} <= set(kept_ids)
    # Folded duplicates count as rejected (their own reason), so read == kept + rejected holds, and
    # each one's reject names the record it was folded into (clusters.parquet says the same).
    assert stats["unit"] == "problems"
    assert stats["read"] == len(corpus()) == stats["kept"] + stats["rejected"]
    assert stats["rejected_by_reason"] == {"benchmark_contamination": 1, "duplicate id": 1, "folded_duplicate": 2}
    assert (stats["kept"], stats["rejected_by_reason"]["folded_duplicate"]) == (len(kept), len(alias_ids))
    assert stats["rejected"] == len(rejects)
    folded = {r["id"]: r for r in rejects if r["reason"].startswith("folded_duplicate: ")}
    assert sorted(folded) == sorted(alias_ids)
    for c in clusters:
        for alias in c["member_ids"][1:]:
            r = folded[alias]
            assert f"{c['reason']} duplicate of {c['kept_id']}" in r["reason"] and c["cluster_id"] in r["reason"]
            assert (r["evidence"]["kept_id"], r["evidence"]["cluster_id"]) == (c["kept_id"], c["cluster_id"])
            assert r["record"]["id"] == alias and r["stage"] == "dedup"
    for source, c in stats["per_source"].items():
        assert c["read"] == c["kept"] + c["rejected"] == c["kept"] + sum(c["rejected_by_reason"].values()), source
    assert stats["per_source"]["codeforces"] == {"read": 5, "kept": 2, "rejected": 3, "rejected_by_reason": {
        "duplicate id": 1, "folded_duplicate": 2}}
    assert json.loads((out / "stats.json").read_text()) == stats
    # Settings live apart from the figures.
    assert "config" not in stats and "threshold" not in stats
    settings = json.loads((out / "settings.json").read_text())
    assert settings["threshold"] == 0.7 and settings["executor"] == "local"


def test_exact_and_near_clusters_and_representative(tmp_path):
    out, stats = _run(tmp_path)
    kept, clusters, _ = _outputs(out)
    by_kept = {c["kept_id"]: c for c in clusters}
    assert set(by_kept) == {"taco/robot", "cc/array"}
    robot, array = by_kept["taco/robot"], by_kept["cc/array"]
    # Markdown/LaTeX vs plain text is an exact duplicate; the record with more tests is kept.
    assert robot["member_ids"] == ["taco/robot", "cf/robot"] and robot["reason"] == "exact"
    assert robot["max_similarity"] == robot["min_similarity"] == 1.0
    # A reworded statement with other sample numbers is a near duplicate; ties on tests and
    # reference solutions fall to the newest... neither has a date, so to the id.
    assert array["member_ids"] == ["cc/array", "cf/array"] and array["reason"] == "near"
    assert 0.7 <= array["min_similarity"] < 1.0
    assert (stats["clusters"], stats["clusters_exact"], stats["clusters_near"]) == (2, 1, 1)
    # Problems that only share the "first line contains t" boilerplate stay apart.
    assert {"cf/stamps", "cf/palindrome"} <= {p.id for p in kept}
    robot_row = next(p for p in kept if p.id == "taco/robot")
    assert robot_row.extra["aliases"] == [{"id": "cf/robot", "source": "codeforces", "similarity": 1.0}]
    assert robot_row.extra["cluster_id"] == robot["cluster_id"]
    lone = next(p for p in kept if p.id == "cf/stamps")
    assert lone.extra["aliases"] == [] and lone.extra["cluster_id"].startswith("dd-")
    assert len({p.extra["cluster_id"] for p in kept}) == len(kept)


def test_source_priority_changes_the_kept_record(tmp_path):
    out, _ = _run(tmp_path, source_priority=["codeforces"])
    _, clusters, _ = _outputs(out)
    array = next(c for c in clusters if "cc/array" in c["member_ids"])
    assert array["kept_id"] == "cf/array"


def test_rejects_carry_benchmark_evidence(tmp_path):
    out, stats = _run(tmp_path)
    _, _, rejects = _outputs(out)
    by_reason = {r["reason"]: r for r in rejects if not r["reason"].startswith("folded_duplicate: ")}
    assert set(by_reason) == {"benchmark_contamination", DUPLICATE}
    hit = by_reason["benchmark_contamination"]
    assert hit["id"] == "taco/garden" and hit["stage"] == "dedup"
    assert hit["evidence"]["benchmark"] == "bench" and hit["evidence"]["benchmark_id"] == "bench/garden"
    assert hit["evidence"]["ngram_overlap"] > 0.9 and hit["record"]["statement"].startswith("# Garden")
    assert by_reason[DUPLICATE]["record"]["statement"] == "A different problem reusing the id."
    assert stats["contaminated_by_benchmark"] == {"bench": 1}
    assert stats["benchmarks"]["bench"]["items"] == 1
    assert stats["empty_statements"] == 1


def test_near_duplicates_of_a_benchmark_copy_are_rejected_too(tmp_path):
    copy = GARDEN.replace("flower beds", "flowerbeds")  # matches the benchmark directly
    # Too far from the benchmark to match it at these thresholds, but a near duplicate of `copy`.
    reworded = copy.replace("Every morning", "Each day").replace("as soon as possible", "quickly")
    problems = corpus()[:6] + [
        Problem(id="x/copy", source="x", statement=copy, style="stdio", tests=_tests(("1", "1"))),
        Problem(id="y/reworded", source="y", statement=reworded, style="stdio", tests=_tests(("1", "1")))]
    out, stats = _run(tmp_path, problems=problems, ngram_min_overlap=0.9, contamination_minhash_threshold=0.85)
    kept, clusters, rejects = _outputs(out)
    by_id = {r["id"]: r for r in rejects if r["reason"] == "benchmark_contamination"}
    assert set(by_id) == {"x/copy", "y/reworded"}
    assert by_id["x/copy"]["evidence"]["method"] != "via_duplicate"
    via = by_id["y/reworded"]["evidence"]
    assert via["method"] == "via_duplicate" and via["via_id"] == "x/copy" and via["benchmark_id"] == "bench/garden"
    assert via["via_similarity"] >= 0.7
    assert stats["rejected_by_reason"]["benchmark_contamination"] == 2 and stats["contaminated_via_duplicates"] == 1
    assert not {"x/copy", "y/reworded"} & {m for c in clusters for m in c["member_ids"]}
    assert stats["read"] == stats["kept"] + stats["rejected"] == 8


def test_output_schema_and_types(tmp_path):
    out, _ = _run(tmp_path)
    schema = pq.read_schema(out / "problems.parquet")
    assert schema.field("cluster_id").type == pa.string()
    assert schema.field("aliases").type == ALIAS_TYPE
    assert pq.read_schema(out / "clusters.parquet").names[:3] == ["cluster_id", "kept_id", "member_ids"]


def test_input_extra_columns_survive_and_old_dedup_columns_are_replaced(tmp_path):
    problems = corpus()
    for p in problems:
        p.extra = {"scrape_note": f"n-{p.id}", "cluster_id": "stale"}
    out, _ = _run(tmp_path, problems=problems)
    kept, _, _ = _outputs(out)
    assert all(p.extra["scrape_note"] == f"n-{p.id}" for p in kept)
    assert all(p.extra["cluster_id"] != "stale" for p in kept)


def test_merge_tests_unions_distinct_tests_when_samples_agree(tmp_path):
    out, stats = _run(tmp_path, merge_tests=True)
    kept, clusters, _ = _outputs(out)
    array = next(p for p in kept if p.id == "cc/array")
    # cf/array shares the public sample "3\n4 6 8" -> "2": its other tests are appended.
    assert [t.input for t in array.tests] == ["3\n4 6 8", "3\n5 5 5", "2\n1 1", "3\n6 9 12", "2\n2 3"]
    assert [t.kind for t in array.tests][-2:] == ["public", "private"]
    assert next(c for c in clusters if c["kept_id"] == "cc/array")["tests_added"] == 2
    assert stats["tests_added"] == 2  # cf/robot's only test is already among taco/robot's
    robot = next(p for p in kept if p.id == "taco/robot")
    assert len(robot.tests) == 3


def test_deterministic_and_sharded_input(tmp_path):
    out_a, _ = _run(tmp_path, "a")
    out_b, _ = _run(tmp_path, "b")
    for name in ("problems.parquet", "clusters.parquet"):
        assert read_table(out_a / name).equals(read_table(out_b / name))
    assert (out_a / "rejects.jsonl").read_text() == (out_b / "rejects.jsonl").read_text()
    shards = tmp_path / "shards"
    problems = corpus()
    write_problems(shards / "part-0.parquet", problems[:4])
    write_problems(shards / "part-1.parquet", problems[4:])
    cfg = DedupConfig(batch_size=2, benchmarks=[{"name": "bench", "path": str(_bench(tmp_path))}])
    stats = Dedup().run(cfg, shards, tmp_path / "c", progress=False)
    assert read_table(tmp_path / "c" / "problems.parquet").equals(read_table(out_a / "problems.parquet"))
    assert stats["kept"] == 5


def test_missing_benchmark_is_an_error_unless_optional(tmp_path):
    with pytest.raises(FileNotFoundError):
        _run(tmp_path, benchmarks=[{"name": "gone", "path": str(tmp_path / "nope.jsonl")}])
    _, stats = _run(tmp_path, benchmarks=[{"name": "gone", "path": str(tmp_path / "nope.jsonl"), "optional": True}])
    assert stats["benchmarks"]["gone"]["missing"] is True
    assert "benchmark_contamination" not in stats["rejected_by_reason"]


def test_config_validation():
    with pytest.raises(ValueError, match="shingle_kind"):
        DedupConfig(shingle_kind="line")
    with pytest.raises(ValueError, match="threshold"):
        DedupConfig(threshold=1.5)
    with pytest.raises(ValueError, match="unique"):
        DedupConfig(benchmarks=[{"name": "a", "path": "x"}, {"name": "a", "path": "y"}])


def _cli(*args: str):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    return CliRunner().invoke(app, ["dedup", *args])


def test_cli_runs_the_stage_with_params_and_overrides(tmp_path):
    inp = tmp_path / "raw.parquet"
    write_problems(inp, corpus())
    params = tmp_path / "params.yaml"
    params.write_text(f"dedup:\n  threshold: 0.7\n  benchmarks:\n    - name: bench\n      path: {_bench(tmp_path)}\n")
    result = _cli("--problems", str(inp), "--out-dir", str(tmp_path / "out"), "--params", str(params),
                  "--no-progress", "--set", "source_priority=[codeforces]")
    assert result.exit_code == 0, result.output
    assert "read 9, kept 5, rejected 4" in result.output and "benchmark_contamination 1" in result.output
    assert "folded_duplicate 2" in result.output
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["kept"] == 5


def test_cli_user_errors_are_one_line_exit_2(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("dedup:\n  benchmarks: []\n")
    missing = _cli("--problems", str(tmp_path / "nonexistent.parquet"), "--out-dir", str(tmp_path / "o"),
                   "--params", str(params))
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    assert "nonexistent.parquet does not exist" in missing.output
    inp = tmp_path / "raw.parquet"
    write_problems(inp, corpus())
    for bad in ("bogus_key=1", "threshold=high", "executor=spark"):
        result = _cli("--problems", str(inp), "--out-dir", str(tmp_path / "o"), "--params", str(params), "--set", bad)
        assert result.exit_code == 2 and "Traceback" not in result.output, (bad, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
    jsonl = tmp_path / "problems.jsonl"
    jsonl.write_text("{}\n")
    result = _cli("--problems", str(jsonl), "--out-dir", str(tmp_path / "o"), "--params", str(params))
    assert result.exit_code == 2 and "parquet" in result.output
    assert not (tmp_path / "o").exists()


def test_errors_about_a_shard_name_the_shard(tmp_path):
    """A folder of shards with one bad file: the error says which file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    params = tmp_path / "params.yaml"
    params.write_text("dedup:\n  benchmarks: []\n")
    shards = tmp_path / "raw"
    shards.mkdir()
    write_problems(shards / "part-0.parquet", corpus())
    (shards / "part-1.parquet").write_bytes(b"PAR1 not really")
    result = _cli("--problems", str(shards), "--out-dir", str(tmp_path / "o"), "--params", str(params))
    assert result.exit_code == 2 and "part-1.parquet" in result.output, result.output
    pq.write_table(pa.table({"id": ["x"]}), shards / "part-1.parquet")
    result = _cli("--problems", str(shards), "--out-dir", str(tmp_path / "o"), "--params", str(params))
    assert result.exit_code == 2 and "part-1.parquet" in result.output and "lacks Problem columns" in result.output


def test_help_lists_the_config_fields():
    result = _cli("--help")
    assert result.exit_code == 0
    for name in ("--problems", "--out-dir", "threshold", "executor", "ray_address", "ray_block_size"):
        assert name in result.output, name


def test_bad_records_are_rejected_with_their_reason_not_a_crash(tmp_path):
    inp = tmp_path / "raw.parquet"
    write_problems(inp, corpus()[:3])  # rows as a real scrape output holds them
    rows = pq.read_table(inp).to_pylist()
    rows.append(rows[0] | {"id": "bad/no-tests", "tests": []})
    rows.append(rows[0] | {"id": "bad/style", "style": "interactive-ish"})
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(inp)), inp)
    out, stats = _run(tmp_path, "out", problems=None)
    _, _, rejects = _outputs(out)
    by_id = {r["id"]: r for r in rejects}
    assert by_id["bad/no-tests"]["reason"].startswith("invalid record: ")
    assert by_id["bad/no-tests"]["record"]["statement"] == rows[0]["statement"]  # written as read
    assert by_id["bad/style"]["reason"].startswith("invalid record: ")
    assert stats["rejected_by_reason"]["invalid record"] == 2
    assert stats["read"] == 5 == stats["kept"] + stats["rejected"]


# --- the embedded seed corpus (written by another engineer; skipped until it exists) ----------
SEED = ROOT / "data" / "seed" / "problems.jsonl"
SEED_BENCH = ROOT / "data" / "seed" / "benchmark.jsonl"


@pytest.mark.skipif(not (SEED.exists() and SEED_BENCH.exists()), reason="data/seed corpus not present yet")
def test_seed_planted_duplicates_boilerplate_and_benchmark_copy(tmp_path):
    # The scrape stage drops the planted malformed records; dedup sees the valid ones.
    problems = [Problem.from_dict(r) for _, r, _ in read_jsonl(SEED) if not validate_problem(r)]
    inp = tmp_path / "raw.parquet"
    write_problems(inp, problems)
    out = tmp_path / "out"
    stats = Dedup().run(DedupConfig(benchmarks=[
        {"name": "seed-benchmark", "path": str(SEED_BENCH), "format": "problems"}]), inp, out, progress=False)
    kept, clusters, rejects = _outputs(out)
    cluster_of = {m: c["cluster_id"] for c in clusters for m in c["member_ids"]}
    cluster_of.update({p.id: p.extra["cluster_id"] for p in kept})

    pairs = [(p.id, p.meta["pair"]) for p in problems if p.meta.get("planted") == "near_duplicate"]
    pairs = {tuple(sorted(pair)) for pair in pairs}
    assert len(pairs) == 4, pairs
    for a, b in pairs:
        assert cluster_of.get(a) is not None and cluster_of.get(a) == cluster_of.get(b), (a, b)

    copies = {p.id: p.meta["benchmark_id"] for p in problems if p.meta.get("planted") == "benchmark_copy"}
    assert copies
    rejected = {r["id"]: r for r in rejects if r["reason"] == "benchmark_contamination"}
    for pid, bench_id in copies.items():
        assert pid in rejected and rejected[pid]["evidence"]["benchmark_id"] == bench_id
    assert set(rejected) == set(copies), "only the planted copies are benchmark contamination"

    planted = {x for pair in pairs for x in pair}
    boiler = [p.id for p in problems if "first line contains a single integer t" in p.statement.lower()
              and p.id not in planted and p.id not in copies]
    assert len(boiler) >= 3
    assert len({cluster_of[b] for b in boiler}) == len(boiler), "boilerplate-sharing problems were merged"
    assert stats["read"] == stats["kept"] + stats["rejected"]


REAL_NEAR_PAIRS = ("h-index", "h-index-ii", "binary-tree-preorder-traversal", "binary-tree-inorder-traversal",
                   "binary-tree-postorder-traversal", "minimize-malware-spread", "minimize-malware-spread-ii",
                   "minimum-absolute-difference-in-bst", "minimum-distance-between-bst-nodes")


def test_versions_and_siblings_stay_apart_and_true_duplicates_fold(tmp_path, bench_data):
    """LeetCodeDataset rows whose statements read alike once digits are masked: I/II versions and the
    three traversals are different problems (their samples disagree, or their bounds differ and no
    sample is shared); LeetCode 530 and 783 are one problem (same samples, same answers)."""
    from microcoder.pipeline.sources import build_options, read_source
    from microcoder.pipeline.sources.base import SourceContext

    src = bench_data / "leetcodedataset" / "LeetCodeDataset-v0.2.0-train.jsonl.gz"
    items = read_source("leetcodedataset", build_options("leetcodedataset", {"path": str(src)}), SourceContext("lcd"))
    problems = [p for p in items if isinstance(p, Problem) and p.source_id in REAL_NEAR_PAIRS]
    assert len(problems) == len(REAL_NEAR_PAIRS)
    out, stats = _run(tmp_path, problems=problems, benchmarks=[])
    _kept, clusters, _rejects = _outputs(out)
    assert [sorted(c["member_ids"]) for c in clusters] == [["lcd/minimum-absolute-difference-in-bst",
                                                            "lcd/minimum-distance-between-bst-nodes"]]
    assert stats["pairs"]["near_kept_apart"] >= 5


def test_versions_whose_tests_agree_fold_into_the_harder_one(tmp_path):
    easy = Problem(id="lc/sum-range", source="lc", title="Sum Range", statement="Given n <= 100 numbers, "
                   "print the sum of the numbers in the given range of indices, one query per line of input.",
                   style="stdio", difficulty="easy",
                   tests=[TestCase("3\n1 2 3\n", "6\n", "public"), TestCase("1\n5\n", "5\n", "public")])
    hard = replace(easy, id="lc/sum-range-ii", title="Sum Range II", difficulty="hard",
                   statement=easy.statement.replace("100", "100000"))
    out, _stats = _run(tmp_path, problems=[easy, hard], benchmarks=[])
    kept, clusters, _ = _outputs(out)
    assert [p.id for p in kept] == ["lc/sum-range-ii"] and clusters[0]["kept_id"] == "lc/sum-range-ii"
