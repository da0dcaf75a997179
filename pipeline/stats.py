"""DuckDB SQL over any stage's shards: one view per stage (`raw`, `dedup`, `testgen`, `validated`,
`rollouts`, `filtered`, `curated`), plus `<stage>_<name>` for a stage's other parquet files. Bad SQL
or an unknown stage is the user's to fix: an InputError (one line, exit 2 under the stage contract).

    SELECT source, count(*) FROM curated GROUP BY 1
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError

# view name -> folder under the data directory
STAGES = {
    "raw": "raw",
    "dedup": "dedup",
    "testgen": "testgen",
    "validated": "validated",
    "rollouts": "rollouts",
    "filtered": "filtered",
    "curated": "curated",
}


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _view_name(stage: str, stem: str) -> str:
    return f"{stage}_{re.sub(r'[^0-9a-zA-Z_]+', '_', stem).strip('_').lower()}"


def stage_files(data_dir: str | Path, stage: str) -> dict[str, list[Path]]:
    """The views of one stage folder: `{view name: parquet files}`. The stage's main view is its
    `problems.parquet`, or its shards (`part-*.parquet` in the folder or its `shards/`, or a Hub
    layout's `data/*.parquet`)."""
    folder = Path(data_dir) / STAGES[stage]
    if not folder.is_dir():
        return {}
    files = sorted(f for f in folder.rglob("*.parquet") if not any(p.startswith(".") for p in f.parts))
    main = [f for f in files if f.name == "problems.parquet" and f.parent == folder]
    if not main:
        main = [f for f in files if f.parent in (folder, folder / "shards") and f.name.startswith("part-")]
    if not main:
        main = [f for f in files if f.parent == folder / "data"]
    views: dict[str, list[Path]] = {stage: main} if main else {}
    for f in files:
        if f not in main:
            views.setdefault(_view_name(stage, f.relative_to(folder).with_suffix("").as_posix()), []).append(f)
    return views


def connect(data_dir: str | Path = "data", stages: list[str] | None = None):
    """An in-memory DuckDB connection with a view per stage (and per extra parquet file)."""
    import duckdb

    unknown = sorted(set(stages or []) - set(STAGES))
    if unknown:
        raise InputError(f"unknown stage(s) {unknown}; choose from {list(STAGES)}")
    con = duckdb.connect()
    for stage in stages or list(STAGES):
        for view, files in stage_files(data_dir, stage).items():
            paths = "[" + ", ".join(_sql_str(str(f)) for f in files) + "]"
            con.execute(f'CREATE VIEW "{view}" AS SELECT * FROM read_parquet({paths}, union_by_name = true)')
    return con


def views(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()]


def query(sql: str, data_dir: str | Path = "data", stages: list[str] | None = None) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of `sql` over the stage views."""
    import duckdb

    con = connect(data_dir, stages)
    try:
        cur = con.execute(sql)
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as e:  # bad SQL, an unknown view or column
        raise InputError(f"{type(e).__name__}: {e}") from e
    finally:
        con.close()


def summary(data_dir: str | Path = "data", stages: list[str] | None = None) -> list[dict[str, Any]]:
    """Each view: name, rows, files and columns (what `microcoder stats` prints without SQL)."""
    con = connect(data_dir, stages)
    try:
        out = []
        for v in views(con):
            rows = con.execute(f'SELECT count(*) FROM "{v}"').fetchone()[0]
            cols = [r[0] for r in con.execute(f'DESCRIBE "{v}"').fetchall()]
            out.append({"view": v, "rows": rows, "columns": cols})
        return out
    finally:
        con.close()


def format_table(columns: list[str], rows: list[tuple], max_width: int = 60) -> str:
    """A plain aligned text table (long cells cut to `max_width`)."""
    def cell(v: Any) -> str:
        s = "NULL" if v is None else str(v).replace("\n", "\\n")
        return s if len(s) <= max_width else s[: max_width - 3] + "..."

    body = [[cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    lines = [line(columns), line(["-" * w for w in widths])] + [line(r) for r in body]
    return "\n".join(lines)
