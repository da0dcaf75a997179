"""`microcoder rollout`: k samples per problem from the policy, each judged by the evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    out_dir: Annotated[Path, typer.Option(help="Output directory for the rollout shards.")] = Path("data/rollouts"),
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Shards are per problem group; a rerun skips finished problems (a killed run resumes).
    Input records that cannot be rolled out go to rejects.jsonl with the reason."""
    import logging

    from pipeline.inputs import stage_config, stage_errors
    from pipeline.rollout.runner import RolloutConfig, run_rollout

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with stage_errors("rollout"):
        cfg = stage_config(RolloutConfig, "rollout", params, set_)
        s = run_rollout(cfg, problems, out_dir, progress=progress)
    r = s["this_run"]
    speed = f"; {r['tokens_per_s']} tokens/s, {r['samples_per_s']} samples/s" if r["tokens_per_s"] else ""
    typer.echo(f"rollout: {s['problems_rolled_out']}/{s['problems_in']} problems rolled out "
               f"({r['problems_resumed']} resumed, {r['problems_generated']} generated now, "
               f"{s['problems_rejected']} rejected), {s['samples']} samples, status {s['status']}, "
               f"sample pass rate {s['sample_pass_rate']}{speed}")
