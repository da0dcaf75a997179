"""Which sandbox the evaluator uses (issue 24 item 9): `auto` fails closed. bwrap when installed,
else unshare where a probe shows its namespaces work, else SandboxUnavailable naming how to install
bubblewrap; `none` (no isolation) only when set explicitly. The tools are faked through
`shutil.which` as sandbox/launch.py sees it, and the unshare probe through fake `unshare` scripts."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.schema import Problem, TestCase

SUM = Problem(id="sum", source="test", statement="", style="stdio", tests=[TestCase("1 2\n", "3\n")],
              time_limit_s=1.0)
SUM_PY = Submission("sum", "py", "python", "a, b = map(int, input().split())\nprint(a + b)\n")


class _Shutil:
    """shutil as sandbox/launch.py sees it, with `which` answering for bwrap and unshare as told."""

    def __init__(self, tools: dict[str, str | None]):
        self.tools = tools

    def which(self, name, *args, **kwargs):
        if name in self.tools:
            return self.tools[name]
        return shutil.which(name, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(shutil, name)


@pytest.fixture
def tools(monkeypatch):
    """tools(bwrap=..., unshare=...): what `shutil.which` finds for each (None: not installed);
    the unshare probe's cache is cleared before and after."""
    sb._probe_unshare.cache_clear()

    def install(bwrap: str | None = None, unshare: str | None = None) -> None:
        monkeypatch.setattr(sb, "shutil", _Shutil({"bwrap": bwrap, "unshare": unshare}))

    yield install
    sb._probe_unshare.cache_clear()


