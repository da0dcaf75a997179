"""The generation backends (pipeline/generation/backends): hf with the tiny local model, the vLLM
CPU stand-in (tests/stand_in/vllm, checking what vLLM 0.31.0 checks) and openai against a local
HTTP server (pytest-httpserver): samples, seeds, greedy repeats, thinking, engine failures, retries."""

from __future__ import annotations

import json
import os
import sys

import pytest
from stand_in import use_stand_in_vllm

from microcoder.pipeline.generation.backends import Sample, SamplingParams, get_backend, prompt_seed
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem


@pytest.fixture
def stand_in_vllm(monkeypatch):
    yield from use_stand_in_vllm(monkeypatch)


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


# --- vllm (the stand-in module of tests/stand_in, which refuses what vLLM 0.31.0 refuses) ---------
def test_vllm_request_building_parsing_and_teardown(stand_in_vllm, tiny_model_dir):
    from transformers import AutoTokenizer

    from microcoder.pipeline.generation.prompts import render_prompt

    vllm = stand_in_vllm
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    backend = get_backend("vllm", model=str(tiny_model_dir), tensor_parallel_size=2, max_model_len=2048,
                          engine_kwargs={"enforce_eager": True}, progress=False)
    sp = SamplingParams(temperature=1.2, top_p=0.95, max_tokens=16, seed=7)
    out = backend.generate(PROMPTS[:2], 4, sp)
    (engine,) = vllm.CALLS["llm"]
    assert engine["model"] == str(tiny_model_dir) and engine["tensor_parallel_size"] == 2
    assert engine["max_model_len"] == 2048 and engine["enforce_eager"] is True
    (gen,) = vllm.CALLS["generate"]
    # Token ids of the rendered chat text, without special tokens added a second time.
    assert gen["prompts"][0] == {"prompt_token_ids": tok.encode(render_prompt(PROMPTS[0], tok), add_special_tokens=False)}
    assert gen["params"][0] == {"n": 4, "temperature": 1.2, "top_p": 0.95, "max_tokens": 16,
                                "seed": prompt_seed(7, PROMPTS[0])}
    assert gen["params"][1]["seed"] == prompt_seed(7, PROMPTS[1])
    assert [len(g) for g in out] == [4, 4]
    for s in (s for g in out for s in g):  # sorted back by index; lengths and reasons carried over
        assert s.finish_reason in ("stop", "length") and s.truncated == (s.finish_reason == "length")
        assert 1 <= s.token_count <= 16 and (s.token_count == 16) == s.truncated
    assert len({s.text for g in out for s in g}) > 2  # sampled, not one answer repeated
    assert backend.generate(PROMPTS[:2], 4, sp) == out  # per-request seeds
    assert len(vllm.CALLS["llm"]) == 1  # the engine is built once
    core = backend._llm.llm_engine.engine_core
    assert core.proc.is_alive()
    backend.close()  # explicit teardown: engine core stopped, distributed state and memory freed
    assert vllm.CALLS["shutdown"] == 1 and vllm.CALLS["cleanup"] == 1 and not core.proc.is_alive()
    backend.close()  # idempotent
    assert vllm.CALLS["shutdown"] == 1


def test_stand_in_refuses_what_vllm_refuses(stand_in_vllm, tiny_model_dir):
    vllm = stand_in_vllm
    for bad, why in [({"temperature": 2.5}, r"temperature must be in \[0, 2\]"),
                     ({"temperature": 0, "n": 2}, "n must be 1 when using greedy sampling"),
                     ({"top_p": 0}, "top_p"), ({"n": 0}, "n must be at least 1"), ({"max_tokens": 0}, "max_tokens"),
                     ({"temperature": float("nan")}, "finite")]:
        with pytest.raises(vllm.VLLMValidationError, match=why):
            vllm.SamplingParams(**bad)
    assert not issubclass(vllm.VLLMValidationError, ValueError)  # as in vLLM 0.31: catch it by name
    llm = vllm.LLM(model=str(tiny_model_dir), max_model_len=64)
    ok = {"prompt_token_ids": [5] * 10}
    with pytest.raises(vllm.VLLMValidationError, match="longer than the maximum model length"):
        llm.generate([ok, {"prompt_token_ids": [5] * 64}], vllm.SamplingParams(max_tokens=8))  # aborts both
    assert not vllm.CALLS["generate"]
    (out,) = llm.generate([{"prompt_token_ids": [5] * 60}], vllm.SamplingParams(max_tokens=8, seed=1))
    assert all(len(c.token_ids) <= 4 for c in out.outputs)  # cut at max_model_len
    with pytest.raises(TypeError, match="unexpected keyword"):
        vllm.LLM(model=str(tiny_model_dir), max_model_length=64)
    llm.llm_engine.engine_core.shutdown()


