"""`microcoder rollout`: k samples per problem from the policy, each judged by the evaluator (docs/rollout.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.rollout.runner import Rollout

    return Rollout


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory for the rollout shards.")] = Path("data/rollouts"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    """Shards are per problem group; a rerun skips finished problems (a killed run resumes).
    Input records that cannot be rolled out go to rejects.jsonl with the reason."""
    def report(s: dict, cfg) -> None:
        r = s["this_run"]
        speed = f"; {r['tokens_per_s']} tokens/s, {r['samples_per_s']} samples/s" if r["tokens_per_s"] else ""
        typer.echo(f"rollout: read {s['read']} problems, kept {s['kept']} (rolled out: {r['problems_resumed']} "
                   f"resumed, {r['problems_generated']} generated now), rejected {s['rejected']}; {s['samples']} "
                   f"samples, status {s['status']}, sample pass rate {s['sample_pass_rate']}{speed}")

    run_stage_command(stage, problems, out_dir, params=params, set_=set_, progress=progress, debug=debug, report=report)
