"""Codeforces: the official API (`problemset.problems`, `contest.list`) plus each problem's page.

Listing order is the API's (newest contests first), so `limit` takes the freshest problems. Problems
whose contest started before `since` are skipped at the listing (counted in stats as skipped).

Interactive problems (tag `interactive`, an Interaction section, or "This is an interactive
problem") are kept with `meta.interactive` and the `interactive` tag, which the evaluator refuses
to judge; their samples are transcripts, not stdio tests (`interactive: reject` drops them here).
A statement that accepts the answer in any letter case gets a case-insensitive tokens checker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bs4 import BeautifulSoup, Tag

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

_SECONDS = re.compile(r"([\d.]+)\s*seconds?")
_MEGABYTES = re.compile(r"(\d+)\s*megabytes?")
INTERACTIVE_MODES = ("mark", "reject")


@dataclass
class Options:
    api_url: str = field(default="https://codeforces.com/api", metadata={"help": "Codeforces API base URL."})
    base_url: str = field(default="https://codeforces.com", metadata={"help": "Site base URL for problem pages."})
    listing_ttl_s: float = field(default=86400.0, metadata={"help": "How long cached API listings stay fresh."})
    min_rating: int | None = field(default=None, metadata={"help": "Skip rated problems below this rating."})
    interactive: str = field(default="mark", metadata={
        "help": "mark: keep interactive problems flagged (meta.interactive, tag) | reject: reject them here."})


def _api(ctx: SourceContext, opts: Options, method: str) -> Any:
    try:
        data = ctx.http.get_json(f"{opts.api_url.rstrip('/')}/{method}", ttl_s=opts.listing_ttl_s)
    except HttpError as e:
        raise SourceError(f"Codeforces API {method}: {e}") from e
    if not isinstance(data, dict) or data.get("status") != "OK":
        comment = data.get("comment") if isinstance(data, dict) else None
        raise SourceError(f"Codeforces API {method} failed: {comment or data!r:.200}")
    return data["result"]


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    if opts.interactive not in INTERACTIVE_MODES:
        raise SourceError(f"codeforces: interactive must be one of {list(INTERACTIVE_MODES)}, got {opts.interactive!r}")
    contests = {c.get("id"): c for c in _api(ctx, opts, "contest.list") if isinstance(c, dict)}
    listing = _api(ctx, opts, "problemset.problems")
    problems = listing.get("problems") if isinstance(listing, dict) else None
    if not isinstance(problems, list):
        raise SourceError("Codeforces API problemset.problems: no problem list in the result")
    for entry in problems:
        if not isinstance(entry, dict):
            ctx.skip("malformed listing entry")
            continue
        contest = contests.get(entry.get("contestId"))
        start = contest.get("startTimeSeconds") if contest else None
        date = iso_date(start) if isinstance(start, int) else None
        if ctx.since and (date is None or date < ctx.since.isoformat()):
            ctx.skip("before since" if date else "no contest date")
            continue
        if contest and contest.get("phase") != "FINISHED":
            ctx.skip("contest not finished")
            continue
        rating = entry.get("rating")
        if opts.min_rating is not None and (not isinstance(rating, int) or rating < opts.min_rating):
            ctx.skip("below min_rating")
            continue
        yield fetch_problem(entry, contest, date, opts, ctx)


def fetch_problem(entry: dict, contest: dict | None, date: str | None, opts: Options, ctx: SourceContext) -> Item:
    cid, index = entry.get("contestId"), entry.get("index")
    native = f"{cid}{index}"
    pid = stable_id(ctx.name, native)
    record = {"listing": entry, "contest": contest}
    if not isinstance(cid, int) or not isinstance(index, str):
        return Reject("bad_record", "listing entry lacks contestId/index", record, None)
    if entry.get("type", "PROGRAMMING") != "PROGRAMMING":
        return Reject("not_programming", f"problem type {entry.get('type')!r}", record, pid)
    tags = [t for t in entry.get("tags") or [] if isinstance(t, str)]
    if "interactive" in tags and opts.interactive == "reject":
        return Reject("interactive", "tagged interactive (needs an interactor)", record, pid)
    url = f"{opts.base_url.rstrip('/')}/problemset/problem/{cid}/{index}"
    record["url"] = url
    try:
        html = ctx.http.get_text(url)
    except HttpError as e:
        return Reject("http_error", str(e), record, pid)
    try:
        page = parse_problem_page(html)
    except PageError as e:
        return Reject(e.code, str(e), record, pid)
    except RECORD_ERRORS as e:
        return Reject("bad_page", f"{type(e).__name__}: {e}", record, pid)
    interactive = page["interactive"] or "interactive" in tags
    if interactive and opts.interactive == "reject":
        return Reject("interactive", "statement has an Interaction section (needs an interactor)", record, pid)
    meta = {"contest_id": cid, "index": index, "contest_name": (contest or {}).get("name"), "points": entry.get("points")}
    if interactive:
        meta["interactive"] = True
        tags = tags if "interactive" in tags else [*tags, "interactive"]
    return Problem(
        id=pid, source=ctx.name, source_id=native, url=url, title=str(entry.get("name") or page["title"]),
        statement=page["statement"], platform="codeforces", style="stdio", tests=page["tests"],
        checker=None if interactive else stdio_checker(page["statement"]),
        time_limit_s=page["time_limit_s"], memory_limit_mb=page["memory_limit_mb"],
        rating=entry.get("rating") if isinstance(entry.get("rating"), int) else None,
        tags=tags, contest_date=date, meta={**meta, **page.get("unstated", {})},
    )


class PageError(ValueError):
    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code


def _pre_text(pre: Tag) -> str:
    """Sample text from a `<pre>`: newer pages put each line in its own `div.test-example-line`."""
    lines = pre.find_all("div", class_="test-example-line")
    if lines:
        return "\n".join(line.get_text() for line in lines) + "\n"
    for br in pre.find_all("br"):
        br.replace_with("\n")
    text = pre.get_text()
    return text if text.endswith("\n") else text + "\n"


def _tidy_for_markdown(root: Tag) -> None:
    """Section titles become headings, copy buttons go, line-per-div samples become plain text."""
    for node in root.select(".input-output-copier"):
        node.decompose()
    for pre in root.find_all("pre"):
        if pre.find("div", class_="test-example-line"):
            pre.string = _pre_text(pre)
    for title in root.select("div.section-title"):
        title.name = "h3"


def parse_problem_page(html: str) -> dict[str, Any]:
    """Statement (markdown), samples and limits from a Codeforces problem page."""
    soup = BeautifulSoup(html, "html.parser")
    root = soup.select_one("div.problem-statement")
    if root is None:
        raise PageError("bad_page", "no div.problem-statement on the page")
    header = root.select_one("div.header")
    title = header.select_one("div.title").get_text(strip=True) if header and header.select_one("div.title") else ""
    limits = {}
    for key in ("time-limit", "memory-limit", "input-file", "output-file"):
        node = header.select_one(f"div.{key}") if header else None
        if node is not None:
            prop = node.select_one("div.property-title")
            if prop is not None:
                prop.extract()
            limits[key] = node.get_text(" ", strip=True)
    for key, expected in (("input-file", "standard input"), ("output-file", "standard output")):
        if limits.get(key, expected) != expected:
            raise PageError("file_io", f"{key}: {limits[key]!r}")
    interactive = (any(t.get_text(strip=True).lower() == "interaction" for t in root.select("div.section-title"))
                   or says_interactive(root.get_text(" ")))
    tests = []
    for sample in root.select("div.sample-test"):
        inputs = sample.select("div.input pre")
        outputs = sample.select("div.output pre")
        if len(inputs) != len(outputs):
            raise PageError("bad_page", f"{len(inputs)} sample inputs but {len(outputs)} outputs")
        tests += [TestCase(_pre_text(i), _pre_text(o), "public") for i, o in zip(inputs, outputs, strict=True)]
    if not tests:
        if interactive:
            raise PageError("interactive", "interactive problem without sample transcripts")
        raise PageError("no_tests", "no sample tests on the page")
    if header is not None:
        header.extract()
    _tidy_for_markdown(root)
    statement = html_to_markdown(str(root))
    if len(statement) < 20:
        raise PageError("bad_page", "statement text is empty or too short")
    seconds = _SECONDS.search(limits.get("time-limit", ""))
    megabytes = _MEGABYTES.search(limits.get("memory-limit", ""))
    return {
        "title": re.sub(r"^[A-Z]\d?\.\s*", "", title),
        "statement": statement,
        "interactive": interactive,
        "tests": tests,
        "time_limit_s": float(seconds.group(1)) if seconds else 2.0,
        "memory_limit_mb": int(megabytes.group(1)) if megabytes else 256,
        "unstated": unstated_limits(seconds is None, megabytes is None),
    }
