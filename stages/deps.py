"""`microcoder deps`: check or rewrite dvc.yaml's deps (pipeline/dvc_deps.py): the code each stage
imports, and the local source paths scrape reads."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt

WRITE = "microcoder deps --write"


def main(
    check: Annotated[bool, typer.Option("--check", help="List every stage's missing or stale deps; exit 1 if any.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Rewrite every stage's code deps (and scrape's source paths).")] = False,
    dvc_file: Annotated[Path | None, typer.Option(help="dvc.yaml to check (default: the checkout's).")] = None,
    params: Annotated[Path | None, typer.Option("--params", help="params.yaml naming scrape's sources (default: the checkout's).")] = None,
    debug: DebugOpt = False,
) -> None:
    """Keep dvc.yaml's deps in step with the code and params.yaml, so `dvc repro` reruns a stage
    when its code or a source folder changes. Run after adding a module or a local source."""
    from microcoder.pipeline.inputs import InputError
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline import dvc_deps

        if check == write:
            raise InputError("pass one of --check (list what is missing) or --write (rewrite dvc.yaml's deps)")
        path = dvc_file or dvc_deps.dvc_file()
        if write:
            dvc_deps.write_deps(path, params)
        lines = dvc_deps.problems(path, params)
        for line in lines:
            typer.echo(f"deps: {path}: {line}", err=True)
        if lines:
            typer.echo(f"deps: {len(lines)} stages out of step with the code or params.yaml: run `{WRITE}`", err=True)
            raise typer.Exit(1)
        typer.echo(f"deps: {path}: every stage's deps {'rewritten and ' if write else ''}in step")

    run_stage("deps", body, debug)
