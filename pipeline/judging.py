"""The judging stages' evaluator settings: the params' one `evaluator:` section, with
`--set evaluator.KEY=...` overrides (testgen, validate, rollout, train, eval-model, evaluate).
Here and not in the evaluator, which never imports the CLI's config plumbing."""

from __future__ import annotations

from pathlib import Path

from pipeline.evaluator.config import EvaluatorConfig
from pipeline.stage import EVALUATOR_SECTION, load_config, split_overrides


def load_evaluator_config(params_path: str | Path | None = None, overrides: list[str] | None = None) -> EvaluatorConfig:
    """The `evaluator:` section (with `--set evaluator.KEY=...` overrides) as an EvaluatorConfig."""
    _, ev = split_overrides(overrides)
    return load_config(EvaluatorConfig, EVALUATOR_SECTION, params_path, ev, own_section=True)
