"""`microcoder export`: the curated release in another trainer's documented data layout.

Every format carries, per problem, what our judge needs (the *payload*: the Problem record without
its reference and wrong solutions, as JSON), so that the reward entry points in
`microcoder.pipeline.rewards_api` rebuild the problem from the row alone, in any worker process, with no access
to the release. The layouts (field names and types as each trainer's own loader reads them; the
sources read are cited in docs/export.md):

- verl (`verl/train.parquet`): `data_source` (str), `prompt` (chat messages: list of {role, content}),
  `ability` (str), `reward_model` {`style`: "rule", `ground_truth`: the payload}, `extra_info`
  {`split`, `index` (int64), `problem_id`, `source`, `difficulty`, `pass_rate`}. Read by
  `verl.utils.dataset.rl_dataset.RLHFDataset` (`data.prompt_key=prompt`); the reward manager hands
  `reward_model.ground_truth` and `extra_info` to `compute_score`.
- OpenRLHF (`openrlhf/train.jsonl`): `prompt` (chat messages; `--input_key prompt
  --apply_chat_template`), `label` (the payload; `--label_key label`), `datasource` (str, read by
  `PromptDataset`), `problem_id`.
- rllm (`rllm/train.jsonl`): DeepCoder's row (`examples/deepcoder/prepare_deepcoder_data.py`):
  `question` (the user message), `ground_truth` (JSON list of LiveCodeBench-style tests: `input`,
  `output`, `testtype` stdin|functional, `metadata.func_name`; ours add `kind` and `group`),
  `data_source`, `uid`, `index`, `starter_code`, `metadata` (JSON string); plus `microcoder_problem`
  (the payload without its tests: they are in `ground_truth`). Beside it `rllm/dataset.toml` names
  our evaluator as the rows' verifier (`[verifier] import_path`, read by rllm's runner).

`usage` prints, per trainer, the options that point it at the file and the reward, with the prompt
lengths under the policy's tokenizer and the length settings that keep every prompt whole.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError, load_problems
from microcoder.pipeline.schema import Problem, validate_problem

log = logging.getLogger(__name__)

FORMATS = ("verl", "openrlhf", "rllm")
DATA_SOURCE = "microcoder"  # the rows' data_source: routes verl's and rllm's reward to our judge
ABILITY = "code"
FILE_NAMES = {"verl": "verl/train.parquet", "openrlhf": "openrlhf/train.jsonl", "rllm": "rllm/train.jsonl"}
RLLM_VERIFIER = "microcoder.pipeline.rewards_api:RllmEvaluator"
# The trainers render the prompt with the chat template's generation prompt; verl passes
# data.apply_chat_template_kwargs (we document enable_thinking=False), OpenRLHF passes nothing.
CHAT_TEMPLATE_KWARGS = {"enable_thinking": False}


# --- the judge payload ------------------------------------------------------------------------
def judge_payload(problem: Problem, *, with_tests: bool = True) -> str:
    """The problem as our judge needs it (no reference or wrong solutions, no stage columns), as JSON."""
    slim = dataclasses.replace(problem, reference_solutions=[], wrong_solutions=[], extra={},
                               tests=list(problem.tests) if with_tests else [])
    return json.dumps(slim.to_dict(), ensure_ascii=False, sort_keys=True)


def problem_from_payload(payload: str | dict[str, Any], tests: list[dict[str, Any]] | None = None) -> Problem:
    """The Problem of a payload (`tests`: the tests kept elsewhere, as rllm's ground truth keeps them).
    A payload that is not a valid problem record is a ValueError naming what is wrong."""
    record = json.loads(payload) if isinstance(payload, str) else dict(payload)
    if not isinstance(record, dict):
        raise ValueError(f"the ground truth is not a MicroCoder problem record (got {type(record).__name__})")
    if tests is not None:
        record["tests"] = [{"input": t["input"], "output": t["output"], "kind": t.get("kind", "public"),
                            **({"group": t["group"]} if t.get("group") is not None else {})} for t in tests]
    errors = validate_problem(record)
    if errors:
        raise ValueError("the ground truth is not a valid MicroCoder problem: " + "; ".join(errors[:5]))
    return Problem.from_dict(record)


# --- the release ------------------------------------------------------------------------------
def read_release(path: str | Path) -> list[Problem]:
    """The release's problems (a built folder, its `data/` shards, or one parquet file). A row that
    is not a usable problem stops the export: a trainer must not silently get fewer rows."""
    loaded = load_problems(path, "curated release")
    if loaded.rejects:
        first = loaded.rejects[0]
        raise InputError(f"{path}: {len(loaded.rejects)} of {loaded.read} rows are not usable problems "
                         f"(first: {first.id or '?'}: {first.reason})")
    if not loaded.problems:
        raise InputError(f"{path}: the release holds no problems")
    return loaded.problems


def training_messages(problem: Problem) -> list[dict[str, str]]:
    """The release's own prompt (the build wrote it with the build's settings), else the default one."""
    stored = problem.extra.get("prompt")
    if stored:
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in stored]
    from microcoder.pipeline.generation.prompts import build_messages

    return build_messages(problem)


def _pass_rate(problem: Problem) -> float | None:
    value = problem.extra.get("pass_rate")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def verl_rows(problems: list[Problem], split: str = "train") -> list[dict[str, Any]]:
    return [{
        "data_source": DATA_SOURCE,
        "prompt": training_messages(p),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": judge_payload(p)},
        "extra_info": {"split": split, "index": i, "problem_id": p.id, "source": p.source,
                       "difficulty": p.difficulty, "pass_rate": _pass_rate(p)},
    } for i, p in enumerate(problems)]


def openrlhf_rows(problems: list[Problem]) -> list[dict[str, Any]]:
    return [{"prompt": training_messages(p), "label": judge_payload(p), "datasource": DATA_SOURCE,
             "problem_id": p.id} for p in problems]


def lcb_tests(problem: Problem) -> list[dict[str, Any]]:
    """Tests in LiveCodeBench's layout (DeepCoder's `ground_truth`); functional inputs already use
    its encoding (one JSON value per argument per line)."""
    functional = problem.style == "functional"
    func_name = (problem.entry_point or "").rsplit(".", 1)[-1].strip() if functional else None
    out = []
    for t in problem.tests:
        test = {"input": t.input, "output": t.output, "testtype": "functional" if functional else "stdin",
                "metadata": {"func_name": func_name}, "kind": t.kind}
        if t.group is not None:
            test["group"] = t.group
        out.append(test)
    return out


def rllm_rows(problems: list[Problem]) -> list[dict[str, Any]]:
    rows = []
    for i, p in enumerate(problems):
        user = [m["content"] for m in training_messages(p) if m["role"] == "user"]
        tests = lcb_tests(p)
        rows.append({
            "question": user[-1],
            "ground_truth": json.dumps(tests, ensure_ascii=False),
            "data_source": DATA_SOURCE,
            "uid": p.id,
            "index": i,
            "starter_code": p.starter_code or "",
            "metadata": json.dumps({"func_name": tests[0]["metadata"]["func_name"] if tests else None,
                                    "problem_id": p.id, "source": p.source, "difficulty": p.difficulty, "pass_rate": _pass_rate(p)}),
            "microcoder_problem": judge_payload(p, with_tests=False),
        })
    return rows


# --- writers ----------------------------------------------------------------------------------
def _verl_schema():
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(message)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64()), ("problem_id", pa.string()),
                                  ("source", pa.string()), ("difficulty", pa.string()),
                                  ("pass_rate", pa.float64())])),
    ])


def write_verl(problems: list[Problem], path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from microcoder.pipeline.io import atomic_path

    rows = verl_rows(problems)
    table = pa.Table.from_pylist(rows, schema=_verl_schema())
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return len(rows)


def write_rllm_verifier(path: Path) -> None:
    """rllm's runner reads `[verifier] import_path` from the dataset's dataset.toml (rllm/runner.py)."""
    from microcoder.pipeline.io import atomic_path

    with atomic_path(path, ".toml") as tmp:
        Path(tmp).write_text(f'[verifier]\nimport_path = "{RLLM_VERIFIER}"\n')


def write_export(release: str | Path, out_dir: str | Path, formats: list[str] | tuple[str, ...] = FORMATS
                 ) -> dict[str, dict[str, Any]]:
    """Write each format's file under `out_dir`; returns {format: {path, rows}}."""
    from microcoder.pipeline.io import write_jsonl

    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise InputError(f"unknown export format(s) {unknown or formats!r}; choose from {list(FORMATS)}")
    problems = read_release(release)
    out_dir = Path(out_dir)
    written = {}
    for fmt in dict.fromkeys(formats):
        path = out_dir / FILE_NAMES[fmt]
        if fmt == "verl":
            n = write_verl(problems, path)
        else:
            n = write_jsonl(path, openrlhf_rows(problems) if fmt == "openrlhf" else rllm_rows(problems))
        if fmt == "rllm":
            write_rllm_verifier(path.with_name("dataset.toml"))
        written[fmt] = {"path": str(path), "rows": n}
    return written


