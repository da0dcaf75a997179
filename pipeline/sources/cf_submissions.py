"""Codeforces submissions (open-r1/codeforces-submissions) as known-correct and known-wrong solutions.

The dataset's columns (dataset card, configs `default`, `selected_accepted`, `selected_incorrect`):
`submission_id`, `source` (the code), `contestId`, `problem_index`, `programmingLanguage` (Codeforces'
compiler names: `GNU C++17`, `C++20 (GCC 13-64)`, `PyPy 3-64`, `Python 3`, `Java 8`, ...), `verdict`
(Codeforces API verdicts: OK, WRONG_ANSWER, TIME_LIMIT_EXCEEDED, ...), `testset`, `passedTestCount`,
`timeConsumedMillis`, `memoryConsumedBytes`, `creationTimeSeconds`, `problem_id` (`1623/D`), and in
`selected_accepted` also `og_source`. A submission matches an open-r1/codeforces problem by
`{contest_id}/{index}`.

The submissions file is read once, before the problems, and streamed: only the key columns of every
row are converted, and code only for rows of wanted problems within the per-problem caps. Every row
not attached is counted in `SourceContext.skipped` under a `submission: ...` reason.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.schema import Problem, ReferenceSolution, WrongSolution
from microcoder.pipeline.sources.base import SourceContext, SourceError, iter_json_lines, local_files

KEY_COLUMNS = ("submission_id", "problem_id", "contestId", "problem_index", "programmingLanguage", "verdict",
               "testset")
ACCEPTED = "OK"
# Codeforces verdict -> schema.WRONG_LABELS. CHALLENGED is a submission a hack broke: known wrong too.
WRONG_VERDICTS = {"WRONG_ANSWER": "wrong_answer", "TIME_LIMIT_EXCEEDED": "time_limit_exceeded",
                  "RUNTIME_ERROR": "run_time_error", "MEMORY_LIMIT_EXCEEDED": "memory_limit_exceeded",
                  "CHALLENGED": "incorrect"}
_PYTHON3 = re.compile(r"^\s*(?:python|pypy)\s*3", re.IGNORECASE)
_CPP = re.compile(r"c\+\+|clang\+\+|g\+\+", re.IGNORECASE)


def evaluator_language(name: Any) -> str | None:
    """`python` / `cpp` for a Codeforces compiler name our evaluator runs, else None. Python 2 and
    MS C++ (MSVC-only code does not build with g++) are left out."""
    if not isinstance(name, str):
        return None
    if _PYTHON3.match(name):
        return "python"
    if _CPP.search(name) and not name.strip().upper().startswith("MS "):
        return "cpp"
    return None


def problem_key(contest_id: Any, index: Any) -> str | None:
    """`{contest_id}/{index}`, the join key of problems and submissions; None when either is missing."""
    contest, idx = str(contest_id or "").strip(), str(index or "").strip()
    return f"{contest}/{idx}" if contest and idx and contest != "None" else None


def submission_key(row: dict) -> str | None:
    pid = row.get("problem_id")
    if isinstance(pid, str) and "/" in pid:
        return pid.strip()
    return problem_key(row.get("contestId"), row.get("problem_index"))


@dataclass
class _Attached:
    accepted: list[ReferenceSolution] = field(default_factory=list)
    wrong: list[WrongSolution] = field(default_factory=list)
    verdicts: Counter = field(default_factory=Counter)


@dataclass
class SubmissionIndex:
    """Capped submissions per problem key, ready to attach to the problems as they stream by."""

    origin: str
    ctx: SourceContext
    max_accepted: int
    max_wrong: int
    wanted: set[str] | None = None  # problem keys in the source, when known before reading
    by_problem: dict[str, _Attached] = field(default_factory=lambda: defaultdict(_Attached))
    claimed: set[str] = field(default_factory=set)

    def skip(self, reason: str, n: int = 1) -> None:
        self.ctx.skip(f"submission: {reason}", n)

    def classify(self, row: dict) -> tuple[str, str, str | None] | None:
        """(problem key, language, wrong label or None for accepted) when the row may be attached;
        None after counting why not. Caps and the code are checked in `add`."""
        key, verdict = submission_key(row), row.get("verdict")
        if key is None or not isinstance(verdict, str) or not verdict:
            self.skip("malformed row (no problem id or verdict)")
            return None
        if self.wanted is not None and key not in self.wanted:
            self.skip("problem not in source")
            return None
        if verdict != ACCEPTED and verdict not in WRONG_VERDICTS:
            self.skip(f"verdict {verdict}")
            return None
        if verdict == ACCEPTED and row.get("testset") == "PRETESTS":  # system tests may still fail it
            self.skip("accepted on pretests only")
            return None
        language = evaluator_language(row.get("programmingLanguage"))
        if language is None:
            self.skip("language not run by the evaluator")
            return None
        if self._full(key, verdict):
            self.skip("over the per-problem cap")
            return None
        return key, language, WRONG_VERDICTS.get(verdict)

    def _full(self, key: str, verdict: str) -> bool:
        got = self.by_problem.get(key) or _Attached()
        return len(got.accepted) >= self.max_accepted if verdict == ACCEPTED else len(got.wrong) >= self.max_wrong

    def add(self, row: dict, code: Any, classified: tuple[str, str, str | None]) -> None:
        key, language, label = classified
        if not isinstance(code, str) or not code.strip():
            self.skip("malformed row (no source code)")
            return
        if self._full(key, row["verdict"]):  # an earlier row of the same batch filled the cap
            self.skip("over the per-problem cap")
            return
        got = self.by_problem[key]
        if label is None:
            got.accepted.append(ReferenceSolution(language, code))
        else:
            got.wrong.append(WrongSolution(language, code, label))
        got.verdicts[row["verdict"]] += 1

    def attach(self, problem: Problem, key: str | None) -> Problem:
        """Add the key's submissions to `problem` and record what was attached, and from where."""
        got = self.by_problem.get(key) if key else None
        got = got or _Attached()
        if key:
            self.claimed.add(key)
        problem.reference_solutions.extend(got.accepted)
        problem.wrong_solutions.extend(got.wrong)
        problem.meta["submissions"] = {"from": self.origin, "verdicts": dict(sorted(got.verdicts.items())),
                                       "accepted": len(got.accepted), "wrong": len(got.wrong)}
        return problem

    def count_unclaimed(self) -> None:
        """Submissions kept for problems that never came by (not in the source, or a limited read)."""
        for key, got in self.by_problem.items():
            if key not in self.claimed:
                self.skip("problem not in source", len(got.accepted) + len(got.wrong))


