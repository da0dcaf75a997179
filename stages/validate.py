"""`microcoder validate`: verify tests with reference solutions, settle unstated time limits, measure the tests
with known-wrong solutions, cap them, reject broken problems (docs/validate.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Input problems (parquet file/dir or jsonl).")] = Path("data/dedup/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/validated"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline import io
    from pipeline.config import config_from_params
    from pipeline.params import load_params
    from pipeline.validate import STAGE, ValidateConfig, validate_problems

    cfg = config_from_params(ValidateConfig, load_params("validate", params, set_))
    items = io.read_problems(problems)
    result = validate_problems(items, cfg, progress=progress)
    io.write_problems(out_dir / "problems.parquet", result.kept)
    with io.RejectsWriter(out_dir / "rejects.jsonl", STAGE) as rejects:
        for p, reason in result.rejects:
            rejects.add(p.id, reason, p)
    with io.atomic_path(out_dir / "report.parquet", ".parquet") as tmp:
        pq.write_table(pa.Table.from_pylist(result.report), tmp, compression="zstd")
    io.write_json(out_dir / "stats.json", result.stats)
    s = result.stats
    typer.echo(f"validate: {s['problems_in']} problems -> {s['problems_kept']} kept "
               f"({s['problems_unverified_kept']} unverified), {s['problems_rejected']} rejected; "
               f"tests: {s['tests']}")
    w = s["wrong_solutions"]
    if w["ran"]:
        typer.echo(f"validate: the kept tests catch {w['caught']} of {w['ran']} known-wrong solutions "
                   f"({w['lost_to_caps']} lost to the caps)")
    typer.echo(f"validate: time limits {s['time_limits']}; {s['this_run']['runs_executed']} runs executed, "
               f"{s['this_run']['runs_cached']} cached, {s['this_run']['runs_presumed_too_slow']} presumed too slow")
