"""`microcoder train`: MicroCoder-GRPO (TRL) on the curated shards; metrics, curves and a checkpoint (docs/training.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

if TYPE_CHECKING:
    from microcoder.pipeline.stage import Command


def stage() -> type[Command]:
    """The command's params (imported when the command runs or shows its help)."""
    from microcoder.training.train import Train

    return Train


def main(
    model: Annotated[str, typer.Option(help="Policy model: local directory or Hub id.")] = "models/warm",
    problems: Annotated[Path, typer.Option(
        help="Training problems: curated shards (Hub layout), a Problem parquet file/dir, or our jsonl.")
    ] = Path("data/curated"),
    fallback_problems: Annotated[Path | None, typer.Option(
        help="Used only when --problems does not exist (before the first build: dvc.yaml passes "
             "data/validated/problems.parquet); an empty --problems is an error. Default: no fallback.")
    ] = None,
    out_dir: Annotated[Path, typer.Option(help="Output directory (metrics, curves, checkpoint, trainer/).")
                       ] = Path("data/train"),
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the interrupted run from its latest checkpoint in <out-dir>/trainer.")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.training.train import TrainRun, run_training

        cfg, evaluator = stage().load_configs(params, set_)
        run = TrainRun(model=model, problems=problems, out_dir=out_dir, fallback=fallback_problems, resume=resume)
        result = run_training(cfg, run, evaluator=evaluator, progress=progress)
        s, m = result.stats, result.metrics
        final = m["final"]
        silent = f", {s['steps_without_signal']} without learning signal" if s.get("steps_without_signal") else ""
        stopped = f"; stopped early: {s['stop_reason']}" if s.get("stop_reason") else ""
        typer.echo(
            f"train: read {s['read']} problems, kept {s['kept']} (trained on), rejected {s['rejected']} "
            f"{s['rejected_by_reason']}; {m['steps']} steps{silent}; last generation: reward {final['reward_mean']}, "
            f"pass rate {final['pass_rate']}, masked {final['masked_frac']}, diversity {final['diversity']}, "
            f"T {final['temperature']}, unjudged at the deadline {final['deadline_frac']}; "
            f"checkpoint {result.checkpoint}{stopped}"
        )

    run_stage("train", body, debug)
