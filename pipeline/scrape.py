"""The scrape stage: run the configured sources into one problem shard, a rejects log and stats.

Every record a source reads ends up either in `problems.parquet` or in `rejects.jsonl` with a
reason; `stats.json` says how many of each (`read == kept + rejected`), in total and per source
(figure `sources`), and `settings.json` what the stage ran with.
Ids are unique across sources: a later duplicate is a reject naming the first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.io import RejectsWriter, write_json, write_problems
from microcoder.pipeline.schema import Problem, validate_problem
from microcoder.pipeline.sources import FORMATS, KINDS, LIVE_KINDS, build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError, jsonable
from microcoder.pipeline.sources.http import HttpClient, HttpConfig
from microcoder.pipeline.sources.judging import accepts_any_answer, has_checker_program
from microcoder.pipeline.sources.normalize import finalize, parse_since
from microcoder.pipeline.stage import Stage, StageContext, StageStats

STAGE = "scrape"
ENTRY_KEYS = ("name", "kind", "enabled", "limit", "since", "min_interval_s")  # the rest: the kind's options


class SourceFailed(SourceError, InputError):
    """A whole source could not be read and `on_source_error` is `fail`: the stage's input is
    unreadable (one line, exit status 2 under the stage contract)."""


def _default_sources() -> list[dict[str, Any]]:
    return [
        {"name": "seed", "kind": "jsonl", "path": "data/seed/problems.jsonl", "enabled": True},
        {"name": "humaneval", "kind": "humaneval", "enabled": True},
    ]


@dataclass
class SourceEntry:
    """One `scrape.sources` entry, typed: the settings every source shares, and `options`, the
    kind's own `Options` dataclass (pipeline/sources/<kind>.py) built from the entry's other keys."""

    kind: str
    name: str
    options: Any
    enabled: bool = True
    limit: int | None = None
    since: dt.date | None = None
    min_interval_s: float | None = None


def source_entry(data: dict[str, Any], where: str) -> SourceEntry:
    """A typed entry from a flat params mapping; any mistake is a ConfigError naming `where`."""
    from microcoder.pipeline.stage import ConfigError, build_config

    if not data.get("kind"):
        raise ConfigError(f"params `{where}` needs a `kind` (one of {sorted(KINDS)}): {data!r}")
    shared = build_config(_SharedKeys, {k: v for k, v in data.items() if k in ENTRY_KEYS}, where)
    name = shared.name or shared.kind
    if shared.limit is not None and shared.limit < 0:
        raise ConfigError(f"params `{where}.limit`: must be a non-negative integer, got {shared.limit!r}")
    try:
        since = parse_since(shared.since)
        options = build_options(shared.kind, {k: v for k, v in data.items() if k not in ENTRY_KEYS})
    except (ValueError, SourceError) as e:
        raise ConfigError(f"params `{where}` ({name}): {e}") from e
    return SourceEntry(kind=shared.kind, name=name, options=options, enabled=shared.enabled, limit=shared.limit,
                       since=since, min_interval_s=shared.min_interval_s)


@dataclass
class _SharedKeys:
    """The keys of a source entry that the stage handles itself, as params (type-checked)."""

    kind: str
    name: str | None = None
    enabled: bool = True
    limit: int | None = None
    since: str | dt.date | None = None
    min_interval_s: float | None = None


@dataclass
class ScrapeConfig:
    sources: list[dict[str, Any]] = field(default_factory=_default_sources, metadata={
        "help": "Source entries: {name, kind, enabled, limit, since, min_interval_s, <the kind's options>} (names "
                "unique); kinds: jsonl humaneval livecodebench kattis leetcodedataset hub codeforces atcoder "
                "leetcode. Each entry is checked (typed) on load, disabled ones too."})
    on_source_error: Literal["fail", "skip"] = field(default="fail", metadata={
        "help": "fail: stop the stage when a whole source cannot be read; skip: record the error in stats and go on."})
    http_cache_dir: str | None = field(default=".cache/microcoder/http", metadata={
        "help": "On-disk HTTP cache for live sources (git-ignored, not a DVC out); null disables it."})
    refresh_http_cache: bool = field(default=False, metadata={"help": "Refetch instead of using cached responses."})
    http_cache_max_mb: int = field(default=HttpConfig.cache_max_mb, metadata={
        "help": "Most MB of the HTTP cache's files: the least recently used are deleted when a source's client closes."})
    user_agent: str = field(default=HttpConfig.user_agent, metadata={"help": "User-Agent for live sources."})
    min_interval_s: float = field(default=1.0, metadata={"help": "Minimum seconds between requests to one host."})
    max_retries: int = field(default=5, metadata={"help": "HTTP retries on 429/5xx/transport errors."})
    backoff_s: float = field(default=2.0, metadata={"help": "First retry delay in seconds (doubles per retry)."})
    max_backoff_s: float = field(default=120.0, metadata={"help": "Longest single retry wait (caps Retry-After)."})
    timeout_s: float = field(default=30.0, metadata={"help": "HTTP request timeout in seconds."})

    def __post_init__(self) -> None:
        from microcoder.pipeline.stage import ConfigError

        # Not a field: settings.json records `sources` as written; `entries` is their typed form.
        self.entries = [source_entry(e, f"scrape.sources.{i}") for i, e in enumerate(self.sources)]
        names = [e.name for e in self.entries]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ConfigError(f"params `scrape.sources`: two source entries are named {doubled[0]!r}: names must be unique")

    def http_config(self, min_interval_s: float | None = None) -> HttpConfig:
        return HttpConfig(user_agent=self.user_agent, min_interval_s=self.min_interval_s if min_interval_s is None
                          else float(min_interval_s), max_retries=self.max_retries, backoff_s=self.backoff_s,
                          max_backoff_s=self.max_backoff_s, timeout_s=self.timeout_s, cache_dir=self.http_cache_dir,
                          refresh=self.refresh_http_cache, cache_max_mb=self.http_cache_max_mb)


@dataclass
class SourceStats:
    kind: str
    read: int = 0
    kept: int = 0
    rejected: int = 0
    rejected_by_reason: Counter = field(default_factory=Counter)
    skipped: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    http: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None  # what was read: local files and sizes, or a dataset's revision
    # {problem type: {"kept": n, "rejected": m}}, the type as `problem_type` says (kept + rejected = read)
    by_type: dict[str, dict[str, int]] = field(default_factory=dict)

    def count_type(self, problem_type: str, outcome: str) -> None:
        counts = self.by_type.setdefault(problem_type, {"kept": 0, "rejected": 0})
        counts[outcome] += 1

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["rejected_by_reason"] = dict(sorted(self.rejected_by_reason.items()))
        d["by_type"] = dict(sorted(self.by_type.items()))
        return d


# The checker kinds that make a problem more than pass-fail with a fixed comparison, as
# meta["problem_type"] words it (pipeline/sources/kattis.py).
JUDGED_BY = {"interactor": "interactive", "program": "custom-judge"}


def problem_type(item: Problem | Reject) -> str:
    """A record's type for the stats: meta["problem_type"] (a list, joined with "+": "scoring",
    "pass-fail+interactive", ...) where the source says it, else what the checker tells
    ("pass-fail", "pass-fail+custom-judge", ...); a reject's record may say it, else "unknown"."""
    if isinstance(item, Problem):
        declared = item.meta.get("problem_type")
        if not declared:
            judged = JUDGED_BY.get(item.checker.kind if item.checker else "")
            return "pass-fail" + (f"+{judged}" if judged else "")
    else:
        declared = item.record.get("problem_type") if isinstance(item.record, dict) else None
        if not declared:
            return "unknown"
    return "+".join(map(str, declared)) if isinstance(declared, list) else str(declared)


