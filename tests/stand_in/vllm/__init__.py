"""A CPU stand-in for the offline API of vLLM 0.31.0 (`LLM`, `SamplingParams`, `RequestOutput`),
for tests only. It refuses what the real classes refuse, read from the 0.31.0 wheel:

- `SamplingParams.__post_init__` / `_verify_args` (vllm/sampling_params.py): 0 < temperature < 0.01
  is raised to 0.01; n an int in [1, VLLM_MAX_N_SEQUENCES=16384]; temperature finite and in
  [0, 2]; top_p in (0, 1]; top_k >= -1; min_p in [0, 1]; max_tokens >= 1; and greedy
  (temperature < 1e-5) needs n == 1 ("n must be 1 when using greedy sampling").
  Errors are `VLLMValidationError`, which is *not* a ValueError in 0.31 (vllm/exceptions.py).
- Prompts (vllm/renderers/base.py, vllm/v1/engine/input_processor.py `_validate_prompt_len`): a
  text prompt is tokenized with `add_special_tokens=True` (so a chat-rendered text that already
  holds a BOS gets a second one); `{"prompt_token_ids": [...]}` is taken as is; an empty prompt,
  one longer than max_model_len, or one equal to it is refused, and the error aborts the whole
  `generate` call. A completion stops at max_model_len with finish_reason "length".
- `LLM(...)` starts its EngineCore in a child process (vllm/v1/engine/utils.py, multiprocessing,
  not daemonic): a daemonic caller fails with "daemonic processes are not allowed to have
  children". There is no `LLM.shutdown`; `llm.llm_engine.engine_core.shutdown()` stops the child
  (vllm/v1/engine/core_client.py), otherwise a weakref finalizer does when the LLM is collected.
- finish_reason is one of "stop", "length", "abort", "error", "repetition" (vllm/v1/engine).

Generation itself is fake and deterministic: each completion is drawn from a generator seeded
with (seed, completion index, prompt token ids), so per-request seeds give batch-independent
samples. Tests read `CALLS` and can queue engine failures in `INJECT_FINISH` (one entry per request
in arrival order; None = a normal request).
"""

from __future__ import annotations

import math
import multiprocessing
import random
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

__version__ = "0.31.0"

_SAMPLING_EPS = 1e-5
_MAX_TEMP = 1e-2
MAX_N_SEQUENCES = 16384
FINISH_REASONS = ("stop", "length", "abort", "error", "repetition")

CALLS: dict[str, Any] = {"llm": [], "generate": [], "shutdown": 0, "cleanup": 0}
INJECT_FINISH: list[str | None] = []

# LLM.__init__'s own keywords plus the EngineArgs fields this project passes through **kwargs.
_LLM_KWARGS = {
    "runner", "convert", "tokenizer", "tokenizer_mode", "skip_tokenizer_init", "trust_remote_code",
    "tensor_parallel_size", "dtype", "quantization", "revision", "tokenizer_revision", "chat_template", "seed",
    "gpu_memory_utilization", "cpu_offload_gb", "enforce_eager", "disable_custom_all_reduce", "hf_token",
    "hf_overrides", "compilation_config", "attention_config", "kv_cache_memory_bytes",
    # EngineArgs
    "max_model_len", "enable_prefix_caching", "disable_log_stats", "max_num_seqs", "max_num_batched_tokens",
    "kv_cache_dtype", "swap_space", "block_size", "distributed_executor_backend", "pipeline_parallel_size",
    "data_parallel_size", "enable_chunked_prefill", "max_logprobs", "async_scheduling",
}


class VLLMError(Exception):
    pass


class VLLMValidationError(VLLMError):
    """As vllm.exceptions.VLLMValidationError: an Exception, not a ValueError."""


def reset() -> None:
    CALLS.update(llm=[], generate=[], shutdown=0, cleanup=0)
    INJECT_FINISH.clear()