def fake_unshare(folder: Path, body: str) -> str:
    """A stand-in `unshare` whose shell `body` decides how the probe goes; it logs its arguments."""
    path = folder / "unshare"
    path.write_text(f'#!/bin/sh\necho "$@" >> {folder / "calls"}\n{body}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def test_auto_without_bwrap_or_unshare_is_an_error_naming_bubblewrap(tools):
    tools(bwrap=None, unshare=None)
    with pytest.raises(sb.SandboxUnavailable) as err:
        sb.resolve_kind("auto")
    message = str(err.value)
    assert "bubblewrap" in message and "apt-get install bubblewrap" in message
    assert "\n" not in message
    assert not sb.available("unshare")


def test_none_only_when_set_explicitly_and_still_warned_about(tools):
    tools(bwrap=None, unshare=None)
    kind, warning = sb.resolve_kind("none")
    assert kind == "none"
    assert warning is not None and "NOT isolated" in warning


def test_auto_takes_bwrap_when_installed(tools, tmp_path):
    tools(bwrap="/usr/bin/bwrap", unshare=fake_unshare(tmp_path, "exit 1"))
    assert sb.resolve_kind("auto") == ("bwrap", None)
    assert not (tmp_path / "calls").exists()  # no probe needed


def test_auto_takes_unshare_when_its_probe_works(tools, tmp_path):
    tools(bwrap=None, unshare=fake_unshare(tmp_path, "exit 0"))
    kind, warning = sb.resolve_kind("auto")
    assert kind == "unshare" and "bubblewrap" in warning
    assert sb.resolve_kind("unshare") == ("unshare", None)
    assert sb.available("unshare")
    # Probed once (cached), with the namespaces an unshare box itself makes.
    (call,) = (tmp_path / "calls").read_text().splitlines()
    assert call.startswith(" ".join(sb.unshare_namespace_args()[1:]) + " /bin/sh -c mount -t tmpfs")
    for flag in ("--pid", "--fork", "--net", "--ipc", "--uts", "--mount"):
        assert flag in call.split()


def test_a_failing_unshare_probe_is_an_error(tools, tmp_path):
    tools(bwrap=None, unshare=fake_unshare(tmp_path, 'echo "unshare: unshare failed: Operation not permitted" >&2\n'
                                                     "exit 1"))
    with pytest.raises(sb.SandboxUnavailable) as err:
        sb.resolve_kind("auto")
    message = str(err.value)
    assert "apt-get install bubblewrap" in message and "Operation not permitted" in message
    assert "\n" not in message
    with pytest.raises(sb.SandboxUnavailable, match="Operation not permitted"):
        sb.resolve_kind("unshare")
    assert not sb.available("unshare")
    assert sb.resolve_kind("none")[0] == "none"


def test_a_hanging_unshare_probe_is_an_error(tools, tmp_path, monkeypatch):
    monkeypatch.setattr(sb, "UNSHARE_PROBE_TIMEOUT_S", 0.5)
    tools(bwrap=None, unshare=fake_unshare(tmp_path, "exec sleep 30"))
    with pytest.raises(sb.SandboxUnavailable, match="took over 0.5 s"):
        sb.resolve_kind("auto")


def test_the_real_unshare_probe_matches_the_unshare_sandbox():
    """On this machine: where the probe says unshare works, an unshare box judges."""
    sb._probe_unshare.cache_clear()
    if sb.unshare_problem() is not None:
        with pytest.raises(sb.SandboxUnavailable):
            sb.resolve_kind("unshare")
        return
    with Evaluator(workers=1, sandbox="unshare", config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as e:
        (v,) = e.evaluate_batch([SUM], [SUM_PY])
    assert v.status == "AC" and v.meta["sandbox"] == "unshare"


def test_evaluator_auto_refuses_to_start_without_a_sandbox(tools):
    tools(bwrap=None, unshare=None)
    for wait in (True, False):
        with pytest.raises(sb.SandboxUnavailable, match="bubblewrap"):
            Evaluator(workers=1, sandbox="auto", wait=wait)


def test_evaluator_auto_never_falls_back_to_none_when_bwrap_fails_to_start(tools, tmp_path, monkeypatch):
    """bwrap installed but broken, no unshare: the start fails, it is not retried unisolated."""
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    tools(bwrap=str(broken), unshare=None)
    monkeypatch.setattr(sb, "bwrap_args", lambda spec, binds: [str(broken), "--"])
    with pytest.raises(sb.SandboxUnavailable, match="no sandbox could be started"):
        Evaluator(workers=1, sandbox="auto", config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5))


def test_explicit_none_still_starts_without_any_sandbox_tool(tools):
    tools(bwrap=None, unshare=None)
    with Evaluator(workers=1, sandbox="none", config=EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)) as e:
        assert e.kind == "none" and e.meta["sandbox"] == "none"
        assert "NOT isolated" in e.meta["sandbox_warning"]


def test_microcoder_evaluate_without_a_sandbox_is_one_line_and_exit_2(tools, tmp_path):
    from typer.testing import CliRunner

    from microcoder.pipeline import io
    from microcoder.pipeline.cli import app

    tools(bwrap=None, unshare=None)
    io.write_problems(tmp_path / "problems.jsonl", [SUM])
    (tmp_path / "subs.jsonl").write_text('{"problem_id": "sum", "submission_id": "py", "language": "python", '
                                         '"code": "print(3)"}\n')
    (tmp_path / "params.yaml").write_text("")
    import logging

    logging.getLogger()._microcoder = False  # as tests/test_evaluate_command.py: a fresh process's logging
    r = CliRunner().invoke(app, ["evaluate", "--problems", str(tmp_path / "problems.jsonl"), "--submissions",
                                 str(tmp_path / "subs.jsonl"), "-o", str(tmp_path / "verdicts.jsonl"),
                                 "--workers", "1", "--no-progress", "--params", str(tmp_path / "params.yaml")])
    assert r.exit_code == 2, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("evaluate:")]
    assert len(errors) == 1 and errors[0].startswith("evaluate: error: "), r.output
    assert "apt-get install bubblewrap" in errors[0]
    assert "Traceback" not in r.output
