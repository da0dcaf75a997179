"""Rollouts on Ray: hf (and the vLLM stand-in) replicas as actors of the session's real local Ray
cluster (`ray_cluster`, 2 CPUs), no mocks of Ray. Replicas ask for half a CPU so that the shared
pair and another test's pair fit together."""

from __future__ import annotations

import os
import signal

import pytest
from stand_in import STAND_IN, use_stand_in_vllm

from microcoder.pipeline.generation.backends import SamplingParams, get_backend
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.schema import Problem

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
    return get_backend("hf", model=str(tiny_model_dir), executor="ray", replicas=2, replica_cpus=0.5, progress=False,
                       **options)


@pytest.fixture(scope="module")
def ray_hf(ray_cluster, tiny_model_dir):
    """Two hf replicas (batch_size 2) shared by the tests below: actors are slow to start."""
    backend = _ray_hf(tiny_model_dir)
    yield backend
    backend.close()


def test_hf_replicas_give_the_local_samples_in_prompt_order(ray_hf, local_samples):
    seen = []
    ray_hf.progress = seen.append
    try:
        out = ray_hf.generate(PROMPTS, 2, SAMPLING)
    finally:
        ray_hf.progress = None
    assert out == local_samples  # same batches, same per-batch seeds: the same draws, back in order
    assert seen[-1] == len(PROMPTS) and len(seen) == 3  # 5 prompts in batches of 2: three tasks
    assert len(set(ray_hf.pids())) == 2 and os.getpid() not in ray_hf.pids()  # two actor processes
    assert ray_hf.generate(PROMPTS, 2, SamplingParams(max_tokens=12, seed=12)) != out


def test_replica_killed_mid_run_is_replaced_and_nothing_is_lost(ray_hf, local_samples):
    victim = ray_hf.pids()[0]
    restarts = ray_hf.restarts
    killed = []

    def kill_once(done: int) -> None:
        # After the first of three chunks: replica 0 is either running a chunk (lost, sent again)
        # or about to be handed the last one (refused by its dead actor, sent again).
        if not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    ray_hf.progress = kill_once
    try:
        out = ray_hf.generate(PROMPTS, 2, SAMPLING)
    finally:
        ray_hf.progress = None
    assert killed and ray_hf.restarts == restarts + 1
    assert out == local_samples  # every prompt once, in order, with its own batch's seed
    assert victim not in ray_hf.pids()


def test_replica_error_is_one_line_and_not_retried(ray_cluster, tiny_model_dir):
    backend = _ray_hf(tiny_model_dir, dtype="no_such_dtype")
    try:
        with pytest.raises(RuntimeError, match=r"^rollout replica \d failed: AttributeError: .*no_such_dtype") as info:
            backend.generate(PROMPTS[:2], 1, SAMPLING)
        assert "\n" not in str(info.value) and backend.restarts == 0
    finally:
        backend.close()
    with pytest.raises(TypeError, match="no_such_option"):  # refused on the driver, before any actor
        _ray_hf(tiny_model_dir, no_such_option=1)


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
                              replica_cpus=0.5, replica_gpus=0, chunk_prompts=2, progress=False,
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
    with pytest.raises(ValueError, match="replicas and chunk_prompts must be >= 1"):
        get_backend("hf", model="m", executor="ray", replicas=0)
    with pytest.raises(ValueError, match="data_parallel_size"):
        get_backend("vllm", model="m", executor="ray", data_parallel_size=2)
    from microcoder.pipeline.generation.backends.openai_api import OpenAIBackend

    assert isinstance(get_backend("openai", model="m", executor="ray"), OpenAIBackend)  # its servers scale it


def test_rollout_stage_on_ray_replicas_resumes_and_matches_local(ray_hf, tiny_model_dir, tmp_path):
    """Through the stage's runner: a rollout started on one machine and finished on Ray replicas
    (resumed by content hash) stores what a rollout on one machine stores."""
    from microcoder.pipeline.io import write_problems
    from microcoder.pipeline.rollout.runner import Rollout, RolloutConfig, read_rollouts
    from microcoder.pipeline.schema import TestCase
    from microcoder.pipeline.stage import build_config

    probs = [Problem(id=f"p{i}", source="seed", statement=f"Print the number {i}." + " Really." * i, style="stdio",
                     tests=[TestCase("\n", f"{i}\n")]) for i in range(4)]
    cfg = build_config(RolloutConfig, {"model": str(tiny_model_dir), "k": 2, "max_tokens": 12, "shard_size": 2,
                                             "backend_options": {"batch_size": 2}})
    write_problems(tmp_path / "half.parquet", probs[:2])
    write_problems(tmp_path / "all.parquet", probs)
    keys = ["problem_id", "sample_index", "completion", "tokens", "status"]
    Rollout().run(cfg, tmp_path / "all.parquet", tmp_path / "local", progress=False)
    Rollout().run(cfg, tmp_path / "half.parquet", tmp_path / "ray", progress=False)
    stats = Rollout().run(cfg, tmp_path / "all.parquet", tmp_path / "ray", progress=False,
                          backend=ray_hf)  # the runner closes it (the last test to use it)
    assert stats["this_run"]["problems_resumed"] == 2 and stats["this_run"]["problems_generated"] == 2
    rows = [sorted(read_rollouts(tmp_path / d, keys).to_pylist(), key=lambda r: (r["problem_id"], r["sample_index"]))
            for d in ("local", "ray")]
    assert len(rows[0]) == 8 and rows[0] == rows[1]
