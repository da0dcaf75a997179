"""dvc.yaml's deps kept in step with the code and params.yaml (`microcoder deps`).

DVC reruns a stage when one of its deps changes, so a stage's deps must hold every project module
it imports (transitively, function-level imports included: `import_walk`), and scrape's must hold
every local source path params.yaml enables (DVC hashes deps, not the paths params name: a file
added to a source folder would never rerun it). `problems` lists what is missing or stale, stage
by stage; `write_deps` rewrites the code deps (and scrape's source paths), keeping dvc.yaml's data
deps, comments and layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from microcoder.pipeline import import_walk
from microcoder.pipeline.inputs import InputError

NOT_DEPS = {"pipeline/cli.py"}  # registers every command; a stage's behaviour does not depend on it
RUN_PREFIX = 'PATH="$DVC_ROOT/.venv/bin:$PATH"'  # the project's venv first: `.venv/bin/dvc repro` works unactivated
SCRAPE = "scrape"  # the command whose data deps are the local sources params.yaml enables


def dvc_file() -> Path:
    return import_walk.ROOT / "dvc.yaml"


def params_file() -> Path:
    return import_walk.ROOT / "params.yaml"


def stage_files(module: str) -> set[str]:
    """Every project file the stage module imports, transitively, as repo-relative paths."""
    root = import_walk.ROOT
    found = (import_walk.module_file(n) for n in import_walk.reached(f"microcoder.stages.{module}"))
    files = {str(f.relative_to(root)) for f in found if f is not None}
    return {f for f in files if f not in NOT_DEPS and (root / f).stat().st_size > 0}


def command_words(cmd: str) -> list[str]:
    """A dvc.yaml command's words after the PATH prefix (`microcoder STAGE ...`)."""
    return str(cmd).removeprefix(RUN_PREFIX).split()


def is_code(dep: str) -> bool:
    """A code dep: a .py file, or a folder inside one of the code layers."""
    return dep.endswith(".py") or (dep.split("/")[0] in import_walk.LAYERS and (import_walk.ROOT / dep).is_dir())


def _covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def code_deps(module: str) -> list[str]:
    """The stage's code deps: its imported files, a whole package folder where it imports all of it."""
    files = stage_files(module)
    folders = sorted({str(Path(f).parent) for f in files if Path(f).parent != Path(".")}, key=len)
    deps: set[str] = set(files)
    for folder in folders:
        if folder in import_walk.LAYERS or any(folder.startswith(d + "/") for d in deps if not d.endswith(".py")):
            continue
        inside = {str(p.relative_to(import_walk.ROOT)) for p in (import_walk.ROOT / folder).rglob("*.py")
                  if p.stat().st_size > 0}
        if inside and inside <= files:
            deps = {d for d in deps if not d.startswith(folder + "/")} | {folder}
    return sorted(deps)


def source_paths(params: str | Path | None = None) -> list[str]:
    """Every local path an enabled scrape source reads, from params.yaml's `scrape:` section."""
    from microcoder.pipeline.params import load_params
    from microcoder.pipeline.scrape import ScrapeConfig, local_paths
    from microcoder.pipeline.stage import build_config

    section = load_params(SCRAPE, params or params_file())
    return sorted(set(local_paths(build_config(ScrapeConfig, section, SCRAPE)).values()))


def command_stages(dvc_yaml: str | Path | None = None) -> dict[str, tuple[str, list[str]]]:
    """{dvc stage: (its command's module under stages/, its deps)} for every `microcoder` stage."""
    from microcoder.pipeline.cli import COMMANDS

    path = Path(dvc_yaml or dvc_file())
    if not path.is_file():
        raise InputError(f"{path} not found: `microcoder deps` keeps the dvc.yaml of a development checkout")
    modules = {name: module for name, module, _ in COMMANDS}
    out = {}
    for stage, spec in (yaml.safe_load(path.read_text()) or {}).get("stages", {}).items():
        words = command_words(spec["cmd"])
        if len(words) > 1 and words[0] == "microcoder" and words[1] in modules:
            out[stage] = (modules[words[1]], [str(d) for d in spec.get("deps") or []])
    return out


