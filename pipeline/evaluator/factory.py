"""One constructor for an evaluator on a stage's executor (`make_evaluator`: the local sandboxed
pool, or its Ray counterpart with the same interface: `evaluate`, `evaluate_batch`, `close`,
`interrupt`, context manager). The params' `evaluator:` section is read by the commands that judge
(`microcoder.pipeline.stage.Command.load_configs`: the CLI's plumbing stays out of the evaluator). Either registers itself with `pool.interrupt_all`, which
a stage's SIGINT / SIGTERM handler calls (`microcoder.pipeline.stage.run_stage`) to kill every judge at once."""

from __future__ import annotations

import logging
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox.launch import SandboxUnavailable
from microcoder.pipeline.executor import check_executor

log = logging.getLogger(__name__)


def make_evaluator(config: Any = None, *, executor: str = "local", ray_address: str | None = None,
                   wait: bool = True, **overrides: Any):
    """The evaluator for a stage: `config` is the params' `evaluator:` section (an EvaluatorConfig,
    a mapping or None for defaults); `overrides` (workers, timeout_scale, ...) that are not None replace
    its fields; `wait=False` returns while the judges start (see `Evaluator`).

    executor=ray: a `RayEvaluator` (same interface) whose judges are Ray actors; `workers` is then
    the number of judges over the whole cluster (default: every CPU the actors may use). The actors'
    shape is a deployment matter, not a param (it changes no output): MICROCODER_RAY_JUDGE_CPUS
    (judges per actor, default 4) and MICROCODER_RAY_JUDGE_RESOURCE (a custom resource only CPU
    nodes advertise, so GPU nodes never run submitted code), or the `ray_actor_cpus` /
    `ray_resource` overrides here."""
    import dataclasses

    from microcoder.pipeline.evaluator.pool import Evaluator

    check_executor(executor, ray_address)
    ray_options = {k: overrides.pop(k) for k in ("ray_actor_cpus", "ray_resource") if k in overrides}
    if config is None:
        config = EvaluatorConfig()
    elif isinstance(config, dict):
        config = EvaluatorConfig(**config)
    if overrides:
        config = dataclasses.replace(config, **{k: v for k, v in overrides.items() if v is not None})
    if executor == "ray":
        from microcoder.pipeline.evaluator.ray_pool import RayEvaluator

        return RayEvaluator(config, address=ray_address, wait=wait,
                            cpus_per_actor=ray_options.get("ray_actor_cpus"),
                            resource=ray_options.get("ray_resource"))
    log.info("executor: local (%s judges)", config.workers or "all cores")
    try:
        return Evaluator.from_config(config, wait=wait)
    except SandboxUnavailable as e:  # an OSError: one line and exit status 2 under the stage contract
        raise SandboxUnavailable(f"evaluator sandbox={config.sandbox!r}: {e}") from e
