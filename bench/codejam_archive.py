"""The Google coding competitions archive through the pipeline (issue 26, "Measure"; issue 27's
validate check): what the Kattis adapter keeps of ../shared/bench-data/codejam-archive, by type,
and how hand-written solutions are judged on every test set.

Prints, in one run:
  scrape     problems read / kept / rejected, kept per type (pass-fail, scoring, custom-judge,
             interactive), rejects by reason, tests per problem, statements with HTML left in them,
             limits stated (time, memory), how many kept problems ship an accepted submission
             (the rest have no reference: validate's default rejects them);
  judge      our own solutions (bench/codejam_solutions/: a correct one and a wrong one per problem,
             written for this benchmark from the statements) on every test of their problem,
             sandboxed: the correct one must be AC, the wrong one must not. Every kept custom-judge
             problem is judged too, through Google's own judge (adapted, sandboxed), with an oracle
             (prints the official answer of the input it is given: must be AC) and the same oracle
             with its last line dropped (must not be AC);
  validate   the kept problems through validate (params.yaml's section, a private cache), the
             hand-written correct solutions standing in as references where there are some (the
             archive ships none): wall time per problem, and the share spent on known-wrong
             solutions (our wrong ones).

    .venv/bin/python bench/codejam_archive.py                 # ~2-4 min on 2 cores
    .venv/bin/python bench/codejam_archive.py --no-validate --out /tmp/cj.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline.schema import Problem, ReferenceSolution, WrongSolution  # noqa: E402

ARCHIVE = ROOT.parent / "shared" / "bench-data" / "codejam-archive"
SOLUTIONS = ROOT / "bench" / "codejam_solutions"
# Our solutions: file stem -> the archive problem (its folder under the archive).
SOLVED = {"sudoku_checker": "kickstart/2013/round_b/sudoku_checker",
          "moist": "kickstart/2013/practice_round/moist",
          "sorting": "kickstart/2013/round_a/sorting",
          "war_of_the_words": "codejam_to_io/2019/code_jam_to_io_for_women/war_of_the_words"}
# An oracle: the official answer of the input it reads (by digest); `drop_last` makes it wrong.
ORACLE = """import hashlib, sys
ANSWERS = {answers!r}
answer = ANSWERS[hashlib.sha256(sys.stdin.buffer.read()).hexdigest()]
if {drop_last!r}:
    answer = "\\n".join(answer.rstrip("\\n").split("\\n")[:-1]) + "\\n"
