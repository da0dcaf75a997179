"""`microcoder scrape`: run the params.yaml sources into data/raw, or convert one local dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt

FORMAT_NAMES = "jsonl|humaneval|livecodebench|kattis|leetcodedataset|codecontests|taco|apps|open-r1-codeforces|deepcoder"


def main(
    params: ParamsOpt = Path("params.yaml"),
    overrides: SetOpt = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Stage output folder.")] = Path("data/raw"),
    fmt: Annotated[str | None, typer.Option("--format", help=f"Convert one local dataset: {FORMAT_NAMES}.")] = None,
    path: Annotated[Path | None, typer.Option("--path", help="Input file or folder for --format (kattis: packages at "
                                              "any depth; apps: Hub rows or APPS' original problem folders).")] = None,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Output .parquet (or .jsonl) for --format.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Source name (id prefix) for --format.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only problems from contests on/after this date (every source; undated problems are rejected).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Read at most this many records per source.")] = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Sources -> problems.parquet + rejects.jsonl + stats.json (every record accounted for)."""
    from pipeline.config import config_from_params
    from pipeline.params import load_params
    from pipeline.scrape import ScrapeConfig, convert, run_scrape
    from pipeline.sources import SourceError

    try:
        if fmt is not None:
            if out is None or (path is None and fmt != "humaneval"):
                raise typer.BadParameter("--format needs --path (except humaneval) and -o/--out")
            stats = convert(fmt, path, out, name=name, since=since, limit=limit, progress=progress)
            where = f"{out} (+ {out.stem}.rejects.jsonl, {out.stem}.stats.json)"
        else:
            cfg = config_from_params(ScrapeConfig, load_params("scrape", params, overrides))
            if not progress:
                cfg.progress = False
            stats = run_scrape(cfg, out_dir, since=since, limit=limit)
            where = str(out_dir)
    except SourceError as e:
        typer.echo(f"scrape failed: {e}", err=True)
        raise typer.Exit(1) from e
    for source, s in stats["sources"].items():
        reasons = ", ".join(f"{k}={v}" for k, v in s["rejected_by_reason"].items())
        extra = f" [error: {s['error']}]" if s["error"] else ""
        typer.echo(f"{source}: read {s['read']}, accepted {s['accepted']}, rejected {s['rejected']}"
                   f"{' (' + reasons + ')' if reasons else ''}{extra}")
    t = stats["total"]
    typer.echo(f"total: read {t['read']}, accepted {t['accepted']}, rejected {t['rejected']} -> {where}")
