"""`microcoder eval-model`: pass@1 / pass@k of the base and trained models by platform and difficulty
(docs/training.md). The DVC `evaluate` stage; `microcoder evaluate` is the code evaluator's CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.training.eval_model import EvalModel

    return EvalModel


def main(
    benchmark: Annotated[Path, typer.Option(
        help="Benchmark problems: our jsonl, a Problem parquet file/directory, or LiveCodeBench jsonl(.gz).")
    ] = Path("data/seed/benchmark.jsonl"),
    model: Annotated[list[str], typer.Option(
        "--model", help="name=path (or Hub id) of a model to evaluate; repeatable, evaluated side by side.")
    ] = ["base=models/warm", "trained=data/train/checkpoint"],  # noqa: B006 - typer reads the default list
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/eval"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    def parse_models() -> dict:
        from microcoder.pipeline.inputs import InputError

        pairs = [m.split("=", 1) for m in model]
        if any(len(p) != 2 or not p[0] or not p[1] for p in pairs):
            raise InputError(f"--model expects name=path, got {model}")
        models = dict(pairs)
        if len(models) != len(pairs):
            raise InputError(f"--model names must differ, got {model}")
        return {"models": models}

    def report(result, cfg) -> None:
        s = result.stats
        table = (out_dir / "table.md").read_text(encoding="utf-8")
        unjudged = {name: {k: m["samples"][k] for k in ("deadline", "error")}
                    for name, m in result.metrics["models"].items()}
        typer.echo(f"eval-model: read {s['read']} benchmark problems, kept {s['kept']}, rejected {s['rejected']} "
                   f"{s['rejected_by_reason']}; models {list(result.metrics['models'])}; unjudged samples (left out of pass@k): "
                   f"{unjudged}\n{table}")

    run_stage_command(stage, benchmark, out_dir, params=params, set_=set_, progress=progress, debug=debug,
                      report=report, prepare=parse_models)
