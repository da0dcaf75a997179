"""Held-out test strength (issue 36): TPR/TNR on solutions that played no part in choosing the tests.

Parts (--parts, comma-separated):

  humaneval  Real model code as the pool (CodeContests-O's protocol). The 100 CodeGen-16B samples per
             HumanEval problem (microsoft/CodeT) are labelled by HumanEval's official check run in
             the sandbox (bench/test_strength.py's labelling; cached in --cache). Testgen gets only the
             examples in the prompt's docstring and the canonical solution; validate keeps its tests
             (params.yaml's sections, min_tests 1). The samples are then judged: TPR = correct samples
             passing, TNR = incorrect samples failing, on the docstring examples, each tier of the
             generated tests alone (edge, random, max, hack; a problem counts in a tier's row only where
             it has a test of it), all kept tests, and the official tests (the adapter's converted
             check asserts: the labels' own source, so about 100/100 by construction).
             `--sources leetcode-contest`: the 137 LeetCode contest problems of DeepSeek-Coder's
             benchmark (Jul 2023 - Jan 2024) that LeetCodeDataset also has; testgen gets the row's
             2-3 examples, the row's model-written response is labelled by the contest's ~100 tests
             (real wrong model code, which the row's own 2-5 asserts call correct), and the contest's
             tests, converted by the LeetCodeDataset adapter, are the official row.
  split      The split experiment. Per problem, a seeded half of the labelled pool (HumanEval: the
             samples, correct ones as references and incorrect ones as known-wrong solutions;
             LeetCodeDataset: our mutants of the reference and its too-slow quadratic variant as
             known-wrong solutions) goes through testgen and validate; the other half is hidden and
             only judged on the kept tests and on every candidate test (before the caps). For each
             `--caps` rule: validate's in-sample figure, validate's own k-fold held-out figure, and
             the hidden half's. Also testgen's search on the survivors it never hunted.
  timelimit  The time-limit rule (item 3), measured: the canonical solution (the reference that
             derives the limit) and the correct samples (held out) judged at a generous probe limit
             on the kept tests of the humaneval part; LeetCodeDataset's references and quadratic
             variants likewise (split part's kept tests). Every rule of --rules is applied to the
             reference's slowest run: held-out TPR with time (correct samples AC within the limit)
             and TNR on the too-slow variants (caught: over the limit somewhere).

    .venv/bin/python bench/heldout_strength.py --parts humaneval,timelimit --limit 40 --cache /tmp/ho
    .venv/bin/python bench/heldout_strength.py --parts split --sources humaneval --limit 40 --split-samples 20 --cache /tmp/ho
    .venv/bin/python bench/heldout_strength.py --parts split,timelimit --sources leetcodedataset --limit 40 --cache /tmp/ho
    .venv/bin/python bench/heldout_strength.py --limit 0 --samples 100 --cache /tmp/ho --out /tmp/ho.json   # everything
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _bench_module(name: str):
    """bench/NAME.py by path, under its own module name (tests/ has a test_strength.py too)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ts = _bench_module("test_strength")  # loaders, labelling, mutants, quadratic variants

from microcoder.pipeline import strength  # noqa: E402
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution  # noqa: E402

TIERS = ("examples", "edge", "random", "max", "hack")
CAPS = ("diverse:32", "cover:32", "diverse:8", "cover:8")
# Rules of item 3: (multiplier, rounding, floor s); rounding `whole` is problemtools' int(0.5 + x),
# `tenth` rounds up to 0.1 s. The first is validate's default.
RULES = ("5:whole:1", "2:whole:1", "3:whole:1", "2:tenth:0.5", "3:tenth:0.5", "5:tenth:0.5", "2:tenth:0.1",
         "3:tenth:0.1", "5:tenth:0.1", "10:tenth:0.1")
PROBE_S = 10.0


def log(msg: str) -> None:
    print(msg, flush=True)


# --- the docstring's examples ---------------------------------------------------------------------------------
_SEP = re.compile(r"^\s*(==>|=>|==|➞|->|=|should return|returns?)\s*(.+?)\s*$")
_INPUT = re.compile(r"^\s*Input\s*:\s*(.+?)\s*$")
_OUTPUT = re.compile(r"^\s*Output\s*:\s*(.+?)\s*$")


