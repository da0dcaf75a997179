"""The layers import downwards only (issue 28): pipeline/ (data stages and the evaluator) never
imports training/ or stages/, and training/ never imports stages/ (function-level imports
included: read with `ast`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HIGHER = {"pipeline": ("training", "stages"), "training": ("stages",)}


def imported_modules(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


@pytest.mark.parametrize("layer", sorted(HIGHER))
def test_a_layer_never_imports_a_higher_one(layer):
    wrong = {}
    for path in sorted((ROOT / layer).rglob("*.py")):
        bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in HIGHER[layer])
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert not wrong, f"{layer}/ imports a higher layer: {wrong}"
