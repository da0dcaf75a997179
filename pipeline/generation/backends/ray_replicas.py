"""Generation spread over model replicas running as Ray actors (`executor: ray`).

Each replica is an actor holding one ordinary backend (`hf` on CPU or a GPU, `vllm` with
`tensor_parallel_size` GPUs); the driver cuts the prompts into chunks, hands a chunk to whichever
replica is free and puts the samples back in prompt order. A replica that dies (node lost, OOM,
killed) is replaced by a fresh actor and its chunk is sent again, up to `replica_retries` times per
chunk; a chunk that raises inside a healthy replica is a real error and ends the call.

Which chunks (the seeds rule, see `prompt_seed`):
- `hf` seeds each `generate` batch from the batch's own texts: the chunks are exactly the local
  backend's batches (`hf.batch_plan`), one batch per task, so the replicas draw the same samples as
  `executor: local` with the same `batch_size` (same model, dtype and CPU kernels).
- `vllm` seeds each prompt: any split draws the same; the chunks are `chunk_prompts` prompts
  (default: an even share per replica, vLLM batches inside a chunk itself).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from typing import Any, cast

from microcoder.pipeline.generation.backends.base import Sample, SamplingParams

log = logging.getLogger(__name__)


class Replica:
    """A Ray actor's body: one backend, built in the actor's process (the model loads on first use)."""

    def __init__(self, name: str, options: dict[str, Any]):
        from microcoder.pipeline.generation.backends.local import local_backend

        self.backend = local_backend(name, **options)

    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        return self.backend.generate(prompts, n, sampling)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.backend.close()


class RayReplicasBackend:
    """name: the backend inside each replica (hf | vllm); options: its constructor arguments;
    replicas: actors (default: vllm, one per `tensor_parallel_size` GPUs of the cluster; hf, 2);
    replica_cpus / replica_gpus: each actor's Ray resources (default 1 CPU, and
    `tensor_parallel_size` GPUs for vllm, none for hf); replica_retries: fresh actors tried per chunk
    after its replica died; chunk_prompts: prompts per task for vllm; runtime_env: Ray's per-actor
    environment (env_vars such as HF_TOKEN or VLLM_BATCH_INVARIANT); ray_address: see
    `microcoder.pipeline.executor.ray_init`."""

    def __init__(self, name: str, *, ray_address: str | None = None, replicas: int | None = None,
                 replica_cpus: float = 1, replica_gpus: float | None = None, replica_retries: int = 3,
                 chunk_prompts: int | None = None, runtime_env: dict[str, Any] | None = None, **options: Any):
        if name not in ("hf", "vllm"):
            raise ValueError(f"executor=ray runs hf or vllm replicas, not {name!r}")
        if any(v is not None and v < 1 for v in (replicas, chunk_prompts)) or replica_retries < 0:
            raise ValueError("replicas and chunk_prompts must be >= 1 and replica_retries >= 0")
        if name == "vllm" and options.get("data_parallel_size", 1) != 1:
            raise ValueError("executor=ray: the replicas are the data parallelism; leave data_parallel_size at 1")
        self.name = name
        self.options = options
        self.replicas = replicas
        self.replica_retries = replica_retries
        self.chunk_prompts = chunk_prompts
        gpus = replica_gpus if replica_gpus is not None else (
            options.get("tensor_parallel_size", 1) if name == "vllm" else 0)
        self._actor_options: dict[str, Any] = {"num_cpus": replica_cpus, "num_gpus": gpus, "max_restarts": 0}
        if runtime_env:
            self._actor_options["runtime_env"] = runtime_env
        self.ray_address = ray_address
        self.restarts = 0  # replicas replaced after dying, over this backend's life
        self.progress = None  # optional callback(prompts_done) after each chunk (progress, tests)
        self._actors: list[Any] = []
        from microcoder.pipeline.generation.backends.local import local_backend

        # Built here too: bad options fail now, in one line, not in every actor; for hf it renders
        # the prompts (tokenizer only, the model is never loaded here) to plan the batches.
        self._planner = local_backend(name, **self._inner())

    # --- replicas -----------------------------------------------------------------------------
    def _start(self):
        from microcoder.pipeline.executor import ray_init

        ray = ray_init(self.ray_address)
        if not self._actors:
            if self.replicas is None:
                gpus = self._actor_options["num_gpus"]
                self.replicas = max(1, int(ray.cluster_resources().get("GPU", 0) // gpus)) if gpus else 2
            self._warn_if_unschedulable(ray)
            self._cls = ray.remote(Replica).options(**self._actor_options)
            self._actors = [self._cls.remote(self.name, self._inner()) for _ in range(self.replicas)]
            log.info("executor: ray (%d %s replicas, %s CPU / %s GPU each)", self.replicas, self.name,
                     self._actor_options["num_cpus"], self._actor_options["num_gpus"])
        return ray

    def _warn_if_unschedulable(self, ray) -> None:
        """Ray waits (for an autoscaler) when no node has a replica's resources: say why it waits."""
        have = ray.cluster_resources()
        ask = {"CPU": self._actor_options["num_cpus"], "GPU": self._actor_options["num_gpus"]}
        short = {k: v for k, v in ask.items() if v and have.get(k, 0) < v}
        if short:
            log.warning("executor=ray: a %s replica asks for %s but the cluster has %s; the replicas wait until "
                        "such a node joins (set backend_options.replica_cpus / replica_gpus)", self.name, ask,
                        {k: have.get(k, 0) for k in ask})

    def _replace(self, ray, slot: int, error: Exception) -> None:
        ray.kill(self._actors[slot], no_restart=True)  # a hung or half-dead actor frees its resources
        self.restarts += 1
        log.warning("rollout replica %d died (%s); starting a fresh one", slot, _one_line(error))
        self._actors[slot] = self._cls.remote(self.name, self._inner())

    def _inner(self) -> dict[str, Any]:
        return {**self.options, "progress": False}  # no progress bars from inside the actors

    def pids(self) -> list[int]:
        """The replicas' process ids (logs, tests)."""
        ray = self._start()
        return ray.get([a.pid.remote() for a in self._actors])

    # --- work -----------------------------------------------------------------------------------
    def _chunks(self, prompts: list[list[dict[str, str]]]) -> list[list[int]]:
        if self.name == "hf":
            from microcoder.pipeline.generation.backends.hf import HFBackend, batch_plan

            planner = cast(HFBackend, self._planner)  # local_backend("hf", ...) built it
            return batch_plan(planner.render(prompts), self.options.get("batch_size", 8))
        size = self.chunk_prompts or -(-len(prompts) // self.replicas)
        return [list(range(start, min(start + size, len(prompts)))) for start in range(0, len(prompts), size)]

    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not prompts:
            return []
        ray = self._start()
        from ray.exceptions import RayError, RayTaskError

        chunks = self._chunks(prompts)
        results: list[list[Sample] | None] = [None] * len(prompts)
        todo = deque(range(len(chunks)))
        tries = [0] * len(chunks)
        idle = deque(range(len(self._actors)))
        running: dict[Any, tuple[int, int]] = {}  # object ref -> (replica slot, chunk)
        done = 0
        while todo or running:
            while todo and idle:  # one chunk per replica at a time: the free one takes the next
                slot, c = idle.popleft(), todo.popleft()
                ref = self._actors[slot].generate.remote([prompts[i] for i in chunks[c]], n, sampling)
                running[ref] = (slot, c)
            ready, _ = ray.wait(list(running), num_returns=1)
            slot, c = running.pop(ready[0])
            try:
                samples = ray.get(ready[0])
            except RayTaskError as e:  # the backend raised inside a live replica: a real error, not retried
                cause = e.cause if e.cause is not None else e
                raise RuntimeError(f"rollout replica {slot} failed: {type(cause).__name__}: "
                                   f"{_one_line(cause)}") from None
            except RayError as e:  # the replica is gone (died, OOM-killed, node lost): its chunk goes again
                if getattr(e, "actor_init_failed", False):  # its constructor raised: so would the next one's
                    lines = [x for x in str(e).splitlines() if x.strip()]
                    raise RuntimeError(f"rollout replica {slot} could not start: {_one_line(lines[-1])}") from None
                tries[c] += 1
                if tries[c] > self.replica_retries:
                    raise RuntimeError(f"rollout replicas died {tries[c]} times on the same {len(chunks[c])} "
                                       f"prompts (replica_retries={self.replica_retries}); last: "
                                       f"{_one_line(e)}") from None
                self._replace(ray, slot, e)
                todo.appendleft(c)
            else:
                if len(samples) != len(chunks[c]):
                    raise RuntimeError(f"replica {slot} returned {len(samples)} results for {len(chunks[c])} prompts")
                for i, group in zip(chunks[c], samples, strict=True):
                    results[i] = group
                done += len(chunks[c])
                if self.progress is not None:
                    self.progress(done)
            idle.append(slot)
        return results  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the replicas (their engines free the GPU with the process); Ray itself stays up."""
        if not self._actors:
            return
        import ray

        actors, self._actors = self._actors, []
        if ray.is_initialized():
            try:  # a clean engine shutdown first (vLLM frees its GPU memory), then the actor goes
                ray.get([a.close.remote() for a in actors], timeout=60)
            except Exception as e:  # noqa: BLE001 - a dead replica has nothing left to close
                log.debug("closing rollout replicas: %s", _one_line(e))
            for a in actors:
                ray.kill(a, no_restart=True)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300] or type(e).__name__
