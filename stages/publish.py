"""`microcoder publish`: push a dataset version to the Hugging Face Hub, off unless enabled (pipeline/publish.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, SetOpt

if TYPE_CHECKING:
    from microcoder.pipeline.stage import Command


def stage() -> type[Command]:
    """The command's params (imported when the command runs or shows its help)."""
    from microcoder.pipeline.publish import Publish

    return Publish


def main(
    dataset_dir: Annotated[Path, typer.Option(help="The built dataset folder (`microcoder build`'s --out-dir).")] = Path("data/curated"),
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print exactly what would be uploaded; upload nothing.")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Needs HF_TOKEN (a write token) for a real upload; the tag is the build version. The dry run reads
    the versions already on the Hub (no token needed for a public repo) and uploads nothing."""
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.inputs import require_input
        from microcoder.pipeline.publish import format_plan, preview, publish

        cfg, _ = stage().load_configs(params, set_)
        folder = require_input(dataset_dir, "built dataset folder")
        if dry_run:
            typer.echo("dry run: nothing is uploaded\n" + format_plan(preview(cfg, folder)))
            return
        if not cfg.enabled:
            typer.echo("publish: disabled (publish.enabled is false); nothing uploaded. "
                       "Use --dry-run to see what would be, --set enabled=true to upload.")
            return
        result = publish(cfg, folder)
        typer.echo(format_plan(result) + f"\npublished: commit {result['commit']} tagged {result['tag']}")

    run_stage("publish", body, debug)
