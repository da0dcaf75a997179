"""The train stage's output folder: what a run finds there, cleans, records and swaps in.

Layout under `out_dir`: `checkpoint/` (the final model, replaced as a whole), `trainer/` (TRL's
`checkpoint-<step>/` folders and `run.json`: the run's settings and whether it finished), and the
stage's metrics files. Invariants:
- `checkpoint/` is swapped in whole: a run killed mid-swap leaves the previous one as
  `.checkpoint.old`, which the next run puts back (`remove_leftovers`); scratch folders
  (`.checkpoint-*`, `.trainer-*`) of a killed run are removed.
- A checkpoint is complete when `trainer_state.json` and every process's MicroCoderGRPOTrainer state
  file exist (written last); only complete ones are resumed from (`latest_checkpoint`).
- `run.json` says `finished: false` from the moment a run starts until its outputs are written; a
  new run never discards an unfinished run's checkpoints, a resumed one must keep the interrupted
  run's fixed settings (`plan_run`).
- Under `accelerate launch`, only the main process deletes, renames or writes here; the others wait
  at barriers (every process takes part in saving the model: FSDP / ZeRO-3 gather collectively).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.io import write_json

log = logging.getLogger(__name__)

TRAINER_DIR = "trainer"  # TRL's output_dir under the stage's output: checkpoints survive the run
RUN_FILE = "run.json"
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def latest_checkpoint(trainer_dir: Path, processes: int = 1) -> Path | None:
    """The highest-step checkpoint whose save completed on every process (MicroCoderGRPOTrainer
    writes its per-process state file last); a folder cut short by a kill is skipped."""
    from microcoder.training.trainer import STATE_FILE

    found = []
    for path in trainer_dir.glob("checkpoint-*") if trainer_dir.is_dir() else []:
        match = _CHECKPOINT.match(path.name)
        complete = (path / "trainer_state.json").exists() and all(
            (path / STATE_FILE.format(rank=r)).exists() for r in range(processes))
        if match and complete:
            found.append((int(match.group(1)), path))
    return max(found)[1] if found else None


def plan_run(trainer_dir: Path, resume: bool, settings: dict[str, Any], fixed: Iterable[str],
             processes: int = 1) -> Path | None:
    """The checkpoint to resume from (None: a new run). Raises InputError when `resume` has nothing to
    continue or changes one of the `fixed` settings of the interrupted run, and when a new run would
    silently discard an interrupted one's checkpoints."""
    run_file = trainer_dir / RUN_FILE
    previous = json.loads(run_file.read_text(encoding="utf-8")) if run_file.exists() else None
    last = latest_checkpoint(trainer_dir, processes)
    if not resume:
        if last is not None and not (previous or {}).get("finished", False):
            raise InputError(f"{trainer_dir} holds checkpoints of an interrupted run (latest {last.name}): rerun with "
                             f"--resume to continue it, or delete {trainer_dir} to start over")
        return None
    if last is None:
        raise InputError(f"resume: no complete checkpoint in {trainer_dir} to continue from")
    if previous is not None:
        before = previous.get("settings", {})
        differ = [k for k in fixed if k in before and before.get(k) != settings.get(k)]
        if differ:
            raise InputError("resume: these settings differ from the interrupted run's, so it would not continue the "
                             "same run: " + ", ".join(f"{k} {before.get(k)!r} -> {settings.get(k)!r}" for k in differ))
        changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
        if changed:
            log.warning("resume: settings changed since the interrupted run: %s",
                        ", ".join(f"{k} {before.get(k)!r} -> {settings.get(k)!r}" for k in changed))
    return last


def prepare_output(state: Any, out_dir: Path, trainer_dir: Path, resume_from: Path | None,
                   settings: dict[str, Any]) -> None:
    """The main process alone cleans and prepares the output folder while the others wait: under
    `accelerate launch` a rank must never delete what another rank is writing."""
    state.wait_for_everyone()
    if state.is_main_process:
        out_dir.mkdir(parents=True, exist_ok=True)
        remove_leftovers(out_dir)
        if resume_from is None:
            shutil.rmtree(trainer_dir, ignore_errors=True)  # a finished run's checkpoints (plan_run checked)
        trainer_dir.mkdir(parents=True, exist_ok=True)
        write_json(trainer_dir / RUN_FILE, {"finished": False, "settings": settings})
    state.wait_for_everyone()


def remove_leftovers(out_dir: Path) -> None:
    """Scratch and half-saved checkpoint folders of a run that was killed (a finished or failed run
    removes its own). A run killed in the middle of the checkpoint swap left the previous
    checkpoint as `.checkpoint.old`: it is put back, not deleted. Main process only."""
    checkpoint, retired = out_dir / "checkpoint", out_dir / ".checkpoint.old"
    if retired.is_dir() and not checkpoint.exists():
        log.warning("restoring %s from %s (a run was killed while replacing it)", checkpoint, retired)
        retired.rename(checkpoint)
    # `.trainer-*`: the scratch output_dir of earlier versions of this stage.
    for leftover in [*out_dir.glob(".trainer-*"), *out_dir.glob(".checkpoint-*"), out_dir / ".checkpoint.old"]:
        if leftover.is_dir():
            log.warning("removing %s, left by an interrupted run", leftover)
            shutil.rmtree(leftover, ignore_errors=True)


def save_checkpoint(trainer: Any, tokenizer: Any, path: Path) -> None:
    """`save_model` into a temp dir next to `path` on *every* process (FSDP and ZeRO-3 gather the
    full weights collectively; transformers writes the files from the main process), then the main
    process alone writes the tokenizer and swaps the folder in."""
    acc = trainer.accelerator
    tmp = path.with_name(f".{path.name}-new")
    if acc.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    acc.wait_for_everyone()
    try:
        trainer.save_model(str(tmp))
        acc.wait_for_everyone()
        if acc.is_main_process:
            tokenizer.save_pretrained(str(tmp))
            (tmp / "training_args.bin").unlink(missing_ok=True)  # pickled TrainingArguments: not needed to load
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            if path.exists():
                path.rename(old)
            tmp.rename(path)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        if acc.is_main_process:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    acc.wait_for_everyone()


def finish(trainer_dir: Path, settings: dict[str, Any]) -> None:
    """Mark the run finished (main process, after every output is written): its checkpoints may go."""
    write_json(trainer_dir / RUN_FILE, {"finished": True, "settings": settings})
