"""The curated dataset: Hub-layout shards (the training view), a dataset card with stats computed by
DuckDB over the written shards, DVC plot data, and publishing a version to the Hugging Face Hub.

Layout of `data/curated/` (what `datasets.load_dataset("data/curated")` reads):
    README.md                         card with YAML front matter (configs, license, ...)
    data/train-00000-of-0000N.parquet the rows: the full Problem record + difficulty columns + prompt
    plots/pass_rate_hist.csv          DVC plot data
    plots/difficulty_by_source.csv
    stats.json                        the card's numbers, machine-readable (problems_in = problems + rejected)
    rejects.jsonl                     input records that cannot be built (invalid, duplicate id, no prompt)

The shards are written into a hidden staging folder and swapped in whole, so a reader (the train
stage) never sees a mix of two builds or a partial set, and a killed build leaves the previous
one in place; the next build removes the leftovers.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from pipeline.config import settings_record
from pipeline.inputs import InputError, load_problems
from pipeline.io import RejectsWriter, problems_to_table, write_json, write_text_atomic
from pipeline.rollout.prompts import build_messages

log = logging.getLogger(__name__)

MESSAGE_TYPE = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
SHARD_PATTERN = "data/train-*"
STAGING_PREFIX = ".data-"  # hidden staging / retired shard folders next to data/
NOT_PUBLISHED = ("rejects.jsonl",)  # build bookkeeping, not part of the dataset
DATA_SECTIONS = ("scrape", "dedup", "testgen", "validate", "rollout", "filter", "build")  # shown in the card
DEFAULT_TAGS = ["code", "competitive-programming", "reinforcement-learning", "rlvr", "microcoder"]
CARD_SUMMARY = (
    "Competitive-programming problems curated for reinforcement learning of coding models "
    "(MicroCoder-Dataset): scraped, deduplicated and decontaminated, tests validated against "
    "reference solutions, and filtered by the measured pass rate of policy rollouts so that "
    "what remains is hard but learnable."
)


@dataclass
class BuildConfig:
    name: str = field(default="MicroCoder-Dataset", metadata={"help": "Dataset name (card title)."})
    version: str = field(default="0.1.0", metadata={"help": "Dataset version (the Hub tag when published)."})
    license: str | None = field(default=None, metadata={
        "help": "Card license id; null = the rows' license when they all share one, else 'other' (per-row licenses are listed)."})
    tags: list[str] = field(default_factory=lambda: list(DEFAULT_TAGS), metadata={"help": "Card tags."})
    task_categories: list[str] = field(default_factory=lambda: ["text-generation"], metadata={"help": "Card task categories."})
    max_shard_size: str = field(default="256MB", metadata={"help": "Target in-memory size of one shard (e.g. 256MB, 1GB)."})
    language: str = field(default="python", metadata={"help": "Language asked for in the training prompts."})
    thinking: bool = field(default=False, metadata={"help": "Thinking wording in the training prompts."})
    system_prompt: str | None = field(default=None, metadata={"help": "System prompt of the training prompts (null = built-in)."})
    include_reference_solutions: bool = field(default=True, metadata={"help": "Keep reference solutions in the rows."})


def parse_size(text: str | int) -> int:
    """`256MB` -> bytes (decimal units, as the Hub uses)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?B)?\s*", str(text).upper())
    if not m:
        raise ValueError(f"bad size {text!r}; use e.g. 256MB or 1GB")
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}[m.group(2) or "B"]
    return int(float(m.group(1)) * scale)


