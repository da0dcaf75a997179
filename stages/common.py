"""Options shared by every stage command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ParamsOpt = Annotated[Path, typer.Option("--params", help="params.yaml to read the stage's section from.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a param: key=value (dotted keys, YAML values). Repeatable."),
]
