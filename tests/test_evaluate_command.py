"""`microcoder evaluate` on the stage contract: the params' `evaluator:` section (and --set, and the
--workers/--timeout-scale/--sandbox options) is what judges; errors are one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from microcoder.pipeline import io
from microcoder.pipeline.cli import app
from microcoder.pipeline.schema import Problem, TestCase

# Correct only when compiled with -DMC_FLAG: shows whether the evaluator section's cpp_flags reach the judge.
FLAGGED_CPP = """#include <cstdio>
int main() { long a, b; std::scanf("%ld %ld", &a, &b);
#ifdef MC_FLAG
  std::printf("%ld\\n", a + b);
#else
  std::printf("0\\n");
#endif
}
"""


@pytest.fixture
def inputs(tmp_path: Path):
    problem = Problem(id="sum", source="t", statement="Print a+b.", style="stdio",
                      tests=[TestCase("1 2\n", "3\n"), TestCase("5 5\n", "10\n")])
    io.write_problems(tmp_path / "problems.jsonl", [problem])
    (tmp_path / "subs.jsonl").write_text(json.dumps({"problem_id": "sum", "submission_id": "c",
                                                     "language": "cpp", "code": FLAGGED_CPP}) + "\n")
    return tmp_path


def _reset_logging() -> None:
    """Each CLI call as its own process: the contract sets logging up once per process, on the
    stderr of that moment, which CliRunner replaces (and closes) on every invoke."""
    import logging

    logging.getLogger()._microcoder = False


def evaluate(tmp: Path, *extra: str, params: str = ""):
    _reset_logging()
    (tmp / "params.yaml").write_text(params)
    args = ["evaluate", "--problems", str(tmp / "problems.jsonl"), "--submissions", str(tmp / "subs.jsonl"),
            "-o", str(tmp / "verdicts.jsonl"), "--workers", "1", "--no-progress", "--params", str(tmp / "params.yaml"),
            *extra]
    return CliRunner().invoke(app, args)


def status(tmp: Path) -> str:
    (row,) = [json.loads(line) for line in (tmp / "verdicts.jsonl").read_text().splitlines()]
    return row["status"]


def test_the_evaluator_section_reaches_the_judge(inputs):
    r = evaluate(inputs)
    assert r.exit_code == 0, r.output
    assert status(inputs) == "WA"  # default flags: no MC_FLAG
    r = evaluate(inputs, params="evaluator:\n  cpp_flags: [-O0, -DMC_FLAG]\n")
    assert r.exit_code == 0, r.output
    assert status(inputs) == "AC" and "AC 1" in r.output
    # --set, with or without the section's name, overrides params.yaml.
    for key in ("cpp_flags", "evaluator.cpp_flags"):
        r = evaluate(inputs, "--set", f"{key}=[-O0]", params="evaluator:\n  cpp_flags: [-O0, -DMC_FLAG]\n")
        assert r.exit_code == 0 and status(inputs) == "WA", (key, r.output)


def test_options_override_the_section(inputs):
    r = evaluate(inputs, params="evaluator:\n  sandbox: nosuchbox\n")
    assert r.exit_code != 0 and "nosuchbox" in r.output and "Traceback" not in r.output
    r = evaluate(inputs, "--sandbox", "auto", params="evaluator:\n  sandbox: nosuchbox\n  cpp_flags: [-DMC_FLAG]\n")
    assert r.exit_code == 0, r.output
    assert status(inputs) == "AC"


def test_errors_are_one_line_exit_2(inputs, tmp_path):
    cases = [
        (["--set", "wokers=2"], "unknown evaluator params ['wokers']; valid: ["),
        (["--set", "timeout_scale=fast"], "params `evaluator.timeout_scale`: expected float"),
        (["--mode", "most"], "--mode must be one of"),
        # the evaluator's run mode keeps outputs and compares nothing: its AC is no verdict
        (["--mode", "run"], "--mode must be one of ['first-failure', 'all'], got 'run'"),
    ]
    for extra, message in cases:
        r = evaluate(inputs, *extra)
        assert r.exit_code == 2 and message in r.output, (extra, r.output)
        assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("evaluate: error:"), r.output
    (inputs / "problems.jsonl").unlink()
    r = evaluate(inputs)
    assert r.exit_code == 2 and "problems.jsonl does not exist" in r.output and not (inputs / "verdicts.jsonl").exists()


def test_help_lists_every_evaluator_field():
    import dataclasses

    from microcoder.pipeline.evaluator.config import EvaluatorConfig

    text = " ".join(CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"}).output.split())
    assert "`evaluator:` section" in text
    assert all(f.name in text for f in dataclasses.fields(EvaluatorConfig))


def test_a_submission_to_an_unusable_problem_record_is_an_se_verdict_saying_why(inputs):
    bad = Problem(id="nostate", source="t", statement="", style="stdio", tests=[TestCase("1\n", "1\n")])
    good = io.read_problems(inputs / "problems.jsonl")
    io.write_problems(inputs / "problems.jsonl", good + [bad])
    with open(inputs / "subs.jsonl", "a") as f:
        f.write(json.dumps({"problem_id": "nostate", "submission_id": "n", "language": "python", "code": "print(1)"}) + "\n")
    r = evaluate(inputs, "--set", "cpp_flags=[-DMC_FLAG]")
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in (inputs / "verdicts.jsonl").read_text().splitlines()]
    assert [(v["submission_id"], v["status"]) for v in rows] == [("c", "AC"), ("n", "SE")]
    assert "problem record unusable: invalid record: statement: empty" in rows[1]["reason"]
    assert "1 problem records unusable" in r.output

