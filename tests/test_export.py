"""`microcoder export` and the reward entry points: a tiny release built by the build stage, each
format read back and checked field by field against the trainer's documented layout (verl's
RLHFDataset / reward manager, OpenRLHF's PromptDataset / reward_func, rllm's DeepCoder rows /
RewardFunction), and the rewards judged by the real evaluator."""

from __future__ import annotations

import json

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
    assert "--remote_rm_url" in res.output and "rewards_api.py" in res.output
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
