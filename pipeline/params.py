"""params.yaml loading with `--set key=value` overrides (dotted keys, YAML-typed values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DEFAULT_PARAMS = Path("params.yaml")


def parse_override(item: str) -> tuple[list[str], Any]:
    if "=" not in item:
        raise ValueError(f"--set expects key=value, got {item!r}")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key:
        raise ValueError(f"--set expects key=value, got {item!r}")
    return key.split("."), yaml.safe_load(raw) if raw.strip() else ""


def apply_overrides(params: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    for item in overrides or []:
        keys, value = parse_override(item)
        node = params
        for k in keys[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node = node[k]
        node[keys[-1]] = value
    return params


def load_params(section: str, path: str | Path | None = None, overrides: list[str] | None = None) -> dict[str, Any]:
    """One stage's section of params.yaml (empty dict if the file or section is absent), plus overrides."""
    path = Path(path) if path else DEFAULT_PARAMS
    data: dict[str, Any] = {}
    if path.exists():
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping at the top level")
    params = dict(data.get(section) or {})
    return apply_overrides(params, overrides)
