"""Writing the dedup stage's outputs: kept problems (+ rejects), clusters, stats."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash
from tqdm import tqdm

from microcoder.pipeline.dedup.representative import union_tests
from microcoder.pipeline.dedup.scan import Scanner, iter_batches
from microcoder.pipeline.inputs import judge_record
from microcoder.pipeline.io import RejectsWriter, atomic_path
from microcoder.pipeline.schema import ALIAS_TYPE, PROBLEM_SCHEMA, Problem, TestCase
from microcoder.pipeline.stage import StageStats, reason_key

STAGE = "dedup"
# Folded duplicates count as rejected (read == kept + rejected): they leave problems.parquet, so like
# every reject they are in rejects.jsonl (reason `folded_duplicate: ...`, whole record); their
# cluster is also in clusters.parquet and on the kept record's `aliases`.
FOLDED = "folded_duplicate"
ADDED_FIELDS = [pa.field("cluster_id", pa.string()), pa.field("aliases", ALIAS_TYPE)]
CLUSTERS_SCHEMA = pa.schema([
    ("cluster_id", pa.string()),
    ("kept_id", pa.string()),
    ("member_ids", pa.list_(pa.string())),  # kept first, then the aliases in rank order
    ("member_sources", pa.list_(pa.string())),
    ("size", pa.int64()),
    ("reason", pa.string()),  # exact: every member has the kept record's normalised text; near: otherwise
    ("max_similarity", pa.float64()),  # over the aliases' exact Jaccard similarity to the kept record
    ("min_similarity", pa.float64()),
    ("tests_added", pa.int64()),
])


def cluster_id_for(kept_id: str) -> str:
    """A stable cluster id: derived from the kept record's id (also for singletons)."""
    return "dd-" + xxhash.xxh3_64_hexdigest(kept_id.encode())


@dataclass
class Cluster:
    cluster_id: str
    kept: int  # node
    aliases: list[tuple[int, float]]  # (node, exact Jaccard similarity to the kept record), best first
    reason: str  # exact | near
    lenders: list[int] = field(default_factory=list)  # alias nodes whose tests may be merged
    tests_added: int = 0


def output_schema(input_schema: pa.Schema) -> pa.Schema:
    """Core columns, then the input's extra columns (minus ours), then cluster_id and aliases."""
    ours = {f.name for f in ADDED_FIELDS}
    extra = [f for f in input_schema if f.name not in PROBLEM_SCHEMA.names and f.name not in ours]
    return pa.schema(list(PROBLEM_SCHEMA) + extra + ADDED_FIELDS)


def _merge(tests: list[dict], c: Cluster, scan: Scanner, lent: dict[int, list[TestCase]]) -> list[dict]:
    base = [TestCase(t["input"], t["output"], t.get("kind") or "public", t.get("group")) for t in tests]
    for lender in c.lenders:
        added = union_tests(base, lent[scan.row_of_node[lender]])
        if added is None:
            scan.counts["merge_conflicts"] += 1
            continue
        base += added
        c.tests_added += len(added)
    return [{"input": t.input, "output": t.output, "kind": t.kind, "group": t.group} for t in base]


def folded_reason(c: Cluster, kept_id: str) -> str:
    """A folded duplicate's reject reason: its category (`folded_duplicate`), then where it went."""
    return f"{FOLDED}: {c.reason} duplicate of {kept_id} (folded into its cluster {c.cluster_id})"


def folded_rejects(scan: Scanner, clusters: list[Cluster]) -> dict[int, tuple[str, dict[str, Any]]]:
    """{input row: (reason, evidence)} of every duplicate folded into a kept record."""
    out = {}
    for c in clusters:
        kept_id = scan.facts[c.kept].id
        for node, similarity in c.aliases:
            out[scan.row_of_node[node]] = (folded_reason(c, kept_id), {
                "kept_id": kept_id, "cluster_id": c.cluster_id, "similarity": round(similarity, 6)})
    return out


def write_kept_and_rejects(files: list[Path], out: Path, schema: pa.Schema, scan: Scanner,
                           clusters: list[Cluster], lent: dict[int, list[TestCase]], batch_size: int,
                           rejects: RejectsWriter, progress: bool) -> int:
    """Pass 3: stream the input again; write kept rows to `out` (parquet, atomically) with their
    cluster columns, add every row that is not kept (rejected or folded into a cluster: whole
    record, reason, evidence) to `rejects`, in input order, and return the kept count."""
    by_kept = {c.kept: c for c in clusters}
    folded_rows = folded_rejects(scan, clusters)
    node_of_row = np.asarray(scan.node_of_row, dtype=np.int64)
    folded = np.zeros(len(scan.facts) + 1, dtype=bool)  # index -1 (rejected) lands on the extra slot
    folded[[n for c in clusters for n, _ in c.aliases]] = True
    keep = (node_of_row >= 0) & ~folded[node_of_row]
    written, start = 0, 0
    with atomic_path(out, ".parquet") as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer, \
            tqdm(total=len(node_of_row), desc="dedup: write", unit="problem", disable=not progress) as bar:
        for batch in iter_batches(files, batch_size):
            end = start + len(batch)
            for r in range(start, end):
                if r in folded_rows:
                    reason, evidence = folded_rows[r]
                    rejects.add(scan.facts[scan.node_of_row[r]].id, reason,
                                Problem.from_dict(batch.slice(r - start, 1).to_pylist()[0]), evidence=evidence)
                elif r in scan.rejected:
                    reason, evidence = scan.rejected[r]
                    row = batch.slice(r - start, 1).to_pylist()[0]
                    # a record the reader rejected is written as the reader saw it; the others as Problems
                    record = judge_record(row)[2] if r in scan.unreadable else Problem.from_dict(row)
                    rid = record.get("id") if r in scan.unreadable else record.id
                    rejects.add(rid, reason, record, **({} if evidence is None else {"evidence": evidence}))
            rows = np.flatnonzero(keep[start:end])
            if rows.size:
                writer.write_table(_conform(_with_clusters(batch, rows, start, scan, by_kept, lent), schema))
            written += rows.size
            start = end
            bar.update(len(batch))
    return written