def _call_at(line: str, entry: str) -> tuple[str, str] | None:
    """(the call `entry(...)` in `line`, the rest of the line after it), parentheses balanced."""
    m = re.search(rf"(?<![\w.]){re.escape(entry)}\(", line)
    if not m:
        return None
    depth = 0
    for i in range(m.end() - 1, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[m.start(): i + 1], line[i + 1:]
    return None


def _literal(text: str) -> str | None:
    """`text` (a value written after an example call) as Python source of a literal, or None."""
    text = text.strip()  # `19 - 5 - 6 = 8`: the value after the last `=` too
    for cut in (text, text.rstrip(".,;"), text.split("#")[0].strip(), text.rsplit("=", 1)[-1].strip()):
        try:
            ast.literal_eval(cut)
            return cut
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def docstring_asserts(prompt: str, entry: str) -> list[str]:
    """`assert entry(args) == value` for each example the docstring shows: `>>> call` then its value
    on the next line, `call == / ➞ / => / -> / = value` on one line, or `Input: a = 1, b = 2` with
    `Output: value` on one of the next two lines."""
    out, lines = [], prompt.split("\n")
    for k, line in enumerate(lines):
        given = _INPUT.match(line)
        if given:
            after = next((m for m in map(_OUTPUT.match, lines[k + 1:k + 3]) if m), None)
            value = _literal(after.group(1)) if after else None
            if value is not None:
                out.append(f"assert {entry}({given.group(1)}) == {value}")
            continue
        found = _call_at(line, entry)
        if found is None or line.lstrip().startswith("def "):
            continue
        call, rest = found
        sep = _SEP.match(rest)
        value = _literal(sep.group(2)) if sep else None
        if value is None and line.lstrip().startswith(">>>") and not rest.strip() and k + 1 < len(lines):
            value = _literal(lines[k + 1])
        if value is not None:
            out.append(f"assert {call} == {value}")
    return list(dict.fromkeys(out))


def docstring_tests(p: Problem) -> list[TestCase]:
    from microcoder.pipeline.sources.pyliterals import convert_asserts, find_signature

    sig = find_signature(p.starter_code or "", p.entry_point or "")
    if sig is None:
        return []
    source = "\n".join(docstring_asserts(p.starter_code or "", p.entry_point or ""))
    try:
        return [replace(t, kind="public") for t in convert_asserts(source, sig.params, callee=p.entry_point).tests]
    except (SyntaxError, ValueError, RecursionError):
        return []


def picked(problems: list[Problem], args) -> list[Problem]:
    """The problems --limit and --pick choose, or those --ids names (source ids: `HumanEval/115`)."""
    if args.ids:
        ids = set(args.ids.split(","))
        return [p for p in problems if p.source_id in ids]
    return ts.pick(problems, args.limit or 10**9, args.pick)


# --- the labelled pool ----------------------------------------------------------------------------------------
def humaneval_pool(data: Path, per_problem: int):
    """(codes of a problem: its CodeGen-16B samples, the official check script of a code)."""
    tasks = {t["task_id"]: t for t in (json.loads(x) for x in gzip.open(data / "humaneval" / "HumanEval.jsonl.gz", "rt"))}
    by_task = ts.codet_samples(data)

    def codes(p: Problem) -> list[str] | None:
        smp = by_task.get(p.source_id)
        return None if smp is None else [smp["prompt"] + c for c in smp["samples"][:per_problem]]

    def script(p: Problem, code: str) -> str:
        task = tasks[p.source_id]
        return f"{code}\n\n{task['test']}\ncheck({task['entry_point']})\n"

    return codes, script


_FENCE = re.compile(r"```python\n(.*?)```", re.S)


def leetcode_pool(data: Path):
    """(codes of a problem: the model-written `response` of its LeetCodeDataset row, the row's own
    `check(candidate)` script of a code). The responses are real model code; the row's check is thin
    (2-5 asserts), so a response it labels correct may still be wrong where no assert looks."""
    rows = {r["task_id"]: r for r in (json.loads(x) for x in gzip.open(data / ts.LCD_TRAIN, "rt"))}

    def codes(p: Problem) -> list[str] | None:
        row = rows.get(p.source_id)
        blocks = _FENCE.findall(row["response"]) if row else []
        return [f"{row['prompt']}\n{blocks[-1]}"] if blocks else None

    def script(p: Problem, code: str) -> str:
        row = rows[p.source_id]
        return f"{code}\n\n{row['test']}\ncheck({row['entry_point']})\n"

    return codes, script


CONTEST = Path("leetcode_contest") / "20240121-Jul.jsonl"
# LeetCodeDataset rows of the contest's problems: most are in the test splits; the first file wins.
LCD_FILES = ("LeetCodeDataset-v0.2.0-test.jsonl.gz", "LeetCodeDataset-v0.1.0-test.jsonl.gz",
             "LeetCodeDataset-v0.2.0-train.jsonl.gz")


def contest_items(test: str) -> list[dict[str, str]]:
    """The contest script's `test_input = {...}` / `assert my_solution.f(**test_input) == value` pairs as
    LeetCodeDataset `input_output` items (each argument's and the value's own source text), so that
    the LeetCodeDataset adapter converts them as it converts a row's examples."""
    items, args = [], None
    for node in ast.parse(test).body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and [getattr(t, "id", None) for t in node.targets] == ["test_input"]):
            args = ", ".join(f"{k.value} = {ast.get_source_segment(test, v)}"
                             for k, v in zip(node.value.keys, node.value.values, strict=True)
                             if isinstance(k, ast.Constant))
        elif isinstance(node, ast.Assert) and args is not None and isinstance(node.test, ast.Compare):
            items.append({"input": args, "output": ast.get_source_segment(test, node.test.comparators[0])})
            args = None
    return items


