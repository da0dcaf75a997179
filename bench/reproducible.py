"""The default run twice, once on a machine N times slower by construction: the same content?

    python bench/reproducible.py                          # tiny-model .. build, slowdown 2 (~2 x 8 min on 2 cores)
    python bench/reproducible.py --stages scrape,dedup,testgen,validate --slowdown 2

Each run executes dvc.yaml's stage commands in order, with every `data/` and `models/` path moved
under its own folder, the second with `--set evaluator.slowdown=N` on the stages that judge (every
measured time x N, every limit sent to a box / N: `pipeline/evaluator/config.py`). Contention does
not make a slower machine (CPU time is the same beside busy neighbours), so this is the check that
can fail. Both runs read the committed pins (`validate.pinned_limits`), as a fresh clone would.
Per stage, the content digest of its outputs (`pipeline/content_digest.py`: every file but the
named files of measurements) is compared; the table says which files differ, and the exit status
is 1 when any does. Then: does the first run reproduce the committed dvc.lock's hashes of the
content outputs (a fresh clone on this machine)?
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline.content_digest import METADATA, content_digest, differences  # noqa: E402

JUDGING = ("testgen", "validate", "rollout", "train", "eval-model")
DEFAULT_STAGES = "tiny-model,scrape,dedup,testgen,validate,warmstart,rollout,filter,build"
QUIET_ALREADY = ("tiny-model", "filter", "build")  # commands without a progress bar (no --no-progress)


def stage_commands(names: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(stage, command words, its outs) for `names`, from dvc.yaml."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = []
    for name in names:
        spec = stages[name]
        words = shlex.split(str(spec["cmd"]).split("microcoder", 1)[1])
        outs = [next(iter(o)) if isinstance(o, dict) else str(o) for o in spec.get("outs", [])]
        out.append((name, ["microcoder", *words], outs))
    return out


def moved(word: str, root: Path) -> str:
    return str(root / word) if word.startswith(("data/", "models/")) and not word.startswith("data/seed/") else word


def run_all(names: list[str], root: Path, slowdown: float) -> dict[str, dict[str, str]]:
    """Run the stages into `root`; per stage, the content digest of its output folders."""
    digests = {}
    for name, words, outs in stage_commands(names):
        cmd = [moved(w, root) for w in words]
        if name in JUDGING and slowdown != 1.0:
            cmd += ["--set", f"evaluator.slowdown={slowdown}"]
        if name == "rollout":  # the policy is named in params.yaml, not on the command line
            cmd += ["--set", f"model={root / 'models' / 'warm'}"]
        if name not in QUIET_ALREADY:
            cmd.append("--no-progress")
        t0 = time.monotonic()
        subprocess.run([str(ROOT / ".venv" / "bin" / cmd[0]), *cmd[1:]], cwd=ROOT, check=True)
        print(f"  {name}: {time.monotonic() - t0:.0f} s", flush=True)
        folders = sorted({str(Path(moved(o, root)).parent if Path(o).suffix else moved(o, root)) for o in outs})
        digests[name] = {f"{Path(f).relative_to(root)}/{k}": v for f in folders for k, v in content_digest(f).items()}
    return digests


def lock_check(names: list[str], root: Path) -> list[tuple[str, str]]:
    """(out, same | differs | not in dvc.lock) for each cached content out of dvc.lock's stages."""
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    rows = []
    for name in names:
        for out in lock.get(name, {}).get("outs", []):
            path = Path(out["path"])
            if path.name in METADATA or path.suffix == "" and out.get("nfiles"):
                continue  # folders: their dvc hash is of a listing (checked file by file above)
            mine = root / path
            if not mine.is_file():
                continue
            same = hashlib.md5(mine.read_bytes()).hexdigest() == out.get("md5")
            rows.append((str(path), "same" if same else "differs"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stages", default=DEFAULT_STAGES)
    ap.add_argument("--slowdown", type=float, default=2.0)
    ap.add_argument("--keep", type=Path, default=None, help="keep both runs' outputs here")
    args = ap.parse_args()
    names = args.stages.split(",")
    work = args.keep or Path(tempfile.mkdtemp(prefix="microcoder-repro-"))
    print(f"run 1 (this machine) into {work / 'here'}")
    here = run_all(names, work / "here", 1.0)
    print(f"run 2 (slowdown {args.slowdown:g}) into {work / 'slower'}")
    slower = run_all(names, work / "slower", args.slowdown)
    print(f"\n| stage | content files | differ on a machine {args.slowdown:g}x slower |\n|---|---|---|")
    failed = False
    for name in names:
        diff = differences(here[name], slower[name])
        failed |= bool(diff)
        print(f"| {name} | {len(here[name])} | {', '.join(diff) if diff else 'none'} |")
    print("\nMeasurements left out (pipeline/content_digest.METADATA): " + ", ".join(sorted(METADATA)))
    rows = lock_check(names, work / "here")
    if rows:
        print("\n| content out | run 1 vs the committed dvc.lock |\n|---|---|")
        for path, verdict in rows:
            print(f"| {path} | {verdict} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
