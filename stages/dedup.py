"""`microcoder dedup`: exact + MinHash near-duplicate clustering and benchmark decontamination (docs/dedup.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

CONFIG = ("dedup", "pipeline.dedup.config:DedupConfig")


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
    from pipeline.stage import run_stage

    def body() -> None:
        from pipeline.dedup import DedupConfig, run_dedup
        from pipeline.stage import load_config

        cfg = load_config(DedupConfig, "dedup", params, set_)
        stats = run_dedup(problems, out_dir, cfg, progress=progress)
        by_reason = ", ".join(f"{k} {v}" for k, v in stats["rejected_by_reason"].items())
        typer.echo(f"dedup: read {stats['read']}, kept {stats['kept']}, rejected {stats['rejected']}"
                   f"{f' ({by_reason})' if by_reason else ''}; {stats['clusters']} clusters -> {out_dir}")

    run_stage("dedup", body, debug)
