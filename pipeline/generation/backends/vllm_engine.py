"""vLLM offline-engine backend (GPU machines; `pip install .[gpu]`). vLLM is imported lazily.

Tensor parallelism is vLLM's own (`tensor_parallel_size` GPUs per engine). Data parallelism is
ours: `data_parallel_size` engine processes, each pinned to its own GPUs, each owning a slice of
the prompts. Every prompt carries its own seed (`prompt_seed`), so the random draws do not depend
on how prompts are split across engines or batches (bf16 numerics can, slightly, unless vLLM runs
batch-invariant: VLLM_BATCH_INVARIANT=1).

What vLLM 0.31.0 does that shapes this file (read from the wheel):
- `LLM(...)` starts its EngineCore in a child process, so a data-parallel worker must not be
  daemonic (daemonic processes cannot have children). Workers exit when their pipe closes, and
  `close()` (also run at interpreter exit) stops them.
- There is no public `LLM.shutdown`: `close()` stops the engine core through
  `llm.llm_engine.engine_core.shutdown()` and frees the GPU
  (`vllm.distributed.parallel_state.cleanup_dist_env_and_memory`), so a second engine (eval-model's
  next model) or another backend finds the memory free.
- A text prompt is tokenized again with special tokens; chat-rendered text already has them, so
  prompts go in as token ids (`{"prompt_token_ids": ...}`), counted with `add_special_tokens=False`.
- One prompt of max_model_len tokens or more aborts the whole `generate` call: such prompts are
  refused here with a clear error (the stages reject them up front, `microcoder.pipeline.generation.budget`).
- Greedy sampling (temperature 0) needs n == 1: one sample is requested and repeated.
- finish_reason "abort"/"error" are engine failures: those requests are retried (same seed) up to
  `engine_retries` times, then `EngineFailure` is raised; they never become samples.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing as mp
import os
import traceback
from multiprocessing import util as mp_util
from typing import Any

from microcoder.pipeline.generation.backends.base import (
    ENGINE_FAILURES,
    EngineFailure,
    Sample,
    SamplingParams,
    prompt_seed,
    repeat_greedy,
    with_open_think,
)
from microcoder.pipeline.generation.prompts import render_prompt

log = logging.getLogger(__name__)


def _import_vllm():
    try:
        import vllm
    except ImportError as e:
        raise ImportError(
            "backend 'vllm' needs vLLM (GPU machines only): pip install '.[gpu]'. "
            "On CPU use backend 'hf', or 'openai' against a running vLLM server."
        ) from e
    return vllm


class PromptTooLong(ValueError):
    """A prompt leaves no room for a completion in the engine's max_model_len."""


