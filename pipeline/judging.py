"""The `evaluate` command's params: the `evaluator:` section itself, the one every judging command
shares (testgen, validate, rollout, train, eval-model read it through `Command.load_configs`). Here
and not in the evaluator, which never imports the CLI's config plumbing."""

from __future__ import annotations

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.stage import EVALUATOR_SECTION, Command


class Evaluate(Command):
    name = "evaluate"
    section = EVALUATOR_SECTION
    config = EvaluatorConfig
