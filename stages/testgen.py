"""`microcoder testgen`: add generated tests to problems with a reference and too few tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Input problems (parquet file/dir or jsonl).")] = Path("data/dedup/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/testgen"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    from pipeline import io
    from pipeline.config import config_from_params
    from pipeline.params import load_params
    from pipeline.testgen.stage import STAGE, TestgenConfig, testgen_problems

    cfg = config_from_params(TestgenConfig, load_params("testgen", params, set_))
    items = io.read_problems(problems)
    result = testgen_problems(items, cfg, progress=progress)
    io.write_problems(out_dir / "problems.parquet", result.kept)
    with io.RejectsWriter(out_dir / "rejects.jsonl", STAGE) as rejects:
        for p, reason in result.rejects:
            rejects.add(p.id, reason, p)
    io.write_jsonl(out_dir / "report.jsonl", result.report)
    io.write_json(out_dir / "stats.json", result.stats)
    s = result.stats
    m = s["mutants"]
    typer.echo(f"testgen: {s['read']} problems -> {s['problems_augmented']} augmented, "
               f"{s['tests_added']} tests added {s['tests_added_by_method']}; mutants killed "
               f"{m['killed_by_examples']}/{m['mutants']} by examples, {m['killed_with_generated']}/{m['mutants']} "
               f"with generated tests ({s['wall_s']} s)")