def size_category(n: int) -> str:
    for limit, label in [(10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
                         (10**7, "1M<n<10M")]:
        if n < limit:
            return label
    return "10M<n<100M"


def card_license(by_license: dict[str, int]) -> str:
    """The Hub license id shared by every row (`Apache-2.0` -> `apache-2.0`), else `other`."""
    names = [k for k in by_license if k != "unknown"]
    if len(names) == 1 and "unknown" not in by_license:
        return names[0].strip().lower().replace(" ", "-")
    return "other"


def git_revision(cwd: str | Path = ".") -> str:
    """HEAD's commit, with `-dirty` when tracked files have uncommitted changes; `unknown` outside git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("-dirty" if dirty else "")


# --- shards -------------------------------------------------------------------------------------
def training_table(problems, cfg: BuildConfig) -> tuple[pa.Table, list[tuple[Any, str]]]:
    """The rows: every problem column (core first, then stage columns, the filter's always present)
    plus `prompt` messages; and (problem, reason) for problems without a training prompt."""
    from pipeline.difficulty.filter import FILTER_COLUMNS

    rows, rejected = [], []
    for p in problems:
        try:
            p.extra["prompt"] = build_messages(p, thinking=cfg.thinking, language=cfg.language,
                                               system_prompt=cfg.system_prompt)
        except ValueError as e:
            rejected.append((p, f"cannot build the training prompt: {e}"))
            continue
        if not cfg.include_reference_solutions:
            p.reference_solutions = []
        rows.append(p)
    extra = pa.schema(list(FILTER_COLUMNS) + [pa.field("prompt", MESSAGE_TYPE)])
    table = problems_to_table(rows, extra_schema=extra)
    for f in extra:  # an unfiltered input, or no rows at all: the columns are still there (null)
        if f.name not in table.column_names:
            table = table.append_column(f, pa.nulls(table.num_rows, f.type))
    return table, rejected


def write_shards(table: pa.Table, out_dir: Path, max_shard_bytes: int) -> list[Path]:
    """Hub layout `data/train-0000k-of-0000N.parquet`, N from the table's in-memory size (like
    `datasets.push_to_hub`), contiguous row ranges. The shards are staged in a hidden folder and
    swapped in whole for the shards of an earlier build."""
    data_dir = out_dir / "data"
    retired = out_dir / f"{STAGING_PREFIX}retired"
    out_dir.mkdir(parents=True, exist_ok=True)
    for leftover in out_dir.glob(STAGING_PREFIX + "*"):  # from a build that was killed
        log.warning("removing %s, left by an interrupted build", leftover)
        shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX + "staging-", dir=out_dir))
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; it becomes an ordinary output folder
        n = max(1, min(table.num_rows, math.ceil(table.nbytes / max_shard_bytes)))
        per = math.ceil(table.num_rows / n) if table.num_rows else 0
        n = max(1, math.ceil(table.num_rows / per)) if per else 1  # no empty trailing shard
        names = []
        for i in range(n):
            name = f"train-{i:05d}-of-{n:05d}.parquet"
            pq.write_table(table.slice(i * per, per), staging / name, compression="zstd", row_group_size=1000)
            names.append(name)
        if data_dir.exists():
            data_dir.rename(retired)
            staging.rename(data_dir)
            shutil.rmtree(retired)
        else:
            staging.rename(data_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [data_dir / name for name in names]


def dataset_info(table: pa.Table, shards: list[Path]) -> dict[str, Any]:
    """The card's `dataset_info` (features, split sizes). Besides documenting the schema, it makes
    `datasets`' cache key depend on the content: with only `configs` in the card, `load_dataset`
    of a rebuilt folder (or of another folder with the same name) returns the old cached rows."""
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo

    info = DatasetInfo(
        features=Features.from_arrow_schema(table.schema),
        splits=SplitDict({"train": SplitInfo(name="train", num_bytes=table.nbytes, num_examples=table.num_rows)}),
        download_size=sum(p.stat().st_size for p in shards), dataset_size=table.nbytes, config_name="default",
    )
    return info._to_yaml_dict()


# --- stats over the shards (DuckDB) ---------------------------------------------------------
def shard_stats(shards: list[Path]) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect()
    files = "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in shards) + "]"
    con.execute(f"CREATE VIEW curated AS SELECT * FROM read_parquet({files})")

    def rows(sql: str) -> list[tuple]:
        return con.execute(sql).fetchall()

    def counts(column: str) -> dict[str, int]:
        return {("unknown" if k is None else str(k)): v for k, v in
                rows(f"SELECT {column}, count(*) FROM curated GROUP BY 1 ORDER BY 2 DESC, 1")}

    total, n_tests, max_tests, unsolved, measured, mean_pass = rows(
        "SELECT count(*), sum(len(tests)), max(len(tests)), count(*) FILTER (WHERE unsolved), "
        "count(pass_rate), avg(pass_rate) FROM curated")[0]
    hist = {f"{i / 10:.1f}-{(i + 1) / 10:.1f}": 0 for i in range(10)}
    for b, c in rows("SELECT least(floor(pass_rate * 10), 9)::INT AS b, count(*) FROM curated "
                     "WHERE pass_rate IS NOT NULL GROUP BY 1"):
        hist[list(hist)[b]] = c
    by_source_difficulty = [
        {"source": s, "difficulty": d or "unknown", "count": c, "mean_pass_rate": None if m is None else round(m, 4)}
        for s, d, c, m in rows("SELECT source, difficulty, count(*), avg(pass_rate) FROM curated "
                               "GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST")
    ]
    out = {
        "problems": total,
        "tests": int(n_tests or 0),
        "max_tests_per_problem": int(max_tests or 0),
        "unsolved": unsolved,
        "with_pass_rate": measured,
        "mean_pass_rate": None if mean_pass is None else round(mean_pass, 4),
        "by_source": counts("source"),
        "by_style": counts("style"),
        "by_difficulty": counts("difficulty"),
        "by_platform": counts("platform"),
        "by_license": counts("license"),
        "by_selection_reason": counts("selection_reason"),
        "pass_rate_histogram": hist,
        "difficulty_by_source": by_source_difficulty,
    }
    con.close()
    return out


def _read_stats(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def write_plots(stats: dict[str, Any], plots_dir: Path) -> None:
    lines = ["bin,count"] + [f"{b},{c}" for b, c in stats["pass_rate_histogram"].items()]
    write_text_atomic(plots_dir / "pass_rate_hist.csv", "\n".join(lines) + "\n")
    rows = ["source,difficulty,label,count,mean_pass_rate"]
    for r in stats["difficulty_by_source"]:
        mean = "" if r["mean_pass_rate"] is None else r["mean_pass_rate"]
        rows.append(",".join(_csv(v) for v in (r["source"], r["difficulty"], f"{r['source']} / {r['difficulty']}",
                                                r["count"], mean)))
    write_text_atomic(plots_dir / "difficulty_by_source.csv", "\n".join(rows) + "\n")


def _csv(v: Any) -> str:
    s = str(v)
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


# --- the card -------------------------------------------------------------------------------
def _test_strength(validation: dict[str, Any] | None) -> list[str]:
    """The validate stage's known-wrong-solution figure, as a sentence of the card (none without one)."""
    w = (validation or {}).get("wrong_solutions") or {}
    if not w.get("ran"):
        return []
    return [f"Test strength: on the {w['problems_with_wrong_solutions']} problems whose source ships known-wrong "
            f"solutions, the kept tests catch {w['caught']} of the {w['ran']} that ran ({w['share_caught']:.1%}); "
            f"the caps on the number and size of tests cost {w['lost_to_caps']} of them (validate stage)."]


def _generated_strength(testgen: dict[str, Any] | None) -> list[str]:
    """The testgen stage's mutant figures, as a sentence of the card (none without a run that made mutants)."""
    m = (testgen or {}).get("mutants") or {}
    if not m.get("mutants"):
        return []
    return [f"Generated tests: the testgen stage added {testgen.get('tests_added', 0)} tests to "
            f"{testgen.get('problems_augmented', 0)} problems. Of {m['mutants']} simple mutants of the references "
            f"(flipped comparisons, constants +1, min/max swaps) on {m['problems']} problems, the examples alone "
            f"kill {m['kill_rate_examples']:.1%} and the examples plus generated tests {m['kill_rate_with_generated']:.1%}."]


def _md_table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join("" if v is None else str(v).replace("|", "\\|") for v in r) + " |" for r in rows]
    return "\n".join(out)


