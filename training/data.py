"""Training problems in, TRL prompt dataset out.

Inputs: the curated shards (Hub layout: `<dir>/data/train-*.parquet`), any parquet file or shard
directory of Problem rows (`data/validated/problems.parquet`), or our jsonl
(`microcoder.pipeline.inputs`). A problem that cannot be trained on (a row that fails
`validate_problem`, e.g. without tests; a duplicate id; a functional problem when the answer
language is not Python; over `max_problems`) is rejected with a reason, never dropped silently.

The fallback input is used only when the input does not exist at all (before the first build);
an input that exists but holds no rows is an error: it means the filter or the build kept nothing,
and training on the unfiltered fallback instead would silently skip them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError, load_problems, row_count
from microcoder.pipeline.schema import Problem

log = logging.getLogger(__name__)


@dataclass
class TrainingProblems:
    path: Path
    problems: list[Problem]
    rejects: list[dict[str, Any]] = field(default_factory=list)  # microcoder.pipeline.io.reject_row shape
    read: int = 0


def resolve_input(path: str | Path, fallback: str | Path | None) -> Path:
    """`path` when it exists (it must hold rows); else `fallback`, with a warning."""
    path = Path(path)
    if path.exists():
        if row_count(path) == 0:
            raise InputError(f"{path} holds no training problems (did the filter or build keep none?); "
                             "not falling back to unfiltered problems")
        return path
    if fallback is not None and Path(fallback).exists():
        if row_count(fallback) == 0:
            raise InputError(f"no training problems: {path} does not exist and the fallback {fallback} is empty")
        log.warning("%s does not exist: training on the fallback %s (run the build stage for the curated set)",
                    path, fallback)
        return Path(fallback)
    raise InputError(f"no training problems: {path} does not exist"
                     + (f", and neither does the fallback {fallback}" if fallback else ""))


def load_training_problems(path: str | Path, *, language: str = "python", max_problems: int | None = None,
                           ) -> TrainingProblems:
    """Usable problems from `path` (in file order), with every skipped one in `rejects`."""
    loaded = load_problems(path, "training input")
    out = TrainingProblems(path=loaded.path, problems=[], read=loaded.read)
    out.rejects = [_reject(r.id, r.reason, r.record) for r in loaded.rejects]
    for problem in loaded.problems:
        if problem.style == "functional" and language != "python":
            out.rejects.append(_reject(problem.id, f"functional problem cannot be answered in {language}", problem))
        elif max_problems is not None and len(out.problems) >= max_problems:
            out.rejects.append(_reject(problem.id, f"over max_problems={max_problems}", None))
        else:
            out.problems.append(problem)
    return out


def _reject(id: str | None, reason: str, record: Any) -> dict[str, Any]:
    from microcoder.pipeline.io import reject_row

    return reject_row(id, "train", reason, record)


def prompt_dataset(problems: list[Problem], *, language: str = "python", thinking: bool = False,
                   system_prompt: str | None = None, use_dataset_prompts: bool = True):
    """A `datasets.Dataset` with `prompt` (chat messages) and `problem_id` columns.

    With `use_dataset_prompts`, a row's own `prompt` column (the curated shards carry the exact
    training prompt) is used as is; other rows get `build_messages(...)`.
    """
    from datasets import Dataset

    from microcoder.pipeline.generation.prompts import build_messages

    rows = []
    for p in problems:
        prompt = p.extra.get("prompt") if use_dataset_prompts else None
        if not _is_messages(prompt):
            prompt = build_messages(p, thinking=thinking, language=language, system_prompt=system_prompt)
        rows.append({"prompt": [{"role": m["role"], "content": m["content"]} for m in prompt], "problem_id": p.id})
    return Dataset.from_list(rows)


def _is_messages(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                    for m in value))
