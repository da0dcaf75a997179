"""`microcoder tiny-model`: the deterministic tiny Qwen3 (+ BPE tokenizer) used offline and in tests (pipeline/models.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, SetOpt

if TYPE_CHECKING:
    from microcoder.pipeline.stage import Command


def stage() -> type[Command]:
    """The command's params (imported when the command runs or shows its help)."""
    from microcoder.pipeline.models import TinyModel

    return TinyModel


def main(
    out_dir: Annotated[Path, typer.Option(help="Directory to save the model and tokenizer to.")] = Path("models/tiny"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    debug: DebugOpt = False,
) -> None:
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.models import build_tiny_model

        cfg, _ = stage().load_configs(params, set_)
        path = build_tiny_model(out_dir, cfg)
        typer.echo(f"tiny-model: Qwen3 (hidden {cfg.hidden_size}, {cfg.num_hidden_layers} layers, vocab "
                   f"{cfg.vocab_size}, seed {cfg.seed}) saved to {path}")

    run_stage("tiny-model", body, debug)
