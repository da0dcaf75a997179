from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "seed" / "problems.jsonl"
BENCH_DATA = ROOT.parent / "shared" / "bench-data"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """The deterministic tiny Qwen3 + tokenizer, built once per test session (about a second)."""
    from pipeline.models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def bench_data() -> Path:
    if not BENCH_DATA.exists():
        pytest.skip("../shared/bench-data is not present next to the checkout")
    return BENCH_DATA
