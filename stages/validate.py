"""`microcoder validate`: verify tests with reference solutions, settle unstated time limits, measure the tests
with known-wrong solutions, cap them, reject broken problems (docs/validate.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

CONFIG = ("validate", "pipeline.validate:ValidateConfig")
JUDGES = True


def main(
    problems: Annotated[Path, typer.Option(help="Input problems (parquet file/dir or jsonl).")] = Path("data/testgen/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/validated"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    from pipeline.stage import run_stage

    def body() -> None:
        from pipeline.judging import load_evaluator_config
        from pipeline.stage import load_config
        from pipeline.validate import ValidateConfig, run_validate

        cfg = load_config(ValidateConfig, "validate", params, set_)
        s = run_validate(cfg, problems, out_dir, evaluator=load_evaluator_config(params, set_), progress=progress)
        typer.echo(f"validate: read {s['read']}, kept {s['kept']} ({s['unverified_kept']} unverified), "
                   f"rejected {s['rejected']} {s['rejected_by_reason']}; tests: {s['tests']}")
        from pipeline.strength import describe

        st = s["strength"]
        if st["kept"]["correct"] or st["kept"]["incorrect"]:
            typer.echo(f"validate: test strength {describe(st['kept'])} (before the caps: {describe(st['before_caps'])})")
        r = s["this_run"]
        typer.echo(f"validate: time limits {s['time_limits']}; {r['runs_executed']} runs executed, "
                   f"{r['runs_cached']} cached, {r['runs_presumed_too_slow']} presumed too slow")

    run_stage("validate", body, debug)
