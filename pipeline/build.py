"""The build stage: Hub-layout shards (the training view), the dataset card, DVC plot data and the
build's stats, from the filter stage's problems.

Layout of `data/curated/` (what `datasets.load_dataset("data/curated")` reads):
    README.md                         card with YAML front matter (configs, license, ...)
    data/train-00000-of-0000N.parquet the rows: the full Problem record + difficulty columns + prompt
    out_of_band/train-*.parquet       every other rolled-out problem (outside the band), same columns:
                                      what re-banding draws on (pipeline/reband.py)
    provenance.json                   the upstream figures and settings the card shows (a re-band reuses them)
    plots/pass_rate_hist.csv          DVC plot data
    plots/difficulty_by_source.csv
    stats.json                        the build's figures (read = kept + rejected, by source, ...)
    settings.json                     the build's settings (name, version, ...)
    rejects.jsonl                     input records that cannot be built (invalid, duplicate id, no prompt)

The default config is the band's rows (`data/`), what `microcoder train` and the exports read;
the card declares further configs over the same files (`all`, `unsolved`, `platform-NAME`,
`band-LO-HI` from `bands`), selected by the Parquet builder's row `filters`.

The shards are written into a hidden staging folder and swapped in whole, so a reader (the train
stage) never sees a mix of two builds or a partial set, and a killed build leaves the previous
one in place; the next build removes the leftovers.
"""

from __future__ import annotations

import json
import logging
import math
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from microcoder.pipeline.card import DEFAULT_TAGS, portable, render_card, upstream_records
from microcoder.pipeline.generation.prompts import build_messages
from microcoder.pipeline.inputs import InputError, load_problems
from microcoder.pipeline.io import atomic_path, problems_to_table, write_text_atomic
from microcoder.pipeline.stage import Stage, StageContext, StageStats, settings_record

log = logging.getLogger(__name__)

STAGE = "build"
MESSAGE_TYPE = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
STAGING_PREFIX = ".data-"  # hidden staging / retired shard folders next to data/
OUT_OF_BAND_DIR = "out_of_band"
PROVENANCE = "provenance.json"


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
    bands: list[str] = field(default_factory=lambda: ["0.1-0.9"], metadata={
        "help": "Extra configs `band-LO-HI` over every rolled-out row (LO <= pass rate <= HI), e.g. 0.1-0.9."})

    def __post_init__(self) -> None:
        parse_size(self.max_shard_size)  # a bad size is a params error before any work
        for band in self.bands:
            parse_band(band)


def parse_band(text: str) -> tuple[float, float]:
    """`0.1-0.9` or `0.1,0.9` -> (0.1, 0.9), checked as the filter's band."""
    from microcoder.pipeline.difficulty.band import Band

    parts = re.split(r"[,-]", str(text).strip())
    try:
        lo, hi = (float(x) for x in parts)
        Band(lo, hi)
    except ValueError as e:
        raise ValueError(f"bad band {text!r}: use LO,HI (or LO-HI) with 0 <= LO <= HI <= 1 ({e})") from None
    return lo, hi


def parse_size(text: str | int) -> int:
    """`256MB` -> bytes (decimal units, as the Hub uses)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?B)?\s*", str(text).upper())
    if not m:
        raise ValueError(f"bad size {text!r}; use e.g. 256MB or 1GB")
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}[m.group(2) or "B"]
    return int(float(m.group(1)) * scale)


def git_revision(cwd: str | Path = ".") -> str:
    """HEAD's commit, with `-dirty` when tracked files have uncommitted changes; `unknown` outside git.
    dvc.lock does not count: `dvc repro` itself rewrites it after each stage, before build runs."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)dvc.lock"],
                               cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("-dirty" if dirty else "")


