"""Every on-disk cache is bounded by size (issue 39): the result cache of validate and testgen
(`ResultCache`, SQLite) and scrape's HTTP cache. The bound holds after runs that write more than it,
a run's own rows survive while it runs, a rerun hits what fits, an old cache file opens and is
migrated, and the figures say what the cache did."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from microcoder.pipeline.evaluator.programs import MB, ResultCache, file_bytes
from microcoder.pipeline.sources.http import HttpClient, HttpConfig

BOUND_MB = 0.25


def rows(prefix: str, n: int, size: int = 200) -> list[tuple[str, dict]]:
    """`n` rows of about `size` bytes each, keyed `<prefix><i>` (random text: nothing compresses)."""
    rng = random.Random(prefix)
    return [(f"{prefix}{i}", {"output": "".join(rng.choices("abcdefghij", k=size))}) for i in range(n)]


def run(path, *, put=(), get=(), max_mb=BOUND_MB, table="runs") -> ResultCache:
    """One run: open, read `get` (keys), write `put` in chunks (as the runners do), close."""
    cache = ResultCache(path, table=table, max_mb=max_mb)
    for key in get:
        cache.get(key)
    for i in range(0, len(put), 50):
        cache.put_many(list(put[i:i + 50]))
    cache.close()
    return cache


def test_the_bound_holds_after_runs_that_write_more_than_it(tmp_path):
    path = tmp_path / "c.sqlite"
    for r in range(4):  # each run about half the bound: together twice it
        cache = run(path, put=rows(f"run{r}-", 600))
        assert file_bytes(path) <= BOUND_MB * MB
    f = cache.figures()
    assert f["evicted"] > 0 and f["size_mb_after"] <= BOUND_MB < f["size_mb_before"] + 0.1
    db = sqlite3.connect(str(path))
    assert f["rows"] == db.execute("SELECT count(*) FROM runs").fetchone()[0] > 0
    assert cache_has(path, "run3-599") and not cache_has(path, "run0-0")  # the least recently used went
    db.close()
    big = run(path, put=rows("big-", 3000))  # one run of ~3 x the bound
    assert file_bytes(path) <= BOUND_MB * MB and big.figures()["size_mb_after"] <= BOUND_MB


def cache_has(path, key: str, table: str = "runs") -> bool:
    db = sqlite3.connect(str(path))
    try:
        return db.execute(f"SELECT 1 FROM {table} WHERE key = ?", (key,)).fetchone() is not None
    finally:
        db.close()


def test_a_runs_own_rows_survive_while_it_runs(tmp_path):
    """Over the bound, a run's writes evict rows of earlier runs, never the ones it wrote or read
    (nor another table's of the file: testgen's `problems` beside its `runs`)."""
    path = tmp_path / "c.sqlite"
    old = rows("old-", 1000)
    run(path, put=old, max_mb=10)  # earlier runs under a larger bound: the file is now over this one
    run(path, put=rows("p-", 100), max_mb=10, table="problems")
    cache, problems = ResultCache(path, max_mb=BOUND_MB), ResultCache(path, table="problems", max_mb=BOUND_MB)
    read = [k for k, _ in old[:100]]
    assert all(cache.get(k) is not None for k in read) and problems.get("p-0") is not None
    new = rows("new-", 2000)
    for i in range(0, len(new), 50):
        cache.put_many(new[i:i + 50])
    assert not all(cache_has(path, k) for k, _ in old[100:])  # earlier runs' rows made room...
    assert all(cache.get(k) is not None for k in read + [k for k, _ in new])  # ...never this run's
    assert all(problems.get(k) is not None for k, _ in rows("p-", 100))
    problems.close()
    cache.close()
    assert file_bytes(path) <= BOUND_MB * MB and cache.figures()["evicted"] > 0


def test_a_rerun_hits_what_fits(tmp_path):
    path = tmp_path / "c.sqlite"
    everything = rows("w-", 2500)  # ~2 x the bound
    first = run(path, put=everything)
    kept = first.figures()["rows"]
    assert 0 < kept < len(everything)
    same = run(path, get=[k for k, _ in everything])  # a rerun of the same run: what the trim kept
    assert same.hits == kept and same.figures()["hit_rate"] == round(kept / len(everything), 4)

    small = [k for k, _ in everything[:400]]  # a smaller workload, partly evicted: it rewrites its misses
    second = ResultCache(path, max_mb=BOUND_MB)
    missed = [(k, v) for k, v in everything[:400] if second.get(k) is None]
    second.put_many(missed)
    second.close()
    third = run(path, get=small)
    assert third.hits == len(small) and third.figures()["hit_rate"] == 1.0  # everything that fits


def test_a_cache_within_its_bound_is_left_alone(tmp_path):
    path = tmp_path / "c.sqlite"
    run(path, put=rows("a-", 300))
    again = run(path, get=[k for k, _ in rows("a-", 300)])
    f = again.figures()
    assert (f["hits"], f["misses"], f["evicted"], f["rows"]) == (300, 0, 0, 300)
    assert f["size_mb_before"] == f["size_mb_after"] <= BOUND_MB


def test_an_old_format_cache_file_opens_and_works(tmp_path):
    """A file written before the bound ((key, value) tables, no stamps): its tables get the stamp in
    place, its rows count as the least recently used, the table not opened (testgen's `problems`) is
    trimmed too."""
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(str(path))
    for table, prefix in (("runs", "r-"), ("problems", "p-")):
        db.execute(f"CREATE TABLE {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(k, f'{{"v": "{v["output"]}"}}') for k, v in rows(prefix, 800)])
    db.commit()
    db.close()
    (tmp_path / "old.sqlite.compact").write_bytes(b"a trim cut short")
    cache = ResultCache(path, max_mb=BOUND_MB)
    assert not (tmp_path / "old.sqlite.compact").exists()  # what an interrupted trim left is cleared
    assert cache.get("r-5") == {"v": rows("r-", 800)[5][1]["output"]}
    fresh = rows("fresh-", 300)
    cache.put_many(fresh)
    cache.close()
    assert file_bytes(path) <= BOUND_MB * MB
    assert all(cache_has(path, k) for k, _ in fresh) and cache_has(path, "r-5")  # used in the last run
    assert not all(cache_has(path, k, "problems") for k, _ in rows("p-", 800))
    again = run(path, get=["r-5", "fresh-0"], table="runs")
    assert again.hits == 2


def test_a_damaged_cache_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"not a database, just bytes" * 100)
    with pytest.raises(OSError, match="delete the file"):
        ResultCache(path)
    with pytest.raises(ValueError, match="max_mb"):
        ResultCache(tmp_path / "c.sqlite", max_mb=0)


def test_the_bound_is_a_stage_param():
    from microcoder.pipeline.testgen.config import TestgenConfig
    from microcoder.pipeline.validate import ValidateConfig

    assert TestgenConfig().cache_max_mb == ValidateConfig().cache_max_mb == 2048
    with pytest.raises(ValueError, match="cache_max_mb"):
        TestgenConfig(cache_max_mb=0)


def test_testgen_stats_carry_the_cache_figures(tmp_path):
    """A problem whose generated tests are in the cache: no judge runs, and stats say it was a hit."""
    from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase
    from microcoder.pipeline.testgen.config import TestgenConfig
    from microcoder.pipeline.testgen.stage import judge_config, problem_cache, problem_key, testgen_problems

    p = Problem(id="p", source="s", statement="Add.", style="functional", entry_point="add", tests=[TestCase("1\n2", "3")],
                reference_solutions=[ReferenceSolution("python", "def add(a, b):\n    return a + b\n")])
    cfg = TestgenConfig(cache_path=str(tmp_path / "testgen.sqlite"), cache_max_mb=1)
    cache = problem_cache(cfg)
    cache.put_many([(problem_key(p, cfg, None, judge_config(cfg, None)),
                     {"tests": [], "provenance": [], "candidates": 0, "dropped": {}, "info": {}})])
    cache.close()
    figures = testgen_problems([p], cfg, progress=False).stats.figures["cache"]
    assert figures["path"] == cfg.cache_path and figures["max_mb"] == 1 and figures["rows"] == 1
    assert figures["problems"] == {"hits": 1, "misses": 0, "hit_rate": 1.0} and figures["evicted"] == 0
    assert figures["size_mb_after"] <= 1


# --- the HTTP cache --------------------------------------------------------------------------------
PAGE = 100 * 1024  # bytes of one page: 20 pages are twice a 1 MB bound


def http_client(tmp_path, fetched: list[str]) -> HttpClient:
    """A client of a 1 MB cache whose server answers every page with PAGE bytes."""
    def answer(request: httpx.Request) -> httpx.Response:
        fetched.append(request.url.path)
        return httpx.Response(200, text=request.url.path.ljust(PAGE, "x"))

    cfg = HttpConfig(min_interval_s=0.0, cache_dir=str(tmp_path / "http"), cache_max_mb=1)
    return HttpClient(cfg, transport=httpx.MockTransport(answer))


def cache_bytes(tmp_path) -> int:
    return sum(f.stat().st_size for f in (tmp_path / "http").glob("*/*.json"))


def cached_pages(tmp_path) -> dict[str, Path]:
    """{page path: its cache file}."""
    return {json.loads(f.read_text())["url"].rsplit("/", 1)[1]: f for f in (tmp_path / "http").glob("*/*.json")}


def fetch(tmp_path, pages: list[str]) -> tuple[HttpClient, list[str]]:
    """One run: a client that reads `pages` in this order, closed. Returns it and what it fetched."""
    fetched: list[str] = []
    client = http_client(tmp_path, fetched)
    for page in pages:
        assert client.get_text(f"https://example.org/{page}").startswith(f"/{page}")
    client.close()
    return client, [p.lstrip("/") for p in fetched]


def test_the_http_cache_is_bounded_least_recently_used_first(tmp_path):
    first, fetched = fetch(tmp_path, [f"p{i}" for i in range(20)])  # twice the bound
    f = first.cache_figures()
    assert len(fetched) == 20 and (f["hits"], f["misses"], f["files"], f["evicted"]) == (0, 20, 8, 12)
    assert cache_bytes(tmp_path) <= MB and f["size_mb_after"] <= 1 < f["size_mb_before"] + 2
    assert set(cached_pages(tmp_path)) == {f"p{i}" for i in range(12, 20)}  # the ones this run used last
    now = time.time()
    for i in range(12, 20):  # an earlier run's files: p12 the oldest
        os.utime(cached_pages(tmp_path)[f"p{i}"], (now - 100 + i, now - 100 + i))

    second, fetched = fetch(tmp_path, ["p0", "p1", "p12"])  # p12 a hit, touched: no longer the oldest
    assert fetched == ["p0", "p1"] and second.cache_figures()["evicted"] == 0 and cache_bytes(tmp_path) <= MB
    third, fetched = fetch(tmp_path, ["p2", "p3", "p4"])  # over the bound: the 5 least recently used go
    assert fetched == ["p2", "p3", "p4"] and third.cache_figures()["evicted"] == 5
    assert set(cached_pages(tmp_path)) == {"p0", "p1", "p2", "p3", "p4", "p12", "p18", "p19"}
    rerun, fetched = fetch(tmp_path, ["p0", "p1", "p2", "p3", "p4", "p12", "p18", "p19"])
    assert fetched == [] and rerun.cache_figures()["hit_rate"] == 1.0


def test_this_runs_http_files_go_in_the_order_it_used_them_whatever_the_clock(tmp_path):
    """Files of one run may share an mtime (a coarse clock): the client's own count orders them."""
    from microcoder.pipeline.sources.http import trim_cache

    folder = tmp_path / "http"
    (folder / "ab").mkdir(parents=True)
    names = [f"{i:02d}.json" for i in range(10)]
    for name in names:
        (folder / "ab" / name).write_bytes(b"x" * 1000)
        os.utime(folder / "ab" / name, (1000, 1000))
    order = {name: n for n, name in enumerate(reversed(names))}  # used last to first
    size, kept, evicted = trim_cache(folder, 5000, order)
    assert (size, evicted) == (10_000, 6) and sorted(f.name for f in kept) == names[:4]


def test_the_http_cache_bound_is_a_scrape_param():
    from microcoder.pipeline.scrape import ScrapeConfig

    assert ScrapeConfig(http_cache_max_mb=7).http_config().cache_max_mb == 7
    with pytest.raises(ValueError, match="cache_max_mb"):
        HttpConfig(cache_max_mb=0)


def test_large_values_are_stored_compressed_and_text_rows_still_read(tmp_path):
    """testgen's per-problem rows hold full-size tests (~3 MB a problem on real sources): zlib
    makes them ~4x smaller; a row written as JSON text (an older file) still reads."""
    import sqlite3

    path = tmp_path / "c.sqlite"
    big = {"tests": [{"input": " ".join(str(i) for i in range(20_000)), "output": "7\n"}]}
    cache = ResultCache(path)
    cache.put_many([("big", big), ("small", {"status": "AC"})])
    cache.close()
    db = sqlite3.connect(path)
    raw = dict(db.execute("SELECT key, value FROM runs").fetchall())
    assert isinstance(raw["big"], bytes) and len(raw["big"]) * 2 < len(json.dumps(big))
    assert isinstance(raw["small"], str)
    db.execute("UPDATE runs SET value = ? WHERE key = 'small'", (json.dumps({"status": "WA"}),))
    db.commit()
    db.close()
    again = ResultCache(path)
    assert again.get("big") == big and again.get("small") == {"status": "WA"}
    again.close()