def _with_clusters(batch: pa.RecordBatch, rows: np.ndarray, start: int, scan: Scanner,
                   by_kept: dict[int, Cluster], lent: dict[int, list[TestCase]]) -> pa.Table:
    table = pa.Table.from_batches([batch]).take(pa.array(rows, type=pa.int64()))
    nodes = [scan.node_of_row[start + r] for r in rows.tolist()]
    found = [by_kept.get(n) for n in nodes]
    ids = [scan.facts[n].id for n in nodes]
    cluster_ids = [c.cluster_id if c else cluster_id_for(i) for c, i in zip(found, ids, strict=True)]
    aliases = [[{"id": scan.facts[n].id, "source": scan.facts[n].source, "similarity": round(s, 6)}
                for n, s in c.aliases] if c else [] for c in found]
    if any(c and c.lenders for c in found):
        tests = table.column("tests").to_pylist()
        tests = [_merge(t or [], c, scan, lent) if c and c.lenders else t for t, c in zip(tests, found, strict=True)]
        table = table.set_column(table.schema.get_field_index("tests"), "tests",
                                 pa.array(tests, type=PROBLEM_SCHEMA.field("tests").type))
    for name in ("cluster_id", "aliases"):
        if name in table.column_names:
            table = table.drop_columns([name])
    table = table.append_column(ADDED_FIELDS[0], pa.array(cluster_ids, type=pa.string()))
    return table.append_column(ADDED_FIELDS[1], pa.array(aliases, type=ALIAS_TYPE))


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    cols = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def write_clusters(path: Path, scan: Scanner, clusters: list[Cluster]) -> None:
    rows = []
    for c in clusters:
        members = [c.kept] + [n for n, _ in c.aliases]
        sims = [s for _, s in c.aliases]
        rows.append({"cluster_id": c.cluster_id, "kept_id": scan.facts[c.kept].id,
                     "member_ids": [scan.facts[n].id for n in members],
                     "member_sources": [scan.facts[n].source for n in members], "size": len(members),
                     "reason": c.reason, "max_similarity": max(sims), "min_similarity": min(sims),
                     "tests_added": c.tests_added})
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(pa.Table.from_pylist(rows, schema=CLUSTERS_SCHEMA), tmp, compression="zstd")


def build_stats(scan: Scanner, clusters: list[Cluster], bench_stats: dict[str, Any]) -> StageStats:
    """The stage's stats in the shared vocabulary (unit: problems): every input row is kept or
    rejected, folded duplicates included (`folded_duplicate`); figures say how it clustered."""
    folded_nodes = {n for c in clusters for n, _ in c.aliases}
    outcome = []
    for row, node in enumerate(scan.node_of_row):
        if row in scan.rejected:
            outcome.append(reason_key(scan.rejected[row][0]))
        else:
            outcome.append(FOLDED if node in folded_nodes else "kept")
    rows = pl.DataFrame({"source": scan.row_source, "outcome": outcome}, schema={"source": pl.String,
                                                                                  "outcome": pl.String})
    stats = StageStats(unit="problems", read=rows.height, kept=int((rows["outcome"] == "kept").sum()))
    for reason, n in rows.filter(pl.col("outcome") != "kept").group_by("outcome").len().iter_rows():
        stats.reject(reason, n)
    per_source = {}
    for source, group in sorted(rows.group_by("source"), key=lambda g: g[0][0]):
        counts = dict(group.group_by("outcome").len().iter_rows())
        kept = counts.pop("kept", 0)
        per_source[source[0]] = {"read": group.height, "kept": kept, "rejected": sum(counts.values()),
                                 "rejected_by_reason": dict(sorted(counts.items()))}
    counts = scan.counts
    stats.figures = {
        "contaminated_via_duplicates": counts["contaminated_via_duplicates"],
        "contaminated_by_benchmark": {k.split(":", 1)[1]: v for k, v in sorted(counts.items())
                                      if k.startswith("contaminated:")},
        "clusters": len(clusters),
        "clusters_exact": sum(c.reason == "exact" for c in clusters),
        "clusters_near": sum(c.reason == "near" for c in clusters),
        "largest_cluster": max((1 + len(c.aliases) for c in clusters), default=1),
        "tests_added": 0,  # filled in by the write pass
        "merge_conflicts": 0,
        "empty_statements": counts["empty_statements"],
        "pairs": {"exact": counts["exact_pairs"], "lsh_candidates": counts["candidate_pairs"],
                  "near_verified": counts["near_pairs"], "near_kept_apart": counts["near_pairs_kept_apart"]},
        "lsh": {"bands": scan.lsh.bands, "rows": scan.lsh.rows},
        "benchmarks": bench_stats,
        "per_source": per_source,
    }
    if stats.rejected_by_reason.get(FOLDED, 0) != len(folded_nodes):
        raise RuntimeError(f"dedup accounting is off: {len(folded_nodes)} folded duplicates, "
                           f"{stats.rejected_by_reason.get(FOLDED, 0)} counted")
    return stats
