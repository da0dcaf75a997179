"""Hub datasets through one code path: `datasets.load_dataset(...)`, then a per-dataset row mapping.

`dataset` names a Hub id (e.g. `deepmind/code_contests`); `path` names local files in the same
layout (parquet, json/jsonl, arrow), loaded with `load_dataset("parquet"|"json"|"arrow",
data_files=...)` (parquet and jsonl read directly, file by file). Either way rows stream through
the adapter in `hub_rows.py`. A Hub stream that breaks mid-way ends with one `unreadable` reject
saying where; a local file that breaks costs its own remaining rows, a reject each.

Hub repos that still hold a loading script (`codeparrot/apps` has `apps.py`, `BAAI/TACO` `TACO.py`)
are refused by the installed `datasets` whatever `data_files` says. Such a repo is read from the
Hub's parquet conversion instead (`revision: refs/convert/parquet`, automatically unless
`parquet_fallback: false`), or from `data_files` given as `hf://` paths, which load with the
parquet/json builder and never look at the script. Where neither applies the error names the fix.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microcoder.pipeline.sources import apps_folders, cf_submissions, hub_rows
from microcoder.pipeline.sources.base import (
    BUILDERS,
    RECORD_ERRORS,
    Item,
    Reject,
    SourceContext,
    SourceError,
    iter_json_lines,
    jsonable,
    local_files,
)

DEFAULT_DATASETS = {
    "codecontests": "deepmind/code_contests",
    "taco": "BAAI/TACO",
    "apps": "codeparrot/apps",
    "open-r1-codeforces": "open-r1/codeforces",
    "deepcoder": "agentica-org/DeepCoder-Preview-Dataset",
    "livecodebench": "livecodebench/code_generation_lite",
}
PARQUET_REVISION = "refs/convert/parquet"  # the Hub's automatic parquet conversion of every dataset repo
_SCRIPT_REFUSED = re.compile(r"scripts? (?:are|is) no longer supported|found \S+\.py\b|trust_remote_code",
                             re.IGNORECASE)
log = logging.getLogger(__name__)


@dataclass
class Options:
    adapter: str = field(default="", metadata={"help": f"Row layout: one of {sorted(DEFAULT_DATASETS)}."})
    dataset: str | None = field(default=None, metadata={"help": "Hub dataset id (default: the adapter's own)."})
    path: str | None = field(default=None, metadata={"help": "Local file or folder in the dataset's layout."})
    config: str | None = field(default=None, metadata={"help": "Dataset config (load_dataset `name`)."})
    split: str = field(default="train", metadata={"help": "Split to read."})
    data_files: Any = field(default=None, metadata={"help": "load_dataset `data_files` (str, list or dict)."})
    revision: str | None = field(default=None, metadata={
        "help": f"Hub revision (commit, tag or branch); {PARQUET_REVISION} reads the Hub's parquet conversion."})
    parquet_fallback: bool = field(default=True, metadata={
        "help": f"A repo with a loading script (refused by datasets) is read from {PARQUET_REVISION} instead."})
    streaming: bool = field(default=True, metadata={"help": "Stream rows instead of materialising the dataset."})
    # Every labelled solution is measurement pool (held-out strength, docs/validate.md); validate runs
    # the references beyond its voters only as far as the measurement needs, so the caps can be wide.
    max_solutions: int = field(default=16, metadata={
        "help": "Reference solutions kept per language (a CodeContests row ships up to hundreds: the first 16 "
                "give validate its voters and a held-out fold of 8)."})
    max_wrong_solutions: int = field(default=16, metadata={
        "help": "Known-wrong solutions kept per language (code_contests incorrect_solutions; held-out TNR needs "
                "a fold of them)."})
    include_generated: bool = field(default=True, metadata={"help": "Keep generated tests (code_contests)."})
    submissions: str | None = field(default=None, metadata={
        "help": "open-r1-codeforces only: local parquet/jsonl file or folder in open-r1/codeforces-submissions' "
                "layout. Verdict OK (Python 3 / C++) -> reference_solutions; WRONG_ANSWER, TIME_LIMIT_EXCEEDED, "
                "RUNTIME_ERROR, MEMORY_LIMIT_EXCEEDED, CHALLENGED -> wrong_solutions; other rows are counted "
                "in the source's `skipped`. Matched by `{contest_id}/{index}`; meta.submissions says what came."})
    max_accepted_submissions: int = field(default=16, metadata={
        "help": "Accepted submissions attached per problem (with `submissions`)."})
    max_wrong_submissions: int = field(default=32, metadata={
        "help": "Wrong submissions attached per problem (with `submissions`)."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    mapper = hub_rows.ADAPTERS.get(opts.adapter)
    if mapper is None:
        raise SourceError(f"unknown hub adapter {opts.adapter!r}; valid: {sorted(hub_rows.ADAPTERS)}")
    if opts.path and not (opts.adapter == "apps" and apps_folders.is_folder_layout(Path(opts.path))):
        rows = local_rows(Path(opts.path), opts.streaming)
    else:
        if not opts.path:  # a rerun must be able to say which revision it read
            dataset = opts.dataset or DEFAULT_DATASETS.get(opts.adapter)
            ctx.origin.update({"dataset": dataset, "config": opts.config, "split": opts.split,
                               "data_files": opts.data_files, "revision": opts.revision,
                               **resolve_revision(dataset, opts.revision)})
        rows = _guarded(lambda: load_rows(opts), {"dataset": opts.dataset, "path": opts.path})
    submissions = _submission_index(opts, ctx)
    try:
        for row in rows:
            if isinstance(row, Reject):
                yield row
                continue
            try:
                problem = mapper(row, ctx.name, opts)
            except hub_rows.RowError as e:
                yield Reject(e.code, str(e), jsonable(row), e.id)
            except RECORD_ERRORS as e:  # an unexpected shape in one row must not end the source
                yield Reject("bad_record", f"{type(e).__name__}: {e}", jsonable(row))
            else:
                key = cf_submissions.problem_key(row.get("contest_id"), row.get("index"))
                yield submissions.attach(problem, key) if submissions is not None else problem
    finally:  # also when the caller stops early: what was indexed and never attached is counted
        if submissions is not None:
            submissions.count_unclaimed()


def _submission_index(opts: Options, ctx: SourceContext) -> cf_submissions.SubmissionIndex | None:
    if not opts.submissions:
        return None
    if opts.adapter != "open-r1-codeforces":
        raise SourceError(f"`submissions` is for the open-r1-codeforces adapter, not {opts.adapter!r}")
    wanted = cf_submissions.wanted_keys(Path(opts.path)) if opts.path else None
    return cf_submissions.build_index(Path(opts.submissions), ctx, max_accepted=opts.max_accepted_submissions,
                                      max_wrong=opts.max_wrong_submissions, wanted=wanted)


def resolve_revision(dataset: str | None, revision: str | None) -> dict[str, Any]:
    """The commit a Hub dataset's revision (a branch, a tag, or None: main) points at now, from the
    Hub's API; where the Hub cannot be asked (offline, private), why not."""
    if not dataset:
        return {}
    try:
        from huggingface_hub import HfApi

        return {"resolved_revision": HfApi().dataset_info(dataset, revision=revision, timeout=10).sha}
    except Exception as e:  # noqa: BLE001 - recording provenance must not end the source
        return {"resolved_revision": None, "resolve_error": f"{type(e).__name__}: {str(e)[:200]}"}


