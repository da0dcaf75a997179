"""`microcoder build`: curated Hub-layout shards, the dataset card, plots and stats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Filtered problems.")] = Path("data/filtered/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory (the dataset folder).")] = Path("data/curated"),
    data_dir: Annotated[Path, typer.Option(help="Where the upstream stages' stats.json live.")] = Path("data"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    import logging

    from pipeline.hub import BuildConfig, run_build
    from pipeline.inputs import stage_config, stage_errors

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("build"):
        cfg = stage_config(BuildConfig, "build", params, set_)
        s = run_build(cfg, problems, out_dir, data_dir=data_dir, params_path=params)
    typer.echo(f"build: {s['name']} v{s['version']}: {s['problems']} problems in {s['shards']} shard(s) "
               f"-> {out_dir} ({s['rejected']} of {s['problems_in']} input records rejected); "
               f"by source {s['by_source']}")
