"""A polite HTTP client for the live platforms.

- at least `min_interval_s` between requests to one host;
- retries with exponential backoff on 429/5xx and transport errors, honouring `Retry-After`;
- a User-Agent that names the project;
- an on-disk cache keyed by method + URL + body, so a rerun does not refetch. Listing calls pass
  `ttl_s` so they are refreshed after a while; problem pages are kept until the cache's bound
  (`cache_max_mb`, the bytes of its files) evicts them: `close` deletes the least recently used
  files down to `LOW_WATER` of the bound (`trim_cache`: earlier runs' files by mtime, which a hit
  touches; this client's last, in the order it used them).
"""

from __future__ import annotations

import email.utils
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from microcoder.pipeline.io import write_text_atomic

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MB = 1 << 20
LOW_WATER = 0.8  # a trim leaves the cache at this share of its bound, so the next runs add pages before another
DEFAULT_USER_AGENT = "MicroCoder-dataset-builder/0.1 (research dataset of public programming problems; polite crawler)"


class HttpError(RuntimeError):
    def __init__(self, url: str, status: int | None, detail: str):
        super().__init__(f"{url}: {detail}")
        self.url = url
        self.status = status


@dataclass
class HttpConfig:
    user_agent: str = field(default=DEFAULT_USER_AGENT, metadata={"help": "User-Agent sent with every request."})
    min_interval_s: float = field(default=1.0, metadata={"help": "Minimum seconds between requests to one host."})
    max_retries: int = field(default=5, metadata={"help": "Retries on 429/5xx/transport errors."})
    backoff_s: float = field(default=2.0, metadata={"help": "First retry delay; doubles each retry."})
    max_backoff_s: float = field(default=120.0, metadata={"help": "Cap on one retry delay (also on Retry-After)."})
    timeout_s: float = field(default=30.0, metadata={"help": "Per-request timeout."})
    cache_dir: str | None = field(default=".cache/microcoder/http", metadata={
        "help": "On-disk response cache (null disables it). Keep it out of DVC outs and git."})
    refresh: bool = field(default=False, metadata={"help": "Ignore cached responses (still write new ones)."})
    # 4 GB: ~80,000 problem pages of ~50 KB, every live platform's archive; a page evicted costs a
    # refetch of at least min_interval_s, so the bound is generous.
    cache_max_mb: int = field(default=4096, metadata={
        "help": "Most MB of the response cache's files: the least recently used are deleted when a client closes."})

    def __post_init__(self) -> None:
        if not (isinstance(self.cache_max_mb, int) and self.cache_max_mb > 0):
            raise ValueError(f"cache_max_mb must be a whole number of MB > 0, got {self.cache_max_mb!r}")


