"""`DedupConfig`: the `dedup` section of params.yaml (plus `executor` / `ray_address`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from microcoder.pipeline.dedup.decontaminate import BenchmarkSpec, DecontaminationSettings
from microcoder.pipeline.dedup.minhash import SHINGLE_KINDS
from microcoder.pipeline.executor import ExecutionFields

DEFAULT_BENCHMARKS = [{"name": "seed-benchmark", "path": "data/seed/benchmark.jsonl", "format": "problems"}]


@dataclass
class DedupConfig(ExecutionFields):
    """executor=ray computes signatures, LSH buckets and pair checks on a Ray cluster; the clusters,
    kept problems and rejects are the same as with executor=local (docs/dedup.md, "On Ray")."""

    shingle_kind: str = field(default="word", metadata={
        "help": "word | char: shingles are word n-grams or character n-grams of the normalised statement."})
    shingle_size: int = field(default=5, metadata={"help": "Shingle length (words or characters)."})
    num_perm: int = field(default=128, metadata={"help": "MinHash permutations per signature."})
    threshold: float = field(default=0.7, metadata={
        "help": "Near-duplicate threshold on the exact Jaccard similarity of shingle sets (LSH bands/rows "
                "come from it)."})
    lsh_false_negative_weight: float = field(default=0.9, metadata={
        "help": "Weight of LSH false negatives vs false positives when datasketch picks bands x rows; "
                "candidates are verified exactly, so leaning to recall only costs set intersections."})
    seed: int = field(default=1, metadata={"help": "MinHash permutation seed (same seed, same clusters)."})
    mask_digits: bool = field(default=True, metadata={
        "help": "Replace every digit run by 0 before hashing (statements differing only in sample values "
                "or constants match)."})
    mask_variables: bool = field(default=True, metadata={
        "help": "Map every single-letter token (n, m, a_i...) to one placeholder before hashing "
                "(statements whose variables were renamed match)."})
    source_priority: list[str] = field(default_factory=list, metadata={
        "help": "Sources in order of preference for the kept record (after test count and reference "
                "solutions; before date and id)."})
    merge_tests: bool = field(default=False, metadata={
        "help": "Append an alias's distinct tests to the kept record when their public tests agree."})
    benchmarks: list[Any] = field(default_factory=lambda: [dict(b) for b in DEFAULT_BENCHMARKS], metadata={
        "help": "Benchmarks to decontaminate against: list of {name, path, format: problems|livecodebench, "
                "date_from, date_to, split, data_files, optional}."})
    ngram_n: int = field(default=13, metadata={"help": "Word n-gram length for benchmark overlap."})
    ngram_min_overlap: float = field(default=0.5, metadata={
        "help": ">= 1: shared n-gram count that marks contamination; < 1: fraction of the benchmark "
                "problem's n-grams found in the training problem."})
    contamination_minhash_threshold: float = field(default=0.5, metadata={
        "help": "Exact shingle Jaccard with a benchmark problem (LSH candidates) that marks contamination."})
    batch_size: int = field(default=512, metadata={"help": "Problems per streamed parquet batch."})
    ray_block_size: int = field(default=2000, metadata={
        "help": "executor=ray: problems per Ray Data block (each block is one signature task)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        errs = []
        if self.shingle_kind not in SHINGLE_KINDS:
            errs.append(f"shingle_kind must be one of {list(SHINGLE_KINDS)}, got {self.shingle_kind!r}")
        for name in ("shingle_size", "ngram_n", "batch_size", "ray_block_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                errs.append(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if not isinstance(self.num_perm, int) or self.num_perm < 16:
            errs.append(f"num_perm must be an integer >= 16, got {self.num_perm!r}")
        for name in ("threshold", "contamination_minhash_threshold"):
            if not 0 < getattr(self, name) <= 1:
                errs.append(f"{name} must be in (0, 1], got {getattr(self, name)!r}")
        if not 0 <= self.lsh_false_negative_weight <= 1:
            errs.append(f"lsh_false_negative_weight must be in [0, 1], got {self.lsh_false_negative_weight!r}")
        if not self.ngram_min_overlap > 0:
            errs.append(f"ngram_min_overlap must be > 0, got {self.ngram_min_overlap!r}")
        if not isinstance(self.source_priority, list) or not all(isinstance(s, str) for s in self.source_priority):
            errs.append(f"source_priority must be a list of source names, got {self.source_priority!r}")
        if not isinstance(self.benchmarks, list):
            errs.append(f"benchmarks must be a list, got {type(self.benchmarks).__name__}")
        else:
            try:
                specs = [BenchmarkSpec.from_params(b) for b in self.benchmarks]
                names = [s.name for s in specs]
                if len(set(names)) != len(names):
                    errs.append(f"benchmark names must be unique, got {names}")
            except (ValueError, TypeError) as e:
                errs.append(str(e))
        if errs:
            raise ValueError("invalid dedup params: " + "; ".join(errs))

    def benchmark_specs(self) -> list[BenchmarkSpec]:
        return [BenchmarkSpec.from_params(b) for b in self.benchmarks]

    def decontamination(self) -> DecontaminationSettings:
        return DecontaminationSettings(
            ngram_n=self.ngram_n, ngram_min_overlap=self.ngram_min_overlap,
            minhash_threshold=self.contamination_minhash_threshold, shingle_kind=self.shingle_kind,
            shingle_size=self.shingle_size, num_perm=self.num_perm, seed=self.seed, mask_digits=self.mask_digits,
            mask_variables=self.mask_variables,
            lsh_false_negative_weight=self.lsh_false_negative_weight)