class Collector:
    """Accepts problems (unique ids) and rejects, keeping per-source counts."""

    def __init__(self, rejects: RejectsWriter):
        self.problems: list[Problem] = []
        self.rejects = rejects
        self.first_seen: dict[str, str] = {}

    def take(self, item: Problem | Reject, source: str, stats: SourceStats, since: dt.date | None = None) -> None:
        stats.read += 1
        kind = problem_type(item)
        if isinstance(item, Problem):
            item = self._accept(item, source, since)
            if isinstance(item, Problem):
                stats.kept += 1
                stats.count_type(kind, "kept")
                return
        stats.rejected += 1
        stats.count_type(kind, "rejected")
        stats.rejected_by_reason[item.code] += 1
        self.rejects.add(item.id, f"[{source}] {item.reason}", jsonable(item.record))

    def _accept(self, problem: Problem, source: str, since: dt.date | None) -> Problem | Reject:
        try:
            problem = finalize(problem)
        except ValueError as e:
            return Reject("invalid_problem", str(e), problem.to_dict(), problem.id)
        if accepts_any_answer(problem.statement) and not has_checker_program(problem):
            problem.meta["multiple_answers"] = True
        errors = validate_problem(problem)
        if errors:
            return Reject("invalid_problem", "; ".join(errors), problem.to_dict(), problem.id)
        if since is not None and (problem.contest_date or "") < since.isoformat():
            code = "before_since" if problem.contest_date else "no_contest_date"
            return Reject(code, f"contest_date {problem.contest_date} is not on/after since={since}",
                          problem.to_dict(), problem.id)
        if problem.id in self.first_seen:
            return Reject("duplicate_id", f"id {problem.id!r} was already produced by source "
                          f"{self.first_seen[problem.id]!r}", problem.to_dict(), problem.id)
        self.first_seen[problem.id] = source
        self.problems.append(problem)
        return problem


