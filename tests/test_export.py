"""`microcoder export` and the reward entry points: a tiny release built by the build stage, each
format read back and checked field by field against the trainer's documented layout (verl's
RLHFDataset / reward manager, OpenRLHF's PromptDataset / reward_func, rllm's DeepCoder rows /
RewardFunction), and the rewards judged by the real evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from microcoder.pipeline import rewards_api
from microcoder.pipeline.build import Build, BuildConfig
from microcoder.pipeline.cli import app
from microcoder.pipeline.export import DATA_SOURCE, judge_payload, problem_from_payload, write_export
from microcoder.pipeline.io import read_jsonl, write_problems
from microcoder.pipeline.schema import Checker, Problem, TestCase

STDIO = Problem(id="sum", source="test", title="Sum", statement="Read two integers and print their sum.",
                style="stdio", tests=[TestCase("1 2\n", "3\n"), TestCase("10 20\n", "30\n", kind="private",
                                                                        group="secret/1")],
                time_limit_s=2.0, difficulty="easy", license="MIT")
FUNCTIONAL = Problem(id="add", source="test", title="Add", statement="# Add\n\nReturn a + b.", style="functional",
                     entry_point="Solution().add", starter_code="class Solution:\n    def add(self, a, b):\n",
                     tests=[TestCase("1\n2", "3"), TestCase("[1]\n[2]", "[1, 2]")], time_limit_s=2.0, license="MIT")
# A checker that crashes on every output, the expected answer included: the judge's SE.
BROKEN = Problem(id="broken", source="test", statement="Print 42.", style="stdio", tests=[TestCase("41\n", "42\n")],
                 time_limit_s=2.0, checker=Checker(kind="program", language="python", protocol="kattis",
                                                   program='raise RuntimeError("the checker is broken")\n'))

ROOT = Path(__file__).resolve().parents[1]
RIGHT_SUM = "Sum it.\n```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG_SUM = "Sum it.\n```python\na, b = map(int, input().split())\nprint(a - b)\n```"
RIGHT_ADD = "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    write_problems(tmp / "filtered.parquet", [STDIO, FUNCTIONAL])
    Build().run(BuildConfig(), tmp / "filtered.parquet", tmp / "curated", data_dir=tmp / "data",
                params_path=tmp / "params.yaml")
    return tmp / "curated"


@pytest.fixture(scope="module")
def exported(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    return out, write_export(release, out)


@pytest.fixture(scope="module")
def judge_env():
    """The shared evaluator of rewards_api, with two workers, closed after the module."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MICROCODER_EVALUATOR", json.dumps({"workers": 2, "wall_factor": 3.0, "wall_slack_s": 2.0}))
    rewards_api.close_judge()
    yield
    rewards_api.close_judge()
    mp.undo()


def is_messages(value) -> bool:
    return isinstance(value, list) and value and all(
        isinstance(m, dict) and set(m) == {"role", "content"} and m["role"] in ("system", "user")
        and isinstance(m["content"], str) and m["content"] for m in value)


# --- layouts ------------------------------------------------------------------------------------
def test_verl_parquet_has_the_documented_columns_and_types(exported):
    out, written = exported
    assert written["verl"]["rows"] == 2
    table = pq.read_table(out / "verl" / "train.parquet")
    schema = table.schema
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert schema.field("data_source").type == pa.string() and schema.field("ability").type == pa.string()
    assert schema.field("prompt").type == pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    assert schema.field("reward_model").type == pa.struct([("style", pa.string()), ("ground_truth", pa.string())])
    assert schema.field("extra_info").type.field("index").type == pa.int64()
    rows = {r["extra_info"]["problem_id"]: r for r in table.to_pylist()}
    assert set(rows) == {"sum", "add"}
    for i, row in enumerate(table.to_pylist()):
        assert row["data_source"] == DATA_SOURCE and row["ability"] == "code"
        assert is_messages(row["prompt"]) and row["prompt"][-1]["role"] == "user"
        assert row["reward_model"]["style"] == "rule"
        assert row["extra_info"]["index"] == i and row["extra_info"]["split"] == "train"
    problem = problem_from_payload(rows["sum"]["reward_model"]["ground_truth"])
    assert problem.tests == STDIO.tests and problem.reference_solutions == []
    # the title heads the prompt once, also where the statement starts with it
    add_prompt = rows["add"]["prompt"][-1]["content"]
    assert add_prompt.count("Add\n") == 1 and rows["sum"]["prompt"][-1]["content"].startswith("# Sum\n")


