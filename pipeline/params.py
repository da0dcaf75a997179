"""params.yaml loading with `--set key=value` overrides (dotted keys, YAML-typed values)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PARAMS = Path("params.yaml")


class ParamsLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # the C parser where PyYAML has it
    """YAML with YAML 1.2's numbers: PyYAML follows YAML 1.1, where `1e-3` (no dot) is a string, so
    `--set grpo.learning_rate=1e-3` reached the trainer as text. DVC reads params.yaml as 1.2 too."""


ParamsLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=ParamsLoader)


def parse_override(item: str) -> tuple[list[str], Any]:
    if "=" not in item:
        raise ValueError(f"--set expects key=value, got {item!r}")
    key, raw = item.split("=", 1)
    key = key.strip()
    if not key:
        raise ValueError(f"--set expects key=value, got {item!r}")
    return key.split("."), load_yaml(raw) if raw.strip() else ""


def apply_overrides(params: dict[str, Any], overrides: list[str] | None) -> dict[str, Any]:
    for item in overrides or []:
        keys, value = parse_override(item)
        node: Any = params
        for k in keys[:-1]:
            node = _child(node, k, item)
        if isinstance(node, list):
            node[_index(node, keys[-1], item)] = value
        else:
            node[keys[-1]] = value
    return params


def _index(node: list, key: str, item: str) -> int:
    """A list element addressed by its position (`sources.0.path=...`)."""
    if not key.lstrip("-").isdigit() or not -len(node) <= int(key) < len(node):
        raise ValueError(f"--set {item!r}: {key!r} is not an index of a list of {len(node)}")
    return int(key)


def _child(node: Any, key: str, item: str) -> Any:
    if isinstance(node, list):
        return node[_index(node, key, item)]
    if not isinstance(node.get(key), (dict, list)):
        node[key] = {}
    return node[key]


def load_params(section: str, path: str | Path | None = None, overrides: list[str] | None = None) -> dict[str, Any]:
    """One stage's section of params.yaml (empty dict if the file or section is absent), plus overrides."""
    path = Path(path) if path else DEFAULT_PARAMS
    data: dict[str, Any] = {}
    if path.exists():
        data = load_yaml(path.read_text()) or {}  # the C parser: every CLI start parses params.yaml (40 ms -> 6 ms)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping at the top level")
    params = dict(data.get(section) or {})
    return apply_overrides(params, overrides)
