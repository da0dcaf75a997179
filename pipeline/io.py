"""Problem shards in and out: parquet (zstd) and our jsonl, atomic writes, per-stage rejects."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microcoder.pipeline.schema import Problem

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow is imported by the functions that read or write shards (see microcoder.pipeline.schema: a process
# that only reads jsonl, such as `microcoder evaluate`, does not pay for it).

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temp path next to `path`; on success rename it over `path` (atomic on POSIX).

    A target that exists and is not a regular file is never replaced: a character device or a
    FIFO (/dev/null, /dev/stdout, a named pipe) is written through, anything else (a directory,
    a socket, a block device) is refused with a clear error."""
    path = Path(path)
    kind = _special_kind(path)
    if kind is not None:
        yield from _write_through(path, kind, suffix)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs get the usual mode
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _special_kind(path: Path) -> str | None:
    """None for a missing path or a regular file; else what the existing target is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "stream"
    what = "a directory" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode) else "a block device" \
        if stat.S_ISBLK(mode) else "not a regular file"
    raise FileExistsError(f"{path} exists and is {what}: refusing to replace it (name a file path)")


def _write_through(path: Path, kind: str, suffix: str) -> Iterator[Path]:
    # The temp lives in the system temp folder, not beside the target (/dev is no place for files).
    fd, tmp = tempfile.mkstemp(prefix=".microcoder-", suffix=suffix or ".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb") as src, open(path, "wb") as dst:  # a device or FIFO: no truncate, no rename
            shutil.copyfileobj(src, dst)
    finally:
        tmp_path.unlink(missing_ok=True)


def content_hash(*parts: str) -> str:
    """A cache key for text parts (NUL-separated, so ("ab", "c") and ("a", "bc") differ)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n")


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict[str, Any]]) -> int:
    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            n += 1
    return n


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """The one jsonl reader: (line_number, record, error) per non-blank line of a .jsonl or
    .jsonl.gz file. A line that is not a JSON object gives error text; so does a stream that breaks
    (a truncated or corrupt gzip, an unreadable file), as its last item."""
    import gzip
    import zlib

    path = Path(path)
    n = 0
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError) as e:
                    yield n, None, f"line {n}: invalid JSON ({e}): {line.strip()[:300]!r}"
                    continue
                if not isinstance(rec, dict):
                    yield n, None, f"line {n}: expected a JSON object, got {type(rec).__name__}"
                    continue
                yield n, rec, None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        yield n + 1, None, f"stream ends or breaks after line {n} ({e})"


# --- problem shards ---------------------------------------------------------------------------
def problems_to_table(problems: Iterable[Problem], extra_schema: pa.Schema | None = None) -> pa.Table:
    """Arrow table with the core schema first, then any extra columns the problems carry."""
    import pyarrow as pa

    from microcoder.pipeline import checked_tests
    from microcoder.pipeline.schema import EXTRA_COLUMN_TYPES, PROBLEM_SCHEMA

    rows = [p.to_row() for p in problems]
    extra_names: list[str] = []
    for r in rows:
        for k in r:
            if k not in PROBLEM_SCHEMA.names and k not in extra_names:
                extra_names.append(k)
    fields = list(PROBLEM_SCHEMA)
    for name in extra_names:
        if extra_schema is not None and name in extra_schema.names:
            fields.append(extra_schema.field(name))
        elif name in EXTRA_COLUMN_TYPES:
            fields.append(pa.field(name, EXTRA_COLUMN_TYPES[name]))
        else:
            values = [r.get(name) for r in rows]
            fields.append(pa.field(name, pa.array(values).type))
    schema = pa.schema(fields, metadata=checked_tests.metadata_of(rows) or None)
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(columns, schema=schema)


def write_problems(path: str | os.PathLike, problems: Iterable[Problem], extra_schema: pa.Schema | None = None) -> int:
    """Write problems as one parquet file (zstd), atomically. `.jsonl` paths write our jsonl."""
    import pyarrow.parquet as pq

    path = Path(path)
    problems = list(problems)
    if path.suffix == ".jsonl":
        return write_jsonl(path, (p.to_dict() for p in problems))
    table = problems_to_table(problems, extra_schema)
    with atomic_path(path, ".parquet") as tmp:
        # no dictionaries: the tests' strings are nearly all distinct and up to MBs each, so Arrow
        # built each page's dictionary only to drop it (1.2 of 2.7 s CPU on 640 MB of tests); zstd
        # compresses the few repeated short columns as well (the file 0.05% larger)
        pq.write_table(table, tmp, compression="zstd", use_dictionary=False)
    return len(problems)


def shard_files(folder: Path) -> list[Path]:
    """Parquet shards under `folder`, skipping hidden paths (temp files of an interrupted write)."""
    return sorted(f for f in folder.rglob("*.parquet")
                  if not any(part.startswith(".") for part in f.relative_to(folder).parts))


def read_table(path: str | os.PathLike) -> pa.Table:
    """A parquet file, or a directory of parquet shards read as one table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from microcoder.pipeline.schema import PROBLEM_SCHEMA

    path = Path(path)
    if path.is_dir():
        files = shard_files(path)
        if not files:
            return PROBLEM_SCHEMA.empty_table()
        return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")
    return pq.read_table(path)


def read_problems(path: str | os.PathLike) -> list[Problem]:
    """Problems from parquet (file or shard dir) or our jsonl. jsonl lines must be valid records."""
    path = Path(path)
    if path.suffix == ".jsonl":
        out = []
        for _line, rec, err in read_jsonl(path):
            if err:
                raise ValueError(f"{path}:{err}")
            out.append(Problem.from_dict(rec))
        return out
    return [Problem.from_dict(r) for r in read_table(path).to_pylist()]


def iter_problem_batches(path: str | os.PathLike, batch_size: int = 256) -> Iterator[list[Problem]]:
    """Stream problems from parquet in batches (bounded memory for large shards)."""
    import pyarrow.parquet as pq

    path = Path(path)
    files = shard_files(path) if path.is_dir() else [path]
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=batch_size):
            yield [Problem.from_dict(r) for r in batch.to_pylist()]


# --- rejects ----------------------------------------------------------------------------------
def reject_row(id: str | None, stage: str, reason: str, record: Any) -> dict[str, Any]:
    """One rejects-file line: the id (if known), the stage, the reason, and the whole record."""
    if isinstance(record, Problem):
        record = record.to_dict()
    return {"id": id, "stage": stage, "reason": reason, "record": record}


class RejectsWriter:
    """Collects a stage's rejects and writes them atomically as jsonl on close."""

    def __init__(self, path: str | os.PathLike, stage: str):
        self.path = Path(path)
        self.stage = stage
        self.rows: list[dict[str, Any]] = []

    def add(self, id: str | None, reason: str, record: Any, **extra: Any) -> None:
        """One reject; `extra` keys (evidence, ...) ride along in its row."""
        self.rows.append(reject_row(id, self.stage, reason, record) | extra)

    def __len__(self) -> int:
        return len(self.rows)

    def close(self) -> None:
        write_jsonl(self.path, self.rows)

    def __enter__(self) -> RejectsWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