# --- prompt lengths -----------------------------------------------------------------------------
def prompt_lengths(problems: list[Problem], tokenizer: Any) -> list[int]:
    """Each row's prompt in tokens, as the trainers count it: the chat template with the generation
    prompt, tokenized without added special tokens (verl's length filter, OpenRLHF's rollout). The
    longer of the two renderings (with CHAT_TEMPLATE_KWARGS as verl, without as OpenRLHF)."""
    def n_tokens(messages, **kwargs) -> int:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **kwargs)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return [max(n_tokens(m, **CHAT_TEMPLATE_KWARGS), n_tokens(m))
            for m in (training_messages(p) for p in problems)]


def length_summary(lengths: list[int]) -> dict[str, int]:
    """min, median, p95 (nearest rank) and max."""
    ordered = sorted(lengths)
    n = len(ordered)
    return {"min": ordered[0], "median": ordered[(n - 1) // 2], "p95": ordered[max(0, -(-95 * n // 100) - 1)],
            "max": ordered[-1]}


def load_tokenizer(name: str | Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(name))


def release_tokenizer(release: str | Path, fallback: str | Path = "models/tiny") -> tuple[Any, str] | None:
    """The tokenizer of the release's rollout model (its provenance), else `fallback`; None when
    neither loads here (a Hub model with no network, no local tiny model)."""
    provenance = Path(release) / "provenance.json"
    candidates = []
    if provenance.is_file():
        rollout = (json.loads(provenance.read_text()).get("settings") or {}).get("rollout") or {}
        candidates += [rollout["model"]] if rollout.get("model") else []
    if Path(fallback).is_dir():  # never looked up on the Hub
        candidates.append(str(fallback))
    for name in candidates:
        try:
            return load_tokenizer(name), name
        except Exception as e:  # noqa: BLE001 - a default: any failure means "not this one"
            log.warning("cannot load the tokenizer of %s (%s)", name, str(e).splitlines()[0][:200] if str(e) else e)
    return None


def command_lines(written: dict[str, dict[str, Any]], longest_prompt: int | None = None,
                  max_new_tokens: int = 1024) -> dict[str, list[str]]:
    """Per format, the arguments that point the trainer at its file and our reward: Hydra overrides
    of verl 0.9, flags of OpenRLHF >= 0.10.2 (which spells them `--data.*`), rllm's verifier. With the
    longest prompt in tokens, the length settings that keep every prompt whole (both trainers cut a
    longer prompt from the left: verl at data.max_prompt_length, default 512; OpenRLHF at
    data.max_len - rollout.max_new_tokens, default max_len 2048)."""
    reward = str(Path(__file__).with_name("rewards_api.py"))  # a path: the trainers load it as a file
    out = {}
    for fmt, info in written.items():
        if fmt == "verl":
            out[fmt] = [f"data.train_files={info['path']}", "data.prompt_key=prompt",
                        "+data.apply_chat_template_kwargs.enable_thinking=False",
                        f"reward.custom_reward_function.path={reward}", "reward.custom_reward_function.name=compute_score"]
            out[fmt] += [f"data.max_prompt_length={longest_prompt}"] if longest_prompt else []
        elif fmt == "openrlhf":
            out[fmt] = ["--data.prompt_dataset", info["path"], "--data.input_key", "prompt", "--data.label_key",
                        "label", "--data.apply_chat_template", "--reward.remote_url", reward]
            out[fmt] += (["--rollout.max_new_tokens", str(max_new_tokens), "--data.max_len",
                          str(longest_prompt + max_new_tokens)] if longest_prompt else [])
        else:
            out[fmt] = [str(Path(info["path"]).with_name("dataset.toml"))]
    return out


def usage(written: dict[str, dict[str, Any]], lengths: list[int] | None = None, tokenizer_name: str | None = None,
          max_new_tokens: int = 1024) -> str:
    """What `microcoder export` prints: the files, the prompt lengths, and each trainer's arguments."""
    lines = [f"{fmt} ({info['rows']} rows): {info['path']}" for fmt, info in written.items()]
    if lengths:
        s = length_summary(lengths)
        lines.append(f"prompt tokens under {tokenizer_name}: min {s['min']}, median {s['median']}, p95 {s['p95']}, "
                     f"max {s['max']} (the length settings below keep every prompt whole)")
    else:
        lines.append("prompt tokens: not measured (no tokenizer could be loaded: pass --tokenizer)")
    for fmt, args in command_lines(written, max(lengths) if lengths else None, max_new_tokens).items():
        if fmt == "verl":
            lines.append("verl 0.9: python -m verl.trainer.main_ppo " + " ".join(args)
                         + "  (verl < 0.9: custom_reward_function.* at the top level)")
        elif fmt == "openrlhf":
            lines.append("openrlhf >= 0.10.2: python -m openrlhf.cli.train_ppo_ray " + " ".join(args))
            lines.append("openrlhf <= 0.10.1 spells them --prompt_data --input_key --label_key --apply_chat_template "
                         "--remote_rm_url --max_new_tokens --max_len")
        else:
            lines.append(f"rllm: {args[0]} names {RLLM_VERIFIER} as the verifier (--evaluator {RLLM_VERIFIER}); "
                         "rllm <= 0.2.1: reward_fn=microcoder.pipeline.rewards_api.rllm_reward_fn")
    return "\n".join(lines)


__all__ = ["DATA_SOURCE", "FORMATS", "command_lines", "judge_payload", "lcb_tests", "length_summary",
           "openrlhf_rows", "problem_from_payload", "prompt_lengths", "read_release", "release_tokenizer",
           "rllm_rows", "usage", "verl_rows", "write_export"]
