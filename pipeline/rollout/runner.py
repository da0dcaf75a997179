"""The rollout stage: k samples per problem from the policy, each judged by the evaluator.

Output (`data/rollouts/`): `shards/part-NNNNN.parquet`, one row per sample (ROLLOUT_SCHEMA), each
shard holding whole problems and written atomically, next to `shards/manifest.json` (the settings
that shape the samples); `rejects.jsonl` (problems that cannot be prompted, with the reason);
`stats.json`. `shards/` is the unit DVC keeps between runs (`persist: true`). A rerun with the same settings skips finished problems, so a killed run resumes
where it stopped; changed settings start over (the old samples no longer match the params).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io import RejectsWriter, atomic_path, read_problems, write_json
from pipeline.rollout.backends import BACKENDS, Sample, SamplingParams, get_backend
from pipeline.rollout.extract import extract_code
from pipeline.rollout.prompts import build_messages
from pipeline.schema import Problem

log = logging.getLogger(__name__)

ROLLOUT_SCHEMA = pa.schema([
    ("problem_id", pa.string()),
    ("sample_index", pa.int32()),
    ("completion", pa.string()),
    ("tokens", pa.int32()),
    ("finish_reason", pa.string()),
    ("truncated", pa.bool_()),
    ("status", pa.string()),  # evaluator status (AC, WA, TLE, ...) or `no_code`
    ("passed", pa.int32()),
    ("total", pa.int32()),
    ("reason", pa.string()),  # evaluator reason (first failure), null on AC / no_code
])
NO_CODE = "no_code"
SHARDS = "shards"
SHARD_GLOB = "part-*.parquet"


@dataclass
class RolloutConfig:
    backend: str = field(default="hf", metadata={"help": "Generation backend: hf | vllm | openai."})
    model: str = field(default="models/tiny", metadata={"help": "Policy model: local path or Hub id (served name for openai)."})
    k: int = field(default=4, metadata={"help": "Samples per problem."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature (0 = greedy)."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass."})
    max_tokens: int = field(default=64, metadata={"help": "Maximum new tokens per sample (thinking included)."})
    seed: int = field(default=0, metadata={"help": "Sampling seed (each prompt derives its own from it)."})
    thinking: bool = field(default=False, metadata={"help": "Qwen3 thinking mode (chat template enable_thinking)."})
    language: str = field(default="python", metadata={"help": "Solution language asked for: python | cpp."})
    system_prompt: str | None = field(default=None, metadata={"help": "System prompt; null = the built-in one, '' = none."})
    shard_size: int = field(default=64, metadata={"help": "Problems per output shard (the unit of resume)."})
    workers: int | None = field(default=None, metadata={"help": "Evaluator worker processes (null = evaluator default)."})
    timeout_scale: float = field(default=1.0, metadata={"help": "Multiplier on each problem's time limit when judging."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "Extra backend arguments (hf: batch_size, dtype, device; vllm: tensor_parallel_size, "
                "data_parallel_size, gpu_memory_utilization, max_model_len; openai: base_urls, concurrency, ...)."})

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"rollout.backend must be one of {list(BACKENDS)}, got {self.backend!r}")
        if self.k < 1 or self.shard_size < 1:
            raise ValueError("rollout.k and rollout.shard_size must be >= 1")
        self.sampling()  # validates temperature, top_p, max_tokens

    def sampling(self) -> SamplingParams:
        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=self.seed)

    def fingerprint(self) -> dict[str, Any]:
        """What shaped the stored rows: `generation` (a change discards the samples) and `judge`
        (a change re-judges the stored completions, no new generation)."""
        gen = ("backend", "model", "k", "temperature", "top_p", "max_tokens", "seed", "thinking", "language",
               "system_prompt")
        return {"generation": {key: getattr(self, key) for key in gen},
                "judge": {"timeout_scale": self.timeout_scale, "evaluator": evaluator_digest()}}


def evaluator_digest() -> str:
    """A hash of the evaluator's source files: changed judging code means stale statuses."""
    spec = importlib.util.find_spec("pipeline.evaluator")
    if spec is None or not spec.submodule_search_locations:
        return "missing"
    h = hashlib.sha256()
    for folder in spec.submodule_search_locations:
        for f in sorted(Path(folder).rglob("*.py")):
            h.update(f.relative_to(folder).as_posix().encode() + b"\x00" + f.read_bytes())
    return h.hexdigest()[:16]


