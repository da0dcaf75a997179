from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "data" / "seed" / "problems.jsonl"
BENCH_DATA = ROOT.parent / "shared" / "bench-data"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """The deterministic tiny Qwen3 + tokenizer, built once per test session (about a second)."""
    from microcoder.pipeline.models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def bench_data() -> Path:
    if not BENCH_DATA.exists():
        pytest.skip("../shared/bench-data is not present next to the checkout")
    return BENCH_DATA


@pytest.fixture(scope="session")
def ray_cluster():
    """ONE real local Ray cluster for the whole test session (2 CPUs, small object store, no
    dashboard), shut down at session end; tests that need Ray take this fixture and call
    ray.remote / make_evaluator(executor="ray") directly (Ray is already initialised, so the code
    under test reuses it). Skipped when ray is not installed. Yields the `ray` module."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # someone else's fixture or test started one: share it
        yield ray
        return
    # address="local": always a fresh cluster of our own, never one a `ray start` left running
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=80 * 1024**2,
             logging_level="warning", configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture
def one_torch_thread():
    """Tiny models gain nothing from intra-op threads, and on a busy 2-core box they thrash: torch
    uses one thread for the test (training tests ask for it with `usefixtures`)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
