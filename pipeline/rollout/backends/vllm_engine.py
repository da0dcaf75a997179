"""vLLM offline-engine backend (GPU machines; `pip install .[gpu]`). vLLM is imported lazily.

Tensor parallelism is vLLM's own (`tensor_parallel_size` GPUs per engine). Data parallelism is
ours: `data_parallel_size` engine processes, each pinned to its own GPUs, each owning a slice of
the prompts. Every prompt carries its own seed (`prompt_seed`), so the samples do not depend on
how prompts are split across engines or batches.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import traceback
from typing import Any

from pipeline.rollout.backends import Sample, SamplingParams, prompt_seed, with_open_think
from pipeline.rollout.prompts import render_prompt


def _import_vllm():
    try:
        import vllm
    except ImportError as e:
        raise ImportError(
            "backend 'vllm' needs vLLM (GPU machines only): pip install '.[gpu]'. "
            "On CPU use backend 'hf', or 'openai' against a running vLLM server."
        ) from e
    return vllm


class VLLMBackend:
    """model: path or Hub id; thinking: chat-template switch; tensor_parallel_size: GPUs per engine;
    data_parallel_size: engines (processes); gpus: comma-separated device ids to use (default:
    CUDA_VISIBLE_DEVICES or 0..tp*dp-1); engine_kwargs: extra `vllm.LLM` arguments."""

    def __init__(self, model: str, *, thinking: bool = False, tensor_parallel_size: int = 1,
                 data_parallel_size: int = 1, dtype: str = "auto", gpu_memory_utilization: float = 0.9,
                 max_model_len: int | None = None, enable_prefix_caching: bool = True, seed: int = 0,
                 gpus: str | None = None, engine_kwargs: dict[str, Any] | None = None, progress: bool = True):
        if tensor_parallel_size < 1 or data_parallel_size < 1:
            raise ValueError("tensor_parallel_size and data_parallel_size must be >= 1")
        self._options = dict(  # what a data-parallel worker needs to build its own engine
            model=str(model), thinking=thinking, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
            enable_prefix_caching=enable_prefix_caching, seed=seed, engine_kwargs=engine_kwargs,
            progress=progress)
        self.model = str(model)
        self.thinking = thinking
        self.tp = tensor_parallel_size
        self.dp = data_parallel_size
        self.gpus = gpus
        self.progress = progress
        self.engine_args: dict[str, Any] = dict(
            model=self.model, tensor_parallel_size=tensor_parallel_size, dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization, enable_prefix_caching=enable_prefix_caching,
            seed=seed, **({"max_model_len": max_model_len} if max_model_len else {}), **(engine_kwargs or {}),
        )
        self._llm = None
        self._workers: list[tuple[Any, Any]] = []

    # --- one engine in this process ---------------------------------------------------------
    def _engine(self):
        if self._llm is None:
            vllm = _import_vllm()
            self._llm = vllm.LLM(**self.engine_args)
        return self._llm

    def _generate_local(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        vllm = _import_vllm()
        llm = self._engine()
        tokenizer = llm.get_tokenizer()
        texts = [render_prompt(m, tokenizer, thinking=self.thinking) for m in prompts]
        params = [
            vllm.SamplingParams(n=n, temperature=sampling.temperature, top_p=sampling.top_p,
                                max_tokens=sampling.max_tokens, seed=prompt_seed(sampling.seed, m))
            for m in prompts
        ]
        outputs = llm.generate(texts, params, use_tqdm=self.progress)
        if len(outputs) != len(prompts):
            raise RuntimeError(f"vLLM returned {len(outputs)} results for {len(prompts)} prompts")
        results = [parse_request_output(out, n) for out in outputs]
        for prompt, group in zip(texts, results, strict=True):
            for s in group:
                s.text = with_open_think(prompt, s.text)
        return results

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
        for rank, devices in enumerate(self._device_groups()):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_dp_worker, args=(child, devices, options, rank), daemon=True)
            proc.start()
            self._workers.append((proc, parent))

    def _generate_dp(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        self._start_workers()
        size = -(-len(prompts) // self.dp)
        chunks = [prompts[r * size:(r + 1) * size] for r in range(self.dp)]
        for (_, conn), chunk in zip(self._workers, chunks, strict=True):
            conn.send((chunk, n, sampling))
        results: list[list[Sample]] = []
        errors = []
        for rank, (proc, conn) in enumerate(self._workers):
            try:
                status, payload = conn.recv()
            except EOFError:
                status, payload = "error", f"engine process {rank} died (exit code {proc.exitcode})"
            if status == "ok":
                results.extend(payload)
            else:
                errors.append(f"rank {rank}: {payload}")
        if errors:
            self.close()
            raise RuntimeError("vLLM data-parallel generation failed:\n" + "\n".join(errors))
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
        for proc, conn in self._workers:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
        self._workers = []
        self._llm = None


def parse_request_output(out: Any, n: int) -> list[Sample]:
    """Samples from a vLLM `RequestOutput` (`.outputs[i].text / .token_ids / .finish_reason`)."""
    completions = sorted(out.outputs, key=lambda o: getattr(o, "index", 0))
    if len(completions) != n:
        raise RuntimeError(f"vLLM returned {len(completions)} completions, expected n={n}")
    samples = []
    for o in completions:
        reason = o.finish_reason or "stop"
        samples.append(Sample(text=o.text, token_count=len(o.token_ids), finish_reason=reason,
                              truncated=reason == "length"))
    return samples


def _dp_worker(conn, devices: str, options: dict[str, Any], rank: int) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = devices
    backend = VLLMBackend(**options)
    while True:
        msg = conn.recv()
        if msg is None:
            break
        prompts, n, sampling = msg
        try:
            conn.send(("ok", backend.generate(prompts, n, sampling) if prompts else []))
        except Exception:  # reported to the parent, which raises with the traceback
            conn.send(("error", traceback.format_exc()))
