"""dvc.yaml deps cannot drift from the code: every project module a stage imports (transitively,
function-level imports included) lies under one of that stage's deps, so editing it reruns the
stage, and no code dep names what the stage no longer imports. Run this file directly to print
what each stage is missing, or with `--write` to regenerate every stage's code deps in dvc.yaml
(data deps, comments and everything else are kept)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from project_imports import LAYERS as PACKAGES
from project_imports import ROOT, module_file, reached

from microcoder.pipeline.cli import COMMANDS

NOT_DEPS = {"pipeline/cli.py"}  # registers every stage; a stage's behaviour does not depend on it


def stage_files(module: str) -> set[str]:
    """Every project file the stage module imports, transitively, as repo-relative paths."""
    files = {str(module_file(n).relative_to(ROOT)) for n in reached(f"microcoder.stages.{module}")}
    return {f for f in files if f not in NOT_DEPS and (ROOT / f).stat().st_size > 0}


RUN_PREFIX = 'PATH="$DVC_ROOT/.venv/bin:$PATH"'  # the project's venv first: `.venv/bin/dvc repro` works unactivated


def command_words(cmd: str) -> list[str]:
    """A dvc.yaml command's words after the PATH prefix (`microcoder STAGE ...`)."""
    return str(cmd).removeprefix(RUN_PREFIX).split()


def missing_deps() -> dict[str, list[str]]:
    modules = {name: module for name, module, _ in COMMANDS}
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    missing = {}
    for stage, spec in stages.items():
        words = command_words(spec["cmd"])
        if words[0] != "microcoder" or words[1] not in modules:
            continue
        deps = [str(d).rstrip("/") for d in spec.get("deps", [])]
        uncovered = sorted(f for f in stage_files(modules[words[1]])
                           if not any(f == d or f.startswith(d + "/") for d in deps))
        if uncovered:
            missing[stage] = uncovered
    return missing


def _is_code(dep: str) -> bool:
    return dep.endswith(".py") or (dep.split("/")[0] in PACKAGES and (ROOT / dep).is_dir())


def code_deps(module: str) -> list[str]:
    """The stage's code deps: its imported files, a whole package folder where it imports all of it."""
    files = stage_files(module)
    folders = sorted({str(Path(f).parent) for f in files if Path(f).parent != Path(".")}, key=len)
    deps: set[str] = set(files)
    for folder in folders:
        if folder in PACKAGES or any(folder.startswith(d + "/") for d in deps if not d.endswith(".py")):
            continue
        inside = {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.py") if p.stat().st_size > 0}
        if inside and inside <= files:
            deps = {d for d in deps if not d.startswith(folder + "/")} | {folder}
    return sorted(deps)


def stale_deps() -> dict[str, list[str]]:
    """Code deps that the stage does not import (or that do not exist)."""
    modules = {name: module for name, module, _ in COMMANDS}
    stale = {}
    for stage, spec in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].items():
        words = command_words(spec["cmd"])
        if words[0] != "microcoder" or words[1] not in modules:
            continue
        files = stage_files(modules[words[1]])
        extra = [d for d in map(str, spec.get("deps", [])) if _is_code(d) or not (ROOT / d).exists() and d.endswith(".py")]
        extra = [d for d in extra if not any(f == d or f.startswith(d.rstrip("/") + "/") for f in files)]
        if extra:
            stale[stage] = extra
    return stale


def write_deps(path: Path = ROOT / "dvc.yaml") -> None:
    from ruamel.yaml import YAML

    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    doc = rt.load(path.read_text())
    modules = {name: module for name, module, _ in COMMANDS}
    for spec in doc["stages"].values():
        words = command_words(spec["cmd"])
        if words[0] != "microcoder" or words[1] not in modules:
            continue
        deps = [str(d) for d in spec.get("deps", [])]
        files = stage_files(modules[words[1]])
        # folder deps that still hold imported code stay (they also cover modules loaded by name)
        folders = [d for d in deps if _is_code(d) and not d.endswith(".py")
                   and any(f.startswith(d.rstrip("/") + "/") for f in files)]
        code = folders + [d for d in code_deps(modules[words[1]])
                          if not any(d == f or d.startswith(f.rstrip("/") + "/") for f in folders)]
        data = [d for d in spec.get("deps", []) if not _is_code(str(d))]
        if words[1] == "scrape":  # its data deps are the local source paths params.yaml enables
            data = source_paths()
        spec["deps"] = sorted(code) + data
    with path.open("w") as f:
        rt.dump(doc, f)


def source_paths() -> list[str]:
    from microcoder.pipeline.params import load_params
    from microcoder.pipeline.scrape import ScrapeConfig, local_paths

    return sorted(set(local_paths(ScrapeConfig(**load_params("scrape", ROOT / "params.yaml"))).values()))


def test_scrape_depends_on_every_local_source_it_reads():
    """A file added to a configured source folder must rerun scrape: DVC hashes deps, not the
    paths params.yaml names, so each enabled local source path is a dep (and nothing else is)."""
    spec = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["scrape"]
    data = sorted(str(d) for d in spec["deps"] if not _is_code(str(d)))
    assert data == source_paths(), "scrape's data deps differ from params.yaml's enabled local sources " \
        "(python tests/test_dvc_deps.py --write)"


def test_every_dvc_stage_depends_on_the_code_it_imports():
    missing = missing_deps()
    assert not missing, "dvc.yaml deps miss imported code (add them): " + "; ".join(
        f"{stage}: {', '.join(files)}" for stage, files in missing.items())


def test_no_code_dep_is_stale():
    stale = stale_deps()
    assert not stale, "dvc.yaml deps name code the stage does not import (python tests/test_dvc_deps.py --write): " + \
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


if __name__ == "__main__":
    if "--write" in sys.argv:
        write_deps()
    for stage, files in missing_deps().items():
        print(f"{stage}: missing", *files, sep="\n  - ")
    for stage, files in stale_deps().items():
        print(f"{stage}: stale", *files, sep="\n  - ")
    sys.exit(0)
