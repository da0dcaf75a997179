"""The card tells the truth (issue 29): no local paths, only enabled sources, Hub license ids per
source, claims only when measured, the rollout model with its revision, usage by tag, a citation,
the versions and what changed."""

from __future__ import annotations

from pathlib import Path

import yaml

from microcoder.pipeline.build import BuildConfig
from microcoder.pipeline.card import hub_license_id, portable, render_card, version_record


def stats(**over):
    base = {"kept": 10, "read": 10, "rejected": 0, "tests": 50, "max_tests_per_problem": 5, "shards": 1,
            "with_pass_rate": 10, "mean_pass_rate": 0.3, "unsolved": 2, "by_source": {"seed": 6, "leetcodedataset": 4},
            "by_style": {"stdio": 10}, "by_difficulty": {"easy": 10}, "difficulty_by_source": [],
            "pass_rate_histogram": {"0.0-0.1": 2}, "by_selection_reason": {"in_band": 8, "unsolved": 2},
            "by_license": {"MIT": 10}}
    return {**base, **over}


SETTINGS = {
    "scrape": {"sources": [
        {"name": "seed", "kind": "jsonl", "path": "/home/builder/secret-project/data/seed/problems.jsonl", "enabled": True},
        {"name": "leetcodedataset", "kind": "leetcodedataset",
         "path": "../shared/bench-data/leetcodedataset/train.jsonl.gz", "enabled": True},
        {"name": "codecontests", "kind": "hub", "adapter": "codecontests", "enabled": False}],
        "http_cache_dir": "/home/builder/.cache/microcoder/http"},
    "rollout": {"model": "Qwen/Qwen3-0.6B", "revision": "c1899de", "samples": 8},
    "filter": {"min_pass_rate": 0.1, "max_pass_rate": 0.9},
}


def card(st=None, settings=None, upstream=None, **kw) -> str:
    return render_card(BuildConfig(version="0.2.0"), st or stats(), upstream or {"filter": {"kept": 10}},
                       SETTINGS if settings is None else settings, "abc123", **kw)


def front(text: str) -> dict:
    return yaml.safe_load(text.split("---\n")[1])


def test_no_local_paths_and_only_enabled_sources():
    text = card(upstream={"scrape": {"cache": "/home/builder/.cache/x", "kept": 3}})
    assert "/home/builder" not in text and "../shared" not in text and "secret-project" not in text
    assert "<local>/problems.jsonl" in text and "<local>/train.jsonl.gz" in text
    assert "codecontests" not in text  # disabled: contributed nothing, not listed
    assert portable("/work/x/data/a.jsonl", root=Path("/work/x")) == "data/a.jsonl"
    assert portable({"n": 3, "p": ["relative/ok"]}) == {"n": 3, "p": ["relative/ok"]}


def test_licenses_are_hub_ids_per_source_and_leetcode_statements_are_not_mit():
    text = card()
    section = text.split("### Licenses by source\n")[1].split("\n\n")[0]
    assert "| seed | mit |" in section  # the rows' own license
    assert "| leetcodedataset | other | statements are LeetCode's" in section
    assert front(text)["license"] == ["mit", "other"]
    assert hub_license_id("CC BY-SA 3.0") == "cc-by-sa-3.0" and hub_license_id("cc-by-sa") == "other"
    assert hub_license_id("Apache-2.0") == "apache-2.0" and hub_license_id(None) == "other"
    # Without the rows' licenses, the source kind's known license (resolved through the adapter).
    text = card(st=stats(by_license={"MIT": 4, "CC-BY-4.0": 6}, by_source={"codecontests": 6, "humaneval": 4}),
                settings={"scrape": {"sources": [{"name": "codecontests", "kind": "hub", "adapter": "codecontests"},
                                                 {"name": "humaneval", "kind": "humaneval"}]}})
    assert "| codecontests | cc-by-4.0 |" in text and "| humaneval | mit |" in text
    assert front(text)["license"] == ["cc-by-4.0", "mit"]
    assert front(card(st=stats(license_by_source={"seed": {"Apache-2.0": 6}, "leetcodedataset": {"MIT": 4}})))[
        "license"] == ["apache-2.0", "other"]


def test_claims_only_what_was_measured():
    text = card(st=stats(unsolved=10, with_pass_rate=10))
    assert "hard but learnable" not in text and "Every one of the 10 problems was unsolved" in text
    text = card(st=stats(with_pass_rate=0, unsolved=0))
    assert "No pass rate was measured" in text and "learnable" not in text
    text = card()
    assert "8 of the 10 problems were solved by the policy at a measured pass rate between 0.1 and 0.9" in text


def test_rollout_model_by_name_and_revision():
    assert "measured with `Qwen/Qwen3-0.6B` at revision `c1899de`" in card()
    local = {**SETTINGS, "rollout": {"model": "/home/builder/models/warm"}}
    text = card(settings=local)
    assert "`<local>/warm` (its revision was not recorded)" in text and "/home/builder" not in text


def test_usage_by_tag_and_a_citation():
    text = card(repo_id="me/microcoder")
    assert 'load_dataset("me/microcoder", "default", split="train", revision="v0.2.0")' in text
    cite = text.split("```bibtex\n")[1].split("```")[0]
    assert cite.startswith("@misc{microcoder_dataset_v0_2_0,") and "version = {v0.2.0}" in cite
    assert "https://huggingface.co/datasets/me/microcoder" in cite and "abc123" in cite


def test_versions_and_what_changed_between_them():
    first = version_record(BuildConfig(version="0.1.0"), stats(kept=12, by_source={"seed": 12}),
                           {"filter": {"min_pass_rate": 0.0, "max_pass_rate": 0.75}})
    text = card(history=[first])
    section = text.split("## Versions\n\n")[1].split("\n\n")[0]
    assert "| v0.1.0 | 12 | seed | first version |" in section
    assert ("| v0.2.0 | 10 | seed, leetcodedataset | rows 12 -> 10; source leetcodedataset added; seed 12 -> 6; "
            "min_pass_rate 0.0 -> 0.1; max_pass_rate 0.75 -> 0.9 |") in section
    assert "No earlier version's record was available" in card()
