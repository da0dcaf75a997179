from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass, field

import pytest

from pipeline.rollout.backends import Sample, SamplingParams, get_backend, prompt_seed
from pipeline.rollout.prompts import build_messages
from pipeline.schema import Problem

PROMPTS = [build_messages(Problem(id=f"p{i}", source="s", statement=f"Problem {i}: " + "x " * i, style="stdio"))
           for i in range(3)]


def test_sampling_params_validate_and_unknown_backend():
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0)
    with pytest.raises(ValueError, match="max_tokens"):
        SamplingParams(max_tokens=0)
    with pytest.raises(ValueError, match="unknown backend"):
        get_backend("llama")


def test_prompt_seed_depends_on_seed_and_prompt_only():
    assert prompt_seed(0, PROMPTS[0]) == prompt_seed(0, PROMPTS[0])
    assert prompt_seed(0, PROMPTS[0]) != prompt_seed(1, PROMPTS[0])
    assert prompt_seed(0, PROMPTS[0]) != prompt_seed(0, PROMPTS[1])


# --- hf -------------------------------------------------------------------------------------
def test_hf_generates_n_samples_per_prompt_deterministically(tiny_model_dir):
    backend = get_backend("hf", model=str(tiny_model_dir), batch_size=2, progress=False)
    sp = SamplingParams(max_tokens=24, seed=3)
    out = backend.generate(PROMPTS, 3, sp)
    assert [len(g) for g in out] == [3, 3, 3]
    for s in (s for g in out for s in g):
        assert 1 <= s.token_count <= 24
        assert s.finish_reason in ("stop", "length")
        assert s.truncated == (s.finish_reason == "length")
        assert "<|im_end|>" not in s.text  # cut at the end-of-sequence token
    assert any(s.truncated for g in out for s in g)  # a random model rarely stops within 24 tokens
    assert backend.generate(PROMPTS, 3, sp) == out  # seeded
    assert backend.generate(PROMPTS, 3, SamplingParams(max_tokens=24, seed=4)) != out


def test_hf_greedy_repeats_one_sequence(tiny_model_dir):
    backend = get_backend("hf", model=str(tiny_model_dir), progress=False)
    out = backend.generate(PROMPTS[:1], 2, SamplingParams(temperature=0, max_tokens=8))
    assert out[0][0] == out[0][1] and out[0][0] is not out[0][1]


# --- vllm (module mocked at the import boundary) ----------------------------------------------
@dataclass
class FakeCompletion:
    index: int
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class FakeRequestOutput:
    prompt: str
    outputs: list[FakeCompletion] = field(default_factory=list)


def make_fake_vllm(tokenizer):
    calls: dict = {"llm": [], "generate": []}

    class FakeSamplingParams:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class FakeLLM:
        def __init__(self, **kwargs):
            calls["llm"].append(kwargs)

        def get_tokenizer(self):
            return tokenizer

        def generate(self, prompts, params, use_tqdm=True):
            calls["generate"].append({"prompts": prompts, "params": [p.kwargs for p in params]})
            outs = []
            for prompt, p in zip(prompts, params, strict=True):
                n, limit = p.kwargs["n"], p.kwargs["max_tokens"]
                comps = [FakeCompletion(i, f"```python\nprint({i})\n```" if i % 2 == 0 else "x" * limit,
                                        list(range(5 if i % 2 == 0 else limit)), "stop" if i % 2 == 0 else "length")
                         for i in reversed(range(n))]  # out of order on purpose
                outs.append(FakeRequestOutput(prompt, comps))
            return outs

    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    module.SamplingParams = FakeSamplingParams
    return module, calls


