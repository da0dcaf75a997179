"""The rollout stage: k samples per problem from the policy, each judged by the evaluator.

Output (`data/rollouts/`): `shards/part-NNNNN.parquet`, one row per sample (ROLLOUT_SCHEMA), each
shard holding whole problems and written atomically, next to `shards/manifest.json` (the settings
that shape the samples); `rejects.jsonl` (input records that cannot be rolled out: invalid, a
duplicate id, not promptable or over the prompt budget, each with the reason); `stats.json` in the
stage contract's vocabulary, counted in problems (`read = kept + rejected`; kept = problems rolled
out), with the samples, statuses and tokens as figures; `settings.json` (the config).

Samples are scored by the one scoring path (`microcoder.pipeline.scoring`): a row's `status` is the
evaluator's verdict status, or `no_code`. The judge comes from the params' `evaluator:` section.

`shards/` is the unit DVC keeps between runs (`persist: true`). A rerun skips finished problems, so
a killed run resumes where it stopped. Every row carries the hash of the prompt it was sampled
from and of the judging inputs (tests, checker, limits) it was judged against: a problem whose
prompt changed (or changed generation settings) is sampled again; one whose tests changed (or a
changed evaluator) keeps its samples and is judged again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.executor import ExecutionFields
from microcoder.pipeline.generation.backends import (
    BACKENDS,
    ENGINE_FAILURES,
    Sample,
    SamplingParams,
    close_backend,
    get_backend,
)
from microcoder.pipeline.generation.budget import budget_rejects, resolve_budget
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.inputs import InputError, check_model_path
from microcoder.pipeline.io import atomic_path, write_json
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.scoring import Scorer
from microcoder.pipeline.stage import Stage, StageContext

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
    ("prompt_hash", pa.string()),  # the prompt the sample was generated from
    ("judge_hash", pa.string()),  # the tests, checker and limits it was judged against
])
SHARDS = "shards"
SHARD_GLOB = "part-*.parquet"
MANIFEST_FORMAT = 2  # shards carry prompt_hash / judge_hash
JUDGE_FIELDS = ("style", "entry_point", "starter_code", "tests", "checker", "time_limit_s", "memory_limit_mb",
                "tags", "meta")  # what the evaluator reads of a problem


@dataclass
class RolloutConfig(ExecutionFields):
    backend: str = field(default="hf", metadata={"help": "Generation backend: hf | vllm | openai."})
    model: str = field(default="models/tiny", metadata={"help": "Policy model: local path or Hub id (served name for openai)."})
    k: int = field(default=4, metadata={"help": "Samples per problem."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature (0 = greedy)."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass."})
    max_tokens: int = field(default=64, metadata={"help": "Maximum new tokens per sample (thinking included)."})
    max_prompt_tokens: int | None = field(default=None, metadata={
        "help": "Most prompt tokens (chat template included, the model's tokenizer); longer prompts go to rejects. "
                "None: backend_options.max_model_len - max_tokens, else the model's context length - max_tokens "
                "(openai: set it to the server's --max-model-len - max_tokens, with backend_options.tokenizer)."})
    seed: int = field(default=0, metadata={"help": "Sampling seed (each prompt derives its own from it)."})
    thinking: bool = field(default=False, metadata={"help": "Qwen3 thinking mode (chat template enable_thinking)."})
    language: str = field(default="python", metadata={"help": "Solution language asked for: python | cpp."})
    system_prompt: str | None = field(default=None, metadata={"help": "System prompt; null = the built-in one, '' = none."})
    shard_size: int = field(default=64, metadata={"help": "Problems per output shard (the unit of resume)."})
    # A mapping on purpose: each backend's constructor owns (and checks) its own keyword arguments,
    # which differ per backend; one typed section would have to repeat all three signatures.
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "Extra backend arguments, checked by the chosen backend (hf: batch_size, dtype, device; vllm: "
                "tensor_parallel_size, data_parallel_size, gpu_memory_utilization, max_model_len; openai: "
                "base_urls, concurrency, tokenizer, ...)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.backend not in BACKENDS:
            raise ValueError(f"rollout.backend must be one of {list(BACKENDS)}, got {self.backend!r}")
        if self.k < 1 or self.shard_size < 1:
            raise ValueError("rollout.k and rollout.shard_size must be >= 1")
        self.sampling()  # validates temperature ([0, 2], as vLLM), top_p, max_tokens
        self.prompt_budget()  # validates max_prompt_tokens against max_model_len

    def prompt_budget(self):
        """The budget from the settings alone (the model's context length is read at run time)."""
        return resolve_budget(self.max_tokens, max_prompt_tokens=self.max_prompt_tokens,
                              max_model_len=self.backend_options.get("max_model_len"))

    def sampling(self) -> SamplingParams:
        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens, seed=self.seed)

    def fingerprint(self, evaluator: Any = None) -> dict[str, Any]:
        """What shaped the stored rows: `generation` (a change discards the samples) and `judge`
        (the evaluator's code and verdict-changing settings from the params' `evaluator:` section:
        a change re-judges the stored completions, no new generation)."""
        from microcoder.pipeline.evaluator.config import EvaluatorConfig
        from microcoder.pipeline.evaluator.verdict_key import verdict_key

        gen = ("backend", "model", "k", "temperature", "top_p", "max_tokens", "seed", "thinking", "language",
               "system_prompt")
        return {"generation": {key: getattr(self, key) for key in gen},
                "judge": {"evaluator": evaluator_digest(),
                          "settings": verdict_key(evaluator if evaluator is not None else EvaluatorConfig())}}


