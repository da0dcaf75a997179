from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq
import pytest
import yaml

from microcoder.pipeline.build import Build, BuildConfig, parse_size
from microcoder.pipeline.card import size_category
from microcoder.pipeline.difficulty.filter import Filter, FilterConfig
from microcoder.pipeline.io import read_problems, write_json, write_problems
from microcoder.pipeline.rollout.runner import write_shard
from microcoder.pipeline.schema import Problem, TestCase

SOURCES = ["codeforces", "codeforces", "leetcode", "atcoder"]


def problem(i: int) -> Problem:
    functional = i % 3 == 0
    return Problem(
        id=f"p{i:02d}", source=SOURCES[i % 4], statement=f"Problem {i}. " + "words " * 40, title=f"T{i}",
        style="functional" if functional else "stdio", entry_point="solve" if functional else None,
        tests=[TestCase("1" if functional else "1\n", "1" if functional else "1\n")] * (1 + i % 3),
        difficulty=["easy", "medium", "hard"][i % 3], platform=SOURCES[i % 4], license="MIT",
    )


@pytest.fixture
def filtered(tmp_path):
    problems = [problem(i) for i in range(12)]
    write_problems(tmp_path / "validated.parquet", problems)
    rows = []
    for i, p in enumerate(problems):
        correct = i % 4  # pass rates 0, .25, .5, .75 (all in band)
        rows += [{"problem_id": p.id, "sample_index": j, "completion": "", "tokens": 1, "finish_reason": "stop",
                  "truncated": False, "status": "AC" if j < correct else "WA", "passed": 0, "total": 1,
                  "reason": None} for j in range(4)]
    write_shard(tmp_path / "rollouts" / "shards" / "part-00000.parquet", rows)
    data = tmp_path / "data"
    Filter().run(FilterConfig(), tmp_path / "validated.parquet", data / "filtered",
                 rollouts=tmp_path / "rollouts")
    write_json(data / "dedup" / "stats.json", {"problems_in": 20, "exact_duplicates": 5, "near_duplicates": 3})
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"filter": {"max_pass_rate": 0.75}, "build": {"version": "1.2.3"}}))
    return tmp_path, data, params


