"""Validate's reference runs with every reference voting (`vote_references: 0`, before issue 39) and
with the default 3 voters, on real problems with several accepted solutions.

    .venv/bin/python bench/validate_budget.py                         # 20 problems, a few minutes on 2 cores
    .venv/bin/python bench/validate_budget.py --problems 40 --refs 8 --max-tests 32
    .venv/bin/python bench/validate_budget.py --max-tests 10   # 32 tests, 10 kept: as 81 tests, 25 kept

Problems: HumanEval as testgen left them in the default run (data/testgen/problems.parquet: ~32
tests each, no stated limit, so it is derived; `--plain`: as microcoder.pipeline.sources.humaneval
converts them, ~4 tests each); their
references are the canonical solution and the distinct CodeGen-16B samples (microsoft/CodeT, in
../shared/bench-data) that pass HumanEval's official check() in our sandbox, up to --refs in all (a
package shipping several accepted submissions); known-wrong solutions: samples the check fails, up
to --wrong. Only problems with more than 3 references are run (the others run as before). Each
setting runs with a fresh cache, 2 judges; judge seconds are the runs' measured CPU times
(stats.json `judge_time`, `reference_runs.judge_s`), wall is `this_run.wall_s`.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "bench-data"
sys.path.insert(0, str(ROOT / "bench"))


def problems_with_references(n: int, n_samples: int, n_refs: int, n_wrong: int, workers: int, plain: bool):
    from validate_power import _bench_test_strength

    from microcoder.pipeline.evaluator import Evaluator, Submission
    from microcoder.pipeline.io import read_problems
    from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
    from microcoder.pipeline.sources import humaneval

    tasks = [json.loads(line) for line in gzip.open(DATA / "humaneval" / "HumanEval.jsonl.gz", "rt")][:n]
    by_task = _bench_test_strength().codet_samples(DATA)
    generated = {} if plain else {p.source_id: p for p in read_problems(ROOT / "data" / "testgen" / "problems.parquet")
                                  if p.source == "humaneval"}
    problems, candidates = [], []
    for task in tasks:
        p = humaneval.convert(task, "humaneval") if plain else generated.get(task["task_id"])
        smp = by_task.get(task["task_id"])
        if not isinstance(p, Problem) or smp is None:
            continue
        seen = {p.reference_solutions[0].code}
        for completion in smp["samples"][:n_samples]:
            code = smp["prompt"] + completion
            if code not in seen:
                seen.add(code)
                candidates.append((p.id, code, f"{code}\n\n{task['test']}\ncheck({task['entry_point']})\n"))
        problems.append(p)
    probs = {f"o{i}": Problem(id=f"o{i}", source="bench", statement="", style="stdio", tests=[TestCase("", "")],
                              time_limit_s=4.0) for i in range(len(candidates))}
    subs = [Submission(f"o{i}", f"o{i}", "python", official) for i, (_, _, official) in enumerate(candidates)]
    with Evaluator(workers=workers) as ev:
        verdicts = ev.evaluate_batch(probs, subs)
    right: dict[str, list[str]] = {}
    wrong: dict[str, list[str]] = {}
    for (pid, code, _), v in zip(candidates, verdicts, strict=True):
        if v.status in ("AC", "WA"):  # exit 0: the official check passed (WA: it printed something)
            right.setdefault(pid, []).append(code)
        elif v.status in ("RE", "TLE", "MLE", "OLE", "CE"):
            wrong.setdefault(pid, []).append(code)
    out = []
    for p in problems:
        refs = p.reference_solutions + [ReferenceSolution("python", c) for c in right.get(p.id, [])]
        if len(refs[:n_refs]) > 3:
            out.append(dataclasses.replace(p, reference_solutions=refs[:n_refs], wrong_solutions=[
                WrongSolution("python", c, "wrong_answer") for c in wrong.get(p.id, [])[:n_wrong]]))
    return out


def run(problems, vote_references: int, max_tests: int, workers: int):
    from microcoder.pipeline.evaluator.config import EvaluatorConfig
    from microcoder.pipeline.validate import ValidateConfig, validate_problems

    with tempfile.TemporaryDirectory() as tmp:
        cfg = ValidateConfig(vote_references=vote_references, max_tests=max_tests, min_tests=1,
                             cache_path=str(Path(tmp) / "cache.sqlite"))
        return validate_problems(problems, cfg, evaluator=EvaluatorConfig(workers=workers), progress=False)


def figures(res) -> dict:
    s = res.stats.as_dict()
    t, j, r = s["this_run"], s["judge_time"], s["reference_runs"]
    return {"reference runs executed": t["voters_runs_executed"] + t["non_voters_runs_executed"],
            "reference judge s": j["reference_s"], "wrong judge s": j["wrong_s"], "wall s": t["wall_s"],
            "non-voter runs skipped": sum(r["non_voters_skipped"].values()),
            "kept tests": s["output_tests"], "TPR in-sample": s["strength"]["kept"]["tpr"],
            "TPR held out": s["strength"]["held_out"]["tpr"], "TNR in-sample": s["strength"]["kept"]["tnr"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=20, help="first N HumanEval problems to build from")
    ap.add_argument("--samples", type=int, default=40, help="CodeGen samples looked at per problem")
    ap.add_argument("--refs", type=int, default=8, help="references per problem at most")
    ap.add_argument("--wrong", type=int, default=3, help="known-wrong solutions per problem at most")
    ap.add_argument("--max-tests", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--plain", action="store_true", help="HumanEval's own tests, not testgen's")
    args = ap.parse_args()
    problems = problems_with_references(args.problems, args.samples, args.refs, args.wrong, args.workers, args.plain)
    print(f"{len(problems)} problems with 4-{args.refs} references, "
          f"{sum(len(p.reference_solutions) for p in problems)} references, "
          f"{sum(len(p.tests) for p in problems)} tests, max_tests {args.max_tests}", flush=True)
    before, after = (run(problems, k, args.max_tests, args.workers) for k in (0, 3))
    fb, fa = figures(before), figures(after)
    print(f"{'':28} {'vote_references 0':>18} {'3':>10} {'ratio':>7}")
    for k in fb:
        ratio = f"{fa[k] / fb[k]:.2f}" if isinstance(fb[k], (int, float)) and fb[k] else ""
        print(f"{k:28} {fb[k]!s:>18} {fa[k]!s:>10} {ratio:>7}")
    same = [p.id for p, q in zip(sorted(before.kept, key=lambda p: p.id), sorted(after.kept, key=lambda p: p.id),
                                 strict=False) if [t.input for t in p.tests] == [t.input for t in q.tests]]
    print(f"problems kept: {len(before.kept)} / {len(after.kept)}; same kept tests: {len(same)}")


if __name__ == "__main__":
    main()