def contest_problems(data: Path, dropped: Counter) -> tuple[list[Problem], list[Problem], dict[str, dict], dict[str, dict]]:
    """(problems with the contest's ~100 tests, the same problems with their row's 2-3 examples, the
    LeetCodeDataset rows, the contest rows) for the contest problems that LeetCodeDataset also has."""
    from microcoder.pipeline.sources import leetcodedataset

    contest = {r["meta"]["titleSlug"]: r for r in (json.loads(x) for x in open(data / CONTEST))}
    rows: dict[str, dict] = {}
    for name in LCD_FILES:
        for x in gzip.open(data / "leetcodedataset" / name, "rt"):
            r = json.loads(x)
            rows.setdefault(r["task_id"], r)
    official, given = [], []
    for slug, crow in contest.items():
        if slug not in rows:
            dropped["contest problems not in LeetCodeDataset"] += 1
            continue
        full = leetcodedataset.convert({**rows[slug], "input_output": contest_items(crow["test"])}, "leetcodedataset")
        own = leetcodedataset.convert(rows[slug], "leetcodedataset")
        if not isinstance(full, Problem) or not isinstance(own, Problem) or not ts.python_reference(own):
            dropped[f"contest tests not convertible: {getattr(full, 'code', None) or getattr(own, 'code', '')}"] += 1
            continue
        official.append(full)
        given.append(own)
    return official, given, rows, contest


def contest_pool(rows: dict[str, dict], contest: dict[str, dict]):
    """(codes of a problem: its LeetCodeDataset row's model-written `response`, the contest's own test
    script of a code: ~100 asserts, a label far stronger than the row's 2-5)."""
    def codes(p: Problem) -> list[str] | None:
        row = rows.get(p.source_id)
        blocks = _FENCE.findall(row["response"]) if row else []
        return [f"{row['prompt']}\n{blocks[-1]}"] if blocks else None

    def script(p: Problem, code: str) -> str:
        return f"{code}\n\n{contest[p.source_id]['test']}\n"

    return codes, script


def labelled(problems: list[Problem], codes_of, script_of, kind: str, ev, cache_file: Path,
             dropped: Counter) -> list[ts.Solution]:
    """The distinct codes of each problem, labelled by their official check run in the sandbox
    (bench/test_strength.py's `label_samples`; labels cached by code in `cache_file`: the slow part)."""
    from microcoder.pipeline.io import content_hash

    labels = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    todo, out = [], []
    for p in problems:
        codes = codes_of(p)
        if codes is None:
            dropped[f"{kind}: problem without any"] += 1
            continue
        seen: list[str] = []
        for code in codes:
            if code in seen:
                dropped[f"{kind}: duplicate of an earlier one"] += 1
                continue
            seen.append(code)
            sol = ts.Solution(f"{p.id}#s{len(seen) - 1}", p.id, kind, code, False)
            key = content_hash(p.id, code)  # a label is the problem's check on the code
            if key in labels:
                out.append((sol, labels[key]))
            else:
                todo.append((sol, script_of(p, code)))
    if todo:
        log(f"  labelling {len(todo)} {kind} with the official check ({len(out)} cached)")
        done = {s.sid: s for s in ts.label_samples(todo, ev, 4.0, Counter())}
        for sol, _ in todo:
            got = done.get(sol.sid)
            labels[content_hash(sol.problem_id, sol.code)] = None if got is None else got.correct
            out.append((sol, labels[content_hash(sol.problem_id, sol.code)]))
        cache_file.write_text(json.dumps(labels))
    kept = []
    for sol, label in out:
        if label is None:
            dropped[f"{kind}: does not compile, or no verdict"] += 1
        else:
            kept.append(replace(sol, correct=bool(label)))
    return kept


def hidden_half(seed: int, pid: str, sols: list[ts.Solution]) -> set[str]:
    """The ids of the hidden half of `sols` (the seeded fold of `strength.folds_of`, per label)."""
    out = set()
    for correct in (True, False):
        group = [s for s in sols if s.correct == correct]
        folds = strength.folds_of(seed, pid, [("python", s.code) for s in group], 2)
        out |= {s.sid for s, f in zip(group, folds, strict=True) if f == 1}
    return out


# --- judging ----------------------------------------------------------------------------------------------------
@dataclass
class Judge:
    """The evaluator behind a per-test cache (reruns of the bench judge only what is new)."""

    ev: Any
    cache: Any

    def runs(self, items: list[tuple[str, Problem, ts.Solution]], mode: str) -> dict[str, list[dict | None]]:
        """{key: per test {status, time_s} (None: not judged, after a first failure)}."""
        from microcoder.pipeline.evaluator.programs import judge_runs

        got = judge_runs(self.cache, [(k, p, "python", s.code) for k, p, s in items if p.tests], mode)
        return {k: v[2] for k, v in got.items()}