# --- shards -------------------------------------------------------------------------------------
def training_table(problems, cfg: BuildConfig) -> tuple[pa.Table, list[tuple[Any, str]]]:
    """The rows: every problem column (core first, then stage columns, the filter's always present)
    plus `prompt` messages; and (problem, reason) for problems without a training prompt."""
    from microcoder.pipeline.difficulty.filter import FILTER_COLUMNS

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


def write_shards(table: pa.Table, out_dir: Path, max_shard_bytes: int, folder: str = "data") -> list[Path]:
    """Hub layout `data/train-0000k-of-0000N.parquet`, N from the table's in-memory size (like
    `datasets.push_to_hub`), contiguous row ranges. The shards are staged in a hidden folder and
    swapped in whole for the shards of an earlier build."""
    data_dir = out_dir / folder
    retired = out_dir / f"{STAGING_PREFIX}retired"
    out_dir.mkdir(parents=True, exist_ok=True)
    if folder == "data":
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


# --- figures over the shards (DuckDB) ---------------------------------------------------------
def shard_figures(shards: list[Path]) -> dict[str, Any]:
    """The card's numbers, computed over the written shards (what a reader of the dataset gets)."""
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
    license_by_source: dict[str, dict[str, int]] = {}
    for source, lic, c in rows("SELECT source, license, count(*) FROM curated GROUP BY 1, 2 ORDER BY 1, 2"):
        license_by_source.setdefault(str(source), {})["unknown" if lic is None else str(lic)] = c
    out = {
        "rows_in_shards": total,
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
        "license_by_source": license_by_source,
        "by_selection_reason": counts("selection_reason"),
        "pass_rate_histogram": hist,
        "difficulty_by_source": by_source_difficulty,
    }
    con.close()
    return out


def write_plots(figures: dict[str, Any], plots_dir: Path) -> None:
    """DVC plot data: the pass-rate histogram and the problems per source and difficulty."""
    import polars as pl

    hist = pl.DataFrame({"bin": list(figures["pass_rate_histogram"]),
                         "count": list(figures["pass_rate_histogram"].values())})
    by_source = pl.DataFrame(figures["difficulty_by_source"], schema={
        "source": pl.String, "difficulty": pl.String, "count": pl.Int64, "mean_pass_rate": pl.Float64})
    by_source = by_source.select("source", "difficulty", pl.format("{} / {}", "source", "difficulty").alias("label"),
                                 "count", "mean_pass_rate")
    for name, frame in (("pass_rate_hist.csv", hist), ("difficulty_by_source.csv", by_source)):
        with atomic_path(plots_dir / name, ".csv") as tmp:
            frame.write_csv(tmp)


def publish_settings(params_path: str | Path) -> dict[str, Any]:
    """params.yaml's `publish:` section (the card names the repository and the tag a user loads)."""
    from microcoder.pipeline.params import load_yaml

    path = Path(params_path)
    params = load_yaml(path.read_text(encoding="utf-8")) if path.is_file() else None
    section = params.get("publish") if isinstance(params, dict) else None
    return section if isinstance(section, dict) else {}


# --- per-model difficulty and configs ----------------------------------------------------------
def model_figures(table: pa.Table, in_default: list[bool]) -> list[dict[str, Any]]:
    """One record per measuring model and settings (`model_difficulty` entries) over every row of
    the release: problems measured (all / in the default config), samples, passes, statuses, mean
    pass rate and its histogram."""
    from microcoder.pipeline.difficulty.filter import MEASUREMENT_KEY

    if "model_difficulty" not in table.column_names:
        return []
    models: dict[tuple, dict[str, Any]] = {}
    for entries, default in zip(table.column("model_difficulty").to_pylist(), in_default, strict=True):
        for e in entries or []:
            m = models.setdefault(tuple(e.get(k) for k in MEASUREMENT_KEY), {
                **{k: e.get(k) for k in MEASUREMENT_KEY}, "problems": 0, "problems_in_default": 0, "samples": 0,
                "correct": 0, "system_errors": 0, "unsolved": 0, "statuses": {}, "rates": []})
            m["problems"] += 1
            m["problems_in_default"] += int(default)
            m["samples"] += e["n_samples"] or 0
            m["correct"] += e["n_correct"] or 0
            m["system_errors"] += e["n_system_errors"] or 0
            for st in e.get("statuses") or []:
                m["statuses"][st["status"]] = m["statuses"].get(st["status"], 0) + st["count"]
            if e.get("pass_rate") is not None:
                m["rates"].append(e["pass_rate"])
                m["unsolved"] += int(e["pass_rate"] == 0)
    out = []
    for m in models.values():
        from microcoder.pipeline.difficulty.filter import histogram

        rates = m.pop("rates")
        m["mean_pass_rate"] = round(sum(rates) / len(rates), 4) if rates else None
        m["pass_rate_histogram"] = histogram(rates)
        m["statuses"] = dict(sorted(m["statuses"].items()))
        out.append(m)
    return out


