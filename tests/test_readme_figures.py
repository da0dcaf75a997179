"""The README's figures of the default run are the run's own (issue 37): the table between the
README's markers is docs/default_run.json's, and those figures were read from the stats files
whose hashes the committed dvc.lock holds. A `dvc repro` committed without rerunning
`scripts/default_run_figures.py` fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("default_run_figures", ROOT / "scripts" / "default_run_figures.py")
figures_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(figures_script)


def test_the_readme_shows_the_figures_file():
    figures = json.loads(figures_script.FIGURES_FILE.read_text())
    assert figures_script.readme_block((ROOT / "README.md").read_text()) == figures_script.table(figures)
    assert [(r["stage"], r["key"]) for r in figures["figures"]] == [(s, k) for s, k, _ in figures_script.FIGURES]


def test_the_figures_come_from_the_run_dvc_lock_describes():
    figures = json.loads(figures_script.FIGURES_FILE.read_text())
    lock = figures_script.lock_hashes()
    assert figures["dvc_lock_md5"] == {path: lock.get(path) for path in figures["dvc_lock_md5"]}
    assert all(figures["dvc_lock_md5"].values())
