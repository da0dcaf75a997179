"""Model I/O shared by every stage that asks a model for code (rollout, testgen's generators,
difficulty's predictor, build's prompts, warm start, training, eval-model): backends, prompts,
code extraction, token budgets. The rollout stage itself lives in pipeline/rollout."""
