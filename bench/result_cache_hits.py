"""The cost of the bounded result cache on a cache-hit heavy rerun: N gets of rows written by an
earlier run (every hit is stamped, in batches), against the cache as it was before the bound (one
SELECT per get, no stamps), on copies of one file. Also the time of the trim a full cache pays at
its close (evict + compact).

Rows look like validate's and testgen's runs (32-hex key, ~80-byte JSON value). Each variant runs
`--repeat` times alternately and the fastest counts (other processes on a shared machine hit both
alike).

    .venv/bin/python bench/result_cache_hits.py --n 100000
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from microcoder.pipeline.evaluator.programs import MB, ResultCache, file_bytes


class PlainCache:
    """The result cache before the bound (pipeline/evaluator/programs.py at the issue): the anchor."""

    def __init__(self, path: Path, table: str = "runs"):
        self.db = sqlite3.connect(str(path), check_same_thread=False)
        self.table = table

    def get(self, key: str):
        row = self.db.execute(f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def close(self) -> None:
        self.db.close()


def fill(path: Path, n: int) -> list[str]:
    rng = random.Random(0)
    keys = [f"{rng.getrandbits(128):032x}" for _ in range(n)]
    cache = ResultCache(path)
    for i in range(0, n, 1000):
        cache.put_many([(k, {"status": "AC", "time_s": 0.012, "output": f"{rng.getrandbits(64)}", "diff": None})
                        for k in keys[i:i + 1000]])
    cache.close()
    return keys


def rerun(make, path: Path, keys: list[str]) -> tuple[float, float]:
    """(seconds of the gets, seconds of the close) of one rerun that hits every key."""
    cache = make(path)
    start = time.perf_counter()
    for k in keys:
        assert cache.get(k) is not None
    gets = time.perf_counter() - start
    start = time.perf_counter()
    cache.close()
    return gets, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="rows written, then read back")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cache-bench-"))
    try:
        seed = tmp / "seed.sqlite"
        keys = fill(seed, args.n)
        random.Random(1).shuffle(keys)
        print(f"{args.n} rows, file {file_bytes(seed) / MB:.1f} MB")
        best: dict[str, tuple[float, float]] = {}
        variants = {"plain (before)": PlainCache, "bounded (stamps)": ResultCache}
        for r in range(args.repeat):
            for name, make in variants.items():
                copy = tmp / f"{r}-{name.split()[0]}.sqlite"
                shutil.copy(seed, copy)
                got = rerun(make, copy, keys)
                best[name] = min(best.get(name, got), got)
        base = sum(best["plain (before)"])
        print(f"{'variant':<18} {'gets s':>8} {'us/get':>8} {'close s':>8} {'total s':>8} {'ratio':>6}")
        for name, (gets, close) in best.items():
            print(f"{name:<18} {gets:8.3f} {gets / args.n * 1e6:8.1f} {close:8.3f} {gets + close:8.3f} "
                  f"{(gets + close) / base:6.2f}")
        full = tmp / "full.sqlite"
        shutil.copy(seed, full)
        cache = ResultCache(full, max_mb=file_bytes(seed) / MB / 2)  # half the file: the close trims
        start = time.perf_counter()
        cache.close()
        f = cache.figures()
        print(f"trim to half: {time.perf_counter() - start:.3f} s, {f['size_mb_before']} -> {f['size_mb_after']} MB, "
              f"{f['evicted']} rows evicted")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
