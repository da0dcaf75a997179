"""Deduplication stage: exact + MinHash LSH near-duplicate clustering and benchmark decontamination.

See `stage.run_dedup` for the passes and outputs, `representative` for which record is kept,
`decontaminate` for the benchmark checks and `normalize` for what counts as the same text.
"""

from pipeline.dedup.config import DedupConfig
from pipeline.dedup.decontaminate import (
    BenchmarkItem,
    BenchmarkSpec,
    Contamination,
    Decontaminator,
    load_benchmark,
)
from pipeline.dedup.normalize import normalize_statement, tokenize
from pipeline.dedup.stage import run_dedup

__all__ = [
    "BenchmarkItem",
    "BenchmarkSpec",
    "Contamination",
    "DedupConfig",
    "Decontaminator",
    "load_benchmark",
    "normalize_statement",
    "run_dedup",
    "tokenize",
]