def test_vllm_request_building_and_parsing(monkeypatch, tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    fake, calls = make_fake_vllm(tok)
    monkeypatch.setitem(sys.modules, "vllm", fake)
    backend = get_backend("vllm", model="Qwen/Qwen3-4B-Instruct-2507", tensor_parallel_size=2,
                          max_model_len=16384, engine_kwargs={"enforce_eager": True}, progress=False)
    sp = SamplingParams(temperature=1.2, top_p=0.95, max_tokens=16, seed=7)
    out = backend.generate(PROMPTS[:2], 4, sp)
    (engine,) = calls["llm"]
    assert engine["model"] == "Qwen/Qwen3-4B-Instruct-2507" and engine["tensor_parallel_size"] == 2
    assert engine["max_model_len"] == 16384 and engine["enforce_eager"] is True
    (gen,) = calls["generate"]
    assert gen["prompts"][0].startswith("<|im_start|>system") and gen["prompts"][0].endswith("</think>\n\n")
    assert gen["params"][0] == {"n": 4, "temperature": 1.2, "top_p": 0.95, "max_tokens": 16,
                                "seed": prompt_seed(7, PROMPTS[0])}
    assert gen["params"][1]["seed"] == prompt_seed(7, PROMPTS[1])
    assert [s.text for s in out[0]][:2] == ["```python\nprint(0)\n```", "x" * 16]  # sorted by index
    assert out[0][0] == Sample("```python\nprint(0)\n```", 5, "stop", False)
    assert out[0][1].token_count == 16 and out[0][1].truncated and out[0][1].finish_reason == "length"
    backend.generate(PROMPTS[:1], 1, sp)
    assert len(calls["llm"]) == 1  # the engine is built once


def test_vllm_thinking_prompt_and_missing_package(monkeypatch, tiny_model_dir):
    from transformers import AutoTokenizer

    fake, calls = make_fake_vllm(AutoTokenizer.from_pretrained(str(tiny_model_dir)))
    monkeypatch.setitem(sys.modules, "vllm", fake)
    get_backend("vllm", model="m", thinking=True, progress=False).generate(PROMPTS[:1], 1, SamplingParams())
    assert calls["generate"][0]["prompts"][0].endswith("<|im_start|>assistant\n")
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install '\.\[gpu\]'"):
        get_backend("vllm", model="m").generate(PROMPTS[:1], 1, SamplingParams())


def test_vllm_data_parallel_needs_enough_gpus():
    backend = get_backend("vllm", model="m", tensor_parallel_size=2, data_parallel_size=2, gpus="0,1,2")
    with pytest.raises(ValueError, match="needs 4 GPUs"):
        backend._device_groups()
    assert get_backend("vllm", model="m", tensor_parallel_size=2, data_parallel_size=2,
                       gpus="4,5,6,7")._device_groups() == ["4,5", "6,7"]


# --- openai-compatible server -----------------------------------------------------------------
def chat_response(n: int, texts=None, reasons=None, usage=None, reasoning=None):
    texts = texts or [f"```python\nprint({i})\n```" for i in range(n)]
    reasons = reasons or ["stop"] * n
    choices = []
    for i, (t, r) in enumerate(zip(texts, reasons, strict=True)):
        msg = {"role": "assistant", "content": t}
        if reasoning:
            msg["reasoning_content"] = reasoning
        choices.append({"index": i, "message": msg, "finish_reason": r})
    return {"id": "x", "object": "chat.completion", "choices": choices[::-1],
            "usage": {"prompt_tokens": 10, "completion_tokens": usage if usage is not None else 7 * n}}


def test_openai_request_and_response(httpserver):
    seen = []

    def handler(request):
        from werkzeug import Response

        body = json.loads(request.data)
        seen.append((body, request.headers.get("Authorization")))
        return Response(json.dumps(chat_response(body["n"])), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    backend = get_backend("openai", model="qwen", base_urls=httpserver.url_for("/v1"), api_key="sk-test",
                          progress=False)
    out = backend.generate(PROMPTS[:2], 3, SamplingParams(temperature=1.1, max_tokens=32, seed=5))
    assert len(seen) == 2
    body, auth = next(item for item in seen if item[0]["messages"] == PROMPTS[0])  # concurrent: any order
    assert auth == "Bearer sk-test"
    assert body == {"model": "qwen", "messages": PROMPTS[0], "n": 3, "temperature": 1.1, "top_p": 1.0,
                    "max_tokens": 32, "seed": prompt_seed(5, PROMPTS[0]),
                    "chat_template_kwargs": {"enable_thinking": False}}
    assert [s.text for s in out[1]] == [f"```python\nprint({i})\n```" for i in range(3)]
    assert sum(s.token_count for s in out[0]) == 21


def test_openai_parse_counts_reasoning_and_length():
    backend = get_backend("openai", model="m", progress=False)
    samples = backend.parse_response(chat_response(1, ["code"], ["length"], usage=32, reasoning="hmm"), 1, 32)
    assert samples == [Sample("<think>hmm</think>code", 32, "length", True)]
    # Several choices: a cut choice has max_tokens; the rest of usage is shared by text length.
    data = chat_response(3, ["aaaa", "x" * 50, "aaaaaaaaaaaa"], ["stop", "length", "stop"], usage=50 + 40)
    counts = [s.token_count for s in backend.parse_response(data, 3, 50)]
    assert counts == [10, 50, 30]
    from pipeline.rollout.backends.openai_api import OpenAIError

    with pytest.raises(OpenAIError, match="expected 2 choices"):
        backend.parse_response(chat_response(1), 2, 32)


def test_openai_local_tokenizer_counts_exactly(tiny_model_dir):
    from transformers import AutoTokenizer

    backend = get_backend("openai", model="m", tokenizer=str(tiny_model_dir), progress=False)
    data = chat_response(2, ["print(1)", "hello world"])
    del data["usage"]
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    assert [s.token_count for s in backend.parse_response(data, 2, 64)] == [
        len(tok.encode("print(1)", add_special_tokens=False)), len(tok.encode("hello world", add_special_tokens=False))]


def test_openai_retries_and_round_robin(httpserver):
    from pytest_httpserver import HTTPServer
    from werkzeug import Response

    second = HTTPServer(host="127.0.0.1", port=0)
    second.start()
    try:
        hits = {"a": 0, "b": 0}

        def flaky(request):  # server a fails every first try
            hits["a"] += 1
            if hits["a"] % 2 == 1:
                return Response("overloaded", status=503)
            return Response(json.dumps(chat_response(json.loads(request.data)["n"])), content_type="application/json")

        def good(request):
            hits["b"] += 1
            return Response(json.dumps(chat_response(json.loads(request.data)["n"])), content_type="application/json")

        httpserver.expect_request("/v1/chat/completions").respond_with_handler(flaky)
        second.expect_request("/v1/chat/completions").respond_with_handler(good)
        urls = f"{httpserver.url_for('/v1')},{second.url_for('/v1')}"
        backend = get_backend("openai", model="m", base_urls=urls, backoff_s=0.01, concurrency=2, split_n=True,
                              progress=False)
        out = backend.generate(PROMPTS[:2], 2, SamplingParams(max_tokens=8))
        assert [len(g) for g in out] == [2, 2]
        assert hits["b"] >= 2 and hits["a"] >= 1  # both servers used; 503s retried on the other one
    finally:
        second.stop()


def test_openai_fatal_error_and_exhausted_retries(httpserver):
    from pipeline.rollout.backends.openai_api import OpenAIError

    httpserver.expect_request("/v1/chat/completions").respond_with_data("model not found", status=404)
    backend = get_backend("openai", model="m", base_urls=httpserver.url_for("/v1"), progress=False)
    with pytest.raises(OpenAIError, match="HTTP 404: model not found"):
        backend.generate(PROMPTS[:1], 1, SamplingParams())
    dead = get_backend("openai", model="m", base_urls="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01,
                       progress=False)
    with pytest.raises(OpenAIError, match="after 2 attempts"):
        dead.generate(PROMPTS[:1], 1, SamplingParams())


def test_open_think_in_the_prompt_is_restored():
    from pipeline.rollout.backends import with_open_think
    from pipeline.rollout.extract import extract_code

    opened = "<|im_start|>assistant\n<think>\n"
    closed = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    cut = "let me try\n```python\nprint(1)\n```\nhmm"  # truncated while thinking
    assert extract_code(with_open_think(opened, cut)) is None
    assert extract_code(with_open_think(closed, cut)) == "print(1)"
    done = "idea</think>\n```python\nprint(2)\n```"
    assert extract_code(with_open_think(opened, done)) == "print(2)"
