"""Test strength in the field's terms on real data (issue 25, "Measure"): the problems' own tests
*before*, and *after* testgen (own + generated) and validate (the tests it keeps), judged here
against known solutions of each kind, separately:

  references  the problem's reference solutions: TPR (share passing every test);
  mutants     AST mutants of the first reference (`microcoder.pipeline.testgen.mutants.make_mutants`), drawn with
              a seed of our own: TNR (share failing at least one test); those testgen's own draw does
              not contain (a loop hunting testgen's survivors never saw them) again apart, as
              mutants_held_out;
  samples     HumanEval only: CodeGen-16B samples (microsoft/CodeT), labelled by HumanEval's official
              `check(candidate)` run in the sandbox (passes: correct, else incorrect; samples that do
              not compile are left out and counted): TPR and TNR;
  quadratic   a too-slow variant of the first reference: correct output, but an O(n^2) pure-Python
              double loop over the largest argument's elements at the start of the entry function:
              caught = fails (TLE) at least one test.

Sources (../shared/bench-data, those that ship references): leetcodedataset (v0.2.0 train, through
`microcoder.pipeline.sources.leetcodedataset`), humaneval (`microcoder.pipeline.sources.humaneval`), mbpp (rows turned into
our jsonl format here and read back with `microcoder.pipeline.sources.jsonl`). Testgen and validate run as the
pipeline runs them (`testgen_problems`, `validate_problems`, params.yaml's sections, caches in a
temporary folder), except validate's min_tests, 1 here (this measures strength, not the count
filter). Every column of a problem is judged at one time limit, the one validate settles, so that
the columns differ by their tests only; problems validate rejects are left out of every column
(counted with the reason).

    .venv/bin/python bench/test_strength.py --limit 5                     # 0.5-1.5 min on 2 cores
    .venv/bin/python bench/test_strength.py --limit 30 --out /tmp/strength.json
    .venv/bin/python bench/test_strength.py --sources leetcodedataset --limit 100 --set testgen.max_elements=100000
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline import strength  # noqa: E402
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase  # noqa: E402

DATA = ROOT.parent / "shared" / "bench-data"
LCD_TRAIN = Path("leetcodedataset") / "LeetCodeDataset-v0.2.0-train.jsonl.gz"
LCD_TRAIN_PROBLEMS = 1890  # the full v0.2.0 train split, for the cost extrapolation
SOURCES = ("leetcodedataset", "humaneval", "mbpp")
STAGES = ("before", "testgen", "validate")
KINDS = ("references", "mutants", "samples", "quadratic")
# The records reported: one per kind, and the mutants testgen's own draw does not contain apart.
GROUPS = (*KINDS, "mutants_held_out")
LARGE = 10**5  # elements of a max-tier input
NOT_JUDGED = ("CE", "SE")  # no verdict on the tests: the code did not build, or the harness failed


def log(msg: str) -> None:
    print(msg, flush=True)


# --- problems ---------------------------------------------------------------------------------------------------
def read_source(module, options, name: str) -> tuple[list[Problem], Counter]:
    """(problems, rejects by reason) of one source adapter."""
    from microcoder.pipeline.sources.base import SourceContext

    problems, rejects = [], Counter()
    for item in module.read(options, SourceContext(name)):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            rejects[f"adapter: {item.code}"] += 1
    return problems, rejects


def load_leetcodedataset(data: Path, workdir: Path) -> tuple[list[Problem], Counter]:
    from microcoder.pipeline.sources import leetcodedataset

    return read_source(leetcodedataset, leetcodedataset.Options(path=str(data / LCD_TRAIN)), "leetcodedataset")


def load_humaneval(data: Path, workdir: Path) -> tuple[list[Problem], Counter]:
    from microcoder.pipeline.sources import humaneval

    return read_source(humaneval, humaneval.Options(path=str(data / "humaneval" / "HumanEval.jsonl.gz")), "humaneval")


def mbpp_problem(row: dict[str, Any]) -> Problem | str:
    """One MBPP row as a functional problem (its `test_list` asserts as tests), or why not."""
    with warnings.catch_warnings():  # the rows' own invalid escapes ("\d" in a plain string) warn when parsed
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
        return _mbpp_problem(row)


def _mbpp_problem(row: dict[str, Any]) -> Problem | str:
    from microcoder.pipeline.sources.base import unstated_limits
    from microcoder.pipeline.sources.normalize import stable_id
    from microcoder.pipeline.sources.pyliterals import convert_asserts, find_signature

    if (row.get("test_setup_code") or "").strip():
        return "test_setup_code (not expressible as arguments)"
    asserts = "\n".join(row.get("test_list") or [])
    try:
        called = [n.func.id for n in ast.walk(ast.parse(asserts)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    except SyntaxError:
        return "test_list does not parse"
    code = (row.get("code") or "").replace("\r\n", "\n")
    entry = next((name for name in called if find_signature(code, name) is not None), None)
    if entry is None:
        return "no tested function defined in code"
    converted = convert_asserts(asserts, find_signature(code, entry).params, callee=entry)
    if not converted.tests:
        return "no `entry(literals) == literal` assert"
    params = ", ".join(find_signature(code, entry).params)
    return Problem(
        id=stable_id("mbpp", str(row["task_id"])), source="mbpp", source_id=str(row["task_id"]),
        title=f"MBPP {row['task_id']}: {entry}", statement=f"{row['text'].strip()}\n\nImplement `{entry}({params})`.",
        platform="mbpp", style="functional", entry_point=entry, tests=converted.tests,
        reference_solutions=[ReferenceSolution("python", code.rstrip() + "\n")], license="CC-BY-4.0",
        meta={"skipped_asserts": converted.skipped_total, **unstated_limits()})


def load_mbpp(data: Path, workdir: Path) -> tuple[list[Problem], Counter]:
    """MBPP rows -> our jsonl format (in `workdir`) -> `microcoder.pipeline.sources.jsonl`, the adapter for it."""
    from microcoder.pipeline.sources import jsonl

    rejects: Counter = Counter()
    path = workdir / "mbpp-problems.jsonl"
    with open(data / "mbpp" / "mbpp.jsonl") as src, open(path, "w") as out:
        for line in src:
            got = mbpp_problem(json.loads(line))
            if isinstance(got, str):
                rejects[f"conversion: {got}"] += 1
            else:
                out.write(json.dumps(got.to_dict()) + "\n")
    problems, adapter_rejects = read_source(jsonl, jsonl.Options(path=str(path)), "mbpp")
    return problems, rejects + adapter_rejects


LOADERS = {"leetcodedataset": load_leetcodedataset, "humaneval": load_humaneval, "mbpp": load_mbpp}


# where each spread pick starts, in eighths of a step (all disjoint: a step is ~19 problems of 1,890)
_EIGHTHS = {"spread": 0, "spread-one-eighth": 1, "spread-quarter": 2, "spread-three-eighths": 3, "spread-shifted": 4,
            "spread-five-eighths": 5, "spread-three-quarters": 6}
PICKS = (*_EIGHTHS, "first")


def pick(problems: list[Problem], limit: int, how: str) -> list[Problem]:
    """`limit` problems: the first ones, or spread evenly over the file (closer to the whole split's mix).
    `spread-shifted` takes the problems half a step after `spread`'s: as well spread, none of them
    the same (for a figure on problems that no rule was read from); `spread-quarter`,
    `spread-three-quarters` and `spread-one-eighth`, `-three-eighths`, `-five-eighths` a quarter, three
    quarters, one, three and five eighths of a step after (none of the others': a fresh set each time
    rules were read from the last one's failures)."""
    if limit >= len(problems):
        return list(problems)
    if how == "first":
        return problems[:limit]
    return [problems[(8 * i + _EIGHTHS[how]) * len(problems) // (8 * limit)] for i in range(limit)]


# --- solutions --------------------------------------------------------------------------------------------------
@dataclass
class Solution:
    sid: str
    problem_id: str
    kind: str  # references | mutants | samples | quadratic
    code: str
    correct: bool  # the label: references and samples passing the official check are correct
    held_out: bool = True  # a mutant testgen's own draw does not contain


def in_group(s: Solution, group: str) -> bool:
    return s.kind == "mutants" and s.held_out if group == "mutants_held_out" else s.kind == group


def python_reference(p: Problem) -> str | None:
    return next((r.code for r in p.reference_solutions if r.language == "python"), None)


def draw_mutants(p: Problem, n: int, seed: int, testgen_cfg) -> list[Solution]:
    """Up to n mutants of the first python reference, drawn with our seed; those equal to one of
    testgen's own draw (which its figures, and a loop hunting survivors, may use) are marked not
    held out. Small functions have few mutation sites, so the two draws often share most."""
    from microcoder.pipeline.testgen.functional import case_seed
    from microcoder.pipeline.testgen.mutants import make_mutants

    code = python_reference(p)
    if code is None or n <= 0:
        return []
    tg_count = int(getattr(testgen_cfg, "mutants", 0) or 0)
    theirs = {m.code for m in make_mutants(code, tg_count, case_seed(testgen_cfg.seed, p.id, -1))} if tg_count else set()
    return [Solution(f"{p.id}#mut{k}", p.id, "mutants", m.code, False, held_out=m.code not in theirs)
            for k, m in enumerate(make_mutants(code, n, case_seed(seed, p.id, -1000)))]


QUADRATIC_HELPERS = '''
def _strength_size(value):
    """Elements of an argument: list items (nested ones flattened), characters, linked or tree nodes."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return sum(_strength_size(v) if isinstance(v, (list, tuple)) else 1 for v in value)
    seen, todo = set(), [value]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or not hasattr(node, "__dict__"):
            continue
        seen.add(id(node))
        todo += [getattr(node, a, None) for a in ("next", "left", "right")]
    return len(seen)


def _strength_burn(*args):
    n = max([_strength_size(a) for a in args] or [0])
    spent = 0
    if _STRENGTH_C_SPEED:  # n sums of an n-list, in C: ~10x cheaper per step than the Python loop
        probe = [0] * n
        for _i in range(n):
            spent += sum(probe)
        return spent
    for _i in range(n):
        for _j in range(n):
            spent += 1
    return spent


_strength_depth = [0]
'''

_PROLOGUE = '''
_strength_depth[0] += 1
try:
    if _strength_depth[0] == 1:
        _strength_burn({args})
finally:
    _strength_depth[0] -= 1
'''


def entry_function(tree: ast.Module, entry_point: str) -> tuple[ast.FunctionDef, bool] | None:
    """(the entry point's def, whether it is a method) in a parsed program."""
    from microcoder.pipeline.testgen.types import entry_name

    name, owner = entry_name(entry_point)
    scopes = [(n.body, True) for n in tree.body if isinstance(n, ast.ClassDef) and n.name == (owner or "Solution")]
    scopes = scopes[-1:] if owner else [(tree.body, False)] + scopes[-1:]
    for body, is_method in scopes:
        found = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == name]
        if found:
            return found[-1], is_method
    return None


def quadratic_variant(code: str, entry_point: str, c_speed: bool = False) -> str | None:
    """`code` with the quadratic burn at the start of the entry function: the same outputs, O(n^2)
    time in the largest argument's elements (pure-Python steps, or with `c_speed` steps inside
    sum(): the constant of a quadratic solution built from C-level scans, which a 10^4-element
    input lets pass and a 10^5 one does not). Only the outermost call burns (a recursive entry
    function stays quadratic, not worse). None when the entry function is not found."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    found = entry_function(tree, entry_point)
    if found is None:
        return None
    fn, is_method = found
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args][1 if is_method and not _is_static(fn) else 0:]
    names += ([a.vararg.arg] if a.vararg else []) + [x.arg for x in a.kwonlyargs]
    prologue = ast.parse(_PROLOGUE.format(args=", ".join(names))).body
    burn = prologue[1]  # try: burn; finally: depth - 1 -> try: burn, then the body
    burn.body += fn.body
    fn.body = [prologue[0], burn]
    at = next((i for i, n in enumerate(tree.body) if not _is_preamble(n)), len(tree.body))
    tree.body[at:at] = ast.parse(QUADRATIC_HELPERS + f"\n_STRENGTH_C_SPEED = {bool(c_speed)}\n").body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _is_static(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _is_preamble(node: ast.stmt) -> bool:
    """A module docstring or a `from __future__` import: must stay first."""
    return (isinstance(node, ast.ImportFrom) and node.module == "__future__") or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))


def has_sized_argument(p: Problem) -> bool:
    """Whether any own test passes a list or string argument (a quadratic burn over ints burns nothing)."""
    for t in p.tests:
        for line in t.input.split("\n"):
            try:
                if isinstance(json.loads(line), (list, str)) if line.strip() else False:
                    return True
            except ValueError:
                continue
    return False


# --- HumanEval samples ----------------------------------------------------------------------------------------
def humaneval_samples(problems: list[Problem], data: Path, per_problem: int, ev, label_limit_s: float,
                      dropped: Counter) -> list[Solution]:
    """Up to `per_problem` distinct CodeGen-16B samples per problem, labelled by the official check."""
    tasks = {t["task_id"]: t for t in (json.loads(x) for x in gzip.open(data / "humaneval" / "HumanEval.jsonl.gz", "rt"))}
    by_task = codet_samples(data)
    candidates: list[tuple[Solution, str]] = []
    for p in problems:
        smp = by_task.get(p.source_id)
        if smp is None:
            dropped["samples: problem without samples"] += 1
            continue
        seen: set[str] = set()
        for completion in smp["samples"][:per_problem]:
            code = smp["prompt"] + completion
            if code in seen:
                dropped["samples: duplicate of an earlier sample"] += 1
                continue
            seen.add(code)
            task = tasks[p.source_id]
            official = f"{code}\n\n{task['test']}\ncheck({task['entry_point']})\n"
            candidates.append((Solution(f"{p.id}#s{len(seen) - 1}", p.id, "samples", code, False), official))
    return label_samples(candidates, ev, label_limit_s, dropped)


def codet_samples(data: Path) -> dict[str, dict[str, Any]]:
    """{HumanEval task id: its CodeT sample record}. CodeT's file is in another order and its prompts
    lack the docstring's examples; six entry names recur (`add`, `sort_array`, ...), so a record goes
    to the task of its entry name whose prompt shares the longest prefix with it (one to one)."""
    import os

    tasks = [json.loads(x) for x in gzip.open(data / "humaneval" / "HumanEval.jsonl.gz", "rt")]
    records = [json.loads(line) for line in open(data / "humaneval" / "codegen16b_samples.jsonl")]

    def flat(text: str) -> str:
        return re.sub(r"\s+", " ", text).strip()

    out = {}
    for t in tasks:
        same = [r for r in records if re.findall(r"^def (\w+)\(", r["prompt"], re.M)[-1:] == [t["entry_point"]]]
        if same:
            out[t["task_id"]] = max(same, key=lambda r: len(os.path.commonprefix([flat(r["prompt"]), flat(t["prompt"])])))
    return out


def label_samples(candidates: list[tuple[Solution, str]], ev, limit_s: float, dropped: Counter) -> list[Solution]:
    """Run each sample alone (does it compile?) and its official check script (sample + check) as
    programs: a sample whose own code is a CE is left out (the check's code appended after it can
    hide a syntax error, e.g. a dangling decorator); otherwise exit 0 (AC, or WA: it printed
    something) = correct, RE / TLE / MLE / OLE = incorrect."""
    from microcoder.pipeline.testgen.runner import judge

    probs = {f"label{i}": Problem(id=f"label{i}", source="bench", statement="", style="stdio",
                                  tests=[TestCase("", "")], time_limit_s=limit_s) for i in range(len(candidates))}
    runs = [(f"alone{i}", f"label{i}", "python", sol.code) for i, (sol, _) in enumerate(candidates)]
    runs += [(f"check{i}", f"label{i}", "python", official) for i, (_, official) in enumerate(candidates)]
    status = judge(ev, probs, runs)
    out = []
    for i, (sol, _) in enumerate(candidates):
        alone, check = status.get(f"alone{i}", "SE"), status.get(f"check{i}", "SE")
        if "CE" in (alone, check):
            dropped["samples: does not compile"] += 1
        elif check == "SE":
            dropped["samples: official check got no verdict (SE)"] += 1
        else:
            out.append(replace(sol, correct=check in ("AC", "WA")))
    return out


# --- inputs ---------------------------------------------------------------------------------------------------
def elements(value: Any) -> int:
    """Numbers and characters in a JSON value (nested lists flattened)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(elements(v) for v in value)
    if isinstance(value, dict):
        return sum(elements(v) for v in value.values())
    return 1


def input_size(text: str, style: str) -> int:
    """A test input's size: its largest argument's elements (functional), its tokens (stdio)."""
    if style != "functional":
        return len(text.split())
    sizes = [0]
    for line in text.split("\n"):
        if line.strip():
            try:
                sizes.append(elements(json.loads(line)))
            except ValueError:
                sizes.append(len(line))
    return max(sizes)


def generated_tiers(p: Problem) -> dict[str, str]:
    """{input sha: tier} of testgen's provenance; the method where a row has no tier (older testgen)."""
    rows = ((p.meta or {}).get("testgen") or {}).get("tests") or []
    return {r.get("input_sha"): str(r.get("tier") or r.get("method") or "unknown") for r in rows if isinstance(r, dict)}


def test_tiers(tests: list[TestCase], tiers: dict[str, str], own: set[str]) -> Counter:
    """Tests by tier: own tests as `own`, generated ones by their provenance."""
    from microcoder.pipeline.io import content_hash

    return Counter("own" if t.input in own else tiers.get(content_hash(t.input)[:16], "unknown") for t in tests)


# --- the stages -----------------------------------------------------------------------------------------------
@dataclass
class Configs:
    testgen: Any
    validate: Any
    evaluator: Any


def load_configs(params: str | None, overrides: list[str], workers: int, cache: Path) -> Configs:
    """params.yaml's sections, `--set section.key=value` overrides, caches under `cache`."""
    from microcoder.pipeline.evaluator.config import EvaluatorConfig
    from microcoder.pipeline.stage import load_config
    from microcoder.pipeline.testgen.stage import TestgenConfig
    from microcoder.pipeline.validate import ValidateConfig

    by_section: dict[str, list[str]] = {"testgen": [], "validate": ["min_tests=1"], "evaluator": [f"workers={workers}"]}
    for item in overrides:
        section, _, rest = item.partition(".")
        if section not in by_section or not rest:
            raise SystemExit(f"--set {item!r}: expected testgen.KEY=VALUE, validate.KEY=VALUE or evaluator.KEY=VALUE")
        by_section[section].append(rest)
    tg = load_config(TestgenConfig, "testgen", params, by_section["testgen"], own_section=True)
    va = load_config(ValidateConfig, "validate", params, by_section["validate"], own_section=True)
    ev = load_config(EvaluatorConfig, "evaluator", params, by_section["evaluator"], own_section=True)
    return Configs(replace(tg, cache_path=str(cache / "testgen.sqlite")),
                   replace(va, cache_path=str(cache / "validate.sqlite")), ev)


def run_stages(problems: list[Problem], cfg: Configs, progress: bool) -> dict[str, Any]:
    from microcoder.pipeline.testgen.stage import testgen_problems
    from microcoder.pipeline.validate import validate_problems

    t0 = time.monotonic()
    tg = testgen_problems(problems, cfg.testgen, evaluator=cfg.evaluator, progress=progress)
    t1 = time.monotonic()
    va = validate_problems(tg.kept, cfg.validate, evaluator=cfg.evaluator, progress=progress)
    t2 = time.monotonic()
    return {"testgen": {p.id: p for p in tg.kept}, "validate": {p.id: p for p in va.kept},
            "rejected": {p.id: reason for p, reason in va.rejects},
            "testgen_report": {r.get("id"): r for r in tg.report},
            "testgen_s": t1 - t0, "validate_s": t2 - t1}


def judge_stage(ev, stage: str, tests: dict[str, Problem], solutions: list[Solution]) -> dict[str, tuple[str, int]]:
    """{solution id: (status, index of the first failing test or -1)} on this stage's test sets."""
    from microcoder.pipeline.evaluator import Submission

    probs = {f"{pid}@{stage}": replace(p, id=f"{pid}@{stage}") for pid, p in tests.items() if p.tests}
    subs = [Submission(f"{s.problem_id}@{stage}", s.sid, "python", s.code) for s in solutions
            if f"{s.problem_id}@{stage}" in probs]
    out = {}
    for v in ev.evaluate(probs, subs, mode="first-failure", progress=False):
        out[v.submission_id] = (v.status, len(v.tests) - 1 if v.status != "AC" else -1)
    return out


# --- one source -----------------------------------------------------------------------------------------------
@dataclass
class SourceRun:
    name: str
    problems: list[Problem]
    dropped: Counter = field(default_factory=Counter)
    solutions: list[Solution] = field(default_factory=list)
    stages: dict[str, Any] = field(default_factory=dict)
    verdicts: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)


def build_solutions(run: SourceRun, args, cfg: Configs) -> None:
    for p in run.problems:
        for k, r in enumerate(p.reference_solutions):
            if r.language == "python":
                run.solutions.append(Solution(f"{p.id}#ref{k}", p.id, "references", r.code, True))
        run.solutions += draw_mutants(p, args.mutants, args.seed, cfg.testgen)
        ref = python_reference(p)
        if not has_sized_argument(p):
            run.dropped["quadratic: no list or string argument"] += 1
            continue
        slow = quadratic_variant(ref, p.entry_point or "", args.burn == "c") if ref else None
        if slow is None:
            run.dropped["quadratic: entry function not found"] += 1
        else:
            run.solutions.append(Solution(f"{p.id}#quad", p.id, "quadratic", slow, False))


def stage_tests(run: SourceRun) -> dict[str, dict[str, Problem]]:
    """{stage: {problem id: the problem with that stage's tests}}, all at validate's time limit, for
    the problems validate kept."""
    kept = run.stages["validate"]
    out: dict[str, dict[str, Problem]] = {s: {} for s in STAGES}
    for p in run.problems:
        final = kept.get(p.id)
        if final is None:
            continue
        for stage, tests in (("before", p.tests), ("testgen", run.stages["testgen"][p.id].tests), ("validate", final.tests)):
            out[stage][p.id] = replace(p, tests=list(tests), time_limit_s=final.time_limit_s)
    return out


def problem_row(run: SourceRun, p: Problem, sets: dict[str, dict[str, Problem]]) -> dict[str, Any]:
    """One problem's figures: tests, large inputs and tiers per stage, a strength record per kind and stage."""
    own = {t.input for t in p.tests}
    tiers = generated_tiers(run.stages["testgen"][p.id])
    row: dict[str, Any] = {"id": p.id, "difficulty": p.difficulty, "time_limit_s": sets["validate"][p.id].time_limit_s,
                           "tests": {}, "largest_input": {}, "large_inputs": {}, "tiers": {}, "strength": {},
                           "not_judged": {}}
    sols = [s for s in run.solutions if s.problem_id == p.id]
    for stage in STAGES:
        tests = sets[stage][p.id].tests
        row["tests"][stage] = len(tests)
        sizes = [input_size(t.input, p.style) for t in tests]
        row["largest_input"][stage] = max(sizes, default=0)
        row["large_inputs"][stage] = sum(n >= LARGE for n in sizes)
        row["tiers"][stage] = dict(test_tiers(tests, tiers, own))
        verdicts = run.verdicts[stage]
        judged = [(s, verdicts[s.sid][0]) for s in sols if verdicts.get(s.sid, ("SE",))[0] not in NOT_JUDGED]
        row["not_judged"][stage] = dict(Counter(verdicts.get(s.sid, ("SE",))[0] for s in sols
                                                if verdicts.get(s.sid, ("SE",))[0] in NOT_JUDGED))
        row["strength"][stage] = {group: strength.record(
            correct=sum(s.correct for s, _ in judged if in_group(s, group)),
            correct_passing=sum(s.correct and st == "AC" for s, st in judged if in_group(s, group)),
            incorrect=sum(not s.correct for s, _ in judged if in_group(s, group)),
            incorrect_failing=sum(not s.correct and st != "AC" for s, st in judged if in_group(s, group)))
            for group in GROUPS}
        row.setdefault("quadratic_status", {})[stage] = next(
            (verdicts.get(s.sid, ("SE",))[0] for s in sols if s.kind == "quadratic"), None)
    return row


def disputed(run: SourceRun, sets: dict[str, dict[str, Problem]], cap: int = 40) -> list[dict[str, Any]]:
    """Correct solutions (references, samples passing the official check) that fail validate's kept
    tests, with the first failing test: a real bug the official tests miss, or an invalid input."""
    out = []
    for s in run.solutions:
        st, at = run.verdicts["validate"].get(s.sid, ("SE", -1))
        if s.correct and st not in ("AC",) + NOT_JUDGED and len(out) < cap:
            p = sets["validate"][s.problem_id]
            t = p.tests[at] if 0 <= at < len(p.tests) else None
            own = {x.input for x in sets["before"][s.problem_id].tests}
            out.append({"solution": s.sid, "status": st, "test_index": at, "own_test": bool(t and t.input in own),
                        "input": t.input[:200] if t else None, "expected": t.output[:200] if t else None})
    return out


def measure_source(name: str, args, cfg: Configs, workdir: Path) -> dict[str, Any]:
    from microcoder.pipeline.evaluator.factory import make_evaluator

    loaded, dropped = LOADERS[name](args.data, workdir)
    eligible = [p for p in loaded if python_reference(p)]
    if len(loaded) > len(eligible):
        dropped["no python reference"] += len(loaded) - len(eligible)
    run = SourceRun(name, pick(eligible, args.limit, args.pick), dropped)
    log(f"[{name}] {len(loaded)} problems read ({sum(dropped.values())} rejected or without reference), "
        f"{len(run.problems)} picked ({args.pick})")
    build_solutions(run, args, cfg)
    if name == "humaneval" and args.samples > 0:
        with make_evaluator(cfg.evaluator) as ev:
            run.solutions += humaneval_samples(run.problems, args.data, args.samples, ev, args.label_time_limit, run.dropped)
    log(f"[{name}] solutions: {dict(Counter(s.kind + (':correct' if s.correct else ':incorrect') for s in run.solutions))}; "
        "running testgen and validate")
    run.stages = run_stages(run.problems, cfg, args.progress)
    for reason in run.stages["rejected"].values():
        run.dropped[f"validate rejected: {reason.split(' (')[0][:80]}"] += 1
    sets = stage_tests(run)
    log(f"[{name}] testgen {run.stages['testgen_s']:.1f} s, validate {run.stages['validate_s']:.1f} s; judging "
        f"{len(run.solutions)} solutions x {len(STAGES)} test sets")
    t0 = time.monotonic()
    with make_evaluator(cfg.evaluator) as ev:
        for stage in STAGES:
            run.verdicts[stage] = judge_stage(ev, stage, sets[stage], run.solutions)
    rows = [problem_row(run, p, sets) for p in run.problems if p.id in sets["validate"]]
    return summarise(run, rows, sets, time.monotonic() - t0)


def summarise(run: SourceRun, rows: list[dict[str, Any]], sets: dict[str, dict[str, Problem]], judge_s: float) -> dict[str, Any]:
    compared = {r["id"] for r in rows}
    kinds = Counter(s.kind + (":correct" if s.correct else ":incorrect") for s in run.solutions if s.problem_id in compared)
    kinds["mutants:held_out"] = sum(s.kind == "mutants" and s.held_out for s in run.solutions if s.problem_id in compared)
    n = len(run.problems)
    cost = run.stages["testgen_s"] + run.stages["validate_s"]
    tg_report = run.stages["testgen_report"]
    return {
        "problems_picked": n, "problems_compared": len(rows), "dropped": dict(sorted(run.dropped.items())),
        "solutions": dict(sorted(kinds.items())),
        "tests": {stage: sum(r["tests"][stage] for r in rows) for stage in STAGES},
        "tests_added_by_testgen": sum(int((tg_report.get(pid) or {}).get("tests_added") or 0) for pid in compared),
        "testgen_status": dict(Counter(str((tg_report.get(pid) or {}).get("status")) for pid in compared)),
        "validate_dropped": dict(sum((validate_drops(run.stages["validate"][pid]) for pid in compared), Counter())),
        "large_inputs": {stage: sum(r["large_inputs"][stage] for r in rows) for stage in STAGES},
        "largest_input": {stage: _spread([r["largest_input"][stage] for r in rows]) for stage in STAGES},
        "tiers": {stage: dict(sum((Counter(r["tiers"][stage]) for r in rows), Counter())) for stage in STAGES},
        "strength": {stage: {g: strength.add(r["strength"][stage][g] for r in rows) for g in GROUPS}
                     for stage in STAGES},
        "by_difficulty": {stage: {g: strength.by_group((r["difficulty"], r["strength"][stage][g]) for r in rows)
                                  for g in GROUPS} for stage in ("before", "validate")},
        "quadratic_status": {stage: dict(Counter(r["quadratic_status"][stage] for r in rows
                                                 if r["quadratic_status"][stage] is not None)) for stage in STAGES},
        "not_judged": {stage: dict(sum((Counter(r["not_judged"][stage]) for r in rows), Counter())) for stage in STAGES},
        "mutants_failing_no_stage": sum(1 for s in run.solutions if s.kind == "mutants" and s.problem_id in compared
                                        and all(run.verdicts[st].get(s.sid, ("SE",))[0] == "AC" for st in STAGES)),
        "disputed": disputed(run, sets),
        "time": {"testgen_s": round(run.stages["testgen_s"], 1), "validate_s": round(run.stages["validate_s"], 1),
                 "per_problem_s": round(cost / n, 3) if n else None, "judging_here_s": round(judge_s, 1)},
        "per_problem": rows,
    }


def validate_drops(p: Problem) -> Counter:
    """Tests validate dropped from a kept problem, by reason (its `validation` record)."""
    rows = ((p.extra or {}).get("validation") or {}).get("tests_dropped") or []
    return Counter(str(r.get("reason")) for r in rows if isinstance(r, dict))


def _spread(values: list[int]) -> dict[str, Any]:
    """Median and max of per-problem values."""
    if not values:
        return {"median": None, "max": None}
    ordered = sorted(values)
    return {"median": ordered[len(ordered) // 2], "max": ordered[-1]}


# --- report ---------------------------------------------------------------------------------------------------
def cell(r: dict[str, Any]) -> str:
    """A strength record as `describe` writes it, without the side that has no solutions."""
    sides = strength.describe(r).split(", ")
    shown = [side for side, n in zip(sides, (r["correct"], r["incorrect"])) if n]
    return ", ".join(shown) or "n/a"


def print_source(name: str, s: dict[str, Any], workers: int) -> None:
    log(f"\n== {name}: {s['problems_compared']} problems compared ({s['problems_picked']} picked) ==")
    if s["dropped"]:
        log("  left out / not built: " + ", ".join(f"{k}: {v}" for k, v in s["dropped"].items()))
    log(f"  solutions: {s['solutions']} (mutants:held_out = not in testgen's own draw)")
    t, big = s["tests"], s["large_inputs"]
    log(f"  tests: before {t['before']} -> testgen {t['testgen']} ({s['tests_added_by_testgen']} added; "
        f"testgen status {s['testgen_status']}) -> validate {t['validate']} kept (dropped: {s['validate_dropped']})")
    log(f"  inputs with >= {LARGE:,} elements: before {big['before']}, testgen {big['testgen']}, validate {big['validate']}; "
        f"largest input per problem (elements, median / max): " + ", ".join(
            f"{st} {s['largest_input'][st]['median']} / {s['largest_input'][st]['max']}" for st in STAGES))
    log(f"  tests by tier: testgen {s['tiers']['testgen']}; validate {s['tiers']['validate']}")
    for group in (g for g in GROUPS if g != "quadratic"):  # the quadratic variants have their own line
        recs = [s["strength"][stage][group] for stage in STAGES]
        if any(r["correct"] or r["incorrect"] for r in recs):
            cells = " -> ".join(f"{stage}: {cell(r)}" for stage, r in zip(STAGES, recs))
            log(f"  {group:<16} {cells}")
    q = [s["strength"][stage]["quadratic"] for stage in STAGES]
    if q[0]["incorrect"]:
        log("  quadratic variants caught (fail >= 1 test): " + " -> ".join(
            f"{r['incorrect_failing']}/{r['incorrect']}" for r in q) + f"; statuses {s['quadratic_status']}")
    log(f"  mutants failing no test set at all (equivalent, or beyond every set): {s['mutants_failing_no_stage']}")
    if any(s["not_judged"].values()):
        log(f"  not judged (CE/SE, left out of the records): {s['not_judged']}")
    if s["disputed"]:
        by_problem = Counter(d["solution"].split("#")[0] for d in s["disputed"])
        log(f"  correct solutions failing validate's tests, by problem (first {len(s['disputed'])}; inputs in the "
            f"JSON): {dict(by_problem)}")
    tm = s["time"]
    log(f"  time: testgen {tm['testgen_s']} s + validate {tm['validate_s']} s = {tm['per_problem_s']} s per problem "
        f"({workers} workers; judging here {tm['judging_here_s']} s, not part of the cost)")


def extrapolate(results: dict[str, Any], workers: int) -> dict[str, Any] | None:
    """The full LeetCodeDataset v0.2.0 train split's testgen + validate cost, from the measured per-problem cost."""
    lcd = results.get("leetcodedataset")
    if not lcd or not lcd["time"]["per_problem_s"]:
        return None
    per = lcd["time"]["per_problem_s"]
    total = per * LCD_TRAIN_PROBLEMS
    return {"from_problems": lcd["problems_picked"], "per_problem_s": per, "problems": LCD_TRAIN_PROBLEMS,
            "workers": workers, "wall_s": round(total), "wall_h": round(total / 3600, 2),
            "worker_h": round(total * workers / 3600, 2)}


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "pipeline"], cwd=ROOT, capture_output=True, text=True)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", default=",".join(SOURCES), help=f"Comma-separated, of {', '.join(SOURCES)}.")
    ap.add_argument("--limit", type=int, default=30, help="Problems per source.")
    ap.add_argument("--pick", choices=PICKS, default="spread",
                    help="spread: evenly over each file (the whole split's mix); spread-shifted, spread-quarter, "
                         "spread-three-quarters, spread-one-eighth, -three-eighths, -five-eighths: half, a quarter, "
                         "three quarters, one, three, five eighths of a step later (disjoint sets); "
                         "first: the first --limit.")
    ap.add_argument("--samples", type=int, default=20, help="CodeGen-16B samples per HumanEval problem (0: none).")
    ap.add_argument("--mutants", type=int, default=8, help="Mutants of the first reference per problem.")
    ap.add_argument("--seed", type=int, default=25, help="Seed of our mutant draw (not testgen's).")
    ap.add_argument("--label-time-limit", type=float, default=4.0, help="CPU seconds for one official HumanEval check.")
    ap.add_argument("--burn", choices=("python", "c"), default="python",
                    help="The quadratic variants' steps: pure Python (caught from ~10^4 elements) or C-level "
                         "list sums (~0.3-0.5 s at 10^4 elements, ~50 s at 10^5: caught by full-size inputs).")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--params", default=None, help="params.yaml to read testgen / validate / evaluator from (default: the repo's).")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="Override a testgen / validate / evaluator param (repeatable); validate.min_tests is 1 unless set.")
    ap.add_argument("--cache", default=None, help="Keep testgen / validate caches in this folder (default: a fresh temporary one, so times are real).")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--progress", action="store_true", help="Show testgen / validate progress bars.")
    ap.add_argument("--out", default=None, help="Write the figures as JSON here.")
    args = ap.parse_args()
    names = [s for s in args.sources.split(",") if s]
    unknown = sorted(set(names) - set(SOURCES))
    if unknown:
        raise SystemExit(f"unknown sources {unknown}; valid: {list(SOURCES)}")
    if not args.data.exists():
        raise SystemExit(f"{args.data}: no bench data (see ../shared/bench-data/README.md)")
    workdir = Path(tempfile.mkdtemp(prefix="strength-bench-"))
    cache = Path(args.cache) if args.cache else workdir
    cfg = load_configs(args.params, args.overrides, args.workers, cache)
    log(f"code {git_revision()}; testgen max_elements={cfg.testgen.max_elements}, target_tests={cfg.testgen.target_tests}, "
        f"mutants={cfg.testgen.mutants}; validate max_tests={cfg.validate.max_tests}, min_tests={cfg.validate.min_tests}; "
        f"caches in {cache}")
    results = {}
    for name in names:
        results[name] = measure_source(name, args, cfg, workdir)
        print_source(name, results[name], args.workers)
    extra = extrapolate(results, args.workers)
    if extra:
        log(f"\nEXTRAPOLATION (not measured): {extra['problems']} LeetCodeDataset v0.2.0 train problems x "
            f"{extra['per_problem_s']} s per problem (from {extra['from_problems']} problems) = {extra['wall_h']} h of "
            f"testgen + validate with {extra['workers']} workers ({extra['worker_h']} worker-hours), assuming the "
            "cost stays linear in problems and workers.")
    if args.out:
        from microcoder.pipeline.stage import settings_record

        doc = {"code": git_revision(), "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
               "settings": {"burn": args.burn, "testgen": settings_record(cfg.testgen), "validate": settings_record(cfg.validate),
                            "evaluator": settings_record(cfg.evaluator)},
               "sources": results, "extrapolation": extra}
        Path(args.out).write_text(json.dumps(doc, indent=1, default=str))
        log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