def test_verl_rows_load_through_datasets_as_rlhfdataset_reads_them(exported):
    # RLHFDataset: datasets.load_dataset("parquet", data_files=f)["train"], row[prompt_key] into the chat
    # template, row.get("extra_info", {}).get("index"); the reward manager reads
    # row["reward_model"]["ground_truth"] and row["data_source"].
    from datasets import load_dataset

    out, _ = exported
    ds = load_dataset("parquet", data_files=str(out / "verl" / "train.parquet"))["train"]
    row = ds[0]
    assert is_messages(row["prompt"]) and isinstance(row["extra_info"].get("index", 0), int)
    assert isinstance(row["reward_model"]["ground_truth"], str) and row["data_source"] == DATA_SOURCE


def test_openrlhf_jsonl_has_prompt_label_and_datasource(exported):
    out, written = exported
    rows = [rec for _, rec, err in read_jsonl(out / "openrlhf" / "train.jsonl") if not err]
    assert len(rows) == written["openrlhf"]["rows"] == 2
    for row in rows:
        # PromptDataset: data[input_key] (a chat list with --apply_chat_template), data[label_key],
        # data.get("datasource", "default")
        assert set(row) == {"prompt", "label", "datasource", "problem_id"}
        assert is_messages(row["prompt"]) and isinstance(row["label"], str) and row["datasource"] == DATA_SOURCE
        assert problem_from_payload(row["label"]).id == row["problem_id"]


def test_rllm_jsonl_is_deepcoders_row_with_lcb_tests(exported):
    out, _ = exported
    rows = {rec["uid"]: rec for _, rec, err in read_jsonl(out / "rllm" / "train.jsonl") if not err}
    assert set(rows) == {"sum", "add"}
    for i, row in enumerate(rows.values()):
        assert set(row) == {"question", "ground_truth", "data_source", "uid", "index", "starter_code", "metadata",
                            "microcoder_problem"}
        assert isinstance(row["question"], str) and row["index"] == i and row["data_source"] == DATA_SOURCE
        assert isinstance(json.loads(row["metadata"]), dict)
    stdio_tests = json.loads(rows["sum"]["ground_truth"])
    assert stdio_tests[0] == {"input": "1 2\n", "output": "3\n", "testtype": "stdin", "metadata": {"func_name": None},
                              "kind": "public"}
    assert stdio_tests[1]["group"] == "secret/1"
    fn_tests = json.loads(rows["add"]["ground_truth"])
    assert fn_tests[0]["testtype"] == "functional" and fn_tests[0]["metadata"] == {"func_name": "add"}
    assert rows["add"]["starter_code"] == FUNCTIONAL.starter_code
    assert json.loads(rows["add"]["microcoder_problem"])["tests"] == []  # the tests live in ground_truth