sys.stdout.write(answer)
"""
# A tag left in a statement: `<` then a letter or `/` (math such as `$a <b$` has a space or `$`).
TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(\s[^<>]*)?/?>")


def scrape(tmp: Path) -> tuple[list[Problem], dict[str, Any], list[dict[str, Any]]]:
    from microcoder.pipeline.io import read_problems
    from microcoder.pipeline.scrape import convert

    out = tmp / "codejam.parquet"
    stats = convert("kattis", ARCHIVE, out, name="codejam", progress=False)
    rejects = [json.loads(line) for line in out.with_name("codejam.rejects.jsonl").read_text().splitlines() if line]
    return read_problems(out), stats, rejects


def reject_code(r: dict[str, Any]) -> str:
    """`[source] code: detail` -> code."""
    return str(r.get("reason") or "").split("]", 1)[-1].split(":", 1)[0].strip()


def problem_types(p: Problem) -> list[str]:
    kind = p.meta.get("problem_type") or "pass-fail"
    return list(kind) if isinstance(kind, list) else [str(kind)]


def scrape_report(problems: list[Problem], stats: dict[str, Any], rejects: list[dict[str, Any]]) -> dict[str, Any]:
    source = stats.get("sources", {}).get("codejam", stats)
    by_type: Counter = Counter(t for p in problems for t in problem_types(p))
    tests = [len(p.tests) for p in problems]
    html_left = [p.source_id for p in problems if TAG.search(re.sub(r"\$[^$]*\$", "", p.statement))]
    dollars = [p.source_id for p in problems if "$$$" in p.statement]
    stated = [p.meta.get("stated_limits") or {} for p in problems]
    return {
        "read": source.get("read"), "kept": len(problems), "rejected": len(rejects),
        "kept_by_type": dict(by_type), "rejects_by_reason": dict(Counter(reject_code(r) for r in rejects)),
        "reject_details": [{"id": r.get("id"), "code": reject_code(r), "reason": str(r.get("reason"))[:400]}
                           for r in rejects],
        "tests_per_problem": {"min": min(tests, default=0), "median": statistics.median(tests) if tests else 0,
                              "max": max(tests, default=0), "total": sum(tests)},
        "groups_per_problem": dict(Counter(len({t.group for t in p.tests}) for p in problems)),
        "statements_with_html": html_left, "statements_with_$$$": dollars,
        "time_limit_stated": sum(1 for s in stated if s.get("time_limit_s")),
        "memory_limit_stated": sum(1 for s in stated if s.get("memory_limit_mb")),
        "by_type_in_stats": source.get("by_type"),
        "references": references_report(problems),
    }


def references_report(problems: list[Problem]) -> dict[str, Any]:
    """How many kept problems ship an accepted submission (the adapter's meta `references_shipped`);
    the others have no reference, which validate's default (`unverified: reject`) rejects."""
    shipped = [p for p in problems if p.meta.get("references_shipped")]
    return {"kept": len(problems), "shipped": len(shipped), "none": len(problems) - len(shipped),
            "with_reference_solutions": sum(1 for p in problems if p.reference_solutions)}


def ours(problems: list[Problem]) -> dict[str, tuple[Problem, dict[str, str]]]:
    """The problems we wrote solutions for, and every custom-judge problem with its oracles:
    {name: (problem, {"correct": code, "wrong": code})}."""
    out = {}
    for stem, folder in SOLVED.items():
        p = next((q for q in problems if q.source_id.endswith(folder.rsplit("/", 1)[-1])), None)
        if p is not None:
            out[stem] = (p, {"correct": (SOLUTIONS / f"{stem}.py").read_text(),
                             "wrong": (SOLUTIONS / f"{stem}_wrong.py").read_text()})
    for p in problems:
        if "custom-judge" in problem_types(p) and p.source_id not in out:
            import hashlib

            answers = {hashlib.sha256(t.input.encode()).hexdigest(): t.output for t in p.tests}
            out[p.source_id] = (p, {"correct": ORACLE.format(answers=answers, drop_last=False),
                                    "wrong": ORACLE.format(answers=answers, drop_last=True)})
    return out


def judge(solved: dict[str, tuple[Problem, dict[str, str]]], evaluator_cfg) -> list[dict[str, Any]]:
    from microcoder.pipeline.evaluator import Submission
    from microcoder.pipeline.evaluator.factory import make_evaluator

    probs = {p.id: p for p, _ in solved.values()}
    subs = [Submission(p.id, f"{stem}:{which}", "python", code)
            for stem, (p, codes) in solved.items() for which, code in codes.items()]
    rows = []
    with make_evaluator(evaluator_cfg) as ev:
        for v in ev.evaluate(probs, subs, mode="all", progress=False):
            stem, which = v.submission_id.split(":")
            p = probs[v.problem_id]
            groups = Counter(t.group for t in p.tests)
            passed = Counter(p.tests[i].group for i, t in enumerate(v.tests) if t.status == "AC")
            rows.append({"problem": stem, "solution": which, "status": v.status, "passed": v.passed, "total": v.total,
                         "by_group": {g: f"{passed[g]}/{n}" for g, n in groups.items()},
                         "right": (v.status == "AC") == (which == "correct")})
    return rows


def validate(problems: list[Problem], solved, cfg, tmp: Path) -> dict[str, Any]:
    from microcoder.pipeline.validate import validate_problems

    with_refs = {p.id: codes for p, codes in solved.values()}
    run = [replace(p, reference_solutions=[ReferenceSolution("python", with_refs[p.id]["correct"])],
                   wrong_solutions=[WrongSolution("python", with_refs[p.id]["wrong"], "wrong_answer")])
           if p.id in with_refs else p for p in problems]
    vcfg = replace(cfg["validate"], cache_path=str(tmp / "validate.sqlite"))
    t0 = time.monotonic()
    result = validate_problems(run, vcfg, evaluator=cfg["evaluator"], progress=False)
    wall = time.monotonic() - t0
    report = {"problems": len(run), "kept": len(result.kept), "wall_s": round(wall, 1),
              "s_per_problem": round(wall / max(1, len(run)), 2),
              "rejects_by_reason": dict(Counter(str(reason).split(":")[0] for _, reason in result.rejects))}
    figures = result.stats.figures
    for key in ("unverified_kept", "judge_time", "wrong_solutions", "this_run", "strength"):
        if key in figures:
            report[key] = figures[key]
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-validate", action="store_true", help="Scrape and judge only.")
    ap.add_argument("--out", help="Write the whole report as JSON here.")
    args = ap.parse_args()
    if not ARCHIVE.is_dir():
        sys.exit(f"{ARCHIVE} not found (../shared/bench-data/codejam-archive)")
    from microcoder.pipeline.evaluator.config import EvaluatorConfig
    from microcoder.pipeline.stage import load_config
    from microcoder.pipeline.validate import ValidateConfig

    params = str(ROOT / "params.yaml")
    cfg = {"validate": load_config(ValidateConfig, "validate", params, [], own_section=True),
           "evaluator": load_config(EvaluatorConfig, "evaluator", params, [], own_section=True)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.monotonic()
        problems, stats, rejects = scrape(tmp)
        report: dict[str, Any] = {"scrape": scrape_report(problems, stats, rejects),
                                  "scrape_s": round(time.monotonic() - t0, 1)}
        solved = ours(problems)
        report["scrape"]["references"].update(
            unverified=cfg["validate"].unverified,  # what validate does with the problems that ship none
            stand_ins=sum(1 for p, _ in solved.values() if not p.reference_solutions))  # ours, in `validate`
        report["judge"] = judge(solved, cfg["evaluator"])
        if not args.no_validate:
            report["validate"] = validate(problems, solved, cfg, tmp)
    s = report["scrape"]
    print(f"scrape: read {s['read']}, kept {s['kept']}, rejected {s['rejected']} ({report['scrape_s']} s)")
    print(f"  kept by type: {s['kept_by_type']}")
    print(f"  rejects: {s['rejects_by_reason']}")
    print(f"  tests per problem: {s['tests_per_problem']}; test groups per problem: {s['groups_per_problem']}")
    print(f"  statements with HTML left: {len(s['statements_with_html'])}, with $$$: {len(s['statements_with_$$$'])}; "
          f"time limit stated: {s['time_limit_stated']}, memory limit stated: {s['memory_limit_stated']}")
    refs = s["references"]
    print(f"  references: {refs['shipped']} of {refs['kept']} kept problems ship an accepted submission "
          f"({refs['with_reference_solutions']} with a reference solution run here), {refs['none']} ship none: "
          f"validate's default (unverified: reject) rejects those (params.yaml: unverified: {refs['unverified']}); "
          f"our solutions or oracles stand in for {refs['stand_ins']} of them in the validate step")
    for r in report["judge"]:
        print(f"judge: {r['problem'][:22]:22} {r['solution']:8} {r['status']:4} {r['passed']}/{r['total']} "
              f"{r['by_group']} {'ok' if r['right'] else 'WRONG VERDICT'}")
    if "validate" in report:
        print(f"validate: {report['validate']}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
