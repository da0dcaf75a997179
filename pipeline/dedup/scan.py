"""Pass 1 of the dedup stage: stream the shards once, decontaminate and find duplicate pairs.

Only the columns the decisions need are read (id, source, statement, style, entry point, date,
test and reference-solution counts); whole records are read again in the write pass. Held per
problem: its `Facts` (representative rule), its exact key, its shingle set (4 bytes a shingle)
and its LSH band entries; rejected rows keep only their reason and evidence. Benchmark matches
are recorded here and rejected after clustering, together with their duplicates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.dedup.config import DedupConfig
from pipeline.dedup.decontaminate import Decontaminator
from pipeline.dedup.exact import ExactIndex
from pipeline.dedup.features import Features, Featurizer
from pipeline.dedup.minhash import CandidateIndex, UnionFind, jaccard, minhashes
from pipeline.dedup.representative import Facts
from pipeline.schema import PROBLEM_SCHEMA

REASON_CONTAMINATED, REASON_DUPLICATE_ID = "benchmark_contamination", "duplicate_id"
SCAN_COLUMNS = ["id", "source", "statement", "style", "entry_point", "contest_date", "tests", "reference_solutions"]


def input_files(path: Path) -> list[Path]:
    """The parquet files of the input (a file or a folder of shards, in sorted order)."""
    if path.is_dir():
        return sorted(path.rglob("*.parquet"))
    if not path.exists():
        raise FileNotFoundError(f"dedup input {path} does not exist (run the scrape stage first)")
    return [path]


def input_schema(files: list[Path]) -> pa.Schema:
    """The unified schema of the input shards; every core Problem column must be there."""
    if not files:
        return PROBLEM_SCHEMA
    schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
    missing = [n for n in PROBLEM_SCHEMA.names if n not in schema.names]
    if missing:
        raise ValueError(f"dedup input lacks Problem columns {missing}: is it a scrape output?")
    return schema


def iter_batches(files: list[Path], batch_size: int, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    for f in files:
        yield from pq.ParquetFile(f).iter_batches(batch_size=batch_size, columns=columns)


class Scanner:
    """State of pass 1: one union-find node per problem with an id not seen before."""

    def __init__(self, cfg: DedupConfig, decon: Decontaminator):
        self.cfg, self.decon = cfg, decon
        self.facts: list[Facts] = []
        self.shingles: list[np.ndarray] = []
        self.keys: list[bytes | None] = []
        self.row_of_node: list[int] = []
        self.node_of_row: list[int] = []  # -1: rejected
        self.rejected: dict[int, tuple[str, dict[str, Any]]] = {}  # row -> (reason, evidence)
        self.contaminated: dict[int, dict[str, Any]] = {}  # node -> evidence of its benchmark match
        self.dropped: set[int] = set()  # nodes rejected after clustering
        self.seen_ids: set[str] = set()
        self.uf = UnionFind()
        self.exact = ExactIndex()
        self.lsh = CandidateIndex(cfg.threshold, cfg.num_perm, cfg.lsh_false_negative_weight)
        self.per_source: dict[str, Counter] = defaultdict(Counter)
        self.counts: Counter = Counter()
        self.featurize = Featurizer(cfg.shingle_kind, cfg.shingle_size, cfg.mask_digits, cfg.mask_variables)

    def add_batch(self, batch: pa.RecordBatch) -> None:
        cfg = self.cfg
        cols = {name: batch.column(name) for name in SCAN_COLUMNS}
        n_tests = pc.fill_null(pc.list_value_length(cols["tests"]), 0).to_numpy()
        n_refs = pc.fill_null(pc.list_value_length(cols["reference_solutions"]), 0).to_numpy()
        tests = cols["tests"].to_pylist() if cfg.merge_tests else [None] * len(batch)
        facts = [Facts.build(id_, source, int(nt), bool(nr), date, style, entry, t)
                 for id_, source, nt, nr, date, style, entry, t in zip(
                     cols["id"].to_pylist(), cols["source"].to_pylist(), n_tests, n_refs,
                     cols["contest_date"].to_pylist(), cols["style"].to_pylist(), cols["entry_point"].to_pylist(),
                     tests, strict=True)]
        features = [self.featurize(s) for s in cols["statement"].to_pylist()]
        sketched = [i for i, x in enumerate(features) if x.shingles.size]
        mhs: list[Any] = [None] * len(batch)
        for i, mh in zip(sketched, minhashes([features[i].shingles for i in sketched], cfg.num_perm, cfg.seed),
                         strict=True):
            mhs[i] = mh
        for f, x, mh in zip(facts, features, mhs, strict=True):
            self.add(f, x, mh)

    def _reject(self, f: Facts, reason: str, evidence: dict[str, Any]) -> None:
        self.rejected[len(self.node_of_row)] = (reason, evidence)
        self.node_of_row.append(-1)
        self.per_source[f.source]["rejected"] += 1
        self.counts[f"rejected:{reason}"] += 1

    def _drop(self, node: int, reason: str, evidence: dict[str, Any]) -> None:
        row = self.row_of_node[node]
        self.rejected[row] = (reason, evidence)
        self.node_of_row[row] = -1
        self.dropped.add(node)
        self.per_source[self.facts[node].source]["rejected"] += 1
        self.counts[f"rejected:{reason}"] += 1

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

    def add(self, f: Facts, x: Features, mh: Any) -> None:
        self.per_source[f.source]["read"] += 1
        if f.id in self.seen_ids:
            self._reject(f, REASON_DUPLICATE_ID, {"duplicate_of_id": f.id})
            return
        self.seen_ids.add(f.id)
        node = self.uf.add()
        hit = self.decon.check(x, mh)
        if hit is not None:  # rejected after clustering, with its whole duplicate cluster
            self.contaminated[node] = hit.evidence(self.cfg.ngram_n)
        self.row_of_node.append(len(self.node_of_row))
        self.node_of_row.append(node)
        self.facts.append(f)
        self.shingles.append(x.shingles)
        self.keys.append(x.key)
        if x.key is None:  # nothing to compare: a statement of markup only stays a singleton
            self.counts["empty_statements"] += 1
            return
        first = self.exact.first_or_add(x.key, node)
        if first is not None:  # same normalised text: same shingles, no need to index it again
            self.uf.union(first, node)
            self.counts["exact_pairs"] += 1
            return
        for other in self.lsh.query_insert(node, mh):
            self.counts["candidate_pairs"] += 1
            if jaccard(x.shingles, self.shingles[other]) >= self.cfg.threshold:
                self.uf.union(other, node)
                self.counts["near_pairs"] += 1
