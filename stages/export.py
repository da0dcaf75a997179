"""`microcoder export`: the curated release in verl's, OpenRLHF's or rllm's data layout, with the
reward entry point each trainer calls (pipeline/export.py, pipeline/rewards_api.py, docs/export.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt


def main(
    fmt: Annotated[list[str] | None, typer.Option("--format", help="verl | openrlhf | rllm. Repeatable; default: all three.")] = None,
    release: Annotated[Path, typer.Option(help="The built release (`microcoder build`'s --out-dir), its data/ shards, or one parquet file.")] = Path("data/curated"),
    out_dir: Annotated[Path, typer.Option(help="Where to write <format>/train.{parquet,jsonl}.")] = Path("data/export"),
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer (path or Hub id) to measure the prompts with; "
                                                       "default: the release's rollout model, else models/tiny.")] = None,
    max_new_tokens: Annotated[int, typer.Option(help="The response budget the printed length settings leave room for.")] = 1024,
    debug: DebugOpt = False,
) -> None:
    """Prints each file written, the prompt lengths in tokens, and how to point each trainer at the
    file and the reward function with length settings that keep every prompt whole."""
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline import export as ex
        from microcoder.pipeline.inputs import InputError, require_input

        source = require_input(release, "curated release")
        written = ex.write_export(source, out_dir, fmt or list(ex.FORMATS))
        if tokenizer is not None:
            try:
                found = ex.load_tokenizer(tokenizer), tokenizer
            except (OSError, ValueError) as e:
                raise InputError(f"--tokenizer {tokenizer}: cannot load it ({str(e).splitlines()[0][:200]})") from None
        else:
            found = ex.release_tokenizer(source)
        lengths = ex.prompt_lengths(ex.read_release(source), found[0]) if found else None
        typer.echo(ex.usage(written, lengths, found and found[1], max_new_tokens))

    run_stage("export", body, debug)
