"""transformers `generate` backend: batched, left-padded, sampled, seeded. The CPU default.

Seeds are per batch (one `generate` call samples a whole batch), so a prompt's samples depend on
the prompts batched with it; the same prompts in the same order give the same samples. The batches
are `batch_plan`'s, which the Ray replicas (`ray_replicas`) follow too: one batch per task, so a
rollout spread over replicas draws what the local backend draws.
"""

from __future__ import annotations

from typing import Any

from microcoder.pipeline.generation.backends.base import (
    Sample,
    SamplingParams,
    prompt_seed,
    repeat_greedy,
    with_open_think,
)
from microcoder.pipeline.generation.prompts import render_prompt


def batch_plan(texts: list[str], batch_size: int) -> list[list[int]]:
    """Indices of the rendered `texts` per `generate` call: similar lengths together (less padding).
    A batch's seed comes from its own texts, so the same plan samples the same wherever it runs."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


class HFBackend:
    """Generate with a local (or cached) causal LM.

    model: path or Hub id; batch_size: prompts per `generate` call (each returns `n` sequences);
    dtype: "auto" (bfloat16 on CUDA, float32 on CPU) or a torch dtype name; device: "auto" | "cpu"
    | "cuda" | "cuda:1"...; thinking: the chat template's thinking switch.
    """

    def __init__(self, model: str, *, thinking: bool = False, batch_size: int = 8, dtype: str = "auto",
                 device: str = "auto", progress: bool = True, model_object: Any = None, tokenizer: Any = None):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_path = str(model)
        self.thinking = thinking
        self.batch_size = batch_size
        self.dtype = dtype
        self.device = device
        self.progress = progress
        self._model = model_object
        self._tokenizer = tokenizer
        self._render_tokenizer = None  # render() without loading the model
        self._owned = model_object is None  # close() frees only what this backend loaded

    def _load(self) -> None:
        if self._model is not None and self._tokenizer is not None:
            return
        import torch

        from microcoder.pipeline.models import load_model_and_tokenizer

        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = self.dtype
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        model, tokenizer = load_model_and_tokenizer(self.model_path, dtype=dtype)
        self._model = model.to(device).eval()
        self._tokenizer = tokenizer

    def render(self, prompts: list[list[dict[str, str]]]) -> list[str]:
        """The chat-rendered prompts; loads only the tokenizer when the model is not loaded (the Ray
        driver plans the batches with it)."""
        tok = self._tokenizer or self._render_tokenizer
        if tok is None:
            from transformers import AutoTokenizer

            tok = self._render_tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        return [render_prompt(m, tok, thinking=self.thinking) for m in prompts]

    def close(self) -> None:
        """Free the model this backend loaded (and the GPU memory it held)."""
        if not self._owned or self._model is None:
            return
        self._model = None
        import gc

        gc.collect()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (self._model.generation_config.eos_token_id, self._tokenizer.eos_token_id):
            if isinstance(source, int):
                ids.add(source)
            elif source:
                ids.update(source)
        return ids

    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        import torch
        from tqdm.auto import tqdm
        from transformers import GenerationConfig

        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self._load()
        tok, model = self._tokenizer, self._model
        tok.padding_side = "left"
        texts = [render_prompt(m, tok, thinking=self.thinking) for m in prompts]
        eos = self._eos_ids()
        greedy = sampling.greedy
        config = GenerationConfig(
            do_sample=not greedy, temperature=sampling.temperature if not greedy else None,
            top_p=sampling.top_p if not greedy else None, top_k=0 if not greedy else None,
            max_new_tokens=sampling.max_tokens, num_return_sequences=1 if greedy else n,
            eos_token_id=sorted(eos), pad_token_id=tok.pad_token_id,
        )
        # Results go back in prompt order.
        results: list[list[Sample]] = [[] for _ in texts]
        bar = tqdm(total=len(texts), desc="generate (hf)", unit="prompt", disable=not self.progress)
        for idx in batch_plan(texts, self.batch_size):
            seed_msgs = [{"role": "batch", "content": texts[i]} for i in idx]
            torch.manual_seed(prompt_seed(sampling.seed, seed_msgs))
            enc = tok([texts[i] for i in idx], return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            with torch.no_grad():
                out = model.generate(**enc, generation_config=config)
            new = out[:, enc["input_ids"].shape[1]:].tolist()
            per_prompt = 1 if greedy else n
            for j, i in enumerate(idx):
                seqs = new[j * per_prompt:(j + 1) * per_prompt]
                samples = [self._to_sample(s, eos, sampling.max_tokens, texts[i]) for s in seqs]
                results[i] = repeat_greedy(samples, n) if greedy else samples
            bar.update(len(idx))
        bar.close()
        return results

    def _to_sample(self, ids: list[int], eos: set[int], max_tokens: int, prompt: str) -> Sample:
        end = next((k for k, t in enumerate(ids) if t in eos), None)
        if end is None:
            body, count, finish = ids, len(ids), "length"
        else:
            body, count, finish = ids[:end], end + 1, "stop"
        # Special tokens stay (a `<think>` may be one); pad/eos were cut off above.
        text = with_open_think(prompt, self._tokenizer.decode(body, skip_special_tokens=False))
        return Sample(text=text, token_count=count, finish_reason=finish, truncated=finish == "length" and count >= max_tokens)
