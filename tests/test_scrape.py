"""The scrape stage: outputs, accounting, duplicates, limits, source errors and the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.io import read_problems
from microcoder.pipeline.scrape import Scrape, ScrapeConfig
from microcoder.pipeline.sources import SourceError

FIX = Path(__file__).parent / "fixtures" / "sources"


def read_outputs(out: Path):
    stats = json.loads((out / "stats.json").read_text())
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    return read_problems(out / "problems.parquet"), rejects, stats


def test_run_scrape_accounts_for_every_record(tmp_path):
    extra = tmp_path / "extra.jsonl"
    seed_lines = (FIX / "seed.jsonl").read_text().splitlines()
    dup_of_other_source = json.loads(seed_lines[0]) | {"id": "humaneval/900"}
    extra.write_text("\n".join([seed_lines[0], seed_lines[0], json.dumps(dup_of_other_source)]) + "\n")
    cfg = ScrapeConfig(sources=[
        {"name": "humaneval", "kind": "humaneval", "path": str(FIX / "humaneval_mini.jsonl")},
        {"name": "seed", "kind": "jsonl", "path": str(FIX / "seed.jsonl")},
        {"name": "extra", "kind": "jsonl", "path": str(extra)},
        {"name": "lcd", "kind": "leetcodedataset", "path": str(FIX / "leetcodedataset.jsonl"), "limit": 2},
        {"name": "off", "kind": "jsonl", "path": "does/not/exist.jsonl", "enabled": False},
    ])
    stats = Scrape().run(cfg, None, tmp_path / "raw")
    problems, rejects, on_disk = read_outputs(tmp_path / "raw")
    assert on_disk == stats and set(stats["sources"]) == {"humaneval", "seed", "extra", "lcd"}
    assert stats["unit"] == "problems" and stats["read"] == stats["kept"] + stats["rejected"]
    assert stats["rejected_by_reason"]["duplicate_id"] == 3 and stats["rejected_by_reason"]["bad_json"] == 2
    assert sum(stats["rejected_by_reason"].values()) == stats["rejected"]
    settings = json.loads((tmp_path / "raw" / "settings.json").read_text())
    assert [s["name"] for s in settings["sources"]] == ["humaneval", "seed", "extra", "lcd", "off"]
    for name, s in stats["sources"].items():
        assert s["kept"] + s["rejected"] == s["read"], name
        assert sum(s["rejected_by_reason"].values()) == s["rejected"], name
    seed = stats["sources"]["seed"]
    assert seed.pop("origin") == {"path": str(FIX / "seed.jsonl"), "files": 1, "bytes": (FIX / "seed.jsonl").stat().st_size}
    assert seed == {"kind": "jsonl", "read": 7, "kept": 3, "rejected": 4, "error": None,
                    "rejected_by_reason": {"bad_json": 2, "invalid_problem": 2}, "skipped": {}, "http": None,
                    "by_type": {"pass-fail": {"kept": 3, "rejected": 0}, "unknown": {"kept": 0, "rejected": 4}}}
    extra_stats = stats["sources"]["extra"]
    assert extra_stats["read"] == 3 and extra_stats["rejected_by_reason"] == {"duplicate_id": 3}
    dup_reasons = [r["reason"] for r in rejects if "duplicate_id" in r["reason"]]
    assert any("already produced by source 'humaneval'" in r for r in dup_reasons)
    assert any("already produced by source 'seed'" in r for r in dup_reasons)
    assert stats["sources"]["lcd"]["read"] == 2
    assert len(problems) == stats["kept"] and len(rejects) == stats["rejected"]
    assert len({p.id for p in problems}) == len(problems)
    assert all(r["stage"] == "scrape" for r in rejects)
    # statement whitespace is normalised on the way in (trailing spaces, blank runs)
    add_two = next(p for p in problems if p.id == "seed/add-two")
    assert add_two.statement == "Read two integers and print their sum.\n\nInput: `a b`"
    assert pq.read_schema(tmp_path / "raw" / "problems.parquet").names[:3] == ["id", "source", "source_id"]


def test_invalid_problem_from_a_source_is_rejected_by_the_stage(tmp_path):
    pkg = tmp_path / "pkgs" / "slow"
    shutil.copytree(FIX / "kattis" / "hello", pkg)
    (pkg / ".timelimit").write_text("9999\n")
    cfg = ScrapeConfig(sources=[{"name": "k", "kind": "kattis", "path": str(tmp_path / "pkgs")}])
    stats = Scrape().run(cfg, None, tmp_path / "raw")
    _, rejects, _ = read_outputs(tmp_path / "raw")
    assert stats["sources"]["k"]["rejected_by_reason"] == {"invalid_problem": 1}
    assert "time_limit_s" in rejects[0]["reason"] and rejects[0]["id"] == "k/slow"


def test_stats_count_problems_kept_and_rejected_by_type(tmp_path):
    """Every source's records by problem type (kept + rejected = read): the Kattis adapter says the
    type (meta / the reject's record), other sources' types come from their checker."""
    shutil.copytree(FIX / "kattis", tmp_path / "pkgs")
    shutil.copytree(FIX / "kattis_kinds" / "subtasks", tmp_path / "pkgs" / "subtasks")
    shutil.copytree(FIX / "kattis_kinds" / "guessing", tmp_path / "pkgs" / "guessing")
    cfg = ScrapeConfig(sources=[{"name": "k", "kind": "kattis", "path": str(tmp_path / "pkgs")},
                                {"name": "he", "kind": "humaneval", "path": str(FIX / "humaneval_mini.jsonl")}])
    stats = Scrape().run(cfg, None, tmp_path / "raw")
    kattis = stats["sources"]["k"]
    assert kattis["by_type"] == {
        "pass-fail": {"kept": 2, "rejected": 1},  # hello, floaty; notests
        "pass-fail+custom-judge": {"kept": 1, "rejected": 0},  # anyorder
        "pass-fail+interactive": {"kept": 1, "rejected": 1},  # guessing; guess (no interactor)
        "scoring": {"kept": 1, "rejected": 0},  # subtasks
        "unknown": {"kept": 0, "rejected": 1}}  # broken: problem.yaml does not parse
    assert sum(n for counts in kattis["by_type"].values() for n in counts.values()) == kattis["read"]
    he = stats["sources"]["he"]
    assert he["by_type"]["pass-fail"]["kept"] == he["kept"] > 0  # its rejects name no type: "unknown"


def test_source_errors_fail_or_are_recorded(tmp_path):
    sources = [{"name": "seed", "kind": "jsonl", "path": str(tmp_path / "missing.jsonl")},
               {"name": "he", "kind": "humaneval", "path": str(FIX / "humaneval_mini.jsonl")}]
    with pytest.raises(SourceError, match="missing.jsonl"):
        Scrape().run(ScrapeConfig(sources=sources), None, tmp_path / "a")
    assert not (tmp_path / "a" / "problems.parquet").exists()
    stats = Scrape().run(ScrapeConfig(sources=sources, on_source_error="skip"), None, tmp_path / "b")
    assert "no such file" in stats["sources"]["seed"]["error"] and stats["sources"]["he"]["kept"] == 2


def test_since_filters_dated_records_as_rejects(tmp_path):
    cfg = ScrapeConfig(sources=[
        {"name": "lcb", "kind": "livecodebench", "path": str(FIX / "livecodebench.jsonl"), "since": "2024-01-10"},
        {"name": "he", "kind": "humaneval", "path": str(FIX / "humaneval_mini.jsonl"), "since": "2024-01-10"}])
    stats = Scrape().run(cfg, None, tmp_path / "raw")
    problems, _, _ = read_outputs(tmp_path / "raw")
    assert [p.id for p in problems] == ["lcb/abc337_a"]
    assert stats["sources"]["lcb"]["rejected_by_reason"] == {"bad_record": 1, "bad_tests": 1, "before_since": 1}
    assert stats["sources"]["he"]["rejected_by_reason"]["no_contest_date"] == 2


def test_config_errors_are_clear():
    """`scrape.sources` entries are typed on load (disabled ones too): a mistake names the entry."""
    from microcoder.pipeline.scrape import SourceEntry
    from microcoder.pipeline.stage import ConfigError, build_config

    with pytest.raises(ConfigError, match="unknown source kind 'ftp'"):
        ScrapeConfig(sources=[{"kind": "ftp"}])
    with pytest.raises(ConfigError, match="named 'x'"):
        ScrapeConfig(sources=[{"name": "x", "kind": "humaneval"}] * 2)
    with pytest.raises(ConfigError, match=r"scrape.sources.0.limit`: must be a non-negative integer"):
        ScrapeConfig(sources=[{"kind": "humaneval", "limit": -1}])
    with pytest.raises(ConfigError, match=r"scrape.sources.1.limit`: expected int, got 'ten'"):
        ScrapeConfig(sources=[{"kind": "humaneval"}, {"kind": "jsonl", "path": "x", "limit": "ten", "enabled": False}])
    with pytest.raises(ConfigError, match=r"scrape.sources.0` \(k\): .*unknown"):
        ScrapeConfig(sources=[{"name": "k", "kind": "kattis", "path": "x", "pathh": "y"}])
    with pytest.raises(ConfigError, match="scrape.sources.0` needs a `kind`"):
        ScrapeConfig(sources=[{"name": "nameless"}])
    with pytest.raises(ConfigError, match="is not one of"):
        build_config(ScrapeConfig, {"on_source_error": "ignore"})
    (entry,) = ScrapeConfig(sources=[{"kind": "codeforces", "since": "2024-08-01", "limit": 3,
                                      "min_interval_s": 2}]).entries
    assert isinstance(entry, SourceEntry) and entry.name == "codeforces" and entry.limit == 3
    assert str(entry.since) == "2024-08-01" and entry.min_interval_s == 2.0
    assert type(entry.options).__module__ == "microcoder.pipeline.sources.codeforces"


def test_live_source_through_the_stage(httpserver, tmp_path):
    d = FIX / "codeforces"
    for route, name in (("/api/contest.list", "contest.list.json"), ("/api/problemset.problems", "problemset.problems.json"),
                        ("/problemset/problem/2000/A", "problem_2000_A.html"),
                        ("/problemset/problem/2000/B", "problem_2000_B.html"),
                        ("/problemset/problem/1999/G2", "problem_1999_G2.html")):
        httpserver.expect_request(route).respond_with_data((d / name).read_text())
    httpserver.expect_request("/problemset/problem/1999/Z").respond_with_data("no", status=404)
    cfg = ScrapeConfig(min_interval_s=0, max_retries=0, http_cache_dir=str(tmp_path / "cache"),
                       sources=[{"name": "cf", "kind": "codeforces", "since": "2024-08-01",
                                 "api_url": httpserver.url_for("/api"), "base_url": httpserver.url_for("/")}])
    stats = Scrape().run(cfg, None, tmp_path / "raw")
    cf = stats["sources"]["cf"]
    # 1999G2 is interactive: kept (flagged for the evaluator), so its page is fetched too
    assert (cf["read"], cf["kept"]) == (4, 2) and cf["skipped"] == {"before since": 1, "contest not finished": 1}
    assert cf["http"]["requests"] == 6 and any((tmp_path / "cache").rglob("*.json"))


runner = CliRunner()


def test_cli_format_conversion(tmp_path):
    out = tmp_path / "kattis.parquet"
    result = runner.invoke(app, ["scrape", "--format", "kattis", "--path", str(FIX / "kattis"), "-o", str(out),
                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "kattis: read 6, kept 3, rejected 3" in result.output
    assert len(read_problems(out)) == 3
    assert len((tmp_path / "kattis.rejects.jsonl").read_text().splitlines()) == 3
    assert json.loads((tmp_path / "kattis.stats.json").read_text())["read"] == 6


def test_cli_params_section(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"scrape": {"sources": [
        {"name": "seed", "kind": "jsonl", "path": str(FIX / "seed.jsonl")},
        {"name": "humaneval", "kind": "humaneval", "path": str(FIX / "humaneval_mini.jsonl")}]}}))
    out = tmp_path / "raw"
    result = runner.invoke(app, ["scrape", "--params", str(params), "--out-dir", str(out), "--no-progress",
                                 "--set", "on_source_error=skip"])
    assert result.exit_code == 0, result.output
    _, _, stats = read_outputs(out)
    assert (stats["read"], stats["kept"], stats["rejected"]) == (12, 5, 7)
    assert "scrape: read 12, kept 5, rejected 7" in result.output
    assert json.loads((out / "settings.json").read_text())["on_source_error"] == "skip"
    for override, message in (("sources.0.path=x", "scrape: error: source 'seed' (jsonl):"),
                              ("sources.1.limit=ten", "scrape: error: params `scrape.sources.1.limit`: expected int"),
                              ("progress=false", "unknown scrape params ['progress']; valid: [")):
        bad = runner.invoke(app, ["scrape", "--params", str(params), "--out-dir", str(out), "--no-progress",
                                  "--set", override])
        assert bad.exit_code == 2 and message in bad.output, bad.output
        assert "Traceback" not in bad.output and len(bad.output.strip().splitlines()) == 1, bad.output
    help_text = runner.invoke(app, ["scrape", "--help"]).output
    assert all(f in help_text for f in ("sources", "on_source_error", "http_cache_dir", "max_backoff_s"))


def test_cli_reports_source_errors(tmp_path):
    result = runner.invoke(app, ["scrape", "--format", "jsonl", "--path", str(tmp_path / "nope.jsonl"),
                                 "-o", str(tmp_path / "o.parquet")])
    assert result.exit_code == 2 and "no such file" in result.output and "Traceback" not in result.output


def test_proposed_params_section_loads_and_runs_the_defaults(tmp_path, monkeypatch):
    from microcoder.pipeline.params import load_params
    from microcoder.pipeline.stage import build_config

    seed = tmp_path / "data" / "seed"
    seed.mkdir(parents=True)
    shutil.copy(FIX / "seed.jsonl", seed / "problems.jsonl")
    monkeypatch.chdir(tmp_path)
    cfg = build_config(ScrapeConfig, load_params("scrape", FIX / "params_scrape.yaml"))
    stats = Scrape().run(cfg, None, "data/raw")
    assert set(stats["sources"]) == {"seed", "humaneval"}  # only the defaults are enabled
    assert stats["sources"]["humaneval"]["read"] == 164
    defaults = ScrapeConfig()
    assert [s["name"] for s in defaults.sources] == ["seed", "humaneval"]
    assert (cfg.http_cache_dir, cfg.min_interval_s) == (defaults.http_cache_dir, defaults.min_interval_s)


def test_statements_accepting_any_answer_are_marked(tmp_path):
    line = json.loads((FIX / "seed.jsonl").read_text().splitlines()[0])
    any_pair = line | {"id": "x/any", "statement": line["statement"] + "\n\nIf there are multiple answers, print any of them."}
    checked = any_pair | {"id": "x/checked", "checker": {"kind": "program", "language": "python", "protocol": "testlib",
                                                         "program": "import sys\nsys.exit(0)\n"}}
    src = tmp_path / "x.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in (line, any_pair, checked)) + "\n")
    Scrape().run(ScrapeConfig(sources=[{"name": "x", "kind": "jsonl", "path": str(src)}]), None,
                 tmp_path / "raw")
    marked = {p.id: p.meta.get("multiple_answers") for p in read_problems(tmp_path / "raw" / "problems.parquet")}
    assert marked == {line["id"]: None, "x/any": True, "x/checked": None}


def test_convert_options_without_format_are_an_error_not_ignored(tmp_path):
    """`scrape -o FILE` without --format used to run the whole stage into data/raw and ignore -o."""
    result = runner.invoke(app, ["scrape", "--params", str(tmp_path / "none.yaml"), "--out-dir", str(tmp_path / "raw"),
                                 "-o", str(tmp_path / "x.parquet")])
    assert result.exit_code == 2 and "go with --format" in result.output
    assert not (tmp_path / "raw").exists() and not (tmp_path / "x.parquet").exists()


def test_an_unknown_format_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["scrape", "--format", "nope", "--path", str(tmp_path), "-o", str(tmp_path / "x.parquet")])
    assert result.exit_code == 2 and "--format must be one of" in result.output and "kattis" in result.output
    assert not (tmp_path / "x.parquet").exists()


def test_under_dvc_a_local_source_that_is_not_a_dep_stops_scrape(tmp_path, monkeypatch):
    """`dvc repro` reruns scrape when a dep changes; a source folder that is not a dep would take new
    packages in silence. Run by DVC (DVC_STAGE/DVC_ROOT set), scrape refuses and names the path."""
    from microcoder.pipeline.stage import ConfigError

    rows = tmp_path / "external" / "rows.jsonl"
    rows.parent.mkdir()
    rows.write_text("")
    cfg = ScrapeConfig(sources=[{"name": "k", "kind": "jsonl", "path": str(rows)}])
    dvc_yaml = tmp_path / "dvc.yaml"
    dvc_yaml.write_text(yaml.safe_dump({"stages": {"scrape": {"cmd": "microcoder scrape", "deps": ["pipeline/scrape.py"]}}}))
    monkeypatch.setenv("DVC_ROOT", str(tmp_path))
    monkeypatch.setenv("DVC_STAGE", "scrape")
    with pytest.raises(ConfigError, match="not a dep of the `scrape` stage"):
        Scrape().run(cfg, None, tmp_path / "raw", progress=False)
    assert not (tmp_path / "raw").exists()
    dvc_yaml.write_text(yaml.safe_dump({"stages": {"scrape": {"cmd": "microcoder scrape", "deps": ["external"]}}}))
    stats = Scrape().run(cfg, None, tmp_path / "raw", progress=False)  # a folder above the source covers it
    assert stats["read"] == 0
    monkeypatch.delenv("DVC_STAGE")  # run by hand: no dvc.yaml to answer to
    dvc_yaml.write_text(yaml.safe_dump({"stages": {}}))
    Scrape().run(cfg, None, tmp_path / "raw2", progress=False)
