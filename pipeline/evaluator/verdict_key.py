"""One hash of what can change a verdict: the evaluator's code (`code_digest`) and its settings. The
result caches of validate and testgen key their runs on it, so that a fix to the evaluator's code or a
change of the params' `evaluator:` section (timeout_scale, limits, sandbox, compiler flags, ...)
re-runs what it judges, and a change of speed alone does not. Rollout's judge fingerprint builds on
`code_digest` too."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.io import content_hash

# How fast the work goes, never what a verdict is: left out of the key.
SPEED_ONLY = ("workers", "input_cache_problems", "compile_cache_mb")


def verdict_key(cfg: EvaluatorConfig) -> str:
    settings = {f.name: _canon(getattr(cfg, f.name)) for f in dataclasses.fields(cfg) if f.name not in SPEED_ONLY}
    return content_hash(code_digest(), json.dumps(settings, sort_keys=True))


@functools.cache
def code_digest() -> str:
    """A hash of the judging code: every `*.py` under pipeline/evaluator/ (sub-folders included)
    and the two modules beside them that it imports for verdicts: pipeline/schema.py (`is_json`
    decides JSON comparisons; statuses, `Verdict`, `TestResult`) and pipeline/program_bundle.py
    (how a program directory is read and written before it is built). Relative path and content of each, sorted by
    path. Computed once per process (the code does not change under a running stage)."""
    return tree_digest(Path(__file__).resolve().parents[1])


def tree_digest(root: Path) -> str:
    """`code_digest` of the package folder `root` (pipeline/)."""
    files = [*(root / "evaluator").rglob("*.py"), root / "schema.py", root / "program_bundle.py"]
    h = hashlib.sha256()
    for rel, f in sorted((f.relative_to(root).as_posix(), f) for f in files):
        data = f.read_bytes()
        h.update(b"%s\x00%d\x00" % (rel.encode(), len(data)) + data)
    return h.hexdigest()[:16]


def _canon(value: Any) -> Any:
    """Numbers as floats (params.yaml's `64` and the default's `64.0` are one setting)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return str(value)
