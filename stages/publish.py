"""`microcoder publish`: push a dataset version to the Hugging Face Hub (off unless enabled)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    curated: Annotated[Path, typer.Option(help="The built dataset folder.")] = Path("data/curated"),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print exactly what would be uploaded; upload nothing.")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    """Needs HF_TOKEN (a write token) for a real upload; the tag is the build version."""
    from pipeline.hub import PublishConfig, PublishError, format_plan, publish, publish_plan
    from pipeline.inputs import stage_config, stage_errors

    with stage_errors("publish"):
        cfg = stage_config(PublishConfig, "publish", params, set_)
    try:
        if dry_run:
            typer.echo("dry run: nothing is uploaded\n" + format_plan(publish_plan(cfg, curated)))
            return
        if not cfg.enabled:
            typer.echo("publish: disabled (publish.enabled is false); nothing uploaded. "
                       "Use --dry-run to see what would be, --set enabled=true to upload.")
            return
        result = publish(cfg, curated)
    except PublishError as e:
        typer.echo(f"publish: error: {e}", err=True)
        raise typer.Exit(1) from None
    typer.echo(format_plan(result) + f"\npublished: commit {result['commit']} tagged {result['tag']}")
