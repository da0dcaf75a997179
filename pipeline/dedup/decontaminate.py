"""Benchmark decontamination: word n-gram overlap plus MinHash similarity against benchmark sets.

A benchmark is a file (jsonl, jsonl.gz, json list or parquet), a folder of such files, or a
Hugging Face Hub dataset id (read with `datasets.load_dataset(path, split=split,
data_files=data_files)`, so it needs network or a warm cache), in one of two layouts:

- `problems`: our Problem records (`id`, `statement`, optional `contest_date`);
- `livecodebench`: LiveCodeBench rows (`question_id`, `question_content`, `contest_date`).

`date_from` / `date_to` (inclusive ISO dates) keep only the benchmark problems published in that
window (e.g. the LiveCodeBench release used for evaluation); a problem without a date is kept
(decontaminating against too much is the safe side).

A problem is contaminated by benchmark item B when either
- n-grams: it contains at least `ngram_min_overlap` of B's word `ngram_n`-grams, where a value
  >= 1 is a count of shared n-grams and a value < 1 is the fraction of B's n-grams (containment:
  a training statement that embeds B plus extra text still matches); or
- MinHash: the exact Jaccard similarity of the shingle sets, for pairs proposed by an LSH index
  over the benchmark's MinHash signatures, is at least `minhash_threshold`.
Both use the dedup stage's normalisation, so markdown/LaTeX/plain-text copies match alike.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from datasketch import MinHash

from microcoder.pipeline.dedup.features import Features, Featurizer
from microcoder.pipeline.dedup.minhash import CandidateIndex, jaccard, minhashes
from microcoder.pipeline.io import read_jsonl
from microcoder.pipeline.schema import iso_date

BENCHMARK_FORMATS = ("problems", "livecodebench")
_FILE_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".parquet")
_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass
class BenchmarkSpec:
    name: str
    path: str
    format: str = "problems"
    date_from: str | None = None
    date_to: str | None = None
    split: str = "test"  # for Hub dataset ids only
    data_files: str | list[str] | None = None  # for Hub dataset ids only (e.g. LiveCodeBench's test6.jsonl)
    optional: bool = False  # a missing path is skipped (and reported in stats) instead of an error

    @classmethod
    def from_params(cls, d: Any) -> BenchmarkSpec:
        if isinstance(d, BenchmarkSpec):
            return d
        if not isinstance(d, dict):
            raise ValueError(f"a benchmark must be a mapping with name/path/format, got {d!r}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"benchmark {d.get('name')!r}: unknown keys {unknown}; valid: {sorted(names)}")
        missing = [k for k in ("name", "path") if not d.get(k)]
        if missing:
            raise ValueError(f"benchmark {d!r}: missing {missing}")
        spec = cls(**d)
        if spec.format not in BENCHMARK_FORMATS:
            raise ValueError(f"benchmark {spec.name!r}: format must be one of {list(BENCHMARK_FORMATS)}, "
                             f"got {spec.format!r}")
        spec.path = str(spec.path)
        spec.date_from, spec.date_to = iso_date(spec.date_from), iso_date(spec.date_to)
        return spec


@dataclass
class BenchmarkItem:
    benchmark: str
    id: str
    statement: str
    contest_date: str | None = None


def _read_file(path: Path) -> Iterator[dict[str, Any]]:
    name = path.name
    if name.endswith(".parquet"):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            yield from batch.to_pylist()
    elif name.endswith(".json"):
        rows = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError(f"{path}: a .json benchmark must hold a list of objects")
        yield from rows
    elif name.endswith((".jsonl", ".jsonl.gz")):
        for _n, rec, err in read_jsonl(path):
            if err is not None:
                raise ValueError(f"{path}: {err}")
            yield rec
    else:
        raise ValueError(f"{path}: unsupported benchmark file type (want one of {list(_FILE_SUFFIXES)})")


def _read_rows(spec: BenchmarkSpec) -> Iterator[dict[str, Any]]:
    path = Path(spec.path)
    if path.is_file():
        yield from _read_file(path)
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_FILE_SUFFIXES))
        if not files:
            raise ValueError(f"benchmark {spec.name!r}: no {list(_FILE_SUFFIXES)} files under {path}")
        for f in files:
            yield from _read_file(f)
    elif not _HUB_ID.fullmatch(spec.path) or spec.path.endswith(_FILE_SUFFIXES):
        raise FileNotFoundError(f"benchmark {spec.name!r}: {path} does not exist (set optional: true to skip it)")
    else:
        import datasets  # a Hub dataset id: heavy import, only when needed

        kwargs = {"data_files": spec.data_files} if spec.data_files else {}
        yield from datasets.load_dataset(spec.path, split=spec.split, **kwargs)


def _item(row: dict[str, Any], spec: BenchmarkSpec, n: int) -> BenchmarkItem:
    if spec.format == "livecodebench":
        keys = ("question_id", "question_content", "contest_date")
    else:
        keys = ("id", "statement", "contest_date")
    id_, statement = row.get(keys[0]), row.get(keys[1])
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError(f"benchmark {spec.name!r} row {n}: no {keys[1]!r} text (is format {spec.format!r} right?)")
    date = row.get(keys[2])
    return BenchmarkItem(spec.name, str(id_ if id_ not in (None, "") else n), statement,
                         iso_date(date) if date else None)


def load_benchmark(spec: BenchmarkSpec) -> tuple[list[BenchmarkItem], dict[str, Any]]:
    """The benchmark's problems inside its date window, and counts for stats.json."""
    stats: dict[str, Any] = {"path": spec.path, "format": spec.format, "date_from": spec.date_from,
                             "date_to": spec.date_to, "rows": 0, "outside_window": 0, "undated": 0, "items": 0}
    if spec.optional and not Path(spec.path).exists():
        stats["missing"] = True
        return [], stats
    items = []
    for n, row in enumerate(_read_rows(spec), 1):
        stats["rows"] += 1
        item = _item(row, spec, n)
        if item.contest_date is None:
            stats["undated"] += 1
        elif (spec.date_from and item.contest_date < spec.date_from) or (spec.date_to and item.contest_date > spec.date_to):
            stats["outside_window"] += 1
            continue
        items.append(item)
    stats["items"] = len(items)
    return items, stats


