"""Stand-in for `vllm.distributed.parallel_state.cleanup_dist_env_and_memory` (vLLM 0.31.0)."""

from __future__ import annotations


def cleanup_dist_env_and_memory(shutdown_ray: bool = False) -> None:
    import vllm

    vllm.CALLS["cleanup"] += 1