def run_sources(cfg: ScrapeConfig, rejects: RejectsWriter, *, since: str | None = None,
                limit: int | None = None, progress: bool = True) -> tuple[list[Problem], StageStats]:
    """Run every enabled source (`since`/`limit` override every entry's); returns the accepted
    problems and the stage's stats (figure `sources`: the same counts per source)."""
    from microcoder.pipeline.stage import ConfigError

    if limit is not None and limit < 0:
        raise ConfigError(f"--limit must be a non-negative integer, got {limit}")
    try:
        since_override = parse_since(since)
    except ValueError as e:
        raise ConfigError(f"--since: {e}") from e
    collector = Collector(rejects)
    per_source: dict[str, SourceStats] = {}
    for entry in (e for e in cfg.entries if e.enabled):
        entry_limit = limit if limit is not None else entry.limit
        entry_since = since_override or entry.since
        stats = per_source[entry.name] = SourceStats(kind=entry.kind)
        client = None

        def make_client(interval=entry.min_interval_s):
            nonlocal client
            client = HttpClient(cfg.http_config(interval))
            return client

        ctx = SourceContext(name=entry.name, since=entry_since,
                            http_factory=make_client if entry.kind in LIVE_KINDS else None)
        # disable=None: no bar where stderr is not a terminal (DVC logs, pipes, tests)
        bar = tqdm(desc=f"scrape {entry.name}", unit="rec", total=entry_limit, disable=None if progress else True)
        try:
            if entry_limit != 0:
                for item in read_source(entry.kind, entry.options, ctx):
                    collector.take(item, entry.name, stats, entry_since)
                    bar.update()
                    if entry_limit is not None and stats.read >= entry_limit:
                        break
        except SourceError as e:
            stats.error = str(e)
            if cfg.on_source_error == "fail":
                raise SourceFailed(f"source {entry.name!r} ({entry.kind}): {e}") from e
        finally:
            bar.close()
            if client is not None:
                client.close()  # trims the HTTP cache: its figures are final after it
                stats.http = {**client.stats, "cache": client.cache_figures()}
        stats.skipped = dict(ctx.skipped)
        http_origin = {"http": client.origin()} if client is not None else {}
        stats.origin = {**local_origin(entry.options), **ctx.origin, **http_origin} or None
        if stats.kept + stats.rejected != stats.read:  # a bug, never bad input
            raise RuntimeError(f"scrape accounting is off for source {entry.name!r}: {stats.to_dict()}")
    total = StageStats(unit="problems", read=sum(s.read for s in per_source.values()),
                       kept=sum(s.kept for s in per_source.values()),
                       figures={"sources": {k: v.to_dict() for k, v in per_source.items()}})
    for s in per_source.values():
        for code, n in s.rejected_by_reason.items():
            total.reject(code, n)
    return collector.problems, total


