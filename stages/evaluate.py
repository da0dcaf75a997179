"""`microcoder evaluate`: judge a jsonl of submissions against problems with the sandboxed evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stages.common import ParamsOpt, SetOpt


def main(
    problems: Annotated[Path, typer.Option("--problems", help="Problems: parquet file / shard dir, or jsonl.")],
    submissions: Annotated[Path, typer.Option(
        "--submissions", help="Submissions jsonl: problem_id, submission_id, language (python|cpp), code.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Verdicts jsonl (one line per submission, in input order).")],
    workers: Annotated[int | None, typer.Option(help="Parallel judges (default: params, else all cores).")] = None,
    mode: Annotated[str, typer.Option(help="first-failure (stop at the first failing test) | all.")] = "first-failure",
    timeout_scale: Annotated[float | None, typer.Option(help="Multiply every time limit (default: params).")] = None,
    sandbox: Annotated[str | None, typer.Option(help="auto | bwrap | unshare | none (default: params).")] = None,
    keep_outputs: Annotated[bool, typer.Option(help="Keep each test's actual output (truncated) in the verdicts.")] = False,
    params: ParamsOpt = Path("params.yaml"),
    set_: SetOpt = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    import dataclasses
    import time
    from collections import Counter

    from pipeline.config import config_from_params
    from pipeline.evaluator import Evaluator, EvaluatorConfig
    from pipeline.evaluator.judge import MODES
    from pipeline.params import load_params
    from pipeline.schema import Verdict

    if mode not in MODES:
        raise typer.BadParameter(f"must be one of {MODES}", param_hint="--mode")
    cfg = config_from_params(EvaluatorConfig, load_params("evaluator", params, set_))
    overrides = {"workers": workers, "timeout_scale": timeout_scale, "sandbox": sandbox}
    cfg = dataclasses.replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    start = time.monotonic()
    # The judges start (bwrap, interpreter, pre-imports) while this process reads its inputs.
    with Evaluator.from_config(cfg, wait=False) as ev:
        from pipeline import io

        problem_list = io.read_problems(problems)
        # Every input line yields exactly one verdict line: unreadable lines become SE verdicts.
        slots: list[Verdict | None] = []
        items, where = [], []
        for n, rec, err in io.read_jsonl(submissions):
            if err:
                slots.append(Verdict("", f"line{n}", "SE", reason=f"{submissions}:{err}"))
                continue
            where.append(len(slots))
            slots.append(None)
            items.append(rec)
        verdicts = ev.evaluate_batch(problem_list, items, mode=mode, keep_outputs=keep_outputs, progress=progress)
    for i, v in zip(where, verdicts, strict=True):
        slots[i] = v
    io.write_jsonl(output, (v.to_dict() for v in slots))
    seconds = time.monotonic() - start
    counts = Counter(v.status for v in slots)
    tests = sum(len(v.tests) for v in slots)
    typer.echo(f"evaluate: {len(slots)} submissions, {tests} test runs in {seconds:.1f} s "
               f"({len(slots) / max(seconds, 1e-9):.1f} submissions/s) -> {output}")
    typer.echo("  " + ", ".join(f"{s} {n}" for s, n in counts.most_common()))
