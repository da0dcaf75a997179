"""`microcoder train` then `microcoder eval-model` end to end on the tiny model (CPU, seconds)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.io import read_problems, write_problems

SEED = Path(__file__).resolve().parents[1] / "data" / "seed"


def test_train_then_eval_model(tiny_model_dir, tmp_path):
    problems = read_problems(SEED / "problems.jsonl")[:5]
    problems[4].tests = []  # cannot be rewarded: must be rejected with a reason, not dropped
    validated = tmp_path / "validated.parquet"
    write_problems(validated, problems)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({
        "train": {"torch_threads": 1, "grpo": {"max_steps": 2, "per_device_train_batch_size": 4, "num_generations": 2,
                           "max_completion_length": 16, "temperature_schedule": [[0, 1.0], [1, 1.3]],
                           "dataloader_pin_memory": False}},
        "eval_model": {"torch_threads": 1, "n_samples": 2, "max_tokens": 8, "max_problems": 3, "backend_options": {"progress": False}},
    }))
    out = tmp_path / "train"
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--model", str(tiny_model_dir), "--problems", str(tmp_path / "curated"),
                                 "--fallback-problems", str(validated), "--out-dir", str(out), "--params", str(params),
                                 "--no-progress", "--set", "evaluator.workers=2"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["steps"] == 2 and metrics["generations"] == 2
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["unit"], stats["read"], stats["kept"], stats["rejected"]) == ("problems", 5, 4, 1)
    assert stats["rejected_by_reason"] == {"invalid record": 1} and stats["steps"] == 2
    assert "train: read 5 problems, kept 4 (trained on), rejected 1" in result.output
    settings = json.loads((out / "settings.json").read_text())
    assert settings["model"] == str(tiny_model_dir) and settings["preset"] == "microcoder"
    assert not {"settings", "model", "preset", "problems"} & set(metrics)  # figures only
    assert metrics["final"]["temperature"] == 1.3 and metrics["temperature_changes"][-1]["to"] == 1.3
    for key in ("reward_mean", "pass_rate", "masked_frac", "diversity", "truncated_frac", "mean_length",
                "deadline_frac"):
        assert metrics["final"][key] is not None, key
    with open(out / "curves.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["step"] for r in rows] == ["0", "1"] and "diversity" in rows[0]
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    assert rejects[0]["id"] == problems[4].id and "tests: empty" in rejects[0]["reason"]
    assert (out / "checkpoint" / "model.safetensors").exists() and (out / "checkpoint" / "tokenizer.json").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no scratch left behind

    eval_out = tmp_path / "eval"
    result = runner.invoke(app, ["eval-model", "--benchmark", str(SEED / "benchmark.jsonl"),
                                 "--model", f"base={tiny_model_dir}", "--model", f"trained={out / 'checkpoint'}",
                                 "--out-dir", str(eval_out), "--params", str(params), "--no-progress",
                                 "--set", "evaluator.workers=2"])
    assert result.exit_code == 0, result.output
    ev = json.loads((eval_out / "metrics.json").read_text())
    assert list(ev["models"]) == ["base", "trained"] and json.loads((eval_out / "stats.json").read_text())["kept"] == 3
    for model in ev["models"].values():
        assert set(model) >= {"overall", "by_platform", "by_difficulty", "by_platform_difficulty", "samples"}
        assert model["overall"]["problems"] == 3 and 0.0 <= model["overall"]["pass@1"] <= 1.0
        assert sum(model["samples"].values()) == 6
    assert "| All | 3 |" in (eval_out / "table.md").read_text()


def test_bad_inputs_are_one_line_errors_not_tracebacks(tiny_model_dir, tmp_path):
    runner = CliRunner()
    empty = tmp_path / "curated"
    (empty / "data").mkdir(parents=True)
    validated = tmp_path / "validated.parquet"
    write_problems(validated, read_problems(SEED / "problems.jsonl")[:2])
    cases = [
        # An empty curated set is an error, never a silent fallback to the unfiltered problems.
        (["train", "--model", str(tiny_model_dir), "--problems", str(empty), "--fallback-problems", str(validated)],
         "holds no training problems"),
        (["train", "--model", str(tmp_path / "no-model"), "--problems", str(validated)], "train model"),
        (["train", "--model", str(tiny_model_dir), "--problems", str(validated), "--set", "preset=nonsense"],
         "preset"),
        # A preset defines the method: contradicting it is an error naming both values.
        (["train", "--model", str(tiny_model_dir), "--problems", str(validated), "--set", "preset=grpo",
          "--set", "grpo.truncation_mask_rho=0.1"], "preset 'grpo' sets truncation_mask_rho=0.0"),
        (["train", "--model", str(tiny_model_dir), "--problems", str(validated), "--resume"],
         "resume: no complete checkpoint"),
        (["train", "--set", "input=data/x"], "unknown train params ['input']"),
        (["train", "--set", "preset_grpo.grpo-ish={}"], "unknown train.preset_grpo params ['grpo-ish']"),
        (["eval-model", "--benchmark", str(tmp_path / "absent.jsonl"), "--model", f"base={tiny_model_dir}"],
         "benchmark"),
        (["eval-model", "--model", "just-a-name"], "--model expects name=path"),
    ]
    for args, message in cases:
        result = runner.invoke(app, [*args, "--out-dir", str(tmp_path / "out"), "--params", str(tmp_path / "none.yaml")])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "error:" in result.output and "Traceback" not in result.output, args
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_train_help_lists_the_fields():
    result = CliRunner().invoke(app, ["train", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in ("preset (str)", "grpo (", "preset_grpo.microcoder", "executor", "--problems", "--resume",
                 "evaluator"):
        assert name in result.output, name


def test_leftovers_of_a_killed_run_are_removed(tmp_path):
    from microcoder.training.run_folder import remove_leftovers

    for name in (".trainer-abc", ".checkpoint-def", ".checkpoint.old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"x")
    (tmp_path / "checkpoint").mkdir()
    remove_leftovers(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    # Killed between moving the old checkpoint aside and moving the new one in: the old one returns.
    (tmp_path / "checkpoint").rename(tmp_path / ".checkpoint.old")
    (tmp_path / ".checkpoint-new").mkdir()
    remove_leftovers(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


class FakeAccelerator:
    def __init__(self, main: bool, log: list):
        self.is_main_process, self.log = main, log

    def wait_for_everyone(self):
        self.log.append("barrier")


class FakeTrainer:
    """Records what one process does while saving the final model."""

    def __init__(self, main: bool):
        self.log: list = []
        self.accelerator = FakeAccelerator(main, self.log)

    def save_model(self, path):
        self.log.append("save_model")
        if self.accelerator.is_main_process:  # transformers writes the files from the main process
            (Path(path) / "model.safetensors").write_text("new")


class FakeTokenizer:
    def save_pretrained(self, path):
        (Path(path) / "tokenizer.json").write_text("{}")


def test_final_save_runs_on_every_process_and_only_the_main_one_swaps(tmp_path):
    from microcoder.training.run_folder import save_checkpoint

    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_text("old")
    (tmp_path / ".checkpoint-new").mkdir()  # another process's view: the main one made it
    worker = FakeTrainer(main=False)
    save_checkpoint(worker, FakeTokenizer(), checkpoint)
    # FSDP / ZeRO-3 need every process in save_model (a collective gather); a worker never touches the folders
    assert "save_model" in worker.log and worker.log.count("barrier") >= 2
    assert (checkpoint / "model.safetensors").read_text() == "old"
    main = FakeTrainer(main=True)
    save_checkpoint(main, FakeTokenizer(), checkpoint)
    assert "save_model" in main.log
    assert (checkpoint / "model.safetensors").read_text() == "new" and (checkpoint / "tokenizer.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


def test_only_the_main_process_cleans_the_output_folder(tmp_path):
    from microcoder.training.run_folder import RUN_FILE, prepare_output

    out, trainer_dir = tmp_path / "train", tmp_path / "train" / "trainer"
    (out / ".checkpoint-new").mkdir(parents=True)  # e.g. the main rank's final save in progress
    (trainer_dir / "checkpoint-5").mkdir(parents=True)
    log: list = []
    prepare_output(FakeAccelerator(False, log), out, trainer_dir, None, {"seed": 0})
    assert (out / ".checkpoint-new").exists() and (trainer_dir / "checkpoint-5").exists()
    assert log == ["barrier", "barrier"]  # it waited for the main process on both sides
    prepare_output(FakeAccelerator(True, log), out, trainer_dir, None, {"seed": 0})
    assert not (out / ".checkpoint-new").exists() and not (trainer_dir / "checkpoint-5").exists()
    assert (trainer_dir / RUN_FILE).exists()
