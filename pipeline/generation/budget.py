"""Prompt token budgets: a prompt must leave room for the whole completion, counted up front.

What an over-long prompt does otherwise (vLLM 0.31.0, read from the wheel; TRL 1.16):
- offline `LLM.generate`: a prompt of max_model_len tokens or more raises for the *whole* call (one
  problem aborts its shard); a shorter prompt whose prompt + max_tokens passes max_model_len is
  cut at max_model_len with finish_reason "length", i.e. with a smaller completion budget than the
  others (and counted as truncated);
- `vllm serve` (the openai backend, TRL server mode): HTTP 400 "This model's maximum context length
  is ..." when prompt + max_tokens passes the server's --max-model-len (TRL stops training on it);
- TRL colocate mode: the prompt is silently cut.

So every stage that generates (rollout, eval-model, the difficulty predictor, train) renders each
prompt with the model's chat template, counts its tokens with the model's tokenizer (no special
tokens added: the rendered text already holds them, and the vLLM backend sends these very ids),
and sends a problem to rejects, with the reason, when `prompt tokens + max_tokens >
max_model_len`. `budget_rejects` is that check, shared by all of them.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microcoder.pipeline.generation.prompts import render_prompt

log = logging.getLogger(__name__)

REASON = "prompt over the token budget"  # reject reasons start with this (grouped before the colon)
# The config keys vLLM reads a model's context length from (the smallest one present wins).
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_sequence_length",
                 "max_seq_length", "seq_len")


@dataclass(frozen=True)
class PromptBudget:
    max_prompt_tokens: int
    source: str  # how the number was derived, quoted in reject reasons

    def reason(self, tokens: int) -> str | None:
        if tokens <= self.max_prompt_tokens:
            return None
        return f"{REASON}: {tokens} tokens, at most {self.max_prompt_tokens} ({self.source})"


def context_length(model: str | Path) -> int | None:
    """The model's context length from its config.json (a local directory, or a Hub id already in
    the local cache; never a download), else None."""
    cfg = Path(model) / "config.json"
    if cfg.is_file():
        data = json.loads(cfg.read_text())
    else:
        try:
            from transformers import AutoConfig

            data = AutoConfig.from_pretrained(str(model), local_files_only=True).to_dict()
        except Exception:  # not a model we have here
            return None
    data = {**data.get("text_config", {}), **data}
    values = [int(data[k]) for k in _CONTEXT_KEYS if isinstance(data.get(k), int) and data[k] > 0]
    return min(values) if values else None


def resolve_budget(max_tokens: int, *, max_prompt_tokens: int | None = None, max_model_len: int | None = None,
                   model: str | Path | None = None) -> PromptBudget | None:
    """The prompt budget: `max_prompt_tokens` when given, else `max_model_len - max_tokens`, else
    the model's context length (config.json) - max_tokens; None when nothing says."""
    if max_prompt_tokens is not None:
        if max_prompt_tokens < 1:
            raise ValueError(f"max_prompt_tokens must be >= 1, got {max_prompt_tokens}")
        if max_model_len is not None and max_prompt_tokens + max_tokens > max_model_len:
            raise ValueError(f"max_prompt_tokens {max_prompt_tokens} + max_tokens {max_tokens} exceed "
                             f"max_model_len {max_model_len}")
        return PromptBudget(int(max_prompt_tokens), "max_prompt_tokens")
    source = "max_model_len"
    if max_model_len is None and model is not None:
        max_model_len, source = context_length(model), "the model's context length"
    if max_model_len is None:
        return None
    if max_model_len - max_tokens < 1:
        raise ValueError(f"max_tokens {max_tokens} leaves no room for a prompt in {source} {max_model_len}")
    return PromptBudget(max_model_len - max_tokens, f"{source} {max_model_len} - max_tokens {max_tokens}")


@functools.lru_cache(maxsize=4)
def load_tokenizer(source: str | Path) -> Any:
    """The tokenizer at `source` (a local directory, or a Hub id in the local cache: never a
    download), cached (the predictor checks the budget again on every retry round)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(source), local_files_only=True)


def count_prompt_tokens(prompts: list[list[dict[str, str]]], tokenizer: Any, *, thinking: bool = False) -> list[int]:
    """Tokens of each chat prompt as the model sees it (template, generation prompt, thinking switch)."""
    if not prompts:
        return []
    texts = [render_prompt(m, tokenizer, thinking=thinking) for m in prompts]
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def budget_rejects(prompts: Iterable[tuple[str, list[dict[str, str]]]], *, models: Iterable[str], max_tokens: int,
                   thinking: bool = False, max_prompt_tokens: int | None = None, max_model_len: int | None = None,
                   tokenizer: str | None = None, tokenizer_object: Any = None, what: str = "prompts",
                   ) -> dict[str, str]:
    """{id: reason} for every prompt over its budget under any of `models` (each counted with its own
    tokenizer, or with `tokenizer` / `tokenizer_object` when given: the served model's tokenizer for
    the openai backend). A model whose tokenizer or budget cannot be found is skipped with a
    warning, unless `max_prompt_tokens` was set explicitly (then it is an error)."""
    items = list(prompts)
    names = list(dict.fromkeys(str(m) for m in models))
    over: dict[str, str] = {}
    for model in names:
        budget = resolve_budget(max_tokens, max_prompt_tokens=max_prompt_tokens, max_model_len=max_model_len,
                                model=model)
        if budget is None and tokenizer:
            budget = resolve_budget(max_tokens, model=tokenizer)
        if budget is None:
            log.warning("%s: no max_model_len or max_prompt_tokens given and no context length in %s's config: "
                        "prompt lengths are not checked", what, model)
            continue
        tok = tokenizer_object
        if tok is None:
            try:
                tok = load_tokenizer(tokenizer or model)
            except Exception as e:  # any loader failure means: cannot count here
                if max_prompt_tokens is not None:
                    raise ValueError(f"{what}: max_prompt_tokens is set but the tokenizer of {tokenizer or model} "
                                     f"cannot be loaded to count prompt tokens: {e}") from e
                log.warning("%s: cannot load the tokenizer of %s (%s): prompt lengths are not checked",
                            what, tokenizer or model, e)
                continue
        counts = count_prompt_tokens([m for _, m in items], tok, thinking=thinking)
        for (pid, _), n in zip(items, counts, strict=True):
            reason = budget.reason(n)
            if reason is not None and pid not in over:
                over[pid] = reason if len(names) == 1 else f"{reason} [model {model}]"
    if over:
        log.warning("%s: %d of %d prompts are over the token budget (see rejects)", what, len(over), len(items))
    return over
