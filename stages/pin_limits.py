"""`microcoder pin-limits`: pin the time limits a validate run derived (pipeline/pinned_limits.py),
so that a rerun on any machine gives the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt


def main(
    measured: Annotated[Path, typer.Option("--from", help="A validate run's derived limits.")] = Path("data/validated/time_limits.jsonl"),
    pinned: Annotated[Path, typer.Option("--to", help="The committed pins (params `validate.pinned_limits`).")] = Path("data/seed/time_limits.jsonl"),
    debug: DebugOpt = False,
) -> None:
    """Merge a validate run's derived limits into the pinned file (a pin that still holds stays as it
    was); commit the file, and `dvc repro` reruns validate with the pins."""
    from microcoder.pipeline.inputs import InputError
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.pinned_limits import pin

        if not measured.is_file():
            raise InputError(f"{measured} not found: run `microcoder validate` (or `dvc repro validate`) first")
        total, changed = pin(measured, pinned)
        typer.echo(f"{pinned}: {total} pinned limits, {changed} new or changed")

    run_stage("pin-limits", body, debug)