def build_index(path: Path, ctx: SourceContext, *, max_accepted: int, max_wrong: int,
                wanted: set[str] | None = None) -> SubmissionIndex:
    """One streaming pass over the submissions file(s) at `path` (parquet or jsonl)."""
    index = SubmissionIndex(str(path), ctx, max_accepted, max_wrong, wanted)
    for f in local_files(path):
        if f.suffix == ".parquet":
            _index_parquet(f, index)
        elif f.suffix in (".jsonl", ".gz"):
            _index_jsonl(f, index)
        else:
            raise SourceError(f"submissions: {f.name}: read parquet or jsonl files (got {f.suffix})")
    return index


def _index_jsonl(f: Path, index: SubmissionIndex) -> None:
    for _n, row, reject in iter_json_lines(f):
        if reject is not None or not isinstance(row, dict):
            index.skip("malformed row (unreadable line)")
            continue
        if (classified := index.classify(row)) is not None:
            index.add(row, row.get("source"), classified)


def _index_parquet(f: Path, index: SubmissionIndex, batch_rows: int = 4096) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(f)
        total, names = pf.metadata.num_rows, set(pf.schema_arrow.names)
    except (pa.ArrowException, OSError) as e:
        raise SourceError(f"submissions: {f.name}: not a readable parquet file: {e}") from e
    if "source" not in names or "verdict" not in names:
        raise SourceError(f"submissions: {f.name} has no `source`/`verdict` column: not codeforces-submissions' layout")
    columns = [c for c in KEY_COLUMNS if c in names]
    n = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_rows, columns=[*columns, "source"]):
            n += _index_batch(batch, columns, index)
    except (pa.ArrowException, OSError):
        index.skip("unreadable rows", total - n)


def _index_batch(batch, columns: list[str], index: SubmissionIndex) -> int:
    """Classify a batch on its key columns; convert code only for the rows that may be attached."""
    rows = _key_rows(batch, columns)
    chosen = [(i, row, c) for i, row in enumerate(rows) if (c := index.classify(row)) is not None]
    if chosen:
        codes = batch.column("source").take([i for i, _, _ in chosen]).to_pylist()
        for (_, row, classified), code in zip(chosen, codes, strict=True):
            index.add(row, code, classified)
    return len(rows)


def _key_rows(batch, columns: list[str]) -> list[dict]:
    values = [batch.column(c).to_pylist() for c in columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


def wanted_keys(path: Path) -> set[str] | None:
    """The `{contest_id}/{index}` keys of local open-r1/codeforces parquet files, read from those two
    columns only; None when that is not cheap (jsonl, a Hub stream), and every problem's capped
    submissions are kept instead."""
    import pyarrow.parquet as pq

    try:
        files = local_files(path)
    except SourceError:
        return None
    if not files or any(f.suffix != ".parquet" for f in files):
        return None
    keys: set[str] = set()
    try:
        for f in files:
            table = pq.read_table(f, columns=["contest_id", "index"])
            keys.update(k for k in map(problem_key, table.column("contest_id").to_pylist(),
                                       table.column("index").to_pylist()) if k)
    except Exception:  # noqa: BLE001 - a file this cannot read is reported by the problem read itself
        return None
    return keys