def test_sampling_values_vllm_refuses_are_refused_at_config_time():
    from microcoder.pipeline.difficulty.predict import PredictConfig
    from microcoder.pipeline.rollout.runner import RolloutConfig

    for make in (lambda t: SamplingParams(temperature=t), lambda t: RolloutConfig(temperature=t),
                 lambda t: PredictConfig(temperature=t)):
        for t in (2.01, -0.1, float("inf")):
            with pytest.raises(ValueError, match="temperature"):
                make(t)
        make(2.0)
        make(0)
    assert SamplingParams(temperature=0).per_request(8) == 1 and SamplingParams(temperature=0.6).per_request(8) == 8


def test_vllm_greedy_asks_one_sample_and_repeats_it(stand_in_vllm, tiny_model_dir):
    backend = get_backend("vllm", model=str(tiny_model_dir), max_model_len=1024, progress=False)
    out = backend.generate(PROMPTS[:2], 3, SamplingParams(temperature=0, max_tokens=8))
    backend.close()
    assert [p["n"] for p in stand_in_vllm.CALLS["generate"][0]["params"]] == [1, 1]
    for group in out:
        assert len(group) == 3 and group[0] == group[1] == group[2] and group[0] is not group[1]


@pytest.fixture(scope="module")
def bos_tokenizer_dir(tmp_path_factory, tiny_model_dir):
    """The tiny tokenizer with a BOS token that the chat template writes and `add_special_tokens`
    adds (as Llama-style templates do)."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer

    from microcoder.pipeline.models import CHAT_TEMPLATE

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    bos = "<|endoftext|>"
    tok._tokenizer.post_processor = TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, tok.convert_tokens_to_ids(bos))])
    tok.bos_token = bos
    tok.chat_template = "{{- bos_token }}" + CHAT_TEMPLATE
    out = tmp_path_factory.mktemp("bos-tokenizer")
    tok.save_pretrained(out)
    return out


def test_vllm_prompt_has_one_bos(stand_in_vllm, bos_tokenizer_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(bos_tokenizer_dir))
    bos = tok.bos_token_id
    llm = stand_in_vllm.LLM(model=str(bos_tokenizer_dir), max_model_len=1024)
    text = tok.apply_chat_template(PROMPTS[0], tokenize=False, add_generation_prompt=True)
    (out,) = llm.generate([text], stand_in_vllm.SamplingParams(max_tokens=4))
    llm.llm_engine.engine_core.shutdown()
    assert out.prompt_token_ids[:2] == [bos, bos]  # what a text prompt gets: the double BOS
    backend = get_backend("vllm", model=str(bos_tokenizer_dir), max_model_len=1024, progress=False)
    backend.generate(PROMPTS[:1], 1, SamplingParams(max_tokens=4))
    backend.close()
    ids = stand_in_vllm.CALLS["generate"][-1]["prompt_token_ids"][0]
    assert ids[0] == bos and ids[1] != bos and ids.count(bos) == 1


def test_vllm_prompt_over_max_model_len_is_refused_before_the_engine(stand_in_vllm, tiny_model_dir):
    from microcoder.pipeline.generation.backends.vllm_engine import PromptTooLong
    from microcoder.pipeline.generation.budget import count_prompt_tokens, load_tokenizer

    (short,) = count_prompt_tokens(PROMPTS[:1], load_tokenizer(str(tiny_model_dir)))
    backend = get_backend("vllm", model=str(tiny_model_dir), max_model_len=short + 8, progress=False)
    long = build_messages(Problem(id="long", source="s", statement="word " * 200, style="stdio"))
    with pytest.raises(PromptTooLong, match=r"1 prompts .* \(prompt 1: \d+ tokens\)"):
        backend.generate([PROMPTS[0], long], 1, SamplingParams(max_tokens=4))
    assert not stand_in_vllm.CALLS["generate"]  # refused before the engine, with the prompt named
    assert len(backend.generate([PROMPTS[0]], 1, SamplingParams(max_tokens=4))[0]) == 1
    backend.close()


def test_vllm_thinking_prompt_and_missing_package(stand_in_vllm, tiny_model_dir, monkeypatch):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    backend = get_backend("vllm", model=str(tiny_model_dir), thinking=True, max_model_len=1024, progress=False)
    backend.generate(PROMPTS[:1], 1, SamplingParams(max_tokens=4))
    backend.close()
    ids = stand_in_vllm.CALLS["generate"][0]["prompts"][0]["prompt_token_ids"]
    assert tok.decode(ids).endswith("<|im_start|>assistant\n")
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` now raises ImportError
    with pytest.raises(ImportError, match=r"pip install '\.\[gpu\]'"):
        get_backend("vllm", model="m").generate(PROMPTS[:1], 1, SamplingParams())


def test_vllm_engine_failures_are_retried_never_returned_as_answers(stand_in_vllm, tiny_model_dir):
    from microcoder.pipeline.generation.backends import EngineFailure

    vllm = stand_in_vllm
    backend = get_backend("vllm", model=str(tiny_model_dir), max_model_len=1024, engine_retries=2, progress=False)
    sp = SamplingParams(max_tokens=8, seed=3)
    clean = backend.generate(PROMPTS, 2, sp)
    vllm.INJECT_FINISH[:] = [None, "error", None, "abort"]  # requests 1 and then the retry of request 1
    again = backend.generate(PROMPTS, 2, sp)
    assert again == clean  # the failed request was retried with its own seed
    assert [len(c["prompts"]) for c in vllm.CALLS["generate"][1:]] == [3, 1, 1]
    vllm.INJECT_FINISH[:] = ["abort", "error", "error"]
    with pytest.raises(EngineFailure, match=r"failed 1 of 1 requests after 3 attempts"):
        backend.generate(PROMPTS[:1], 2, sp)
    backend.close()


_DP_SCRIPT = """
import json, sys
from microcoder.pipeline.generation.backends import SamplingParams, get_backend
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem
prompts = [build_messages(Problem(id=f"p{i}", source="s", statement=f"Problem {i}: " + "x " * i, style="stdio"))
           for i in range(3)]
