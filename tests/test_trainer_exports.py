"""The exports against the trainers' own code (bench/trainer_exports.py), where it is installed:
`python bench/trainer_exports.py --setup` puts verl 0.9.1 and OpenRLHF 0.11.2 (no dependencies) in
.bench/trainers. Skipped, saying why, where it is not: neither is a dependency of the project."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline import rewards_api
from microcoder.pipeline.build import Build, BuildConfig
from microcoder.pipeline.export import prompt_lengths, read_release, write_export
from microcoder.pipeline.inputs import load_problems
from microcoder.pipeline.io import write_problems

ROOT = Path(__file__).resolve().parents[1]
SEED = ["seed/climb-ways", "seed/is-prime", "seed/count-vowels"]  # count-vowels: a planted wrong expected output


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_trainer_exports", ROOT / "bench" / "trainer_exports.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    module.use_trainers()
    yield module
    if str(module.TARGET) in sys.path:  # the rest of the session sees only the project's packages
        sys.path.remove(str(module.TARGET))


def need(module: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as e:
        pytest.skip(f"{module} is not importable ({e}); `python bench/trainer_exports.py --setup` installs it")


@pytest.fixture(scope="module")
def run(bench, tiny_model_dir, tmp_path_factory):
    """A release of three seed problems, its export, the samples and their plain scores."""
    from transformers import AutoTokenizer

    tmp = tmp_path_factory.mktemp("trainers")
    seed = {p.id: p for p in load_problems(ROOT / "data" / "seed" / "problems.jsonl").problems}
    write_problems(tmp / "filtered.parquet", [seed[i] for i in SEED])
    Build().run(BuildConfig(), tmp / "filtered.parquet", tmp / "curated", data_dir=tmp / "data",
                params_path=tmp / "params.yaml")
    written = write_export(tmp / "curated", tmp / "export")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    problems = read_release(tmp / "curated")
    batch = bench.samples(problems, tokenizer)
    rows = pq.read_table(written["verl"]["path"]).to_pylist()
    payload = {r["extra_info"]["problem_id"]: r["reward_model"]["ground_truth"] for r in rows}
    mp = pytest.MonkeyPatch()
    mp.setenv("MICROCODER_EVALUATOR", json.dumps({"workers": 2, "wall_factor": 3.0, "wall_slack_s": 2.0}))
    rewards_api.close_judge()
    plain = [rewards_api.compute_score("microcoder", s.answer, payload[s.problem_id])["score"] for s in batch]
    yield {"written": written, "tokenizer": tokenizer, "rows": rows, "batch": batch, "plain": plain,
           "longest": max(prompt_lengths(problems, tokenizer))}
    rewards_api.close_judge()
    mp.undo()


def test_the_samples_are_accepted_answers_and_two_wrong_ones(run):
    # two references accepted, the planted wrong output rejects the third's; then a wrong answer, no code
    assert run["plain"] == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_verl_reads_the_export_and_scores_as_the_plain_answers(bench, run):
    need("verl.experimental.reward_loop.reward_manager.naive")
    report = bench.check_verl(run["written"], run["longest"], run["tokenizer"], run["rows"], run["batch"], run["plain"])
    assert "RLHFDataset keeps 3/3 rows" in report and "scores 5/5 samples" in report


def test_openrlhf_reads_the_export_and_scores_as_the_plain_answers(bench, run):
    need("openrlhf.utils.agent")
    report = bench.check_openrlhf(run["written"], run["longest"], run["tokenizer"], run["batch"], run["plain"])
    assert "PromptDataset holds 3 rows" in report and "scores 5/5 samples" in report