def test_cli_export_one_format_and_a_bad_one(release, tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["export", "--format", "openrlhf", "--release", str(release),
                              "--out-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "openrlhf" / "train.jsonl").exists() and not (tmp_path / "verl").exists()
    # OpenRLHF >= 0.10.2 spells its flags --data.* / --reward.*; the old spelling only as a note
    assert "--data.prompt_dataset" in res.output and "--reward.remote_url" in res.output
    assert "rewards_api.py" in res.output
    bad = runner.invoke(app, ["export", "--format", "nemo", "--release", str(release), "--out-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown export format" in bad.output
    missing = runner.invoke(app, ["export", "--release", str(tmp_path / "none"), "--out-dir", str(tmp_path)])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_a_payload_that_is_not_a_problem_is_rejected_with_the_reason():
    with pytest.raises(ValueError, match="style"):
        problem_from_payload(json.dumps({"id": "x", "source": "s", "statement": "s", "tests": []}))


# --- rewards through the real evaluator ----------------------------------------------------------
def test_verl_compute_score_judges_right_and_wrong(exported, judge_env):
    out, _ = exported
    rows = {r["extra_info"]["problem_id"]: r for r in pq.read_table(out / "verl" / "train.parquet").to_pylist()}
    sum_row, add_row = rows["sum"], rows["add"]

    def score(row, text):
        return rewards_api.compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                                         row["extra_info"])

    assert score(sum_row, RIGHT_SUM) == {"score": 1.0, "acc": 1.0, "no_code": 0.0}
    assert score(sum_row, WRONG_SUM)["score"] == 0.0
    assert score(sum_row, "I think the answer is 3.") == {"score": 0.0, "acc": 0.0, "no_code": 1.0}
    assert score(add_row, RIGHT_ADD)["score"] == 1.0


def test_an_se_is_never_scored_zero(judge_env):
    for call in (lambda: rewards_api.compute_score(DATA_SOURCE, "```python\nprint(42)\n```", judge_payload(BROKEN)),
                 lambda: rewards_api.reward_func(["P```python\nprint(42)\n```"], ["P"], [judge_payload(BROKEN)])):
        with pytest.raises(rewards_api.JudgeFailure, match="broken.*SE"):
            call()


def test_openrlhf_reward_func_judges_the_response_after_the_prompt(exported, judge_env):
    out, _ = exported
    rows = {r["problem_id"]: r for _, r, _ in read_jsonl(out / "openrlhf" / "train.jsonl")}
    # the rendered prompt of a functional problem holds the starter code block: never judged
    prompt = "<|user|>" + rows["add"]["prompt"][-1]["content"] + "<|assistant|>"
    result = rewards_api.reward_func([prompt + RIGHT_ADD, prompt + "no code, sorry"], [prompt, prompt],
                                     [rows["add"]["label"]] * 2)
    assert result["rewards"].tolist() == [1.0, 0.0] and result["scores"].tolist() == [1.0, 0.0]
    assert result["extra_logs"]["no_code"].tolist() == [0.0, 1.0]


def test_rllm_reward_fn_takes_the_row_as_task_info(exported, judge_env):
    out, _ = exported
    rows = {r["uid"]: r for _, r, _ in read_jsonl(out / "rllm" / "train.jsonl")}
    right = rewards_api.rllm_reward_fn(task_info=rows["sum"], action=RIGHT_SUM)
    wrong = rewards_api.rllm_reward_fn(task_info=rows["sum"], action=WRONG_SUM)
    assert (right.reward, right.is_correct) == (1.0, True) and (wrong.reward, wrong.is_correct) == (0.0, False)
    assert right.metadata["passed"] == 2


def test_load_release_and_reward_function_for_trl(release):
    from microcoder.training.release import CHAT_TEMPLATE_KWARGS, load_release, reward_function

    dataset = load_release(release)
    assert set(dataset.column_names) >= {"problem_id", "prompt"} and len(dataset) == 2
    assert sorted(dataset["problem_id"]) == ["add", "sum"] and is_messages(dataset[0]["prompt"])
    assert CHAT_TEMPLATE_KWARGS == {"enable_thinking": False}
    with reward_function(release, evaluator={"workers": 1, "wall_factor": 3.0, "wall_slack_s": 2.0}) as reward:
        completions = [[{"role": "assistant", "content": RIGHT_SUM}], [{"role": "assistant", "content": WRONG_SUM}]]
        assert reward(prompts=[None, None], completions=completions, problem_id=["sum", "sum"]) == [1.0, 0.0]


def test_the_reward_file_loads_by_path_as_the_trainers_load_it():
    # verl's load_extern_object and OpenRLHF's rollout worker: spec_from_file_location + exec_module,
    # never registered in sys.modules (where a @dataclass in the file failed to define)
    import importlib.util

    spec = importlib.util.spec_from_file_location("reward_func", rewards_api.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.compute_score) and callable(module.reward_func) and callable(module.rllm_reward_fn)
    assert module.RewardOutput(1.0, True).metadata == {}


# --- what the trainer needs to know from the data (issue 38) -------------------------------------
def test_export_prints_prompt_lengths_and_the_settings_that_keep_every_prompt(release, tmp_path, tiny_model_dir):
    from transformers import AutoTokenizer

    from microcoder.pipeline.export import command_lines, length_summary, prompt_lengths, read_release

    res = CliRunner().invoke(app, ["export", "--release", str(release), "--out-dir", str(tmp_path),
                                   "--tokenizer", str(tiny_model_dir), "--max-new-tokens", "512"])
    assert res.exit_code == 0, res.output
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    lengths = prompt_lengths(read_release(release), tokenizer)
    s = length_summary(lengths)
    longest = max(lengths)
    # what verl's RLHFDataset counts: the chat template with the generation prompt, thinking off
    rows = pq.read_table(tmp_path / "verl" / "train.parquet").to_pylist()
    counted = [len(tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True,
                                                 return_dict=False, enable_thinking=False)) for r in rows]
    assert sorted(counted) == sorted(lengths) and longest > 20
    assert f"min {s['min']}, median {s['median']}, p95 {s['p95']}, max {longest}" in res.output
    assert f"data.max_prompt_length={longest}" in res.output
    assert f"--rollout.max_new_tokens 512 --data.max_len {longest + 512}" in res.output
    assert (tmp_path / "rllm" / "dataset.toml").read_text() == \
        '[verifier]\nimport_path = "microcoder.pipeline.rewards_api:RllmEvaluator"\n'
    lines = command_lines({"verl": {"path": "v.parquet", "rows": 1}}, None)["verl"]
    assert not any("max_prompt_length" in a for a in lines)  # nothing claimed without a measurement
    bad = CliRunner().invoke(app, ["export", "--release", str(release), "--out-dir", str(tmp_path),
                                   "--tokenizer", str(tmp_path / "no-tokenizer")])
    assert bad.exit_code == 2 and "--tokenizer" in bad.output


def test_length_summary_is_nearest_rank():
    from microcoder.pipeline.export import length_summary

    assert length_summary(list(range(1, 101))) == {"min": 1, "median": 50, "p95": 95, "max": 100}
    assert length_summary([7]) == {"min": 7, "median": 7, "p95": 7, "max": 7}


# --- rewards on text decoded as each trainer decodes it ---------------------------------------------
def decoded(tokenizer, messages, answer: str) -> dict[str, str]:
    """An answer generated after the chat prompt (its ids and the end-of-sequence id), as verl and
    OpenRLHF hand it to the reward: verl decodes the response alone with skip_special_tokens=True
    (workers/reward_manager, experimental/reward_loop); OpenRLHF tokenizes the rendered prompt
    without special tokens, appends the response ids and decodes all with skip_special_tokens=False
    (utils/agent.py SingleTurnAgentExecutor.execute)."""
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    prompt_ids = tokenizer(text=prompt, add_special_tokens=False)["input_ids"]
    response_ids = tokenizer(text=answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return {"prompt": prompt, "verl": tokenizer.decode(response_ids, skip_special_tokens=True),
            "openrlhf": tokenizer.decode(prompt_ids + response_ids, skip_special_tokens=False)}


@pytest.fixture(scope="module")
def seed_release(tmp_path_factory):
    """A release of seed problems whose reference answers are accepted (the project's own data)."""
    from microcoder.pipeline.inputs import load_problems

    wanted = ["seed/climb-ways", "seed/is-prime", "seed/roman-to-int"]
    seed = {p.id: p for p in load_problems(ROOT / "data" / "seed" / "problems.jsonl").problems}
    tmp = tmp_path_factory.mktemp("seed-release")
    write_problems(tmp / "filtered.parquet", [seed[i] for i in wanted])
    Build().run(BuildConfig(), tmp / "filtered.parquet", tmp / "curated", data_dir=tmp / "data",
                params_path=tmp / "params.yaml")
    return [seed[i] for i in wanted], write_export(tmp / "curated", tmp / "export")


def test_accepted_answers_score_1_however_each_trainer_decodes_them(seed_release, tiny_model_dir, judge_env):
    from transformers import AutoTokenizer

    from microcoder.pipeline.export import training_messages
    from microcoder.training.warmstart import answer_text

    problems, written = seed_release
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    verl_rows = {r["extra_info"]["problem_id"]: r for r in pq.read_table(written["verl"]["path"]).to_pylist()}
    labels = {r["problem_id"]: r["label"] for _, r, _ in read_jsonl(written["openrlhf"]["path"])}
    for p in problems:
        answer = answer_text(min((r.code for r in p.reference_solutions if r.language == "python"), key=len))
        texts = decoded(tokenizer, training_messages(p), answer)
        assert texts["openrlhf"].endswith("```<|im_end|>")  # the EOS right after the fence
        verl = rewards_api.compute_score(DATA_SOURCE, texts["verl"], verl_rows[p.id]["reward_model"]["ground_truth"])
        openrlhf = rewards_api.reward_func([texts["openrlhf"]], [texts["prompt"]], [labels[p.id]])
        assert verl["score"] == 1.0 and openrlhf["rewards"].tolist() == [1.0], p.id
        wrong = decoded(tokenizer, training_messages(p), "```python\nprint(0)\n```")
        result = rewards_api.reward_func([wrong["openrlhf"]], [wrong["prompt"]], [labels[p.id]])
        assert result["rewards"].tolist() == [0.0]


def test_an_openrlhf_query_whose_prompt_was_cut_from_the_left():
    # OpenRLHF keeps the last max_len - max_new_tokens prompt ids: the query starts inside the prompt
    prompt = ("<|im_start|>user\nHere is starter code:\n```python\ndef f():\n    pass\n```<|im_end|>\n"
              "<|im_start|>assistant\n")
    answer = "```python\nprint(1)\n```<|im_end|>"
    assert rewards_api.response_text(prompt + answer, prompt) == answer
    assert rewards_api.response_text(prompt[25:] + answer, prompt) == answer


def test_rllm_evaluator_reads_the_row_from_a_task_or_its_metadata(exported, judge_env):
    from types import SimpleNamespace

    out, _ = exported
    rows = {r["uid"]: r for _, r, _ in read_jsonl(out / "rllm" / "train.jsonl")}
    evaluator = rewards_api.RllmEvaluator()
    # rllm's Episode: the answer in artifacts["answer"], a trajectory's output, or its last step's
    by_artifact = SimpleNamespace(artifacts={"answer": RIGHT_SUM}, trajectories=[])
    by_output = SimpleNamespace(artifacts={}, trajectories=[SimpleNamespace(output=WRONG_SUM, steps=[])])
    steps = [SimpleNamespace(output=None, model_response=RIGHT_SUM), SimpleNamespace(output=None, model_response="")]
    by_step = SimpleNamespace(artifacts={}, trajectories=[SimpleNamespace(output=None, steps=steps)])
    task = SimpleNamespace(id="sum", metadata=rows["sum"])  # rllm.types.Task carries the row as metadata
    right = evaluator.evaluate(rows["sum"], by_artifact)
    assert (right.reward, right.is_correct, right.metadata["passed"]) == (1.0, True, 2)
    assert {s.name: s.value for s in right.signals} == {"accuracy": 1.0, "no_code": 0.0}
    assert evaluator.evaluate(task, by_output).reward == 0.0
    assert evaluator.evaluate(task, by_step).reward == 1.0
    with pytest.raises(ValueError, match="rllm"):
        evaluator.evaluate({"question": "q"}, by_artifact)


def test_microcoder_tokenizer_adds_its_special_tokens_to_the_shapes_the_extractor_knows(tiny_model_dir, monkeypatch):
    monkeypatch.delenv("MICROCODER_TOKENIZER", raising=False)
    assert rewards_api.special_tokens() == ()
    monkeypatch.setenv("MICROCODER_TOKENIZER", str(tiny_model_dir))
    assert {"<|im_end|>", "<|endoftext|>"} <= set(rewards_api.special_tokens())
