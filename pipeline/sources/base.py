"""What every source shares: the reject record, the run context, robust line readers."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import Reject
from microcoder.pipeline.io import read_jsonl  # noqa: F401 - the one reject class; sources import it from here
from microcoder.pipeline.schema import Problem


class SourceError(RuntimeError):
    """A whole source cannot be read (missing file, API down, bad options): not a record's fault."""


Item = Problem | Reject


@dataclass
class SourceContext:
    """Per-source run state handed to a source's `read`."""

    name: str  # the configured source name: the id prefix (`<name>/<native id>`)
    since: dt.date | None = None
    http_factory: Callable[[], Any] | None = None
    skipped: Counter = field(default_factory=Counter)  # listing entries filtered before being read
    origin: dict[str, Any] = field(default_factory=dict)  # what was read: remote dataset and revision
    _http: Any = None

    @property
    def http(self):
        """The shared polite HTTP client (created on first use)."""
        if self._http is None:
            if self.http_factory is None:
                raise SourceError(f"source {self.name!r} needs HTTP but no client is configured")
            self._http = self.http_factory()
        return self._http

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] += n


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any] | None, Reject | None]]:
    """(line number, record, reject) per non-blank line of a jsonl or jsonl.gz file (`io.read_jsonl`):
    a bad line or a truncated / corrupt gzip stream becomes a Reject instead of an exception."""
    path = Path(path)
    try:
        for n, rec, err in read_jsonl(path):
            if err is None:
                yield n, rec, None
            elif err.startswith("stream ends"):
                yield n, None, Reject("unreadable", f"{path.name}: {err}", {"path": str(path), "after_line": n - 1})
            else:
                yield n, None, Reject("bad_json", f"{path.name} {err}", {"line": n})
    except OSError as e:
        yield 1, None, Reject("unreadable", f"{path.name}: {e}", {"path": str(path), "after_line": 0})


def expand_paths(path: str | Path, patterns: tuple[str, ...] = ("*.jsonl", "*.jsonl.gz", "*.json")) -> list[Path]:
    """A file, or the matching files of a directory (sorted); SourceError when nothing is there."""
    path = Path(path)
    if path.is_dir():
        files = sorted({f for pat in patterns for f in path.glob(pat)})
        if not files:
            raise SourceError(f"{path}: no files matching {list(patterns)}")
        return files
    if not path.exists():
        raise SourceError(f"{path}: no such file")
    return [path]


def need(record: dict[str, Any], key: str, types: type | tuple[type, ...] = str, *, allow_empty: bool = False):
    """A required field of a raw record, type-checked; raises FieldError with a clear message."""
    if key not in record or record[key] is None:
        raise FieldError(f"{key}: missing")
    value = record[key]
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
        raise FieldError(f"{key}: expected {names}, got {type(value).__name__}")
    if not allow_empty and isinstance(value, (str, list, dict)) and not value:
        raise FieldError(f"{key}: empty")
    return value


class FieldError(ValueError):
    """A raw record lacks a field or has it in the wrong type (becomes a `bad_record` reject)."""


def unstated_limits(time: bool = True, memory: bool = True) -> dict[str, bool]:
    """The meta keys saying a source does not state its time / memory limit (see `microcoder.pipeline.schema`):
    the problem keeps the default and validate derives the time limit."""
    return {**({"time_limit_stated": False} if time else {}), **({"memory_limit_stated": False} if memory else {})}


RECORD_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError)


def guarded(convert: Callable[..., Item], record: Any, *args: Any) -> Item:
    """`convert(record, *args)`, with any unexpected shape error turned into a `bad_record` reject:
    one malformed record must never end the whole source."""
    try:
        return convert(record, *args)
    except RECORD_ERRORS as e:
        return Reject("bad_record", f"{type(e).__name__}: {e}", jsonable(record))


def jsonable(record: Any, limit: int = 200_000) -> Any:
    """A raw record made safe for the rejects file: bytes decoded, huge strings cut."""
    if isinstance(record, dict):
        return {str(k): jsonable(v, limit) for k, v in record.items()}
    if isinstance(record, (list, tuple)):
        return [jsonable(v, limit) for v in record]
    if isinstance(record, bytes):
        record = record.decode("utf-8", errors="replace")
    if isinstance(record, str) and len(record) > limit:
        return record[:limit] + f"... [{len(record) - limit} more characters]"
    if isinstance(record, (str, int, float, bool)) or record is None:
        return record
    return str(record)


# datasets builder per local data file suffix (hub sources, submissions files)
BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".gz": "json", ".arrow": "arrow"}


def local_files(path: Path) -> list[Path]:
    """The data files of a local file or folder (suffixes of BUILDERS); a SourceError when none."""
    if path.is_dir():
        files = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in BUILDERS)
    elif path.is_file():
        files = [path]
    else:
        raise SourceError(f"{path}: no such file or folder")
    if not files:
        raise SourceError(f"{path}: no {sorted(BUILDERS)} files")
    unknown = [f.name for f in files if f.suffix not in BUILDERS]
    if unknown:
        raise SourceError(f"{path}: unsupported file types {unknown}")
    return files