def _walked(dvc_yaml: str | Path | None) -> dict[str, tuple[str, list[str], set[str]]]:
    """{stage: (module, deps, the files it imports)}: the import walk, once per stage."""
    return {stage: (module, deps, stage_files(module)) for stage, (module, deps) in command_stages(dvc_yaml).items()}


def missing_deps(dvc_yaml: str | Path | None = None, params: str | Path | None = None,
                 walked: dict[str, tuple[str, list[str], set[str]]] | None = None) -> dict[str, list[str]]:
    """{stage: what its deps lack}: imported code, and for scrape every enabled local source path."""
    missing = {}
    for stage, (module, deps, files) in (walked or _walked(dvc_yaml)).items():
        want = sorted(files) + (source_paths(params) if module == SCRAPE else [])
        uncovered = [f for f in want if not _covered(f, [d.rstrip("/") for d in deps])]
        if uncovered:
            missing[stage] = uncovered
    return missing


def stale_deps(dvc_yaml: str | Path | None = None, params: str | Path | None = None,
               walked: dict[str, tuple[str, list[str], set[str]]] | None = None) -> dict[str, list[str]]:
    """{stage: deps naming what it no longer reads}: code it does not import (or that does not
    exist), and for scrape a data dep that is no enabled local source."""
    stale = {}
    for stage, (module, deps, files) in (walked or _walked(dvc_yaml)).items():
        extra = [d for d in deps if is_code(d) and not any(_covered(f, [d]) for f in files)]
        if module == SCRAPE:
            sources = source_paths(params)
            extra += [d for d in deps if not is_code(d) and d not in sources]
        if extra:
            stale[stage] = extra
    return stale


def problems(dvc_yaml: str | Path | None = None, params: str | Path | None = None) -> list[str]:
    """One line per stage whose deps are missing or stale, naming every path."""
    walked = _walked(dvc_yaml)
    missing, stale = missing_deps(params=params, walked=walked), stale_deps(params=params, walked=walked)
    lines = []
    for stage in sorted(set(missing) | set(stale)):
        parts = [f"deps lack {', '.join(missing[stage])}"] if stage in missing else []
        parts += [f"deps name what it no longer reads: {', '.join(stale[stage])}"] if stage in stale else []
        lines.append(f"stage `{stage}`: " + "; ".join(parts))
    return lines


def _new_deps(module: str, deps: list[Any], params: str | Path | None) -> list[Any]:
    """A stage's deps rewritten: its code deps, then its data deps as they were (scrape's: the
    enabled local source paths)."""
    files = stage_files(module)
    # folder deps that still hold imported code stay (they also cover modules loaded by name)
    folders = [str(d) for d in deps if is_code(str(d)) and not str(d).endswith(".py") and any(_covered(f, [str(d)]) for f in files)]
    code = folders + [d for d in code_deps(module) if not _covered(d, folders)]
    data = source_paths(params) if module == SCRAPE else [d for d in deps if not is_code(str(d))]
    return sorted(code) + data


def write_deps(dvc_yaml: str | Path | None = None, params: str | Path | None = None) -> None:
    """Rewrite every `microcoder` stage's deps in dvc.yaml (round-trip YAML: comments and the
    rest of the file are kept)."""
    from ruamel.yaml import YAML

    path = Path(dvc_yaml or dvc_file())
    modules = {stage: module for stage, (module, _) in command_stages(path).items()}
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)
    doc = rt.load(path.read_text())
    for stage, spec in doc["stages"].items():
        if stage in modules:
            spec["deps"] = _new_deps(modules[stage], list(spec.get("deps") or []), params)
    from microcoder.pipeline.io import atomic_path

    with atomic_path(path, ".yaml") as tmp, open(tmp, "w") as f:
        rt.dump(doc, f)