def test_build_layout_card_and_load_dataset(filtered, tmp_path):
    tmp, data, params = filtered
    out = data / "curated"
    cfg = BuildConfig(version="1.2.3", max_shard_size="1KB")
    stats = Build().run(cfg, data / "filtered" / "problems.parquet", out, data_dir=data, params_path=params)
    shards = sorted((out / "data").glob("*.parquet"))
    n = len(shards)
    assert n > 1 and [s.name for s in shards] == [f"train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    rows = [r for s in shards for r in pq.read_table(s).to_pylist()]
    assert len(rows) == 12 == stats["kept"] == stats["read"] and stats["rejected"] == 0

    # The card's numbers are the shards' numbers.
    assert stats["by_source"] == dict(Counter(r["source"] for r in rows))
    assert stats["by_style"] == dict(Counter(r["style"] for r in rows))
    assert stats["tests"] == sum(len(r["tests"]) for r in rows)
    assert stats["unsolved"] == sum(bool(r["unsolved"]) for r in rows) == 3
    hist = stats["pass_rate_histogram"]
    assert hist["0.0-0.1"] == 3 and hist["0.2-0.3"] == 3 and hist["0.5-0.6"] == 3 and hist["0.7-0.8"] == 3
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["configs"][0] == {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}
    assert sorted(c["config_name"] for c in front["configs"][1:]) == [
        "band-0.1-0.9", "platform-atcoder", "platform-codeforces", "platform-leetcode", "unsolved"]
    assert front["size_categories"] == ["n<1K"] and front["license"] == ["mit", "other"]  # LeetCode statements are not MIT
    assert "text-generation" in front["task_categories"] and "code" in front["tags"]
    assert "# MicroCoder-Dataset v1.2.3" in card
    assert "| codeforces | 6 |" in card and "| functional | 4 |" in card
    assert "| exact_duplicates | 5 |" in card and "No `validate` stats were found" in card
    assert "max_pass_rate: 0.75" in card and stats["git_revision"] in card
    # stats.json: the build's own figures in the shared vocabulary, no upstream copies, no settings.
    saved = json.loads((out / "stats.json").read_text())
    assert saved["by_source"] == stats["by_source"] and saved["unit"] == "problems"
    assert saved["read"] == saved["kept"] + saved["rejected"] == 12
    assert "upstream" not in saved and "version" not in saved and "near_duplicates" not in json.dumps(saved)
    assert json.loads((out / "settings.json").read_text())["version"] == "1.2.3"

    # Training view: chat prompt, tests, checker, metadata.
    r = next(r for r in rows if r["id"] == "p03")
    assert [m["role"] for m in r["prompt"]] == ["system", "user"] and "function `solve`" in r["prompt"][1]["content"]
    assert r["pass_rate"] == 0.75 and r["selection_reason"] == "in_band" and r["tests"][0]["input"] == "1"

    # Plots for DVC.
    hist_csv = (out / "plots" / "pass_rate_hist.csv").read_text().splitlines()
    assert hist_csv[0] == "bin,count" and len(hist_csv) == 11
    by_source = (out / "plots" / "difficulty_by_source.csv").read_text().splitlines()
    assert by_source[0] == "source,difficulty,label,count,mean_pass_rate"
    assert sum(int(line.split(",")[3]) for line in by_source[1:]) == 12

    # And the Hub loader reads it as one train split.
    from datasets import load_dataset

    cache = tmp_path / "hf-cache"
    ds = load_dataset(str(out), cache_dir=str(cache))
    assert list(ds) == ["train"] and ds["train"].num_rows == 12
    assert sorted(ds["train"]["id"]) == sorted(r["id"] for r in rows)
    assert front["dataset_info"]["splits"] == [{"name": "train", "num_bytes": front["dataset_info"]["dataset_size"],
                                                "num_examples": 12}]

    # A rebuild replaces the old shard set, and `datasets` does not serve the old cached rows.
    few = data / "few.parquet"
    write_problems(few, read_problems(data / "filtered" / "problems.parquet")[:5])
    Build().run(BuildConfig(version="1.2.3"), few, out, data_dir=data, params_path=params)
    assert [s.name for s in (out / "data").glob("*.parquet")] == ["train-00000-of-00001.parquet"]
    assert load_dataset(str(out), cache_dir=str(cache), split="train").num_rows == 5


def test_helpers():
    from microcoder.pipeline.card import card_license

    assert card_license({"Apache-2.0": 3}) == "apache-2.0"
    assert card_license({"MIT": 3, "unknown": 1}) == "other" and card_license({"MIT": 1, "CC BY 4.0": 2}) == "other"
    assert parse_size("256MB") == 256_000_000 and parse_size("1.5GB") == 1_500_000_000 and parse_size(10) == 10
    with pytest.raises(ValueError):
        parse_size("lots")
    assert size_category(999) == "n<1K" and size_category(25_000) == "10K<n<100K"


def test_bad_records_unfiltered_input_and_accounting(tmp_path):
    from microcoder.pipeline.io import read_jsonl

    good = [problem(i) for i in range(4)]
    bad = [Problem(id="no-tests", source="seed", statement="s", style="stdio", tests=[]),
           Problem(id="p01", source="seed", statement="a second p01", style="stdio", tests=[TestCase("1", "1")])]
    path = tmp_path / "validated.parquet"  # not through the filter: no difficulty columns at all
    write_problems(path, good + bad)
    out = tmp_path / "curated"
    stats = Build().run(BuildConfig(language="cpp"), path, out, data_dir=tmp_path / "none",
                        params_path=tmp_path / "none")
    rejects = {r["id"]: r["reason"] for _, r, _ in read_jsonl(out / "rejects.jsonl")}
    assert "tests: empty" in rejects["no-tests"] and rejects["p01"].startswith("duplicate id")
    assert "cannot build the training prompt" in rejects["p00"]  # functional, asked for C++
    assert sorted(rejects) == ["no-tests", "p00", "p01", "p03"]
    assert stats["read"] == 6 == stats["kept"] + stats["rejected"] and stats["kept"] == 2
    assert stats["rejected_by_reason"] == {"cannot build the training prompt": 2, "duplicate id": 1,
                                         "invalid record": 1}
    rows = pq.read_table(out / "data" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["id"] for r in rows] == ["p01", "p02"] and rows[0]["statement"].startswith("Problem 1.")
    assert rows[0]["pass_rate"] is None and rows[0]["selection_reason"] is None  # columns there, null
    assert stats["by_selection_reason"] == {"unknown": 2}
    assert "4 of the build's 6 input records could not be built" in (out / "README.md").read_text()
    # nothing outside the band: out_of_band/ is there, empty (a DVC output of build: a missing one fails repro)
    assert (out / "out_of_band").is_dir() and not any((out / "out_of_band").iterdir())


def test_empty_or_missing_input_is_an_error_and_keeps_the_previous_build(tmp_path):
    from microcoder.pipeline.inputs import InputError

    out = tmp_path / "curated"
    write_problems(tmp_path / "some.parquet", [problem(1), problem(2)])
    Build().run(BuildConfig(), tmp_path / "some.parquet", out, data_dir=tmp_path,
                params_path=tmp_path / "none")
    before = sorted(p.name for p in (out / "data").iterdir())
    write_problems(tmp_path / "empty.parquet", [])
    with pytest.raises(InputError, match="no problems to build"):
        Build().run(BuildConfig(), tmp_path / "empty.parquet", out, data_dir=tmp_path,
                    params_path=tmp_path / "none")
    with pytest.raises(InputError, match="does not exist"):
        Build().run(BuildConfig(), tmp_path / "absent.parquet", out, data_dir=tmp_path,
                    params_path=tmp_path / "none")
    assert sorted(p.name for p in (out / "data").iterdir()) == before


def test_shards_are_swapped_in_whole(tmp_path, monkeypatch):
    import microcoder.pipeline.build as build
    from microcoder.training.data import load_training_problems

    out = tmp_path / "curated"
    write_problems(tmp_path / "many.parquet", [problem(i) for i in range(12)])
    cfg = BuildConfig(max_shard_size="1KB")
    Build().run(cfg, tmp_path / "many.parquet", out, data_dir=tmp_path, params_path=tmp_path / "none")
    first = sorted(p.name for p in (out / "data").iterdir())
    assert len(first) > 2

    # A build that dies after its second shard leaves the first build whole, and no staging folder.
    calls = {"n": 0}
    real = pq.write_table

    def dying(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("killed")
        return real(*a, **kw)

    write_problems(tmp_path / "few.parquet", [problem(i) for i in range(20, 26)])
    monkeypatch.setattr(build.pq, "write_table", dying)
    with pytest.raises(KeyboardInterrupt):
        Build().run(cfg, tmp_path / "few.parquet", out, data_dir=tmp_path, params_path=tmp_path / "none")
    monkeypatch.setattr(build.pq, "write_table", real)
    assert sorted(p.name for p in (out / "data").iterdir()) == first and not list(out.glob(".data-*"))
    assert len(load_training_problems(out).problems) == 12

    # What a SIGKILL leaves (a staging folder) is never read, and the next build removes it.
    (out / ".data-staging-x").mkdir()
    write_problems(out / ".data-staging-x" / "train-00000-of-00001.parquet", [problem(99)])
    assert len(load_training_problems(out).problems) == 12
    Build().run(cfg, tmp_path / "few.parquet", out, data_dir=tmp_path, params_path=tmp_path / "none")
    assert not list(out.glob(".data-*"))
    assert sorted(p.id for p in load_training_problems(out).problems) == [f"p{i}" for i in range(20, 26)]


def test_no_empty_shard(tmp_path):
    from microcoder.pipeline.build import training_table, write_shards

    table, _ = training_table([problem(i) for i in (1, 2, 4, 5, 7)], BuildConfig())
    paths = write_shards(table, tmp_path, max_shard_bytes=table.nbytes // 4 + 1)  # 4 by size -> 2 rows each -> 3
    assert [pq.read_metadata(p).num_rows for p in paths] == [2, 2, 1]
    assert [p.name for p in paths] == [f"train-{i:05d}-of-00003.parquet" for i in range(3)]


def test_card_shows_each_stages_effective_settings_with_secrets_redacted(filtered):
    """A stage run with `--set` records what it ran with (settings.json); the card shows that, not
    params.yaml, and never a secret-looking value."""
    tmp, data, params = filtered
    settings = json.loads((data / "filtered" / "settings.json").read_text())
    assert settings["max_pass_rate"] == FilterConfig().max_pass_rate
    write_json(data / "filtered" / "settings.json", {**settings, "max_pass_rate": 0.6})
    write_json(data / "rollouts" / "stats.json", {"samples": 8, "this_run": {"seconds": 1.5}})
    write_json(data / "rollouts" / "settings.json", {
        "backend": "openai", "backend_options": {"api_key": "sk-live-123", "api_key_env": "OPENAI_API_KEY"},
        "max_tokens": 64})
    Build().run(BuildConfig(version="1.2.3"), data / "filtered" / "problems.parquet", data / "curated",
                data_dir=data, params_path=params)
    card = (data / "curated" / "README.md").read_text()
    settings = yaml.safe_load(card.split("```yaml\n")[-1].split("```")[0])
    assert settings["filter"]["max_pass_rate"] == 0.6  # the stage's own record wins over params.yaml's 0.75
    assert settings["rollout"]["backend_options"] == {"api_key": "<redacted>", "api_key_env": "OPENAI_API_KEY"}
    assert settings["rollout"]["max_tokens"] == 64 and "sk-live-123" not in card
    assert "| samples | 8 |" in card and "this_run" not in card


def test_card_shows_the_generated_tests_strength(filtered):
    tmp, data, params = filtered
    write_json(data / "testgen" / "stats.json", {
        "tests_added": 30, "problems_augmented": 3,
        "mutants": {"mutants": 40, "problems": 3, "kill_rate_examples": 0.5, "kill_rate_with_generated": 0.875}})
    Build().run(BuildConfig(), data / "filtered" / "problems.parquet", data / "curated", data_dir=data,
                params_path=params)
    card = (data / "curated" / "README.md").read_text()
    assert "added 30 tests to 3 problems" in card and "alone kill 50.0%" in card and "generated tests 87.5%" in card
    assert "### testgen" in card


def test_card_reads_settings_from_stats_written_before_settings_json(filtered):
    """An upstream stats.json of the old shape (settings under `config`) shows them as settings, not figures."""
    tmp, data, params = filtered
    write_json(data / "dedup" / "stats.json", {"read": 20, "kept": 12, "config": {"threshold": 0.55}})
    Build().run(BuildConfig(), data / "filtered" / "problems.parquet", data / "curated", data_dir=data,
                params_path=params)
    card = (data / "curated" / "README.md").read_text()
    settings = yaml.safe_load(card.split("```yaml\n")[-1].split("```")[0])
    assert settings["dedup"] == {"threshold": 0.55} and "config.threshold" not in card and "| kept | 12 |" in card


def test_card_has_a_test_strength_section_with_tpr_tnr_per_source_and_difficulty(filtered):
    """Issue 25: the card states TPR and TNR with their counts (validate), per source and difficulty, what
    the caps cost, testgen's known-wrong figures before -> after, the mutants on their own line, and how
    many generated tests rest on a single reference."""
    from microcoder.pipeline.strength import add, record

    tmp, data, params = filtered
    by_source = {"codeforces": record(10, 9, 4, 3), "kattis": record(2, 2, 6, 6)}
    write_json(data / "validated" / "stats.json", {
        "read": 20, "kept": 12, "rejected": 8, "wrong_solutions": {"ran": 10, "caught": 9},
        "strength": {"kept": add(by_source.values()), "before_caps": record(12, 11, 10, 10),
                     "by_source": by_source, "by_difficulty": {"easy": record(12, 11, 10, 9)},
                     "problems_measured": 7}})
    write_json(data / "testgen" / "stats.json", {
        "tests_added": 30, "problems_augmented": 3,
        "strength": {"problems": 3,
                     "before": {"known_wrong": record(2, 2, 5, 3), "mutants": record(0, 0, 40, 20)},
                     "after": {"known_wrong": record(2, 2, 5, 5), "mutants": record(0, 0, 40, 35)},
                     "by_source": {"kattis": {"known_wrong": record(2, 2, 5, 5), "mutants": record(0, 0, 40, 35)}}},
        "agreement": {"tests_by_references": {"2": 20, "1": 10}, "single_reference": 10}})
    Build().run(BuildConfig(), data / "filtered" / "problems.parquet", data / "curated", data_dir=data,
                params_path=params)
    card = (data / "curated" / "README.md").read_text()
    section = card.split("## Test strength\n")[1].split("\n## ")[0]
    assert "over its 7 kept problems" in section and "TPR 91.7% (11/12), TNR 90.0% (9/10)" in section
    assert "the caps cost 1 caught known-wrong solution(s) and let 0 more reference(s) pass" in section
    assert "| codeforces | 90.0% (9/10) | 75.0% (3/4) |" in section and "| kattis | 100.0% (2/2) | 100.0% (6/6) |" in section
    assert "### Test strength by difficulty" in section and "| easy | 91.7% (11/12) | 90.0% (9/10) |" in section
    assert "### Generated tests' strength by source" in section
    assert "| kattis | 100.0% (2/2) | 100.0% (5/5) | 87.5% (35/40) |" in section
    assert ("own measure over 3 problems (before validate's caps), on the tests it received: TPR 100.0% (2/2), TNR 60.0% (3/5); with its generated tests: "
            "TPR 100.0% (2/2), TNR 100.0% (5/5).") in section
    mutants = next(line for line in section.splitlines() if line.startswith("Mutants of the references"))
    assert "kill 50.0% (20/40), with its generated tests 87.5% (35/40)" in mutants and "TNR 9" not in mutants
    assert "10 generated tests rest on a single reference" in section and "agreeing: 1: 10, 2: 20." in section
    assert "known-wrong solutions the sources ship" in section and "no source ships other accepted" in section


def test_git_revision_is_not_dirty_for_dvc_lock_alone(tmp_path):
    """`dvc repro` rewrites dvc.lock after each stage, before build: that alone is not `-dirty`."""
    import subprocess

    from microcoder.pipeline.build import git_revision

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "dvc.lock").write_text("a\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (tmp_path / "dvc.lock").write_text("b\n")
    assert not git_revision(tmp_path).endswith("-dirty")
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_revision(tmp_path).endswith("-dirty")
