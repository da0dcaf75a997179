"""The openai backend against a real OpenAI-compatible server: `transformers serve` with the tiny
model on 127.0.0.1. That server ignores `n` (one choice whatever is asked): the backend must notice,
say so once and send one request per sample on its own."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from microcoder.pipeline.generation.backends import SamplingParams, get_backend
from microcoder.pipeline.generation.backends.openai_api import OpenAIError
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem

PROMPTS = [build_messages(Problem(id=f"p{i}", source="s", statement=f"Problem {i}: " + "x " * i, style="stdio"))
           for i in range(2)]
READY_WITHIN_S = 180  # the server imports torch and loads the model: slow on a busy 2-core machine
SERVE = "import sys; from transformers.cli.transformers import main; sys.argv[0] = 'transformers'; sys.exit(main())"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tiny_model_dir, tmp_path_factory):
    """`transformers serve <tiny model>` on a free local port; yields its base URL, killed at the end."""
    pytest.importorskip("transformers.cli.serving.server", reason="transformers[serving] is not installed")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with open(log_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", SERVE, "serve", str(tiny_model_dir), "--host", "127.0.0.1",
                                 "--port", str(port), "--device", "cpu"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + READY_WITHIN_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve not ready after {READY_WITHIN_S} s: {log_path.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_server_ignoring_n_falls_back_to_one_request_per_sample(server, tiny_model_dir, caplog):
    sp = SamplingParams(max_tokens=8, seed=3)
    # One request at a time: transformers serve seeds the global torch generator per request, so
    # concurrent requests interleave their draws (vLLM's per-request generators do not).
    options = dict(model=str(tiny_model_dir), base_urls=server, max_retries=1, backoff_s=0.01, concurrency=1,
                   template_kwargs=False, progress=False)
    backend = get_backend("openai", **options)
    with caplog.at_level(logging.WARNING, logger="microcoder.pipeline.generation.backends.openai_api"):
        out = backend.generate(PROMPTS, 3, sp)
        again = backend.generate(PROMPTS, 3, sp)  # already split: no second probe, no second warning
    assert [len(g) for g in out] == [3, 3]
    assert all(1 <= s.token_count <= 8 and s.finish_reason in ("stop", "length") for g in out for s in g)
    warnings = [r.getMessage() for r in caplog.records if "ignores `n`" in r.getMessage()]
    assert len(warnings) == 1 and "expected 3 choices, got 1" in warnings[0]
    # The fallback sends what split_n=true sends (same seeds), so it gives the same samples.
    split = get_backend("openai", split_n=True, **options).generate(PROMPTS, 3, sp)
    assert [[s.text for s in g] for g in out] == [[s.text for s in g] for g in split] == \
        [[s.text for s in g] for g in again]
    assert len({s.text for g in out for s in g}) > 1  # per-sample seeds: not one sample repeated


def test_server_failure_is_one_clear_line(server):
    backend = get_backend("openai", model="no/such-model", base_urls=server, max_retries=1, backoff_s=0.01,
                          progress=False)
    with pytest.raises(OpenAIError) as info:
        backend.generate(PROMPTS[:1], 2, SamplingParams(max_tokens=4))
    message = str(info.value)
    assert "\n" not in message and "/chat/completions" in message
