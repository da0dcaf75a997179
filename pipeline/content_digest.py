"""A digest of what a stage's outputs say, measured times left out (issue 37).

A dataset version must be a function of its sources, params and code, never of the machine that
built it. Every file a stage writes is content (later stages read it, DVC hashes it) except the
files named in METADATA, which hold what was measured on this machine. Two runs of a stage on the
same inputs, one on a machine twice as slow (`evaluator.slowdown: 2`), must give the same digest;
`bench/reproducible.py` checks the whole default run, `tests/test_reproducible.py` a short one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# Files of measurements, by name wherever they lie: never read by a later stage as content.
METADATA = {
    "stats.json": "the run's figures (TLE counts under a probe limit among them)",
    "timing.json": "what the run measured: judge seconds, runs executed and cached, wall times",
    "settings.json": "the settings the run used, with the machine's facts",
    "headline.json": "the run's DVC metrics (figures from stats.json)",
    "report.parquet": "validate's row per program run: its CPU time and memory",
    "time_limits.jsonl": "derived limits with the slowest reference run they came from",
    "metrics.json": "training and evaluation curves: step times beside the figures",
}


def content_files(out_dir: str | Path) -> list[Path]:
    """Every file under `out_dir` but the METADATA ones, sorted (a folder's order is the
    filesystem's)."""
    root = Path(out_dir)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name not in METADATA)


def content_digest(out_dir: str | Path) -> dict[str, str]:
    """relative path -> sha256 of every content file under `out_dir`."""
    root = Path(out_dir)
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in content_files(root)}


def differences(a: dict[str, str], b: dict[str, str]) -> list[str]:
    """The files whose content differs, or that only one side has."""
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
