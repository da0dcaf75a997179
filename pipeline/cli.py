"""`microcoder <command>`: every DVC stage and tool, each runnable alone with explicit paths.

Each command lives in `stages/<name>.py` as a function `main` (a typer command); heavy imports
stay inside those functions so `microcoder --help` is fast. A command module names its params once,
in a function `stage()` that imports and returns its `microcoder.pipeline.stage.Command` (a `Stage` for the
pipeline's stages): its config, params section and whether it judges code. `--help` then lists
every field of that config, imported only when the help is shown.
"""

from __future__ import annotations

import importlib
import importlib.util

import typer

app = typer.Typer(
    help="MicroCoder: curate hard, fresh coding problems into an RL dataset and train with MicroCoder-GRPO.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# (command name, module under stages/, one-line help) in pipeline order.
COMMANDS = [
    ("tiny-model", "tiny_model", "Build the deterministic tiny local Qwen3 model + tokenizer."),
    ("scrape", "scrape", "Stage: read sources into data/raw (problems + rejects + stats)."),
    ("dedup", "dedup", "Stage: exact + MinHash near-duplicate clustering and decontamination."),
    ("testgen", "testgen", "Stage: add generated tests to problems with a reference and too few tests."),
    ("validate", "validate", "Stage: verify tests with reference solutions; cap and drop bad tests."),
    ("pin-limits", "pin_limits", "Pin the time limits a validate run derived, so reruns anywhere give the same rows."),
    ("warmstart", "warmstart", "Stage: SFT warm start of the policy on reference solutions (before rollout)."),
    ("rollout", "rollout", "Stage: sample k solutions per problem from the policy and score them."),
    ("filter", "filter", "Stage: pass-rate band and calibrated LLM difficulty."),
    ("build", "build", "Stage: curated Hub-layout shards + dataset card."),
    ("reband", "reband", "Re-band a built release without new rollouts, as a new version."),
    ("publish", "publish", "Stage: push a dataset version to the Hugging Face Hub."),
    ("export", "export", "Write the curated release for verl, OpenRLHF or rllm, with their reward entry points."),
    ("train", "train", "Stage: MicroCoder-GRPO training on the curated shards."),
    ("eval-model", "eval_model", "Stage: pass@1 of base and trained models by platform and difficulty."),
    ("evaluate", "evaluate", "Judge submissions against problems with the sandboxed evaluator."),
    ("stats", "stats", "Run DuckDB SQL over any stage's shards."),
    ("deps", "deps", "Check (--check) or rewrite (--write) dvc.yaml's deps: each stage's code, scrape's local sources."),
]


@app.callback()
def _root() -> None:
    """MicroCoder: curate hard, fresh coding problems into an RL dataset and train with MicroCoder-GRPO."""
    from microcoder.pipeline.numerics import pin_cpu_numerics
    from microcoder.pipeline.progress_lines import install

    pin_cpu_numerics()  # before any command imports torch: the same weights on every CPU model
    install()  # stderr to a log or a pipe: progress bars as plain periodic lines, not carriage returns


def _command_class(mod) -> type:
    """A typer command class whose epilog (the config's fields) is built only when help is shown."""
    from typer.core import TyperCommand

    stage = getattr(mod, "stage", None)
    if stage is None:
        return TyperCommand

    class StageCommand(TyperCommand):
        @property
        def epilog(self) -> str:
            from rich.markup import escape

            from microcoder.pipeline.stage import config_help

            cls = stage()
            text = config_help(cls.config, cls.params_section(), cls.judges)
            # typer renders help as rich markup: `[float]` would vanish as a tag
            return escape(text)

        @epilog.setter
        def epilog(self, value: str | None) -> None:
            pass

    return StageCommand


def _register() -> None:
    for name, module, help_text in COMMANDS:
        if importlib.util.find_spec(f"microcoder.stages.{module}") is None:
            continue
        mod = importlib.import_module(f"microcoder.stages.{module}")
        app.command(name, help=help_text, cls=_command_class(mod))(mod.main)


_register()

if __name__ == "__main__":
    app()
