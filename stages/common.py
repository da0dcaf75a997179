"""Options every stage command shares, and the body they share (the stage contract: pipeline/stage.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

ParamsOpt = Annotated[Path, typer.Option("--params", help="params.yaml to read the stage's section from.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a param: key=value (dotted keys, YAML values; evaluator.KEY=VALUE for "
                               "the evaluator section). Repeatable."),
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Debug logging, and a traceback on errors.")]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")]


def run_stage_command(stage: Callable[[], Any], problems: Path | None, out_dir: Path, *, params: Path,
                      set_: list[str] | None, debug: bool, report: Callable[[Any, Any], None], progress: bool = True,
                      prepare: Callable[[], dict[str, Any]] | None = None, **inputs: Any) -> None:
    """The body every stage command shares, under the contract's error path (`run_stage`): the
    stage's config from params.yaml and `--set` (and its evaluator's, for a judging stage),
    `Stage.run`, then `report(result, cfg)` (the stage's summary lines). `stage` is the stage
    file's `stage()`, which imports its Stage class; `prepare` checks the command's own options
    inside the error path and returns more named inputs."""
    from microcoder.pipeline.stage import run_stage

    cls = stage()

    def body() -> None:
        extra = prepare() if prepare is not None else {}
        cfg, evaluator = cls.load_configs(params, set_)
        report(cls().run(cfg, problems, out_dir, evaluator=evaluator, progress=progress, **inputs, **extra), cfg)

    run_stage(cls.name, body, debug)


def run_command(ctx: typer.Context, name: str, **values: Any) -> None:
    """Run another `microcoder` command with a value for each of its options, found by name in the
    CLI: not imported, since its code is not this command's (nor, for a stage, its DVC deps)."""
    root = ctx.find_root()
    group = root.command  # the `microcoder` group (typer's own click: no click.Group to test against)
    command = group.get_command(root, name) if hasattr(group, "get_command") else None
    if command is None or command.callback is None:
        raise RuntimeError(f"`microcoder {name}` is not a registered command")
    ctx.invoke(command.callback, **values)
