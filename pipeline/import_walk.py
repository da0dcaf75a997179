"""Our modules and what each one imports, read with `ast` (function-level and TYPE_CHECKING imports
included): the one import walk that `microcoder deps` (a stage's code deps: pipeline/dvc_deps.py)
and tests/test_layers.py (layers, circles) share. It reads the source beside this file, so it
walks a development checkout (in an installed wheel there is no dvc.yaml to keep in step)."""

from __future__ import annotations

import ast
from pathlib import Path

# the checkout: pipeline/ is linked into src/microcoder/, and resolving the link finds it
ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("pipeline", "training", "stages")  # folders at the repository root
NAMESPACE = "microcoder"  # what they install as: pipeline/dedup is microcoder.pipeline.dedup (src/microcoder/ links)


def layer_of(name: str) -> str | None:
    """The layer of an imported name of ours (`microcoder.pipeline.io` -> pipeline), else None."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == NAMESPACE and parts[1] in LAYERS else None


def module_file(name: str) -> Path | None:
    """The file of our module `name` (a package's __init__.py), or None when it is not ours."""
    if layer_of(name) is None:
        return None
    base = ROOT.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((NAMESPACE, *(parts[:-1] if parts[-1] == "__init__" else parts)))


def modules() -> dict[str, Path]:
    """Every module of ours by name."""
    return {module_name(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def imported_names(path: Path) -> set[str]:
    """Every dotted name `path` imports, relative imports resolved (`from a.b import c` gives a.b
    and a.b.c: c may be a module or a name)."""
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imports(path: Path, packages_run: bool = False) -> set[str]:
    """Our modules that `path` imports: the deepest module each name reaches; with `packages_run`,
    every package __init__ on the way too (importing a.b.c runs a/__init__ and a/b/__init__)."""
    found = set()
    for name in imported_names(path):
        parts = name.split(".")
        reached = [".".join(parts[:i]) for i in range(2, len(parts) + 1) if module_file(".".join(parts[:i]))]
        found.update(reached if packages_run else reached[-1:])
    found.discard(module_name(path))
    return found


def reached(name: str) -> set[str]:
    """Our modules that importing `name` runs, transitively (itself and every package __init__ on
    the way included)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(imports(module_file(current), packages_run=True))
    return seen
