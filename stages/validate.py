"""`microcoder validate`: verify tests with reference solutions, settle unstated time limits, measure the tests
with known-wrong solutions, cap them, reject broken problems (docs/validate.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.validate import Validate

    return Validate


def main(
    problems: Annotated[Path, typer.Option(help="Input problems (parquet file/dir or jsonl).")] = Path("data/testgen/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/validated"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    def report(s: dict, cfg) -> None:
        from microcoder.pipeline.strength import describe

        typer.echo(f"validate: read {s['read']}, kept {s['kept']} ({s['unverified_kept']} unverified), "
                   f"rejected {s['rejected']} {s['rejected_by_reason']}; tests: {s['tests']}")
        st = s["strength"]
        if st["kept"]["correct"] or st["kept"]["incorrect"]:
            typer.echo(f"validate: test strength {describe(st['kept'])} (before the caps: {describe(st['before_caps'])})")
        held = st.get("held_out") or {}
        if held.get("correct") or held.get("incorrect"):  # solutions that had no part in the choice (issue 36)
            no_tpr = sum(st["problems_without_held_out_tpr"].values())
            typer.echo(f"validate: held-out test strength {describe(held)} (before the caps: "
                       f"{describe(st['held_out_before_caps'])}; {no_tpr} problems without a held-out TPR)")
        r = s["this_run"]
        typer.echo(f"validate: time limits {s['time_limits']}; {r['runs_executed']} runs executed, "
                   f"{r['runs_cached']} cached, {r['runs_presumed_too_slow']} presumed too slow")
        rr = s.get("reference_runs") or {}
        if rr.get("references_not_voting"):  # vote_references: who ran on what (docs/validate.md)
            typer.echo(f"validate: references {rr['references_voting']} voting, {rr['references_not_voting']} not; "
                       f"their runs {rr['non_voters_runs']}, skipped {rr['non_voters_skipped']}")

    run_stage_command(stage, problems, out_dir, params=params, set_=set_, progress=progress, debug=debug, report=report)