def failed(runs: list[dict | None] | None, tests: set[int], limit_s: float | None = None) -> bool | None:
    """Whether a run fails one of `tests` (read at `limit_s` if given); None where not judged."""
    if runs is None:
        return None
    for i in tests:
        r = runs[i]
        if r is None:
            continue
        if r["status"] in ts.NOT_JUDGED:
            return None
        if r["status"] != "AC" or (limit_s is not None and (r["time_s"] or 0.0) > limit_s):
            return True
    return False


def record_of(outcomes: list[tuple[bool, bool | None]]) -> dict[str, Any]:
    """A strength record from (correct, failed) pairs (failed None: not judged, left out)."""
    judged = [(c, f) for c, f in outcomes if f is not None]
    return strength.record(correct=sum(c for c, _ in judged), correct_passing=sum(c and not f for c, f in judged),
                           incorrect=sum(not c for c, _ in judged), incorrect_failing=sum(not c and f for c, f in judged))


def tiers_of(p_validated: Problem, own: set[str]) -> dict[int, str]:
    tiers = ts.generated_tiers(p_validated)
    from microcoder.pipeline.io import content_hash

    return {i: "examples" if t.input in own else tiers.get(content_hash(t.input)[:16], "unknown")
            for i, t in enumerate(p_validated.tests)}


# --- part: humaneval / leetcode: generated tests on real model code -----------------------------------------------
def part_model_code(name: str, args, cfg: ts.Configs, judge: Judge, pool: dict[str, Any]) -> dict[str, Any]:
    """The generated tests' TPR/TNR on real model code labelled by the official check, by tier and
    overall, beside the examples' and the official tests' own (CodeContests-O's protocol)."""
    from microcoder.pipeline.testgen.stage import testgen_problems
    from microcoder.pipeline.validate import validate_problems

    dropped: Counter = Counter()
    if name == "humaneval":
        official = picked(ts.load_humaneval(args.data, args.workdir)[0], args)
        given = [replace(p, tests=docstring_tests(p)) for p in official]  # testgen sees the docstring's examples only
        codes, script = humaneval_pool(args.data, args.samples)
        kind = "samples"
    elif name == "leetcode-contest":  # the row's examples to testgen; the contest's ~100 tests label and judge
        official, given, rows, contest = contest_problems(args.data, dropped)
        official, given = (picked(x, args) for x in (official, given))
        codes, script = contest_pool(rows, contest)
        kind = "responses"
    else:
        loaded = [p for p in ts.load_leetcodedataset(args.data, args.workdir)[0] if ts.python_reference(p)]
        official = given = picked(loaded, args)  # its own tests are its 2-3 examples
        codes, script = leetcode_pool(args.data)
        kind = "responses"
    dropped["problems without an example (testgen from the signature alone)"] = sum(not p.tests for p in given)
    samples = labelled(official, codes, script, kind, judge.ev, args.cache / f"labels-{name}.json", dropped)
    log(f"[{name}] {len(official)} problems, {len(samples)} labelled {kind} ({sum(s.correct for s in samples)} "
        "correct); testgen, then validate")
    t0 = time.monotonic()
    tg = testgen_problems(given, cfg.testgen, evaluator=cfg.evaluator, progress=args.progress)
    va = validate_problems(tg.kept, cfg.validate, evaluator=cfg.evaluator, progress=args.progress)
    log(f"[{name}] testgen + validate {time.monotonic() - t0:.0f} s; judging")
    kept = {p.id: p for p in va.kept}
    for _p, reason in va.rejects:
        dropped[f"validate rejected: {reason.split(' (')[0][:60]}"] += 1
    own = {p.id: {t.input for t in p.tests} for p in given}
    by_id = {p.id: p for p in official}
    items_all, items_first = [], []
    for s in samples:
        v = kept.get(s.problem_id)
        if v is None:
            continue
        # the correct ones on every test at the probe limit (their times are item 3's data), read at the limit
        items_all.append((f"{s.sid}@kept", replace(v, time_limit_s=PROBE_S) if s.correct else v, s))
        items_first.append((f"{s.sid}@official", replace(by_id[s.problem_id], time_limit_s=v.time_limit_s), s))
    for pid, v in kept.items():
        ref = ts.Solution(f"{pid}#canonical", pid, "references", by_id[pid].reference_solutions[0].code, True)
        items_all.append((f"{ref.sid}@kept", replace(v, time_limit_s=PROBE_S), ref))
        items_first.append((f"{ref.sid}@official", replace(by_id[pid], time_limit_s=PROBE_S), ref))
    runs = judge.runs(items_all, "all")
    runs.update(judge.runs(items_first, "first-failure"))
    rows: dict[str, list[tuple[bool, bool | None]]] = {tier: [] for tier in (*TIERS, "all kept", "official")}
    problems_in: dict[str, set[str]] = {tier: set() for tier in rows}
    disputed, disputed_tests = [], []
    for s in samples:
        v = kept.get(s.problem_id)
        if v is None:
            continue
        tiers = tiers_of(v, own[s.problem_id])
        at = v.time_limit_s if s.correct else None
        mine = runs.get(f"{s.sid}@kept")
        for tier in TIERS:
            tests = {i for i, t in tiers.items() if t == tier}
            if tests:
                rows[tier].append((s.correct, failed(mine, tests, at)))
                problems_in[tier].add(s.problem_id)
        rows["all kept"].append((s.correct, failed(mine, set(tiers), at)))
        problems_in["all kept"].add(s.problem_id)
        official_runs = runs.get(f"{s.sid}@official")
        rows["official"].append((s.correct, failed(official_runs, set(range(len(official_runs or []))))))
        problems_in["official"].add(s.problem_id)
        if s.correct and rows["all kept"][-1][1]:
            first = next((i for i, r in enumerate(mine or []) if r and (r["status"] != "AC" or r["time_s"] > at)), None)
            disputed.append({"solution": s.sid, "tier": tiers.get(first), "status": (mine or [{}])[first]["status"]
                             if first is not None else None, "input": v.tests[first].input[:200] if first is not None else None})
            if first is not None:  # whole, for reading by hand (`--out`'s .disputed.jsonl)
                disputed_tests.append({"solution": s.sid, "input": v.tests[first].input, "expected": v.tests[first].output})
    pool[name] = {"kept": kept, "samples": samples, "runs": runs, "disputed_tests": disputed_tests}
    table = {tier: {"problems": len(problems_in[tier]), **record_of(outs)} for tier, outs in rows.items()}
    return {"problems": len(official), "kept": len(kept), "dropped": dict(dropped), "table": table, "kind": kind,
            "samples": dict(Counter("correct" if s.correct else "incorrect" for s in samples)),
            "tests_kept": sum(len(p.tests) for p in kept.values()),
            "tiers_kept": dict(sum((Counter(tiers_of(p, own[p.id]).values()) for p in kept.values()), Counter())),
            "testgen_strength": tg.stats.figures.get("strength"), "validate_strength": va.stats.figures["strength"],
            "disputed": disputed, "wall_s": round(time.monotonic() - t0, 1),
            # a cross-check of the official tests' conversion: the canonical solution should pass them all
            "canonical_failing_official": sorted(pid for pid in kept if failed(runs.get(f"{pid}#canonical@official"),
                                                 set(range(len(by_id[pid].tests)))))}


