"""`dvc metrics show` is one table whose columns are the union of every metrics file's keys: it was
11,710 characters wide (stage-named figures, and train's and eval's whole metrics.json). Every
stage's headline.json now speaks one short column vocabulary (pipeline/stage.py HEADLINE_COLUMNS);
the detail stays in stats.json and metrics.json, plain outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from microcoder.pipeline.stage import HEADLINE, HEADLINE_COLUMNS, StageStats, headline, write_stats

ROOT = Path(__file__).resolve().parents[1]
MAX_WIDTH = 200


def _metrics(spec: dict) -> list[str]:
    return [next(iter(m)) if isinstance(m, dict) else m for m in spec.get("metrics", [])]


def test_every_headline_uses_the_shared_columns():
    for stage, columns in HEADLINE.items():
        assert set(columns) <= set(HEADLINE_COLUMNS), stage
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for name, spec in stages.items():
        assert all(Path(m).name == "headline.json" for m in _metrics(spec)), f"{name}: a metrics file that is not its headline"


def test_a_headline_figure_can_come_from_a_file_the_stage_wrote(tmp_path):
    (tmp_path / "metrics.json").write_text(json.dumps({"final": {"pass_rate": 0.25, "curve": [1, 2]}}))
    stats = StageStats(read=3, kept=3, figures={"steps": 12}).as_dict()
    assert headline(stats, "train", tmp_path) == {"read": 3, "kept": 3, "rejected": 0, "steps": 12, "pass_rate": 0.25}
    assert headline(stats, "train") == {"read": 3, "kept": 3, "rejected": 0, "steps": 12}  # no folder: left out
    write_stats(tmp_path, StageStats(read=2, kept=2, figures={"tests_added": 5}), stage="testgen")
    assert json.loads((tmp_path / "headline.json").read_text()) == {"read": 2, "kept": 2, "rejected": 0, "added": 5}


def test_dvc_metrics_show_is_narrow(tmp_path):
    """The headlines the committed run's stats give, shown by DVC as the pipeline declares them."""
    dvc = Path(sys.executable).with_name("dvc")
    if not dvc.exists() or shutil.which("git") is None:
        pytest.skip("dvc or git not installed")
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    shutil.copy(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    written = 0
    for name, spec in stages.items():
        for metric in _metrics(spec):
            stats_file = (ROOT / metric).with_name("stats.json")
            if not stats_file.is_file():
                continue
            out = tmp_path / metric
            out.parent.mkdir(parents=True, exist_ok=True)
            for other in (ROOT / metric).parent.glob("metrics.json"):
                shutil.copy(other, out.parent / other.name)
            out.write_text(json.dumps(headline(json.loads(stats_file.read_text()), name, out.parent)))
            written += 1
    if not written:
        pytest.skip("no committed stats.json to build headlines from")
    for cmd in (["git", "init", "-q"], [str(dvc), "init", "-q"]):
        subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    shown = subprocess.run([str(dvc), "metrics", "show"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) > written  # a header and a row per stage
    assert max(map(len, lines)) < MAX_WIDTH, lines[0]
