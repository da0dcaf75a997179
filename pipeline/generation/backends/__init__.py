"""Generation backends behind one interface: `generate(prompts, n, sampling) -> samples`.

- `hf`: transformers `generate` in batches (the CPU default, with the tiny local model);
- `vllm`: vLLM's offline engine (GPU machines, extra `gpu`; imported lazily);
- `openai`: any OpenAI-compatible chat-completions endpoint, one or several base URLs (a fleet of
  `vllm serve` instances is the scale-out path).

`executor="ray"` runs `hf` or `vllm` as replicas on a Ray cluster (`ray_replicas`), with the same
interface; `openai` already spreads over its servers and runs as it is.

`prompts` are chat messages (`microcoder.pipeline.generation.prompts.build_messages`); each backend renders or
sends them with the same thinking switch. The result has one list of `n` samples per prompt.
"""

from __future__ import annotations

import logging
from typing import Any

from microcoder.pipeline.generation.backends.base import (  # noqa: F401 - the package's vocabulary
    BACKENDS,
    ENGINE_FAILURES,
    MAX_TEMPERATURE,
    Backend,
    EngineFailure,
    Sample,
    SamplingParams,
    check_temperature,
    close_backend,
    prompt_seed,
    repeat_greedy,
    with_open_think,
)
from microcoder.pipeline.generation.backends.local import local_backend

log = logging.getLogger(__name__)

RAY_OPTIONS = ("replicas", "replica_cpus", "replica_gpus", "replica_retries", "chunk_prompts", "runtime_env")


def get_backend(name: str, *, executor: str = "local", ray_address: str | None = None, **options: Any) -> Backend:
    """A backend by name; `options` are the backend's constructor arguments (see each class).
    executor="ray": `hf`/`vllm` replicas as Ray actors (`RayReplicasBackend`, whose own options are
    RAY_OPTIONS); `ray_address` as in `microcoder.pipeline.executor`."""
    from microcoder.pipeline.executor import check_executor

    check_executor(executor, ray_address)
    ray_options = {key: options.pop(key) for key in RAY_OPTIONS if key in options}
    if executor == "ray" and name in ("hf", "vllm"):
        from microcoder.pipeline.generation.backends.ray_replicas import RayReplicasBackend

        return RayReplicasBackend(name, ray_address=ray_address, **ray_options, **options)
    if ray_options:
        raise ValueError(f"{sorted(ray_options)} apply to executor=ray with backend hf or vllm only")
    if executor == "ray":
        log.info("executor: ray has nothing to spread for backend %s: requests go from this process to "
                 "every base_url (the servers are the replicas)", name)
    return local_backend(name, **options)