# --- part: split ------------------------------------------------------------------------------------------------
def split_pool(name: str, args, cfg: ts.Configs, judge: Judge, dropped: Counter) -> tuple[list[Problem], list[ts.Solution]]:
    """The problems as the pipeline gets them (the given half attached) and the whole labelled pool."""
    if name == "humaneval":
        official = picked(ts.load_humaneval(args.data, args.workdir)[0], args)
        problems = [replace(p, tests=docstring_tests(p)) for p in official]
        codes, script = humaneval_pool(args.data, args.split_samples)
        pool = labelled(official, codes, script, "samples", judge.ev, args.cache / "labels-humaneval.json", dropped)
    else:
        loaded = [p for p in ts.load_leetcodedataset(args.data, args.workdir)[0] if ts.python_reference(p)]
        problems = picked(loaded, args)
        pool = []
        for p in problems:  # testgen draws no mutants of its own here (part_split): ours are the whole pool
            pool += ts.draw_mutants(p, args.mutants, args.seed, replace(cfg.testgen, mutants=0))
            slow = ts.quadratic_variant(ts.python_reference(p), p.entry_point or "") if ts.has_sized_argument(p) else None
            if slow:
                pool.append(ts.Solution(f"{p.id}#quad", p.id, "quadratic", slow, False))
    given = []
    for p in problems:
        mine = [s for s in pool if s.problem_id == p.id]
        hidden = hidden_half(args.seed, p.id, mine)
        refs = [ReferenceSolution("python", s.code) for s in mine if s.correct and s.sid not in hidden]
        wrong = [WrongSolution("python", s.code, "time_limit_exceeded" if s.kind == "quadratic" else "wrong_answer")
                 for s in mine if not s.correct and s.sid not in hidden]
        given.append(replace(p, reference_solutions=p.reference_solutions + refs, wrong_solutions=wrong))
        for s in mine:
            s.held_out = s.sid in hidden
    return given, pool


def candidate_tests(p_tg: Problem, v: Problem) -> list[TestCase]:
    """The tests validate found valid (every candidate: the set the caps choose from)."""
    gone = {d["index"] for d in v.extra["validation"]["tests_dropped"] if d["reason"] not in ("count_cap", "byte_cap")}
    return [t for i, t in enumerate(p_tg.tests) if i not in gone]


