"""`microcoder filter`: pass-rate band plus the optional calibrated LLM difficulty prediction."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    rollouts: Annotated[Path, typer.Option(help="Rollout shards directory.")] = Path("data/rollouts"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/filtered"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    import logging

    from pipeline.difficulty.filter import FilterConfig, run_filter
    from pipeline.inputs import stage_config, stage_errors

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("filter"):
        cfg = stage_config(FilterConfig, "filter", params, set_)
        r = run_filter(cfg, problems, rollouts, out_dir)
    cal = r["calibration"]
    fit = (f"calibration {cal['method']}: cv_mae {cal['cv_mae']} (baseline {cal['baseline_mae']})"
           if cal.get("fitted") else f"no calibration ({cal['reason']})")
    typer.echo(f"filter: {r['problems_in']} problems -> {r['kept']} kept, {r['rejected']} rejected; "
               f"by reason {r['by_reason']}; {fit}")