@dataclass
class Contamination:
    """The strongest benchmark match of one problem: the evidence written to rejects.jsonl."""

    benchmark: str
    benchmark_id: str
    method: str  # ngram | minhash | ngram+minhash
    shared_ngrams: int
    ngram_overlap: float  # shared / the benchmark item's n-grams
    jaccard: float  # exact Jaccard of the shingle sets (0 when not computed by LSH)
    other_matches: list[str] = field(default_factory=list)  # further "benchmark/id" matches

    def evidence(self, ngram_n: int) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "benchmark_id": self.benchmark_id, "method": self.method,
                "ngram_n": ngram_n, "shared_ngrams": self.shared_ngrams,
                "ngram_overlap": round(self.ngram_overlap, 4), "jaccard": round(self.jaccard, 4),
                "other_matches": self.other_matches}


@dataclass
class DecontaminationSettings:
    ngram_n: int = 13
    ngram_min_overlap: float = 0.5
    minhash_threshold: float = 0.5
    shingle_kind: str = "word"
    shingle_size: int = 5
    num_perm: int = 128
    seed: int = 1
    mask_digits: bool = False
    mask_variables: bool = False
    lsh_false_negative_weight: float = 0.9


class Decontaminator:
    """Index of benchmark items; `check` returns a problem's strongest match or None."""

    def __init__(self, items: list[BenchmarkItem], settings: DecontaminationSettings):
        self.items = items
        self.s = settings
        self.featurize = Featurizer(settings.shingle_kind, settings.shingle_size, settings.mask_digits,
                                    settings.mask_variables)
        features = [self.featurize(it.statement) for it in items]
        self.item_ngrams = [f.ngrams(settings.ngram_n) for f in features]
        self.item_shingles = [f.shingles for f in features]
        self._postings: dict[int, list[int]] = {}
        for i, grams in enumerate(self.item_ngrams):
            for g in grams.tolist():
                self._postings.setdefault(g, []).append(i)
        self._all_ngrams = np.array(sorted(self._postings), dtype=np.uint64)
        self.index = CandidateIndex(settings.minhash_threshold, settings.num_perm, settings.lsh_false_negative_weight)
        nonempty = [i for i, s in enumerate(self.item_shingles) if s.size]
        for i, mh in zip(nonempty, minhashes([self.item_shingles[i] for i in nonempty], settings.num_perm,
                                             settings.seed), strict=True):
            self.index.insert(i, mh)

    def __len__(self) -> int:
        return len(self.items)

    def _ngram_hits(self, features: Features) -> Counter:
        grams = features.ngrams(self.s.ngram_n)
        if not grams.size or not self._all_ngrams.size:
            return Counter()
        # Binary search in the sorted benchmark n-grams: O(n log m), no per-call sort of the index.
        pos = np.minimum(np.searchsorted(self._all_ngrams, grams), self._all_ngrams.size - 1)
        hits: Counter = Counter()
        for g in grams[self._all_ngrams[pos] == grams].tolist():
            hits.update(self._postings[g])
        return hits

    def _ngram_match(self, item: int, shared: int) -> bool:
        need = self.s.ngram_min_overlap
        if need >= 1:
            return shared >= need
        total = self.item_ngrams[item].size
        return total > 0 and shared / total >= need

    def check(self, features: Features, mh: MinHash | None) -> Contamination | None:
        """The strongest benchmark match of a problem (its features and MinHash), or None.
        The features must come from `self.featurize` (same normalisation and shingles)."""
        if not self.items:
            return None
        shingles = features.shingles
        hits = self._ngram_hits(features)
        by_ngram = {i for i, shared in hits.items() if self._ngram_match(i, shared)}
        by_minhash: dict[int, float] = {}
        if mh is not None and shingles.size:
            for i in self.index.query(mh):
                j = jaccard(shingles, self.item_shingles[i])
                if j >= self.s.minhash_threshold:
                    by_minhash[i] = j
        matched = by_ngram | by_minhash.keys()
        if not matched:
            return None
        evidence = {}
        for i in matched:
            shared = hits.get(i, 0)
            overlap = shared / max(self.item_ngrams[i].size, 1)
            j = by_minhash.get(i, jaccard(shingles, self.item_shingles[i]))
            methods = (i in by_ngram) + (i in by_minhash)
            evidence[i] = (shared, overlap, j, methods)
        ranked = sorted(matched, key=lambda i: (-evidence[i][3], -max(evidence[i][1], evidence[i][2]),
                                                self.items[i].benchmark, self.items[i].id))
        best = ranked[0]
        shared, overlap, j, _ = evidence[best]
        method = "+".join(name for name, hit in (("ngram", best in by_ngram), ("minhash", best in by_minhash)) if hit)
        others = [f"{self.items[i].benchmark}/{self.items[i].id}" for i in ranked[1:6]]
        return Contamination(self.items[best].benchmark, self.items[best].id, method, shared, overlap, j, others)
