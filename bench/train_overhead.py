"""Training-step overhead of MicroCoderGRPOTrainer over plain TRL GRPOTrainer (target: under 5%).

Same tiny model, data, seed and settings for both; a constant reward (that reports per-sample
statuses, so the mask, diversity and metrics paths all run) keeps reward time out. Runs alternate
between the two trainers and the median steps/s of each is compared. A second table times the
per-generation additions (mask + diversity) on a batch of the paper's size (64 prompts x 16
samples x 4096 tokens), to set against a real step.

    .venv/bin/python bench/train_overhead.py [--steps 30] [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path


class ConstantReward:
    __name__ = "constant"

    def __init__(self):
        self.last_statuses: list[str] = []

    def __call__(self, prompts, completions, completion_ids, **kwargs):
        self.last_statuses = ["no_code"] * len(completions)
        return [0.0] * len(completions)


def run(cls, model_dir: Path, out: Path, steps: int, seed: int) -> tuple[float, float]:
    """(wall steps/s, CPU seconds per step) of `steps` training steps."""
    from datasets import Dataset

    from microcoder.pipeline.models import load_model_and_tokenizer
    from microcoder.training.config import MicroCoderGRPOConfig

    model, tok = load_model_and_tokenizer(model_dir)
    args = MicroCoderGRPOConfig(
        output_dir=str(out), per_device_train_batch_size=16, num_generations=8, max_completion_length=64,
        max_steps=steps, learning_rate=1e-4, logging_steps=steps, bf16=False, gradient_checkpointing=False,
        report_to="none", save_strategy="no", seed=seed, truncation_mask_rho=0.1, repetition_window=16,
        disable_tqdm=True, dataloader_pin_memory=False,
    )
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": f"Write a program for task {i}."}]}
                              for i in range(64)])
    trainer = cls(model=model, processing_class=tok, reward_funcs=[ConstantReward()], args=args, train_dataset=data)
    cpu = time.process_time()
    wall = trainer.train().metrics["train_steps_per_second"]
    return wall, (time.process_time() - cpu) / steps


def paper_scale_additions(seed: int = 0) -> tuple[float, float]:
    from microcoder.training.diversity import batch_diversity
    from microcoder.training.masking import conditional_truncation_mask

    rng = random.Random(seed)
    n, g, length = 64 * 16, 16, 4096
    ids = [[rng.randrange(151_000) for _ in range(length)] for _ in range(n)]
    statuses = [rng.choice(["pass", "fail", "no_code"]) for _ in range(n)]
    start = time.perf_counter()
    conditional_truncation_mask(ids, statuses, length, 0.1, 128, random.Random(seed))
    mask_s = time.perf_counter() - start
    start = time.perf_counter()
    batch_diversity(ids, g)
    return mask_s, time.perf_counter() - start


def main() -> None:
    import logging
    import warnings

    from transformers.utils import logging as hf_logging

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: least noise on a shared box)")
    parser.add_argument("--skip-paper-scale", action="store_true")
    opts = parser.parse_args()
    hf_logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")

    import torch
    from trl import GRPOTrainer

    from microcoder.pipeline.models import build_tiny_model
    from microcoder.training.trainer import MicroCoderGRPOTrainer

    torch.set_num_threads(opts.threads)
    names = ("GRPOTrainer", "MicroCoderGRPOTrainer")
    walls: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[float]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir = build_tiny_model(tmp / "tiny")
        run(GRPOTrainer, model_dir, tmp / "warm", 2, 0)  # imports, kernels, allocator warm-up
        for r in range(opts.repeats):
            pairs = list(zip(names, (GRPOTrainer, MicroCoderGRPOTrainer), strict=True))
            for name, cls in pairs if r % 2 == 0 else pairs[::-1]:  # alternate who goes first
                wall, cpu = run(cls, model_dir, tmp / f"{name}-{r}", opts.steps, seed=r)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"tiny Qwen3 on CPU ({opts.threads} torch thread(s)), batch 16 (2 prompts x G=8), 64-token completions, "
          f"{opts.steps} steps x {opts.repeats} runs each (same seeds), constant reward")
    print("| trainer | median steps/s (wall) | median CPU ms/step | runs (steps/s) |\n|---|---|---|---|")
    for name in names:
        print(f"| {name} | {statistics.median(walls[name]):.2f} | {1000 * statistics.median(cpus[name]):.1f} | "
              f"{', '.join(f'{v:.2f}' for v in walls[name])} |")
    # Paired per repeat (same seed, run back to back), then the median: robust to a busy machine.
    cpu_ratio = statistics.median(b / a for a, b in zip(cpus[names[0]], cpus[names[1]], strict=True))
    wall_ratio = statistics.median(a / b for a, b in zip(walls[names[0]], walls[names[1]], strict=True))
    for label, ratio in (("CPU time", cpu_ratio), ("wall time", wall_ratio)):
        print(f"overhead of MicroCoderGRPOTrainer per step ({label}, median of paired ratios): "
              f"{100 * (ratio - 1):+.1f}% (target < 5%: {'OK' if ratio < 1.05 else 'OVER TARGET'})")
    if not opts.skip_paper_scale:
        mask_s, div_s = paper_scale_additions()
        print("\nper-generation additions at the paper's batch size (1024 samples x 4096 tokens), CPU:")
        print(f"| part | seconds |\n|---|---|\n| truncation mask | {mask_s:.3f} |\n| diversity (16-sample groups) | "
              f"{div_s:.3f} |")


if __name__ == "__main__":
    main()