backend = get_backend("vllm", model=sys.argv[1], max_model_len=1024, data_parallel_size=2, gpus="0,1", progress=False)
out = backend.generate(prompts, 2, SamplingParams(max_tokens=8, seed=5))
procs = [p for p, _ in backend._workers]
daemonic = [p.daemon for p in procs]
backend._workers[0][1].close()  # a worker whose pipe closes (its parent died or forgot it) exits on its own
procs[0].join(timeout=60)
print("RESULT " + json.dumps({"texts": [[s.text for s in g] for g in out], "daemonic": daemonic,
                              "closed_pipe_exit": procs[0].exitcode, "pids": [p.pid for p in procs]}), flush=True)
# No close(): the interpreter must still exit, stopping worker 1 on the way.
"""


@pytest.mark.slow  # two spawned workers, each importing transformers: about 10 s on an idle 2-core machine
def test_vllm_data_parallel_workers_can_start_engine_children(stand_in_vllm, tiny_model_dir):
    """vLLM starts its EngineCore as a child process: a daemonic worker could not ("daemonic
    processes are not allowed to have children"). Two spawned workers each build a stand-in
    engine (which starts a child), split the prompts, and give the single engine's samples; a
    worker exits when its pipe closes, and a script that never calls close() still exits."""
    import subprocess

    single = get_backend("vllm", model=str(tiny_model_dir), max_model_len=1024, progress=False)
    expected = [[s.text for s in g] for g in single.generate(PROMPTS, 2, SamplingParams(max_tokens=8, seed=5))]
    single.close()
    done = subprocess.run([sys.executable, "-c", _DP_SCRIPT, str(tiny_model_dir)], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[len("RESULT "):])
    assert result["texts"] == expected
    assert result["daemonic"] == [False, False] and result["closed_pipe_exit"] == 0
    for pid in result["pids"]:  # both workers are gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


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
    from microcoder.pipeline.generation.backends.openai_api import OpenAIError

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
    from microcoder.pipeline.generation.backends.openai_api import OpenAIError

    httpserver.expect_request("/v1/chat/completions").respond_with_data("model not found", status=404)
    backend = get_backend("openai", model="m", base_urls=httpserver.url_for("/v1"), progress=False)
    with pytest.raises(OpenAIError, match="HTTP 404: model not found"):
        backend.generate(PROMPTS[:1], 1, SamplingParams())
    dead = get_backend("openai", model="m", base_urls="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01,
                       progress=False)
    with pytest.raises(OpenAIError, match="after 2 attempts"):
        dead.generate(PROMPTS[:1], 1, SamplingParams())


def test_open_think_in_the_prompt_is_restored():
    from microcoder.pipeline.generation.backends import with_open_think
    from microcoder.pipeline.generation.extract import extract_code

    opened = "<|im_start|>assistant\n<think>\n"
    closed = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    cut = "let me try\n```python\nprint(1)\n```\nhmm"  # truncated while thinking
    assert extract_code(with_open_think(opened, cut)) is None
    assert extract_code(with_open_think(closed, cut)) == "print(1)"
    done = "idea</think>\n```python\nprint(2)\n```"
    assert extract_code(with_open_think(opened, done)) == "print(2)"


def test_openai_greedy_asks_one_choice_and_engine_failures_are_retried(httpserver):
    from werkzeug import Response

    seen = []
    failures = ["error", "abort"]

    def handler(request):
        body = json.loads(request.data)
        seen.append(body)
        data = chat_response(body["n"])
        if failures:  # the server's own failures: never an answer, asked again
            data["choices"][0]["finish_reason"] = failures.pop(0)
        return Response(json.dumps(data), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    backend = get_backend("openai", model="m", base_urls=httpserver.url_for("/v1"), backoff_s=0.01, progress=False)
    out = backend.generate(PROMPTS[:1], 4, SamplingParams(temperature=0, max_tokens=8))
    assert [b["n"] for b in seen] == [1, 1, 1]  # vLLM refuses n > 1 when greedy
    assert len(out[0]) == 4 and len({id(s) for s in out[0]}) == 4 and len({s.text for s in out[0]}) == 1
    assert all(s.finish_reason == "stop" for s in out[0])
    from microcoder.pipeline.generation.backends.openai_api import OpenAIError

    failures[:] = ["error"] * 3
    once = get_backend("openai", model="m", base_urls=httpserver.url_for("/v1"), max_retries=1, backoff_s=0.01,
                       progress=False)
    with pytest.raises(OpenAIError, match="finished with 'error'"):
        once.generate(PROMPTS[:1], 2, SamplingParams(max_tokens=8))


@pytest.mark.slow  # two spawned workers importing transformers
def test_vllm_data_parallel_failure_is_one_line(stand_in_vllm, tmp_path):
    backend = get_backend("vllm", model=str(tmp_path / "no-model"), max_model_len=1024, data_parallel_size=2,
                          gpus="0,1", progress=False)
    with pytest.raises(RuntimeError, match=r"^vLLM data-parallel generation failed: rank 0: \w+Error: .*no-model") as info:
        backend.generate(PROMPTS, 1, SamplingParams(max_tokens=4))
    assert "\n" not in str(info.value) and "Traceback" not in str(info.value)
    assert not backend._workers  # stopped
