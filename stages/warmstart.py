"""`microcoder warmstart`: SFT the policy on reference solutions of validated problems (before rollout)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.training.warmstart import WarmStart

    return WarmStart


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    model: Annotated[str, typer.Option(help="Base policy: a local folder (a Hub id only when warmstart.enabled is false).")] = "models/tiny",
    benchmark: Annotated[list[Path] | None, typer.Option(
        help="Benchmark problems (our schema) never trained on. Repeatable. [default: data/seed/benchmark.jsonl]")] = None,
    out_dir: Annotated[Path, typer.Option(help="Output folder for the warm-started model + tokenizer.")] = Path("models/warm"),
    report_dir: Annotated[Path, typer.Option(help="Output folder for stats.json, settings.json and rejects.jsonl.")] = Path("data/warmstart"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    """Disabled (`warmstart.enabled: false`), the output is a copy of the base model."""
    def report(result, cfg) -> None:
        s = result.stats
        if not s["enabled"]:
            typer.echo(f"warmstart: disabled, {s['status']} ({model}) -> {out_dir}")
            return
        if "steps" not in s:  # nothing to learn from: the base model went through untrained
            typer.echo(f"warmstart: read {s['read']}, kept 0, rejected {s['rejected']} {s['rejected_by_reason']}; "
                       f"{s['status']} ({model}) -> {out_dir} (reasons in {report_dir}/rejects.jsonl)")
            return
        typer.echo(f"warmstart: read {s['read']}, kept {s['kept']}, rejected {s['rejected']} {s['rejected_by_reason']}; "
                   f"{s['steps']} steps ({s['epochs']} epochs), loss {s['loss_first']} -> {s['loss_last']}, "
                   f"{s['wall_s']} s -> {out_dir}")

    benchmarks = [str(b) for b in benchmark or [Path("data/seed/benchmark.jsonl")]]
    run_stage_command(stage, problems, report_dir, params=params, set_=set_, progress=progress, debug=debug,
                      report=report, model_dir=out_dir, model=model, benchmarks=benchmarks)
