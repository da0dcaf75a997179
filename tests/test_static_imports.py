"""Editors and type checkers resolve our imports (issue 40). They never run an import hook, which is
how setuptools served the old folder mapping: src/microcoder/ now links to the three layers, the
development install puts src/ on the path with a plain .pth line, and the type check `make test`
runs (pyproject.toml [tool.mypy]) fails on an unresolved import of ours, a missing name and a call
that does not fit."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys

import pytest
from project_imports import LAYERS, NAMESPACE, ROOT


def test_the_layers_are_linked_into_the_package():
    package = ROOT / "src" / NAMESPACE
    assert (package / "__init__.py").is_file() and (package / "py.typed").is_file()
    for layer in LAYERS:
        assert (package / layer).is_symlink() and (package / layer).resolve() == ROOT / layer, layer


def test_the_development_install_is_a_plain_path():
    dist = importlib.metadata.distribution("microcoder")
    origin = json.loads(dist.read_text("direct_url.json") or "{}")
    if not origin.get("dir_info", {}).get("editable"):
        pytest.skip("not a development (editable) install")
    files = dist.files or []
    pth = [f for f in files if f.name.startswith("__editable__") and f.suffix == ".pth"]
    lines = [line for f in pth for line in dist.locate_file(f).read_text().splitlines() if line.strip()]
    assert lines == [str(ROOT / "src")]  # no `import ...` line: nothing to execute
    assert not [f for f in files if f.suffix == ".py"]  # no finder module


def test_the_type_check_fails_on_what_a_static_tool_cannot_resolve(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from microcoder.pipeline.nope import x\n"  # no such module of ours
                     "from microcoder.pipeline.io import nope\n"  # no such name
                     "from microcoder.pipeline.program_bundle import load\n"
                     "load('{}', 2)\n"  # one argument too many
                     "import torch\n"  # third-party: resolved, not analysed
                     "import harness_procs\n")  # the judge's files import each other as the box sees them
    got = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), str(probe)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    found = re.findall(r"probe\.py:(\d+): error: .*\[([a-z-]+)\]$", got.stdout, re.MULTILINE)
    assert found == [("1", "import-not-found"), ("2", "attr-defined"), ("4", "call-arg")], got.stdout + got.stderr
