"""`microcoder filter`: pass-rate band plus the optional calibrated LLM difficulty prediction
(pipeline/difficulty/filter.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

CONFIG = ("filter", "pipeline.difficulty.filter:FilterConfig")


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    rollouts: Annotated[Path, typer.Option(help="Rollout shards directory.")] = Path("data/rollouts"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/filtered"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    from pipeline.stage import run_stage

    def body() -> None:
        from pipeline.difficulty.filter import FilterConfig, run_filter
        from pipeline.stage import load_config

        cfg = load_config(FilterConfig, "filter", params, set_)
        r = run_filter(cfg, problems, rollouts, out_dir)
        cal = r["calibration"]
        fit = (f"calibration {cal['method']}: cv_mae {cal['cv_mae']} (baseline {cal['baseline_mae']})"
               if cal.get("fitted") else f"no calibration ({cal['reason']})")
        typer.echo(f"filter: read {r['read']}, kept {r['kept']} {r['kept_by_reason']}, rejected {r['rejected']} "
                   f"{r['rejected_by_reason']}; {fit}")

    run_stage("filter", body, debug)
