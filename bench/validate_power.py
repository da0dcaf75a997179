"""Validate before / after issue 12 (and issue 11 item 9) on real problems from ../shared/bench-data.

    .venv/bin/python bench/validate_power.py                   # all three sets, a few minutes on 2 cores
    .venv/bin/python bench/validate_power.py --sets humaneval --he-problems 40

The old stage is `git show <rev>:pipeline/validate.py` (default 0da3652, the revision before the
change), loaded from a temporary file; both run with the same settings, 2 workers, fresh caches,
timed as wall clock around `validate_problems` (evaluator start included).

Sets (real tests and real references; what is built here is said):
  humaneval   HumanEval problems (microcoder.pipeline.sources.humaneval; no stated time limit). Known-wrong solutions: CodeGen-16B
              samples (microsoft/CodeT) that fail HumanEval's *official* `check()` (run in our
              sandbox), up to --he-wrong distinct ones per problem.
  slowref     The --slow-problems HumanEval problems with the most tests, with a second reference built here: the
              canonical solution, except that it never returns on the larger ~60% of the inputs (a
              stand-in for a correct Python reference too slow on the large tests); run once with
              the source's 2 s as a stated limit and once as HumanEval states it (not at all).
  leetcode    LeetCodeDataset v0.2.0 test rows with their reference completion
              (microcoder.pipeline.sources.leetcodedataset); no wrong solutions.
  codeforces  The 7 Codeforces problems of bench/evaluator_vs_lcb.py with several references and
              wrong solutions written there (labelled by construction); tests are the examples only.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline import validate as new  # noqa: E402
from microcoder.pipeline.evaluator.config import EvaluatorConfig  # noqa: E402
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution  # noqa: E402

DATA = ROOT.parent / "shared" / "bench-data"


def load_old(rev: str):
    src = subprocess.run(["git", "show", f"{rev}:pipeline/validate.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="validate-old-")) / "validate_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("validate_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["validate_old"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


# --- data ------------------------------------------------------------------------------------------------------
def _bench_test_strength():
    """bench/test_strength.py by path (tests/ has a test_strength.py too)."""
    spec = importlib.util.spec_from_file_location("bench_test_strength", ROOT / "bench" / "test_strength.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def humaneval_problems(n: int, n_samples: int, n_wrong: int, workers: int) -> list[Problem]:
    from microcoder.pipeline.evaluator import Evaluator, Submission
    from microcoder.pipeline.sources import humaneval

    tasks = [json.loads(line) for line in gzip.open(DATA / "humaneval" / "HumanEval.jsonl.gz", "rt")][:n]
    # six entry names recur (`add`, `sort_array`, ...): match records to tasks as test_strength does
    by_task = _bench_test_strength().codet_samples(DATA)
    problems, candidates = [], []
    for task in tasks:
        p = humaneval.convert(task, "humaneval")
        if not isinstance(p, Problem):
            continue
        smp = by_task.get(task["task_id"])
        seen = set()
        for completion in (smp or {}).get("samples", [])[:n_samples]:
            code = smp["prompt"] + completion
            if code not in seen:
                seen.add(code)
                candidates.append((p, code, f"{code}\n\n{task['test']}\ncheck({task['entry_point']})\n"))
        problems.append(p)
    # label the samples with the official check() in the sandbox: exit 0 = passes
    probs = {f"o{i}": Problem(id=f"o{i}", source="bench", statement="", style="stdio", tests=[TestCase("", "")],
                              time_limit_s=4.0) for i in range(len(candidates))}
    subs = [Submission(f"o{i}", f"o{i}", "python", official) for i, (_, _, official) in enumerate(candidates)]
    with Evaluator(workers=workers) as ev:
        verdicts = ev.evaluate_batch(probs, subs)
    wrong: dict[str, list[str]] = {}
    labels = Counter(v.status for v in verdicts)
    for (p, code, _), v in zip(candidates, verdicts, strict=True):
        # exit 0 (AC, or WA: it printed something) = passes; an SE is ours, not the sample's: left out
        if v.status in ("RE", "TLE", "MLE", "OLE", "CE") and len(wrong.setdefault(p.id, [])) < n_wrong:
            wrong[p.id].append(code)
    print(f"humaneval: official check() verdicts of {len(candidates)} distinct samples: {dict(labels)}", flush=True)
    return [dataclasses.replace(p, wrong_solutions=[WrongSolution("python", c, "wrong_answer") for c in wrong.get(p.id, [])])
            for p in problems]


SLOW_TAIL = """

import json as _slow_json
_slow_original = {entry}
def {entry}(*args):
    if len("\\n".join(_slow_json.dumps(a) for a in args)) >= {threshold}:
        while True:
            pass
    return _slow_original(*args)
