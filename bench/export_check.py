"""Load `microcoder export`'s files with each trainer's own code where it is installed, else check
them against the trainer's documented layout field by field; then call the reward entry point the
way that trainer loads and calls it (docs/export.md says what was run where).

    python bench/export_check.py --export-dir data/export [--tokenizer models/tiny]

- verl: `verl.utils.dataset.rl_dataset.RLHFDataset` reads verl/train.parquet and renders an item;
  `verl.trainer.ppo.reward.get_custom_reward_fn` loads pipeline/rewards_api.py by path and scores.
  verl installs on CPU (`pip install --no-deps verl tensordict codetiming pylatexenc torchdata pillow`
  in a throwaway venv that sees this project's packages).
- OpenRLHF: its `openrlhf/datasets/prompts_dataset.py` (loaded by file: the package's __init__
  imports DeepSpeed) builds the PromptDataset from openrlhf/train.jsonl as `datasets` loads it;
  the reward file is loaded the way its rollout worker does (`spec_from_file_location`).
  `pip install openrlhf` needs flash-attn (a GPU build); `--no-deps` gives the source files.
- rllm: not on PyPI; the rows are checked against DeepCoder's `prepare_deepcoder_data.py` and
  `rllm_reward_fn` is called with a row as `task_info`, as rllm's environments call `reward_fn`.

No model is sampled: the reward is called on an answer without code (0.0: no code) and on one that
prints nothing (a judged failure, 0.0); a `JudgeFailure` means our judge failed here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NO_CODE = "I could not solve it."
EMPTY_PROGRAM = "```python\npass\n```"


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def _messages_ok(value) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in value)


def check_verl(path: Path, tokenizer_dir: Path) -> str:
    import pyarrow.parquet as pq

    from microcoder.pipeline import rewards_api

    rows = pq.read_table(path).to_pylist()
    for i, row in enumerate(rows):  # docs/preparation/prepare_data.rst: the five fields
        _check(set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}, f"row {i}: {set(row)}")
        _check(_messages_ok(row["prompt"]) and isinstance(row["ability"], str), f"row {i}: prompt/ability")
        _check(isinstance(row["reward_model"]["ground_truth"], str) and row["reward_model"]["style"] == "rule",
               f"row {i}: reward_model")
        _check(isinstance(row["extra_info"]["index"], int), f"row {i}: extra_info.index")
    if not _installed("verl"):
        score = rewards_api.compute_score(rows[0]["data_source"], NO_CODE, rows[0]["reward_model"]["ground_truth"],
                                          rows[0]["extra_info"])
        return f"verl: not installed; {len(rows)} rows match the documented schema; compute_score -> {score}"
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 8192, "filter_overlong_prompts": False,
                               "return_raw_chat": True, "apply_chat_template_kwargs": {"enable_thinking": False}})
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config)
    _check(len(dataset) == len(rows), f"RLHFDataset holds {len(dataset)} of {len(rows)} rows")
    item = dataset[0]
    _check(item["data_source"] == rows[0]["data_source"], "RLHFDataset item: data_source")
    _check(item["reward_model"]["ground_truth"] == rows[0]["reward_model"]["ground_truth"], "item: ground truth")
    fn = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": {
        "path": rewards_api.__file__, "name": "compute_score"}}}))
    scores = [fn(data_source=item["data_source"], solution_str=text, ground_truth=item["reward_model"]["ground_truth"],
                 extra_info=item.get("extra_info", {})) for text in (NO_CODE, EMPTY_PROGRAM)]
    _check(all(s["score"] == 0.0 for s in scores), f"verl scores {scores}")
    return f"verl: RLHFDataset read {len(dataset)} rows (item keys: {sorted(item)[:8]}...); custom reward -> {scores}"


def _load_openrlhf_prompts_dataset():
    spec = importlib.util.find_spec("openrlhf")
    if spec is None:
        return None
    file = Path(spec.submodule_search_locations[0]) / "datasets" / "prompts_dataset.py"
    module_spec = importlib.util.spec_from_file_location("openrlhf_prompts_dataset", file)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def check_openrlhf(path: Path, tokenizer_dir: Path) -> str:
    from datasets import load_dataset

    from microcoder.pipeline import rewards_api

    data = load_dataset("json", data_files=str(path))["train"]
    for i, row in enumerate(data):
        _check(_messages_ok(row["prompt"]) and isinstance(row["label"], str) and row["datasource"] == "microcoder",
               f"row {i}: prompt/label/datasource")
    # the reward file, loaded as OpenRLHF's rollout worker loads --remote_rm_url *.py
    spec = importlib.util.spec_from_file_location("reward_func", rewards_api.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prompts_module = _load_openrlhf_prompts_dataset()
    if prompts_module is None:
        prompts = ["<prompt>" for _ in range(len(data))]
        how = "not installed; rows match the documented schema"
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
        keys = SimpleNamespace(input_key="prompt", label_key="label", apply_chat_template=True, image_key="images")
        strategy = SimpleNamespace(args=SimpleNamespace(data=keys, **vars(keys)), is_rank_0=lambda: True)
        dataset = prompts_module.PromptDataset(data, tokenizer, strategy)
        _check(len(dataset) == len(data), "PromptDataset row count")
        item = dataset[0]
        _check(item[0] == "microcoder" and isinstance(item[1], str) and item[2] == data[0]["label"],
               f"PromptDataset item: {item[:1]}")
        prompts = dataset.prompts
        how = f"PromptDataset read {len(dataset)} rows"
    result = module.reward_func([prompts[0] + NO_CODE, prompts[0] + EMPTY_PROGRAM], prompts[:1] * 2,
                                [data[0]["label"]] * 2)
    _check(result["rewards"].tolist() == [0.0, 0.0], f"openrlhf rewards {result}")
    return f"openrlhf: {how}; reward_func -> {result['rewards'].tolist()}"


def check_rllm(path: Path) -> str:
    from microcoder.pipeline import rewards_api
    from microcoder.pipeline.io import read_jsonl

    rows = []
    for line, row, err in read_jsonl(path):
        _check(err is None, f"line {line}: {err}")
        rows.append(row)
    for row in rows:  # examples/deepcoder/prepare_deepcoder_data.py's row
        _check({"question", "ground_truth", "data_source", "uid", "index", "starter_code", "metadata"} <= set(row),
               f"{row.get('uid')}: fields {sorted(row)}")
        tests = json.loads(row["ground_truth"])
        _check(isinstance(tests, list) and tests, f"{row['uid']}: ground_truth is not a list of tests")
        for t in tests:
            _check(isinstance(t["input"], str) and isinstance(t["output"], str), f"{row['uid']}: test fields")
            _check(t["testtype"] in ("stdin", "functional"), f"{row['uid']}: testtype {t['testtype']!r}")
            _check(t["testtype"] != "functional" or bool(t["metadata"]["func_name"]), f"{row['uid']}: func_name")
        json.loads(row["metadata"])
    outs = [rewards_api.rllm_reward_fn(task_info=rows[0], action=text) for text in (NO_CODE, EMPTY_PROGRAM)]
    _check([o.reward for o in outs] == [0.0, 0.0], f"rllm rewards {outs}")
    return f"rllm: {len(rows)} rows match DeepCoder's layout; rllm_reward_fn -> {[o.reward for o in outs]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export-dir", type=Path, default=ROOT / "data" / "export")
    parser.add_argument("--tokenizer", type=Path, default=ROOT / "models" / "tiny",
                        help="a tokenizer with a chat template (`microcoder tiny-model` writes one)")
    args = parser.parse_args()
    checks = {"verl": lambda: check_verl(args.export_dir / "verl" / "train.parquet", args.tokenizer),
              "openrlhf": lambda: check_openrlhf(args.export_dir / "openrlhf" / "train.jsonl", args.tokenizer),
              "rllm": lambda: check_rllm(args.export_dir / "rllm" / "train.jsonl")}
    failed = 0
    try:
        for name, check in checks.items():
            try:
                print(check())
            except (AssertionError, FileNotFoundError) as e:
                failed += 1
                print(f"{name}: FAILED: {e}")
    finally:
        from microcoder.pipeline import rewards_api

        rewards_api.close_judge()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
