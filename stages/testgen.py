"""`microcoder testgen`: add generated tests to problems with a reference and too few tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.testgen.stage import Testgen

    return Testgen


def main(
    problems: Annotated[Path, typer.Option(help="Input problems (parquet file/dir or jsonl).")] = Path("data/dedup/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/testgen"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    def report(s: dict, cfg) -> None:
        from microcoder.pipeline.strength import describe

        typer.echo(f"testgen: read {s['read']}, kept {s['kept']} ({s['problems_augmented']} augmented), rejected "
                   f"{s['rejected']} {s['rejected_by_reason']}; {s['tests_added']} tests added "
                   f"{s['tests_added_by_tier']} ({s['wall_s']} s)")
        for kind in ("known_wrong", "mutants"):
            before, after = s["strength"]["before"][kind], s["strength"]["after"][kind]
            if after["correct"] or after["incorrect"]:
                typer.echo(f"testgen: {kind.replace('_', '-')} before {describe(before)} -> after {describe(after)}")
            held = s["strength"].get("held_out") or {}
            if held and (held["after"][kind]["correct"] or held["after"][kind]["incorrect"]):  # issue 36
                typer.echo(f"testgen: {kind.replace('_', '-')}, held out: before {describe(held['before'][kind])} "
                           f"-> after {describe(held['after'][kind])}")

    run_stage_command(stage, problems, out_dir, params=params, set_=set_, progress=progress, debug=debug, report=report)