def _flat_numbers(d: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    """Scalar entries of a stats.json, nested objects one level deep (`a.b`), as table rows."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict) and not prefix:
            out += _flat_numbers(v, f"{k}.")
        elif isinstance(v, (int, float, str, bool)):
            out.append([f"{prefix}{k}", v])
    return out


def render_card(cfg: BuildConfig, stats: dict[str, Any], upstream: dict[str, Any], params: dict[str, Any],
                revision: str, info: dict[str, Any] | None = None) -> str:
    front = {
        "pretty_name": cfg.name,
        "license": cfg.license or card_license(stats["by_license"]),
        "size_categories": [size_category(stats["problems"])],
        "task_categories": list(cfg.task_categories),
        "tags": list(cfg.tags),
        **({"dataset_info": info} if info else {}),
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": SHARD_PATTERN}]}],
    }
    s = stats
    parts = [
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---",
        f"# {cfg.name} v{cfg.version}",
        CARD_SUMMARY,
        "## Contents",
        f"{s['problems']} problems ({s['tests']} test cases, at most {s['max_tests_per_problem']} per problem) in "
        f"{s['shards']} shard(s) under `data/`. {s['with_pass_rate']} problems have a measured pass rate "
        f"(mean {s['mean_pass_rate']}); {s['unsolved']} were never solved by the policy and are marked `unsolved`."
        + (f" {s['rejected']} of the build's {s['problems_in']} input records could not be built (invalid, a duplicate "
           "id, or no training prompt) and are listed in the build's `rejects.jsonl`." if s.get("rejected") else ""),
        "Each row is a full problem record (statement, style, starter code / entry point, tests, checker, "
        "limits, metadata) plus the difficulty columns of the filter (`pass_rate`, `n_samples`, `pass_at_k`, "
        "`unsolved`, `difficulty_scores`, `predicted_difficulty`, `predicted_pass_rate`, `selection_reason`) "
        "and `prompt`, the chat messages used for training (explicit stdin/stdout or function-completion "
        "instructions). Functional tests hold one JSON value per argument line and the JSON of the return value.",
        "```python\nfrom datasets import load_dataset\nds = load_dataset(\"<this repo or folder>\", split=\"train\")\n```",
        *_generated_strength(upstream.get("testgen")),
        *_test_strength(upstream.get("validation")),
        "## Statistics",
        "### By source\n" + _md_table(["source", "problems"], [[k, v] for k, v in s["by_source"].items()]),
        "### By style\n" + _md_table(["style", "problems"], [[k, v] for k, v in s["by_style"].items()]),
        "### By difficulty (source label)\n" + _md_table(["difficulty", "problems"], [[k, v] for k, v in s["by_difficulty"].items()]),
        "### Difficulty by source\n" + _md_table(["source", "difficulty", "problems", "mean pass rate"],
                                                 [[r["source"], r["difficulty"], r["count"], r["mean_pass_rate"]]
                                                  for r in s["difficulty_by_source"]]),
        "### Pass-rate histogram (policy rollouts)\n" + _md_table(["pass rate", "problems"],
                                                                  [[k, v] for k, v in s["pass_rate_histogram"].items()]),
        "### Selection\n" + _md_table(["reason", "problems"], [[k, v] for k, v in s["by_selection_reason"].items()]),
        "### Licenses\n" + _md_table(["license", "problems"], [[k, v] for k, v in s["by_license"].items()]),
        "## Provenance",
    ]
    for stage, st in upstream.items():
        if st is None:
            parts.append(f"### {stage}\nNo `{stage}` stats were found when this version was built.")
        else:
            parts.append(f"### {stage}\n" + _md_table(["count", "value"], _flat_numbers(st)))
    parts.append(f"Built from git revision `{revision}` with these settings (each stage's effective settings as its "
                 "stats.json records them, command-line overrides included; params.yaml where a stage recorded "
                 "none):\n\n```yaml\n"
                 + yaml.safe_dump(params, sort_keys=True).rstrip() + "\n```")
    return "\n\n".join(parts) + "\n"


# --- the stage ------------------------------------------------------------------------------
def run_build(cfg: BuildConfig, filtered_path: str | Path, out_dir: str | Path, *, data_dir: str | Path = "data",
              params_path: str | Path = "params.yaml") -> dict[str, Any]:
    """Build `out_dir` (see the module docs) from the filter stage's problems."""
    out_dir = Path(out_dir)
    max_shard_bytes = parse_size(cfg.max_shard_size)
    loaded = load_problems(filtered_path, "build input")
    table, unprompted = training_table(loaded.problems, cfg)
    with RejectsWriter(out_dir / "rejects.jsonl", "build") as rejects:
        for r in loaded.rejects:
            rejects.add(r.id, r.reason, r.record)
        for p, reason in unprompted:
            rejects.add(p.id, reason, p)
        n_rejected = len(rejects)
    if n_rejected:
        log.warning("%d of %d input records cannot be built: see %s", n_rejected, loaded.read, out_dir / "rejects.jsonl")
    if not table.num_rows:  # `datasets` cannot load an empty shard, and an empty version helps no one
        raise InputError(f"{filtered_path}: no problems to build ({loaded.read} input records, {n_rejected} rejected: "
                         f"see {out_dir / 'rejects.jsonl'}); the previous build, if any, is left as it was")
    shards = write_shards(table, out_dir, max_shard_bytes)
    stats = shard_stats(shards)
    if stats["problems"] + n_rejected != loaded.read:
        raise RuntimeError(f"build does not add up: {loaded.read} records in, {stats['problems']} in the shards, "
                           f"{n_rejected} rejected")
    stats["problems_in"], stats["rejected"] = loaded.read, n_rejected
    stats["shards"] = len(shards)
    stats["shard_files"] = [p.relative_to(out_dir).as_posix() for p in shards]
    data_dir = Path(data_dir)
    upstream = {
        "dedup": _read_stats(data_dir / "dedup" / "stats.json"),
        "testgen": _read_stats(data_dir / "testgen" / "stats.json"),
        "validation": _read_stats(data_dir / "validated" / "stats.json"),
        "rollout": _read_stats(data_dir / "rollouts" / "stats.json"),
        "filter": _read_stats(data_dir / "filtered" / "stats.json"),
    }
    all_params = (yaml.safe_load(Path(params_path).read_text()) if Path(params_path).exists() else None) or {}
    params = {k: settings_record(v) for k, v in all_params.items() if k in DATA_SECTIONS}
    # What each stage ran with, as its stats.json records it (`--set` overrides included), over params.yaml.
    scrape = _read_stats(data_dir / "raw" / "stats.json")
    for section, st in (("scrape", scrape), ("dedup", upstream["dedup"]), ("testgen", upstream["testgen"]), ("validate", upstream["validation"]),
                        ("rollout", upstream["rollout"]), ("filter", upstream["filter"])):
        if st and isinstance(st.get("config"), dict):
            params[section] = settings_record(st["config"])
    params["build"] = settings_record(cfg)
    # The run's own timing is noise in a card; the settings are shown once, below.
    upstream = {k: st and {n: v for n, v in st.items() if n not in ("this_run", "config")} for k, st in upstream.items()}
    revision = git_revision(Path(params_path).resolve().parent if Path(params_path).exists() else ".")
    stats.update(name=cfg.name, version=cfg.version, git_revision=revision)
    card = render_card(cfg, stats, upstream, params, revision, dataset_info(table, shards))
    write_text_atomic(out_dir / "README.md", card)
    write_plots(stats, out_dir / "plots")
    write_json(out_dir / "stats.json", {**stats, "upstream": upstream})
    return stats


# --- publish ----------------------------------------------------------------------------------
@dataclass
class PublishConfig:
    enabled: bool = field(default=False, metadata={"help": "Upload when the stage runs (off: a no-op, --dry-run still works)."})
    repo_id: str = field(default="", metadata={"help": "Dataset repo on the Hub, owner/name."})
    private: bool = field(default=True, metadata={"help": "Create the repo private."})
    tag_prefix: str = field(default="v", metadata={"help": "The tag is tag_prefix + the build version (e.g. v0.1.0)."})
    token_env: str = field(default="HF_TOKEN", metadata={"help": "Environment variable holding the write token."})
    endpoint: str | None = field(default=None, metadata={"help": "Hub endpoint (null = huggingface.co or HF_ENDPOINT)."})


class PublishError(RuntimeError):
    pass


def publish_plan(cfg: PublishConfig, curated_dir: str | Path) -> dict[str, Any]:
    """Exactly what an upload would send: repo, tag, and every file with its size."""
    folder = Path(curated_dir)
    stats_path = folder / "stats.json"
    if not stats_path.exists():
        raise PublishError(f"{folder} has no stats.json: run `microcoder build` first")
    version = json.loads(stats_path.read_text()).get("version")
    if not version:
        raise PublishError(f"{stats_path} has no version")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", cfg.repo_id or ""):
        raise PublishError(f"publish.repo_id must be 'owner/name', got {cfg.repo_id!r}")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_PUBLISHED
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    listed = [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size} for p in files]
    return {"repo_id": cfg.repo_id, "repo_type": "dataset", "private": cfg.private, "revision": "main",
            "tag": f"{cfg.tag_prefix}{version}", "version": version, "folder": str(folder),
            "files": listed, "total_bytes": sum(f["bytes"] for f in listed)}


