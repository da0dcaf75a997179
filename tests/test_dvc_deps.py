"""dvc.yaml deps cannot drift from the code: every project module a stage imports (transitively,
function-level imports included) lies under one of that stage's deps, so editing it reruns the
stage, and no code dep names what the stage no longer imports. `microcoder deps --check` prints
what each stage is missing, `microcoder deps --write` regenerates every stage's code deps in
dvc.yaml (data deps, comments and everything else are kept): pipeline/dvc_deps.py."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from microcoder.pipeline.cli import app
from microcoder.pipeline.dvc_deps import (
    RUN_PREFIX,
    is_code,
    missing_deps,
    source_paths,
    stage_files,
    stale_deps,
)
from microcoder.pipeline.import_walk import ROOT


def test_scrape_depends_on_every_local_source_it_reads():
    """A file added to a configured source folder must rerun scrape: DVC hashes deps, not the
    paths params.yaml names, so each enabled local source path is a dep (and nothing else is)."""
    spec = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["scrape"]
    data = sorted(str(d) for d in spec["deps"] if not is_code(str(d)))
    assert data == source_paths(), "scrape's data deps differ from params.yaml's enabled local sources " \
        "(microcoder deps --write)"


def test_every_dvc_stage_depends_on_the_code_it_imports():
    missing = missing_deps()
    assert not missing, "dvc.yaml deps miss imported code (add them): " + "; ".join(
        f"{stage}: {', '.join(files)}" for stage, files in missing.items())


def test_no_code_dep_is_stale():
    stale = stale_deps()
    assert not stale, "dvc.yaml deps name code the stage does not import (microcoder deps --write): " + \
        "; ".join(f"{stage}: {', '.join(files)}" for stage, files in stale.items())


def test_every_command_runs_without_an_activated_venv():
    """DVC runs commands in a shell with the caller's PATH: `.venv/bin/dvc repro` from a shell with no
    venv activated said "microcoder: command not found". Each command puts the venv first itself."""
    import subprocess

    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for name, spec in stages.items():
        assert str(spec["cmd"]).startswith(RUN_PREFIX + " microcoder "), name
    bare = {"PATH": "/usr/bin:/bin", "DVC_ROOT": str(ROOT), "HOME": str(ROOT)}
    got = subprocess.run(["bash", "-c", f"{RUN_PREFIX} microcoder --help"], cwd=ROOT, env=bare,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0 and "scrape" in got.stdout, got.stderr


def test_the_import_walk_sees_function_level_imports():
    # stages/validate.py imports microcoder.pipeline.validate inside its command function only.
    assert {"stages/validate.py", "pipeline/validate.py", "pipeline/io.py"} <= stage_files("validate")


def test_code_deps_hash_source_only():
    """Bytecode is not a dep: `make setup` writes __pycache__ into the code-dep folders, and a
    fresh clone's bytecode differs (source mtimes), so every stage would read as changed."""
    import shutil
    import subprocess

    dvc = shutil.which("dvc") or str(Path(sys.executable).with_name("dvc"))
    for path in ("pipeline/evaluator/__pycache__/pool.cpython-311.pyc", "pipeline/x.pyc", ".cache/microcoder/validate.sqlite"):
        got = subprocess.run([dvc, "check-ignore", path], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert got.returncode == 0, f"{path} is hashed as a dep: {got.stdout}{got.stderr}"
    kept = subprocess.run([dvc, "check-ignore", "pipeline/evaluator/pool.py"], cwd=ROOT, capture_output=True, timeout=60)
    assert kept.returncode == 1  # source stays a dep


def test_judging_stages_track_only_the_evaluator_settings_that_change_a_verdict():
    """`evaluator.workers` (and the other speed-only settings of verdict_key) must not rerun an
    hour of judging: the judging stages list the evaluator's params key by key, all but those."""
    from microcoder.pipeline.evaluator.verdict_key import SPEED_ONLY

    section = yaml.safe_load((ROOT / "params.yaml").read_text())["evaluator"]
    want = {f"evaluator.{k}" for k in section if k not in SPEED_ONLY}
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    judging = {name: {p for p in spec.get("params", []) if isinstance(p, str) and p.startswith("evaluator")}
               for name, spec in stages.items()}
    judging = {name: got for name, got in judging.items() if got}
    assert set(judging) >= {"testgen", "validate", "rollout", "train", "eval-model"}
    for name, got in judging.items():
        assert got == want, f"{name}: params {sorted(got ^ want)} differ from the verdict-changing evaluator keys"


# --- `microcoder deps` ------------------------------------------------------------------------------
def _drifted(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of dvc.yaml missing a code dep of validate, with a params.yaml enabling two more
    local sources than scrape's deps name."""
    dvc = tmp_path / "dvc.yaml"
    text = (ROOT / "dvc.yaml").read_text()
    assert "      - pipeline/validate.py\n" in text
    dvc.write_text(text.replace("      - pipeline/validate.py\n", "", 1))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["scrape"]["sources"] += [
        {"name": "kattis-extra", "kind": "kattis", "path": "data/external/kattis-extra", "enabled": True},
        {"name": "codejam", "kind": "kattis", "path": "data/external/codejam", "enabled": True},
    ]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return dvc, tmp_path / "params.yaml"


def _deps(*args: str):
    return CliRunner().invoke(app, ["deps", *args])


def test_deps_check_names_every_missing_dep_and_exits_1(tmp_path):
    dvc, params = _drifted(tmp_path)
    got = _deps("--check", "--dvc-file", str(dvc), "--params", str(params))
    assert got.exit_code == 1, got.output
    for path in ("pipeline/validate.py", "data/external/kattis-extra", "data/external/codejam"):
        assert path in got.output, path
    assert "Traceback" not in got.output and "microcoder deps --write" in got.output.splitlines()[-1]


def test_deps_write_puts_every_missing_dep_back_and_keeps_the_rest(tmp_path):
    dvc, params = _drifted(tmp_path)
    got = _deps("--write", "--dvc-file", str(dvc), "--params", str(params))
    assert got.exit_code == 0, got.output
    assert not missing_deps(dvc, params) and not stale_deps(dvc, params)
    scrape = yaml.safe_load(dvc.read_text())["stages"]["scrape"]["deps"]
    assert {"data/external/kattis-extra", "data/external/codejam"} <= set(scrape)
    # the rest of the file (comments, data deps, other keys) as it was
    assert "# a killed rollout resumes from its finished shards" in dvc.read_text()
    again = tmp_path / "again.yaml"
    shutil.copy(ROOT / "dvc.yaml", again)
    assert _deps("--write", "--dvc-file", str(again)).exit_code == 0
    assert sorted(again.read_text().splitlines()) == sorted((ROOT / "dvc.yaml").read_text().splitlines())


def test_deps_wants_one_of_check_or_write(tmp_path):
    got = _deps()
    assert got.exit_code == 2 and "--check" in got.output and "--write" in got.output


def test_scrape_under_dvc_names_every_untracked_source_and_the_command(tmp_path):
    """Scrape's guard named only the first of four untracked sources and a test file to run."""
    import pytest

    from microcoder.pipeline.params import load_params
    from microcoder.pipeline.scrape import ScrapeConfig, check_dvc_tracks
    from microcoder.pipeline.stage import ConfigError, build_config

    dvc, params = _drifted(tmp_path)
    cfg = build_config(ScrapeConfig, load_params("scrape", params), "scrape")
    with pytest.raises(ConfigError) as e:
        check_dvc_tracks(cfg, dvc, "scrape")
    text = str(e.value)
    assert "kattis-extra" in text and "codejam" in text and "microcoder deps --write" in text
    assert "\n" not in text and "tests/" not in text
