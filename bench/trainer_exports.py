"""Each export of `microcoder export` checked against the trainer's own code, at pinned versions:
their argument parser reads the command line `microcoder export` prints, their loader reads the
file, and the reward is called the way their rollout calls it, on accepted answers decoded the way
they decode them. Not a benchmark of speed: it prints what held.

    python bench/trainer_exports.py --setup      # the pins below, `pip install --no-deps --target .bench/trainers`
    python bench/trainer_exports.py [--release data/curated] [--tokenizer models/tiny] [--samples 40]

- verl 0.9.1: Hydra composes verl's own `ppo_trainer` config with the printed overrides;
  `RLHFDataset` (with `data.filter_overlong_prompts=True`) keeps every row at the printed
  `data.max_prompt_length` and drops the longest at one token less; `get_custom_reward_fn` loads the
  reward by path and the registered reward manager (`NaiveRewardManager.run_single`, which decodes
  the response with `skip_special_tokens=True`) scores each sample.
- OpenRLHF 0.11.2: its CLI builds its parser under `if __name__ == "__main__"`, so the parser is
  built by running exactly those statements of `openrlhf/cli/train_ppo_ray.py` (through to
  `parse_args`), then `hierarchize`; `blending_datasets` + `PromptDataset` read the file; the
  reward runs through `SingleTurnAgentExecutor.execute`, which tokenizes the prompt, appends the
  generated ids, decodes them with `skip_special_tokens=False` and calls `reward_func` in a thread.
  The generation engine is the one piece not theirs: it replays the accepted answer's token ids
  (with the end-of-sequence id) as vLLM would return them.
- rllm: not on PyPI, so not installed here; with rllm importable (a source install), its runner's
  `build_dataset_evaluator` resolves the export's dataset.toml and scores the samples.

Accepted samples: the release's reference solutions (or data/seed's), answered as the policy answers
(one fenced block, `training.warmstart.answer_text`) after the chat prompt rendered by the
tokenizer; a sample counts as accepted when its plain answer scores 1 through our judge. Each
trainer path must score every sample as the plain answer does.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import io
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / ".bench" / "trainers"
PINS = ["verl==0.9.1", "openrlhf==0.11.2",  # the trainers, and what their imported modules need beyond ours
        "tensordict==0.15.3", "pyvers==0.2.3", "codetiming==1.4.0", "pylatexenc==2.11", "torchdata==0.11.0",
        "pillow==13.0.0"]


def setup(target: Path = TARGET) -> None:
    """No dependencies: vLLM, DeepSpeed and flash-attn do not install on CPU; the modules used here
    need only what the project has plus the pins."""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *PINS],
                   check=True)


def use_trainers(target: Path = TARGET) -> None:
    if target.is_dir() and str(target) not in sys.path:
        sys.path.append(str(target))  # after the project's own packages: ours win any overlap


# --- accepted samples ---------------------------------------------------------------------------
@dataclass
class Sample:
    problem_id: str
    answer: str  # the plain answer text
    prompt: str  # the rendered chat prompt
    prompt_ids: list[int]
    response_ids: list[int]  # the answer's ids and the end-of-sequence id, as the engine returns them


WRONG = "```python\nprint(0)\n```"
NO_CODE = "I would sort the array first, then sum it."


def reference_answers(problems, seed: Path = ROOT / "data" / "seed" / "problems.jsonl") -> dict[str, str]:
    """A Python reference per problem id (the release's, else the seed corpus's), as the policy answers."""
    from microcoder.pipeline.io import read_jsonl
    from microcoder.training.warmstart import answer_text

    refs = {p.id: p.reference_solutions for p in problems}
    if seed.is_file():
        for _, rec, err in read_jsonl(seed):
            if not err and rec.get("id") in refs and not refs[rec["id"]]:
                from microcoder.pipeline.schema import Problem

                refs[rec["id"]] = Problem.from_dict(rec).reference_solutions
    return {pid: answer_text(min((r.code for r in rs if r.language == "python"), key=len))
            for pid, rs in refs.items() if any(r.language == "python" for r in rs)}


def samples(problems, tokenizer, limit: int | None = None) -> list[Sample]:
    from microcoder.pipeline.export import CHAT_TEMPLATE_KWARGS, training_messages

    answers = reference_answers(problems)
    chosen = [p for p in problems if p.id in answers][:limit]
    # the first problem also answered wrong and with no code at all: both must score 0 on every path
    pairs = [(p, answers[p.id]) for p in chosen] + [(chosen[0], WRONG), (chosen[0], NO_CODE)]
    out = []
    for p, answer in pairs:
        prompt = tokenizer.apply_chat_template(training_messages(p), tokenize=False, add_generation_prompt=True,
                                               **CHAT_TEMPLATE_KWARGS)
        ids = tokenizer(text=answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        out.append(Sample(p.id, answer, prompt, tokenizer(text=prompt, add_special_tokens=False)["input_ids"], ids))
    return out


def agreeing(batch: list[Sample], scores: list, plain: list[float]) -> int:
    """How many scores equal the plain answers' (all of them, or an AssertionError naming the others)."""
    wrong = [(s.problem_id, got, want) for s, got, want in zip(batch, scores, plain, strict=True) if got != want]
    assert not wrong, f"{len(wrong)} of {len(batch)} differ from the plain answers' scores: {wrong[:5]}"
    return len(batch)


