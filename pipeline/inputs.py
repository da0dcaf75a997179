"""Reading the problems that the later stages consume (rollout, filter, build, train, eval-model).

A stage input that is missing or unreadable as a whole is an `InputError`: the stage stops with a
one-line message. Everything else is judged record by record, and a record that cannot be used
becomes a reject with its reason, never a crash and never a silent drop:
- a line that is not a JSON object (jsonl inputs);
- a record that fails `validate_problem` (no tests, a malformed test, an unknown style, a
  functional problem without an entry point, ...) or cannot be built into a `Problem`;
- a second record with an id already seen (the first one is kept: ids key every later join).

Inputs: a Problem parquet file, a folder of parquet shards (a Hub-layout folder reads its
`data/train-*.parquet`), or our jsonl. Hidden files and folders (atomic-write temporaries, a build's
staging folder) are never read. Columns that a Hub export flattened to JSON strings are parsed back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline import checked_tests
from microcoder.pipeline.io import read_jsonl, shard_files
from microcoder.pipeline.schema import Problem, validate_problem

NESTED = ("tests", "checker", "reference_solutions", "tags")
DUPLICATE = "duplicate id: an earlier record with this id is kept"


class InputError(ValueError):
    """A stage input that is missing or unreadable as a whole (not one record's fault)."""


def require_input(path: str | Path, what: str = "input") -> Path:
    """`path` as a Path; an InputError naming `what` when it does not exist."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} {p} does not exist (run the stage that produces it, or pass the right path)")
    return p


def parquet_files(path: str | Path) -> list[Path]:
    """The parquet files of a file or folder (Hub layout first), hidden paths left out."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    hub = sorted((path / "data").glob("train-*.parquet"))
    if hub:
        return hub
    return shard_files(path)


def iter_records(path: str | Path) -> Iterator[tuple[dict[str, Any] | None, str | None]]:
    """(record, None) per row, or (None, error) for a row that is not a JSON object."""
    path = Path(path)
    if path.suffix == ".jsonl":
        for _line, rec, err in read_jsonl(path):
            yield rec, err
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = parquet_files(path)
    for f in files:
        try:
            pf = pq.ParquetFile(f)
            checked_tests.take_metadata(pf.schema_arrow.metadata)  # tests the writing stage checked
            batches = pf.iter_batches(batch_size=1024)
            for batch in batches:
                for row in batch.to_pylist():
                    yield row, None
        except (pa.ArrowException, OSError) as e:  # a corrupt or truncated file: the whole input is bad
            raise InputError(f"{f}: not a readable parquet file ({e})") from e


def row_count(path: str | Path) -> int:
    """Rows (records) in a parquet file/folder or jsonl; 0 when the path does not exist."""
    path = Path(path)
    if not path.exists():
        return 0
    if path.suffix == ".jsonl":
        return sum(1 for _ in read_jsonl(path))
    import pyarrow as pa
    import pyarrow.parquet as pq

    total = 0
    for f in parquet_files(path):
        try:
            total += pq.ParquetFile(f).metadata.num_rows
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"{f}: not a readable parquet file ({e})") from e
    return total


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    """Parse back the nested columns that a Hub export flattened to JSON strings."""
    row = dict(row)
    for key in NESTED:
        if isinstance(row.get(key), str):
            row[key] = json.loads(row[key]) if row[key].strip() else None
    return row


@dataclass
class Reject:
    """One input record that did not become a Problem: the one class every reader and source uses.
    `code` is the reason's category (the stats key), `detail` says exactly what was wrong, `record`
    is the raw input."""

    code: str
    detail: str
    record: Any
    id: str | None = None

    @property
    def reason(self) -> str:
        return f"{self.code}: {self.detail}" if self.detail else self.code

    @classmethod
    def of(cls, id: str | None, reason: str, record: Any) -> Reject:
        """From a whole reason text `category: detail`."""
        code, _, detail = reason.partition(": ")
        return cls(code, detail, record, id)


@dataclass
class LoadedProblems:
    path: Path
    problems: list[Problem] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    read: int = 0  # records read: len(problems) + len(rejects)


def judge_record(row: dict[str, Any]) -> tuple[Problem | None, str | None, dict[str, Any]]:
    """One record by the tolerant reader's rule: (problem, None, row) or (None, reason, row), with
    `row` normalised where that worked. Repeated ids are the caller's to check (streaming readers
    keep only the ids)."""
    try:
        row = normalise(row)
        errors = validate_problem(row)
        if errors:
            return None, "invalid record: " + "; ".join(errors), row
        return Problem.from_dict(row), None, row
    except (TypeError, ValueError, KeyError) as e:
        return None, f"not a Problem record: {e}", row


def load_problems(path: str | Path, what: str = "problems") -> LoadedProblems:
    """Every usable problem of `path` in file order, every other record in `rejects`."""
    path = require_input(path, what)
    out = LoadedProblems(path=path)
    seen: set[str] = set()
    for row, err in iter_records(path):
        out.read += 1
        if row is None:
            out.rejects.append(Reject.of(None, f"unreadable record: {err}", None))
            continue
        problem, reason, row = judge_record(row)
        if problem is None:
            out.rejects.append(Reject.of(row.get("id") if isinstance(row.get("id"), str) else None, reason, row))
            continue
        if problem.id in seen:
            out.rejects.append(Reject.of(problem.id, DUPLICATE, row))
            continue
        seen.add(problem.id)
        out.problems.append(problem)
    return out


def check_model_path(path: str, what: str = "model") -> None:
    """A model path meant to be local (explicit, or its first folder exists here) must exist; a
    bare `owner/name` is left to the Hub."""
    p = Path(path)
    local = path.startswith((".", "/")) or (len(p.parts) > 1 and Path(p.parts[0]).exists())
    if local and not p.exists():
        raise InputError(f"{what} {path} does not exist (run the stage that produces it first)")
