"""rollout -> filter -> build -> stats through the CLI on seed problems and the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from microcoder.pipeline.io import read_jsonl, write_problems
from microcoder.pipeline.schema import Problem, validate_problem

SEED = Path(__file__).resolve().parents[1] / "data" / "seed" / "problems.jsonl"


def fresh_logging() -> None:
    """Each CLI call as its own process: the stage contract sets logging up once per process, on
    the stderr of that moment, which CliRunner replaces (and closes) on every invoke."""
    import logging

    logging.getLogger()._microcoder = False


def test_stages_end_to_end(tmp_path, tiny_model_dir):
    from datasets import load_dataset

    from microcoder.pipeline.cli import app

    valid = [Problem.from_dict(r) for _, r, _ in read_jsonl(SEED) if r and not validate_problem(r)]
    picked = [p for p in valid if p.style == "stdio"][:3] + [p for p in valid if p.style == "functional"][:2]
    data = tmp_path / "data"
    write_problems(data / "validated" / "problems.parquet", picked)
    params = tmp_path / "params.yaml"
    params.write_text(f"rollout:\n  model: {tiny_model_dir}\n  k: 2\n  max_tokens: 16\nbuild:\n  version: 0.0.1\n")
    runner = CliRunner()
    common = ["--params", str(params)]
    r = runner.invoke(app, ["rollout", "--problems", str(data / "validated" / "problems.parquet"),
                            "--out-dir", str(data / "rollouts"), "--no-progress", *common])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["filter", "--problems", str(data / "validated" / "problems.parquet"),
                            "--rollouts", str(data / "rollouts"), "--out-dir", str(data / "filtered"), *common])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["build", "--problems", str(data / "filtered" / "problems.parquet"),
                            "--out-dir", str(data / "curated"), "--data-dir", str(data), *common])
    assert r.exit_code == 0, r.output
    report = json.loads((data / "filtered" / "report.json").read_text())
    stats = json.loads((data / "curated" / "stats.json").read_text())
    assert report["kept"] + report["rejected"] == 5 and stats["kept"] == report["kept"] == stats["read"]
    ds = load_dataset(str(data / "curated"), split="train", cache_dir=str(tmp_path / "hf-cache"))
    assert ds.num_rows == stats["kept"]
    r = runner.invoke(app, ["stats", "SELECT count(*) AS n FROM rollouts", "--data-dir", str(data), "--format", "json"])
    assert json.loads(r.output) == [{"n": 10}]


def test_bad_inputs_are_one_line_errors_not_tracebacks(tmp_path):
    from microcoder.pipeline.cli import app

    runner = CliRunner()
    absent = str(tmp_path / "absent.parquet")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 not really")
    good = tmp_path / "good.parquet"
    write_problems(good, [Problem(id="a", source="s", statement="S.", style="stdio", tests=[])])  # rejected later
    cases = [
        (["filter", "--problems", absent, "--rollouts", str(tmp_path), "--out-dir", str(tmp_path / "f")], "filter input"),
        (["filter", "--problems", str(corrupt), "--rollouts", str(tmp_path), "--out-dir", str(tmp_path / "f")],
         "not a readable parquet file"),
        (["filter", "--problems", str(good), "--rollouts", str(tmp_path), "--out-dir", str(tmp_path / "f"),
          "--set", "max_pass_rate=2"], "params `filter`"),
        (["filter", "--problems", str(good), "--rollouts", str(tmp_path), "--out-dir", str(tmp_path / "f"),
          "--set", "predict.bogus=1"], "unknown filter.predict params ['bogus']; valid: ["),
        (["filter", "--problems", str(good), "--rollouts", str(tmp_path / "none"), "--out-dir", str(tmp_path / "f")],
         "rollouts folder"),
        (["build", "--problems", absent, "--out-dir", str(tmp_path / "c")], "build input"),
        (["build", "--problems", str(good), "--out-dir", str(tmp_path / "c")], "no problems to build"),
        (["build", "--problems", str(good), "--out-dir", str(tmp_path / "c2"), "--set", "max_shard_size=lots"],
         "bad size 'lots'"),
        (["publish", "--set", "nope=1"], "unknown publish params ['nope']; valid: ["),
    ]
    for args, message in cases:
        fresh_logging()
        result = runner.invoke(app, [*args, "--params", str(tmp_path / "none.yaml")])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "error:" in result.output and "Traceback" not in result.output, args
        assert len(result.output.strip().splitlines()) == 1, (args, result.output)
    # The build's rejects say why nothing could be built.
    (reject,) = [r for _, r, _ in read_jsonl(tmp_path / "c" / "rejects.jsonl")]
    assert reject["id"] == "a" and "tests: empty" in reject["reason"]