# --- verl ---------------------------------------------------------------------------------------
def verl_config(overrides: list[str]):
    import os

    import verl
    from hydra import compose, initialize_config_dir

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def check_verl(written, longest: int, tokenizer, rows, batch: list[Sample], plain: list[float]) -> str:
    import numpy as np
    import torch
    from omegaconf import open_dict
    from verl import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn, resolve_reward_manager_cls
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from microcoder.pipeline.export import command_lines

    cfg = verl_config(command_lines(written, longest)["verl"])
    assert cfg.data.max_prompt_length == longest and cfg.data.apply_chat_template_kwargs.enable_thinking is False
    with open_dict(cfg.data):
        cfg.data.filter_overlong_prompts = True  # verl's own count of every prompt
        cfg.data.cache_dir = tempfile.mkdtemp(prefix="verl-cache-")
    kept = len(RLHFDataset(data_files=[cfg.data.train_files], tokenizer=tokenizer, config=cfg.data))
    cfg.data.max_prompt_length = longest - 1
    fewer = len(RLHFDataset(data_files=[cfg.data.train_files], tokenizer=tokenizer, config=cfg.data))
    assert kept == len(rows) and fewer < kept, (kept, fewer, len(rows))

    manager = resolve_reward_manager_cls(cfg)(config=cfg, tokenizer=tokenizer, compute_score=get_custom_reward_fn(cfg))
    by_id = {r["extra_info"]["problem_id"]: r for r in rows}

    def item(s: Sample) -> DataProto:
        row = by_id[s.problem_id]
        prompts, responses = torch.tensor([s.prompt_ids]), torch.tensor([s.response_ids])
        return DataProto.from_dict(
            tensors={"prompts": prompts, "responses": responses,
                     "attention_mask": torch.ones(1, prompts.shape[1] + responses.shape[1], dtype=torch.long)},
            non_tensors={"data_source": np.array([row["data_source"]], dtype=object),
                         "reward_model": np.array([row["reward_model"]], dtype=object),
                         "extra_info": np.array([dict(row["extra_info"])], dtype=object)})

    async def score_all():
        return await asyncio.gather(*(manager.run_single(item(s)) for s in batch))

    scores = [r["reward_score"] for r in manager.loop.run_until_complete(score_all())]
    same = agreeing(batch, scores, plain)
    return (f"verl: overrides compose with verl's ppo_trainer config; RLHFDataset keeps {kept}/{len(rows)} rows at "
            f"data.max_prompt_length={longest} ({fewer} at {longest - 1}); NaiveRewardManager scores "
            f"{same}/{len(batch)} samples as their plain answers ({sum(scores):.0f} pass)")