def part_split(name: str, args, cfg: ts.Configs, judge: Judge) -> dict[str, Any]:
    from microcoder.pipeline.testgen.stage import testgen_problems
    from microcoder.pipeline.validate import validate_problems

    dropped: Counter = Counter()
    given, pool = split_pool(name, args, cfg, judge, dropped)
    log(f"[split {name}] {len(given)} problems; pool {dict(Counter((s.kind, s.correct, s.held_out) for s in pool))}")
    t0 = time.monotonic()
    # LeetCodeDataset: the given half of our mutants takes the place of testgen's own (which would
    # overlap the hidden half: small functions have few mutation sites)
    tg_cfg = replace(cfg.testgen, mutants=0) if name == "leetcodedataset" else cfg.testgen
    tg = testgen_problems(given, tg_cfg, evaluator=cfg.evaluator, progress=args.progress)
    log(f"[split {name}] testgen {time.monotonic() - t0:.0f} s")
    tg_by = {p.id: p for p in tg.kept}
    out: dict[str, Any] = {"problems": len(given), "dropped": dict(dropped),
                           "pool": {f"{'correct' if c else 'incorrect'} {'hidden' if h else 'given'}": n
                                    for (c, h), n in Counter((s.correct, s.held_out) for s in pool).items()},
                           "testgen_search": tg.stats.figures.get("search"),
                           "testgen_strength": tg.stats.figures.get("strength"), "caps": {}}
    hidden = [s for s in pool if s.held_out]
    for rule in args.caps.split(","):
        choice, n = rule.split(":")
        vcfg = replace(cfg.validate, cap_choice=choice, max_tests=int(n))
        t1 = time.monotonic()
        va = validate_problems(tg.kept, vcfg, evaluator=cfg.evaluator, progress=args.progress)
        kept = {p.id: p for p in va.kept}
        items = []
        for s in hidden:
            v = kept.get(s.problem_id)
            if v is not None:
                items.append((f"{s.sid}@kept", v, s))
                items.append((f"{s.sid}@all", replace(v, tests=candidate_tests(tg_by[s.problem_id], v)), s))
        runs = judge.runs(items, "first-failure")

        def outcome(s: ts.Solution, which: str, runs=runs) -> tuple[bool, bool | None]:
            r = runs.get(f"{s.sid}@{which}")
            return s.correct, failed(r, set(range(len(r or []))))

        judged = [s for s in hidden if s.problem_id in kept]
        st = va.stats.figures["strength"]
        out["caps"][rule] = {
            "problems_kept": len(kept), "tests_kept": sum(len(p.tests) for p in kept.values()),
            "in_sample": st["kept"], "in_sample_before_caps": st["before_caps"],
            "validate_held_out": st["held_out"], "validate_held_out_before_caps": st["held_out_before_caps"],
            "problems_without_held_out_tpr": st["problems_without_held_out_tpr"],
            "hidden_kept": record_of([outcome(s, "kept") for s in judged]),
            "hidden_all_candidates": record_of([outcome(s, "all") for s in judged]),
            "hidden_quadratic_caught": sum(outcome(s, "kept")[1] is True for s in judged if s.kind == "quadratic"),
            "hidden_quadratic": sum(s.kind == "quadratic" for s in judged),
            "hidden_lost_to_caps": [s.sid for s in judged if outcome(s, "all")[1] and outcome(s, "kept")[1] is False],
            "validate_s": round(time.monotonic() - t1, 1)}
        c = out["caps"][rule]
        log(f"[split {name}] {rule}: in-sample {strength.describe(c['in_sample'])}; validate held out "
            f"{strength.describe(c['validate_held_out'])}; hidden on kept {strength.describe(c['hidden_kept'])}, "
            f"on every candidate {strength.describe(c['hidden_all_candidates'])}")
    return out


