"""`microcoder filter`: pass-rate band plus the optional calibrated LLM difficulty prediction
(pipeline/difficulty/filter.py); with `--release DIR --band LO,HI --out NEW`, it runs `microcoder
reband` (a built release re-banded without new rollouts). That command is found by name in the CLI,
not imported: re-banding writes a release (build, card), which is not the filter stage's code, so
editing the card does not rerun filter (dvc.yaml deps, tests/test_layers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, SetOpt, run_command, run_stage_command


def stage() -> type:
    """The stage class (imported when the command runs or shows its help)."""
    from microcoder.pipeline.difficulty.filter import Filter

    return Filter


def main(
    ctx: typer.Context,
    problems: Annotated[Path, typer.Option(help="Validated problems (parquet file/dir or jsonl).")] = Path("data/validated/problems.parquet"),
    rollouts: Annotated[list[Path], typer.Option(help="Rollout shards directory; repeat it for more policy models "
                                                      "(the first decides the band, each adds its "
                                                      "model_difficulty entry).")] = [Path("data/rollouts")],  # noqa: B006
    out_dir: Annotated[Path, typer.Option(help="Output directory.")] = Path("data/filtered"),
    release: Annotated[Path | None, typer.Option(help="Re-band this built release (no rollouts read): runs "
                                                      "`microcoder reband`; needs --band and --out.")] = None,
    band: Annotated[str | None, typer.Option(help="LO,HI: the pass-rate band of a re-banded release.")] = None,
    out: Annotated[Path | None, typer.Option(help="Folder of the re-banded release.")] = None,
    model: Annotated[str | None, typer.Option(help="Re-band by this policy model's measurement (ID or ID@REVISION; "
                                                   "default: the release's pass_rate).")] = None,
    version: Annotated[str | None, typer.Option(help="Version of the re-banded release (default: the release's next "
                                                     "patch version, e.g. 0.1.0 -> 0.1.1).")] = None,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    debug: DebugOpt = False,
) -> None:
    def report(r: dict, cfg) -> None:
        cal = r["calibration"]
        fit = (f"calibration {cal['method']}: cv_mae {cal['cv_mae']} (baseline {cal['baseline_mae']})"
               if cal.get("fitted") else f"no calibration ({cal['reason']})")
        typer.echo(f"filter: read {r['read']}, kept {r['kept']} {r['kept_by_reason']}, rejected {r['rejected']} "
                   f"{r['rejected_by_reason']}; {fit}")

    if release is None and (band or out or model or version):
        raise typer.BadParameter("--band, --out, --model and --version re-band a built release: give --release DIR")
    if release is not None:
        run_command(ctx, "reband", release=release, band=band, out=out, model=model, version=version, debug=debug)
    else:
        run_stage_command(stage, problems, out_dir, params=params, set_=set_, debug=debug, report=report,
                          rollouts=rollouts)
