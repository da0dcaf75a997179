"""Where a heavy stage runs its work: `executor: local` (this machine, the default) or `ray` (a Ray
cluster: `ray_address` null starts a local one, `auto` or `ray://host:port` joins one).

Every heavy stage's config carries these fields (`ExecutionFields`: with the bound of the stage's
result cache, `cache_max_mb`); judging goes through
`microcoder.pipeline.evaluator.factory.make_evaluator`, which returns the local sandboxed pool or its Ray
counterpart with the same interface. This module imports nothing of the evaluator, so a stage
that only needs the setting (dedup) does not depend on the judging code.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field

log = logging.getLogger(__name__)
EXECUTORS = ("local", "ray")


@dataclass
class ExecutionFields:
    """Mixed into a heavy stage's config (dedup, validate, rollout, eval-model, train)."""

    executor: str = field(default="local", metadata={
        "help": "local (this machine) | ray (a Ray cluster; see docs/scale-out.md)."})
    ray_address: str | None = field(default=None, metadata={
        "help": "executor=ray: null starts a local Ray cluster; `auto` or `ray://host:port` joins one."})
    # 2 GB: ~10 M of validate's runs (~200 file bytes each); testgen's rows hold whole outputs (~1 MB a
    # problem), so it keeps the ~2,000 problems used last, and a rerun of those re-executes nothing.
    cache_max_mb: int = field(default=2048, metadata={
        "help": "Most MB of the stage's result cache file (validate, testgen; none elsewhere): least recently "
                "used rows are evicted when a run ends (docs/DEVELOPING.md, Caches)."})

    def __post_init__(self) -> None:
        check_executor(self.executor, self.ray_address)
        if not (isinstance(self.cache_max_mb, int) and self.cache_max_mb > 0):
            raise ValueError(f"cache_max_mb must be a whole number of MB > 0, got {self.cache_max_mb!r}")


# `auto`, ray://host[:port] (Ray Client) or host:port (a node of the cluster, GCS port)
_ADDRESS = re.compile(r"^(auto|ray://[^\s:/]+(:\d+)?|[^\s:/]+:\d+)$")


def check_executor(executor: str, ray_address: str | None = None) -> None:
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {list(EXECUTORS)}, got {executor!r}")
    if ray_address is not None and not (isinstance(ray_address, str) and _ADDRESS.match(ray_address)):
        raise ValueError(f"ray_address must be null (start a local Ray cluster), `auto`, ray://host:port or "
                         f"host:port, got {ray_address!r}")


def ray_init(address: str | None = None):
    """The `ray` module, connected: an already initialised Ray is reused as it is (a test session's
    cluster, a driver that called ray.init itself); otherwise `address` None starts a local cluster
    with this machine's cores and `auto` / ray://host:port / host:port joins a running one."""
    check_executor("ray", address)
    try:
        import ray
    except ImportError as e:
        raise RuntimeError(f"executor=ray needs the ray package (pip install 'ray[data]==2.60.0'): {e}") from None
    if ray.is_initialized():
        return ray
    if address is not None and address != "auto":
        _check_reachable(address)
    try:
        if address is None:  # "local": a cluster of our own even where `ray start` left one running
            ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False,
                     logging_level="warning")
        else:
            ray.init(address=address, logging_level="warning")
    except Exception as e:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError: all one line
        where = "start a local Ray cluster" if address is None else f"join the Ray cluster at {address!r}"
        why = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        cause: BaseException | None = e
        for _ in range(8):  # Ray 2.60 clusters want a token: the cause says so, the error does not
            if cause is None or "AuthenticationError" in f"{type(cause).__name__} {cause}":
                break
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            why += " (the cluster's auth token is missing or wrong: RAY_AUTH_TOKEN, see docs/scale-out.md)"
        raise RuntimeError(f"executor=ray: could not {where}: {why}") from None
    res = ray.cluster_resources()
    log.info("executor: ray %s (%d node(s), %g CPUs, %g GPUs)",
             "started a local cluster" if address is None else f"joined the cluster at {address}",
             sum(1 for n in ray.nodes() if n.get("Alive")), res.get("CPU", 0), res.get("GPU", 0))
    return ray


def _check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """Fail in seconds where nothing listens (ray.init retries an unreachable address for minutes)."""
    import socket

    hostport = address.removeprefix("ray://")
    host, _, port = hostport.partition(":")
    try:
        socket.create_connection((host, int(port or 10001)), timeout=timeout_s).close()
    except OSError as e:
        raise RuntimeError(f"executor=ray: no Ray cluster answers at {address!r}: {e}") from None
