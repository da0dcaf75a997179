"""Training problems in, TRL prompt dataset out.

Inputs: the curated shards (Hub layout: `<dir>/data/train-*.parquet`), any parquet file or shard
directory of Problem rows (`data/validated/problems.parquet`), or our jsonl. Rows the Hub export
flattened to JSON strings (tests, checker, ...) are parsed back. A problem that cannot be trained
on (a row that fails `validate_problem`, e.g. without tests; a duplicate id; a functional problem
when the answer language is not Python) is rejected with a reason, never dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io import read_jsonl
from pipeline.schema import Problem, validate_problem

NESTED = ("tests", "checker", "reference_solutions", "tags")


@dataclass
class TrainingProblems:
    path: Path
    problems: list[Problem]
    rejects: list[dict[str, Any]] = field(default_factory=list)  # pipeline.io.reject_row shape
    read: int = 0


def resolve_input(path: str | Path, fallback: str | Path | None) -> Path:
    """`path` when it holds at least one row, else `fallback` (which must)."""
    for candidate in [path, fallback]:
        if candidate is not None and _row_count(Path(candidate)) > 0:
            return Path(candidate)
    raise FileNotFoundError(f"no training problems: {path} is absent or empty"
                            + (f", and so is the fallback {fallback}" if fallback else ""))


def _parquet_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    hub = sorted((path / "data").glob("train-*.parquet"))
    return hub or sorted(path.rglob("*.parquet"))


def _row_count(path: Path) -> int:
    if path.suffix == ".jsonl":
        return sum(1 for _ in read_jsonl(path)) if path.is_file() else 0
    return sum(pq.ParquetFile(f).metadata.num_rows for f in _parquet_files(path))


def _rows(path: Path):
    if path.suffix == ".jsonl":
        for _n, rec, err in read_jsonl(path):
            yield (rec if err is None else None), (err or "")
        return
    files = _parquet_files(path)
    table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")
    for row in table.to_pylist():
        yield row, ""


def _normalise(row: dict[str, Any]) -> dict[str, Any]:
    row = dict(row)
    for key in NESTED:
        if isinstance(row.get(key), str):
            row[key] = json.loads(row[key]) if row[key].strip() else None
    return row


def load_training_problems(path: str | Path, *, language: str = "python", max_problems: int | None = None,
                           ) -> TrainingProblems:
    """Usable problems from `path` (in file order), with every skipped one in `rejects`."""
    path = Path(path)
    out = TrainingProblems(path=path, problems=[])
    seen: set[str] = set()
    for row, err in _rows(path):
        out.read += 1
        rid = row.get("id") if isinstance(row, dict) else None
        if row is None:
            out.rejects.append(_reject(None, f"unreadable row: {err}", None))
            continue
        try:
            row = _normalise(row)
            errors = validate_problem(row)
            if errors:
                out.rejects.append(_reject(rid, "invalid record: " + "; ".join(errors), row))
                continue
            problem = Problem.from_dict(row)
        except (TypeError, ValueError, KeyError) as e:
            out.rejects.append(_reject(rid, f"not a Problem row: {e}", row))
            continue
        reason = _unusable(problem, language, seen)
        if reason:
            out.rejects.append(_reject(problem.id, reason, row))
            continue
        if max_problems is not None and len(out.problems) >= max_problems:
            out.rejects.append(_reject(problem.id, f"over max_problems={max_problems}", None))
            continue
        seen.add(problem.id)
        out.problems.append(problem)
    return out


def _unusable(problem: Problem, language: str, seen: set[str]) -> str | None:
    if problem.id in seen:
        return "duplicate id"
    if problem.style == "functional" and language != "python":
        return f"functional problem cannot be answered in {language}"
    return None


def _reject(id: str | None, reason: str, record: Any) -> dict[str, Any]:
    return {"id": id, "stage": "train", "reason": reason, "record": record}


def prompt_dataset(problems: list[Problem], *, language: str = "python", thinking: bool = False,
                   system_prompt: str | None = None, use_dataset_prompts: bool = True):
    """A `datasets.Dataset` with `prompt` (chat messages) and `problem_id` columns.

    With `use_dataset_prompts`, a row's own `prompt` column (the curated shards carry the exact
    training prompt) is used as is; other rows get `build_messages(...)`.
    """
    from datasets import Dataset

    from pipeline.rollout.prompts import build_messages

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