def prompt_hash(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def judge_hash(problem: Problem) -> str:
    row = problem.to_row()
    fields = {k: row[k] for k in JUDGE_FIELDS}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


def model_revision(model: str, backend: str) -> str | None:
    """The policy's revision, where it can be known: a local folder's content hash (`sha256:...` over
    its files' names and bytes), a Hub id's commit in the local Hub cache (the snapshot a backend
    loads offline), else None (an openai endpoint's served name, a Hub id not cached yet)."""
    path = Path(model)
    if backend != "openai" and path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file()
                        and not any(part.startswith(".") for part in p.relative_to(path).parts)):
            h.update(f.relative_to(path).as_posix().encode() + b"\x00")
            with f.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            h.update(b"\x00")
        return "sha256:" + h.hexdigest()[:16]
    if backend == "openai" or "/" not in model:
        return None
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return None
    ref = Path(HF_HUB_CACHE) / f"models--{model.replace('/', '--')}" / "refs" / "main"
    return ref.read_text().strip() if ref.is_file() else None


def evaluator_digest() -> str:
    """A hash of the judging code (the evaluator's code as validate's and testgen's caches key it,
    `code_digest`, plus the scoring path and code extraction): changed judging code means stale
    statuses."""
    from microcoder.pipeline.evaluator.verdict_key import code_digest

    h = hashlib.sha256(code_digest().encode() + b"\x00")
    here = Path(__file__).resolve()
    for f in (here.parents[1] / "scoring.py", here.parents[1] / "generation" / "extract.py"):
        h.update(f.name.encode() + b"\x00" + f.read_bytes())
    return h.hexdigest()[:16]


# --- existing shards (resume) -----------------------------------------------------------------
def shard_paths(out_dir: Path) -> list[Path]:
    return sorted((Path(out_dir) / SHARDS).glob(SHARD_GLOB))


def _shard_index(path: Path) -> int:
    return int(path.stem.split("-")[1])


