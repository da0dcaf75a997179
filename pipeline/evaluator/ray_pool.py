"""Judging on a Ray cluster: the local sandboxed `Evaluator`, one per Ray actor, behind the same
interface (`evaluate`, `evaluate_batch`, `close`, context manager) and the same Verdicts.

Each actor owns an Evaluator on its node with `cpus_per_actor` judges (the sandbox, limits and
verdict code are the local ones). The driver cuts the submissions into chunks, keeps a few chunks
in flight per actor (the actor runs them concurrently on its judges, so its judges do not idle
while the next chunk travels), and puts each problem in the object store once per call: a chunk
carries references, a node fetches a problem once and an actor deserialises it once. Results come
back in submission order. An actor that dies (node lost, OOM, killed) is replaced and its unfinished
chunks go to the live actors; a submission's verdict enters the output once, from the attempt that
returned. Actors ask for num_gpus=0 and, with `resource`, a share of a custom resource that only CPU
nodes advertise (`ray start --resources='{"judge": 1}'`), so GPU nodes never run submitted code.

An interrupt (`interrupt`, SIGINT / SIGTERM through `pool.interrupt_all`) asks every actor to kill
its judges, then ends the actors; the calls in progress raise `Interrupted`, as the local pool's.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import shutil
import signal
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError

from microcoder.pipeline.evaluator.config import EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.pool import (
    Evaluator,
    Interrupted,
    as_submission,
    problem_map,
    progress_bar,
    register,
)
from microcoder.pipeline.evaluator.verdict.judge import MODES
from microcoder.pipeline.schema import Problem, Verdict

log = logging.getLogger(__name__)
DEFAULT_CPUS_PER_ACTOR = 4
RESOURCE_SHARE = 0.001  # of the custom resource per actor: a node advertising 1 takes up to 1000 actors
DEADLINE_GRACE_S = 10.0  # past a batch deadline, chunks still out (their actor lost) are judged TLE here
INTERRUPT_WAIT_S = 2.0  # an interrupt waits this long for the actors to kill their judges, then ends them


class JudgeActor:
    """Runs on a cluster node: a local Evaluator plus the problems its chunks referenced (LRU)."""

    def __init__(self, config: EvaluatorConfig, cache_problems: int):
        self.ev = Evaluator.from_config(config)
        self.cache: OrderedDict[str, Problem] = OrderedDict()
        self.cache_size = max(1, cache_problems)
        self.lock = threading.Lock()  # chunks run concurrently (threaded actor)

    def ready(self) -> dict[str, Any]:
        return {"meta": self.ev.meta, "judges": self.ev.workers, "pid": os.getpid(),
                "node": ray.get_runtime_context().get_node_id(), "root": str(self.ev.root)}

    def remove_root(self, root: str) -> bool:
        """Remove a killed actor's evaluator folder on this node (it could not close it itself)."""
        path = Path(root)
        if not path.name.startswith("microcoder-eval-") or path == self.ev.root:
            return False
        shutil.rmtree(path, ignore_errors=True)
        return not path.exists()

    def _problems(self, refs: list[tuple[str, Any]]) -> dict[str, Problem]:
        with self.lock:
            out = {pid: self.cache[ref.hex()] for pid, ref in refs if ref.hex() in self.cache}
            for _pid, ref in refs:
                if ref.hex() in self.cache:
                    self.cache.move_to_end(ref.hex())
        missing = [(pid, ref) for pid, ref in refs if pid not in out]
        if missing:
            got = ray.get([ref for _, ref in missing])
            with self.lock:
                for (pid, ref), problem in zip(missing, got, strict=True):
                    out[pid] = self.cache[ref.hex()] = problem
                while len(self.cache) > self.cache_size:
                    self.cache.popitem(last=False)
        return out

    def judge(self, inline: dict[str, Problem], refs: list[tuple[str, Any]], subs: list[Submission],
              mode: str, keep_outputs: bool, deadline_at: float | None) -> list[Verdict]:
        problems = {**inline, **self._problems(refs)}
        # the batch deadline is a wall-clock instant (clocks of the nodes agree to NTP precision)
        remaining = None if deadline_at is None else max(0.0, deadline_at - time.time())
        return self.ev.evaluate_batch(problems, subs, mode=mode, deadline_s=remaining, keep_outputs=keep_outputs)

    def interrupt(self) -> None:
        self.ev.interrupt()

    def close(self) -> None:
        self.ev.close()


