"""The verdict key holds the evaluator's code as well as its settings (issue 24, item 10: after a fix
to the evaluator, validate's and testgen's caches replayed the verdicts of the broken code), and
rollout's judge fingerprint builds on the same code digest."""

from __future__ import annotations

import shutil
from pathlib import Path

from microcoder.pipeline.evaluator import verdict_key as vk
from microcoder.pipeline.evaluator.config import EvaluatorConfig

PIPELINE = Path(vk.__file__).resolve().parents[1]


def test_a_change_of_evaluator_code_changes_the_verdict_key(monkeypatch):
    cfg = EvaluatorConfig()
    before = vk.verdict_key(cfg)
    monkeypatch.setattr(vk, "code_digest", lambda: "a-fixed-evaluator")
    after = vk.verdict_key(cfg)
    assert after != before
    assert vk.verdict_key(EvaluatorConfig(workers=7)) == after  # speed still stays out of the key


def test_the_code_digest_covers_every_evaluator_file_the_schema_and_the_bundle_format(tmp_path):
    root = tmp_path / "pipeline"
    shutil.copytree(PIPELINE / "evaluator", root / "evaluator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PIPELINE / "schema.py", root / "schema.py")
    shutil.copy(PIPELINE / "program_bundle.py", root / "program_bundle.py")
    assert vk.tree_digest(root) == vk.code_digest() == vk.tree_digest(PIPELINE)
    seen = {vk.tree_digest(root)}

    def changed() -> bool:
        d = vk.tree_digest(root)
        new = d not in seen
        seen.add(d)
        return new

    judge = root / "evaluator" / "verdict" / "judge.py"
    judge.write_text(judge.read_text() + "\n# a fix\n")
    assert changed()
    (root / "evaluator" / "sub").mkdir()
    (root / "evaluator" / "sub" / "deep.py").write_text("X = 1\n")  # sub-folders count
    assert changed()
    (root / "evaluator" / "sub" / "deep.py").write_text("X = 2\n")
    assert changed()
    (root / "evaluator" / "sub" / "deep.py").rename(root / "evaluator" / "sub" / "other.py")  # the path counts
    assert changed()
    (root / "schema.py").write_text((root / "schema.py").read_text() + "\n# is_json fixed\n")
    assert changed()
    (root / "program_bundle.py").write_text((root / "program_bundle.py").read_text() + "\n# load() fixed\n")
    assert changed()
    (root / "evaluator" / "notes.txt").write_text("not code")
    (root / "other_stage.py").write_text("Y = 1\n")  # outside the evaluator: not judging code
    assert not changed()


def test_the_code_digest_is_computed_once_per_process():
    assert vk.code_digest() == vk.code_digest()
    assert vk.code_digest.cache_info().hits >= 1


def test_rollout_judge_fingerprint_reuses_the_code_digest(monkeypatch):
    from microcoder.pipeline.rollout.runner import RolloutConfig, evaluator_digest

    before, judge_before = evaluator_digest(), RolloutConfig().fingerprint()["judge"]
    monkeypatch.setattr(vk, "code_digest", lambda: "a-fixed-evaluator")
    judge = RolloutConfig().fingerprint()["judge"]
    assert evaluator_digest() != before and len(evaluator_digest()) == 16
    assert judge["evaluator"] != judge_before["evaluator"] and judge["settings"] != judge_before["settings"]
