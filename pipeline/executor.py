"""Where a heavy stage runs its work: `executor: local` (this machine, the default) or `ray` (a Ray
cluster: `ray_address` null starts a local one, `auto` or `ray://host:port` joins one).

Every heavy stage's config carries the two fields (`ExecutionFields`); judging goes through
`make_evaluator`, which returns the local sandboxed pool or its Ray counterpart with the same
interface (`evaluate`, `evaluate_batch`, `close`, context manager).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)
EXECUTORS = ("local", "ray")


@dataclass
class ExecutionFields:
    """Mixed into a heavy stage's config (dedup, validate, rollout, eval-model, train)."""

    executor: str = field(default="local", metadata={
        "help": "local (this machine) | ray (a Ray cluster; see docs/scale-out.md)."})
    ray_address: str | None = field(default=None, metadata={
        "help": "executor=ray: null starts a local Ray cluster; `auto` or `ray://host:port` joins one."})

    def __post_init__(self) -> None:
        check_executor(self.executor, self.ray_address)


def check_executor(executor: str, ray_address: str | None = None) -> None:
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {list(EXECUTORS)}, got {executor!r}")
    if ray_address is not None and not isinstance(ray_address, str):
        raise ValueError(f"ray_address must be null, `auto` or ray://host:port, got {ray_address!r}")


def make_evaluator(config: Any = None, *, executor: str = "local", ray_address: str | None = None,
                   wait: bool = True, **overrides: Any):
    """The evaluator for a stage: `config` is the params' `evaluator:` section (an EvaluatorConfig,
    a mapping or None for defaults); `overrides` (workers, timeout_scale, ...) that are not None replace
    its fields; `wait=False` returns while the judges start (see `Evaluator`)."""
    import dataclasses

    from pipeline.evaluator import Evaluator
    from pipeline.evaluator.config import EvaluatorConfig

    check_executor(executor, ray_address)
    if config is None:
        config = EvaluatorConfig()
    elif isinstance(config, dict):
        config = EvaluatorConfig(**config)
    if overrides:
        config = dataclasses.replace(config, **{k: v for k, v in overrides.items() if v is not None})
    if executor == "ray":
        raise NotImplementedError("executor=ray judging is not built yet")
    log.info("executor: local (%s judges)", config.workers or "all cores")
    return Evaluator.from_config(config, wait=wait)