def local_origin(options: Any) -> dict[str, Any]:
    """A local source's files and their sizes (what this run read; DVC hashes the same paths)."""
    path = getattr(options, "path", None)
    if not isinstance(path, (str, Path)) or not str(path) or not Path(path).exists():
        return {}
    root = Path(path)
    files = sorted(f for f in (root.rglob("*") if root.is_dir() else [root]) if f.is_file())
    return {"path": str(path), "files": len(files), "bytes": sum(f.stat().st_size for f in files)}


def local_paths(cfg: ScrapeConfig) -> dict[str, str]:
    """{source name: path} of every enabled source that reads local files (an entry with `path`)."""
    return {e.name: str(e.options.path) for e in cfg.entries
            if e.enabled and isinstance(getattr(e.options, "path", None), (str, Path)) and str(e.options.path)}


def check_dvc_tracks(cfg: ScrapeConfig, dvc_yaml: str | Path, stage: str) -> None:
    """Under `dvc repro`: every local source path must be a dep of this stage, or a file added to a
    source folder never reruns scrape (DVC hashes deps, not params' paths). A ConfigError names
    every path that is not, and the command that adds them (`microcoder deps --write`)."""
    import yaml

    from microcoder.pipeline.stage import ConfigError

    dvc_yaml = Path(dvc_yaml)
    spec = ((yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages") or {}).get(stage) or {}
    root = dvc_yaml.parent.resolve()
    deps = [(root / str(d)).resolve() for d in spec.get("deps") or []]

    def tracked(path: str) -> bool:
        where = (root / path).resolve()
        return any(where == d or d in where.parents for d in deps)

    untracked = [f"{name} ({path})" for name, path in local_paths(cfg).items() if not tracked(path)]
    if untracked:
        raise ConfigError(f"enabled sources whose path is not a dep of the `{stage}` stage in {dvc_yaml}, so new files "
                          f"there would never rerun it: {', '.join(untracked)}; run "
                          "`microcoder deps --write`, then `dvc repro`")


class Scrape(Stage):
    """The DVC stage: every enabled source into `out_dir/problems.parquet`, `rejects.jsonl`,
    `stats.json` and `settings.json`; no problems input. Inputs `since` and `limit` override every
    source entry's."""

    name = STAGE
    config = ScrapeConfig

    def process(self, problems: None, ctx: StageContext) -> list[Problem]:
        if os.environ.get("DVC_STAGE") and os.environ.get("DVC_ROOT"):  # run by `dvc repro`: `[path/dvc.yaml:]stage`
            file, _, stage = os.environ["DVC_STAGE"].rpartition(":")
            check_dvc_tracks(ctx.cfg, Path(os.environ["DVC_ROOT"]) / (file or "dvc.yaml"), stage)
        kept, ctx.stats = run_sources(ctx.cfg, ctx.rejects, since=ctx.inputs.get("since"),
                                      limit=ctx.inputs.get("limit"), progress=ctx.progress)
        return kept


def convert(fmt: str, path: str | Path | None, out: str | Path, *, name: str | None = None,
            since: str | None = None, limit: int | None = None, options: dict[str, Any] | None = None,
            progress: bool = True) -> dict[str, Any]:
    """Ad hoc conversion of one local dataset: `out` (.parquet or .jsonl), `<stem>.rejects.jsonl`
    and `<stem>.stats.json` next to it. No params.yaml involved."""
    if fmt not in FORMATS:
        raise SourceError(f"unknown format {fmt!r}; valid: {sorted(FORMATS)}")
    kind, extra = FORMATS[fmt]
    entry: dict[str, Any] = {"name": name or fmt, "kind": kind, **extra, **(options or {})}
    if path is not None:
        entry["path"] = str(path)
    out = Path(out)
    cfg = ScrapeConfig(sources=[entry])
    with RejectsWriter(out.with_name(f"{out.stem}.rejects.jsonl"), STAGE) as rejects:
        problems, stats = run_sources(cfg, rejects, since=since, limit=limit, progress=progress)
        write_problems(out, problems)
    data = stats.as_dict()
    write_json(out.with_name(f"{out.stem}.stats.json"), data)
    return data