def _guarded(load, where: dict[str, Any]) -> Iterator[dict | Reject]:
    """The rows of `load()`; a load that fails, or a stream that breaks mid-way, ends with one
    `unreadable` reject saying where (how many rows were left is not known here)."""
    try:
        rows = iter(load())
    except SourceError:
        raise
    except Exception as e:  # noqa: BLE001 - a file that does not load is a reject
        yield Reject("unreadable", f"cannot load {where.get('path') or where.get('dataset')}: {type(e).__name__}: {e}",
                     where)
        return
    n = 0
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except Exception as e:  # noqa: BLE001 - a broken file/stream is a reject, not a crash
            yield Reject("unreadable", f"dataset stream broke after {n} rows: {type(e).__name__}: {e}",
                         {**where, "after_row": n})
            return
        n += 1
        yield row


def local_rows(path: Path, streaming: bool = True) -> Iterator[dict | Reject]:
    """Rows of local files, one file at a time: files of different schemas (a folder mixing a
    dataset's subsets) each read with their own, and a file that breaks costs only its own rows,
    each one accounted for (a reject per row it still held where the file says how many)."""
    import datasets

    for f in local_files(path):
        if f.suffix == ".parquet":
            yield from _parquet_rows(f)
        elif f.suffix in (".jsonl", ".gz"):  # line by line: a bad line is that line's reject only
            for _n, rec, reject in iter_json_lines(f):
                yield reject if reject is not None else rec
        else:
            yield from _guarded(lambda f=f: datasets.load_dataset(BUILDERS[f.suffix], data_files=[str(f)],
                                                                   split="train", streaming=streaming),
                                {"path": str(f)})


