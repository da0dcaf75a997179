"""Pass 1 of the dedup stage: stream the shards once, decontaminate and find duplicate pairs.

Records are judged by the tolerant reader's rule (`microcoder.pipeline.inputs.judge_record`: a record that
is not a valid Problem, or repeats an id, is rejected with its reason, never a crash). Held per problem: its
`Facts` (representative rule), its exact key, its shingle set (4 bytes a shingle) and its LSH band
entries; rejected rows keep only their reason and evidence. Benchmark matches are recorded here
and rejected after clustering, together with their duplicates.

With executor=ray (`ray_scan`) the sketches, benchmark checks, LSH buckets and pair checks run on
the cluster; the same `register` / `add_pair` calls then put the results in this state, so both
executors end in the same union-find partition.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from microcoder.pipeline.dedup.config import DedupConfig
from microcoder.pipeline.dedup.decontaminate import Decontaminator
from microcoder.pipeline.dedup.exact import ExactIndex
from microcoder.pipeline.dedup.features import Features, Featurizer
from microcoder.pipeline.dedup.minhash import CandidateIndex, UnionFind, jaccard, minhashes
from microcoder.pipeline.dedup.representative import Facts, different_problems
from microcoder.pipeline.inputs import DUPLICATE, InputError, judge_record, parquet_files, require_input
from microcoder.pipeline.schema import PROBLEM_SCHEMA, Problem

REASON_CONTAMINATED, REASON_DUPLICATE_ID = "benchmark_contamination", DUPLICATE


def input_files(path: Path) -> list[Path]:
    """The parquet files of the input (a file, a folder of shards in sorted order, or a Hub-layout
    folder; hidden temporaries left out). A missing input is an InputError."""
    path = require_input(path, "dedup input")
    if path.is_file() and path.suffix != ".parquet":
        raise InputError(f"dedup input {path}: expected a parquet file or a folder of shards (the scrape "
                         "stage's output)")
    return parquet_files(path)


def input_schema(files: list[Path]) -> pa.Schema:
    """The unified schema of the input shards; every core Problem column must be there."""
    if not files:
        return PROBLEM_SCHEMA
    schemas = []
    for f in files:  # one at a time, so that an error names the shard at fault
        try:
            schema = pq.read_schema(f)
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"dedup input {f}: not a readable parquet file ({e})") from e
        missing = [n for n in PROBLEM_SCHEMA.names if n not in schema.names]
        if missing:
            raise InputError(f"dedup input {f}: lacks Problem columns {missing}: is it a scrape output?")
        schemas.append(schema)
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except pa.ArrowException as e:
        raise InputError(f"dedup input {files[0].parent}: the shards' schemas do not unify ({e})") from e


def iter_batches(files: list[Path], batch_size: int, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    for f in files:
        try:
            yield from pq.ParquetFile(f).iter_batches(batch_size=batch_size, columns=columns)
        except (pa.ArrowException, OSError) as e:  # a corrupt or truncated shard: the input as a whole is bad
            raise InputError(f"{f}: not a readable parquet file ({e})") from e


def source_of(row: dict[str, Any]) -> str:
    return row["source"] if isinstance(row.get("source"), str) else "(unknown)"


class Scanner:
    """State of pass 1: one union-find node per problem with an id not seen before."""

    def __init__(self, cfg: DedupConfig, decon: Decontaminator):
        self.cfg, self.decon = cfg, decon
        self.facts: list[Facts] = []
        self.shingles: list[np.ndarray] = []
        self.keys: list[bytes | None] = []
        self.row_of_node: list[int] = []
        self.node_of_row: list[int] = []  # -1: rejected
        self.rejected: dict[int, tuple[str, dict[str, Any] | None]] = {}  # row -> (reason, evidence)
        self.unreadable: set[int] = set()  # rejected rows that are no valid Problem (written as read)
        self.contaminated: dict[int, dict[str, Any]] = {}  # node -> evidence of its benchmark match
        self.dropped: set[int] = set()  # nodes rejected after clustering
        self.seen_ids: set[str] = set()
        self.uf = UnionFind()
        self.exact = ExactIndex()
        self.lsh = CandidateIndex(cfg.threshold, cfg.num_perm, cfg.lsh_false_negative_weight)
        self.row_source: list[str] = []  # every input row's source (per-source stats)
        self.counts: Counter = Counter()
        self.featurize = Featurizer(cfg.shingle_kind, cfg.shingle_size, cfg.mask_digits, cfg.mask_variables)

    def facts_of(self, p: Problem) -> Facts:
        return Facts.of(p, with_public_tests=self.cfg.merge_tests)

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Judge, sketch and index one batch of input rows (executor=local)."""
        cfg = self.cfg
        judged = [judge_record(r)[:2] for r in rows]
        problems = [p for p, _ in judged if p is not None]
        features = [self.featurize(p.statement) for p in problems]
        sketched = [i for i, x in enumerate(features) if x.shingles.size]
        mhs: list[Any] = [None] * len(problems)
        for i, mh in zip(sketched, minhashes([features[i].shingles for i in sketched], cfg.num_perm, cfg.seed),
                         strict=True):
            mhs[i] = mh
        done = iter(zip(problems, features, mhs, strict=True))
        for row, (p, reason) in zip(rows, judged, strict=True):
            if p is None:
                self.reject_record(source_of(row), reason)
            else:
                self.add(*next(done))

    def reject_record(self, source: str, reason: str) -> None:
        """A row the reader rejects (not a valid Problem): written as read to rejects.jsonl."""
        self.unreadable.add(len(self.node_of_row))
        self._reject(source, reason, None)

    def _reject(self, source: str, reason: str, evidence: dict[str, Any] | None) -> None:
        self.rejected[len(self.node_of_row)] = (reason, evidence)
        self.node_of_row.append(-1)
        self.row_source.append(source)

    def _drop(self, node: int, reason: str, evidence: dict[str, Any]) -> None:
        row = self.row_of_node[node]
        self.rejected[row] = (reason, evidence)
        self.node_of_row[row] = -1
        self.dropped.add(node)

    def settle_contamination(self) -> dict[int, list[int]]:
        """Reject every problem whose duplicate cluster holds a benchmark match (a near copy of a
        benchmark copy is contaminated too) and return the remaining clusters (root -> members).
        A problem rejected through a duplicate gets its closest matched member as evidence."""
        groups = self.uf.groups()
        tainted: dict[int, list[int]] = defaultdict(list)
        for node in self.contaminated:
            tainted[self.uf.find(node)].append(node)
        for root, matched in sorted(tainted.items()):
            for node in groups.pop(root, [root]):
                if node in self.contaminated:
                    evidence = self.contaminated[node]
                else:
                    via = max(matched, key=lambda m: (jaccard(self.shingles[node], self.shingles[m]), -m))
                    evidence = self.contaminated[via] | {
                        "method": "via_duplicate", "via_id": self.facts[via].id,
                        "via_similarity": round(jaccard(self.shingles[node], self.shingles[via]), 4)}
                    self.counts["contaminated_via_duplicates"] += 1
                self.counts[f"contaminated:{evidence['benchmark']}"] += 1
                self._drop(node, REASON_CONTAMINATED, evidence)
        return groups

    def add(self, p: Problem, x: Features, mh: Any) -> None:
        """Register one problem and verify its LSH candidates among the problems before it."""
        node = self.register(self.facts_of(p), x.shingles, x.key, lambda: self._check(x, mh))
        if node is not None:
            for other in self.lsh.query_insert(node, mh):
                self.add_pair(other, node, jaccard(x.shingles, self.shingles[other]) >= self.cfg.threshold)

    def _check(self, x: Features, mh: Any) -> dict[str, Any] | None:
        hit = self.decon.check(x, mh)
        return None if hit is None else hit.evidence(self.cfg.ngram_n)

    def register(self, f: Facts, shingles: np.ndarray, key: bytes | None,
                 contamination: Callable[[], dict[str, Any] | None]) -> int | None:
        """Give a problem its node (or reject a repeated id), record its benchmark match (asked
        only for a new id) and union it with the first problem of its exact key. Returns the node
        when it still needs the LSH (a new non-empty text), else None."""
        if f.id in self.seen_ids:
            self._reject(f.source, REASON_DUPLICATE_ID, {"duplicate_of_id": f.id})
            return None
        self.seen_ids.add(f.id)
        node = self.uf.add()
        evidence = contamination()
        if evidence is not None:  # rejected after clustering, with its whole duplicate cluster
            self.contaminated[node] = evidence
        self.row_of_node.append(len(self.node_of_row))
        self.node_of_row.append(node)
        self.row_source.append(f.source)
        self.facts.append(f)
        self.shingles.append(shingles)
        self.keys.append(key)
        if key is None:  # nothing to compare: a statement of markup only stays a singleton
            self.counts["empty_statements"] += 1
            return None
        first = self.exact.first_or_add(key, node)
        if first is not None:  # same normalised text: same shingles, no need to index it again
            self.uf.union(first, node)
            self.counts["exact_pairs"] += 1
            return None
        return node

    def add_pair(self, a: int, b: int, near: bool) -> None:
        """An LSH candidate pair and whether its exact Jaccard reached the threshold; a near pair
        whose tests or numbers show two different problems stays apart (`different_problems`)."""
        self.counts["candidate_pairs"] += 1
        if near and different_problems(self.facts[a], self.facts[b]):
            self.counts["near_pairs_kept_apart"] += 1
            return
        if near:
            self.uf.union(a, b)
            self.counts["near_pairs"] += 1
