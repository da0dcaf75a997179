"""`microcoder export`: the curated release in verl's, OpenRLHF's or rllm's data layout, with the
reward entry point each trainer calls (pipeline/export.py, pipeline/rewards_api.py, docs/export.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt


def main(
    fmt: Annotated[list[str] | None, typer.Option("--format", help="verl | openrlhf | rllm. Repeatable; default: all three.")] = None,
    release: Annotated[Path, typer.Option(help="The built release (`microcoder build`'s --out-dir), its data/ shards, or one parquet file.")] = Path("data/curated"),
    out_dir: Annotated[Path, typer.Option(help="Where to write <format>/train.{parquet,jsonl}.")] = Path("data/export"),
    debug: DebugOpt = False,
) -> None:
    """Prints each file written and how to point the trainer at it and at the reward function."""
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.export import FORMATS, usage, write_export
        from microcoder.pipeline.inputs import require_input

        written = write_export(require_input(release, "curated release"), out_dir, fmt or list(FORMATS))
        typer.echo(usage(written))

    run_stage("export", body, debug)
