"""`microcoder validate`: verify tests with reference solutions, cap them, reject broken problems."""

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