# --- OpenRLHF -----------------------------------------------------------------------------------
def openrlhf_parser(path: Path | None = None) -> argparse.ArgumentParser:
    """The parser `openrlhf/cli/train_ppo_ray.py` (the installed one, or `path`) builds in its
    `__main__` block, built by running exactly those statements (up to `parse_args`)."""
    import importlib.util

    if path is None:
        path = Path(importlib.util.find_spec("openrlhf").submodule_search_locations[0]) / "cli" / "train_ppo_ray.py"
    tree = ast.parse(path.read_text())
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    stop = next(i for i, s in enumerate(main.body) if "parse_args" in ast.unparse(s))
    scope = {"argparse": argparse, "datetime": __import__("datetime").datetime}
    exec(compile(ast.Module(body=main.body[:stop], type_ignores=[]), str(path), "exec"), scope)  # noqa: S102
    return scope["parser"]


def check_openrlhf(written, longest: int, tokenizer, batch: list[Sample], plain: list[float]) -> str:
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets
    from openrlhf.utils.agent import SingleTurnAgentExecutor
    from openrlhf.utils.config import hierarchize

    from microcoder.pipeline.export import command_lines

    parser = openrlhf_parser()
    args = hierarchize(parser.parse_args(command_lines(written, longest)["openrlhf"]))
    old = ["--prompt_data", written["openrlhf"]["path"], "--remote_rm_url", "r.py"]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(old)
        raise AssertionError("OpenRLHF accepted the pre-0.10.2 spelling")
    except SystemExit:
        pass
    strategy = SimpleNamespace(args=args, print=lambda *a: None, is_rank_0=lambda: True)
    data = blending_datasets(args.data.prompt_dataset, args.data.prompt_probs, strategy, args.train.seed,
                             max_count=args.data.max_samples, dataset_split=args.data.prompt_split)
    dataset = PromptDataset(data, tokenizer, strategy, input_template=args.data.input_template)
    lengths = [len(tokenizer(text=p, add_special_tokens=False)["input_ids"]) for p in dataset.prompts]
    room = args.data.max_len - args.rollout.max_new_tokens  # the executor cuts prompts longer than this
    assert len(dataset) == len(data) and max(lengths) <= room, (len(dataset), max(lengths), room)

    class Replay:  # the engine: returns the accepted answer's ids, as vLLM does
        def __init__(self, ids):
            self.ids = ids

        async def generate(self, prompt_ids, params, multi_modal_data=None):
            out = SimpleNamespace(token_ids=self.ids, text=tokenizer.decode(self.ids), finish_reason="stop", logprobs=None)
            return SimpleNamespace(outputs=[out])

    executor = SingleTurnAgentExecutor(remote_rm_url=args.reward.remote_url.split(","))  # as the CLI splits it
    labels = dict(zip((r["problem_id"] for r in data), dataset.labels, strict=True))
    prompts = dict(zip((r["problem_id"] for r in data), dataset.prompts, strict=True))
    params = SimpleNamespace(max_tokens=args.rollout.max_new_tokens, logprobs=None)

    async def score_all():
        return await asyncio.gather(*(executor.execute(prompts[s.problem_id], labels[s.problem_id], params,
                                                       args.data.max_len, tokenizer, Replay(s.response_ids))
                                      for s in batch))

    outputs = asyncio.run(score_all())
    scores = [float(o["reward"]) if o["reward"] is not None else None for o in outputs]
    same = agreeing(batch, scores, plain)
    return (f"openrlhf: its parser reads the printed flags (and rejects --prompt_data/--remote_rm_url); "
            f"PromptDataset holds {len(dataset)} rows, longest prompt {max(lengths)} <= {room}; "
            f"SingleTurnAgentExecutor scores {same}/{len(batch)} samples as their plain answers ({sum(scores):.0f} pass)")


