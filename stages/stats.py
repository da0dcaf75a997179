"""`microcoder stats [SQL]`: the pipeline's counts in one table (`--summary`), and DuckDB SQL over
any stage's shards (views named after the stages; pipeline/summary.py, pipeline/stats.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt


def main(
    sql: Annotated[str | None, typer.Argument(help="SQL over the views, e.g. \"SELECT source, count(*) FROM curated GROUP BY 1\".")] = None,
    summary_only: Annotated[bool, typer.Option("--summary", help="Only the pipeline table: a row per stage (unit, read, kept, rejected, top reject reasons).")] = False,
    stage: Annotated[list[str] | None, typer.Option("--stage", help="Only these stages' views (raw, dedup, testgen, validated, rollouts, filtered, curated). Repeatable.")] = None,
    data_dir: Annotated[Path, typer.Option(help="The data directory.")] = Path("data"),
    dvc_file: Annotated[Path, typer.Option(help="dvc.yaml whose `metrics:` entries name the stages and their stats files.")] = Path("dvc.yaml"),
    fmt: Annotated[str, typer.Option("--format", help="table | csv | json")] = "table",
    debug: DebugOpt = False,
) -> None:
    """Without SQL: the pipeline table, then each view with its row count and columns."""
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.stage import ConfigError

        if fmt not in ("table", "csv", "json"):
            raise ConfigError(f"--format must be table, csv or json, got {fmt!r}")
        if sql is None and not stage:
            _print_summary(dvc_file, fmt)
            if summary_only:
                return
        elif summary_only:
            raise ConfigError("--summary takes no SQL and no --stage")
        if sql is None:
            _print_views(data_dir, stage)
        else:
            _print_query(sql, data_dir, stage, fmt)

    run_stage("stats", body, debug)


def _print_summary(dvc_file: Path, fmt: str) -> None:
    from microcoder.pipeline.summary import format_summary, pipeline_summary

    table = pipeline_summary(dvc_file)
    if fmt == "json":
        typer.echo(table.write_json())
    elif fmt == "csv":
        typer.echo(table.write_csv(), nl=False)
    else:
        typer.echo(format_summary(table))


def _print_views(data_dir: Path, stages: list[str] | None) -> None:
    from microcoder.pipeline.stats import summary

    views = summary(data_dir, stages)
    if not views:
        typer.echo(f"no stage shards found under {data_dir}")
    for v in views:
        typer.echo(f"{v['view']}: {v['rows']} rows; columns: {', '.join(v['columns'])}")


def _print_query(sql: str, data_dir: Path, stages: list[str] | None, fmt: str) -> None:
    import csv
    import json
    import sys

    from microcoder.pipeline.stats import format_table, query

    columns, rows = query(sql, data_dir, stages)
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str, indent=1))
    elif fmt == "csv":
        w = csv.writer(sys.stdout)
        w.writerow(columns)
        w.writerows(rows)
    else:
        typer.echo(format_table(columns, rows))
