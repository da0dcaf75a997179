"""The scrape stage: run the configured sources into one problem shard, a rejects log and stats.

Every record a source reads ends up either in `problems.parquet` or in `rejects.jsonl` with a
reason, and `stats.json` says how many of each per source (`accepted + rejected == read`).
Ids are unique across sources: a later duplicate is a reject naming the first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pipeline.config import settings_record
from pipeline.io import RejectsWriter, write_json, write_problems
from pipeline.schema import Problem, validate_problem
from pipeline.sources import COMMON_KEYS, FORMATS, LIVE_KINDS, build_options, read_source
from pipeline.sources.base import Reject, SourceContext, SourceError, jsonable
from pipeline.sources.http import HttpClient, HttpConfig
from pipeline.sources.judging import accepts_any_answer, has_checker_program
from pipeline.sources.normalize import finalize, parse_since

STAGE = "scrape"


def _default_sources() -> list[dict[str, Any]]:
    return [
        {"name": "seed", "kind": "jsonl", "path": "data/seed/problems.jsonl", "enabled": True},
        {"name": "humaneval", "kind": "humaneval", "enabled": True},
    ]


@dataclass
class ScrapeConfig:
    sources: list[dict[str, Any]] = field(default_factory=_default_sources, metadata={
        "help": "Source entries: {name, kind, enabled, limit, since, min_interval_s, <kind options>}; "
                "kinds: jsonl humaneval livecodebench kattis leetcodedataset hub codeforces atcoder leetcode."})
    on_source_error: str = field(default="fail", metadata={
        "help": "fail: stop the stage when a whole source cannot be read; skip: record the error in stats and go on."})
    progress: bool = field(default=True, metadata={"help": "Show a progress bar per source."})
    http_cache_dir: str | None = field(default=".cache/microcoder/http", metadata={
        "help": "On-disk HTTP cache for live sources (git-ignored, not a DVC out); null disables it."})
    refresh_http_cache: bool = field(default=False, metadata={"help": "Refetch instead of using cached responses."})
    user_agent: str = field(default=HttpConfig.user_agent, metadata={"help": "User-Agent for live sources."})
    min_interval_s: float = field(default=1.0, metadata={"help": "Minimum seconds between requests to one host."})
    max_retries: int = field(default=5, metadata={"help": "HTTP retries on 429/5xx/transport errors."})
    backoff_s: float = field(default=2.0, metadata={"help": "First retry delay in seconds (doubles per retry)."})
    max_backoff_s: float = field(default=120.0, metadata={"help": "Longest single retry wait (caps Retry-After)."})
    timeout_s: float = field(default=30.0, metadata={"help": "HTTP request timeout in seconds."})

    def http_config(self, min_interval_s: float | None = None) -> HttpConfig:
        return HttpConfig(user_agent=self.user_agent, min_interval_s=self.min_interval_s if min_interval_s is None
                          else float(min_interval_s), max_retries=self.max_retries, backoff_s=self.backoff_s,
                          max_backoff_s=self.max_backoff_s, timeout_s=self.timeout_s, cache_dir=self.http_cache_dir,
                          refresh=self.refresh_http_cache)


@dataclass
class SourceStats:
    kind: str
    read: int = 0
    accepted: int = 0
    rejected: int = 0
    rejected_by_reason: Counter = field(default_factory=Counter)
    skipped: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    http: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["rejected_by_reason"] = dict(sorted(self.rejected_by_reason.items()))
        return d


class Collector:
    """Accepts problems (unique ids) and rejects, keeping per-source counts."""

    def __init__(self, rejects: RejectsWriter):
        self.problems: list[Problem] = []
        self.rejects = rejects
        self.first_seen: dict[str, str] = {}

    def take(self, item: Problem | Reject, source: str, stats: SourceStats, since: dt.date | None = None) -> None:
        stats.read += 1
        if isinstance(item, Problem):
            item = self._accept(item, source, since)
            if isinstance(item, Problem):
                stats.accepted += 1
                return
        stats.rejected += 1
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


def _entry_settings(entry: dict[str, Any], since_override: str | None, limit_override: int | None):
    if not isinstance(entry, dict) or not entry.get("kind"):
        raise SourceError(f"source entry needs a `kind`: {entry!r}")
    kind = str(entry["kind"])
    name = str(entry.get("name") or kind)
    limit = limit_override if limit_override is not None else entry.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise SourceError(f"source {name!r}: limit must be a non-negative integer, got {limit!r}")
    try:
        since = parse_since(since_override or entry.get("since"))
    except ValueError as e:
        raise SourceError(f"source {name!r}: since: {e}") from e
    options = {k: v for k, v in entry.items() if k not in COMMON_KEYS and k != "min_interval_s"}
    return kind, name, limit, since, build_options(kind, options)


def run_sources(cfg: ScrapeConfig, rejects: RejectsWriter, *, since: str | None = None,
                limit: int | None = None) -> tuple[list[Problem], dict[str, Any]]:
    """Run every enabled source; returns the accepted problems and the stats document."""
    if cfg.on_source_error not in ("fail", "skip"):
        raise ValueError(f"on_source_error must be 'fail' or 'skip', got {cfg.on_source_error!r}")
    if not isinstance(cfg.sources, list):
        raise SourceError(f"scrape.sources must be a list of entries, got {type(cfg.sources).__name__}")
    collector = Collector(rejects)
    per_source: dict[str, SourceStats] = {}
    settings, names = [], set()
    for entry in cfg.sources:  # every entry is checked, so a typo in a disabled one shows up too
        kind, name, entry_limit, entry_since, options = _entry_settings(entry, since, limit)
        if name in names:
            raise SourceError(f"two source entries are named {name!r}: names must be unique")
        names.add(name)
        if entry.get("enabled", True):
            settings.append((entry, kind, name, entry_limit, entry_since, options))
    for entry, kind, name, entry_limit, entry_since, options in settings:
        stats = per_source[name] = SourceStats(kind=kind)
        client = None

        def make_client(interval=entry.get("min_interval_s")):
            nonlocal client
            client = HttpClient(cfg.http_config(interval))
            return client

        ctx = SourceContext(name=name, since=entry_since, http_factory=make_client if kind in LIVE_KINDS else None)
        bar = tqdm(desc=f"scrape {name}", unit="rec", total=entry_limit, disable=not cfg.progress)
        try:
            if entry_limit != 0:
                for item in read_source(kind, options, ctx):
                    collector.take(item, name, stats, entry_since)
                    bar.update()
                    if entry_limit is not None and stats.read >= entry_limit:
                        break
        except SourceError as e:
            stats.error = str(e)
            if cfg.on_source_error == "fail":
                raise SourceError(f"source {name!r} ({kind}): {e}") from e
        finally:
            bar.close()
            if client is not None:
                stats.http = dict(client.stats)
                client.close()
        stats.skipped = dict(ctx.skipped)
        if stats.accepted + stats.rejected != stats.read:  # a bug, never bad input
            raise RuntimeError(f"scrape accounting is off for source {name!r}: {stats.to_dict()}")
    totals = {"read": sum(s.read for s in per_source.values()),
              "accepted": sum(s.accepted for s in per_source.values()),
              "rejected": sum(s.rejected for s in per_source.values())}
    return collector.problems, {"stage": STAGE, "sources": {k: v.to_dict() for k, v in per_source.items()},
                                "total": totals}


def write_outputs(problems: list[Problem], rejects: RejectsWriter, stats: dict[str, Any],
                  problems_path: Path, stats_path: Path) -> None:
    write_problems(problems_path, problems)
    rejects.close()
    write_json(stats_path, stats)


def run_scrape(cfg: ScrapeConfig, out_dir: str | Path = "data/raw", *, since: str | None = None,
               limit: int | None = None) -> dict[str, Any]:
    """The DVC stage: `out_dir/problems.parquet`, `out_dir/rejects.jsonl`, `out_dir/stats.json`."""
    out_dir = Path(out_dir)
    rejects = RejectsWriter(out_dir / "rejects.jsonl", STAGE)
    problems, stats = run_sources(cfg, rejects, since=since, limit=limit)
    stats["config"] = settings_record(cfg)  # the effective settings (`--set` included), for the dataset card
    write_outputs(problems, rejects, stats, out_dir / "problems.parquet", out_dir / "stats.json")
    return stats


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
    cfg = ScrapeConfig(sources=[entry], progress=progress)
    rejects = RejectsWriter(out.with_name(f"{out.stem}.rejects.jsonl"), STAGE)
    problems, stats = run_sources(cfg, rejects, since=since, limit=limit)
    write_outputs(problems, rejects, stats, out, out.with_name(f"{out.stem}.stats.json"))
    return stats