# --- existing shards (resume) -----------------------------------------------------------------
def shard_paths(out_dir: Path) -> list[Path]:
    return sorted((Path(out_dir) / SHARDS).glob(SHARD_GLOB))


def _shard_index(path: Path) -> int:
    return int(path.stem.split("-")[1])


def _changed(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    old = old if isinstance(old, dict) else {}
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def prepare_resume(out_dir: Path, cfg: RolloutConfig, problem_ids: set[str]) -> tuple[set[str], bool]:
    """Check the manifest, drop stale rows; return the ids of problems already complete, and
    whether their stored verdicts must be judged again."""
    manifest = out_dir / SHARDS / "manifest.json"
    shards = shard_paths(out_dir)
    rejudge = False
    if shards and manifest.exists():
        old = json.loads(manifest.read_text()).get("fingerprint") or {}
        new = cfg.fingerprint()
        changed = _changed(old.get("generation"), new["generation"])
        if changed:
            log.warning("rollout settings changed (%s): discarding %d existing shards", ", ".join(changed), len(shards))
            for p in shards:
                p.unlink()
            return set(), False
        changed = _changed(old.get("judge"), new["judge"])
        if changed:
            log.warning("judging changed (%s): the stored samples will be judged again", ", ".join(changed))
            rejudge = True
    elif shards:
        log.warning("%d shards without a manifest in %s: discarding them", len(shards), out_dir)
        for p in shards:
            p.unlink()
        return set(), False
    counts: dict[str, set[int]] = {}
    shard_ids: dict[Path, list[str]] = {}
    for p in shards:  # ids only: the completions stay on disk
        t = pq.read_table(p, columns=["problem_id", "sample_index"])
        shard_ids[p] = t.column("problem_id").to_pylist()
        for pid, idx in zip(shard_ids[p], t.column("sample_index").to_pylist(), strict=True):
            counts.setdefault(pid, set()).add(idx)
    done = {pid for pid, idx in counts.items() if pid in problem_ids and idx == set(range(cfg.k))}
    for p, pids in shard_ids.items():  # rows of problems no longer in the input (or incomplete) must go
        keep = [pid in done for pid in pids]
        if all(keep):
            continue
        log.warning("%s: dropping %d rows of problems not in the input or incomplete", p.name, keep.count(False))
        kept = pq.read_table(p).filter(pa.array(keep))
        if kept.num_rows:
            with atomic_path(p, ".parquet") as tmp:
                pq.write_table(kept, tmp, compression="zstd")
        else:
            p.unlink()
    return done, rejudge


def rejudge_shards(out_dir: Path, problems: dict[str, Problem], language: str, evaluator, progress: bool) -> int:
    """Judge the stored completions again (same samples, new verdicts); returns the samples judged."""
    from tqdm.auto import tqdm

    n = 0
    for path in tqdm(shard_paths(out_dir), desc="rejudge", unit="shard", disable=not progress):
        rows = pq.read_table(path).to_pylist()
        order = list(dict.fromkeys(r["problem_id"] for r in rows))
        groups: dict[str, list[Sample]] = {pid: [] for pid in order}
        for r in sorted(rows, key=lambda r: r["sample_index"]):
            groups[r["problem_id"]].append(Sample(r["completion"], r["tokens"], r["finish_reason"], r["truncated"]))
        batch = [problems[pid] for pid in order]
        write_shard(path, score_samples(batch, [groups[pid] for pid in order], language, evaluator))
        n += len(rows)
    return n


# --- scoring ----------------------------------------------------------------------------------
def score_samples(problems: list[Problem], samples: list[list[Sample]], language: str, evaluator) -> list[dict[str, Any]]:
    """One row per sample: extract code, judge it (first-failure), keep what ROLLOUT_SCHEMA holds."""
    rows: list[dict[str, Any]] = []
    subs: list[tuple[str, str, str]] = []  # (problem id, submission id, code)
    sub_rows: list[int] = []
    for problem, group in zip(problems, samples, strict=True):
        for j, s in enumerate(group):
            code = extract_code(s.text, language)
            rows.append({
                "problem_id": problem.id, "sample_index": j, "completion": s.text, "tokens": s.token_count,
                "finish_reason": s.finish_reason, "truncated": s.truncated, "status": NO_CODE,
                "passed": 0, "total": len(problem.tests), "reason": None,
            })
            if code is not None:
                subs.append((problem.id, f"{problem.id}#{j}", code))
                sub_rows.append(len(rows) - 1)
    if subs:
        from pipeline.evaluator import Submission

        submissions = [Submission(pid, sid, language, code) for pid, sid, code in subs]
        verdicts = evaluator.evaluate_batch(problems, submissions, mode="first-failure")
        for i, v in zip(sub_rows, verdicts, strict=True):
            rows[i].update(status=v.status, passed=v.passed, total=v.total, reason=v.reason)
    return rows


class _LazyEvaluator:
    """The evaluator's sandboxed pool, started only when a sample has code to judge."""

    def __init__(self, workers: int | None, timeout_scale: float):
        self.workers, self.timeout_scale = workers, timeout_scale
        self._ev = None

    def evaluate_batch(self, problems, submissions, **kwargs):
        if self._ev is None:
            from pipeline.evaluator import Evaluator

            self._ev = Evaluator(workers=self.workers, timeout_scale=self.timeout_scale)
        return self._ev.evaluate_batch(problems, submissions, **kwargs)

    def close(self) -> None:
        if self._ev is not None:
            self._ev.close()


def write_shard(path: Path, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=ROLLOUT_SCHEMA)
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")


# --- the stage ----------------------------------------------------------------------------------
def run_rollout(cfg: RolloutConfig, problems_path: str | Path, out_dir: str | Path, *, backend=None,
                evaluator=None, progress: bool = True) -> dict[str, Any]:
    """Roll out every problem of `problems_path` into `out_dir`; returns (and writes) the stats."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    problems = read_problems(problems_path)
    ids = [p.id for p in problems]
    dupes = sorted(i for i, c in Counter(ids).items() if c > 1)
    if dupes:
        raise ValueError(f"{problems_path}: duplicate problem ids {dupes[:10]}")
    done, rejudge = prepare_resume(out_dir, cfg, set(ids))

    pending: list[tuple[Problem, list[dict[str, str]]]] = []
    with RejectsWriter(out_dir / "rejects.jsonl", "rollout") as rejects:
        for p in problems:
            try:
                messages = build_messages(p, thinking=cfg.thinking, language=cfg.language, system_prompt=cfg.system_prompt)
            except ValueError as e:
                rejects.add(p.id, f"cannot prompt: {e}", p)
                continue
            if p.id not in done:
                pending.append((p, messages))
        n_rejects = len(rejects)
    if n_rejects:
        log.warning("%d problems cannot be prompted: see %s", n_rejects, out_dir / "rejects.jsonl")

    gen_s = eval_s = 0.0
    generated_tokens = generated_samples = rejudged = 0
    own_evaluator = evaluator is None
    if own_evaluator:
        evaluator = _LazyEvaluator(cfg.workers, cfg.timeout_scale)
    try:
        if rejudge:
            rejudged = rejudge_shards(out_dir, {p.id: p for p in problems}, cfg.language, evaluator, progress)
        write_json(out_dir / SHARDS / "manifest.json", {"fingerprint": cfg.fingerprint()})
        if pending:
            gen_s, eval_s, generated_samples, generated_tokens = _generate(
                cfg, pending, len(done), out_dir, backend, evaluator, progress)
    finally:
        if own_evaluator:
            evaluator.close()

    stats = rollout_stats(out_dir, cfg, problems_in=len(ids), rejected=n_rejects)
    stats["this_run"] = {
        "problems_resumed": len(done), "problems_generated": len(pending), "samples_generated": generated_samples,
        "samples_rejudged": rejudged, "tokens_generated": generated_tokens, "generate_s": round(gen_s, 3),
        "judge_s": round(eval_s, 3),
        "tokens_per_s": round(generated_tokens / gen_s, 1) if gen_s else None,
        "samples_per_s": round(generated_samples / gen_s, 2) if gen_s else None,
    }
    write_json(out_dir / "stats.json", stats)
    return stats


def _generate(cfg: RolloutConfig, pending, n_done: int, out_dir: Path, backend, evaluator, progress: bool):
    """Generate and judge `pending` problems shard by shard; returns timings and counts."""
    from tqdm.auto import tqdm

    if backend is None:
        options = {"progress": False, **cfg.backend_options}
        backend = get_backend(cfg.backend, model=cfg.model, thinking=cfg.thinking, **options)
    existing = shard_paths(out_dir)
    next_index = _shard_index(existing[-1]) + 1 if existing else 0
    bar = tqdm(total=len(pending) + n_done, initial=n_done, desc="rollout", unit="problem", disable=not progress)
    gen_s = eval_s = 0.0
    generated_tokens = generated_samples = 0

    def finish(batch: list[Problem], samples: list[list[Sample]], index: int) -> float:
        t0 = time.perf_counter()
        rows = score_samples(batch, samples, cfg.language, evaluator)
        write_shard(out_dir / SHARDS / f"part-{index:05d}.parquet", rows)
        bar.update(len(batch))
        return time.perf_counter() - t0

    # Judge shard i on a thread (the evaluator's own processes do the work) while the backend
    # generates shard i + 1.
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            previous: Future | None = None
            for start in range(0, len(pending), cfg.shard_size):
                chunk = pending[start:start + cfg.shard_size]
                t0 = time.perf_counter()
                samples = backend.generate([m for _, m in chunk], cfg.k, cfg.sampling())
                gen_s += time.perf_counter() - t0
                if len(samples) != len(chunk) or any(len(g) != cfg.k for g in samples):
                    raise RuntimeError(f"backend {cfg.backend} returned the wrong number of samples")
                generated_samples += sum(len(g) for g in samples)
                generated_tokens += sum(s.token_count for g in samples for s in g)
                if previous is not None:
                    eval_s += previous.result()
                previous = pool.submit(finish, [p for p, _ in chunk], samples, next_index)
                next_index += 1
            if previous is not None:
                eval_s += previous.result()
    finally:
        bar.close()
        if hasattr(backend, "close"):
            backend.close()
    return gen_s, eval_s, generated_samples, generated_tokens


def read_rollouts(out_dir: str | Path) -> pa.Table:
    shards = shard_paths(Path(out_dir))
    if not shards:
        return ROLLOUT_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(p, schema=ROLLOUT_SCHEMA) for p in shards])


def rollout_stats(out_dir: Path, cfg: RolloutConfig, *, problems_in: int, rejected: int) -> dict[str, Any]:
    """Counts over every shard in `out_dir` (this run's and resumed ones alike)."""
    t = read_rollouts(out_dir)
    rows = t.select(["problem_id", "status", "tokens", "truncated"]).to_pylist()
    status = Counter(r["status"] for r in rows)
    per_problem: dict[str, list[bool]] = {}
    for r in rows:
        per_problem.setdefault(r["problem_id"], []).append(r["status"] == "AC")
    tokens = [r["tokens"] for r in rows]
    return {
        "config": asdict(cfg),
        "problems_in": problems_in,
        "problems_rolled_out": len(per_problem),
        "problems_rejected": rejected,
        "samples": len(rows),
        "status": dict(sorted(status.items())),
        "truncated": sum(r["truncated"] for r in rows),
        "tokens_total": sum(tokens),
        "tokens_mean": round(sum(tokens) / len(tokens), 2) if tokens else None,
        "sample_pass_rate": round(status.get("AC", 0) / len(rows), 4) if rows else None,
        "problems_solved_any": sum(any(v) for v in per_problem.values()),
        "shards": len(shard_paths(out_dir)),
    }
