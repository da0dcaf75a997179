"""The layers import downwards only (issue 28): pipeline/ (data stages and the evaluator) never
imports training/ or stages/, training/ never imports stages/, and no module of ours reaches
itself through its imports (function-level and TYPE_CHECKING imports included: read with `ast`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from project_imports import LAYERS, ROOT, imported_names, imports, modules

HIGHER = {"pipeline": ("training", "stages"), "training": ("stages",)}




def imported_modules(path: Path) -> set[str]:
    return {name for name in imported_names(path) if name.split(".")[0] in LAYERS}


@pytest.mark.parametrize("layer", sorted(HIGHER))
def test_a_layer_never_imports_a_higher_one(layer):
    wrong = {}
    for path in sorted((ROOT / layer).rglob("*.py")):
        bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in HIGHER[layer])
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert not wrong, f"{layer}/ imports a higher layer: {wrong}"


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
