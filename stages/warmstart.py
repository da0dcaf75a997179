"""`microcoder warmstart`: SFT the policy on reference solutions of validated problems (before rollout)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output folder for the warm-started model + tokenizer.")] = Path("models/warm"),
    report_dir: Annotated[Path, typer.Option(help="Output folder for stats.json and rejects.jsonl.")] = Path("data/warmstart"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    """Disabled (`warmstart.enabled: false`), the output is a copy of the base model."""
    import logging

    from pipeline.inputs import stage_config, stage_errors
    from pipeline.warmstart import WarmStartConfig, run_warmstart

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("warmstart"):
        cfg = stage_config(WarmStartConfig, "warmstart", params, set_)
        s = run_warmstart(cfg, problems, out_dir, report_dir).stats
    if not s["enabled"]:
        typer.echo(f"warmstart: disabled, {s['status']} ({s['model']}) -> {out_dir}")
        return
    typer.echo(f"warmstart: {s['steps']} steps ({s['epochs']} epochs) on {s['problems_used']}/{s['problems_in']} "
               f"problems ({s['problems_rejected']} rejected: {s['reject_reasons']}), loss {s['loss_first']} -> "
               f"{s['loss_last']}, {s['wall_s']} s -> {out_dir}")
