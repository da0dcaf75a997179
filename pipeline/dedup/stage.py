"""The dedup stage: decontaminate, cluster exact and near duplicates, keep one record per cluster.

Streaming passes over the input shards (whole problems are never all in memory):

1. scan (`scan.Scanner`): normalise, shingle and sketch each statement; reject repeated ids and
   benchmark copies; union problems with equal exact keys, and LSH candidate pairs whose exact
   shingle Jaccard is >= threshold.
2. only with `merge_tests`: gather the tests of the aliases allowed to lend theirs.
3. write (`outputs`): stream the input again; kept problems get `cluster_id` and `aliases`.

Every input problem ends up kept (problems.parquet), folded into a kept one as an alias
(clusters.parquet) or rejected (rejects.jsonl, with a reason and evidence); stats.json says how
many of each, overall and per source, and the stage fails rather than write numbers that do not
add up.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm import tqdm

from pipeline.config import settings_record
from pipeline.dedup.config import DedupConfig
from pipeline.dedup.decontaminate import Decontaminator, load_benchmark
from pipeline.dedup.minhash import jaccard
from pipeline.dedup.outputs import (
    Cluster,
    build_stats,
    cluster_id_for,
    output_schema,
    write_clusters,
    write_kept_and_rejects,
)
from pipeline.dedup.representative import can_merge_tests, order_members
from pipeline.dedup.scan import SCAN_COLUMNS, Scanner, input_files, input_schema, iter_batches
from pipeline.io import write_json, write_jsonl
from pipeline.schema import TestCase

log = logging.getLogger(__name__)

OUT_PROBLEMS, OUT_CLUSTERS, OUT_REJECTS, OUT_STATS = "problems.parquet", "clusters.parquet", "rejects.jsonl", "stats.json"


def build_clusters(scan: Scanner, cfg: DedupConfig) -> list[Cluster]:
    """One Cluster per union-find set of two or more problems (none of them contaminated), kept
    record chosen by rank. Contaminated problems and their duplicates are rejected first."""
    clusters = []
    for members in scan.settle_contamination().values():
        ordered = order_members(members, scan.facts, cfg.source_priority)
        kept = ordered[0]
        same = [scan.keys[n] == scan.keys[kept] for n in ordered[1:]]
        aliases = [(n, 1.0 if eq else jaccard(scan.shingles[n], scan.shingles[kept]))
                   for n, eq in zip(ordered[1:], same, strict=True)]
        lenders = [n for n in ordered[1:] if can_merge_tests(scan.facts[kept], scan.facts[n])] if cfg.merge_tests else []
        clusters.append(Cluster(cluster_id_for(scan.facts[kept].id), kept, aliases,
                                "exact" if all(same) else "near", lenders))
    return sorted(clusters, key=lambda c: scan.facts[c.kept].id)


def load_decontaminator(cfg: DedupConfig) -> tuple[Decontaminator, dict[str, Any]]:
    """The index over every configured benchmark (inside its date window), and load stats."""
    items, stats = [], {}
    for spec in cfg.benchmark_specs():
        loaded, stats[spec.name] = load_benchmark(spec)
        items += loaded
    return Decontaminator(items, cfg.decontamination()), stats


def _gather_tests(files: list[Path], rows: set[int], cfg: DedupConfig) -> dict[int, list[TestCase]]:
    """Tests of the given input rows (the aliases that lend tests), read with one column."""
    tests: dict[int, list[TestCase]] = {}
    row = 0
    for batch in iter_batches(files, cfg.batch_size, columns=["tests"]):
        for i, t in enumerate(batch.column("tests").to_pylist()):
            if row + i in rows:
                tests[row + i] = [TestCase(x["input"], x["output"], x.get("kind") or "public") for x in t or []]
        row += len(batch)
    return tests


def run_dedup(input_path: str | Path, output_dir: str | Path, cfg: DedupConfig | None = None) -> dict[str, Any]:
    """Run the stage: read problems from `input_path` (parquet file or shard folder), write
    problems.parquet, clusters.parquet, rejects.jsonl and stats.json under `output_dir`;
    return the stats."""
    cfg = cfg or DedupConfig()
    input_path, output_dir = Path(input_path), Path(output_dir)
    files = input_files(input_path)
    schema = output_schema(input_schema(files))
    total = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    decon, bench_stats = load_decontaminator(cfg)

    scan = Scanner(cfg, decon)
    with tqdm(total=total, desc="dedup: scan", unit="problem", disable=not cfg.progress) as bar:
        for batch in iter_batches(files, cfg.batch_size, columns=SCAN_COLUMNS):
            scan.add_batch(batch)
            bar.update(len(batch))
    clusters = build_clusters(scan, cfg)
    stats = build_stats(scan, clusters, bench_stats)

    lender_rows = {scan.row_of_node[n] for c in clusters for n in c.lenders}
    lent = _gather_tests(files, lender_rows, cfg) if lender_rows else {}
    written, rejects = write_kept_and_rejects(files, output_dir / OUT_PROBLEMS, schema, scan, clusters, lent,
                                              cfg.batch_size, cfg.progress)
    if written != stats["kept"] or len(rejects) != stats["rejected"]:
        raise RuntimeError(f"dedup wrote {written} problems and {len(rejects)} rejects, expected "
                           f"{stats['kept']} and {stats['rejected']}")
    stats["tests_added"] = sum(c.tests_added for c in clusters)
    stats["merge_conflicts"] = scan.counts["merge_conflicts"]
    stats["config"] = settings_record(cfg)  # the effective settings (`--set` included), for the dataset card
    write_clusters(output_dir / OUT_CLUSTERS, scan, clusters)
    write_jsonl(output_dir / OUT_REJECTS, rejects)
    write_json(output_dir / OUT_STATS, stats)
    log.info("dedup: read %d, kept %d, folded %d, rejected %d", stats["read"], stats["kept"],
             stats["duplicates_folded"], stats["rejected"])
    return stats
