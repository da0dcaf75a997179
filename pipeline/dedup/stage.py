"""The dedup stage: decontaminate, cluster exact and near duplicates, keep one record per cluster.

Streaming passes over the input shards (whole problems are never all in memory):

1. scan (`scan.Scanner`; with executor=ray `ray_scan.ray_scan`, same result): judge each record
   (tolerant reader rule), normalise, shingle and sketch each statement; reject repeated ids and
   benchmark copies; union problems with equal exact keys, and LSH candidate pairs whose exact
   shingle Jaccard is >= threshold.
2. only with `merge_tests`: gather the tests of the aliases allowed to lend theirs.
3. write (`outputs`): stream the input again; kept problems get `cluster_id` and `aliases`.

Every input problem ends up kept (problems.parquet) or rejected (rejects.jsonl, with a reason and
evidence): a duplicate folded into a kept one as an alias is a reject too (`folded_duplicate: ...`;
its cluster is also in clusters.parquet). stats.json says how many of each, overall and per source
(settings.json holds the settings), and the stage fails rather than write numbers that do not add up.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm import tqdm

from microcoder.pipeline.dedup.config import DedupConfig
from microcoder.pipeline.dedup.decontaminate import BenchmarkItem, Decontaminator, load_benchmark
from microcoder.pipeline.dedup.minhash import jaccard
from microcoder.pipeline.dedup.outputs import (
    Cluster,
    build_stats,
    cluster_id_for,
    output_schema,
    write_clusters,
    write_kept_and_rejects,
)
from microcoder.pipeline.dedup.representative import can_merge_tests, order_members
from microcoder.pipeline.dedup.scan import Scanner, input_files, input_schema, iter_batches
from microcoder.pipeline.schema import TestCase
from microcoder.pipeline.stage import Stage, StageContext

log = logging.getLogger(__name__)

OUT_PROBLEMS, OUT_CLUSTERS, OUT_REJECTS = "problems.parquet", "clusters.parquet", "rejects.jsonl"


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


def load_benchmarks(cfg: DedupConfig) -> tuple[list[BenchmarkItem], dict[str, Any]]:
    """Every configured benchmark's problems (inside its date window), and load stats."""
    items, stats = [], {}
    for spec in cfg.benchmark_specs():
        loaded, stats[spec.name] = load_benchmark(spec)
        items += loaded
    return items, stats


def _gather_tests(files: list[Path], rows: set[int], cfg: DedupConfig) -> dict[int, list[TestCase]]:
    """Tests of the given input rows (the aliases that lend tests), read with one column."""
    tests: dict[int, list[TestCase]] = {}
    row = 0
    for batch in iter_batches(files, cfg.batch_size, columns=["tests"]):
        for i, t in enumerate(batch.column("tests").to_pylist()):
            if row + i in rows:
                tests[row + i] = [TestCase(x["input"], x["output"], x.get("kind") or "public", x.get("group")) for x in t or []]
        row += len(batch)
    return tests


def scan_input(files: list[Path], cfg: DedupConfig, progress: bool = False) -> tuple[Scanner, dict[str, Any]]:
    """Pass 1 on the configured executor: the filled Scanner and the benchmarks' load stats."""
    items, bench_stats = load_benchmarks(cfg)
    if cfg.executor == "ray":
        from microcoder.pipeline.dedup.ray_scan import ray_scan

        scan = Scanner(cfg, Decontaminator([], cfg.decontamination()))  # the actors hold the real index
        ray_scan(files, cfg, items, scan, progress)
        return scan, bench_stats
    log.info("dedup: executor local, 1 process")
    scan = Scanner(cfg, Decontaminator(items, cfg.decontamination()))
    total = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    with tqdm(total=total, desc="dedup: scan", unit="problem", disable=not progress) as bar:
        for batch in iter_batches(files, cfg.batch_size):
            scan.add_rows(batch.to_pylist())
            bar.update(len(batch))
    return scan, bench_stats


class Dedup(Stage):
    """Read problems from a parquet file or shard folder, write problems.parquet, clusters.parquet,
    rejects.jsonl, stats.json and settings.json. The shards are streamed (`load` passes their
    files on), so the scanner, not the base, judges each record by the tolerant reader's rule."""

    name = "dedup"
    config = DedupConfig

    def load(self, problems: str | Path, ctx: StageContext) -> list[Path]:
        return input_files(Path(problems))

    def process(self, files: list[Path], ctx: StageContext) -> None:
        cfg, out_dir = ctx.cfg, ctx.out_dir
        schema = output_schema(input_schema(files))
        t0 = time.perf_counter()
        scan, bench_stats = scan_input(files, cfg, ctx.progress)
        log.info("dedup: scan (%s) %.1fs", cfg.executor, time.perf_counter() - t0)
        clusters = build_clusters(scan, cfg)
        stats = ctx.stats = build_stats(scan, clusters, bench_stats)

        lender_rows = {scan.row_of_node[n] for c in clusters for n in c.lenders}
        lent = _gather_tests(files, lender_rows, cfg) if lender_rows else {}
        written = write_kept_and_rejects(files, out_dir / OUT_PROBLEMS, schema, scan, clusters, lent,
                                         cfg.batch_size, ctx.rejects, ctx.progress)
        if written != stats.kept or len(ctx.rejects) != stats.rejected:
            raise RuntimeError(f"dedup wrote {written} problems and {len(ctx.rejects)} rejects, expected "
                               f"{stats.kept} and {stats.rejected}")
        stats.figures["tests_added"] = sum(c.tests_added for c in clusters)
        stats.figures["merge_conflicts"] = scan.counts["merge_conflicts"]
        write_clusters(out_dir / OUT_CLUSTERS, scan, clusters)
        return None

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> dict[str, Any]:
        log.info("dedup: read %d, kept %d, rejected %d %s", stats["read"], stats["kept"], stats["rejected"],
                 stats["rejected_by_reason"])
        return stats
