"""Options every stage command shares (the stage contract: pipeline/stage.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ParamsOpt = Annotated[Path, typer.Option("--params", help="params.yaml to read the stage's section from.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a param: key=value (dotted keys, YAML values; evaluator.KEY=VALUE for "
                               "the evaluator section). Repeatable."),
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Debug logging, and a traceback on errors.")]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")]
