"""`microcoder stats [SQL]`: DuckDB SQL over any stage's shards (views named after the stages)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def main(
    sql: Annotated[str | None, typer.Argument(help="SQL over the views, e.g. \"SELECT source, count(*) FROM curated GROUP BY 1\".")] = None,
    stage: Annotated[list[str] | None, typer.Option("--stage", help="Only these stages' views (raw, dedup, validated, rollouts, filtered, curated). Repeatable.")] = None,
    data_dir: Annotated[Path, typer.Option(help="The data directory.")] = Path("data"),
    fmt: Annotated[str, typer.Option("--format", help="table | csv | json")] = "table",
) -> None:
    """Without SQL: list each view with its row count and columns."""
    import csv
    import json
    import sys

    import duckdb

    from pipeline.stats import format_table, query, summary

    try:
        if sql is None:
            views = summary(data_dir, stage)
            if not views:
                typer.echo(f"no stage shards found under {data_dir}", err=True)
                raise typer.Exit(1)
            for v in views:
                typer.echo(f"{v['view']}: {v['rows']} rows; columns: {', '.join(v['columns'])}")
            return
        columns, rows = query(sql, data_dir, stage)
    except ValueError as e:
        typer.echo(f"stats: {e}", err=True)
        raise typer.Exit(2) from None
    except duckdb.Error as e:  # bad SQL, unknown view: the user's to fix, say so plainly
        typer.echo(f"stats: {e}", err=True)
        raise typer.Exit(2) from None
    if fmt == "json":
        typer.echo(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str, indent=1))
    elif fmt == "csv":
        w = csv.writer(sys.stdout)
        w.writerow(columns)
        w.writerows(rows)
    else:
        typer.echo(format_table(columns, rows))