@dataclass
class _Chunk:
    indices: list[int]  # positions in the caller's submissions
    subs: list[Submission]
    attempts: int = 0


@dataclass
class _Slot:
    """One actor place: its handle, whether it answered `ready`, the submissions it has in flight."""

    handle: Any
    ready_ref: Any
    ready: bool = False
    inflight: int = 0
    info: dict[str, Any] = field(default_factory=dict)


class RayEvaluator:
    """The Evaluator's interface over Ray actors. `config.workers` is the number of judges over the
    cluster (default: every CPU the actors may use), in actors of `cpus_per_actor` judges (default
    MICROCODER_RAY_JUDGE_CPUS or 4, at most the largest eligible node's CPUs); `resource` names a
    custom resource the actors need a share of (default MICROCODER_RAY_JUDGE_RESOURCE). A chunk
    whose actor dies is retried on another actor, up to `max_attempts` times in all (then its
    submissions are judged SE, never dropped). `wait=False` returns while the actors start; the
    first call waits for all of them, or `start_grace_s` and then starts on those that started."""

    def __init__(self, config: EvaluatorConfig | None = None, *, address: str | None = None,
                 cpus_per_actor: int | None = None, resource: str | None = None, max_attempts: int = 3,
                 start_timeout_s: float = 300.0, start_grace_s: float = 15.0, wait: bool = True):
        from microcoder.pipeline.executor import ray_init

        _keeping_sigterm_handler(lambda: ray_init(address))
        self._interrupted = threading.Event()
        cfg = config or EvaluatorConfig()
        self.resource = resource or os.environ.get("MICROCODER_RAY_JUDGE_RESOURCE") or None
        node_cpus = self._eligible_node_cpus()
        if not node_cpus:
            raise RuntimeError(f"executor=ray: no alive node of the Ray cluster has CPUs"
                               f"{f' and the resource {self.resource!r}' if self.resource else ''} to judge on")
        requested = cpus_per_actor if cpus_per_actor is not None else int(
            os.environ.get("MICROCODER_RAY_JUDGE_CPUS", DEFAULT_CPUS_PER_ACTOR))
        if requested < 1:
            raise ValueError(f"judges per Ray actor must be >= 1, got {requested}")
        total = cfg.workers or sum(node_cpus)
        self.cpus_per_actor = max(1, min(requested, total, max(node_cpus)))
        self.n_actors = max(1, round(total / self.cpus_per_actor))
        self.workers = self.n_actors * self.cpus_per_actor
        self.cfg = cfg
        self.timeout_scale = cfg.timeout_scale
        self.max_attempts = max(1, max_attempts)
        self.start_timeout_s = start_timeout_s
        self.start_grace_s = min(start_grace_s, start_timeout_s)
        self.address = address
        self.meta: dict[str, Any] = {}
        self.kind = None
        self.restarts = 0
        self.max_restarts = 10 + 2 * self.n_actors  # in a row, with no chunk judged between: give up
        self._failures = 0
        self._closed = False
        self._lock = threading.Lock()
        options: dict[str, Any] = {"num_cpus": self.cpus_per_actor, "num_gpus": 0,
                                   "max_concurrency": max(8, 4 * self.cpus_per_actor), "max_restarts": 0}
        if self.resource:
            options["resources"] = {self.resource: RESOURCE_SHARE}
        self._actor_cls = ray.remote(JudgeActor).options(**options)
        self._actor_cfg = dataclasses.replace(cfg, workers=self.cpus_per_actor)
        self._slots = [self._spawn() for _ in range(self.n_actors)]
        register(self)
        log.info("executor: ray (%d actors x %d judges = %d judges; cluster at %s)", self.n_actors,
                 self.cpus_per_actor, self.workers, ray.get_runtime_context().gcs_address)
        if wait:
            self._ensure_started()

    # actors ------------------------------------------------------------------------------------------
    def _eligible_node_cpus(self) -> list[int]:
        return [int(n["Resources"].get("CPU", 0)) for n in ray.nodes()
                if n.get("Alive") and n["Resources"].get("CPU", 0) >= 1
                and (not self.resource or n["Resources"].get(self.resource, 0) >= RESOURCE_SHARE)]

    def _spawn(self) -> _Slot:
        handle = self._actor_cls.remote(self._actor_cfg, self.cfg.input_cache_problems)
        return _Slot(handle, handle.ready.remote())

    def _ensure_started(self) -> None:
        """Wait (once) for the actors to start: all of them, or after `start_grace_s` those that did (on a
        shared cluster the others wait for CPUs that other work holds and join when placed); none
        within `start_timeout_s`, or one that failed to start, is a clear error."""
        if self.meta:
            return
        refs = [s.ready_ref for s in self._slots]
        ready, waiting = ray.wait(refs, num_returns=len(refs), timeout=self.start_grace_s)
        if not ready:
            ready, waiting = ray.wait(refs, num_returns=1, timeout=self.start_timeout_s - self.start_grace_s)
        if not ready:
            raise RuntimeError(
                f"executor=ray: {self.n_actors} judge actors ({self.cpus_per_actor} CPUs"
                f"{f', resource {self.resource}' if self.resource else ''} each) did not start within "
                f"{self.start_timeout_s:.0f}s; the cluster has {ray.available_resources()} free")
        if waiting:
            log.warning("executor: %d of %d ray judge actors still wait for resources (free: %s); judging starts "
                        "on the %d others", len(waiting), len(refs), ray.available_resources(), len(ready))
        try:
            infos = ray.get(ready)
        except RayError as e:
            raise RuntimeError(f"executor=ray: a judge actor failed to start: {_first_line(e)}") from None
        started = dict(zip(ready, infos, strict=True))
        with self._lock:
            for slot in self._slots:
                if slot.ready_ref in started:
                    slot.ready, slot.info = True, started[slot.ready_ref]
            self.meta = dict(infos[0]["meta"])
            self.kind = self.meta.get("sandbox")
        nodes = len({i["node"] for i in infos})
        log.info("executor: ray judges ready on %d node(s), sandbox %s", nodes, self.kind)

    def _pick(self, size: int) -> _Slot:
        """The ready actor with the fewest submissions in flight (a replacement joins once ready;
        one that failed to start is replaced again)."""
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            failed = []
            with self._lock:
                for s in self._slots:
                    if not s.ready and ray.wait([s.ready_ref], timeout=0)[0]:
                        try:
                            s.info, s.ready = ray.get(s.ready_ref), True
                        except RayError as e:
                            failed.append((s, e))
                ready = [s for s in self._slots if s.ready]
                if ready and not failed:
                    slot = min(ready, key=lambda s: s.inflight)
                    slot.inflight += size
                    return slot
                waiting = [s.ready_ref for s in self._slots if not s.ready]
            for s, e in failed:
                self._replace(s, e, sweep=False)
            if failed:
                continue
            self._raise_if_interrupted()
            if time.monotonic() > deadline:
                raise RuntimeError(f"executor=ray: no judge actor could be restarted within "
                                   f"{self.start_timeout_s:.0f}s (cluster free: {ray.available_resources()})")
            ray.wait(waiting, num_returns=1, timeout=1.0)

    def _done(self, slot: _Slot, size: int) -> None:
        with self._lock:
            slot.inflight -= size

    def _replace(self, slot: _Slot, error: Exception, sweep: bool = True) -> None:
        """The actor behind `slot` is gone: start another in its place (once, whoever notices
        first), then ping the others, so that the actors a lost node took along are replaced now
        rather than each costing a chunk an attempt."""
        self._raise_if_interrupted()  # killed on purpose: nothing to replace
        with self._lock:
            if slot not in self._slots:
                return
            if self._failures >= self.max_restarts:
                raise RuntimeError(f"executor=ray: judge actors died {self._failures} times in a row without "
                                   f"judging anything; last: {_first_line(error)}")
            self._slots[self._slots.index(slot)] = self._spawn()
            self.restarts += 1
            self._failures += 1
        log.warning("executor: ray judge actor lost (%s); restarted, its unfinished chunks are retried",
                    _first_line(error))
        try:
            ray.kill(slot.handle)
        except Exception:  # noqa: BLE001 - already gone
            pass
        self._remove_root(slot)
        if sweep:
            self._sweep()

    def _remove_root(self, dead: _Slot) -> None:
        """A live actor on the dead one's node removes the folder it left (best effort)."""
        node, root = dead.info.get("node"), dead.info.get("root")
        with self._lock:
            helpers = [s for s in self._slots if s.ready and node and s.info.get("node") == node]
        if not root or not helpers:
            return
        try:
            ray.get(helpers[0].handle.remove_root.remote(root), timeout=10)
        except Exception as e:  # noqa: BLE001 - the helper may be gone too: the folder stays
            log.debug("executor: removing %s on node %s: %s", root, node, e)

    def _sweep(self) -> None:
        with self._lock:
            slots = [s for s in self._slots if s.ready]
        pings = {s.handle.ready.remote(): s for s in slots}
        done, _ = ray.wait(list(pings), num_returns=len(pings), timeout=5.0)
        for ref in done:  # an actor too busy to answer in 5 s is left alone: its chunks will tell
            try:
                ray.get(ref)
            except RayError as e:
                self._replace(pings[ref], e, sweep=False)

    # one call ----------------------------------------------------------------------------------------
    def _raise_if_interrupted(self) -> None:
        if self._interrupted.is_set():
            raise Interrupted()

    def _check(self, mode: str) -> None:
        self._raise_if_interrupted()
        if self._closed:
            raise RuntimeError("the Evaluator is closed")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self._ensure_started()

    def _chunk_size(self, total: int | None) -> int:
        """About two rounds of an actor's judges, smaller when the batch is small so that every
        actor gets a share and the tail is short."""
        target = 2 * self.cpus_per_actor
        if total is None:
            return target
        return max(1, min(target, math.ceil(total / (2 * self.n_actors))))

    def _stream(self, pmap: dict[str, Problem], items: Iterable, total: int | None, mode: str,
                keep_outputs: bool, deadline_at: float | None, bar) -> Iterator[tuple[int, Verdict]]:
        """(index, verdict) for every item, in submission order."""
        size = self._chunk_size(total)
        window = 3 * self.n_actors  # chunks in flight for this call
        source = iter(enumerate(items))
        refs: dict[str, Any] = {}  # problem id -> object ref, put once per call
        single = total is not None and total <= size  # one chunk: problems travel inline, no put
        retry: deque[_Chunk] = deque()
        inflight: dict[Any, tuple[_Slot, _Chunk]] = {}
        results: dict[int, Verdict] = {}
        next_out = 0
        exhausted = False

        def next_chunk() -> _Chunk | None:
            nonlocal exhausted
            chunk = _Chunk([], [])
            while not exhausted and len(chunk.subs) < size:
                try:
                    i, item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                sub, malformed = as_submission(item, i)
                if malformed:  # judged here, as the local pool does, without a round trip
                    results[i] = Verdict(sub.problem_id, sub.submission_id, "SE", reason=malformed,
                                         meta=dict(self.meta))
                    continue
                chunk.indices.append(i)
                chunk.subs.append(sub)
            return chunk if chunk.subs else None

        def send(chunk: _Chunk) -> None:
            pids = list(dict.fromkeys(s.problem_id for s in chunk.subs if s.problem_id in pmap))
            if single:
                inline, prefs = {p: pmap[p] for p in pids}, []
            else:
                for p in pids:
                    if p not in refs:
                        refs[p] = ray.put(pmap[p])
                inline, prefs = {}, [(p, refs[p]) for p in pids]
            slot = self._pick(len(chunk.subs))
            ref = slot.handle.judge.remote(inline, prefs, chunk.subs, mode, keep_outputs, deadline_at)
            inflight[ref] = (slot, chunk)

        def settle(chunk: _Chunk, verdicts: list[Verdict]) -> None:
            for i, v in zip(chunk.indices, verdicts, strict=True):
                results.setdefault(i, v)  # one verdict per submission, whatever was retried
            bar.update(len(verdicts))

        try:
            while True:
                # keep the window full, but not far ahead of what the caller has taken
                while len(inflight) < window and len(results) < 4 * window * size:
                    chunk = retry.popleft() if retry else next_chunk()
                    if chunk is None:
                        break
                    send(chunk)
                while next_out in results:
                    yield next_out, results.pop(next_out)
                    next_out += 1
                if not inflight:
                    if exhausted and not retry:
                        break
                    continue
                self._raise_if_interrupted()
                timeout = None if deadline_at is None else max(0.0, deadline_at + DEADLINE_GRACE_S - time.time())
                done, _ = ray.wait(list(inflight), num_returns=1, timeout=timeout)
                if not done:  # past the deadline and its grace: what is still out is TLE
                    for ref, (slot, chunk) in list(inflight.items()):
                        inflight.pop(ref)
                        self._done(slot, len(chunk.subs))
                        _cancel(ref)
                        settle(chunk, [self._deadline_verdict(pmap, s) for s in chunk.subs])
                    for chunk in retry:
                        settle(chunk, [self._deadline_verdict(pmap, s) for s in chunk.subs])
                    retry.clear()
                    continue
                for ref in done:
                    slot, chunk = inflight.pop(ref)
                    self._done(slot, len(chunk.subs))
                    try:
                        settle(chunk, ray.get(ref))
                        self._failures = 0
                    except RayTaskError as e:  # a bug in the actor's code: retrying would repeat it
                        self._raise_if_interrupted()  # or its evaluator was interrupted
                        log.error("executor: ray judge actor error: %s", e)
                        settle(chunk, [self._error_verdict(pmap, s, f"evaluator error: {_first_line(e)}")
                                       for s in chunk.subs])
                    except RayError as e:  # the actor is gone (node lost, OOM, killed)
                        self._replace(slot, e)
                        chunk.attempts += 1
                        if chunk.attempts < self.max_attempts:
                            retry.append(chunk)
                        else:
                            settle(chunk, [self._error_verdict(
                                pmap, s, f"judge actor lost {chunk.attempts} times: {_first_line(e)}")
                                for s in chunk.subs])
        finally:
            for ref, (slot, chunk) in inflight.items():  # abandoned early: stop what is still out
                self._done(slot, len(chunk.subs))
                _cancel(ref)

    def _deadline_verdict(self, pmap: dict[str, Problem], sub: Submission) -> Verdict:
        problem = pmap.get(sub.problem_id)
        return Verdict(sub.problem_id, sub.submission_id, "TLE", total=len(problem.tests) if problem else 0,
                       reason="batch deadline", meta=dict(self.meta))

    def _error_verdict(self, pmap: dict[str, Problem], sub: Submission, reason: str) -> Verdict:
        problem = pmap.get(sub.problem_id)
        return Verdict(sub.problem_id, sub.submission_id, "SE", total=len(problem.tests) if problem else 0,
                       reason=reason[:1000], meta=dict(self.meta))

    # public API (as Evaluator's) ---------------------------------------------------------------------
    def evaluate(self, problems, submissions: Iterable[Submission], *, mode: str = "first-failure",
                 keep_outputs: bool = False, progress: bool = True) -> Iterator[Verdict]:
        """Judge `submissions` (Submission objects or dicts) and yield Verdicts in submission order."""
        self._check(mode)
        pmap = problem_map(problems)
        total = len(submissions) if hasattr(submissions, "__len__") else None
        bar = progress_bar(total, progress)
        try:
            for _, verdict in self._stream(pmap, submissions, total, mode, keep_outputs, None, bar):
                yield verdict
        finally:
            bar.close()

    def evaluate_batch(self, problems, submissions: Iterable[Submission], *, mode: str = "first-failure",
                       deadline_s: float | None = None, keep_outputs: bool = False,
                       progress: bool = False) -> list[Verdict]:
        """Judge all, return verdicts in submission order; unfinished `deadline_s` seconds after the
        call: TLE with reason 'batch deadline' (as the local pool)."""
        deadline_at = None if deadline_s is None else time.time() + deadline_s
        self._check(mode)
        pmap = problem_map(problems)
        items = list(submissions)
        bar = progress_bar(len(items), progress)
        try:
            return [v for _, v in self._stream(pmap, items, len(items), mode, keep_outputs, deadline_at, bar)]
        finally:
            bar.close()

    def close(self) -> None:
        """Close every actor's Evaluator (its sandboxes and directories), then end the actors; the
        cluster itself stays up (a local one ends with the process). After an interrupt the actors
        have killed their judges already: they are ended without waiting."""
        if self._closed:
            return
        self._closed = True
        handles = [s.handle for s in self._slots]
        if not self._interrupted.is_set():
            try:  # an actor still waiting for resources has nothing to close
                ray.get([s.handle.close.remote() for s in self._slots if s.ready], timeout=60)
            except Exception as e:  # noqa: BLE001 - a dead actor has nothing left to close
                log.debug("executor: closing ray judge actors: %s", e)
        _end_actors(handles)

    def interrupt(self) -> None:
        """Stop now (SIGINT / SIGTERM): every actor kills its judges (waited for up to
        INTERRUPT_WAIT_S), then the actors end; the calls in progress, and later ones, raise
        `Interrupted`. Safe from any thread."""
        self._interrupted.set()
        with self._lock:
            handles = [s.handle for s in self._slots]
        asks = []
        for h in handles:
            try:
                asks.append(h.interrupt.remote())
            except Exception as e:  # noqa: BLE001 - an actor already gone has no judges left
                log.debug("executor: interrupting a ray judge actor: %s", e)
        if asks:
            ray.wait(asks, num_returns=len(asks), timeout=INTERRUPT_WAIT_S)
        _end_actors(handles)

    def kill_now(self) -> None:
        """End the actors without waiting (the process is about to exit)."""
        self._interrupted.set()
        _end_actors([s.handle for s in list(self._slots)])

    def actors(self) -> list[Any]:
        """The live actor handles (tests kill one to check recovery)."""
        with self._lock:
            return [s.handle for s in self._slots]

    def __enter__(self) -> RayEvaluator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            if ray.is_initialized():
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _end_actors(handles: list[Any]) -> None:
    for h in handles:
        try:
            ray.kill(h)
        except Exception:  # noqa: BLE001 - already gone
            pass


def _keeping_sigterm_handler(connect) -> None:
    """Run `connect` (ray_init): Ray's driver replaces the SIGTERM handler with a bare sys.exit,
    which would skip the one a stage installed to stop its judges first (`microcoder.pipeline.stage`). A
    handler of ours is put back; the default one stays Ray's."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if main else None
    connect()
    if callable(before) and signal.getsignal(signal.SIGTERM) is not before:
        signal.signal(signal.SIGTERM, before)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


def _cancel(ref) -> None:
    try:
        ray.cancel(ref)
    except Exception as e:  # noqa: BLE001 - finished or its actor gone meanwhile
        log.debug("executor: cancelling a ray judge chunk: %s", e)