class HttpClient:
    def __init__(self, config: HttpConfig | None = None, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self.config = config or HttpConfig()
        self._sleep, self._clock = sleep, clock
        self._last: dict[str, float] = {}
        self.stats = {"requests": 0, "cache_hits": 0, "cache_misses": 0, "retries": 0}
        self._read: dict[str, str] = {}  # url -> what identifies the answer read (see `origin`)
        self._client = httpx.Client(headers={"User-Agent": self.config.user_agent}, timeout=self.config.timeout_s,
                                    follow_redirects=True, transport=transport)
        self._cache = Path(self.config.cache_dir) if self.config.cache_dir else None
        self._used: dict[str, int] = {}  # cache file -> when this client last used it (a count): evicted last
        self._uses = itertools.count(1)
        self._grown = 0  # bytes this client added to the cache
        self._trim: dict[str, Any] = {"size_mb_before": None, "size_mb_after": None, "files": None, "evicted": 0}

    def close(self) -> None:
        """Close the connection and trim the cache to its bound (`trim_cache`)."""
        self._client.close()
        if self._cache is not None and self._trim["files"] is None:
            size, files, evicted = trim_cache(self._cache, self.config.cache_max_mb * MB, self._used)
            self._trim = {"size_mb_before": _mb(size - self._grown), "size_mb_after": _mb(sum(files.values())),
                          "files": len(files), "evicted": evicted}

    def cache_figures(self) -> dict[str, Any]:
        """The response cache in this client's run: its folder and bound, its size when the client
        began and after the trim, its files, the hits and misses, and the files evicted (the trim's
        figures are None until `close`)."""
        hits, misses = self.stats["cache_hits"], self.stats["cache_misses"]
        return {"path": str(self._cache) if self._cache else None, "max_mb": self.config.cache_max_mb, **self._trim,
                "hits": hits, "misses": misses, "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None}

    def get_text(self, url: str, params: dict[str, Any] | None = None, *, ttl_s: float | None = None) -> str:
        return self.request("GET", url, params=params, ttl_s=ttl_s)

    def get_json(self, url: str, params: dict[str, Any] | None = None, *, ttl_s: float | None = None) -> Any:
        return _decode_json(url, self.get_text(url, params, ttl_s=ttl_s))

    def post_json(self, url: str, payload: Any, *, ttl_s: float | None = None) -> Any:
        return _decode_json(url, self.request("POST", url, body=payload, ttl_s=ttl_s))

    def request(self, method: str, url: str, *, params: dict[str, Any] | None = None, body: Any = None,
                ttl_s: float | None = None) -> str:
        """The response text of a 2xx answer (from the cache when fresh); HttpError otherwise."""
        if params:
            url = f"{url}{'&' if '?' in url else '?'}{urlencode(sorted(params.items()))}"
        payload = json.dumps(body, sort_keys=True) if body is not None else None
        key = hashlib.sha256(f"{method} {url}\n{payload or ''}".encode()).hexdigest()
        cached = self._cache_get(key, ttl_s)
        if cached is not None:
            self.stats["cache_hits"] += 1
            self._read[f"{method} {url}"] = cached[1] or _body_digest(cached[0])
            return cached[0]
        if self._cache is not None:
            self.stats["cache_misses"] += 1
        text, etag = self._fetch(method, url, payload)
        self._cache_put(key, method, url, text, etag)
        self._read[f"{method} {url}"] = etag or _body_digest(text)
        return text

    def origin(self) -> dict[str, Any]:
        """What this client read, so that a rerun's input is explicit: the answers read (fetched or
        from the cache), how many the server identified (ETag, else Last-Modified), and one digest
        over every (request, ETag or body digest) pair: equal digests, equal input."""
        marks = sorted(self._read.items())
        digest = hashlib.sha256("\n".join(f"{k}\t{v}" for k, v in marks).encode()).hexdigest()
        return {"responses": len(marks), "identified_by_server": sum(not v.startswith("sha256:") for _, v in marks),
                "content_digest": digest}

    def _fetch(self, method: str, url: str, payload: str | None) -> tuple[str, str | None]:
        host = urlsplit(url).netloc
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in range(self.config.max_retries + 1):
            self._wait_turn(host)
            self.stats["requests"] += 1
            try:
                resp = self._client.request(method, url, content=payload, headers=headers)
            except httpx.TransportError as e:
                if attempt == self.config.max_retries:
                    raise HttpError(url, None, f"{type(e).__name__}: {e}") from e
                self._backoff(attempt, None)
                continue
            if resp.status_code in RETRY_STATUSES and attempt < self.config.max_retries:
                self._backoff(attempt, resp.headers.get("Retry-After"))
                continue
            if not 200 <= resp.status_code < 300:
                raise HttpError(url, resp.status_code, f"HTTP {resp.status_code}")
            etag = resp.headers.get("ETag") or resp.headers.get("Last-Modified")
            return resp.text, (f"etag:{etag}" if resp.headers.get("ETag") else f"modified:{etag}") if etag else None
        raise HttpError(url, None, "retries exhausted")  # not reached: the loop returns or raises

    def _wait_turn(self, host: str) -> None:
        last = self._last.get(host)
        if last is not None:
            wait = last + self.config.min_interval_s - self._clock()
            if wait > 0:
                self._sleep(wait)
        self._last[host] = self._clock()

    def _backoff(self, attempt: int, retry_after: str | None) -> None:
        self.stats["retries"] += 1
        delay = retry_after_seconds(retry_after, self._wall_now())
        if delay is None:
            delay = self.config.backoff_s * 2**attempt
        self._sleep(min(max(delay, 0.0), self.config.max_backoff_s))

    @staticmethod
    def _wall_now() -> float:
        return time.time()

    # --- cache ------------------------------------------------------------------------------
    def _use(self, path: Path) -> None:
        self._used[path.name] = next(self._uses)

    def _cache_file(self, key: str) -> Path | None:
        return self._cache / key[:2] / f"{key}.json" if self._cache else None

    def _cache_get(self, key: str, ttl_s: float | None) -> tuple[str, str | None] | None:
        path = self._cache_file(key)
        if path is None or self.config.refresh or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # a damaged entry is simply refetched
        if ttl_s is not None and time.time() - float(entry.get("fetched_at", 0)) > ttl_s:
            return None
        body = entry.get("body")
        if not isinstance(body, str):
            return None
        self._use(path)
        try:
            os.utime(path)  # its last use, for the least-recently-used order of `trim_cache`
        except OSError:
            pass
        return body, entry.get("etag")

    def _cache_put(self, key: str, method: str, url: str, text: str, etag: str | None = None) -> None:
        path = self._cache_file(key)
        if path is not None:
            entry = {"method": method, "url": url, "fetched_at": time.time(), "body": text, "etag": etag}
            old = path.stat().st_size if path.is_file() else 0
            write_text_atomic(path, json.dumps(entry, ensure_ascii=False))
            self._use(path)
            self._grown += path.stat().st_size - old


def trim_cache(folder: Path, max_bytes: float, recent: Mapping[str, int] | None = None) -> tuple[int, dict[Path, int], int]:
    """Delete the least recently used files of the cache `folder` down to `LOW_WATER` x `max_bytes`
    when it holds more than `max_bytes`: in mtime order, then the names in `recent` (this run's) in
    its order (a count, so files used within one clock tick keep their order). Returns (bytes
    before, {file: bytes} kept, files deleted)."""
    recent = recent or {}
    files: dict[Path, os.stat_result] = {}
    for f in folder.glob("*/*.json"):
        try:
            files[f] = f.stat()
        except OSError:  # deleted meanwhile
            continue
    size = sum(st.st_size for st in files.values())
    kept = {f: st.st_size for f, st in files.items()}
    if size <= max_bytes:
        return size, kept, 0
    left, evicted = size, 0
    for f in sorted(files, key=lambda f: (f.name in recent, recent.get(f.name, 0), files[f].st_mtime_ns)):
        if left <= LOW_WATER * max_bytes:
            break
        f.unlink(missing_ok=True)
        left -= kept.pop(f)
        evicted += 1
    return size, kept, evicted


def _mb(n: int) -> float:
    return round(n / MB, 3)


def _body_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - now


def _decode_json(url: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise HttpError(url, 200, f"response is not JSON: {e}") from e