# --- part: timelimit --------------------------------------------------------------------------------------------
def rule_limit(slowest_s: float, rule: str) -> float:
    m, rounding, floor = rule.split(":")
    exact = slowest_s * float(m)
    limit = float(int(0.5 + exact)) if rounding == "whole" else -(-round(exact * 1000) // 100) / 10
    return max(float(floor), limit)


def part_timelimit(args, judge: Judge, pool: dict[str, Any]) -> dict[str, Any]:
    """Per rule: held-out TPR with time (the correct codes that answer every kept test right at the
    probe limit, passing when their slowest run is within the rule's limit of the reference's slowest
    run) and TNR on too-slow code (LeetCodeDataset: the reference's quadratic variant, caught when
    over the limit somewhere). `validate` is the limit validate settled (the default rule)."""
    rules = args.rules.split(",")
    out: dict[str, Any] = {}
    for name, got in pool.items():
        if name not in ("humaneval", "leetcodedataset"):
            continue
        per_rule: dict[str, list] = {r: [] for r in ("validate", *rules)}
        ratio, wrong_answers = [], 0
        for s in got["samples"]:
            mine, ref = got["runs"].get(f"{s.sid}@kept"), got["runs"].get(f"{s.problem_id}#canonical@kept")
            if not s.correct or not mine or not ref or failed(ref, set(range(len(ref)))) is not False:
                continue
            if failed(mine, set(range(len(mine)))) is not False:  # a wrong answer (or over the probe): not time
                wrong_answers += 1
                continue
            slowest, mine_max = (max((r["time_s"] or 0.0) for r in x if r) for x in (ref, mine))
            ratio.append(mine_max / max(slowest, 1e-3))
            per_rule["validate"].append((True, mine_max > got["kept"][s.problem_id].time_limit_s))
            for r in rules:
                per_rule[r].append((True, mine_max > rule_limit(slowest, r)))
        ratio.sort()
        out[name] = {"tpr": {r: record_of(v) for r, v in per_rule.items()}, "answers_wrong_at_probe": wrong_answers,
                     "time_ratio_to_reference": {q: round(ratio[int(q * (len(ratio) - 1))], 2)
                                                 for q in (0.5, 0.9, 0.99, 1.0)} if ratio else None}
        if name != "leetcodedataset":
            continue
        items = []
        for pid, v in got["kept"].items():
            slow = ts.quadratic_variant(v.reference_solutions[0].code, v.entry_point or "")
            if slow and ts.has_sized_argument(v):
                items.append((f"{pid}#quad@probe", replace(v, time_limit_s=PROBE_S),
                              ts.Solution(f"{pid}#quad", pid, "quadratic", slow, False)))
        runs = judge.runs(items, "first-failure")
        quad: dict[str, list] = {r: [] for r in ("validate", *rules)}
        for key, _v, s in items:
            ref, mine = got["runs"].get(f"{s.problem_id}#canonical@kept"), runs.get(key)
            if not ref or failed(ref, set(range(len(ref)))) is not False or mine is None:
                continue
            slowest = max((r["time_s"] or 0.0) for r in ref if r)
            quad["validate"].append((False, failed(mine, set(range(len(mine))), got["kept"][s.problem_id].time_limit_s)))
            for r in rules:
                quad[r].append((False, failed(mine, set(range(len(mine))), rule_limit(slowest, r))))
        out[name]["quadratic_tnr"] = {r: record_of(v) for r, v in quad.items()}
    return out


# --- report -----------------------------------------------------------------------------------------------------
def rate(r: dict[str, Any] | None, side: str) -> str:
    part, whole = {"tpr": ("correct_passing", "correct"), "tnr": ("incorrect_failing", "incorrect")}[side]
    if not r or not r.get(whole):
        return "n/a"
    return f"{100 * r[side]:.1f}% ({r[part]}/{r[whole]})"


def print_report(results: dict[str, Any]) -> None:
    for name in ("humaneval", "leetcodedataset", "leetcode-contest"):
        he = results.get(name)
        if not he:
            continue
        log(f"\n## {name}: generated tests judged on labelled model code ({he['kind']}: {he['samples']}; "
            f"{he['kept']} of {he['problems']} problems kept)\n")
        log("| tests | problems | TPR (correct passing) | TNR (incorrect failing) |\n|---|---|---|---|")
        for tier, r in he["table"].items():
            log(f"| {tier} | {r['problems']} | {rate(r, 'tpr')} | {rate(r, 'tnr')} |")
        statuses = Counter(d["status"] for d in he["disputed"])
        log(f"\ncorrect-labelled code failing a kept test, by its first failure (AC: right answer, over the "
            f"limit): {dict(statuses.most_common())}")
        log(f"\nkept tests by tier: {he['tiers_kept']}; left out: {he['dropped']}; the canonical solution "
            f"fails the official tests of: {he['canonical_failing_official'] or 'none'}")
    for key, sp in results.items():
        if not key.startswith("split:"):
            continue
        log(f"\n## Split experiment, {key[6:]}: {sp['problems']} problems, pool {sp['pool']}\n")
        log("| caps | in-sample TPR | in-sample TNR | validate k-fold TPR | validate k-fold TNR | hidden half TPR "
            "| hidden half TNR | hidden, every candidate TNR | caps' cost (TNR points, hidden) |\n"
            "|---|---|---|---|---|---|---|---|---|")
        for rule, c in sp["caps"].items():
            hk, ha = c["hidden_kept"], c["hidden_all_candidates"]
            cost = f"{100 * (ha['tnr'] - hk['tnr']):.1f}" if hk["tnr"] is not None and ha["tnr"] is not None else "n/a"
            log(f"| {rule} | {rate(c['in_sample'], 'tpr')} | {rate(c['in_sample'], 'tnr')} | "
                f"{rate(c['validate_held_out'], 'tpr')} | {rate(c['validate_held_out'], 'tnr')} | {rate(hk, 'tpr')} | "
                f"{rate(hk, 'tnr')} | {rate(ha, 'tnr')} | {cost} |")
        srch = sp.get("testgen_search") or {}
        log(f"\ntestgen's search: {srch.get('survivors_at_start')} hunted survivors at start, "
            f"{srch.get('survivors_at_start', 0) - srch.get('survivors_left', 0)} killed; held out (never hunted): "
            f"{srch.get('held_out_survivors_at_start')} survivors, {srch.get('held_out_killed_by_search')} killed by "
            "the search's tests")
    tl = results.get("timelimit")
    if tl:
        log("\n## Time limits (multiplier:rounding:floor s of the reference's slowest run; `validate`: the limit "
            "validate settled)\n")
        he, lcd = tl.get("humaneval") or {}, tl.get("leetcodedataset") or {}
        log("| rule | HumanEval held-out TPR with time | LeetCodeDataset held-out TPR with time | LeetCodeDataset "
            "quadratic variants caught |\n|---|---|---|---|")
        for rule in dict.fromkeys([*he.get("tpr", {}), *lcd.get("tpr", {})]):
            log(f"| {rule} | {rate(he.get('tpr', {}).get(rule), 'tpr')} | {rate(lcd.get('tpr', {}).get(rule), 'tpr')} "
                f"| {rate(lcd.get('quadratic_tnr', {}).get(rule), 'tnr')} |")
        for name, got in (("HumanEval", he), ("LeetCodeDataset", lcd)):
            if got:
                log(f"\n{name}: correct code's slowest run / the reference's (quantiles) "
                    f"{got['time_ratio_to_reference']}; labelled correct but a wrong answer on a kept test "
                    f"(left out): {got['answers_wrong_at_probe']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="models,split,timelimit", help="models, split, timelimit (needs models).")
    ap.add_argument("--sources", default="humaneval,leetcodedataset",
                    help="humaneval, leetcodedataset, leetcode-contest (models part: LeetCodeDataset's responses "
                         "on DeepSeek-Coder's LeetCode contest problems, labelled by the contest's ~100 tests).")
    ap.add_argument("--limit", type=int, default=40, help="Problems per source (0: all).")
    ap.add_argument("--pick", choices=ts.PICKS, default="spread",
                    help="spread: evenly over the file; spread-shifted, spread-quarter, spread-three-quarters, "
                         "spread-one-eighth, -three-eighths, -five-eighths: half, a quarter, three quarters, one, "
                         "three, five eighths of a step later (disjoint sets: a fresh one after rules were read from "
                         "the last one's failures).")
    ap.add_argument("--ids", default=None, help="Only these problems (comma-separated source ids), instead of --limit.")
    ap.add_argument("--samples", type=int, default=100, help="CodeGen-16B samples per HumanEval problem (humaneval part).")
    ap.add_argument("--split-samples", type=int, default=20, help="Samples per problem in the split part.")
    ap.add_argument("--mutants", type=int, default=16, help="Our mutants per LeetCodeDataset problem (split part).")
    ap.add_argument("--seed", type=int, default=36, help="Seed of the hidden half and of our mutants.")
    ap.add_argument("--caps", default=",".join(CAPS), help="cap_choice:max_tests rules of the split part.")
    ap.add_argument("--rules", default=",".join(RULES), help="multiplier:rounding(whole|tenth):floor rules (timelimit).")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--params", default=None)
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ap.add_argument("--cache", type=Path, default=None, help="Caches (labels, runs, stages) here; default: a fresh temporary folder.")
    ap.add_argument("--data", type=Path, default=ts.DATA)
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--out", default=None, help="Write the figures as JSON here.")
    args = ap.parse_args()
    if not args.data.exists():
        raise SystemExit(f"{args.data}: no bench data (see ../shared/bench-data/README.md)")
    args.workdir = Path(tempfile.mkdtemp(prefix="heldout-bench-"))
    args.cache = args.cache or args.workdir
    args.cache.mkdir(parents=True, exist_ok=True)
    cfg = ts.load_configs(args.params, args.overrides, args.workers, args.cache)
    parts = args.parts.split(",")
    log(f"code {ts.git_revision()}; parts {parts}; limit {args.limit or 'all'} ({args.pick}); caches in {args.cache}")
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.pipeline.evaluator.programs import CachedEvaluator, ResultCache
    from microcoder.pipeline.evaluator.verdict_key import verdict_key

    results: dict[str, Any] = {}
    pool: dict[str, Any] = {}
    runs = ResultCache(str(args.cache / "bench_runs.sqlite"))
    with make_evaluator(cfg.evaluator) as ev:
        judge = Judge(ev, CachedEvaluator(ev, runs, verdict_key(cfg.evaluator)))
        sources = args.sources.split(",")
        if "models" in parts or "timelimit" in parts:
            for name in sources:
                results[name] = part_model_code(name, args, cfg, judge, pool)
        if "split" in parts:
            for name in sources:
                results[f"split:{name}"] = part_split(name, args, cfg, judge)
        if "timelimit" in parts:
            results["timelimit"] = part_timelimit(args, judge, pool)
    runs.close()
    print_report(results)
    if args.out:
        Path(args.out).write_text(json.dumps({"code": ts.git_revision(), "args": {k: str(v) for k, v in vars(args).items()},
                                              "results": results}, indent=1, default=str))
        log(f"wrote {args.out}")
        tests = [t for got in pool.values() for t in got.get("disputed_tests", [])]
        if tests:  # each correct-labelled response's first failing test, whole: to run it against the reference
            Path(args.out).with_suffix(".disputed.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tests))
            log(f"wrote {Path(args.out).with_suffix('.disputed.jsonl')}")


if __name__ == "__main__":
    main()
