"""`microcoder scrape`: run the params.yaml sources into data/raw, or convert one local dataset (pipeline/scrape.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

CONFIG = ("scrape", "pipeline.scrape:ScrapeConfig")
FORMAT_NAMES = "jsonl|humaneval|livecodebench|kattis|leetcodedataset|codecontests|taco|apps|open-r1-codeforces|deepcoder"


def main(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Stage output folder.")] = Path("data/raw"),
    fmt: Annotated[str | None, typer.Option("--format", help=f"Convert one local dataset: {FORMAT_NAMES}.")] = None,
    path: Annotated[Path | None, typer.Option("--path", help="Input file or folder for --format (kattis: packages at "
                                              "any depth; apps: Hub rows or APPS' original problem folders).")] = None,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Output .parquet (or .jsonl) for --format.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Source name (id prefix) for --format.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only problems from contests on/after this date (every source; undated problems are rejected).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Read at most this many records per source.")] = None,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    """Sources -> problems.parquet + rejects.jsonl + stats.json + settings.json (every record accounted for)."""
    from pipeline.stage import run_stage

    def body() -> None:
        from pipeline.scrape import ScrapeConfig, convert, run_scrape
        from pipeline.stage import ConfigError, load_config

        if fmt is not None:
            from pipeline.sources import FORMATS

            if fmt not in FORMATS:  # a usage error (exit 2), like every other bad option
                raise ConfigError(f"--format must be one of {', '.join(sorted(FORMATS))}, got {fmt!r}")
            if out is None or (path is None and fmt != "humaneval"):
                raise ConfigError("--format needs --path (except humaneval) and -o/--out")
            stats = convert(fmt, path, out, name=name, since=since, limit=limit, progress=progress)
            where = f"{out} (+ {out.stem}.rejects.jsonl, {out.stem}.stats.json)"
        else:
            if out is not None or path is not None or name is not None:
                raise ConfigError("-o/--out, --path and --name go with --format (the stage writes to --out-dir)")
            cfg = load_config(ScrapeConfig, "scrape", params, set_)
            stats = run_scrape(cfg, out_dir, since=since, limit=limit, progress=progress)
            where = str(out_dir)
        for source, s in stats["sources"].items():
            reasons = ", ".join(f"{k}={v}" for k, v in s["rejected_by_reason"].items())
            extra = f" [error: {s['error']}]" if s["error"] else ""
            typer.echo(f"{source}: read {s['read']}, kept {s['kept']}, rejected {s['rejected']}"
                       f"{' (' + reasons + ')' if reasons else ''}{extra}")
        typer.echo(f"scrape: read {stats['read']}, kept {stats['kept']}, rejected {stats['rejected']} -> {where}")

    run_stage("scrape", body, debug)
