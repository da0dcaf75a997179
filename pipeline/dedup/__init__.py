"""Deduplication stage: exact + MinHash LSH near-duplicate clustering and benchmark decontamination.

See `stage.Dedup` for the passes and outputs, `representative` for which record is kept,
`decontaminate` for the benchmark checks and `normalize` for what counts as the same text.
"""

from microcoder.pipeline.dedup.config import DedupConfig
from microcoder.pipeline.dedup.decontaminate import (
    BenchmarkItem,
    BenchmarkSpec,
    Contamination,
    Decontaminator,
    load_benchmark,
)
from microcoder.pipeline.dedup.normalize import tokenize
from microcoder.pipeline.dedup.stage import Dedup

__all__ = [
    "BenchmarkItem",
    "BenchmarkSpec",
    "Contamination",
    "Dedup",
    "DedupConfig",
    "Decontaminator",
    "load_benchmark",
    "tokenize",
]