class VLLMBackend:
    """model: path or Hub id; thinking: chat-template switch; tensor_parallel_size: GPUs per engine;
    data_parallel_size: engines (processes); gpus: comma-separated device ids to use (default:
    CUDA_VISIBLE_DEVICES or 0..tp*dp-1); engine_retries: retries of requests the engine failed
    (finish_reason abort/error); engine_kwargs: extra `vllm.LLM` arguments."""

    def __init__(self, model: str, *, thinking: bool = False, tensor_parallel_size: int = 1,
                 data_parallel_size: int = 1, dtype: str = "auto", gpu_memory_utilization: float = 0.9,
                 max_model_len: int | None = None, enable_prefix_caching: bool = True, seed: int = 0,
                 gpus: str | None = None, engine_retries: int = 2, engine_kwargs: dict[str, Any] | None = None,
                 progress: bool = True):
        if tensor_parallel_size < 1 or data_parallel_size < 1:
            raise ValueError("tensor_parallel_size and data_parallel_size must be >= 1")
        if not 0 < gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}")
        if max_model_len is not None and max_model_len < 2:
            raise ValueError(f"max_model_len must be >= 2, got {max_model_len}")
        if engine_retries < 0:
            raise ValueError(f"engine_retries must be >= 0, got {engine_retries}")
        self._options = dict(  # what a data-parallel worker needs to build its own engine
            model=str(model), thinking=thinking, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
            enable_prefix_caching=enable_prefix_caching, seed=seed, engine_retries=engine_retries,
            engine_kwargs=engine_kwargs, progress=progress)
        self.model = str(model)
        self.thinking = thinking
        self.tp = tensor_parallel_size
        self.dp = data_parallel_size
        self.gpus = gpus
        self.engine_retries = engine_retries
        self.progress = progress
        self.engine_args: dict[str, Any] = dict(
            model=self.model, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization, enable_prefix_caching=enable_prefix_caching,
            seed=seed, **({"max_model_len": max_model_len} if max_model_len else {}), **(engine_kwargs or {}),
        )
        self._llm = None
        self._workers: list[tuple[Any, Any]] = []
        self._finalizer: mp_util.Finalize | None = None

    # --- one engine in this process ---------------------------------------------------------
    def _engine(self):
        if self._llm is None:
            vllm = _import_vllm()
            self._llm = vllm.LLM(**self.engine_args)
        return self._llm

    def _max_model_len(self, llm) -> int | None:
        config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
        return getattr(config, "max_model_len", None) or self.engine_args.get("max_model_len")

    def _generate_local(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        vllm = _import_vllm()
        llm = self._engine()
        tokenizer = llm.get_tokenizer()
        texts = [render_prompt(m, tokenizer, thinking=self.thinking) for m in prompts]
        # The rendered text already holds the template's special tokens: no second BOS.
        ids = [list(x) for x in tokenizer(texts, add_special_tokens=False)["input_ids"]]
        limit = self._max_model_len(llm)
        if limit is not None:
            long = [f"prompt {i}: {len(x)} tokens" for i, x in enumerate(ids) if len(x) >= limit]
            if long:
                raise PromptTooLong(f"{len(long)} prompts leave no room for a completion in max_model_len "
                                    f"{limit} ({'; '.join(long[:5])}); reject them up front (microcoder.pipeline.generation.budget)")
        per_request = sampling.per_request(n)
        params = [
            vllm.SamplingParams(n=per_request, temperature=sampling.temperature, top_p=sampling.top_p,
                                max_tokens=sampling.max_tokens, seed=prompt_seed(sampling.seed, m))
            for m in prompts
        ]
        inputs = [{"prompt_token_ids": x} for x in ids]
        results: list[list[Sample] | None] = [None] * len(prompts)
        todo = list(range(len(prompts)))
        failures: dict[int, str] = {}
        for _attempt in range(self.engine_retries + 1):
            outputs = llm.generate([inputs[i] for i in todo], [params[i] for i in todo], use_tqdm=self.progress)
            if len(outputs) != len(todo):
                raise RuntimeError(f"vLLM returned {len(outputs)} results for {len(todo)} prompts")
            failed = []
            for i, out in zip(todo, outputs, strict=True):
                group = parse_request_output(out, per_request)
                bad = sorted({s.finish_reason for s in group if s.finish_reason in ENGINE_FAILURES})
                if bad:
                    failures[i] = "/".join(bad)
                    failed.append(i)
                    continue
                for s in group:
                    s.text = with_open_think(texts[i], s.text)
                results[i] = repeat_greedy(group, n) if sampling.greedy else group
            todo = failed
            if not todo:
                break
        if todo:
            raise EngineFailure(f"vLLM failed {len(todo)} of {len(prompts)} requests after "
                                f"{self.engine_retries + 1} attempts (finish_reason "
                                f"{sorted({failures[i] for i in todo})}; prompts {todo[:10]})")
        return results  # type: ignore[return-value]

    # --- data parallel: one engine process per GPU group ---------------------------------------
    def _device_groups(self) -> list[str]:
        ids = (self.gpus or os.environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")
        ids = [i.strip() for i in ids if i.strip()] or [str(i) for i in range(self.tp * self.dp)]
        if len(ids) < self.tp * self.dp:
            raise ValueError(f"data_parallel_size={self.dp} x tensor_parallel_size={self.tp} needs "
                             f"{self.tp * self.dp} GPUs, got {ids}")
        return [",".join(ids[r * self.tp:(r + 1) * self.tp]) for r in range(self.dp)]

    def _start_workers(self) -> None:
        if self._workers:
            return
        ctx = mp.get_context("spawn")
        options = self._options
        try:
            for rank, devices in enumerate(self._device_groups()):
                parent, child = ctx.Pipe()
                # Not daemonic: vLLM starts its EngineCore as a child of this worker. The worker
                # exits when its pipe closes (close(), this process's exit or death).
                proc = ctx.Process(target=_dp_worker, args=(child, devices, options, rank),
                                   name=f"vllm-dp{rank}", daemon=False)
                proc.start()
                child.close()  # only the worker holds it now: its death reads as EOF here
                self._workers.append((proc, parent))
        finally:
            # Stop the workers however this process ends: multiprocessing joins non-daemonic
            # children at exit, so a forgotten close() would hang the interpreter. A finalizer of
            # priority >= 0 runs before that join (multiprocessing.util._exit_function), and when
            # this backend is garbage-collected.
            self._finalizer = mp_util.Finalize(self, _stop_workers, args=(list(self._workers),), exitpriority=10)

    def _generate_dp(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        self._start_workers()
        size = -(-len(prompts) // self.dp)
        chunks = [prompts[r * size:(r + 1) * size] for r in range(self.dp)]
        errors = []
        for rank, ((proc, conn), chunk) in enumerate(zip(self._workers, chunks, strict=True)):
            try:
                conn.send((chunk, n, sampling))
            except (BrokenPipeError, OSError):
                errors.append(f"rank {rank}: engine process died (exit code {proc.exitcode})")
        results: list[list[Sample]] = []
        for rank, (proc, conn) in enumerate(self._workers):
            if any(e.startswith(f"rank {rank}:") for e in errors):
                continue
            try:
                status, payload = conn.recv()
            except (EOFError, OSError):
                proc.join(timeout=5)
                status, payload = "error", f"engine process died (exit code {proc.exitcode})"
            if status == "ok":
                results.extend(payload)
            elif isinstance(payload, tuple):  # (one-line summary, the worker's traceback)
                summary, trace = payload
                log.debug("vLLM data-parallel rank %d failed:\n%s", rank, trace)
                errors.append(f"rank {rank}: {summary}")
            else:
                errors.append(f"rank {rank}: {payload}")
        if errors:
            self.close()
            # One line (the stage prints it as is); the workers' tracebacks are in the --debug log.
            raise RuntimeError("vLLM data-parallel generation failed: " + "; ".join(errors))
        return results

    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not prompts:
            return []
        if self.dp > 1:
            return self._generate_dp(prompts, n, sampling)
        return self._generate_local(prompts, n, sampling)

    def close(self) -> None:
        """Stop the data-parallel workers and this process's engine, and free the GPU."""
        if self._finalizer is not None:
            self._finalizer()  # _stop_workers, once
            self._finalizer = None
        self._workers = []
        if self._llm is not None:
            llm, self._llm = self._llm, None
            shutdown_engine(llm)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def shutdown_engine(llm: Any) -> None:
    """Stop a `vllm.LLM`'s engine core and free its GPU memory now, not whenever the garbage
    collector gets to it (vLLM 0.31 has no public LLM.shutdown)."""
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
    del llm, core
    gc.collect()
    try:
        from vllm.distributed.parallel_state import cleanup_dist_env_and_memory
    except ImportError:
        cleanup_dist_env_and_memory = None
    if cleanup_dist_env_and_memory is not None:
        cleanup_dist_env_and_memory()
    else:
        try:
            import torch
        except ImportError:
            return
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _stop_workers(workers: list[tuple[Any, Any]]) -> None:
    for _proc, conn in workers:
        try:
            conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        conn.close()
    for proc, _conn in workers:
        proc.join(timeout=60)  # the worker shuts its engine down first
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=10)


def parse_request_output(out: Any, n: int) -> list[Sample]:
    """Samples from a vLLM `RequestOutput` (`.outputs[i].text / .token_ids / .finish_reason`). A
    completion without a finish_reason did not finish: reported as an engine failure ("error")."""
    completions = sorted(out.outputs, key=lambda o: getattr(o, "index", 0))
    if len(completions) != n:
        raise RuntimeError(f"vLLM returned {len(completions)} completions, expected n={n}")
    samples = []
    for o in completions:
        reason = str(o.finish_reason) if o.finish_reason is not None else "error"
        samples.append(Sample(text=o.text, token_count=len(o.token_ids), finish_reason=reason,
                              truncated=reason == "length"))
    return samples


def _dp_worker(conn, devices: str, options: dict[str, Any], rank: int) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = devices
    backend = VLLMBackend(**options)
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):  # the parent closed the pipe or died
                break
            if msg is None:
                break
            prompts, n, sampling = msg
            try:
                reply = ("ok", backend.generate(prompts, n, sampling) if prompts else [])
            except Exception as e:  # reported to the parent: one line, and the traceback for --debug
                summary = " ".join(f"{type(e).__name__}: {e}".split())[:500]
                reply = ("error", (summary, traceback.format_exc()))
            try:
                conn.send(reply)
            except (BrokenPipeError, OSError):
                break
    finally:
        backend.close()
        conn.close()
