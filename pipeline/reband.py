"""Re-banding a built release without new rollouts (`microcoder reband --release DIR --band LO,HI
--out NEW`; `microcoder filter --release DIR ...` runs the same command).

A built release holds every rolled-out problem with its measured difficulty: the band's rows in
`data/`, the rest in `out_of_band/` (pipeline/build.py). Re-banding decides each row again as the
filter stage does (pipeline/difficulty/band.py: the measured pass rate, else the calibrated
predicted one) and writes a new release whose default config is the new band, with the card, plots
and stats of a build. It writes a release, so it sits above build, not in difficulty/: the filter
stage's code never reaches the release writer or the card. With `model`, the pass rate is that
policy model's `model_difficulty` entry, which then becomes the row's `pass_rate` (and first
entry). The new release is a new version (the given one, by default the next patch version):
publish refuses a version already tagged.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from microcoder.pipeline.build import OUT_OF_BAND_DIR, PROVENANCE, STAGE, BuildConfig, unify, write_release
from microcoder.pipeline.difficulty.band import UNMEASURED, Band
from microcoder.pipeline.difficulty.passrate import pass_at_k
from microcoder.pipeline.inputs import InputError, require_input
from microcoder.pipeline.stage import StageStats, build_config, write_stats

log = logging.getLogger(__name__)


def release_table(release: Path) -> tuple[pa.Table, int]:
    """Every row of a built release (the default config's first) and how many are the default's."""
    default = sorted((release / "data").glob("train-*.parquet"))
    rest = sorted((release / OUT_OF_BAND_DIR).glob("train-*.parquet"))
    if not default:
        raise InputError(f"{release} is not a built release (no data/train-*.parquet)")
    if not rest:
        log.warning("%s has no out_of_band/ rows (built before they were kept, or none was outside the band): "
                    "re-banding can only narrow it", release)
    tables = [pq.read_table(f) for f in default + rest]
    n_default = sum(t.num_rows for t in tables[:len(default)])
    return unify(tables), n_default


def _entry_of(entries: list[dict[str, Any]] | None, model: str) -> dict[str, Any] | None:
    """The row's measurement by `model` (`id` or `id@revision`); an error when it is ambiguous."""
    wanted, _, revision = model.partition("@")
    found = [e for e in entries or [] if e.get("model") == wanted and (not revision or e.get("revision") == revision)]
    if len({json.dumps({k: v for k, v in e.items() if k != "statuses"}, sort_keys=True, default=str)
            for e in found}) > 1:
        raise InputError(f"{model}: more than one measurement (other revisions or settings); name it as ID@REVISION")
    return found[0] if found else None


def by_model(table: pa.Table, model: str, pass_k: int) -> pa.Table:
    """The rows with `model`'s measurement as their pass rate (and first `model_difficulty` entry)."""
    if "model_difficulty" not in table.column_names:
        raise InputError("the release has no model_difficulty column: it cannot be re-banded by model")
    rows = table.column("model_difficulty").to_pylist()
    entries = [_entry_of(e, model) for e in rows]
    if not any(entries):
        raise InputError(f"no row of the release was measured by {model}")
    columns = {
        "pass_rate": pa.array([e and e["pass_rate"] for e in entries], pa.float64()),
        "n_samples": pa.array([e["n_samples"] if e else 0 for e in entries], pa.int32()),
        "n_correct": pa.array([e["n_correct"] if e else 0 for e in entries], pa.int32()),
        "pass_at_k": pa.array([pass_at_k(e["n_samples"], e["n_correct"], pass_k) if e else None for e in entries],
                              pa.float64()),
        "unsolved": pa.array([None if not e or e["pass_rate"] is None else e["pass_rate"] == 0 for e in entries],
                             pa.bool_()),
        "model_difficulty": pa.array([[e, *[x for x in row if x is not e]] if e else row
                                      for e, row in zip(entries, rows, strict=True)],
                                     table.schema.field("model_difficulty").type),
    }
    for name, values in columns.items():
        table = table.set_column(table.column_names.index(name), table.schema.field(name), values)
    return table


def next_version(version: str) -> str:
    """The next patch version of MAJOR.MINOR.PATCH (0.1.0 -> 0.1.1)."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    if not m:
        raise InputError(f"the release's version {version!r} is not MAJOR.MINOR.PATCH: give the new one with --version")
    return f"{m[1]}.{m[2]}.{int(m[3]) + 1}"


def new_version(old: str, given: str | None) -> str:
    version = next_version(old) if given is None else given.strip()
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+_-]*", version):
        raise InputError(f"--version {given!r}: not a version (letters, digits, '.', '+', '_', '-')")
    if version == old:
        raise InputError(f"--version {version} is the release's own version: a re-banded release is a new version")
    return version


def decide(table: pa.Table, band: Band) -> list[tuple[bool, str]]:
    """(in the band, selection reason) per row, as the filter decides it."""
    measured = table.column("pass_rate").to_pylist()
    predicted = (table.column("predicted_pass_rate").to_pylist() if "predicted_pass_rate" in table.column_names
                 else [None] * table.num_rows)
    out = []
    for rate, guess in zip(measured, predicted, strict=True):
        if rate is not None:
            out.append(band.measured(rate))
        elif guess is not None:
            out.append(band.predicted(guess))
        else:
            out.append((False, UNMEASURED))
    return out


def reband(release: str | Path, out_dir: str | Path, band: Band, *, model: str | None = None,
           version: str | None = None) -> dict[str, Any]:
    """Write the release `release` re-banded to `band` into `out_dir` as version `version` (default:
    the next patch version); returns its stats."""
    release, out_dir = require_input(release, "release"), Path(out_dir)
    if out_dir.resolve() == release.resolve():
        raise InputError("--out must be another folder than --release (the release is read while writing)")
    table, n_default = release_table(release)
    settings_path = release / "settings.json"
    if not settings_path.is_file():
        raise InputError(f"{release} has no settings.json: not a built release")
    try:
        cfg = build_config(BuildConfig, json.loads(settings_path.read_text()))
    except ValueError as e:
        raise InputError(f"{settings_path}: not a build's settings ({e})") from None
    old_version = str(cfg.version)
    cfg = dataclasses.replace(cfg, version=new_version(old_version, version))
    provenance_path = release / PROVENANCE
    provenance = (json.loads(provenance_path.read_text()) if provenance_path.is_file() else
                  {"upstream": {}, "settings": {}, "git_revision": "unknown"})
    old = dict(provenance["settings"].get("filter") or {})
    if model:
        table = by_model(table, model, int(old.get("pass_k") or 4))
    decisions = decide(table, band)
    in_band = [keep for keep, _ in decisions]
    if not any(in_band):
        raise InputError(f"no row of {release} lies in the band [{band.min_pass_rate}, {band.max_pass_rate}]")
    reasons = pa.array([reason for _, reason in decisions], pa.string())
    table = table.set_column(table.column_names.index("selection_reason"), "selection_reason", reasons)
    provenance["settings"] = {**provenance["settings"], "filter": {
        **old, "min_pass_rate": band.min_pass_rate, "max_pass_rate": band.max_pass_rate,
        "rebanded_from": {"version": old_version, "band": [old.get("min_pass_rate"), old.get("max_pass_rate")],
                          "default_rows": n_default,
                          "rows": table.num_rows, "model": model}}}
    stats = StageStats(unit="problems", read=sum(in_band))
    write_release(cfg, table, in_band, out_dir, stats, provenance)
    return {**write_stats(out_dir, stats, settings=cfg, stage=STAGE), "git_revision": provenance["git_revision"],
            "version": cfg.version}
