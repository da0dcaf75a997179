"""Dedup with executor=ray on a real local Ray cluster: the same clusters, kept problems, rejects and
stats as executor=local, on the seed corpus with planted duplicates (no mocks of Ray)."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from pathlib import Path

import pyarrow as pa
import pytest

from microcoder.pipeline.dedup import Dedup, DedupConfig
from microcoder.pipeline.dedup.ray_scan import bucket_pairs
from microcoder.pipeline.inputs import load_problems
from microcoder.pipeline.io import read_table, write_problems
from microcoder.pipeline.schema import Problem

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "seed" / "problems.jsonl"
SEED_BENCH = ROOT / "data" / "seed" / "benchmark.jsonl"


def _corpus() -> list[Problem]:
    """The seed problems (tolerant reader) plus planted duplicates of every kind: exact copies in
    other markup, reworded near copies, a near copy of the benchmark copy, a repeated id."""
    seed = load_problems(SEED).problems
    out = list(seed)
    for n, p in enumerate(seed[::4]):
        # markdown emphasis and other whitespace normalise away: an exact duplicate
        out.append(dataclasses.replace(p, id=f"mirror/{n}", source="mirror",
                                       statement="**" + p.statement.replace("\n", "\n\n") + "**"))
    for n, p in enumerate(seed[1::6]):
        # the last sentence dropped and the numbers changed: a near duplicate (or not, for short ones)
        text = re.sub(r"\d+", "7", p.statement.rsplit(".", 2)[0] + ".")
        out.append(dataclasses.replace(p, id=f"reworded/{n}", source="reworded", statement=text))
    copy = next(p for p in seed if p.meta.get("planted") == "benchmark_copy")
    out.append(dataclasses.replace(copy, id="reworded/bench-copy", source="reworded",
                                   statement=copy.statement.replace("caretaker", "janitor", 1) + " Good luck!"))
    out.append(dataclasses.replace(seed[3], statement="Another problem that reuses an id."))
    return out


def _run(tmp_path: Path, name: str, **cfg) -> tuple[Path, dict]:
    inp = tmp_path / "raw.parquet"
    if not inp.exists():
        write_problems(inp, _corpus())
    out = tmp_path / name
    # strict benchmark thresholds, so the reworded benchmark copy is caught only through its duplicate
    config = DedupConfig(batch_size=16, merge_tests=True, ray_block_size=20, ngram_min_overlap=0.6,
                         contamination_minhash_threshold=0.6, benchmarks=[
        {"name": "seed-benchmark", "path": str(SEED_BENCH), "format": "problems"}], **cfg)
    return out, Dedup().run(config, inp, out, progress=False)


@pytest.mark.skipif(not SEED.exists(), reason="data/seed corpus not present")
def test_ray_gives_the_clusters_kept_problems_and_rejects_of_local(tmp_path, ray_cluster, caplog):
    local_out, local = _run(tmp_path, "local")
    with caplog.at_level(logging.INFO):
        ray_out, on_ray = _run(tmp_path, "ray", executor="ray")
    assert re.search(r"dedup: executor ray, \d+ CPUs on \d+ node", caplog.text)  # which executor, how many workers
    assert re.search(r"in [3-9] blocks", caplog.text), "the input should be spread over several blocks"

    # The input is worth deduplicating: every kind of outcome occurs.
    assert local["clusters_exact"] >= 5 and local["clusters_near"] >= 4
    assert local["contaminated_via_duplicates"] >= 1
    assert local["rejected_by_reason"]["duplicate id"] == 1
    assert local["pairs"]["lsh_candidates"] > local["pairs"]["near_verified"] > 0

    for name in ("problems.parquet", "clusters.parquet"):
        assert read_table(ray_out / name).equals(read_table(local_out / name)), name
    assert (ray_out / "rejects.jsonl").read_text() == (local_out / "rejects.jsonl").read_text()
    assert on_ray == local  # same counts, same candidate pairs, same per-source outcomes
    settings = json.loads((ray_out / "settings.json").read_text())
    assert settings["executor"] == "ray" and json.loads((local_out / "settings.json").read_text())["executor"] == "local"


def _part(*buckets: tuple[int, list[tuple[int, list[int]]]]) -> pa.Table:
    """A shuffle partition holding the given (band, members) buckets, rows in no particular order."""
    rows = [(band, keys[band], node, keys) for band, members in buckets for node, keys in members]
    rows = rows[::-1]
    return pa.table({"band": [r[0] for r in rows], "key": [r[1] for r in rows], "node": [r[2] for r in rows],
                     "earlier": [r[3][:r[0]] for r in rows]})


def test_a_pair_sharing_several_bands_comes_out_of_its_first_shared_band_only():
    # nodes 0 and 2 share bands 0 and 2; nodes 1 and 2 share band 2 only; node 3 shares nothing
    keys = {0: [5, 1, 9], 1: [6, 2, 9], 2: [5, 3, 9], 3: [8, 4, 7]}
    first = bucket_pairs(_part((0, [(2, keys[2]), (0, keys[0])])))
    assert first.to_pylist() == [{"a": 0, "b": 2}]
    # one partition with several buckets: band 2's bucket {0, 1, 2}, singletons of band 1 and node 3
    mixed = bucket_pairs(_part((2, [(0, keys[0]), (1, keys[1]), (2, keys[2])]), (1, [(0, keys[0])]),
                               (1, [(1, keys[1])]), (2, [(3, keys[3])])))
    assert mixed.to_pylist() == [{"a": 0, "b": 1}, {"a": 1, "b": 2}]  # (0, 2) came out of band 0
    assert bucket_pairs(_part((1, [(1, keys[1])]))).num_rows == 0


def test_an_input_without_problems_needs_no_ray_job(tmp_path, ray_cluster):
    inp = tmp_path / "empty.parquet"
    write_problems(inp, [])
    stats = Dedup().run(DedupConfig(executor="ray", benchmarks=[]), inp, tmp_path / "out", progress=False)
    assert (stats["read"], stats["kept"], stats["rejected"]) == (0, 0, 0)
    assert read_table(tmp_path / "out" / "problems.parquet").num_rows == 0
