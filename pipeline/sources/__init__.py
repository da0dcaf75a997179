"""Problem sources: each module maps one input format or platform into the Problem schema.

A source module exposes an `Options` dataclass (its own settings) and
`read(options, ctx) -> Iterator[Problem | Reject]`, one item per input record. `KINDS` is the
registry the scrape stage uses; `FORMATS` maps the ad hoc `--format` names onto kinds.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from microcoder.pipeline.sources.base import Item, Reject, SourceContext, SourceError
from microcoder.pipeline.stage import build_config

KINDS = {
    "jsonl": "microcoder.pipeline.sources.jsonl",
    "humaneval": "microcoder.pipeline.sources.humaneval",
    "livecodebench": "microcoder.pipeline.sources.livecodebench",
    "kattis": "microcoder.pipeline.sources.kattis",
    "leetcodedataset": "microcoder.pipeline.sources.leetcodedataset",
    "hub": "microcoder.pipeline.sources.hub",
    "codeforces": "microcoder.pipeline.sources.codeforces",
    "atcoder": "microcoder.pipeline.sources.atcoder",
    "leetcode": "microcoder.pipeline.sources.leetcode",
}
LIVE_KINDS = frozenset({"codeforces", "atcoder", "leetcode"})

# `microcoder scrape --format F --path P`: (kind, extra options); hub formats name an adapter.
FORMATS: dict[str, tuple[str, dict[str, Any]]] = {
    "jsonl": ("jsonl", {}),
    "humaneval": ("humaneval", {}),
    "livecodebench": ("livecodebench", {}),
    "kattis": ("kattis", {}),
    "leetcodedataset": ("leetcodedataset", {}),
    "codecontests": ("hub", {"adapter": "codecontests"}),
    "taco": ("hub", {"adapter": "taco"}),
    "apps": ("hub", {"adapter": "apps"}),
    "open-r1-codeforces": ("hub", {"adapter": "open-r1-codeforces"}),
    "deepcoder": ("hub", {"adapter": "deepcoder"}),
}


def source_module(kind: str):
    if kind not in KINDS:
        raise SourceError(f"unknown source kind {kind!r}; valid: {sorted(KINDS)}")
    return importlib.import_module(KINDS[kind])


def build_options(kind: str, options: dict[str, Any]) -> Any:
    """The kind's Options dataclass from the entry's remaining keys (unknown keys are an error)."""
    module = source_module(kind)
    try:
        return build_config(module.Options, options)
    except (TypeError, ValueError) as e:
        raise SourceError(f"source kind {kind!r}: {e}") from e


def read_source(kind: str, options: Any, ctx: SourceContext) -> Iterator[Item]:
    return source_module(kind).read(options, ctx)


__all__ = ["FORMATS", "KINDS", "LIVE_KINDS", "Item", "Reject", "SourceContext", "SourceError",
           "build_options", "read_source", "source_module"]
