"""MicroCoder-GRPO on TRL (METHOD.md section 3) and model evaluation.

Modules (import them directly; this package stays light so `microcoder --help` is fast):
- `config`: `MicroCoderGRPOConfig` (TRL GRPOConfig + the method's knobs), `preset(name)`;
- `masking`: `conditional_truncation_mask` (the four conditions);
- `diversity`: group output diversity (1 - mean pairwise 4-gram Jaccard);
- `temperature`: `set_temperature`, `TemperatureController`, the probe choice;
- `rewards`: `EvaluatorReward`, the reward over the one scoring path (`microcoder.pipeline.scoring`);
- `trainer`: `MicroCoderGRPOTrainer`;
- `data`: training problems in, TRL prompt dataset out;
- `train`: the `train` stage (`TrainConfig`, `run_training`);
- `eval_model`: the `eval-model` stage (`EvalModelConfig`, `EvalModel`; pass@k from
  `microcoder.pipeline.difficulty.passrate`).
"""
