"""`microcoder evaluate`: judge a jsonl of submissions against problems with the sandboxed evaluator
(pipeline/evaluator; docs/evaluator.md). Its settings are the params' `evaluator:` section, the one
every judging stage uses; `--workers/--timeout-scale/--sandbox` override it for this call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from microcoder.stages.common import DebugOpt, ParamsOpt, ProgressOpt, SetOpt

if TYPE_CHECKING:
    from microcoder.pipeline.stage import Command


def stage() -> type[Command]:
    """The command's params (imported when the command runs or shows its help)."""
    from microcoder.pipeline.judging import Evaluate

    return Evaluate


def main(
    problems: Annotated[Path | None, typer.Option("--problems", help="Problems: parquet file / shard dir, or jsonl (required).")] = None,
    submissions: Annotated[Path | None, typer.Option(
        "--submissions", help="Submissions jsonl: problem_id, submission_id, language (python|cpp), code (required).")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Verdicts jsonl, one line per submission in input order (required).")] = None,
    workers: Annotated[int | None, typer.Option(help="Parallel judges (default: evaluator.workers, else all cores).")] = None,
    mode: Annotated[str, typer.Option(help="first-failure (stop at the first failing test) | all.")] = "first-failure",
    timeout_scale: Annotated[float | None, typer.Option(help="Multiply every time limit (default: evaluator.timeout_scale).")] = None,
    sandbox: Annotated[str | None, typer.Option(help="auto | bwrap | unshare | none (default: evaluator.sandbox).")] = None,
    keep_outputs: Annotated[bool, typer.Option(help="Keep each test's actual output (truncated) in the verdicts.")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: ProgressOpt = True,
    debug: DebugOpt = False,
) -> None:
    from microcoder.pipeline.stage import run_stage

    def body() -> None:
        import time
        from collections import Counter

        from microcoder.pipeline.evaluator.factory import make_evaluator
        from microcoder.pipeline.evaluator.verdict.judge import JUDGING_MODES
        from microcoder.pipeline.inputs import require_input
        from microcoder.pipeline.stage import ConfigError

        if mode not in JUDGING_MODES:  # not `run`: its AC means "ran", never "correct"
            raise ConfigError(f"--mode must be one of {list(JUDGING_MODES)}, got {mode!r}")
        # This command's own section is `evaluator:`: `--set workers=2` and `--set evaluator.workers=2` alike.
        ev_cfg, _ = stage().load_configs(params, [s.removeprefix("evaluator.") for s in set_ or []])
        if problems is None or submissions is None or output is None:
            raise ConfigError("--problems, --submissions and -o/--output are required")
        require_input(problems, "problems")
        require_input(submissions, "submissions")
        start = time.monotonic()
        # The judges start (bwrap, interpreter, pre-imports) while this process reads its inputs.
        with make_evaluator(ev_cfg, wait=False, workers=workers, timeout_scale=timeout_scale, sandbox=sandbox) as ev:
            verdicts, unusable = _judge_file(ev, problems, submissions, output, mode=mode, keep_outputs=keep_outputs,
                                             progress=progress)
        seconds = time.monotonic() - start
        counts = Counter(v["status"] for v in verdicts)
        tests = sum(len(v["tests"]) for v in verdicts)
        typer.echo(f"evaluate: {len(verdicts)} submissions, {tests} test runs in {seconds:.1f} s "
                   f"({len(verdicts) / max(seconds, 1e-9):.1f} submissions/s) -> {output}"
                   + (f"; {unusable} problem records unusable (their submissions: SE)" if unusable else ""))
        typer.echo("  " + ", ".join(f"{s} {n}" for s, n in counts.most_common()))

    run_stage("evaluate", body, debug)


def _judge_file(ev, problems_path: Path, submissions_path: Path, output: Path, **kw) -> tuple[list[dict], int]:
    """Verdict rows (one per submission line, in order, written to `output`) and the number of
    unusable problem records. A line that is not a JSON object, or a submission to a problem whose
    record is unusable (the tolerant reader's reject), gets an SE verdict saying why."""
    from microcoder.pipeline import io
    from microcoder.pipeline.inputs import load_problems
    from microcoder.pipeline.schema import Verdict

    loaded = load_problems(problems_path, "problems")
    known = {p.id for p in loaded.problems}
    unusable = {r.id: r.reason for r in loaded.rejects if r.id is not None and r.id not in known}
    slots: list[Verdict | None] = []
    items, where = [], []
    for n, rec, err in io.read_jsonl(submissions_path):
        pid = rec.get("problem_id") if rec else None
        if err:
            slots.append(Verdict("", f"line{n}", "SE", reason=f"{submissions_path}:{err}"))
        elif isinstance(pid, str) and pid in unusable:
            slots.append(Verdict(pid, str(rec.get("submission_id") or f"line{n}"), "SE",
                                 reason=f"{problems_path}: problem record unusable: {unusable[pid]}"))
        else:
            where.append(len(slots))
            slots.append(None)
            items.append(rec)
    for i, v in zip(where, ev.evaluate_batch(loaded.problems, items, **kw), strict=True):
        slots[i] = v
    rows = [v.to_dict() for v in slots]
    io.write_jsonl(output, rows)
    return rows, len(loaded.rejects)
