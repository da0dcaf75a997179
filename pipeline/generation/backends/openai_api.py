"""OpenAI-compatible chat-completions backend: one or several base URLs (a fleet of `vllm serve`
instances is the scale-out path), async with bounded concurrency, retries with backoff.

Each prompt is one request with `n` choices (`split_n=True`: n requests of one choice, for servers
without `n`). A server that answers with fewer choices than asked ignores `n` (`transformers serve`
does): the backend says so once in the log and sends one request per sample from then on, the same
requests and seeds as `split_n=True`. Requests go round-robin over the base URLs; a retry moves to
the next URL. Every failure ends in one `OpenAIError` with a one-line message.
Per-choice token counts: a local tokenizer when given (exact); otherwise `usage.completion_tokens`
when there is one choice, `max_tokens` for a choice cut at the limit, and the rest of the usage
shared among the other choices by character length (an estimate: the API reports only the total).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import random
import threading
from collections.abc import Iterator
from typing import Any

from microcoder.pipeline.generation.backends.base import (
    ENGINE_FAILURES,
    Sample,
    SamplingParams,
    prompt_seed,
    repeat_greedy,
)

log = logging.getLogger(__name__)
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIError(RuntimeError):
    """A request failed for good; the message is one line (the stage contract prints it as is)."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class FewerChoices(OpenAIError):
    """The server answered with fewer choices than `n` (it ignores `n`): not retried, split instead."""