"""


def slowref_problems(base: list[Problem], n: int) -> list[Problem]:
    """The `n` problems with the most tests (real judge packages have 20-130; HumanEval's most have 10-26)."""
    out = []
    for p in sorted(base, key=lambda p: (-len(p.tests), p.id))[:n]:
        sizes = sorted(len(t.input) for t in p.tests)
        threshold = sizes[int(0.4 * len(sizes))]
        slow = p.reference_solutions[0].code + SLOW_TAIL.format(entry=p.entry_point, threshold=threshold)
        out.append(dataclasses.replace(p, id=p.id + "+slow", wrong_solutions=[],
                                       reference_solutions=[p.reference_solutions[0], ReferenceSolution("python", slow)]))
    return out


def leetcode_problems(limit: int) -> list[Problem]:
    from microcoder.pipeline.sources import leetcodedataset
    from microcoder.pipeline.sources.base import SourceContext

    opts = leetcodedataset.Options(path=str(DATA / "leetcodedataset" / "LeetCodeDataset-v0.2.0-test.jsonl.gz"))
    items = [it for it in leetcodedataset.read(opts, SourceContext("leetcodedataset")) if isinstance(it, Problem)]
    return [p for p in items if p.reference_solutions][:limit]


def codeforces_problems() -> list[Problem]:
    spec = importlib.util.spec_from_file_location("evaluator_vs_lcb", ROOT / "bench" / "evaluator_vs_lcb.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["evaluator_vs_lcb"] = mod
    spec.loader.exec_module(mod)
    rows = json.load(open(DATA / "stdio" / "codeforces_test.json"))
    out = []
    for index, solutions in mod.CF_SOLUTIONS.items():
        rec = rows[index]
        any_case = "in any case" in rec["problem"] or "any case (upper or lower)" in rec["problem"]
        from microcoder.pipeline.schema import Checker

        out.append(Problem(
            id=f"cf{index}", source="codeforces", statement="(bench)", style="stdio",
            tests=[TestCase(t["input"], t["output"]) for t in rec["tests"]],
            checker=Checker(kind="tokens", case_sensitive=False) if any_case else None,
            reference_solutions=[ReferenceSolution("python", c) for ok, c in solutions.values() if ok],
            wrong_solutions=[WrongSolution("python", c, "wrong_answer") for ok, c in solutions.values() if not ok]))
    return out


# --- runs --------------------------------------------------------------------------------------------------------
def run(mod, problems: list[Problem], workers: int, **settings) -> tuple[float, object]:
    cache = Path(tempfile.mkdtemp(prefix="validate-bench-")) / "cache.sqlite"
    known = {f.name for f in dataclasses.fields(mod.ValidateConfig)}  # the old stage lacks the new settings
    settings = {k: v for k, v in settings.items() if k in known}
    if "workers" in known:  # the old stage: workers was its own setting
        cfg = mod.ValidateConfig(workers=workers, cache_path=str(cache), **settings)
        t0 = time.monotonic()
        res = mod.validate_problems(problems, cfg, progress=False)
        return time.monotonic() - t0, res
    cfg = mod.ValidateConfig(cache_path=str(cache), **settings)  # now: the evaluator section's
    t0 = time.monotonic()
    res = mod.validate_problems(problems, cfg, evaluator=EvaluatorConfig(workers=workers), progress=False)
    res.stats = res.stats.as_dict()  # the old stage's stats were a dict
    return time.monotonic() - t0, res


def caught_by(res, kept_tests: dict[str, set[int]]) -> tuple[int, int]:
    """(wrong solutions that ran, of them caught by `kept_tests`) from a new-stage report, whose
    wrong-solution rows cover every candidate when the caps chose."""
    fails: dict[tuple[str, int], set[int]] = {}
    ran = set()
    for r in res.report:
        if r["role"] == "wrong":
            key = (r["problem_id"], r["reference_index"])
            got = fails.setdefault(key, set())
            if r["reference_status"] == "ok":
                ran.add(key)
            if r["status"] in new.CATCHES and not r["presumed"]:
                got.add(r["test_index"])
    return len(ran), sum(1 for k in ran if fails[k] & kept_tests.get(k[0], set()))


def kept_indices_old(old_mod, problems: list[Problem], cfg_kw: dict, old_res) -> dict[str, set[int]]:
    """The test indices the old stage kept (it reports classes per test; cap_tests is deterministic)."""
    known = {f.name for f in dataclasses.fields(old_mod.ValidateConfig)}
    cfg = old_mod.ValidateConfig(**{k: v for k, v in cfg_kw.items() if k in known})
    cls: dict[str, dict[int, str]] = {}
    for r in old_res.report:
        cls.setdefault(r["problem_id"], {})[r["test_index"]] = r["test_class"]
    kept_ids = {p.id for p in old_res.kept}
    out = {}
    for p in problems:
        if p.id in kept_ids:
            usable = [i for i, c in sorted(cls.get(p.id, {}).items()) if c in ("valid", "unverified")]
            out[p.id] = set(old_mod.cap_tests(p.tests, usable, cfg)[0])
    return out


def compare(name: str, problems: list[Problem], old_mod, workers: int, **settings) -> dict:
    t_old, old = run(old_mod, problems, workers, **settings)
    t_new, res = run(new, problems, workers, **settings)
    row = {"set": name, "problems": len(problems), "settings": settings,
           "wall_old_s": round(t_old, 1), "wall_new_s": round(t_new, 1),
           "kept_problems_old": len(old.kept), "kept_problems_new": len(res.kept),
           "kept_tests_old": old.stats["output_tests"], "kept_tests_new": res.stats["output_tests"],
           "tests_in": res.stats["tests"].get("tests_in", 0),
           "old_tests": {k: v for k, v in old.stats["tests"].items() if v},
           "new_tests": {k: v for k, v in res.stats["tests"].items() if v},
           "new_this_run": res.stats["this_run"], "new_time_limits": res.stats["time_limits"],
           "new_wrong_solutions": res.stats["wrong_solutions"],
           "new_references": res.stats["references"],
           "rejected_old": dict(Counter(r.split(" (")[0] for _, r in old.rejects)),
           "rejected_new": dict(Counter(r.split(" (")[0] for _, r in res.rejects))}
    if any(p.wrong_solutions for p in problems):
        old_kept = kept_indices_old(old_mod, problems, dict(settings), old)
        kept_ids = {p.id for p in res.kept}
        new_kept: dict[str, set[int]] = {}
        for r in res.report:  # the report flags the kept tests
            if r["kept"] and r["problem_id"] in kept_ids:
                new_kept.setdefault(r["problem_id"], set()).add(r["test_index"])
        ran_o, caught_o = caught_by(res, old_kept)
        ran_n, caught_n = caught_by(res, new_kept)
        row["wrong_caught_old_choice"] = f"{caught_o}/{ran_o}"
        row["wrong_caught_new_choice"] = f"{caught_n}/{ran_n}"
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="humaneval,slowref,leetcode,codeforces")
    ap.add_argument("--slow-variants", default="stated,unstated", help="slowref: with the 2 s stated, as the source states it")
    ap.add_argument("--rev", default="0da3652")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--he-problems", type=int, default=164)
    ap.add_argument("--he-samples", type=int, default=10)
    ap.add_argument("--he-wrong", type=int, default=5)
    ap.add_argument("--slow-problems", type=int, default=20)
    ap.add_argument("--lcd-limit", type=int, default=200)
    ap.add_argument("--out", default=None, help="Write the rows as JSON here.")
    args = ap.parse_args()
    old_mod = load_old(args.rev)
    sets = args.sets.split(",")
    rows = []
    he = None
    if "humaneval" in sets or "slowref" in sets:
        he = humaneval_problems(args.he_problems, args.he_samples, args.he_wrong, args.workers)
        print(f"humaneval: {len(he)} problems, {sum(len(p.wrong_solutions) for p in he)} known-wrong samples "
              f"on {sum(bool(p.wrong_solutions) for p in he)} problems", flush=True)
    if "humaneval" in sets:
        rows.append(compare("humaneval, references only", he, old_mod, args.workers, min_tests=1,
                            run_wrong_solutions=False))
        rows.append(compare("humaneval", he, old_mod, args.workers, min_tests=1))
        rows.append(compare("humaneval max_tests=3", he, old_mod, args.workers, min_tests=1, max_tests=3))
    if "slowref" in sets:
        slow = slowref_problems(he, args.slow_problems)
        stated = [dataclasses.replace(p, meta={k: v for k, v in p.meta.items() if k != "time_limit_stated"}) for p in slow]
        if "stated" in args.slow_variants.split(","):
            rows.append(compare("slowref, 2 s stated", stated, old_mod, args.workers, min_tests=1, timeout_scale=0.5))
        if "unstated" in args.slow_variants.split(","):
            rows.append(compare("slowref, not stated", slow, old_mod, args.workers, min_tests=1, timeout_scale=0.5))
    if "leetcode" in sets:
        rows.append(compare("leetcode", leetcode_problems(args.lcd_limit), old_mod, args.workers, min_tests=1))
    if "codeforces" in sets:
        rows.append(compare("codeforces", codeforces_problems(), old_mod, args.workers, min_tests=1))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