def format_plan(plan: dict[str, Any]) -> str:
    lines = [f"repo:     {plan['repo_id']} (dataset, {'private' if plan['private'] else 'public'})",
             f"revision: {plan['revision']}, tag {plan['tag']}",
             f"files:    {len(plan['files'])} from {plan['folder']}, {plan['total_bytes']} bytes"]
    lines += [f"  {f['bytes']:>12}  {f['path']}" for f in plan["files"]]
    return "\n".join(lines)


def publish(cfg: PublishConfig, curated_dir: str | Path, *, api=None) -> dict[str, Any]:
    """Create the repo (if needed), upload the folder, tag the commit with the version."""
    import httpx

    plan = publish_plan(cfg, curated_dir)
    token = os.environ.get(cfg.token_env)
    if api is None:
        if not token:
            raise PublishError(f"{cfg.token_env} is not set: create a write token at "
                               "https://huggingface.co/settings/tokens and export it (it is never logged)")
        from huggingface_hub import HfApi

        api = HfApi(endpoint=cfg.endpoint, token=token)
    try:
        api.create_repo(cfg.repo_id, repo_type="dataset", private=cfg.private, exist_ok=True)
        tags = {t.name for t in api.list_repo_refs(cfg.repo_id, repo_type="dataset").tags}
        if plan["tag"] in tags:
            raise PublishError(f"{cfg.repo_id} already has tag {plan['tag']}: bump build.version to publish a new version")
        # Exactly the planned files (upload_folder alone would also send hidden and bookkeeping files).
        allow = [re.sub(r"([*?\[])", r"[\1]", f["path"]) for f in plan["files"]]
        commit = api.upload_folder(repo_id=cfg.repo_id, repo_type="dataset", folder_path=plan["folder"],
                                   allow_patterns=allow,
                                   commit_message=f"{plan['tag']}: dataset version {plan['version']}")
        api.create_tag(cfg.repo_id, tag=plan["tag"], revision=commit.oid, repo_type="dataset",
                       tag_message=f"dataset version {plan['version']}")
    except (httpx.HTTPError, ConnectionError, TimeoutError) as e:  # the Hub's answer, or no answer: one clear
        raise PublishError(_explain(e, cfg)) from e                 # message; anything else keeps its traceback
    return {**plan, "commit": commit.oid, "commit_url": getattr(commit, "commit_url", None)}


def _explain(e: Exception, cfg: PublishConfig) -> str:
    status = getattr(getattr(e, "response", None), "status_code", None)
    where = cfg.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    if status in (401, 403):
        return f"the Hub rejected the token in {cfg.token_env} (HTTP {status}): it needs write access to {cfg.repo_id}"
    if status is not None:
        return f"the Hub answered HTTP {status} for {cfg.repo_id}: {str(e).splitlines()[0][:300]}"
    return f"cannot reach the Hub at {where} ({type(e).__name__}: {str(e)[:200]}): check the network or HF_ENDPOINT"