class SamplingParams:
    _FIELDS = {"n": 1, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "max_tokens": 16,
               "min_tokens": 0, "seed": None, "stop": None, "presence_penalty": 0.0, "frequency_penalty": 0.0,
               "repetition_penalty": 1.0, "logprobs": None, "skip_special_tokens": True,
               "include_stop_str_in_output": False, "ignore_eos": False}

    def __init__(self, **kwargs: Any):
        unknown = set(kwargs) - set(self._FIELDS)
        if unknown:
            raise TypeError(f"Unexpected keyword argument(s) {sorted(unknown)}")
        self.kwargs = dict(kwargs)  # what the caller asked for (tests compare it)
        for name, default in self._FIELDS.items():
            setattr(self, name, kwargs.get(name, default))
        if 0 < self.temperature < _MAX_TEMP:
            self.temperature = _MAX_TEMP
        if self.seed == -1:
            self.seed = None
        self._verify_args()
        if self.temperature < _SAMPLING_EPS:
            self.top_p, self.top_k, self.min_p = 1.0, 0, 0.0
            if self.n > 1:
                raise VLLMValidationError(f"n must be 1 when using greedy sampling, got {self.n}.")

    def _verify_args(self) -> None:
        if not isinstance(self.n, int):
            raise VLLMValidationError(f"n must be an int, but is of type {type(self.n)}")
        if self.n < 1:
            raise VLLMValidationError(f"n must be at least 1, got {self.n}.")
        if self.n > MAX_N_SEQUENCES:
            raise VLLMValidationError(f"n must be at most {MAX_N_SEQUENCES}, got {self.n}.")
        if not math.isfinite(self.temperature):
            raise VLLMValidationError(f"temperature must be a finite number, got {self.temperature}.")
        if self.temperature < 0.0:
            raise VLLMValidationError(f"temperature must be non-negative, got {self.temperature}.")
        if self.temperature > 2.0:
            raise VLLMValidationError(f"temperature must be in [0, 2], got {self.temperature}.")
        if not 0.0 < self.top_p <= 1.0:
            raise VLLMValidationError(f"top_p must be in (0, 1], got {self.top_p}.")
        if self.top_k < -1 or not isinstance(self.top_k, int):
            raise VLLMValidationError(f"top_k must be 0 (disable), or at least 1, got {self.top_k}.")
        if not 0.0 <= self.min_p <= 1.0:
            raise VLLMValidationError(f"min_p must be in [0, 1], got {self.min_p}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise VLLMValidationError(f"max_tokens must be at least 1, got {self.max_tokens}.")
        if self.max_tokens is not None and self.min_tokens > self.max_tokens:
            raise VLLMValidationError(f"min_tokens must be less than or equal to max_tokens={self.max_tokens}, "
                                      f"got {self.min_tokens}.")


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None = None
    logprobs: Any = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


def _engine_core_main(conn) -> None:
    """The EngineCore child: waits until it is told to stop or its parent's end closes."""
    try:
        conn.recv()
    except (EOFError, OSError):
        pass


class _EngineCoreClient:
    def __init__(self):
        parent, child = multiprocessing.get_context("fork").Pipe()
        # vLLM starts EngineCore with multiprocessing (not daemonic); a daemonic caller cannot.
        self.proc = multiprocessing.get_context("fork").Process(target=_engine_core_main, args=(child,),
                                                                 name="EngineCore")
        self.proc.start()
        child.close()
        self._conn = parent
        self._finalizer = weakref.finalize(self, _stop_engine_core, self.proc, parent)
        self.dead = False

    def shutdown(self, timeout: float | None = None) -> None:
        if self._finalizer.detach() is not None:
            CALLS["shutdown"] += 1
            _stop_engine_core(self.proc, self._conn)
        self.dead = True


def _stop_engine_core(proc, conn) -> None:
    try:
        conn.send("stop")
    except OSError:
        pass
    conn.close()
    proc.join(timeout=10)
    if proc.is_alive():
        proc.terminate()
        proc.join()


def _context_length(model: str) -> int | None:
    import json

    cfg = Path(model) / "config.json"
    if cfg.is_file():
        return json.loads(cfg.read_text()).get("max_position_embeddings")
    return None


class LLM:
    def __init__(self, model: str, **kwargs: Any):
        unknown = set(kwargs) - _LLM_KWARGS
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got unexpected keyword arguments {sorted(unknown)}")
        utilization = kwargs.get("gpu_memory_utilization", 0.92)
        if not 0 < utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {utilization}")
        from transformers import AutoTokenizer

        CALLS["llm"].append({"model": model, **kwargs})
        self._tokenizer = AutoTokenizer.from_pretrained(kwargs.get("tokenizer") or model)
        derived = _context_length(model)
        max_model_len = kwargs.get("max_model_len") or derived
        if max_model_len is None:
            raise ValueError(f"{model}: no config.json to derive max_model_len from; pass max_model_len")
        if derived is not None and max_model_len > derived:
            raise ValueError(f"User-specified max_model_len ({max_model_len}) is greater than the derived "
                             f"max_model_len ({derived})")
        self.llm_engine = SimpleNamespace(engine_core=_EngineCoreClient(),
                                          model_config=SimpleNamespace(max_model_len=max_model_len))

    def get_tokenizer(self):
        return self._tokenizer

    def _prompt_ids(self, prompt: Any) -> tuple[str | None, list[int]]:
        if isinstance(prompt, str):
            return prompt, list(self._tokenizer(prompt, add_special_tokens=True)["input_ids"])
        if isinstance(prompt, dict) and "prompt_token_ids" in prompt:
            return prompt.get("prompt"), list(prompt["prompt_token_ids"])
        if isinstance(prompt, dict) and "prompt" in prompt:
            return prompt["prompt"], list(self._tokenizer(prompt["prompt"], add_special_tokens=True)["input_ids"])
        raise TypeError(f"unsupported prompt type {type(prompt).__name__}")

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, **kwargs) -> list[RequestOutput]:
        if self.llm_engine.engine_core.dead:
            raise RuntimeError("EngineCore encountered an issue (EngineDeadError): the engine was shut down")
        if isinstance(prompts, (str, dict)):
            prompts = [prompts]
        params = sampling_params if sampling_params is not None else SamplingParams()
        if isinstance(params, SamplingParams):
            params = [params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        limit = self.llm_engine.model_config.max_model_len
        rendered = [self._prompt_ids(p) for p in prompts]
        for _, ids in rendered:  # every request is validated as it is added: one bad prompt aborts all
            if not ids:
                raise VLLMValidationError("The decoder prompt cannot be empty")
            if len(ids) > limit:
                raise VLLMValidationError(f"The decoder prompt (length {len(ids)}) is longer than the maximum "
                                          f"model length of {limit}.")
            if len(ids) == limit:
                raise VLLMValidationError(f"The decoder prompt (length {len(ids)}) plus the number of requested "
                                          f"output tokens (at least 1) is longer than the maximum model length "
                                          f"of {limit}.")
        CALLS["generate"].append({"prompts": list(prompts), "prompt_token_ids": [ids for _, ids in rendered],
                                  "params": [p.kwargs for p in params]})
        outputs = []
        for r, ((text, ids), p) in enumerate(zip(rendered, params, strict=True)):
            injected = INJECT_FINISH.pop(0) if INJECT_FINISH else None
            comps = [self._complete(ids, p, i, limit, injected) for i in range(p.n)]
            outputs.append(RequestOutput(str(r), text, ids, comps[::-1]))  # out of index order on purpose
        return outputs

    def _complete(self, ids: list[int], p: SamplingParams, index: int, limit: int, injected: str | None):
        if injected is not None:
            assert injected in FINISH_REASONS, injected
            return CompletionOutput(index, "partial", [1], finish_reason=injected)
        greedy = p.temperature < _SAMPLING_EPS
        rng = random.Random(f"{'greedy' if greedy else p.seed}:{index}:{ids}")
        room = min(p.max_tokens, limit - len(ids))
        if rng.random() < 0.5:
            text = f"```python\nprint({rng.randrange(100)})\n```"
            body = self._tokenizer.encode(text, add_special_tokens=False)
            tokens = [*body, self._tokenizer.eos_token_id]
            if len(tokens) <= room:
                return CompletionOutput(index, text, tokens, finish_reason="stop")
        tokens = [rng.randrange(5, 200) for _ in range(room)]
        return CompletionOutput(index, self._tokenizer.decode(tokens), tokens, finish_reason="length")
