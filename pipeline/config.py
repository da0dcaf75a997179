"""Stage configs: dataclasses whose field help doubles as docs, filled from a params.yaml section."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

T = TypeVar("T")
# api_key, secret_key, hf_token, password, passwd, credentials, cookie, Authorization, auth_header...
_SECRET_KEY = re.compile(r"(?:key|token|secret|passw(?:or)?d|credentials?|cookie)$|(?:^|[_-])auth", re.IGNORECASE)
_URL_SECRETS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@|(?P<query>\?[^\s#]+)", re.IGNORECASE)


def config_from_params(cls: type[T], params: dict[str, Any] | None) -> T:
    """Build dataclass `cls` from a params mapping, typed (nested dataclasses built, types checked);
    an unknown key is an error that lists the valid ones (`pipeline.stage.build_config`)."""
    from pipeline.stage import build_config

    return build_config(cls, dict(params or {}), cls.__name__)


def describe(cls: type) -> str:
    """One line per field: name, default and the `help` metadata (for --help texts and docs)."""
    lines = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else "required")
        lines.append(f"{f.name} = {default!r}: {f.metadata.get('help', '')}")
    return "\n".join(lines)


def settings_record(cfg: Any) -> Any:
    """A config (dataclass or mapping) as plain data for stats files and dataset cards, with every
    value under a secret-looking key (`api_key`, `hf_token`, `password`, `Authorization`, ...)
    redacted, and credentials and query strings cut out of URLs."""
    data = dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type) else cfg
    if isinstance(data, dict):
        return {k: "<redacted>" if v not in (None, "") and _SECRET_KEY.search(str(k)) else settings_record(v)
                for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [settings_record(v) for v in data]
    if isinstance(data, str) and "://" in data:
        return _URL_SECRETS.sub(lambda m: f"{m['scheme']}<redacted>@" if m["scheme"] else "?<redacted>", data)
    return data
