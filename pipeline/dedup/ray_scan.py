"""Pass 1 of the dedup stage on a Ray cluster (executor=ray), with the same result as one process.

The driver streams the input and judges every record (tolerant reader rule); the heavy work runs
in two Ray Data jobs:

1. signatures: blocks of (row, statement) go to a pool of actors, each holding the benchmark index
   (built once per actor); per statement they return its shingle set, exact key, LSH band keys and
   benchmark match (`Sketcher`). The result stays materialised in the object store; the driver
   fetches what the registration needs and registers the problems in input order (repeated ids,
   exact keys, benchmark matches: `Scanner.register`), which decides which problems go to the LSH.
2. LSH banding as a grouped shuffle: one row per (LSH problem, band), made in the cluster from the
   stored band keys (`band_rows`), grouped by a hash of (band, band key) so that every bucket lands
   whole in one partition; a bucket of two or more problems emits its pairs, each pair only in the
   first band the two share, so every candidate pair appears once (`bucket_pairs`); then the exact
   Jaccard of each pair, against the shingle sets broadcast once through the object store
   (`verify_pairs`).

The driver unions the verified pairs (`Scanner.add_pair`). Candidate pairs are exactly those the
local index proposes (same band keys, same exact-key shortcut), and union-find gives a partition
that does not depend on the order of unions, so clusters, kept problems, rejects and stats are
those of executor=local for the same seed.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from microcoder.pipeline.dedup.config import DedupConfig
from microcoder.pipeline.dedup.decontaminate import BenchmarkItem, Decontaminator
from microcoder.pipeline.dedup.features import Featurizer
from microcoder.pipeline.dedup.minhash import CandidateIndex, jaccard, minhashes
from microcoder.pipeline.dedup.scan import Scanner, iter_batches, source_of
from microcoder.pipeline.inputs import judge_record

log = logging.getLogger(__name__)
FEATURES_SCHEMA = pa.schema([("i", pa.int64()), ("shingles", pa.binary()), ("key", pa.binary()),
                             ("bands", pa.list_(pa.int64())), ("evidence", pa.string())])
PAIRS_SCHEMA = pa.schema([("a", pa.int64()), ("b", pa.int64())])


class Sketcher:
    """Ray Data actor: statements -> shingles, exact key, band keys, benchmark evidence (json)."""

    def __init__(self, cfg: DedupConfig, items: Any):
        import ray

        items = ray.get(items) if isinstance(items, ray.ObjectRef) else items
        self.cfg = cfg
        self.featurize = Featurizer(cfg.shingle_kind, cfg.shingle_size, cfg.mask_digits, cfg.mask_variables)
        self.decon = Decontaminator(items, cfg.decontamination())
        self.index = CandidateIndex(cfg.threshold, cfg.num_perm, cfg.lsh_false_negative_weight)

    def __call__(self, batch: pa.Table) -> pa.Table:
        cfg = self.cfg
        features = [self.featurize(s) for s in batch.column("statement").to_pylist()]
        sketched = [n for n, x in enumerate(features) if x.shingles.size]
        mhs: list[Any] = [None] * len(features)
        for n, mh in zip(sketched, minhashes([features[n].shingles for n in sketched], cfg.num_perm, cfg.seed),
                         strict=True):
            mhs[n] = mh
        hits = [self.decon.check(x, mh) for x, mh in zip(features, mhs, strict=True)]
        return pa.table({
            "i": batch.column("i"),
            "shingles": [x.shingles.tobytes() for x in features],
            "key": [x.key for x in features],
            "bands": [None if mh is None else self.index.band_ints(mh).tolist() for mh in mhs],
            "evidence": [None if h is None else json.dumps(h.evidence(cfg.ngram_n)) for h in hits],
        }, schema=FEATURES_SCHEMA)


def bucket_pairs(part: pa.Table) -> pa.Table:
    """The candidate pairs (a < b) of one shuffle partition, which holds whole LSH buckets: in each
    bucket of two or more problems, the pairs that share no earlier band (so each pair once)."""
    if part.num_rows < 2:
        return PAIRS_SCHEMA.empty_table()
    band, key = part.column("band").to_numpy(), part.column("key").to_numpy()
    node = part.column("node").to_numpy()
    earlier = part.column("earlier").combine_chunks()  # row r's keys: values[offsets[r]:offsets[r + 1]]
    offsets = earlier.offsets.to_numpy()
    values = np.asarray(earlier.values.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.lexsort((node, key, band))  # by bucket, then node
    band, key, node = band[order], key[order], node[order]
    starts = np.flatnonzero(np.r_[True, (band[1:] != band[:-1]) | (key[1:] != key[:-1]), True])
    a, b = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for lo, hi in zip(starts[:-1], starts[1:], strict=True):
        if hi - lo < 2:  # most buckets hold one problem
            continue
        # the members' keys of the bands before this one (a bucket's rows all have band[lo] of them)
        first = np.stack([values[offsets[r]:offsets[r] + band[lo]] for r in order[lo:hi]])
        for i in range(lo, hi - 1):
            later = np.flatnonzero(~(first[i + 1 - lo:] == first[i - lo]).any(axis=1)) + i + 1
            a.append(np.full(later.size, node[i], dtype=np.int64))
            b.append(node[later])
    return pa.table({"a": np.concatenate(a), "b": np.concatenate(b).astype(np.int64)}, schema=PAIRS_SCHEMA)


def verify_pairs(pairs: pa.Table, packed: Any, threshold: float) -> pa.Table:
    """Each candidate pair with `near`: the exact Jaccard of its shingle sets >= threshold."""
    import ray

    flat, offsets = ray.get(packed) if isinstance(packed, ray.ObjectRef) else packed
    near = [jaccard(flat[offsets[a]:offsets[a + 1]], flat[offsets[b]:offsets[b + 1]]) >= threshold
            for a, b in zip(pairs.column("a").to_numpy(), pairs.column("b").to_numpy(), strict=True)]
    return pairs.append_column("near", pa.array(near, type=pa.bool_()))


def _blocks(table: pa.Table, size: int) -> list[pa.Table]:
    return [table.slice(start, size) for start in range(0, table.num_rows, size)] or [table]


def ray_scan(files: list[Path], cfg: DedupConfig, items: list[BenchmarkItem], scan: Scanner,
             progress: bool) -> dict[str, Any]:
    """Fill `scan` as `Scanner.add_rows` over the whole input would, with the work on Ray; returns
    what ran where (for the log and stats)."""
    from microcoder.pipeline.executor import ray_init

    ray = ray_init(cfg.ray_address)
    ctx = ray.data.DataContext.get_current()
    # The sort-based shuffle: the hash shuffle starts its own aggregator actors for every job
    # (seconds each on a small input, and CPUs a small cluster lacks). Both settings are put back.
    saved = ctx.enable_progress_bars, ctx.shuffle_strategy
    ctx.enable_progress_bars, ctx.shuffle_strategy = progress, ray.data.context.ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    try:
        return _ray_scan(ray, files, cfg, items, scan)
    finally:
        ctx.enable_progress_bars, ctx.shuffle_strategy = saved


def _ray_scan(ray: Any, files: list[Path], cfg: DedupConfig, items: list[BenchmarkItem], scan: Scanner) -> dict[str, Any]:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))

    # The driver judges records (cheap, in order) and keeps their Facts; statements go to the cluster.
    entries: list[tuple[Any, Any]] = []  # (Facts, statement index) or (None, (source, reason))
    statements: list[str] = []
    for batch in iter_batches(files, cfg.batch_size):
        for row in batch.to_pylist():
            p, reason, _ = judge_record(row)
            if p is None:
                entries.append((None, (source_of(row), reason)))
            else:
                entries.append((scan.facts_of(p), len(statements)))
                statements.append(p.statement)
    blocks = _blocks(pa.table({"i": pa.array(range(len(statements)), type=pa.int64()),
                               "statement": pa.array(statements, type=pa.string())}), cfg.ray_block_size)
    log.info("dedup: executor ray, %d CPUs on %d node(s); %d statements in %d blocks", cpus, nodes,
             len(statements), len(blocks))

    t0 = time.perf_counter()
    features, table = None, FEATURES_SCHEMA.empty_table()
    if statements:
        # one actor per CPU at most (each builds the benchmark index once), one block per call
        pool = ray.data.ActorPoolStrategy(min_size=1, max_size=min(cpus, len(blocks)))
        features = ray.data.from_arrow(blocks).map_batches(
            Sketcher, fn_constructor_args=(cfg, items), batch_format="pyarrow", batch_size=None, compute=pool,
            num_cpus=1).materialize()  # the band keys stay in the cluster for the shuffle
        table = pa.concat_tables(ray.get(features.to_arrow_refs()), promote_options="default").sort_by("i")
    shingles = [np.frombuffer(s, dtype=np.uint32) for s in table.column("shingles").to_pylist()]
    keys, evidence = table.column("key").to_pylist(), table.column("evidence").to_pylist()

    lsh_node = np.full(len(statements), -1, dtype=np.int64)  # statement -> its node when it goes to the LSH
    for facts, where in entries:
        if facts is None:
            scan.reject_record(*where)
            continue
        ev = evidence[where]
        node = scan.register(facts, shingles[where], keys[where], lambda ev=ev: None if ev is None else json.loads(ev))
        if node is not None:
            lsh_node[where] = node

    t1 = time.perf_counter()
    pairs = _candidate_pairs(ray, features, lsh_node, scan, cfg, cpus) if (lsh_node >= 0).sum() > 1 else []
    for a, b, near in pairs:
        scan.add_pair(a, b, near)
    log.info("dedup on ray: signatures + registration %.1fs, LSH buckets + pair checks %.1fs (%d candidate pairs)",
             t1 - t0, time.perf_counter() - t1, len(pairs))
    return {"executor": "ray", "cpus": cpus, "nodes": nodes, "blocks": len(blocks)}


def band_rows(batch: pa.Table, lsh_node: Any, n_bands: int, partitions: int) -> pa.Table:
    """One row per (LSH problem, band): band, band key, node, the node's keys of the bands before
    this one (`earlier`: to emit a pair only from the first band it shares), and the shuffle
    partition of its bucket (a hash of band and key, so a bucket is never split)."""
    import ray

    lsh_node = ray.get(lsh_node) if isinstance(lsh_node, ray.ObjectRef) else lsh_node
    node = lsh_node[batch.column("i").to_numpy()]
    keep = np.flatnonzero(node >= 0)
    bands = batch.column("bands").take(pa.array(keep, type=pa.int64()))
    keys = np.asarray(bands.combine_chunks().flatten().to_numpy(zero_copy_only=False), dtype=np.int64)
    keys = keys.reshape(len(keep), n_bands)
    band = np.tile(np.arange(n_bands, dtype=np.int64), len(keep))
    before = np.concatenate([np.arange(k) for k in range(n_bands)]).astype(np.int64)  # bands 0..k-1 for each k
    offsets = np.concatenate([[0], np.cumsum(band)])
    with np.errstate(over="ignore"):
        bucket = keys.reshape(-1).view(np.uint64) + band.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return pa.table({
        "part": (bucket % np.uint64(partitions)).astype(np.int64),
        "band": band,
        "key": keys.reshape(-1),
        "node": np.repeat(node[keep], n_bands),
        "earlier": pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), pa.array(keys[:, before].reshape(-1))),
    })


def _candidate_pairs(ray: Any, features: Any, lsh_node: np.ndarray, scan: Scanner, cfg: DedupConfig,
                     cpus: int) -> list[tuple[int, int, bool]]:
    """(a, b, near) for every LSH candidate pair, sorted: banding and checks on the cluster. The
    driver sends the LSH mask and the shingle sets (once, through the object store)."""
    n_bands = scan.lsh.bands
    sizes = np.array([s.size for s in scan.shingles], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    flat = np.concatenate(scan.shingles).astype(np.uint32) if scan.shingles else np.zeros(0, np.uint32)
    packed = ray.put((flat, offsets))
    # Buckets are shuffled in partitions of whole buckets (grouped by a hash of band and key),
    # and each partition finds its buckets' pairs with numpy: grouping by the bucket itself would
    # call Python once per bucket, nearly one per (problem, band). Ray's default of 200 partitions
    # costs seconds on a small input: about one per block of problems, at least one per CPU.
    partitions = max(cpus, features.num_blocks())
    checked = (features.map_batches(band_rows, fn_args=(ray.put(lsh_node), n_bands, partitions),
                                    batch_format="pyarrow", batch_size=None, num_cpus=1)
               .groupby("part", num_partitions=partitions)
               .map_groups(bucket_pairs, batch_format="pyarrow")
               .map_batches(verify_pairs, fn_args=(packed,), fn_kwargs={"threshold": cfg.threshold},
                            batch_format="pyarrow", num_cpus=1))
    out = [(a, b, near) for batch in checked.iter_batches(batch_format="pyarrow", batch_size=None)
           for a, b, near in zip(batch.column("a").to_pylist(), batch.column("b").to_pylist(),
                                 batch.column("near").to_pylist(), strict=True)]
    return sorted(out)