def release_configs(figures: dict[str, Any], bands: list[str], has_out_of_band: bool) -> list[dict[str, Any]]:
    """The card's `configs`: `default` (the band's rows), `all` (every rolled-out row), `unsolved`,
    one per platform, and `band-LO-HI` per `bands`; row subsets by the Parquet builder's `filters`."""
    from microcoder.pipeline.card import SHARD_PATTERN

    every = [SHARD_PATTERN, f"{OUT_OF_BAND_DIR}/train-*"] if has_out_of_band else SHARD_PATTERN

    def config(name: str, path: Any, filters: list | None = None) -> dict[str, Any]:
        return {"config_name": name, "data_files": [{"split": "train", "path": path}],
                **({"filters": filters} if filters else {})}

    out = [config("default", SHARD_PATTERN)]
    if has_out_of_band:
        out.append(config("all", list(every)))
    if figures.get("unsolved"):
        out.append(config("unsolved", SHARD_PATTERN, [["unsolved", "==", True]]))
    for platform in figures.get("by_platform", {}):
        if platform != "unknown" and re.fullmatch(r"[\w.-]+", platform):
            out.append(config(f"platform-{platform}", SHARD_PATTERN, [["platform", "==", platform]]))
    for band in bands:
        lo, hi = parse_band(band)
        out.append(config(f"band-{lo:g}-{hi:g}", list(every) if has_out_of_band else every, [["pass_rate", ">=", lo], ["pass_rate", "<=", hi]]))
    return out


def unify(tables: list[pa.Table]) -> pa.Table:
    """One table from the band's and the other rows (their stage columns may differ)."""
    return pa.concat_tables(tables, promote_options="default")


# --- the stage ------------------------------------------------------------------------------
class Build(Stage):
    """Build `out_dir` (see the module docs) from the filter stage's problems (and the filter's
    `out_of_band.parquet` beside them, or `out_of_band_path`); inputs `data_dir` (the upstream
    stages' records for the card) and `params_path` (the card's publish settings)."""

    name = STAGE
    config = BuildConfig

    def process(self, problems: list, ctx: StageContext) -> None:
        cfg, out_dir = ctx.cfg, ctx.out_dir
        params_path = ctx.inputs.get("params_path", "params.yaml")
        table, unprompted = training_table(problems, cfg)
        for p, reason in unprompted:
            ctx.reject(p.id, reason, p)
        stats = ctx.stats
        if not table.num_rows:  # `datasets` cannot load an empty shard, and an empty version helps no one
            ctx.rejects.close()
            raise InputError(f"{ctx.problems_path}: no problems to build ({stats.read} input records, "
                             f"{stats.rejected} rejected: see {out_dir / 'rejects.jsonl'}); the previous build, "
                             "if any, is left as it was")
        if stats.rejected:
            log.warning("%d of %d input records cannot be built: see %s", stats.rejected, stats.read,
                        out_dir / "rejects.jsonl")
        rest = _out_of_band_rows(ctx.problems_path, ctx.inputs.get("out_of_band_path"), cfg)
        upstream, settings = upstream_records(ctx.inputs.get("data_dir", "data"), params_path)
        settings["build"] = settings_record(cfg)
        revision = git_revision(Path(params_path).resolve().parent if Path(params_path).exists() else ".")
        provenance = {"upstream": upstream, "settings": settings, "git_revision": revision,
                      "publish": publish_settings(params_path)}
        combined = unify([table, rest]) if rest.num_rows else table
        in_band = [True] * table.num_rows + [False] * rest.num_rows
        write_release(cfg, combined, in_band, out_dir, stats, provenance)
        ctx.result["git_revision"] = revision
        return None

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> dict[str, Any]:
        return {**stats, "git_revision": ctx.result["git_revision"]}


