"""The layers import downwards only (issue 28): pipeline/ (data stages and the evaluator) never
imports training/ or stages/, training/ never imports stages/, and no module of ours reaches
itself through its imports (function-level and TYPE_CHECKING imports included: read with `ast`).
Inside pipeline/ (issue 40): difficulty/ never reaches the release (re-banding writes one, so it
sits above build: pipeline/reband.py), so the filter stage's code holds no release module, and
sources/ never reaches the evaluator (a program directory's record format is
pipeline/program_bundle.py, beside the schema; its building stays with the evaluator).
They install under one namespace (`microcoder.pipeline`, ...): every import of ours goes through it,
and nothing named `pipeline`, `training` or `stages` reaches a user's environment."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from project_imports import LAYERS, ROOT, imported_names, imports, layer_of, module_name, modules, reached

HIGHER = {"pipeline": ("training", "stages"), "training": ("stages",)}
RELEASE = tuple(f"microcoder.pipeline.{m}" for m in ("build", "card", "publish", "export", "reband"))
# What the modules of a folder (or a file) never reach, through any chain of imports.
NEVER_REACHES = {
    "pipeline/difficulty": RELEASE,
    "pipeline/sources": ("microcoder.pipeline.evaluator",),
    "pipeline/program_bundle.py": ("microcoder.pipeline.evaluator",),
    "pipeline/schema.py": ("microcoder.pipeline.evaluator",),
}


def imported_modules(path: Path) -> set[str]:
    return {name for name in imported_names(path) if layer_of(name)}


@pytest.mark.parametrize("layer", sorted(HIGHER))
def test_a_layer_never_imports_a_higher_one(layer):
    wrong = {}
    for path in sorted((ROOT / layer).rglob("*.py")):
        bad = sorted(m for m in imported_modules(path) if layer_of(m) in HIGHER[layer])
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert not wrong, f"{layer}/ imports a higher layer: {wrong}"


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("where", sorted(NEVER_REACHES))
def test_a_module_never_reaches_what_sits_above_it(where):
    paths = [ROOT / where] if where.endswith(".py") else sorted((ROOT / where).rglob("*.py"))
    wrong = {}
    for path in paths:
        bad = sorted(m for m in reached(module_name(path)) if _within(m, NEVER_REACHES[where]))
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert not wrong, f"{where} reaches {NEVER_REACHES[where]}: {wrong}"


def test_the_filter_stage_holds_no_release_code():
    """Editing the card (or the release writer) does not rerun filter: `microcoder filter --release`
    runs `microcoder reband` by name, and the filter command's imports (its DVC code deps) reach no
    release module; the reband command's do."""
    assert not [m for m in reached("microcoder.stages.filter") if _within(m, RELEASE)]
    assert {"microcoder.pipeline.reband", "microcoder.pipeline.card"} <= reached("microcoder.stages.reband")


def test_the_walk_sees_an_arrow_through_another_module(tmp_path, monkeypatch):
    """`reached` follows chains: the checks above would see difficulty -> x -> build, not only a
    direct import."""
    import project_imports

    pkg = tmp_path / "pipeline"
    (pkg / "difficulty").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "difficulty" / "__init__.py").write_text("")
    (pkg / "difficulty" / "x.py").write_text("def f():\n    from microcoder.pipeline import helper\n")
    (pkg / "helper.py").write_text("from microcoder.pipeline.build import write_release\n")
    (pkg / "build.py").write_text("")
    monkeypatch.setattr(project_imports, "ROOT", tmp_path)
    assert "microcoder.pipeline.build" in reached("microcoder.pipeline.difficulty.x")


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    return {name: imports(path) for name, path in modules().items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_through_others():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_import_of_ours_goes_through_the_namespace():
    """`from pipeline.x import y` would load a second copy of a module (or fail once installed):
    none in the code, the tests or the benchmarks."""
    wrong = {}
    for folder in (*LAYERS, "tests", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "inside" in path.parts:  # the judge's own files, imported by path inside the box
                continue
            bare = sorted(n for n in imported_names(path) if n.split(".")[0] in LAYERS)
            if bare:
                wrong[str(path.relative_to(ROOT))] = bare
    assert not wrong, wrong


def test_the_installed_package_is_one_namespace(tmp_path):
    """Run from outside the checkout (so the repository root is not on sys.path): the package's only
    top-level name is `microcoder`, the CLI and every command import through it, and no module
    named pipeline/training/stages is loaded or importable."""
    code = textwrap.dedent('''
        import importlib, importlib.metadata, importlib.util, sys
        top = importlib.metadata.distribution("microcoder").read_text("top_level.txt").split()
        from microcoder.pipeline.cli import COMMANDS
        for _name, module, _help in COMMANDS:
            importlib.import_module(f"microcoder.stages.{module}")
        loaded = sorted({m.split(".")[0] for m in sys.modules} & {"pipeline", "training", "stages"})
        found = [n for n in ("pipeline", "training", "stages") if importlib.util.find_spec(n) is not None]
        print(top, loaded, found)
    ''')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "['microcoder'] [] []"
