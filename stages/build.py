"""`microcoder build`: curated Hub-layout shards, the dataset card, plots and stats (pipeline/build.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.build import Build

    return Build


def main(
    problems: Annotated[Path, typer.Option(help="Filtered problems (parquet file/dir or jsonl).")] = Path("data/filtered/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory (the dataset folder).")] = Path("data/curated"),
    data_dir: Annotated[Path, typer.Option(help="Where the upstream stages' stats.json and settings.json live (for the card).")] = Path("data"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    debug: DebugOpt = False,
) -> None:
    def report(s: dict, cfg) -> None:
        typer.echo(f"build: {cfg.name} v{cfg.version}: read {s['read']}, kept {s['kept']} in {s['shards']} shard(s), "
                   f"rejected {s['rejected']} {s['rejected_by_reason']} -> {out_dir}; by source {s['by_source']}")

    run_stage_command(stage, problems, out_dir, params=params, set_=set_, debug=debug, report=report,
                      data_dir=data_dir, params_path=params)
