"""`microcoder eval-model`: pass@1 / pass@k of the base and trained models by platform and difficulty.

The DVC `evaluate` stage (`microcoder evaluate` is the code evaluator's CLI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    benchmark: Annotated[Path | None, typer.Option(
        help="Benchmark problems [params: evaluate.benchmark, data/seed/benchmark.jsonl].")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="name=path of a model to evaluate (repeatable; replaces params' evaluate.models).")] = None,
    out_dir: Annotated[Path | None, typer.Option(help="Output directory [params: evaluate.output_dir, data/eval].")] = None,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
) -> None:
    import logging

    from pipeline.inputs import InputError, stage_config, stage_errors
    from training.evaluate import EvalModelConfig, run_evaluation

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("eval-model"):
        overrides = list(set_ or [])
        if model:
            pairs = [m.split("=", 1) for m in model]
            if any(len(p) != 2 or not p[0] or not p[1] for p in pairs):
                raise InputError(f"--model expects name=path, got {model}")
        cfg = stage_config(EvalModelConfig, "evaluate", params, overrides)
        if model:
            cfg.models = dict(pairs)
        if benchmark is not None:
            cfg.benchmark = str(benchmark)
        if out_dir is not None:
            cfg.output_dir = str(out_dir)
        metrics = run_evaluation(cfg)
    table = (Path(cfg.output_dir) / "table.md").read_text(encoding="utf-8")
    b = metrics["benchmark"]
    unjudged = {name: {s: m["samples"][s] for s in ("deadline", "error")} for name, m in metrics["models"].items()}
    typer.echo(f"eval-model: {b['problems']} of {b['read']} benchmark problems ({b['rejected']} excluded: "
               f"{b['excluded']}), models {list(metrics['models'])}; unjudged samples (left out of pass@k): "
               f"{unjudged}\n{table}")
