"""`microcoder scrape`: run the params.yaml sources into data/raw, or convert one local dataset (pipeline/scrape.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.scrape import Scrape

    return Scrape
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
    def report(stats: dict, where: str) -> None:
        for source, s in stats["sources"].items():
            reasons = ", ".join(f"{k}={v}" for k, v in s["rejected_by_reason"].items())
            extra = f" [error: {s['error']}]" if s["error"] else ""
            typer.echo(f"{source}: read {s['read']}, kept {s['kept']}, rejected {s['rejected']}"
                       f"{' (' + reasons + ')' if reasons else ''}{extra}")
        typer.echo(f"scrape: read {stats['read']}, kept {stats['kept']}, rejected {stats['rejected']} -> {where}")

    def converted() -> None:
        from microcoder.pipeline.scrape import convert
        from microcoder.pipeline.sources import FORMATS
        from microcoder.pipeline.stage import ConfigError

        if fmt not in FORMATS:  # a usage error (exit 2), like every other bad option
            raise ConfigError(f"--format must be one of {', '.join(sorted(FORMATS))}, got {fmt!r}")
        if out is None or (path is None and fmt != "humaneval"):
            raise ConfigError("--format needs --path (except humaneval) and -o/--out")
        stats = convert(fmt, path, out, name=name, since=since, limit=limit, progress=progress)
        report(stats, f"{out} (+ {out.stem}.rejects.jsonl, {out.stem}.stats.json)")

    def stage_only() -> dict:
        from microcoder.pipeline.stage import ConfigError

        if out is not None or path is not None or name is not None:
            raise ConfigError("-o/--out, --path and --name go with --format (the stage writes to --out-dir)")
        return {}

    if fmt is not None:
        from microcoder.pipeline.stage import run_stage

        run_stage("scrape", converted, debug)
    else:
        run_stage_command(stage, None, out_dir, params=params, set_=set_, progress=progress, debug=debug,
                          report=lambda stats, cfg: report(stats, str(out_dir)), prepare=stage_only,
                          since=since, limit=limit)