# --- rllm ---------------------------------------------------------------------------------------
def check_rllm(written, rows, batch: list[Sample], plain: list[float]) -> str:
    import importlib.util

    from microcoder.pipeline import rewards_api

    by_id = {r["uid"]: r for r in rows}
    old = [rewards_api.rllm_reward_fn(task_info=by_id[s.problem_id], action=s.answer).reward for s in batch]
    agreeing(batch, old, plain)
    if importlib.util.find_spec("rllm") is None:
        return (f"rllm: not installed (not on PyPI); rllm_reward_fn (rllm <= 0.2.1) scores {len(batch)}/{len(batch)} "
                "as their plain answers; the current runner's path is not exercised here")
    from rllm.runner import build_dataset_evaluator
    from rllm.types import Episode, Task, Trajectory

    evaluator = build_dataset_evaluator(Path(written["rllm"]["path"]).parent)
    got = [evaluator.evaluate(Task(id=s.problem_id, instruction=by_id[s.problem_id]["question"],
                                   metadata=by_id[s.problem_id]), Episode(trajectories=[Trajectory(output=s.answer)])).reward
           for s in batch]
    agreeing(batch, got, plain)
    return f"rllm: build_dataset_evaluator -> {type(evaluator).__name__}; {len(got)} samples scored as their plain answers"


# --- the run ------------------------------------------------------------------------------------
def release_or_seed(release: Path | None, tmp: Path) -> Path:
    if release is not None:
        return release
    from microcoder.pipeline.build import Build, BuildConfig
    from microcoder.pipeline.inputs import load_problems
    from microcoder.pipeline.io import write_problems

    seed = load_problems(ROOT / "data" / "seed" / "problems.jsonl").problems
    write_problems(tmp / "filtered.parquet", seed)
    Build().run(BuildConfig(), tmp / "filtered.parquet", tmp / "curated", data_dir=tmp / "data",
                params_path=tmp / "params.yaml")
    return tmp / "curated"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--setup", action="store_true", help="install the pins into --target and exit")
    parser.add_argument("--target", type=Path, default=TARGET)
    parser.add_argument("--release", type=Path, default=None, help="a built release (default: the seed corpus, built)")
    parser.add_argument("--tokenizer", default=None, help="default: a tiny model built here")
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args()
    if args.setup:
        setup(args.target)
        return 0
    use_trainers(args.target)
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from microcoder.pipeline import rewards_api
    from microcoder.pipeline.export import prompt_lengths, read_release, write_export
    from microcoder.pipeline.io import read_jsonl

    tmp = Path(tempfile.mkdtemp(prefix="trainer-exports-"))
    if args.tokenizer is None:
        from microcoder.pipeline.models import build_tiny_model

        args.tokenizer = str(build_tiny_model(tmp / "tiny"))
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    release = release_or_seed(args.release, tmp)
    written = write_export(release, tmp / "export")
    problems = read_release(release)
    longest = max(prompt_lengths(problems, tokenizer))
    batch = samples(problems, tokenizer, args.samples)
    verl_rows = pq.read_table(written["verl"]["path"]).to_pylist()
    payload = {r["extra_info"]["problem_id"]: r["reward_model"]["ground_truth"] for r in verl_rows}
    try:
        plain = [rewards_api.compute_score("microcoder", s.answer, payload[s.problem_id])["score"] for s in batch]
        print(f"samples: {len(batch) - 2} reference answers ({sum(plain):.0f} accepted: score 1 as plain text), "
              "1 wrong, 1 without code; "
              f"longest prompt {longest} tokens under {args.tokenizer}")
        failed = 0
        checks = {
            "verl": lambda: check_verl(written, longest, tokenizer, verl_rows, batch, plain),
            "openrlhf": lambda: check_openrlhf(written, longest, tokenizer, batch, plain),
            "rllm": lambda: check_rllm(written, [r for _, r, _ in read_jsonl(written["rllm"]["path"])], batch, plain),
        }
        for name, check in checks.items():
            try:
                print(check())
            except ImportError as e:
                print(f"{name}: not installed ({e}); run with --setup first")
            except AssertionError as e:
                failed += 1
                print(f"{name}: FAILED: {e}")
    finally:
        rewards_api.close_judge()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
