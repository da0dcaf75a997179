"""AtCoder: the contest archive, each contest's task list, and each task page (English statement).

The archive is newest-first and paged; paging stops at the first contest older than `since`.
`contests` names contests explicitly instead (the archive is then not read).

Interactive tasks are kept with `meta.interactive` and the `interactive` tag (the evaluator refuses
to judge them) when the page has sample pairs; AtCoder's interactive tasks usually show none, and
a task without tests cannot be a Problem, so those are rejected as `interactive`. A statement that
accepts the answer in any letter case gets a case-insensitive tokens checker.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bs4 import BeautifulSoup

from microcoder.pipeline.schema import Problem, TestCase
from microcoder.pipeline.sources.base import (
    RECORD_ERRORS,
    Item,
    Reject,
    SourceContext,
    SourceError,
    unstated_limits,
)
from microcoder.pipeline.sources.http import HttpError
from microcoder.pipeline.sources.judging import says_interactive, stdio_checker
from microcoder.pipeline.sources.normalize import html_to_markdown, iso_date, stable_id

_TIME = re.compile(r"Time Limit:\s*([\d.]+)\s*sec")
_MEMORY = re.compile(r"Memory Limit:\s*(\d+)\s*(MB|MiB|KB|KiB)")
_SCORE = re.compile(r"Score\s*:?\s*(\d+)\s*points?")
_SAMPLE = re.compile(r"Sample (Input|Output)\s*(\d+)")
INTERACTIVE_MODES = ("mark", "reject")


@dataclass
class Options:
    base_url: str = field(default="https://atcoder.jp", metadata={"help": "AtCoder base URL."})
    contest_prefixes: list[str] = field(default_factory=lambda: ["abc", "arc", "agc"], metadata={
        "help": "Only contests whose id starts with one of these (empty: all)."})
    contests: list[str] = field(default_factory=list, metadata={"help": "Explicit contest ids (skip the archive)."})
    max_archive_pages: int = field(default=50, metadata={"help": "Stop paging the archive after this many pages."})
    listing_ttl_s: float = field(default=86400.0, metadata={"help": "How long cached archive pages stay fresh."})
    interactive: str = field(default="mark", metadata={
        "help": "mark: keep interactive tasks flagged (meta.interactive, tag) | reject: reject them here."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    if opts.interactive not in INTERACTIVE_MODES:
        raise SourceError(f"atcoder: interactive must be one of {list(INTERACTIVE_MODES)}, got {opts.interactive!r}")
    base = opts.base_url.rstrip("/")
    contests = [(c, None) for c in opts.contests] if opts.contests else _archive(opts, ctx)
    for contest_id, date in contests:
        try:
            html = ctx.http.get_text(f"{base}/contests/{contest_id}/tasks", {"lang": "en"}, ttl_s=opts.listing_ttl_s)
        except HttpError as e:
            yield Reject("http_error", f"task list: {e}", {"contest": contest_id}, None)
            continue
        for task_path in _task_paths(html, contest_id):
            yield fetch_task(base + task_path, contest_id, date, ctx, opts.interactive)


def _archive(opts: Options, ctx: SourceContext) -> Iterator[tuple[str, str | None]]:
    base = opts.base_url.rstrip("/")
    for page in range(1, opts.max_archive_pages + 1):
        try:
            html = ctx.http.get_text(f"{base}/contests/archive", {"lang": "en", "page": page}, ttl_s=opts.listing_ttl_s)
        except HttpError as e:
            raise SourceError(f"AtCoder archive page {page}: {e}") from e
        rows = parse_archive(html)
        if not rows:
            return
        for contest_id, date in rows:
            if opts.contest_prefixes and not contest_id.startswith(tuple(opts.contest_prefixes)):
                ctx.skip("contest prefix not selected")
                continue
            if ctx.since and (date is None or date < ctx.since.isoformat()):
                return  # newest first: everything after this is older
            yield contest_id, date


def parse_archive(html: str) -> list[tuple[str, str | None]]:
    """(contest id, UTC start date) for each row of an archive page."""
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for row in soup.select("table tbody tr"):
        link = row.select_one('a[href^="/contests/"]')
        if link is None:
            continue
        contest_id = link["href"].rstrip("/").split("/")[-1]
        when = row.select_one("time")
        date = None
        if when is not None:
            try:
                date = iso_date(dt.datetime.strptime(when.get_text(strip=True), "%Y-%m-%d %H:%M:%S%z"))
            except ValueError:
                date = None
        out.append((contest_id, date))
    return out


def _task_paths(html: str, contest_id: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    paths: list[str] = []
    for link in soup.select(f'table tbody tr td a[href^="/contests/{contest_id}/tasks/"]'):
        if link["href"] not in paths:
            paths.append(link["href"])
    return paths


def fetch_task(url: str, contest_id: str, date: str | None, ctx: SourceContext, interactive_mode: str = "mark") -> Item:
    task_id = url.rstrip("/").split("/")[-1]
    pid = stable_id(ctx.name, task_id)
    record = {"url": url, "contest": contest_id, "contest_date": date}
    try:
        html = ctx.http.get_text(url, {"lang": "en"})
    except HttpError as e:
        return Reject("http_error", str(e), record, pid)
    try:
        page = parse_task_page(html)
    except RECORD_ERRORS as e:
        return Reject("bad_page", str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}", record, pid)
    interactive = says_interactive(page["statement"])
    if interactive and (interactive_mode == "reject" or not page["tests"]):
        why = "" if interactive_mode == "reject" else ", and the page has no sample pairs to keep"
        return Reject("interactive", f"interactive task (needs an interactor){why}", record, pid)
    if not page["tests"]:
        return Reject("no_tests", "no sample input/output pairs", record, pid)
    meta = {"contest_id": contest_id, "points": page["points"]}
    if interactive:
        meta["interactive"] = True
    return Problem(
        id=pid, source=ctx.name, source_id=task_id, url=url, title=page["title"], statement=page["statement"],
        platform="atcoder", style="stdio", tests=page["tests"], time_limit_s=page["time_limit_s"],
        checker=None if interactive else stdio_checker(page["statement"]),
        memory_limit_mb=page["memory_limit_mb"], contest_date=date,
        tags=["interactive"] if interactive else [], meta={**meta, **page.get("unstated", {})},
    )


def parse_task_page(html: str) -> dict[str, Any]:
    """Title, limits, English statement (markdown) and sample pairs from an AtCoder task page."""
    soup = BeautifulSoup(html, "html.parser")
    root = soup.select_one("#task-statement")
    if root is None:
        raise ValueError("no #task-statement on the page")
    english = root.select_one("span.lang-en") or root
    title_node = soup.select_one("span.h2")
    if title_node is not None:
        for a in title_node.find_all("a"):
            a.extract()
    title = re.sub(r"^[A-Z][A-Za-z0-9]?\s*-\s*", "", title_node.get_text(" ", strip=True)) if title_node else ""
    text = soup.get_text(" ")
    seconds, memory = _TIME.search(text), _MEMORY.search(text)
    mem_mb = 1024
    if memory:
        mem_mb = int(memory.group(1)) // (1024 if memory.group(2).startswith("K") else 1)
    score = _SCORE.search(english.get_text(" "))
    samples: dict[str, dict[str, str]] = {}
    for h3 in english.find_all("h3"):
        m = _SAMPLE.match(h3.get_text(strip=True))
        pre = h3.find_next("pre")
        if m and pre is not None:
            body = pre.get_text()
            samples.setdefault(m.group(2), {})[m.group(1)] = body if body.endswith("\n") else body + "\n"
    tests = [TestCase(s["Input"], s["Output"], "public") for _, s in sorted(samples.items(), key=lambda kv: int(kv[0]))
             if "Input" in s and "Output" in s]
    statement = html_to_markdown(str(english))
    if len(statement) < 20:
        raise ValueError("statement text is empty or too short")
    return {
        "title": title or "untitled",
        "statement": statement,
        "tests": tests,
        "time_limit_s": float(seconds.group(1)) if seconds else 2.0,
        "memory_limit_mb": max(16, min(mem_mb, 65536)),
        "points": int(score.group(1)) if score else None,
        "unstated": unstated_limits(seconds is None, memory is None),
    }