def _changed(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    old = old if isinstance(old, dict) else {}
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def _discard(shards: list[Path], why: str) -> None:
    if shards:
        log.warning("%s: discarding %d existing shards", why, len(shards))
    for p in shards:
        p.unlink()


def prepare_resume(out_dir: Path, cfg: RolloutConfig, wanted: dict[str, tuple[str, str]],
                   evaluator: Any = None, revision: str | None = None) -> tuple[set[str], set[str]]:
    """Check the manifest and the stored rows against `wanted` ({problem id: (prompt hash, judge
    hash)}); drop every row that cannot be kept. Returns the ids of problems already complete,
    and the subset of them whose stored verdicts must be judged again."""
    shards_dir = out_dir / SHARDS
    for leftover in [*shards_dir.glob(".part-*"), *shards_dir.glob(".manifest.json.*")]:
        leftover.unlink()  # the temp file of a write that was killed
    manifest = shards_dir / "manifest.json"
    shards = shard_paths(out_dir)
    if not shards:
        return set(), set()
    if not manifest.exists():
        _discard(shards, f"{len(shards)} shards without a manifest in {out_dir}")
        return set(), set()
    stored = json.loads(manifest.read_text())
    if stored.get("format") != MANIFEST_FORMAT:
        _discard(shards, f"shards in an older format ({stored.get('format')})")
        return set(), set()
    old, new = stored.get("fingerprint") or {}, cfg.fingerprint(evaluator)
    changed = _changed(old.get("generation"), new["generation"])
    if changed:
        _discard(shards, f"rollout settings changed ({', '.join(changed)})")
        return set(), set()
    stored_revision = (stored.get("model") or {}).get("revision")
    if stored_revision and revision and stored_revision != revision:  # same path or id, other weights
        _discard(shards, f"the model changed (revision {stored_revision} -> {revision})")
        return set(), set()
    judge_changed = _changed(old.get("judge"), new["judge"])
    if judge_changed:
        log.warning("judging changed (%s): the stored samples will be judged again", ", ".join(judge_changed))

    rows: dict[str, list[tuple[int, str, str]]] = {}
    shard_ids: dict[Path, list[str]] = {}
    for p in shards:  # ids and hashes only: the completions stay on disk
        t = pq.read_table(p, columns=["problem_id", "sample_index", "prompt_hash", "judge_hash"])
        shard_ids[p] = t.column("problem_id").to_pylist()
        for pid, idx, ph, jh in zip(shard_ids[p], t.column("sample_index").to_pylist(),
                                    t.column("prompt_hash").to_pylist(), t.column("judge_hash").to_pylist(), strict=True):
            rows.setdefault(pid, []).append((idx, ph, jh))
    done, rejudge = set(), set()
    for pid, samples in rows.items():
        if pid not in wanted or sorted(i for i, _, _ in samples) != list(range(cfg.k)):
            continue
        if any(ph != wanted[pid][0] for _, ph, _ in samples):
            continue  # the prompt changed: sample again
        done.add(pid)
        if judge_changed or any(jh != wanted[pid][1] for _, _, jh in samples):
            rejudge.add(pid)
    for p, pids in shard_ids.items():  # rows of problems gone from the input, changed or incomplete
        keep = [pid in done for pid in pids]
        if all(keep):
            continue
        log.warning("%s: dropping %d rows of problems not in the input, with a changed prompt, or incomplete",
                    p.name, keep.count(False))
        kept = pq.read_table(p).filter(pa.array(keep))
        if kept.num_rows:
            with atomic_path(p, ".parquet") as tmp:
                pq.write_table(kept, tmp, compression="zstd")
        else:
            p.unlink()
    return done, rejudge


def rejudge_shards(out_dir: Path, problems: dict[str, Problem], ids: set[str], scorer: Scorer,
                   progress: bool) -> int:
    """Judge the stored completions of problems `ids` again (same samples, new verdicts); returns
    the samples judged."""
    from tqdm.auto import tqdm

    n = 0
    for path in tqdm(shard_paths(out_dir), desc="rejudge", unit="shard", disable=not progress):
        rows = pq.read_table(path).to_pylist()
        order = [pid for pid in dict.fromkeys(r["problem_id"] for r in rows) if pid in ids]
        if not order:
            continue
        groups: dict[str, list[dict[str, Any]]] = {pid: [] for pid in order}
        for r in sorted(rows, key=lambda r: r["sample_index"]):
            if r["problem_id"] in groups:
                groups[r["problem_id"]].append(r)
        samples = [[Sample(r["completion"], r["tokens"], r["finish_reason"], r["truncated"]) for r in groups[pid]]
                   for pid in order]
        new = score_samples([problems[pid] for pid in order], samples, scorer,
                            [groups[pid][0]["prompt_hash"] for pid in order])
        fresh = {(r["problem_id"], r["sample_index"]): r for r in new}
        write_shard(path, [fresh.get((r["problem_id"], r["sample_index"]), r) for r in rows])
        n += len(new)
    return n


# --- scoring ----------------------------------------------------------------------------------
def score_samples(problems: list[Problem], samples: list[list[Sample]], scorer: Scorer,
                  prompt_hashes: list[str | None] | None = None) -> list[dict[str, Any]]:
    """One ROLLOUT_SCHEMA row per sample, scored by the one scoring path (first-failure judging)."""
    hashes = prompt_hashes if prompt_hashes is not None else [None] * len(problems)
    flat = [(problem, j, s) for problem, group in zip(problems, samples, strict=True) for j, s in enumerate(group)]
    scored = scorer.score([s.text for _, _, s in flat], [p.id for p, _, _ in flat],
                          [f"{p.id}#{j}" for p, j, _ in flat])
    judge_hashes = {p.id: judge_hash(p) for p in problems}
    prompt_of = {p.id: ph for p, ph in zip(problems, hashes, strict=True)}
    rows = []
    for (problem, j, s), result in zip(flat, scored, strict=True):
        v = result.verdict
        rows.append({
            "problem_id": problem.id, "sample_index": j, "completion": s.text, "tokens": s.token_count,
            "finish_reason": s.finish_reason, "truncated": s.truncated, "status": result.status,
            "passed": v.passed if v is not None else 0, "total": v.total if v is not None else len(problem.tests),
            "reason": v.reason if v is not None else None, "prompt_hash": prompt_of[problem.id],
            "judge_hash": judge_hashes[problem.id],
        })
    return rows


def write_shard(path: Path, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=ROLLOUT_SCHEMA)
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")


# --- the stage ----------------------------------------------------------------------------------
class Rollout(Stage):
    """Roll out every problem into `out_dir`'s sample shards (not a problems file). `evaluator`: the
    params' `evaluator:` section (EvaluatorConfig; None: defaults); inputs `backend` and `judge`
    replace the generation backend and the evaluator (tests)."""

    name = "rollout"
    config = RolloutConfig
    evaluator_config = EvaluatorConfig
    evaluator_settings = False  # the shards' manifest records the judge (its fingerprint)

    def process(self, problems: list[Problem], ctx: StageContext) -> None:
        cfg, out_dir, evaluator, progress = ctx.cfg, ctx.out_dir, ctx.evaluator, ctx.progress
        backend, judge = ctx.inputs.get("backend"), ctx.inputs.get("judge")
        if backend is None and cfg.backend != "openai":
            check_model_path(cfg.model, "rollout model")
        out_dir.mkdir(parents=True, exist_ok=True)

        accepted: list[tuple[Problem, list[dict[str, str]]]] = []
        for p in problems:
            try:
                messages = build_messages(p, thinking=cfg.thinking, language=cfg.language, system_prompt=cfg.system_prompt)
            except ValueError as e:
                ctx.reject(p.id, f"cannot prompt: {e}", p)
                continue
            accepted.append((p, messages))
        over = _over_budget(cfg, accepted)
        for p, _ in accepted:
            if p.id in over:
                ctx.reject(p.id, over[p.id], p)
        accepted = [(p, m) for p, m in accepted if p.id not in over]
        stats = ctx.stats
        if stats.rejected:
            log.warning("%d of %d input records cannot be rolled out: see %s", stats.rejected, stats.read,
                        out_dir / "rejects.jsonl")
        wanted = {p.id: (prompt_hash(m), judge_hash(p)) for p, m in accepted}
        revision = model_revision(cfg.model, cfg.backend)
        done, rejudge = prepare_resume(out_dir, cfg, wanted, evaluator, revision)
        pending = [(p, m) for p, m in accepted if p.id not in done]

        gen_s = eval_s = 0.0
        generated_tokens = generated_samples = rejudged = 0

        def make_judge():
            from microcoder.pipeline.evaluator.factory import make_evaluator

            return make_evaluator(evaluator, executor=cfg.executor, ray_address=cfg.ray_address)

        # The judges start only when a sample has code to judge.
        with Scorer({p.id: p for p, _ in accepted}, language=cfg.language, judge=judge, make_judge=make_judge) as scorer:
            if rejudge:
                rejudged = rejudge_shards(out_dir, {p.id: p for p, _ in accepted}, rejudge, scorer, progress)
            write_json(out_dir / SHARDS / "manifest.json",
                       {"format": MANIFEST_FORMAT, "fingerprint": cfg.fingerprint(evaluator),
                        "model": {"id": cfg.model, "revision": revision}})
            if pending:
                gen_s, eval_s, generated_samples, generated_tokens = _generate(
                    cfg, pending, len(done), out_dir, backend, scorer, progress)

        _check_accounting(set(wanted), out_dir, cfg.k)
        stats.kept = len(wanted)
        stats.figures = rollout_figures(out_dir)
        stats.figures["model"] = cfg.model
        stats.figures["model_revision"] = revision
        stats.figures["this_run"] = {
            "problems_resumed": len(done), "problems_generated": len(pending), "samples_generated": generated_samples,
            "samples_rejudged": rejudged, "tokens_generated": generated_tokens, "generate_s": round(gen_s, 3),
            "judge_s": round(eval_s, 3),
            "tokens_per_s": round(generated_tokens / gen_s, 1) if gen_s else None,
            "samples_per_s": round(generated_samples / gen_s, 2) if gen_s else None,
        }
        return None


def _over_budget(cfg: RolloutConfig, accepted: list[tuple[Problem, list[dict[str, str]]]]) -> dict[str, str]:
    """{problem id: reason} for prompts that leave too little room for max_tokens (counted with the
    model's tokenizer; the openai backend's `tokenizer` option names a local one)."""
    options = cfg.backend_options
    return budget_rejects(((p.id, m) for p, m in accepted), models=[cfg.model], max_tokens=cfg.max_tokens,
                          thinking=cfg.thinking, max_prompt_tokens=cfg.max_prompt_tokens,
                          max_model_len=options.get("max_model_len"), tokenizer=options.get("tokenizer"),
                          what="rollout")


def _check_accounting(accepted: set[str], out_dir: Path, k: int) -> None:
    """Every accepted problem has exactly k samples in the shards, nothing else is there."""
    t = read_rollouts(out_dir, ["problem_id", "sample_index"])
    keys = list(zip(t.column("problem_id").to_pylist(), t.column("sample_index").to_pylist(), strict=True))
    ids = {pid for pid, _ in keys}
    if ids != accepted or len(keys) != len(set(keys)) or len(keys) != k * len(accepted):
        raise RuntimeError(f"rollout shards in {out_dir} do not account for the input: {len(ids - accepted)} unknown "
                           f"and {len(accepted - ids)} missing problems, {len(keys) - len(set(keys))} duplicate rows")


def _generate(cfg: RolloutConfig, pending, n_done: int, out_dir: Path, backend, scorer: Scorer, progress: bool):
    """Generate and judge `pending` problems shard by shard; returns timings and counts."""
    from tqdm.auto import tqdm

    if backend is None:
        options = {"progress": False, **cfg.backend_options}
        backend = get_backend(cfg.backend, model=cfg.model, thinking=cfg.thinking, executor=cfg.executor,
                              ray_address=cfg.ray_address, **options)
    existing = shard_paths(out_dir)
    next_index = _shard_index(existing[-1]) + 1 if existing else 0
    bar = tqdm(total=len(pending) + n_done, initial=n_done, desc="rollout", unit="problem", disable=not progress)
    gen_s = eval_s = 0.0
    generated_tokens = generated_samples = 0

    def finish(batch: list[Problem], samples: list[list[Sample]], hashes: list[str], index: int) -> float:
        t0 = time.perf_counter()
        rows = score_samples(batch, samples, scorer, hashes)
        write_shard(out_dir / SHARDS / f"part-{index:05d}.parquet", rows)
        bar.update(len(batch))
        return time.perf_counter() - t0

    # Judge shard i on a thread (the judge's own processes do the work) while the backend
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
                failed = sorted({s.finish_reason for g in samples for s in g if s.finish_reason in ENGINE_FAILURES})
                if failed:  # the engine's failures are never stored (or judged) as the model's answers
                    raise RuntimeError(f"backend {cfg.backend} returned engine failures (finish_reason {failed})")
                generated_samples += sum(len(g) for g in samples)
                generated_tokens += sum(s.token_count for g in samples for s in g)
                if previous is not None:
                    eval_s += previous.result()
                previous = pool.submit(finish, [p for p, _ in chunk], samples, [prompt_hash(m) for _, m in chunk],
                                       next_index)
                next_index += 1
            if previous is not None:
                eval_s += previous.result()
    finally:
        bar.close()
        close_backend(backend)
    return gen_s, eval_s, generated_samples, generated_tokens


def read_rollouts(out_dir: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Every sample row of `out_dir`'s shards, optionally only some `columns` (the completions are
    the bulk); an InputError for shards of an older format."""
    schema = ROLLOUT_SCHEMA if columns is None else pa.schema([ROLLOUT_SCHEMA.field(c) for c in columns])
    shards = shard_paths(Path(out_dir))
    if not shards:
        return schema.empty_table()
    tables = []
    for p in shards:
        names = pq.read_schema(p).names
        missing = [n for n in ROLLOUT_SCHEMA.names if n not in names]
        if missing:
            raise InputError(f"{p}: rollout shard without columns {missing} (an older format): "
                             "rerun `microcoder rollout` to update it")
        tables.append(pq.read_table(p, columns=schema.names, schema=ROLLOUT_SCHEMA).cast(schema))
    return pa.concat_tables(tables)


def rollout_figures(out_dir: Path) -> dict[str, Any]:
    """The samples' figures over every shard in `out_dir` (this run's and resumed ones alike)."""
    t = pl.DataFrame(read_rollouts(out_dir, ["problem_id", "status", "tokens", "truncated"]))
    n = t.height
    status = t.group_by("status").len().sort("status")
    solved = t.group_by("problem_id").agg(pl.col("status").eq("AC").any().alias("solved"))["solved"].sum()
    ac = t["status"].eq("AC").sum()
    return {
        "samples": n,
        "status": dict(zip(status["status"].to_list(), status["len"].to_list(), strict=True)),
        "truncated": int(t["truncated"].sum()),
        "tokens_total": int(t["tokens"].sum()),
        "tokens_mean": round(t["tokens"].mean(), 2) if n else None,
        "sample_pass_rate": round(ac / n, 4) if n else None,
        "problems_solved_any": int(solved),
        "shards": len(shard_paths(out_dir)),
    }
