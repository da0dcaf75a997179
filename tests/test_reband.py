"""Re-bannable releases (issue 29 item 1): difficulty per policy model, every rolled-out row kept in
the release (`out_of_band/`), `microcoder reband --band LO,HI --release DIR` (and `microcoder filter
--release`, which runs it) re-bands without rollouts, and the card's configs load with `datasets`."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import yaml

from microcoder.pipeline.build import Build, BuildConfig, parse_band
from microcoder.pipeline.difficulty.band import Band
from microcoder.pipeline.difficulty.filter import Filter, FilterConfig, merge_entries
from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.io import write_json, write_problems
from microcoder.pipeline.reband import reband
from microcoder.pipeline.rollout.runner import model_revision, write_shard
from microcoder.pipeline.schema import Problem, TestCase

PLATFORMS = ["codeforces", "atcoder"]


def problem(i: int) -> Problem:
    return Problem(id=f"p{i:02d}", source="seed", statement=f"Problem {i}. " + "words " * 10, title=f"T{i}",
                   style="stdio", tests=[TestCase("1\n", "1\n")], platform=PLATFORMS[i % 2], license="MIT")


def write_rollouts(folder, correct_of, model: str, k: int = 4, revision: str | None = None) -> None:
    rows = []
    for pid, correct in correct_of.items():
        rows += [{"problem_id": pid, "sample_index": j, "completion": "", "tokens": 1, "finish_reason": "stop",
                  "truncated": False, "status": "AC" if j < correct else ("SE" if j == k - 1 else "WA"),
                  "passed": 0, "total": 1, "reason": None} for j in range(k)]
    write_shard(folder / "shards" / "part-00000.parquet", rows)
    generation = {"backend": "hf", "model": model, "k": k, "temperature": 1.0, "top_p": 1.0, "max_tokens": 64,
                  "seed": 0, "thinking": False, "language": "python", "system_prompt": None}
    write_json(folder / "shards" / "manifest.json", {"format": 2, "fingerprint": {"generation": generation},
                                                    "model": {"id": model, "revision": revision}})


@pytest.fixture
def project(tmp_path):
    problems = [problem(i) for i in range(10)]
    write_problems(tmp_path / "validated.parquet", problems)
    # policy A: p00..p09 pass 0..3 of 3 judged samples (the 4th is a system error) -> 0, 1/3, 2/3, 1
    write_rollouts(tmp_path / "rollouts", {p.id: i % 4 for i, p in enumerate(problems)}, "org/policy-a",
                   revision="abc123")
    write_rollouts(tmp_path / "rollouts-b", {p.id: 3 for p in problems[:4]}, "org/policy-b", revision="def456")
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"build": {"version": "1.0.0"}}))
    return tmp_path, params


def filter_and_build(tmp, params, band: tuple[float, float], name: str, rollouts=None):
    cfg = FilterConfig(min_pass_rate=band[0], max_pass_rate=band[1])
    Filter().run(cfg, tmp / "validated.parquet", tmp / name / "filtered",
                 rollouts=rollouts or [tmp / "rollouts", tmp / "rollouts-b"])
    write_json(tmp / name / "filtered" / "settings.json", {"min_pass_rate": band[0], "max_pass_rate": band[1],
                                                          "pass_k": 4})
    return Build().run(BuildConfig(version="1.0.0"), tmp / name / "filtered" / "problems.parquet",
                       tmp / name / "curated", data_dir=tmp / name, params_path=params)


def rows(folder) -> dict[str, dict]:
    out = {}
    for f in sorted((folder / "data").glob("train-*.parquet")):
        out.update({r["id"]: r for r in pq.read_table(f).to_pylist()})
    return out


def test_model_difficulty_per_model_with_revision_and_statuses(project):
    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    got = rows(tmp / "a" / "curated")
    entries = got["p01"]["model_difficulty"]
    assert [e["model"] for e in entries] == ["org/policy-a", "org/policy-b"]
    a, b = entries
    assert a["revision"] == "abc123" and a["k"] == 4 and a["temperature"] == 1.0 and a["max_tokens"] == 64
    assert (a["n_samples"], a["n_correct"], a["n_system_errors"]) == (3, 1, 1)
    assert {s["status"]: s["count"] for s in a["statuses"]} == {"AC": 1, "WA": 2, "SE": 1}
    assert b["revision"] == "def456" and b["pass_rate"] == 1.0
    assert got["p01"]["pass_rate"] == pytest.approx(1 / 3)  # the band follows the first model
    assert [e["model"] for e in got["p05"]["model_difficulty"]] == ["org/policy-a"]  # B did not roll it out


def test_a_second_model_adds_its_entry_and_a_rerun_replaces_its_own(project):
    tmp, params = project
    Filter().run(FilterConfig(), tmp / "validated.parquet", tmp / "one", rollouts=tmp / "rollouts")
    # filtering that output again with model B's rollouts keeps A's entry and adds B's
    Filter().run(FilterConfig(max_pass_rate=1.0), tmp / "one" / "problems.parquet", tmp / "two",
                 rollouts=[tmp / "rollouts-b", tmp / "rollouts"])
    two = {p["id"]: p for p in pq.read_table(tmp / "two" / "problems.parquet").to_pylist()}
    assert [e["model"] for e in two["p01"]["model_difficulty"]] == ["org/policy-b", "org/policy-a"]
    assert two["p01"]["pass_rate"] == 1.0  # now B decides
    old = [{"model": "m", "revision": "r", "k": 4, "pass_rate": 0.5}]
    assert merge_entries(old, [{"model": "m", "revision": "r", "k": 4, "pass_rate": 0.25}]) == [
        {"model": "m", "revision": "r", "k": 4, "pass_rate": 0.25}]
    assert len(merge_entries(old, [{"model": "m", "revision": "s", "k": 4, "pass_rate": 0.25}])) == 2


def test_reband_of_the_built_release_equals_a_filter_run_on_the_rollouts(project):
    tmp, params = project
    built = filter_and_build(tmp, params, (0.0, 0.75), "a")
    assert built["kept"] == 8 and built["out_of_band_rows"] == 2  # pass rate 1 (p03, p07) kept apart
    assert (tmp / "a" / "curated" / "out_of_band").is_dir()
    rebanded = reband(tmp / "a" / "curated", tmp / "rebanded", Band(0.1, 0.9))
    direct = filter_and_build(tmp, params, (0.1, 0.9), "b")
    assert rows(tmp / "rebanded") == rows(tmp / "b" / "curated")
    assert rebanded["kept"] == direct["kept"] == 5  # 1/3 and 2/3; unsolved and 1.0 outside
    # widening to include what the first band dropped (pass rate 1)
    reband(tmp / "a" / "curated", tmp / "wide", Band(0.5, 1.0))
    assert {r["id"] for r in rows(tmp / "wide").values() if r["pass_rate"] == 1.0} == {"p03", "p07"}
    card = (tmp / "rebanded" / "README.md").read_text()
    assert "max_pass_rate: 0.9" in card and "rebanded_from" in card


def test_reband_by_another_model(project):
    tmp, params = project
    filter_and_build(tmp, params, (0.0, 1.0), "a")
    reband(tmp / "a" / "curated", tmp / "by-b", Band(1.0, 1.0), model="org/policy-b")
    got = rows(tmp / "by-b")
    assert set(got) == {"p00", "p01", "p02", "p03"}
    assert all(r["pass_rate"] == 1.0 and r["model_difficulty"][0]["model"] == "org/policy-b" for r in got.values())
    with pytest.raises(InputError, match="no row of the release was measured by org/none"):
        reband(tmp / "a" / "curated", tmp / "none", Band(0, 1), model="org/none")


def test_reband_refuses_bad_input(project):
    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    with pytest.raises(InputError, match="another folder"):
        reband(tmp / "a" / "curated", tmp / "a" / "curated", Band(0.1, 0.9))
    with pytest.raises(InputError, match="not a built release"):
        reband(tmp / "a" / "filtered", tmp / "x", Band(0.1, 0.9))
    with pytest.raises(InputError, match="no row"):
        reband(tmp / "a" / "curated", tmp / "x", Band(0.9, 0.95))
    with pytest.raises(ValueError, match="bad band"):
        parse_band("0.9,0.1")
    assert parse_band("0.1-0.9") == parse_band("0.1,0.9") == (0.1, 0.9)


def test_card_configs_load_with_datasets_and_tables_per_model(project):
    from datasets import load_dataset

    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    folder = tmp / "a" / "curated"
    card = (folder / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    names = [c["config_name"] for c in front["configs"]]
    assert names == ["default", "all", "unsolved", "platform-codeforces", "platform-atcoder", "band-0.1-0.9"]
    assert "&id" not in card  # no YAML anchors: each config spells its files
    cache = tmp / "hf-cache"
    count = {n: load_dataset(str(folder), n, split="train", cache_dir=str(cache)).num_rows for n in names}
    assert count == {"default": 8, "all": 10, "unsolved": 3, "platform-codeforces": 5, "platform-atcoder": 3,
                     "band-0.1-0.9": 5}
    assert "## Difficulty per policy model" in card
    assert "`org/policy-a` @ `abc123`" in card and "`org/policy-b` @ `def456`" in card
    assert "Pass-rate histogram of `org/policy-b` @ `def456`" in card
    provenance = json.loads((folder / "provenance.json").read_text())
    assert str(tmp) not in json.dumps(provenance)  # no local paths


def test_filter_command_rebands_a_release(project):
    from typer.testing import CliRunner

    from microcoder.pipeline.cli import app

    tmp, params = project
    filter_and_build(tmp, params, (0.0, 0.75), "a")
    runner = CliRunner()
    r = runner.invoke(app, ["filter", "--band", "0.1,0.9", "--release", str(tmp / "a" / "curated"),
                            "--out", str(tmp / "cli"), "--params", str(params)])
    assert r.exit_code == 0, r.output
    assert "5 rows in the default config, 5 outside" in r.output
    r = runner.invoke(app, ["filter", "--band", "0.1,0.9", "--params", str(params)])
    assert r.exit_code == 2 and "--release" in r.output
    r = runner.invoke(app, ["filter", "--band", "0.9,0.1", "--release", str(tmp / "a" / "curated"),
                            "--out", str(tmp / "cli2"), "--params", str(params)])
    assert r.exit_code == 2 and "bad band" in r.output
    r = runner.invoke(app, ["filter", "--band", "0.1,0.9", "--release", str(tmp / "a" / "curated")])
    assert r.exit_code == 2 and "--out DIR" in r.output
    # the command itself, which `filter --release` runs
    r = runner.invoke(app, ["reband", "--band", "0.1,0.9", "--release", str(tmp / "a" / "curated"),
                            "--out", str(tmp / "cli3")])
    assert r.exit_code == 0 and "5 rows in the default config, 5 outside" in r.output, r.output
    assert rows(tmp / "cli3") == rows(tmp / "cli")
    r = runner.invoke(app, ["reband", "--band", "0.1,0.9", "--out", str(tmp / "cli4")])
    assert r.exit_code == 2 and "--release" in r.output


def test_model_revision(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    first = model_revision(str(tmp_path / "m"), "hf")
    assert first.startswith("sha256:") and first == model_revision(str(tmp_path / "m"), "vllm")
    (tmp_path / "m" / "config.json").write_text('{"a": 1}')
    assert model_revision(str(tmp_path / "m"), "hf") != first
    assert model_revision("served-name", "openai") is None
