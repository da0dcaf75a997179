"""Every stage goes through the stage contract (pipeline/stage.py): a walk over all commands.

For each stage: `--help` lists every field of its config; a bad `--set` and a missing input are one
line on stderr with exit status 2 (no traceback). Also runs the "add a stage" example of
docs/DEVELOPING.md, so that the example cannot rot.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from microcoder.pipeline.cli import COMMANDS, app

ROOT = Path(__file__).resolve().parents[1]
MISSING = "/nonexistent/microcoder-input"
# command -> the arguments that name one missing input (None: the command reads no input file)
MISSING_INPUT = {
    "tiny-model": None,
    "scrape": ["--set", f"sources=[{{name: local, kind: jsonl, path: {MISSING}.jsonl}}]"],
    "dedup": ["--problems", MISSING],
    "testgen": ["--problems", MISSING],
    "validate": ["--problems", MISSING],
    "warmstart": ["--problems", MISSING, "--model", MISSING],
    "rollout": ["--problems", MISSING],
    "filter": ["--problems", MISSING],
    "build": ["--problems", MISSING],
    "publish": ["--dataset-dir", MISSING],
    "train": ["--problems", MISSING, "--model", MISSING],
    "eval-model": ["--benchmark", MISSING, "--model", f"m={MISSING}"],
    "evaluate": ["--problems", MISSING, "--submissions", MISSING, "--output", "/tmp/microcoder-never-written.jsonl"],
    "stats": None,
}
STAGES = [(name, module) for name, module, _ in COMMANDS
          if hasattr(importlib.import_module(f"microcoder.stages.{module}"), "stage")]


def _config(module: str) -> tuple[str, type]:
    """A command's params section and config class, from its Command (`stage()`)."""
    command = importlib.import_module(f"microcoder.stages.{module}").stage()
    return command.params_section(), command.config


def _run(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def test_every_pipeline_command_is_a_contract_stage():
    named = {name for name, _ in STAGES}
    assert named >= set(MISSING_INPUT) - {"stats"}, sorted(set(MISSING_INPUT) - named)


@pytest.mark.parametrize(("name", "module"), STAGES)
def test_help_lists_every_config_field(name, module):
    section, config = _config(module)
    fields = [f.name for f in dataclasses.fields(config) if f.init]
    result = _run([name, "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    missing = [f for f in fields if not re.search(rf"\b{f}\b", text)]
    assert not missing, f"{name} --help does not show {missing}"
    assert f"`{section}:` section" in text
    for flag in ("--params", "--set", "--debug"):
        assert flag in text


@pytest.mark.parametrize(("name", "module"), STAGES)
def test_a_bad_set_is_one_line_and_exit_2(name, module, tmp_path):
    result = _run([name, "--params", str(ROOT / "params.yaml"), "--set", "bogus_key=1"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{name}: error:") and "bogus_key" in lines[0], lines


@pytest.mark.parametrize(("name", "module"), [s for s in STAGES if MISSING_INPUT.get(s[0])])
def test_a_missing_input_is_one_line_and_exit_2(name, module, tmp_path):
    args = [name, "--params", str(ROOT / "params.yaml"), *MISSING_INPUT[name]]
    if name not in ("evaluate", "publish"):
        args += ["--out-dir", str(tmp_path / "out")]
    result = _run(args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{name}: error:") and MISSING in lines[0], lines
    assert not (tmp_path / "out" / "stats.json").exists()


def _doc_blocks() -> list[str]:
    text = (ROOT / "docs" / "DEVELOPING.md").read_text()
    section = text[text.index("### Adding a stage"):]
    return re.findall(r"```python\n(.*?)```", section, re.S)[:2]


def test_the_developing_guide_example_stage_runs(tmp_path, monkeypatch):
    import typer

    from microcoder.pipeline.io import write_jsonl

    library, shell = _doc_blocks()
    module = types.ModuleType("microcoder.pipeline.shout")
    monkeypatch.setitem(sys.modules, "microcoder.pipeline.shout", module)
    exec(compile(library, "DEVELOPING.md:pipeline/shout.py", "exec"), module.__dict__)  # our own doc's code
    stage = types.ModuleType("microcoder.stages.shout")
    exec(compile(shell, "DEVELOPING.md:stages/shout.py", "exec"), stage.__dict__)

    problems = tmp_path / "problems.jsonl"
    base = {"source": "t", "platform": "t", "style": "stdio", "tests": [{"input": "1\n", "output": "1\n"}]}
    write_jsonl(problems, [{**base, "id": "a", "statement": "print the given number back"},
                           {**base, "id": "b", "statement": "echo"},
                           {"id": "c"}])
    (tmp_path / "params.yaml").write_text("shout:\n  min_words: 2\n")
    demo = typer.Typer()
    demo.command("shout")(stage.main)
    demo.command("other")(lambda: None)
    out = tmp_path / "out"
    result = CliRunner().invoke(demo, ["shout", "--problems", str(problems), "--out-dir", str(out),
                                       "--params", str(tmp_path / "params.yaml")])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "shout: read 3, kept 1, rejected 2"
    bad = CliRunner().invoke(demo, ["shout", "--problems", str(problems), "--set", "min_word=1"])
    assert bad.exit_code == 2 and "unknown shout params ['min_word']" in bad.output