def _out_of_band_rows(filtered_path: str | Path, out_of_band_path: str | Path | None, cfg: BuildConfig) -> pa.Table:
    """The rolled-out problems outside the band (the filter's `out_of_band.parquet`), as rows; none
    when the filter wrote none (an older filter output) or they cannot be prompted."""
    from microcoder.pipeline.difficulty.filter import OUT_OF_BAND

    path = Path(out_of_band_path) if out_of_band_path else Path(filtered_path).parent / OUT_OF_BAND
    if not path.is_file():
        return pa.table({})
    loaded = load_problems(path, "out-of-band problems")
    table, unprompted = training_table(loaded.problems, cfg)
    if unprompted or loaded.rejects:
        log.warning("%d out-of-band records of %s cannot be built (left out)", len(unprompted) + len(loaded.rejects),
                    path)
    return table


def write_release(cfg: BuildConfig, table: pa.Table, in_band: list[bool], out_dir: Path, stats: StageStats,
                  provenance: dict[str, Any]) -> dict[str, Any]:
    """Shards (`data/`: rows with `in_band`; `out_of_band/`: the rest), card, plots and provenance of
    a release (a build's or a re-band's); fills `stats` (kept, figures) and returns it as a dict.
    Its stats and settings files are the caller's to write."""
    mask = pa.array(in_band, pa.bool_())
    default, rest = table.filter(mask), table.filter(pa.compute.invert(mask))
    max_shard_bytes = parse_size(cfg.max_shard_size)
    shards = write_shards(default, out_dir, max_shard_bytes)
    if rest.num_rows:
        write_shards(rest, out_dir, max_shard_bytes, folder=OUT_OF_BAND_DIR)
    else:  # an empty folder, not none: it is a DVC output of build, which fails on a missing one
        shutil.rmtree(out_dir / OUT_OF_BAND_DIR, ignore_errors=True)
        (out_dir / OUT_OF_BAND_DIR).mkdir()
    figures = shard_figures(shards)
    stats.kept = figures.pop("rows_in_shards")
    stats.figures = {**figures, "shards": len(shards),
                     "shard_files": [p.relative_to(out_dir).as_posix() for p in shards],
                     "out_of_band_rows": rest.num_rows, "models": model_figures(table, in_band)}
    data = stats.as_dict()  # checks read == kept + rejected: the shards hold every record not rejected
    publish = provenance.get("publish") or {}
    configs = release_configs(data, cfg.bands, bool(rest.num_rows))
    card = render_card(cfg, data, provenance["upstream"], provenance["settings"], provenance["git_revision"],
                       dataset_info(default, shards), repo_id=publish.get("repo_id") or None,
                       tag_prefix=str(publish.get("tag_prefix") or "v"), configs=configs)
    write_text_atomic(out_dir / "README.md", card)
    shareable = {**provenance, "upstream": portable(provenance["upstream"]), "settings": portable(provenance["settings"])}
    write_text_atomic(out_dir / PROVENANCE, json.dumps(shareable, indent=2, sort_keys=True, default=str) + "\n")
    write_plots(data, out_dir / "plots")
    return data
