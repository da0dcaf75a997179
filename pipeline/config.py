"""Stage configs: dataclasses whose field help doubles as docs, filled from a params.yaml section."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

T = TypeVar("T")
_SECRET_KEY = re.compile(r"(?:^|_)(?:api_?key|token|secret|password|credentials?)$", re.IGNORECASE)


def config_from_params(cls: type[T], params: dict[str, Any] | None) -> T:
    """Build dataclass `cls` from a params mapping; unknown keys are an error that lists valid ones."""
    params = dict(params or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise ValueError(f"unknown {cls.__name__} params {unknown}; valid: {sorted(fields)}")
    return cls(**params)


def describe(cls: type) -> str:
    """One line per field: name, default and the `help` metadata (for --help texts and docs)."""
    lines = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else "required")
        lines.append(f"{f.name} = {default!r}: {f.metadata.get('help', '')}")
    return "\n".join(lines)


def settings_record(cfg: Any) -> Any:
    """A config (dataclass or mapping) as plain data for stats files and dataset cards, with the
    string values of secret-looking keys (`api_key`, `hf_token`, `password`, ...) redacted."""
    data = dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type) else cfg
    if isinstance(data, dict):
        return {k: "<redacted>" if isinstance(v, str) and v and _SECRET_KEY.search(str(k)) else settings_record(v)
                for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [settings_record(v) for v in data]
    return data
