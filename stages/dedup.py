"""`microcoder dedup`: exact + MinHash near-duplicate clustering and benchmark decontamination."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    input_path: Annotated[Path, typer.Option("--input", help="Problems parquet file or shard folder.")] = Path(
        "data/raw/problems.parquet"),
    output_dir: Annotated[Path, typer.Option("--output-dir", help="Where problems.parquet, clusters.parquet, "
                                             "rejects.jsonl and stats.json go.")] = Path("data/dedup"),
    params: ParamsOpt = Path("params.yaml"),
    overrides: SetOpt = None,
) -> None:
    from pipeline.config import config_from_params
    from pipeline.dedup import DedupConfig, run_dedup
    from pipeline.params import load_params

    cfg = config_from_params(DedupConfig, load_params("dedup", params, overrides))
    stats = run_dedup(input_path, output_dir, cfg)
    typer.echo(f"dedup: read {stats['read']}, kept {stats['kept']}, folded {stats['duplicates_folded']} "
               f"into {stats['clusters']} clusters, rejected {stats['rejected']} "
               f"(contaminated {stats['contaminated']}) -> {output_dir}")