def _parquet_rows(f: Path, batch_rows: int = 256) -> Iterator[dict | Reject]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(f)
        total = pf.metadata.num_rows
    except (pa.ArrowException, OSError) as e:
        yield Reject("unreadable", f"{f.name}: not a readable parquet file: {e}", {"path": str(f)})
        return
    n = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_rows):
            for row in batch.to_pylist():
                n += 1
                yield row
    except (pa.ArrowException, OSError) as e:
        for i in range(n, total):
            yield Reject("unreadable", f"{f.name}: row {i + 1} of {total} unreadable ({type(e).__name__}: {e})",
                         {"path": str(f), "row": i})


def load_rows(opts: Options):
    """The rows, from the Hub (or APPS' original folder layout, read directly: it has no file
    `datasets` can load), through `datasets.load_dataset`. Local files: `local_rows`."""
    if opts.path and opts.adapter == "apps" and apps_folders.is_folder_layout(Path(opts.path)):
        return apps_folders.iter_rows(Path(opts.path), opts.split)
    import datasets

    dataset = opts.dataset or DEFAULT_DATASETS.get(opts.adapter)
    remote = hf_paths(opts.data_files)
    if remote:  # hf:// files load with their builder: the repo's script is never looked at
        builders = {_builder(f) for f in remote}
        if len(builders) != 1:
            raise SourceError(f"data_files: cannot tell one builder from {sorted(remote)} (parquet or json files)")
        return _load(datasets, builders.pop(), data_files=opts.data_files, split=opts.split, streaming=opts.streaming)
    kwargs: dict[str, Any] = {"split": opts.split, "streaming": opts.streaming}
    if opts.config:
        kwargs["name"] = opts.config
    if opts.data_files:
        kwargs["data_files"] = opts.data_files
    if opts.revision:
        kwargs["revision"] = opts.revision
    try:
        return datasets.load_dataset(dataset, **kwargs)
    except Exception as e:  # noqa: BLE001 - network/hub/layout problems are the source's failure
        if not refused_script(e):
            raise SourceError(f"load_dataset({dataset!r}) failed: {type(e).__name__}: {e}") from e
        if not opts.parquet_fallback or opts.revision == PARQUET_REVISION or opts.data_files:
            raise SourceError(script_fix(dataset, e, opts)) from e
        log.warning("%s holds a loading script, which datasets refuses: reading %s instead", dataset, PARQUET_REVISION)
        try:
            return datasets.load_dataset(dataset, **{**kwargs, "revision": PARQUET_REVISION})
        except Exception as e2:  # noqa: BLE001
            raise SourceError(f"{script_fix(dataset, e, opts)} (the automatic {PARQUET_REVISION} load failed too: "
                              f"{type(e2).__name__}: {e2})") from e2


def _load(datasets, builder: str, **kwargs):
    try:
        return datasets.load_dataset(builder, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise SourceError(f"load_dataset({builder!r}, data_files=...) failed: {type(e).__name__}: {e}") from e


def hf_paths(data_files: Any) -> list[str]:
    """The data_files entries when every one is an `hf://` path, else []."""
    if isinstance(data_files, str):
        files = [data_files]
    elif isinstance(data_files, list):
        files = data_files
    elif isinstance(data_files, dict):
        files = [f for v in data_files.values() for f in ([v] if isinstance(v, str) else v or [])]
    else:
        return []
    files = [f for f in files if isinstance(f, str)]
    return files if files and all(f.startswith("hf://") for f in files) else []


def _builder(path: str) -> str:
    name = path.split("?")[0].rstrip("/").lower()
    if name.endswith((".jsonl.gz", ".json.gz")):
        return "json"
    for suffix, builder in BUILDERS.items():
        if name.endswith(suffix):
            return builder
    raise SourceError(f"data_files: {path!r} is neither parquet, json(l) nor arrow")


def refused_script(error: BaseException) -> bool:
    """Whether `datasets` refused the repo for its loading script (`<name>.py`)."""
    return bool(_SCRIPT_REFUSED.search(f"{type(error).__name__}: {error}"))


def script_fix(dataset: str | None, error: BaseException, opts: Options) -> str:
    config = opts.config or "<config>"
    return (f"{dataset} holds a loading script, which the installed datasets refuses ({error}), even with "
            f"data_files. Read its parquet conversion instead: set `revision: {PARQUET_REVISION}` (with "
            f"`data_files` relative to that branch, e.g. `{config}/{opts.split}/*.parquet`, or none), or give "
            f"`data_files: hf://datasets/{dataset}@refs%2Fconvert%2Fparquet/{config}/{opts.split}/*.parquet`; "
            "or download the files and point `path` at them.")
