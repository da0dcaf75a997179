"""`microcoder tiny-model OUT_DIR`: the deterministic tiny Qwen3 used offline and in tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def main(
    out_dir: Annotated[Path, typer.Argument(help="Directory to save the model and tokenizer to.")],
    seed: Annotated[int, typer.Option(help="Weight-initialisation seed (same seed, same bytes).")] = 0,
    hidden_size: Annotated[int, typer.Option(help="Hidden size.")] = 64,
    layers: Annotated[int, typer.Option(help="Number of decoder layers.")] = 2,
    vocab_size: Annotated[int, typer.Option(help="BPE vocabulary size (trained on the shipped corpus).")] = 512,
) -> None:
    from pipeline.models import TinyModelConfig, build_tiny_model

    cfg = TinyModelConfig(seed=seed, hidden_size=hidden_size, num_hidden_layers=layers, vocab_size=vocab_size)
    path = build_tiny_model(out_dir, cfg)
    typer.echo(f"tiny Qwen3 saved to {path}")
