"""Rollouts on Ray: hf (and the vLLM stand-in) replicas as actors of the session's real local Ray
cluster (`ray_cluster`, 2 CPUs: one CPU per replica), no mocks of Ray."""

from __future__ import annotations

import os
import signal

import pytest
from stand_in import STAND_IN, use_stand_in_vllm

from pipeline.rollout.backends import SamplingParams, get_backend
from pipeline.rollout.prompts import build_messages
from pipeline.schema import Problem

PROMPTS = [build_messages(Problem(id=f"p{i}", source="s", statement=f"Problem {i}: " + "x " * (7 - 2 * i), style="stdio"))
           for i in range(5)]  # lengths not in prompt order: the batches reorder them
SAMPLING = SamplingParams(max_tokens=12, seed=11)


@pytest.fixture(scope="module")
def local_samples(tiny_model_dir):
    backend = get_backend("hf", model=str(tiny_model_dir), batch_size=2, progress=False)
    try:
        return backend.generate(PROMPTS, 2, SAMPLING)
    finally:
        backend.close()


def _ray_hf(tiny_model_dir, **options):
    options = {"batch_size": 2, **options}
    return get_backend("hf", model=str(tiny_model_dir), executor="ray", replicas=2, replica_cpus=1, progress=False,
                       **options)


def test_hf_replicas_give_the_local_samples_in_prompt_order(ray_cluster, tiny_model_dir, local_samples):
    backend = _ray_hf(tiny_model_dir)
    try:
        seen = []
        backend.progress = seen.append
        out = backend.generate(PROMPTS, 2, SAMPLING)
        assert out == local_samples  # same batches, same per-batch seeds: the same draws, back in order
        assert seen[-1] == len(PROMPTS) and len(seen) == 3  # 5 prompts in batches of 2: three tasks
        assert len(set(backend.pids())) == 2 and os.getpid() not in backend.pids()  # two actor processes
        assert backend.generate(PROMPTS, 2, SamplingParams(max_tokens=12, seed=12)) != out
    finally:
        backend.close()


def test_replica_killed_mid_run_is_replaced_and_nothing_is_lost(ray_cluster, tiny_model_dir, local_samples):
    backend = _ray_hf(tiny_model_dir, batch_size=1)
    local_one = get_backend("hf", model=str(tiny_model_dir), batch_size=1, progress=False)
    try:
        expected = local_one.generate(PROMPTS, 2, SAMPLING)
        victim = backend.pids()[0]
        killed = []

        def kill_once(done: int) -> None:
            # After the first of five chunks: replica 0 is either running a chunk (lost, sent again)
            # or about to be handed the next one (refused by its dead actor, sent again).
            if not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(done)

        backend.progress = kill_once
        out = backend.generate(PROMPTS, 2, SAMPLING)
        assert killed and backend.restarts == 1
        assert out == expected  # every prompt once, in order, with its own seeds
        assert victim not in backend.pids()
    finally:
        local_one.close()
        backend.close()


def test_replica_error_is_one_line_and_not_retried(ray_cluster, tiny_model_dir):
    backend = _ray_hf(tiny_model_dir, dtype="no_such_dtype")
    try:
        with pytest.raises(RuntimeError, match=r"^rollout replica \d failed: AttributeError: .*no_such_dtype") as info:
            backend.generate(PROMPTS[:2], 1, SAMPLING)
        assert "\n" not in str(info.value) and backend.restarts == 0
    finally:
        backend.close()


def test_vllm_replicas_in_actors_match_one_engine(ray_cluster, tiny_model_dir, monkeypatch):
    """The vLLM path inside actors, with the stand-in engine (tests/stand_in) on the actors' path:
    per-prompt seeds, so chunks of any size give the one engine's samples."""
    gen = use_stand_in_vllm(monkeypatch)
    next(gen)
    try:
        sp = SamplingParams(max_tokens=8, seed=5)
        one = get_backend("vllm", model=str(tiny_model_dir), max_model_len=1024, progress=False)
        expected = one.generate(PROMPTS, 2, sp)
        one.close()
        backend = get_backend("vllm", model=str(tiny_model_dir), max_model_len=1024, executor="ray", replicas=2,
                              replica_gpus=0, chunk_prompts=2, progress=False,
                              runtime_env={"env_vars": {"PYTHONPATH": str(STAND_IN)}})
        try:
            assert backend.generate(PROMPTS, 2, sp) == expected
        finally:
            backend.close()
    finally:
        next(gen, None)


def test_executor_options_are_checked():
    with pytest.raises(ValueError, match="executor must be one of"):
        get_backend("hf", model="m", executor="slurm")
    with pytest.raises(ValueError, match=r"\['replicas'\] apply to executor=ray"):
        get_backend("hf", model="m", replicas=2)
    with pytest.raises(ValueError, match="data_parallel_size"):
        get_backend("vllm", model="m", executor="ray", data_parallel_size=2)
    from pipeline.rollout.backends.openai_api import OpenAIBackend

    assert isinstance(get_backend("openai", model="m", executor="ray"), OpenAIBackend)  # its servers scale it
