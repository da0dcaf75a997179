"""`microcoder reband`: a built release re-banded without new rollouts, written as a new version
(pipeline/reband.py, docs/releases.md). `microcoder filter --release ...` runs this command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from microcoder.stages.common import DebugOpt


def main(
    release: Annotated[Path, typer.Option(help="The built release to re-band (no rollouts are read).")],
    band: Annotated[str, typer.Option(help="LO,HI: the pass-rate band of the new release's default config.")],
    out: Annotated[Path, typer.Option(help="Folder of the re-banded release.")],
    model: Annotated[str | None, typer.Option(help="Re-band by this policy model's measurement (ID or ID@REVISION; "
                                                   "default: the release's pass_rate).")] = None,
    version: Annotated[str | None, typer.Option(help="Version of the re-banded release (default: the release's next "
                                                     "patch version, e.g. 0.1.0 -> 0.1.1).")] = None,
    debug: DebugOpt = False,
) -> None:
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        from microcoder.pipeline.build import parse_band
        from microcoder.pipeline.difficulty.band import Band
        from microcoder.pipeline.inputs import InputError
        from microcoder.pipeline.reband import reband

        if band is None or out is None:  # `microcoder filter --release` passes what it was given
            raise InputError("--release needs --band LO,HI and --out DIR")
        try:
            chosen = Band(*parse_band(band))
        except ValueError as e:
            raise InputError(str(e)) from None
        s = reband(release, out, chosen, model=model, version=version)
        typer.echo(f"reband: re-banded {release} to [{band}]: {s['kept']} rows in the default config, "
                   f"{s['out_of_band_rows']} outside -> {out} (version {s['version']})")

    run_stage("reband", body, debug)
