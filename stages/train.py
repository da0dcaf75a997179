"""`microcoder train`: MicroCoder-GRPO (TRL) on the curated shards; metrics, curves and a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    model: Annotated[str | None, typer.Option(help="Policy model dir or Hub id [params: train.model, models/tiny].")] = None,
    input: Annotated[Path | None, typer.Option(
        "--input", help="Training problems [params: train.input, data/curated].")] = None,
    fallback_input: Annotated[Path | None, typer.Option(
        help="Used only when --input does not exist [data/validated/problems.parquet].")] = None,
    out_dir: Annotated[Path | None, typer.Option(help="Output directory [params: train.output_dir, data/train].")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the interrupted run from its latest checkpoint in <out-dir>/trainer "
                         "[params: train.resume].")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    import logging

    from pipeline.inputs import stage_config, stage_errors
    from training.train import TrainConfig, run_training

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("train"):
        cfg = stage_config(TrainConfig, "train", params, set_)
        for name, value in (("model", model), ("input", input), ("fallback_input", fallback_input),
                            ("output_dir", out_dir)):
            if value is not None:
                setattr(cfg, name, str(value))
        if resume:
            cfg.resume = True
        result = run_training(cfg)
    m = result.metrics
    final = m["final"]
    typer.echo(
        f"train: {m['steps']} steps on {m['problems']['used']} problems ({m['problems']['rejected']} rejected); "
        f"last generation: reward {final['reward_mean']}, pass rate {final['pass_rate']}, "
        f"masked {final['masked_frac']}, diversity {final['diversity']}, T {final['temperature']}, "
        f"unjudged at the deadline {final['deadline_frac']}; "
        f"checkpoint {result.checkpoint}"
    )
