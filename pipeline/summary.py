"""The pipeline's counts in one table (`microcoder stats --summary`): a row per stage, in pipeline
order, from the stats.json each stage writes in the shared vocabulary (pipeline/stage.py).

The stages and their stats files are read from dvc.yaml's `metrics:` entries (a `headline.json`
there stands for the `stats.json` beside it), so the table follows
the pipeline as it is wired and cannot drift from it. A stage whose stats file is missing is shown
as not run; one whose metrics file lacks the shared counts (read/kept/rejected) as figures only.
A stage that measures test strength (validate, testgen: `pipeline/strength.py`) has it in the
`strength` column, printed as a line under the table: validate's TPR/TNR of the kept tests with
their counts, held out first (on solutions that had no part in choosing the tests) then in-sample;
testgen's known-wrong and mutant TNR before -> after its tests, in-sample and held out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from microcoder.pipeline import strength
from microcoder.pipeline.inputs import InputError

TOP_REASONS = 3
COLUMNS = {"stage": pl.String, "unit": pl.String, "read": pl.Int64, "kept": pl.Int64, "rejected": pl.Int64,
           "top_reasons": pl.String, "status": pl.String, "strength": pl.String, "stats_file": pl.String}


def metrics_files(dvc_file: str | Path) -> list[tuple[str, Path]]:
    """(stage, metrics file) in dvc.yaml order; paths resolved against dvc.yaml's folder."""
    dvc_file = Path(dvc_file)
    if not dvc_file.is_file():
        raise InputError(f"{dvc_file} does not exist: the summary lists the stages of a dvc.yaml (pass --dvc-file)")
    try:
        stages = (yaml.safe_load(dvc_file.read_text()) or {}).get("stages") or {}
    except yaml.YAMLError as e:
        raise InputError(f"{dvc_file}: not valid YAML ({e})") from e
    out = []
    for stage, spec in stages.items():
        for entry in (spec or {}).get("metrics") or []:
            path = dvc_file.parent / (next(iter(entry)) if isinstance(entry, dict) else entry)
            # the tracked headline.json is a digest of the stats.json beside it: that is what we read
            out.append((stage, path.with_name("stats.json") if path.name == "headline.json" else path))
    return out


def _row(stage: str, path: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"stage": stage, "stats_file": str(path)}
    if not path.is_file():
        return {**row, "status": "not run"}
    try:
        stats = json.loads(path.read_text())
    except ValueError as e:
        return {**row, "status": f"unreadable: {e}"}
    if not isinstance(stats, dict) or not all(k in stats for k in ("read", "kept", "rejected")):
        return {**row, "status": "figures only"}
    reasons = sorted((stats.get("rejected_by_reason") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    top = ", ".join(f"{k} {v}" for k, v in reasons[:TOP_REASONS])
    if len(reasons) > TOP_REASONS:
        top += f", +{len(reasons) - TOP_REASONS} more"
    return {**row, "unit": stats.get("unit"), "read": stats["read"], "kept": stats["kept"],
            "rejected": stats["rejected"], "top_reasons": top, "status": "ok", "strength": strength_line(stats)}


def _record(stats: Any, *keys: str) -> dict[str, Any] | None:
    for k in keys:
        stats = stats.get(k) if isinstance(stats, dict) else None
    return stats if isinstance(stats, dict) else None


def _tnr(r: dict[str, Any] | None) -> str:
    if not r or not r.get("incorrect"):
        return "n/a (0)"
    return f"{100 * r['tnr']:.1f}% ({r['incorrect_failing']}/{r['incorrect']})"


def strength_line(stats: dict[str, Any]) -> str | None:
    """A stage's test strength in one line, or None where it reports none: validate's TPR/TNR of the
    kept tests, held out (`strength.held_out`) then in-sample (`strength.kept`), and how many kept
    problems have no held-out TPR (one reference); testgen's known-wrong and mutant TNR before ->
    after its tests (`strength.before` / `strength.after`, and `strength.held_out`), each kind on its
    own, never mixed."""
    kept = _record(stats, "strength", "kept")
    if kept is not None:
        held = _record(stats, "strength", "held_out")
        if held is None:  # stats written before issue 36
            return strength.describe(kept)
        no_tpr = sum((_record(stats, "strength", "problems_without_held_out_tpr") or {}).values())
        return strength.describe_pair(kept, held) + (f" ({no_tpr} problems without a held-out TPR)" if no_tpr else "")
    parts = []
    sides = ((("held_out",), "held out: "), ((), "in-sample: ")) if _record(stats, "strength", "held_out") else (((), ""),)
    for where, prefix in sides:
        for kind, name in (("known_wrong", "known-wrong TNR"), ("mutants", "mutant TNR")):
            before = _record(stats, "strength", *where, "before", kind)
            after = _record(stats, "strength", *where, "after", kind)
            if any(r and r.get("incorrect") for r in (before, after)):
                parts.append(f"{prefix}{name} {_tnr(before)} -> {_tnr(after)}")
    return "; ".join(parts) or None


def pipeline_summary(dvc_file: str | Path = "dvc.yaml") -> pl.DataFrame:
    """One row per stage with a metrics file: stage, unit, read, kept, rejected, top_reasons, status,
    strength (None where the stage measures none)."""
    rows = [_row(stage, path) for stage, path in metrics_files(dvc_file)]
    # a stage's other metrics files (train's metrics.json) add no row once its stats.json has one
    counted = {r["stage"] for r in rows if r["status"] == "ok"}
    rows = [r for r in rows if r["status"] != "figures only" or r["stage"] not in counted]
    return pl.DataFrame(rows, schema=COLUMNS)


def format_summary(table: pl.DataFrame) -> str:
    """The table as aligned text, every row and column shown but `strength`, which follows as one line
    per stage that has it (too wide for a column beside the reject reasons)."""
    shown = table.drop("stats_file", "strength").with_columns(pl.all().cast(pl.String).fill_null("-"))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
                   fmt_str_lengths=120, tbl_width_chars=240, tbl_formatting="ASCII_MARKDOWN"):
        text = str(shown)
    lines = [f"test strength, {stage}: {line}" for stage, line in table.select("stage", "strength").iter_rows() if line]
    return "\n".join([text, *lines])
