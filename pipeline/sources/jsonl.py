"""Our own jsonl format: one `Problem.to_dict()` object per line (the seed corpus)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources.base import Item, Reject, SourceContext, expand_paths, iter_json_lines


@dataclass
class Options:
    path: str = field(default="data/seed/problems.jsonl", metadata={"help": "A .jsonl(.gz) file or a folder of them."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    for path in expand_paths(opts.path, ("*.jsonl", "*.jsonl.gz")):
        for _, rec, reject in iter_json_lines(path):
            if reject is not None:
                yield reject
                continue
            rid = rec.get("id") if isinstance(rec.get("id"), str) else None
            errors = validate_problem(rec)
            if errors:
                yield Reject("invalid_problem", "; ".join(errors), rec, rid)
                continue
            try:
                yield Problem.from_dict(rec)
            except (TypeError, ValueError) as e:
                yield Reject("invalid_problem", f"cannot build a Problem: {e}", rec, rid)
