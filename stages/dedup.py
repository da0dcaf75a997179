"""`microcoder dedup`: exact + MinHash near-duplicate clustering and benchmark decontamination (docs/dedup.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.dedup.stage import Dedup

    return Dedup


def main(
    problems: Annotated[Path, typer.Option(help="Input problems: parquet file or shard folder (scrape output).")] = Path(
        "data/raw/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Where problems.parquet, clusters.parquet, rejects.jsonl, "
                                          "stats.json and settings.json go.")] = Path("data/dedup"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    def report(stats: dict, cfg) -> None:
        by_reason = ", ".join(f"{k} {v}" for k, v in stats["rejected_by_reason"].items())
        typer.echo(f"dedup: read {stats['read']}, kept {stats['kept']}, rejected {stats['rejected']}"
                   f"{f' ({by_reason})' if by_reason else ''}; {stats['clusters']} clusters -> {out_dir}")

    run_stage_command(stage, problems, out_dir, params=params, set_=set_, progress=progress, debug=debug, report=report)