class OpenAIBackend:
    """model: the served model name; base_urls: one URL, a comma-separated string or a list
    (each ending in `/v1`); api_key: defaults to the `api_key_env` variable (never logged);
    concurrency: requests in flight; max_retries: per request; template_kwargs: send
    `chat_template_kwargs.enable_thinking` (vLLM servers); tokenizer: local tokenizer path for exact
    per-choice token counts."""

    def __init__(self, model: str, *, base_urls: str | list[str] = "http://localhost:8000/v1",
                 api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY", thinking: bool = False,
                 concurrency: int = 32, max_retries: int = 5, timeout_s: float = 600.0, backoff_s: float = 1.0,
                 split_n: bool = False, template_kwargs: bool = True, tokenizer: str | None = None,
                 progress: bool = True):
        urls = base_urls.split(",") if isinstance(base_urls, str) else list(base_urls)
        self.base_urls = [u.strip().rstrip("/") for u in urls if u.strip()]
        if not self.base_urls:
            raise ValueError("openai backend: no base_urls given")
        if concurrency < 1 or max_retries < 0:
            raise ValueError("concurrency must be >= 1 and max_retries >= 0")
        self.model = str(model)
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.thinking = thinking
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.split_n = split_n  # also set on its own when a server turns out to ignore `n`
        self.template_kwargs = template_kwargs
        self.progress = progress
        self._tokenizer = None
        if tokenizer:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(tokenizer)

    # --- request building and parsing (pure, unit-tested) -----------------------------------
    def request_body(self, messages: list[dict[str, str]], n: int, sampling: SamplingParams, seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "n": n, "temperature": sampling.temperature,
            "top_p": sampling.top_p, "max_tokens": sampling.max_tokens, "seed": seed,
        }
        if self.template_kwargs:
            body["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        return body

    def parse_response(self, data: dict[str, Any], n: int, max_tokens: int) -> list[Sample]:
        choices = data.get("choices")
        if isinstance(choices, list) and 0 < len(choices) < n:
            raise FewerChoices(f"expected {n} choices, got {len(choices)}")
        if not isinstance(choices, list) or len(choices) != n:
            got = len(choices) if isinstance(choices, list) else "no"
            raise OpenAIError(f"expected {n} choices, got {got}")
        choices = sorted(choices, key=lambda c: c.get("index", 0))
        texts, reasons = [], []
        for c in choices:
            msg = c.get("message") or {}
            content = msg.get("content") or ""
            thought = msg.get("reasoning_content") or msg.get("reasoning")
            # Servers with a reasoning parser split the thinking off: put it back in the usual form.
            texts.append(f"<think>{thought}</think>{content}" if thought else content)
            reason = c.get("finish_reason") or "stop"
            if reason in ENGINE_FAILURES:  # the server's failure, not an answer: retried by _post
                raise OpenAIError(f"choice {c.get('index', len(reasons))} finished with {reason!r}")
            reasons.append(reason)
        counts = self._token_counts(texts, reasons, (data.get("usage") or {}).get("completion_tokens"), max_tokens)
        return [Sample(text=t, token_count=k, finish_reason=r, truncated=r == "length")
                for t, k, r in zip(texts, counts, reasons, strict=True)]

    def _token_counts(self, texts: list[str], reasons: list[str], usage: int | None, max_tokens: int) -> list[int]:
        if self._tokenizer is not None:
            return [len(self._tokenizer.encode(t, add_special_tokens=False)) for t in texts]
        if usage is None:
            raise OpenAIError("response has no usage.completion_tokens (pass a tokenizer to count locally)")
        if len(texts) == 1:
            return [int(usage)]
        counts = [max_tokens if r == "length" else 0 for r in reasons]
        rest = [i for i, r in enumerate(reasons) if r != "length"]
        left = max(int(usage) - sum(counts), 0)
        chars = sum(len(texts[i]) for i in rest) or 1
        for i in rest:
            counts[i] = round(left * len(texts[i]) / chars)
        return counts

    # --- transport ------------------------------------------------------------------------
    async def _post(self, client, job: int, body: dict[str, Any], n: int, max_tokens: int) -> list[Sample]:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        last = ""
        for attempt in range(self.max_retries + 1):
            url = self.base_urls[(job + attempt) % len(self.base_urls)] + "/chat/completions"
            try:
                resp = await client.post(url, json=body, headers=headers)
            except httpx.TransportError as e:  # connection refused, timeouts, resets
                last = f"{url}: {type(e).__name__}: {e}"
            else:
                if resp.status_code == 200:
                    try:
                        return self.parse_response(resp.json(), n, max_tokens)
                    except FewerChoices:  # the server ignores `n`: asking again gives the same
                        raise
                    except (ValueError, OpenAIError) as e:  # malformed answer: try again
                        last = f"{url}: bad response: {e}"
                else:
                    last = f"{url}: HTTP {resp.status_code}: {resp.text[:300]}"
                    if resp.status_code not in RETRY_STATUS:
                        raise OpenAIError(last)
            if attempt < self.max_retries:
                await asyncio.sleep(min(self.backoff_s * 2 ** attempt, 30.0) * (0.5 + random.random() / 2))
        raise OpenAIError(f"request failed after {self.max_retries + 1} attempts; last error: {last}")

    async def _samples(self, client, sem: asyncio.Semaphore, tickets: Iterator[int], messages: list[dict[str, str]],
                       count: int, sampling: SamplingParams) -> list[Sample]:
        """`count` samples of one prompt: one request of `count` choices, or `count` requests of one
        (seeds seed, seed + 1, ...) when split, asked for or found necessary."""
        seed = prompt_seed(sampling.seed, messages)

        async def post(offset: int, k: int) -> list[Sample]:
            async with sem:
                body = self.request_body(messages, k, sampling, seed + offset)
                # Each request starts at the next URL (round-robin over the fleet).
                return await self._post(client, next(tickets), body, k, sampling.max_tokens)

        if count > 1 and not self.split_n:
            try:
                return await post(0, count)
            except FewerChoices as e:
                self._server_ignores_n(e)
        parts = await asyncio.gather(*(post(j, 1) for j in range(count)))
        return [s for part in parts for s in part]

    def _server_ignores_n(self, e: FewerChoices) -> None:
        if not self.split_n:  # said once: concurrent requests may all find out
            self.split_n = True
            log.warning("openai backend: the server answered %s: it ignores `n`; sending one request per "
                        "sample from now on (set backend_options.split_n=true to skip this probe)", e)

    async def _run(self, prompts: list[list[dict[str, str]]], count: int, sampling: SamplingParams) -> list[list[Sample]]:
        import httpx
        from tqdm.auto import tqdm

        sem = asyncio.Semaphore(self.concurrency)
        results: list[list[Sample] | None] = [None] * len(prompts)
        bar = tqdm(total=len(prompts), desc="generate (openai)", unit="prompt", disable=not self.progress)
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        tickets = itertools.count()

        async def one(client, i: int) -> None:
            results[i] = await self._samples(client, sem, tickets, prompts[i], count, sampling)
            bar.update(1)

        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, limits=limits) as client:
                async with asyncio.TaskGroup() as tg:
                    for i in range(len(prompts)):
                        tg.create_task(one(client, i))
        except* OpenAIError as group:
            raise group.exceptions[0] from None
        except* Exception as group:  # anything else (a bug, a broken client) is still one line
            first = group.exceptions[0]
            raise OpenAIError(f"openai backend failed: {type(first).__name__}: {first}") from first
        finally:
            bar.close()
        return results  # type: ignore[return-value]

    def generate(self, prompts: list[list[dict[str, str]]], n: int, sampling: SamplingParams) -> list[list[Sample]]:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        # Greedy: vLLM servers refuse n > 1 ("n must be 1 when using greedy sampling"); one request
        # of one choice, repeated.
        out = _run_sync(self._run(prompts, sampling.per_request(n), sampling))
        return [repeat_greedy(g, n) for g in out] if sampling.greedy else out

    def close(self) -> None:
        """Nothing to free: every call opens and closes its own HTTP client."""


def _run_sync(coro):
    """asyncio.run, also from code that already runs an event loop (notebooks): in a thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
