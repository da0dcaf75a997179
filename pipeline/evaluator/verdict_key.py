"""One hash of the evaluator settings that can change a verdict. The result caches of validate and
testgen key their runs on it, so that a change of the params' `evaluator:` section (timeout_scale,
limits, sandbox, compiler flags, ...) re-runs what it judges, and a change of speed alone does not."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pipeline.evaluator.config import EvaluatorConfig
from pipeline.io import content_hash

# How fast the work goes, never what a verdict is: left out of the key.
SPEED_ONLY = ("workers", "input_cache_problems")


def verdict_key(cfg: EvaluatorConfig) -> str:
    settings = {f.name: _canon(getattr(cfg, f.name)) for f in dataclasses.fields(cfg) if f.name not in SPEED_ONLY}
    return content_hash(json.dumps(settings, sort_keys=True))


def _canon(value: Any) -> Any:
    """Numbers as floats (params.yaml's `64` and the default's `64.0` are one setting)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return [_canon(v) for v in value]
    return str(value)
